"""Ridge least squares on wide sparse features by conjugate gradient, centred implicitly.

Random binning gives features of hundreds of thousands to millions of columns
with a few non-zeros per row. Their normal equations would need a dense
``D x D`` Gram matrix (8 TB at a million columns); the products ``Z V`` and
``Z^T Q`` cost only the non-zeros. Conjugate gradient needs nothing else, and
its memory is a few ``D x k`` blocks for ``k`` targets.
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._core.validation import MEMORY_FRACTION, available_memory_bytes
from .conjugate_gradient import conjugate_gradient
from .normal_equations import class_sums, overflow_error

#: A diagonal entry of the centred Gram matrix at most this fraction of its
#: column's uncentred one is cancellation of a column that centring empties
#: (a constant column), and is treated as zero.
CANCELLED_DIAGONAL = 1e-12


SOLVERS = ("auto", "normal", "cg")
#: Sparse features wider than this go to conjugate gradient under ``solver='auto'``.
#: Their Gram matrix would hold over 128 MiB and its accumulation costs ``P^2``
#: multiply-adds a row (``P`` non-zeros), against ``2 P`` per CG iteration.
CG_MIN_FEATURES = 4096


def select_solver(solver, n_features, sparse):
    """What ``solver='auto'`` stands for: ``'cg'`` when the features are sparse and wider
    than :data:`CG_MIN_FEATURES`, or when the normal equations' two ``D x D`` float64
    matrices would take more than ``MEMORY_FRACTION`` of the available memory;
    ``'normal'`` otherwise. Another ``solver`` is returned as given."""
    if solver != "auto":
        return solver
    too_big = 2 * 8 * n_features**2 > MEMORY_FRACTION * available_memory_bytes()
    return "cg" if (sparse and n_features > CG_MIN_FEATURES) or too_big else "normal"


class SparseRidgeResult(NamedTuple):
    """What :func:`ridge_cg` returns."""

    #: ndarray of shape (n_features, n_targets)
    coef: np.ndarray
    #: ndarray of shape (n_targets,): zeros without an intercept
    intercept: np.ndarray
    #: conjugate gradient iterations: one ``Z @ P`` and one ``Z.T @ Q`` each
    n_iter: int
    #: largest relative residual over the targets of the scaled system, at the end
    residual: float
    converged: bool


def _column_moments(Z, sample_weight=None):
    """Column sums and column sums of squares of ``Z`` (float64), each row counted
    with its weight if ``sample_weight`` is given."""
    w = sample_weight
    if sp.issparse(Z):
        d = Z.shape[1]
        data = Z.data if w is None else Z.data * np.repeat(w, np.diff(Z.indptr))
        return (np.bincount(Z.indices, weights=data, minlength=d),
                np.bincount(Z.indices, weights=data * Z.data, minlength=d))
    if w is None:
        return Z.sum(axis=0), np.einsum("ij,ij->j", Z, Z)
    return w @ Z, np.einsum("ij,ij,i->j", Z, Z, w)


def _moments(Z, w, total, T, labels, code, fit_intercept):
    """``(column sums, column sums of squares, target means, B, T)`` of :func:`ridge_cg`, ``B``
    its right-hand side ``Z_c^T W (T - t)`` and ``T`` as a 2-D float64 array (or None).

    An overflow is a ``FeatureOverflowError`` naming the magnitude of the features
    (and weights), before any iteration, rather than RuntimeWarnings and a
    non-finite residual.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        col_sum, col_square = _column_moments(Z, w)
        if T is not None:
            T = np.asarray(T, dtype=np.float64).reshape(Z.shape[0], -1)
            if not fit_intercept:
                t_mean = np.zeros(T.shape[1])
            else:
                t_mean = T.mean(axis=0) if w is None else w @ T / total
            # Z_c^T W (T - t) = Z^T W (T - t): the weighted residuals sum to zero
            B = Z.T @ (T - t_mean if w is None else w[:, None] * (T - t_mean))
        else:
            counts = np.bincount(labels, weights=w, minlength=code.shape[0]).astype(np.float64)
            t_mean = counts @ code / total if fit_intercept else np.zeros(code.shape[1])
            B = class_sums(Z, labels, code.shape[0], w).T @ code - np.outer(col_sum, t_mean)
        squares = col_square.sum()
    if not (np.isfinite(squares) and np.isfinite(B).all()):
        values = Z.data if sp.issparse(Z) else Z
        largest = max(float(values.max()), -float(values.min())) if values.size else 0.0
        raise overflow_error(largest, None if w is None else float(w.max()))
    return col_sum, col_square, t_mean, B, T


