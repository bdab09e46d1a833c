"""The skeleton shared by the Hadamard-structured maps of the Gaussian kernel.

Fastfood and structured orthogonal features both stack ``p x p`` blocks built
from Walsh-Hadamard transforms and diagonals; they differ only in the diagonals
they draw and in the kernel that applies a block. This module sits above the
FWHT (:mod:`kernelmaps._hadamard`), which knows nothing of feature maps.
"""

import numpy as np

from ._cosine_map import CosineFeatureMap
from ._hadamard import next_power_of_two

#: ``(n_blocks, p)`` arrays alive at once while a map is drawn, planned at 8 bytes
#: an entry: Fastfood's ``B``, ``perm``, ``G``, ``s`` and ``S`` (SORF's three sign
#: diagonals and ``D1`` are four).
DRAWN_BLOCK_ARRAYS = 5
#: Padded-width (``n_blocks * p``) float64 copies planned per transform row besides
#: its output: the projection before the cosine epilogue, and the block buffers.
ROW_PADDED_COPIES = 2


class HadamardGaussianMap(CosineFeatureMap):
    """Skeleton of the Hadamard-structured maps of the Gaussian kernel.

    Subclasses draw ``n_blocks`` independent ``p x p`` blocks (``p`` = the input
    width padded to a power of two) in ``_draw_blocks(p, n_blocks, rng)``, returning
    a tuple of arrays of shape ``(n_blocks, p)``, and project a row block in
    ``_project(X, P, blocks)`` (a serial kernel writing ``X W^T`` into ``P``, whose
    width may end inside the last block). The rest is
    :class:`kernelmaps._cosine_map.CosineFeatureMap`.
    """

    #: Smallest block; inputs are zero-padded up to it (see StructuredOrthogonalFeatures).
    min_block = 2

    def _planned_bytes(self, n_features):
        p = max(next_power_of_two(n_features), self.min_block)
        padded = -(-self.n_components_ // p) * p
        return 8 * DRAWN_BLOCK_ARRAYS * padded, 8 * (ROW_PADDED_COPIES * padded + self.n_components_)

    def _draw(self, n_features, n_frequencies, scale, rng):
        p = max(next_power_of_two(n_features), self.min_block)
        self.padded_features_ = p
        self.n_blocks_ = -(-n_frequencies // p)
        self.blocks_ = self._draw_blocks(p, self.n_blocks_, rng)

    def _prepare_projection(self, dtype):
        return tuple(np.ascontiguousarray(b, dtype=dtype) if b.dtype.kind == "f" else b
                     for b in self.blocks_)
