"""Pegasos steps on CSR features, in time proportional to the minibatch's non-zeros.

The dense kernel (:func:`kernelmaps._solvers.pegasos_dense.pegasos_steps`) shrinks all ``D x C``
weights at every step, which is what dominates at the widths of random binning
features (``D`` up to millions, a few hundred non-zeros per row). Here each class's
weights are kept as ``w_c = s_c v_c`` with a scalar ``s_c``, as Shalev-Shwartz et
al. propose for sparse feature vectors: the shrink and the projection scale ``s_c``
only, the sub-gradient touches the active rows' non-zeros, and ``||v_c||^2`` is kept
up to date entry by entry, so that a step costs ``O(M P C)`` for ``M`` rows of
``P`` non-zeros and ``C`` classes, whatever ``D``.
"""

import math

import numpy as np
from numba import njit

from .._numba.fastmath import FASTMATH
from .pegasos_kernels import active_pairs, hinge_buffers, hinge_margins, scaled_norm, weights_or_ones

__all__ = ["MIN_SCALE", "pegasos_sparse_steps"]

#: Below this scale ``s_c`` is folded into ``v_c``: ``v_c`` grows as ``1 / s_c``, and
#: much further its entries would lose the small sub-gradient steps to round-off
#: (and, at the end of the range, overflow).
MIN_SCALE = 1e-9


