"""The skeleton shared by the Hadamard-structured maps of the Gaussian kernel.

Fastfood and structured orthogonal features both stack ``p x p`` blocks built
from Walsh-Hadamard transforms and diagonals; they differ only in the diagonals
they draw and in the kernel that applies a block. This module sits above the
FWHT (:mod:`kernelmaps._numba.fwht`), which knows nothing of feature maps.
"""

import numpy as np

from .._numba.fwht import next_power_of_two
from .cosine import CosineFeatureMap, DenseFormProjection

#: ``(n_blocks, p)`` arrays alive at once while a map is drawn, planned at 8 bytes
#: an entry: Fastfood's ``B``, ``perm``, ``G``, ``s`` and ``S`` (SORF's three sign
#: diagonals and ``D1`` are four).
DRAWN_BLOCK_ARRAYS = 5
#: Padded-width (``n_blocks * p``) float64 copies planned per transform row besides
#: its output: the projection before the cosine epilogue, and the block buffers.
ROW_PADDED_COPIES = 2
#: Blocks up to this size are multiplied out into the equivalent dense ``d x D``
#: matrix at each transform and applied by one BLAS product. Few inputs leave the
#: FWHT only log2(p) stages per element, on rows too short for its loops to pay:
#: at d = 16 (p = 16) a BLAS product of d multiply-adds per feature ran at
#: 1.7-2.8x the speed of the structured blocks in float32 and 1.3-1.4x in float64
#: (N = 2000, D = 256 and 1024, AMD EPYC znver3, 2 threads); at d = 64 the
#: structured blocks won in float64.
DENSE_MAX_BLOCK = 32


class HadamardGaussianMap(DenseFormProjection, CosineFeatureMap):
    """Skeleton of the Hadamard-structured maps of the Gaussian kernel.

    Subclasses draw ``n_blocks`` independent ``p x p`` blocks (``p`` = the input
    width padded to a power of two) in ``_draw_blocks(p, n_blocks, rng)``, returning
    a tuple of arrays of shape ``(n_blocks, p)``, and project a row block in
    ``_project_blocks(X, P, blocks)`` (a serial kernel writing ``X W^T`` into
    ``P``, whose width may end inside the last block). The rest is
    :class:`kernelmaps._maps.cosine.CosineFeatureMap`.

    With ``p <= DENSE_MAX_BLOCK`` the transform applies the same map as the
    dense matrix it equals (:class:`kernelmaps._maps.cosine.DenseFormProjection`).
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

    def _dense_is_cheaper(self):
        return self.padded_features_ <= DENSE_MAX_BLOCK

    def _structured_projection(self, dtype):
        return tuple(np.ascontiguousarray(b, dtype=dtype) if b.dtype.kind == "f" else b for b in self.blocks_)

    def _project_structured(self, X, P, blocks):
        self._project_blocks(X, P, blocks)

    def _project(self, X, P, projection):
        self._apply_projection(X, P, projection)
