"""The Hadamard-structured projections that several maps share.

Fastfood and structured orthogonal features both stack ``p x p`` blocks built
from Walsh-Hadamard transforms and diagonals; they differ only in the diagonals
they draw and in the kernel that applies a block (:class:`HadamardGaussianMap`).
SORF's block product also projects the arc-cosine features
(:func:`sorf_project`), and the subsampled randomized Hadamard transform also
down-projects CRAFTMaps (:func:`srht_draw`, :func:`srht_apply`). This module
sits above the FWHT (:mod:`kernelmaps._numba.fwht`), which knows nothing of
feature maps.
"""

import numpy as np
from numba import njit

from .._core.validation import check_n_components
from .._numba.fastmath import FASTMATH
from .._numba.fwht import fwht_row, load_signed, next_power_of_two
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


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def sorf_project(X, D3, D2, D1, P):
    """``P[i] <- [W_1 x_i, W_2 x_i, ...]`` truncated to ``P.shape[1]``, ``W_b = H D1 H D2 H D3``.

    ``x`` is zero-padded to ``p``; the overall scale is folded into ``D1``.
    Serial and ``nogil``, one row at a time in a ``p``-length buffer.

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64
    D3, D2, D1 : ndarray of shape (n_blocks, p), same dtype
        The diagonals (random signs, ``D1`` times the scale).
    P : ndarray of shape (m, D), same dtype, ``D <= n_blocks * p``

    References
    ----------
    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S.
    Orthogonal random features. NIPS 2016, section 4.
    """
    m = X.shape[0]
    n_blocks, p = D3.shape
    D = P.shape[1]
    a = np.empty(p, dtype=X.dtype)
    for i in range(m):
        for b in range(n_blocks):
            lo = b * p
            width = min(p, D - lo)
            load_signed(X[i], D3[b], a)
            fwht_row(a)
            d2 = D2[b]
            for k in range(p):
                a[k] *= d2[k]
            fwht_row(a)
            d1 = D1[b]
            for k in range(p):
                a[k] *= d1[k]
            fwht_row(a)
            row = P[i]
            for k in range(width):
                row[lo + k] = a[k]


def srht_draw(n_features, n_components, rng):
    """Draw an SRHT from ``R^n_features`` to ``R^n_components``.

    ``p`` is ``n_features`` padded to a power of two. The map stacks
    ``n_blocks = ceil(n_components / p)`` randomized Hadamard transforms ``H B_b``
    and keeps ``n_components`` of their ``n_blocks p`` coordinates, drawn without
    replacement, scaled by ``1 / sqrt(n_components)``.

    Why this scale: with random signs, every coordinate ``(H B x)_j`` satisfies
    ``E[(H B x)_j (H B y)_j] = sum_k H_jk^2 x_k y_k = <x, y>``, so the average of
    any ``E`` kept coordinates' products is unbiased, and
    ``E[<f(x), f(y)>] = <x, y>``, in particular ``E ||f(x)||^2 = ||x||^2``. (For
    one block this is the textbook ``sqrt(p/E) P (H/sqrt(p)) B``.)

    Parameters
    ----------
    n_features, n_components : int
    rng : numpy.random.RandomState

    Returns
    -------
    signs : ndarray of shape (n_blocks, p), float64
    index : ndarray of shape (n_components,), int64
        Sorted coordinates kept, in ``[0, n_blocks p)``.

    References
    ----------
    Tropp, J. A. Improved analysis of the subsampled randomized Hadamard
    transform. Advances in Adaptive Data Analysis, 2011.
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
    ICML 2014, section 3.4 (SRHT down-projection).
    """
    n_components = check_n_components(n_components)
    p = next_power_of_two(n_features)
    n_blocks = -(-n_components // p)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_blocks, p))
    index = np.sort(rng.choice(n_blocks * p, size=n_components, replace=False)).astype(np.int64)
    return signs, index


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def srht_apply(X, signs, index, scale, out):
    """``out[i] <- scale * (H B_b x_i)[index]`` over the stacked blocks (serial, ``nogil``).

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64, ``d <= p``
    signs : ndarray of shape (n_blocks, p), same dtype
    index : ndarray of shape (E,), int64, sorted, in ``[0, n_blocks p)``
    scale : scalar of the same dtype, usually ``1 / sqrt(E)``
    out : ndarray of shape (m, E), same dtype

    References
    ----------
    Tropp, J. A. Improved analysis of the subsampled randomized Hadamard
    transform. Advances in Adaptive Data Analysis, 2011.
    """
    m = X.shape[0]
    n_blocks, p = signs.shape
    E = index.shape[0]
    a = np.empty(p, dtype=X.dtype)
    for i in range(m):
        j = 0
        for b in range(n_blocks):
            lo = b * p
            if j >= E or index[j] >= lo + p:
                continue  # no coordinate of this block is kept
            load_signed(X[i], signs[b], a)
            fwht_row(a)
            while j < E and index[j] < lo + p:
                out[i, j] = scale * a[index[j] - lo]
                j += 1