@njit(cache=True, nogil=True)
def _rescale_column(V, c, factor):
    """``V[:, c] *= factor``; returns the new ``||V[:, c]||^2``, summed afresh."""
    total = 0.0
    for j in range(V.shape[0]):
        v = V[j, c] * factor
        V[j, c] = v
        total += v * v
    return total


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _sparse_scores(data, indices, indptr, V, scale, rows, scores):
    """``scores[r, c] = scale[c] * sum_k data[k] V[indices[k], c]`` over the
    non-zeros ``k`` of row ``rows[r]``: the minibatch's ``Z W`` without the ``D``
    zeros of each row."""
    m, C = scores.shape
    for r in range(m):
        acc = scores[r]
        acc[:] = 0.0
        i = rows[r]
        for k in range(indptr[i], indptr[i + 1]):
            z = float(data[k])
            v = V[indices[k]]
            for c in range(C):
                acc[c] += z * v[c]
        for c in range(C):
            acc[c] *= scale[c]


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _squared_column_norms(V):
    """``||V[:, c]||^2`` of every column, in one pass over the rows of ``V``."""
    D, C = V.shape
    norm2 = np.zeros(C)
    for j in range(D):
        for c in range(C):
            norm2[c] += V[j, c] * V[j, c]
    return norm2


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _apply_scales(V, scale):
    """``V[:, c] *= scale[c]``: ``w_c = s_c v_c`` written out, in one pass over the rows."""
    D, C = V.shape
    for j in range(D):
        for c in range(C):
            V[j, c] *= scale[c]


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _shrink_scales(W, scale, norm2, shrink, min_scale):
    """The shrink ``w_c <- shrink w_c`` as ``s_c <- shrink s_c``; a scale that falls
    below ``min_scale`` is folded into ``v_c``. Returns the number of folds."""
    n_folds = 0
    for c in range(scale.shape[0]):
        s = scale[c] * shrink
        # "not >=" also folds a NaN scale, so that it reaches W and the caller's check
        if not s >= min_scale or s == 0.0:
            norm2[c] = _rescale_column(W, c, s)
            s = 1.0
            n_folds += 1
        scale[c] = s
    return n_folds


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _active_pair_update(data, indices, indptr, signs, rows, row_weights, W, scale, norm2, gb, step_size,
                        active_rows, pair_slot, pair_class, n_pairs):
    """The sub-gradient step on the non-zeros of the active pairs' rows:
    ``v_jc += step_size u_i y_ic z_ij / s_c``, with ``||v_c||^2`` updated by the
    change of each entry's square; ``gb`` is set to the intercept's sub-gradient."""
    gb[:] = 0.0
    for a in range(n_pairs):
        r = active_rows[pair_slot[a]]
        c = pair_class[a]
        i = rows[r]
        y = float(signs[i, c]) * row_weights[i]
        gb[c] += y
        coef = step_size * y / scale[c]
        total = norm2[c]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            v = W[j, c]
            dv = coef * float(data[k])
            W[j, c] = v + dv
            # (v + dv)^2 - v^2 without squaring twice
            total += dv * (v + v + dv)
        norm2[c] = total


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _project_scales(W, b, gb, scale, norm2, shrink, step_size, radius2, fit_intercept):
    """The intercept's step, then the projection of ``(s_c v_c, b_c)`` onto the
    ball of squared radius ``radius2`` through ``s_c``; a projection whose squares
    overflowed folds the scale into ``v_c``. Returns the number of folds."""
    n_folds = 0
    for c in range(scale.shape[0]):
        bc = shrink * b[c] + step_size * gb[c] if fit_intercept else 0.0
        s = scale[c]
        # incremental updates can leave a tiny negative sum where the norm is ~0
        total = s * s * max(norm2[c], 0.0) + bc * bc
        if total > radius2:
            if total < math.inf:
                factor = math.sqrt(radius2 / total)
                scale[c] = s * factor
            else:
                # the squares overflowed: project w_c itself, as the dense path does
                _rescale_column(W, c, s)
                factor = math.sqrt(radius2) / scaled_norm(W[:, c], bc)
                norm2[c] = _rescale_column(W, c, factor)
                scale[c] = 1.0
                n_folds += 1
            bc *= factor
        b[c] = bc
    return n_folds


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def pegasos_sparse_steps(data, indices, indptr, signs, W, b, batches, lam, t0, fit_intercept,
                         min_scale=MIN_SCALE, weights=None):
    """Run Pegasos steps in place on one-vs-rest weights, from CSR features.

    The same steps as :func:`kernelmaps._solvers.pegasos_dense.pegasos_steps` (same minibatches,
    step sizes ``1 / (lam t)``, intercept and projection), hence the same weights
    up to round-off, for features given as the arrays of a canonical CSR matrix.
    During the run ``W[:, c]`` holds ``v_c`` with ``w_c = s_c v_c``:

    * the shrink ``w_c <- (1 - eta lam) w_c`` is ``s_c <- (1 - eta lam) s_c``;
    * the sub-gradient adds ``(eta / M) u_i y_ic z_ij / s_c`` (``u_i`` the row's
      weight, 1 without ``weights``) to ``v_jc`` for the
      non-zeros ``j`` of each active pair ``(i, c)``, updating ``||v_c||^2`` by the
      change of each entry's square;
    * the projection onto the ball of radius ``1 / sqrt(lam)`` multiplies ``s_c``
      (and the intercept) by a factor computed from ``s_c^2 ||v_c||^2 + b_c^2``.

    A step thus costs ``O(nnz(minibatch) C)``. When ``s_c`` falls below
    ``min_scale`` (at the first step, where the shrink is 0, and after many steps
    or strong projections) it is folded into ``v_c`` and ``||v_c||^2`` is summed
    afresh, in ``O(D)``; so is a projection whose squared norm overflowed. On
    return ``W`` holds the weights ``w_c`` themselves.

    Parameters
    ----------
    data, indices, indptr : ndarray
        The arrays of a canonical CSR matrix of shape (n, D) (column indices
        sorted within each row, no duplicates): ``data`` float32 or float64,
        ``indices`` and ``indptr`` int32 or int64.
    W : ndarray of shape (D, C), float64, C-contiguous, updated in place
    signs, b, batches, lam, t0, fit_intercept
        As for :func:`kernelmaps._solvers.pegasos_dense.pegasos_steps`.
    min_scale : float, default=MIN_SCALE
        The scale below which ``s_c`` is folded into ``v_c``.
    weights : ndarray of shape (n,), float64, optional
        The rows' weights, as for :func:`kernelmaps._solvers.pegasos_dense.pegasos_steps`.

    Returns
    -------
    n_folds : int
        How many times a class's scale was folded into its weights.

    References
    ----------
    Shalev-Shwartz, S., Singer, Y., Srebro, N. and Cotter, A. Pegasos: primal
    estimated sub-gradient solver for SVM. Mathematical Programming 127, 2011
    (for sparse feature vectors, the weights kept as a scalar times a vector).

    Examples
    --------
    Three rows of a (3, 1000) CSR matrix with two non-zeros each, two classes;
    the dense kernel on the densified rows takes the same steps:

    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kernelmaps._solvers.pegasos_sparse import pegasos_sparse_steps
    >>> from kernelmaps._solvers.pegasos_dense import pegasos_steps
    >>> Z = sp.csr_matrix((np.ones(6), [0, 1, 1, 2, 998, 999], [0, 2, 4, 6]), shape=(3, 1000))
    >>> signs = np.array([[1, -1], [1, -1], [-1, 1]], dtype=np.int8)
    >>> batches = np.array([[0, 2], [1, 2], [0, 1]])
    >>> W, b = np.zeros((1000, 2)), np.zeros(2)
    >>> n_folds = pegasos_sparse_steps(Z.data, Z.indices, Z.indptr, signs, W, b, batches, 0.1, 0, True)
    >>> n_folds  # both classes, at the first step, whose shrink factor is 0
    2
    >>> np.round(W[[0, 1, 2, 998], 0], 3), np.round(b, 3)
    (array([ 0.498,  2.073,  1.575, -0.498]), array([ 1.575, -1.575]))
    >>> W_dense, b_dense = np.zeros((1000, 2)), np.zeros(2)
    >>> pegasos_steps(Z.toarray(), signs, W_dense, b_dense, batches, 0.1, 0, True)
    >>> bool(np.allclose(W, W_dense, rtol=1e-12) and np.allclose(b, b_dense, rtol=1e-12))
    True
    """
    n_steps, m = batches.shape
    C = W.shape[1]
    radius2 = 1.0 / lam
    scale = np.ones(C)
    norm2 = _squared_column_norms(W)
    scores, margins, counts, active_rows, pair_slot, pair_class = hinge_buffers(m, C)
    gb = np.empty(C)
    n_folds = 0
    row_weights = weights_or_ones(weights, signs.shape[0])
    for step in range(n_steps):
        t = t0 + step + 1
        eta = 1.0 / (lam * t)
        rows = batches[step]
        _sparse_scores(data, indices, indptr, W, scale, rows, scores)
        hinge_margins(scores, b, signs, rows, margins, counts)
        _, n_pairs = active_pairs(margins, counts, active_rows, pair_slot, pair_class)
        shrink = 1.0 - eta * lam
        step_size = eta / m
        n_folds += _shrink_scales(W, scale, norm2, shrink, min_scale)
        _active_pair_update(data, indices, indptr, signs, rows, row_weights, W, scale, norm2, gb, step_size,
                            active_rows, pair_slot, pair_class, n_pairs)
        n_folds += _project_scales(W, b, gb, scale, norm2, shrink, step_size, radius2, fit_intercept)
    _apply_scales(W, scale)
    return n_folds
