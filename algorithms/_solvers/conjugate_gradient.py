"""Conjugate gradient on several right-hand sides at once, one operator pass per iteration.

``scipy.sparse.linalg.cg`` solves one right-hand side per call, so C targets (the
classes of a one-vs-rest problem) would cost C passes over the data per iteration,
where each pass recomputes the kernel blocks. Here the columns of ``B`` are C
independent CG recurrences (their own step lengths and directions) that share
each application of the operator: one pass per iteration for all of them.
"""

from typing import NamedTuple

import numpy as np


class NotPositiveDefiniteError(ArithmeticError, ValueError):
    """Conjugate gradient met a direction of non-positive curvature: ``p^T A p <= 0``."""


class CGResult(NamedTuple):
    """What :func:`conjugate_gradient` returns."""

    #: ndarray of shape (m, k): the solutions
    x: np.ndarray
    #: iterations run (operator applications after the first residual)
    n_iter: int
    #: largest relative residual ``||b - A x|| / ||b||`` over the columns, at the
    #: start and after each iteration
    residuals: np.ndarray
    converged: bool
    #: ndarray like ``x``: the last residual ``b - A x`` of the recurrences (equal to the true one up to
    #: round-off)
    residual: np.ndarray = None


def conjugate_gradient(apply, B, *, x0=None, max_iter=100, tol=1e-6, callback=None, columns=False):
    """Solve ``A X = B`` for a symmetric positive definite ``A`` given by its product.

    Parameters
    ----------
    apply : callable
        ``apply(P)`` returns ``A @ P`` for ``P`` of shape (m, k).
    B : ndarray of shape (m,) or (m, k)
    x0 : ndarray like ``B`` or None
        Starting point (zero by default).
    max_iter : int, default=100
    tol : float or ndarray of shape (k,), default=1e-6
        Stop when every column's relative residual ``||b - A x|| / ||b||`` is at
        most ``tol`` (a zero column is solved by zero); an array gives each
        column its own tolerance, and a column that meets its own stops moving.
    callback : callable or None
        Called as ``callback(n_iter, residual, X)`` after each iteration; a true
        return value stops the iteration (early stopping).
    columns : bool, default=False
        Call ``apply(P, columns)`` with only the columns still above their
        tolerance, ``columns`` their indices into ``B`` (``slice(None)`` for all):
        an operator whose cost grows with its columns then skips the solved ones.
        ``apply`` must act on each column alone (each may have its own operator).

    Returns
    -------
    CGResult
        ``x`` has the shape of ``B``.

    Raises
    ------
    NotPositiveDefiniteError
        If a search direction has ``p^T A p <= 0`` (relative to ``|p|^2`` and the
        residual's scale): ``A`` is not positive definite, and CG would diverge.
    FloatingPointError
        If the residual stops being finite.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.conjugate_gradient import conjugate_gradient
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> result = conjugate_gradient(lambda P: A @ P, np.array([1.0, 2.0]), tol=1e-12)
    >>> np.round(result.x, 6), result.n_iter
    (array([0.090909, 0.636364]), 2)

    References
    ----------
    Hestenes, M. R. and Stiefel, E. Methods of conjugate gradients for solving
    linear systems. J. Res. Natl. Bur. Stand. 49(6), 1952.
    """
    vector = np.ndim(B) == 1
    B = np.asarray(B, dtype=np.float64).reshape(len(B), -1)
    X = np.zeros_like(B) if x0 is None else np.array(x0, dtype=np.float64).reshape(B.shape)
    scale = np.linalg.norm(B, axis=0)
    scale[scale == 0] = 1.0                 # a zero right-hand side: absolute residual
    R = B - (apply(X, slice(None)) if columns else apply(X)) if x0 is not None else B.copy()
    P = R.copy()
    rr = np.einsum("ij,ij->j", R, R)
    tol = np.broadcast_to(np.asarray(tol, dtype=np.float64), scale.shape)
    relative = np.sqrt(rr) / scale
    residuals = [float(np.max(relative))]
    n_iter = 0
    converged = bool(np.all(relative <= tol))
    while not converged and n_iter < max_iter:
        active = relative > tol
        AP = _apply_to_active(apply, P, active) if columns else apply(P)
        curvature = np.einsum("ij,ij->j", P, AP)
        # round-off makes p^T A p of a direction in A's null space a tiny number of
        # either sign: only a clearly negative or zero one on an unsolved column counts
        floor = 1e-14 * np.einsum("ij,ij->j", P, P) * np.maximum(scale, 1.0)
        bad = active & ((curvature <= -floor) | (curvature == 0))  # an active column has rr > 0
        if bad.any():
            column = int(np.flatnonzero(bad)[0])
            raise NotPositiveDefiniteError(
                f"conjugate gradient met a direction of non-positive curvature "
                f"(p^T A p = {curvature[column]:.3g} at iteration {n_iter + 1}, column {column}): "
                "the system is not positive definite, so CG diverges; for a kernel system, "
                "check that the kernel is positive definite and the regularization positive")
        step = np.where(active, rr / np.where(curvature > 0, curvature, 1.0), 0.0)
        X += step * P
        R -= step * AP
        rr_new = np.einsum("ij,ij->j", R, R)
        P = R + np.where(active, rr_new / np.where(rr > 0, rr, 1.0), 0.0) * P
        rr = rr_new
        n_iter += 1
        relative = np.sqrt(rr) / scale
        residual = float(np.max(relative))
        if not np.isfinite(residual):
            raise FloatingPointError(f"conjugate gradient's residual is not finite at iteration "
                                     f"{n_iter}: the operator returned NaN or infinity")
        residuals.append(residual)
        converged = bool(np.all(relative <= tol))
        if callback is not None and callback(n_iter, residual, X):
            break
    return CGResult(X[:, 0] if vector else X, n_iter, np.asarray(residuals), converged,
                    R[:, 0] if vector else R)


def _apply_to_active(apply, P, active):
    """``apply(P[:, active], indices)`` in ``active``'s columns, zero in the others."""
    if active.all():
        return apply(P, slice(None))
    indices = np.flatnonzero(active)
    AP = np.zeros_like(P)
    AP[:, indices] = apply(np.ascontiguousarray(P[:, indices]), indices)
    return AP
