"""FISTA for the group lasso: the proximal step, the step constant and the iteration.

Beck & Teboulle's accelerated proximal gradient on ``alpha sum_g ||W_g||_2 +
loss(W, b)``, one independent problem per column of ``W``, with an unpenalized
intercept, a backtracking step constant and O'Donoghue & Candès' gradient
restart. The loss and its passes over the features come in as an object (the
group-lasso problem's products, :mod:`kernelmaps._solvers.group_lasso`), so the
iteration itself touches no ``N x P`` array.

References
----------
Beck, A. and Teboulle, M. A fast iterative shrinkage-thresholding algorithm for
linear inverse problems. SIAM J. Imaging Sciences 2(1), 2009.
O'Donoghue, B. and Candès, E. Adaptive restart for accelerated gradient schemes.
Foundations of Computational Mathematics 15, 2015.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.sparse.linalg import aslinearoperator

from .._numba.fastmath import FASTMATH


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _group_soft_threshold(V, bounds, threshold, out, norms):
    """``out_g = max(0, 1 - threshold / ||V_g||) V_g`` per group and column; norms of out."""
    n_columns = V.shape[1]
    squares = np.empty(n_columns, dtype=V.dtype)
    for g in range(bounds.shape[0] - 1):
        squares[:] = 0
        for j in range(bounds[g], bounds[g + 1]):
            for k in range(n_columns):
                squares[k] += V[j, k] * V[j, k]
        for k in range(n_columns):
            norm = math.sqrt(squares[k])
            shrink = 1 - threshold / norm if norm > threshold else norm * 0
            squares[k] = shrink
            norms[g, k] = shrink * norm
        for j in range(bounds[g], bounds[g + 1]):
            for k in range(n_columns):
                out[j, k] = squares[k] * V[j, k]


def group_soft_threshold(V, bounds, threshold):
    """The group-lasso proximal step on the rows of ``V`` grouped by ``bounds``.

    Parameters
    ----------
    V : ndarray of shape (n_features, n_columns), float32 or float64
    bounds : ndarray of int64 of shape (n_groups + 1,)
        Group ``g`` is rows ``bounds[g]:bounds[g + 1]``.
    threshold : float

    Returns
    -------
    W : ndarray like V
        ``W_g = max(0, 1 - threshold / ||V_g||_2) V_g`` for each group and column.
    norms : ndarray of shape (n_groups, n_columns)
        ``||W_g||_2``.
    """
    V = np.ascontiguousarray(V)
    out = np.empty_like(V)
    norms = np.empty((len(bounds) - 1, V.shape[1]), dtype=V.dtype)
    _group_soft_threshold(V, np.ascontiguousarray(bounds, dtype=np.int64),
                          V.dtype.type(threshold), out, norms)
    return out, norms


def lipschitz_estimate(A, n_power_iterations=100, rtol=1e-4, random_state=0):
    """Largest eigenvalue of a symmetric positive semi-definite operator by power iteration.

    Power iteration approaches the eigenvalue from below: its callers add a
    margin, and :func:`fista` backtracks if a step ever fails the
    sufficient-decrease test.

    Parameters
    ----------
    A : LinearOperator, ndarray or sparse matrix of shape (n, n)
        Read through :func:`scipy.sparse.linalg.aslinearoperator`: only its
        ``matvec`` is applied.
    n_power_iterations : int, default=100
    rtol : float, default=1e-4
        Stop when an iteration changes the estimate by at most ``rtol`` times it.
    random_state : int, default=0
        Seeds the starting vector.

    Returns
    -------
    float
    """
    A = aslinearoperator(A)
    rng = np.random.default_rng(random_state)
    v = rng.standard_normal(A.shape[0])
    v /= np.linalg.norm(v)
    estimate = 0.0
    for _ in range(n_power_iterations):
        w = A.matvec(v)
        new = float(np.linalg.norm(w))
        if new == 0.0:
            return 0.0
        v = w / new
        if abs(new - estimate) <= rtol * new:
            return new
        estimate = new
    return estimate


def group_norms(W, bounds):
    return np.sqrt(np.add.reduceat(W * W, bounds[:-1], axis=0))


class FistaResult(NamedTuple):
    """What :func:`fista` returns."""

    coef: np.ndarray
    intercept: np.ndarray
    group_norms: np.ndarray
    objective_history: list
    n_iter: int
    #: the step constants reached, to warm-start the next alpha of a path
    lipschitz: tuple
    converged: bool
    #: the last gradient mapping's largest group norm, over ``scale``: ``<= tol`` when converged
    residual: float


def fista(products, bounds, alpha, W, intercept, *, lipschitz, max_iter, tol, scale,
          accelerated=True):
    """FISTA with a gradient restart for ``alpha sum_g ||W_g|| + mean loss``, one problem per column.

    The columns of the targets are independent problems solved in lockstep, so
    each iteration costs two passes over ``F`` for all of them: ``F @ W`` and
    ``F^T D``. Predictions at the extrapolated point are combined from those at
    the last two iterates, so the sufficient-decrease test needs no third pass.

    Parameters
    ----------
    products : _Products or _GramProducts
        The loss and its passes over the features
        (:mod:`kernelmaps._solvers.group_lasso`): ``internal_intercept``,
        ``intercept``, ``image_and_loss`` and ``loss_and_gradient``.
    bounds : ndarray of int64 of shape (n_groups + 1,)
    alpha : float
    W : ndarray of shape (n_features, n_columns)
        Starting weights (warm start); not modified.
    intercept : ndarray of shape (n_columns,)
    lipschitz : tuple of float
        Starting step constants of the weights and of the intercept; both are
        doubled whenever a step fails the test.
    max_iter : int
    tol : float
        Stop when every column's gradient mapping ``L (Y - W_next)`` has group
        norms (and intercept part) at most ``tol * scale``.
    scale : float
        The problem's gradient scale (``alpha_max``), making ``tol`` relative.
    accelerated : bool, default=True
        ``False`` gives plain proximal gradient (ISTA), for comparison.

    Returns
    -------
    FistaResult
    """
    X = np.array(W, dtype=np.float64, order="C")
    bx = products.internal_intercept(X, np.asarray(intercept, dtype=np.float64))
    Zx, loss_x = products.image_and_loss(X, bx)
    Y, by, Zy = X, bx, Zx
    momentum = np.ones(X.shape[1])
    tiny = np.finfo(np.float64).tiny
    L, Lb = max(float(lipschitz[0]), tiny), max(float(lipschitz[1]), tiny)
    norms = group_norms(X, bounds)
    history = [float((loss_x + alpha * norms.sum(axis=0)).sum())]
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        loss_y, G, gb = products.loss_and_gradient(Y, by, Zy)
        while True:
            Xn, norms = group_soft_threshold(Y - G / L, bounds, alpha / L)
            bn = by - gb / Lb
            Zn, loss_n = products.image_and_loss(Xn, bn)
            step, step_b = Xn - Y, bn - by
            model = (loss_y + np.einsum("ij,ij->j", G, step) + gb * step_b
                     + L / 2 * np.einsum("ij,ij->j", step, step) + Lb / 2 * step_b * step_b)
            # a relative slack absorbs the round-off of the quadratic model itself
            if np.all(loss_n <= model + 1e-12 * np.abs(model)):
                break
            L, Lb = 2.0 * L, 2.0 * Lb
            if not (np.isfinite(L) and np.isfinite(Lb)):
                # no step size decreases a loss that is NaN or infinite: stop, don't spin
                raise FloatingPointError(
                    "FISTA diverged: its step constant overflowed because the loss is not finite "
                    f"(loss {loss_n.tolist()} at the trial point); the features or targets are too "
                    "large for float64: scale them")
        history.append(float((loss_n + alpha * norms.sum(axis=0)).sum()))
        mapping = L * group_norms(step, bounds)
        residual = max(float(mapping.max(initial=0.0)), float(Lb * np.abs(step_b).max())) / scale
        if residual <= tol:
            X, bx = Xn, bn
            converged = True
            break
        # O'Donoghue & Candes: restart when the momentum points uphill
        uphill = np.einsum("ij,ij->j", Y - Xn, Xn - X) + (by - bn) * (bn - bx) > 0
        uphill |= not accelerated
        following = (1 + np.sqrt(1 + 4 * momentum ** 2)) / 2
        beta = np.where(uphill, 0.0, (momentum - 1) / following)
        momentum = np.where(uphill, 1.0, following)
        Y = Xn + beta * (Xn - X)
        by = bn + beta * (bn - bx)
        Zy = Zn + beta * (Zn - Zx)
        X, bx, Zx = Xn, bn, Zn
    return FistaResult(X, products.intercept(X, bx), norms, history, n_iter, (L, Lb), converged,
                       residual)