def ridge_cg(Z, alpha, T=None, *, labels=None, code=None, sample_weight=None, fit_intercept=True, tol=1e-6,
             max_iter=1000):
    """Ridge least squares ``min ||Z W + 1 b^T - T||^2 + alpha ||W||^2`` by conjugate gradient.

    With an intercept, the unpenalized ``b`` is eliminated by centring:
    ``(Z_c^T Z_c + alpha I) W = Z_c^T (T - 1 t^T)`` with ``Z_c = Z - 1 mu^T``, ``mu``
    and ``t`` the column means, and ``b = t - W^T mu``. ``Z_c`` is never formed
    (it would be dense) and neither is ``Z^T Z``: each product is
    ``Z_c^T Z_c V = Z^T Q - mu (1^T Q)`` with ``Q = Z V - 1 (mu^T V)``, which
    subtracts the means from the small ``n x k`` block rather than from a
    difference of large terms. All ``k`` targets share every pass over ``Z``
    (:func:`~kernelmaps._solvers.conjugate_gradient.conjugate_gradient`).

    **Sample weights.** With ``sample_weight`` the loss is
    ``sum_i w_i ||z_i W + b - t_i||^2``: ``mu`` and ``t`` become the weighted
    means, and the operator ``Z_c^T W Z_c V`` scales the rows of the ``n x k``
    block ``Q`` by ``w`` before ``Z^T Q``. ``W`` is never formed and ``Z`` is
    never densified or copied.

    The system is preconditioned by its diagonal (Jacobi,
    :func:`_primal_ridge_cg`). **The dual system when the columns outnumber the
    rows.** With ``alpha > 0`` and ``n_features > n_samples`` (fine binning
    grids), CG runs on the equivalent ``(Z_c Z_c^T + alpha I) A = T - 1 t^T``,
    ``W = Z_c^T A``, whose vectors have ``n_samples`` rows (:func:`_dual_ridge_cg`).

    With ``alpha = 0`` and rank-deficient features (fewer rows than columns, as
    random binning often gives), the system is only semi-definite. CG started
    from zero still converges: the right-hand side ``Z_c^T r`` lies in the range
    of ``A`` and so do all iterates. The result is a least-squares solution (the
    fitted values are those of every solution), the one of smallest norm in the
    scaled coordinates, which need not be the minimum-norm ``W``.

    Parameters
    ----------
    Z : ndarray or scipy sparse matrix of shape (n_samples, n_features)
        float32 input is converted to float64 once (for sparse input, its
        non-zeros only).
    alpha : float
        Ridge penalty, >= 0.
    T : ndarray of shape (n_samples,) or (n_samples, n_targets), optional
        Targets; or give ``labels`` and ``code``.
    labels : ndarray of int of shape (n_samples,), optional
    code : ndarray of shape (n_classes, n_targets), optional
        ``T[i] = code[labels[i]]``, without forming ``T``.
    sample_weight : ndarray of shape (n_samples,), optional
        Non-negative weights of the rows' squared errors, not all zero.
    fit_intercept : bool, default=True
    tol : float, default=1e-6
        Stop when every target's relative residual of the scaled system is at
        most ``tol``.
    max_iter : int, default=1000

    Returns
    -------
    SparseRidgeResult
        The last iterate also when ``converged`` is false.

    Raises
    ------
    FeatureOverflowError
        When the squared features (or ``Z^T y``) overflow float64, before any
        iteration, as the normal equations say it.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kernelmaps._solvers.sparse_ridge import ridge_cg
    >>> Z = sp.random(40, 6, density=0.5, format="csr", random_state=0)
    >>> T = Z @ np.arange(6.0) + 2.0
    >>> result = ridge_cg(Z, 0.0, T, tol=1e-12)
    >>> np.round(result.coef.ravel(), 6), np.round(result.intercept, 6), result.converged
    (array([0., 1., 2., 3., 4., 5.]), array([2.]), True)

    References
    ----------
    Hestenes, M. R. and Stiefel, E. Methods of conjugate gradients for solving
    linear systems. J. Res. Natl. Bur. Stand. 49(6), 1952.

    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (random binning features + least squares).
    """
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z, dtype=np.float64)
    else:
        Z = np.asarray(Z, dtype=np.float64)
    n, d = Z.shape
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(n)
    total = n if w is None else float(w.sum())
    col_sum, col_square, t_mean, B, T = _moments(Z, w, total, T, labels, code, fit_intercept)
    mu = col_sum / total if fit_intercept else np.zeros(d)
    if alpha > 0 and d > n:
        if T is None:
            T = code[labels]
        return _dual_ridge_cg(Z, alpha, T - t_mean, mu, t_mean, fit_intercept, tol, max_iter, w)
    return _primal_ridge_cg(Z, alpha, B, mu, t_mean, col_sum, col_square, fit_intercept, tol, max_iter, w)


def _primal_ridge_cg(Z, alpha, B, mu, t_mean, col_sum, col_square, fit_intercept, tol, max_iter,
                     sample_weight=None):
    """:func:`ridge_cg` on the primal system ``A coef = B``, ``A = Z_c^T D_w Z_c + alpha I``
    with ``D_w = diag(w)`` (the identity without weights).

    The system is preconditioned by its diagonal (Jacobi), applied symmetrically:
    CG solves ``S A S y = S B`` with ``S = diag(A)^(-1/2)``, and ``coef = S y``. The
    diagonal is ``sum_i w_i Z_ij^2 - (sum_i w_i) mu_j^2 + alpha``; a column that
    centring (or nothing) leaves zero has no curvature when ``alpha = 0``, so it
    is scaled by 1 and its coefficient stays 0.
    """
    w = sample_weight

    def gram(V):
        Q = Z @ V
        if fit_intercept:
            # Z_c^T W (Z_c V) with both factors centred: symmetric to rounding, and no
            # difference of the large uncentred moments Z^T Z V and n mu mu^T V
            Q -= mu @ V
        if w is not None:
            Q *= w[:, None]
        if not fit_intercept:
            return Z.T @ Q + alpha * V
        return Z.T @ Q - np.outer(mu, Q.sum(axis=0)) + alpha * V

    diagonal = np.maximum(col_square - col_sum * mu, 0.0) + alpha
    diagonal[diagonal <= CANCELLED_DIAGONAL * (col_square + alpha)] = 1.0
    scale = (1.0 / np.sqrt(diagonal))[:, None]
    result = conjugate_gradient(lambda Y: scale * gram(scale * Y), scale * B, tol=tol, max_iter=max_iter)
    coef = scale * result.x
    intercept = t_mean - mu @ coef if fit_intercept else np.zeros(coef.shape[1])
    return SparseRidgeResult(coef, intercept, result.n_iter, float(result.residuals[-1]), result.converged)


def _dual_ridge_cg(Z, alpha, T_centred, mu, t_mean, fit_intercept, tol, max_iter, sample_weight=None):
    """:func:`ridge_cg` on the dual system ``(Z_c Z_c^T + alpha I) A = T_c``, ``W = Z_c^T A``.

    Also Jacobi-scaled: the same two sparse products per CG iteration as the
    primal system, but every vector has ``n_samples`` rows instead of
    ``n_features``, and on random binning features it takes fewer iterations
    than the Jacobi-scaled primal system. With weights it is the system of the
    rows scaled by ``sqrt(w)``: ``(S_w Z_c Z_c^T S_w + alpha I) A = S_w (T - 1 t^T)``,
    ``W = Z_c^T S_w A`` with ``S_w = diag(sqrt(w))``.

    ``Z_c^T A = Z^T (A - 1 mean(A))`` because a centred ``A`` is orthogonal to the
    column means' rows, so centring the ``n x k`` block replaces centring ``Z``.
    With weights the means are weighted and the two centrings differ: ``Z_c G = Z G - 1 (w^T Z G) / sum(w)``
    subtracts the weighted mean, ``Z_c^T A = Z^T (A - w (1^T A) / sum(w))``.
    """
    Z_t = Z.T.tocsr() if sp.issparse(Z) else Z.T  # the transpose's rows are Z's columns: a fast Z^T A
    w = sample_weight
    if w is None:
        def centred(A):
            return A - A.mean(axis=0) if fit_intercept else A

        left = right = centred
        root = None
    else:
        total, column = float(w.sum()), w[:, None]
        root = np.sqrt(w)[:, None]

        def left(Q):  # Z_c (Z^T ...): rows minus their weighted mean
            return Q - (w @ Q) / total if fit_intercept else Q

        def right(A):  # Z^T (...) = Z_c^T A
            return A - column * (A.sum(axis=0) / total) if fit_intercept else A

    def weigh(A):
        return A if root is None else root * A

    def gram(A):
        return weigh(left(Z @ (Z_t @ right(weigh(A))))) + alpha * A

    # Jacobi: the diagonal is w_i |z_i - mu|^2 + alpha
    row_square = np.asarray(Z.multiply(Z).sum(axis=1)).ravel() if sp.issparse(Z) else np.einsum("ij,ij->i", Z, Z)
    spread = row_square - 2 * (Z @ mu) + mu @ mu if fit_intercept else row_square
    diagonal = spread + alpha if w is None else w * spread + alpha
    scale = (1.0 / np.sqrt(np.maximum(diagonal, alpha)))[:, None]
    result = conjugate_gradient(lambda Y: scale * gram(scale * Y), scale * weigh(T_centred), tol=tol,
                                max_iter=max_iter)
    coef = Z_t @ right(weigh(scale * result.x))
    intercept = t_mean - mu @ coef if fit_intercept else np.zeros(coef.shape[1])
    return SparseRidgeResult(coef, intercept, result.n_iter, float(result.residuals[-1]), result.converged)
