"""Multiple kernel learning by group lasso on random Fourier features (RFF-GL).

Băzăvan, Li & Sminchisescu, section 3.3: build the random features of each of r
kernels, concatenate them, and solve

    min_w  alpha * sum_t ||w_t||_2  +  (1/N) sum_i l(y_i, F_i w + b)       (eq. 10)

with one group of coefficients per kernel. By eqs. 11-17 this is l1 multiple
kernel learning (GMKL) on the kernels the features approximate, with kernel
weights ``d_t = ||w_t|| / sqrt(2)`` (eq. 16) and ``C = sqrt(2) / alpha``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.optimize import brentq
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import train_test_split
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._base import RegisteredEstimator, classes_from_scores, encode_classes, one_vs_rest_code
from ._fastmath import FASTMATH, vexp, vlog
from ._groups import kernel_columns, per_kernel
from ._parallel import blas_single_thread, block_rows, n_worker_threads
from ._validation import (check_choice, check_fits_in_memory, check_fraction, check_generator,
                          check_input, check_integer, check_positive, check_regression_targets,
                          clear_fitted_state)

__all__ = ["GroupLassoMKL", "GroupLassoMKLClassifier", "GroupLassoMKLRegressor"]

#: The path stops after the validation loss rises at this many consecutive alphas
#: past its minimum.
PATH_PATIENCE = 3

#: Loss name -> code read by the Numba kernels.
LOSS_CODES = {"squared": 0, "logistic": 1, "epsilon_logistic": 2}

_PAPER = ("Băzăvan, Li & Sminchisescu, Learning random kernel approximations for object "
          "recognition, NIPS 2012, section 3.3 (RFF-GL)")


# ------------------------------------------------------------------ Numba kernels
# The step ``proximal`` and the per-sample losses are element-wise work around the
# two BLAS products of an iteration (F @ W and F^T @ D); each is one pass.

@njit(["void(f4[:, ::1], i8[::1], f4, f4[:, ::1], f4[:, ::1])",
       "void(f8[:, ::1], i8[::1], f8, f8[:, ::1], f8[:, ::1])"],
      cache=True, nogil=True, fastmath=FASTMATH)
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


@njit(cache=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _log1p_small(e):
    # log(1 + e) for 0 <= e <= 1 without losing e's digits when e is tiny
    # (Goldberg's trick: the rounding of 1 + e cancels in log(u) / (u - 1)).
    u = 1 + e
    d = u - 1
    return e if d == 0 else vlog(u) * (e / d)


@njit(cache=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _softplus(a):
    """``log(1 + exp(a))`` for any finite ``a``, without overflow."""
    return (a if a > 0 else 0 * a) + _log1p_small(vexp(-abs(a)))


@njit(cache=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _sigmoid(a):
    e = vexp(-abs(a))
    return 1 / (1 + e) if a >= 0 else e / (1 + e)


@njit(["f4(i8, f4, f4, f4, f4)", "f8(i8, f8, f8, f8, f8)"],
      cache=True, nogil=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _loss(code, z, t, epsilon, sharpness):
    if code == 0:
        r = z - t
        return r * r / 2
    if code == 1:
        return _softplus(-t * z)
    r = z - t
    return (_softplus(sharpness * (r - epsilon)) + _softplus(sharpness * (-r - epsilon))
            - 2 * _softplus(-sharpness * epsilon)) / sharpness


@njit(["f4(i8, f4, f4, f4, f4)", "f8(i8, f8, f8, f8, f8)"],
      cache=True, nogil=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _loss_derivative(code, z, t, epsilon, sharpness):
    if code == 0:
        return z - t
    if code == 1:
        return -t * _sigmoid(-t * z)
    r = z - t
    return _sigmoid(sharpness * (r - epsilon)) - _sigmoid(sharpness * (-r - epsilon))


@njit(["void(i8, f4[:, ::1], f4[:, ::1], f4, f4, f4[:, ::1], f8[::1])",
       "void(i8, f8[:, ::1], f8[:, ::1], f8, f8, f8[:, ::1], f8[::1])"],
      cache=True, nogil=True, fastmath=FASTMATH)
def _losses_and_derivatives(code, Z, T, epsilon, sharpness, derivative, totals):
    """Per column: ``totals[k] = sum_i l(Z[i, k], T[i, k])``; ``derivative = dl/dz``."""
    n_rows, n_columns = Z.shape
    totals[:] = 0
    for i in range(n_rows):
        for k in range(n_columns):
            totals[k] += _loss(code, Z[i, k], T[i, k], epsilon, sharpness)
            derivative[i, k] = _loss_derivative(code, Z[i, k], T[i, k], epsilon, sharpness)


@njit(["void(i8, f4[:, ::1], f4[:, ::1], f4, f4, f8[::1])",
       "void(i8, f8[:, ::1], f8[:, ::1], f8, f8, f8[::1])"],
      cache=True, nogil=True, fastmath=FASTMATH)
def _losses(code, Z, T, epsilon, sharpness, totals):
    n_rows, n_columns = Z.shape
    totals[:] = 0
    for i in range(n_rows):
        for k in range(n_columns):
            totals[k] += _loss(code, Z[i, k], T[i, k], epsilon, sharpness)


@njit(["void(i8, f4[:, ::1], f4[:, ::1], f4, f4, f8[::1])",
       "void(i8, f8[:, ::1], f8[:, ::1], f8, f8, f8[::1])"],
      cache=True, nogil=True, fastmath=FASTMATH)
def _row_losses(code, Z, T, epsilon, sharpness, out):
    """``out[i] = sum_k l(Z[i, k], T[i, k])``: the loss of each row over all problems."""
    n_rows, n_columns = Z.shape
    for i in range(n_rows):
        total = 0.0
        for k in range(n_columns):
            total += _loss(code, Z[i, k], T[i, k], epsilon, sharpness)
        out[i] = total


# ------------------------------------------------------------------ the loss object

class _Loss:
    """A per-sample loss with the constants of its kernels (mean over rows)."""

    def __init__(self, name, epsilon=0.0, sharpness=1.0):
        self.name = name
        self.code = LOSS_CODES[name]
        self.epsilon = float(epsilon)
        self.sharpness = float(sharpness)

    @property
    def curvature(self):
        """An upper bound of ``l''``: the Lipschitz constant of the gradient per unit ``||F||^2``."""
        # logistic: sigma' <= 1/4; epsilon-IGLL: two sigmoids' slopes, each <= sharpness/4
        return {0: 1.0, 1: 0.25, 2: self.sharpness / 2}[self.code]

    def totals(self, Z, T):
        """``sum_i l(Z[i, k], T[i, k])`` per column."""
        totals = np.empty(Z.shape[1])
        _losses(self.code, Z, T, self.epsilon, self.sharpness, totals)
        return totals

    def totals_and_derivative(self, Z, T):
        """Loss sums per column and ``dl/dz`` at every entry."""
        derivative = np.empty_like(Z)
        totals = np.empty(Z.shape[1])
        _losses_and_derivatives(self.code, Z, T, self.epsilon, self.sharpness, derivative,
                                totals)
        return totals, derivative

    def per_sample(self, Z, T):
        """Loss of every row summed over columns (for the standard error of a validation loss)."""
        out = np.empty(Z.shape[0])
        _row_losses(self.code, np.ascontiguousarray(Z), T, self.epsilon, self.sharpness, out)
        return out

    def best_intercept(self, T):
        """The intercept of each column that minimizes the loss when all weights are zero."""
        if self.code == 0:
            return T.mean(axis=0)
        if self.code == 1:
            p = (T > 0).mean(axis=0)
            return np.log(p) - np.log1p(-p)
        out = np.empty(T.shape[1])
        slack = self.epsilon + 50.0 / self.sharpness   # the derivative is +-1 to 1e-21 beyond
        for k in range(T.shape[1]):
            t = np.ascontiguousarray(T[:, k:k + 1])

            def slope(b, t=t):
                return self.totals_and_derivative(np.full_like(t, b), t)[1].sum()

            out[k] = brentq(slope, t.min() - slack, t.max() + slack, xtol=1e-14, rtol=1e-14)
        return out


# ------------------------------------------------------------------ the solver

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


def _product(A, B):
    # a one-column right-hand side goes to GEMV: numpy sends an (n, 1) one to GEMM,
    # measured 2-3x slower
    if B.shape[1] == 1:
        return (A @ B[:, 0])[:, None]
    return A @ B


class _Products:
    """The solver's passes over ``F``, by row blocks on a thread pool with one-thread BLAS.

    The solver works on the centred features ``F_c = F - mean(F)`` and a shifted
    intercept ``b' = b + mean(F) w``, without forming ``F_c``: the predictions
    ``F_c w + b'`` equal ``F w + b``, but the weights and the intercept then
    decouple, and the step for the weights follows the largest eigenvalue of
    ``F_c^T F_c / N`` (0.38 against 2.18 for ``[F, 1]`` on mfeat's random
    features: the constant direction the intercept owns no longer sets the step).

    A pass computes, per block, the predictions and the loss (and, at the
    extrapolated point, the loss derivative and its product with the block's
    rows), so each block of ``F`` is read once per product while it is in cache.
    Blocks are fixed by size, not by thread count, and partial sums are added in
    block order: results do not depend on the number of threads. OpenBLAS's own
    threads were measured 20-40x slower than one thread on the transposed
    matrix-vector product of these sizes.
    """

    def __init__(self, F, T, loss, pool):
        self.F, self.T, self.loss, self.pool = F, T, loss, pool
        n, self.n_features = F.shape
        self.mean = F.mean(axis=0)
        step = block_rows(F.itemsize * F.shape[1])
        self.blocks = [(a, min(n, a + step)) for a in range(0, n, step)]

    def _run(self, work):
        if self.pool is None or len(self.blocks) == 1:
            return [work(a, b) for a, b in self.blocks]
        return list(self.pool.map(lambda block: work(*block), self.blocks))

    def internal_intercept(self, W, b):
        """The solver's intercept ``b'`` for the model's ``(W, b)``."""
        return b + self.mean @ W

    def intercept(self, W, b):
        """The model's intercept for the solver's ``(W, b')``."""
        return b - self.mean @ W

    def image_and_loss(self, W, b):
        """``Z = F_c W + b'`` (linear in ``W, b'``) and the mean loss per column at ``Z``."""
        Z = np.empty((self.F.shape[0], W.shape[1]))
        offset = b - self.mean @ W

        def work(start, stop):
            Z[start:stop] = _product(self.F[start:stop], W)
            Z[start:stop] += offset
            return self.loss.totals(Z[start:stop], self.T[start:stop])

        totals = self._run(work)
        return Z, np.sum(totals, axis=0) / self.F.shape[0]

    def loss_and_gradient(self, W, b, Z):
        """Mean loss per column at ``Z``, the weights' gradient ``F_c^T l'/N``, the intercept's."""
        def work(start, stop):
            totals, D = self.loss.totals_and_derivative(Z[start:stop], self.T[start:stop])
            return totals, _product(self.F[start:stop].T, D), D.sum(axis=0)

        parts = self._run(work)
        n = self.F.shape[0]
        G = parts[0][1]
        for part in parts[1:]:
            G += part[1]
        gb = np.sum([p[2] for p in parts], axis=0)
        G -= np.outer(self.mean, gb)
        return np.sum([p[0] for p in parts], axis=0) / n, G / n, gb / n

    def lipschitz(self):
        """Step constants of the weights and of the intercept, with a 5% margin.

        For the squared loss the Hessian is ``diag(F_c^T F_c / N, 1)``. For the
        other losses it is ``[F_c, 1]^T S [F_c, 1] / N`` with ``S`` at most the
        curvature bound, and ``[a; b] [a; b]^T <= 2 diag(a a^T, b b^T)`` doubles both
        blocks.
        """
        factor = self.loss.curvature * (1.0 if self.loss.code == 0 else 2.0) * 1.05
        return factor * _centred_eigenvalue(self.F, self.mean), factor


class _GramProducts:
    """The squared loss through the centred Gram matrix ``Q = F_c^T F_c / N`` (``N >= P``).

    ``(1/2N) ||y - F w - b||^2`` minimized over ``b`` is ``w^T Q w / 2 - c^T w +
    ||y_c||^2 / 2N`` with ``c = F_c^T y_c / N`` (``F_c``, ``y_c``: centred) and
    ``b = mean(y) - mean(F) w``. An iteration then costs one ``P x P`` product
    instead of two passes over the ``N x P`` features (the covariance update of
    glmnet and of scikit-learn's ``Lasso(precompute=True)``).
    """

    def __init__(self, F, T, pool):
        n, p = F.shape
        self.n, self.n_features = n, p
        self.mean = F.mean(axis=0)
        self.target_mean = T.mean(axis=0)
        Tc = T - self.target_mean
        self.Q = np.zeros((p, p))
        self.c = np.zeros((p, T.shape[1]))
        step = block_rows(F.itemsize * p)
        for start in range(0, n, step):
            block = F[start:start + step] - self.mean
            self.Q += block.T @ block
            self.c += block.T @ Tc[start:start + step]
        self.Q /= n
        self.c /= n
        self.constant = np.einsum("ij,ij->j", Tc, Tc) / (2 * n)
        self.T = T

    def internal_intercept(self, W, b):
        return np.zeros_like(np.asarray(b, dtype=np.float64))    # eliminated

    def intercept(self, W, b):
        return self.target_mean - self.mean @ W

    def _loss(self, W, A):
        return (np.einsum("ij,ij->j", W, A) / 2 - np.einsum("ij,ij->j", self.c, W)
                + self.constant)

    def image_and_loss(self, W, b):
        """``A = Q W`` (linear in ``W``) and the loss at the best intercept."""
        A = _product(self.Q, W)
        return A, self._loss(W, A)

    def loss_and_gradient(self, W, b, A):
        return self._loss(W, A), A - self.c, np.zeros(W.shape[1])

    def lipschitz(self):
        return lipschitz_estimate(self.Q) * 1.05, 1.0


def _products(F, T, loss, pool, gram_limit_bytes=2 ** 30):
    """The Gram form for the squared loss when it is smaller than the features, else passes."""
    n, p = F.shape
    if loss.code == 0 and p <= n and 8 * p * p <= gram_limit_bytes:
        return _GramProducts(F, T, pool)
    return _Products(F, T, loss, pool)


def lipschitz_estimate(A, n_power_iterations=100, rtol=1e-4, random_state=0):
    """Largest eigenvalue of a symmetric positive semi-definite matrix by power iteration.

    ``A`` is the matrix or a function applying it. Power iteration approaches the
    eigenvalue from below; the solver adds a margin and backtracks if a step
    ever fails the sufficient-decrease test.
    """
    apply = A if callable(A) else (lambda v: A @ v)
    n = A.shape[0] if not callable(A) else None
    rng = np.random.default_rng(random_state)
    v = rng.standard_normal(n if n is not None else apply.size)
    v /= np.linalg.norm(v)
    estimate = 0.0
    for _ in range(n_power_iterations):
        w = apply(v)
        new = float(np.linalg.norm(w))
        if new == 0.0:
            return 0.0
        v = w / new
        if abs(new - estimate) <= rtol * new:
            return new
        estimate = new
    return estimate


def _centred_eigenvalue(F, mean):
    """Largest eigenvalue of ``F_c^T F_c / N``, ``F_c = F - mean``, without forming ``F_c``."""
    n = F.shape[0]

    def apply(v):
        u = F @ v - mean @ v
        return (F.T @ u - mean * u.sum()) / n

    apply.size = F.shape[1]
    return lipschitz_estimate(apply)


def _group_norms(W, bounds):
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
    products : _Products
        ``F``, the targets, the loss and the thread pool.
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
    norms = _group_norms(X, bounds)
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
        mapping = L * _group_norms(step, bounds)
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


class GroupLassoSolution(NamedTuple):
    """What :func:`solve_group_lasso` returns."""

    coef: np.ndarray
    intercept: np.ndarray
    group_norms: np.ndarray
    objective_history: np.ndarray
    n_iter: int
    converged: bool
    alpha_max: float


def group_lasso_objective(F, y, bounds, alpha, coef, intercept):
    """``alpha sum_g ||w_g||_2 + (1/2N) ||y - F w - b||^2`` of one squared-loss problem.

    Evaluates any solver's answer on the same scale (the benchmarks compare
    :func:`solve_group_lasso` with skglm's ``GroupLasso`` by it).
    """
    residual = y - F @ coef - intercept
    norms = [np.linalg.norm(coef[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    return float(residual @ residual / (2 * len(y)) + alpha * sum(norms))


def solve_group_lasso(F, y, bounds, alpha, *, loss="squared", epsilon=0.1, sharpness=10.0,
                      max_iter=1000, tol=1e-6, accelerated=True, coef=None, intercept=None):
    """Solve ``alpha sum_g ||w_g||_2 + (1/N) sum_i l(y_i, F_i w + b)`` on given features.

    The solver of :class:`GroupLassoMKLClassifier` and
    :class:`GroupLassoMKLRegressor`, for features that are already computed.

    Parameters
    ----------
    F : ndarray of shape (n_samples, n_features)
        Features; group ``g`` is columns ``bounds[g]:bounds[g + 1]``.
    y : ndarray of shape (n_samples,) or (n_samples, n_problems)
        Targets; several columns are independent problems solved together
        (+-1 codes for ``loss='logistic'``).
    bounds : array-like of int of shape (n_groups + 1,)
        Increasing group boundaries from 0 to ``n_features``.
    alpha : float >= 0
    loss : {'squared', 'logistic', 'epsilon_logistic'}, default='squared'
    epsilon, sharpness : float
        The epsilon-insensitive logistic loss's constants.
    max_iter : int, default=1000
    tol : float, default=1e-6
        Relative to ``alpha_max``, as in the estimators.
    accelerated : bool, default=True
        ``False`` runs plain proximal gradient (ISTA) instead of FISTA.
    coef, intercept : ndarray or None
        Warm start.

    Returns
    -------
    GroupLassoSolution
        ``coef`` (n_features, n_problems), ``intercept`` (n_problems,),
        ``group_norms`` (n_groups, n_problems), the objective summed over
        problems at the start and after each iteration, ``n_iter``,
        ``converged`` and ``alpha_max`` (the smallest alpha with every group zero).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.group_lasso_mkl import solve_group_lasso
    >>> rng = np.random.default_rng(0)
    >>> F = rng.standard_normal((200, 6))
    >>> y = F[:, 0] - F[:, 1] + 0.1 * rng.standard_normal(200)
    >>> solution = solve_group_lasso(F, y, [0, 2, 4, 6], alpha=0.05)
    >>> (solution.group_norms[:, 0] > 0).tolist()
    [True, False, False]
    """
    F = np.ascontiguousarray(F, dtype=np.float64)
    T = np.asarray(y, dtype=np.float64)
    T = np.ascontiguousarray(T[:, None] if T.ndim == 1 else T)
    if F.ndim != 2 or T.shape[0] != F.shape[0]:
        raise ValueError(f"F must be 2-D with one row per target, got shapes {F.shape} and "
                         f"{np.shape(y)}")
    if not (np.isfinite(F).all() and np.isfinite(T).all()):
        raise ValueError("F and y must be finite (no NaN or infinity)")
    bounds = np.asarray(bounds, dtype=np.int64)
    if (bounds.ndim != 1 or bounds.size < 2 or bounds[0] != 0 or bounds[-1] != F.shape[1]
            or np.any(np.diff(bounds) <= 0)):
        raise ValueError(f"bounds must increase strictly from 0 to {F.shape[1]}, got "
                         f"{bounds.tolist()}")
    alpha = check_positive(alpha, "alpha", allow_zero=True)
    check_choice(loss, "loss", tuple(LOSS_CODES))
    if loss == "logistic" and not np.all(np.abs(T) == 1):
        raise ValueError("loss='logistic' needs targets in {-1, +1}")
    loss = _Loss(loss, epsilon, sharpness)
    with blas_single_thread(), ThreadPoolExecutor(n_worker_threads()) as pool:
        products = _products(F, T, loss, pool)
        b0 = loss.best_intercept(T)
        alpha_max = _alpha_max(products, bounds, b0)
        W = (np.zeros((F.shape[1], T.shape[1])) if coef is None
             else np.asarray(coef, dtype=np.float64).reshape(F.shape[1], T.shape[1]))
        b = b0 if intercept is None else np.asarray(intercept, dtype=np.float64).reshape(-1)
        result = fista(
            products, bounds, float(alpha), W, b, lipschitz=products.lipschitz(),
            max_iter=check_integer(max_iter, "max_iter", 1), tol=tol,
            scale=max(alpha_max, np.finfo(float).tiny), accelerated=accelerated)
    return GroupLassoSolution(result.coef, result.intercept, result.group_norms,
                              np.asarray(result.objective_history), result.n_iter,
                              result.converged, alpha_max)


# ------------------------------------------------------------------ the estimators

class GroupLassoMKL(RegisteredEstimator, BaseEstimator):
    """Base of the group-lasso multiple kernel learners on random features (RFF-GL).

    Use :class:`GroupLassoMKLClassifier` or :class:`GroupLassoMKLRegressor`; this
    class holds what they share: the kernels as feature groups, the FISTA solver
    and the regularization path.

    Examples
    --------
    >>> from kernelmaps import GroupLassoMKL, GroupLassoMKLRegressor
    >>> issubclass(GroupLassoMKLRegressor, GroupLassoMKL)
    True

    References
    ----------
    Băzăvan, E. G., Li, F. and Sminchisescu, C. Learning random kernel
    approximations for object recognition. NIPS 2012, section 3.3.
    """

    kind = "learner"
    kernel_family = "shift_invariant"
    paper = _PAPER

    _losses = ()

    def __init__(self, groups=None, *, n_components=256, gamma="scale", loss="squared",
                 alpha=None, max_iter=1000, tol=1e-4, random_state=None, maps=None,
                 n_alphas=20, alpha_min_ratio=1e-3, alpha_selection="min",
                 validation_fraction=0.25):
        self.groups = groups
        self.n_components = n_components
        self.gamma = gamma
        self.loss = loss
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.maps = maps
        self.n_alphas = n_alphas
        self.alpha_min_ratio = alpha_min_ratio
        self.alpha_selection = alpha_selection
        self.validation_fraction = validation_fraction

    # -- the kernels as feature groups -----------------------------------------

    def _make_maps(self, X, rng):
        from .rff import RandomFourierFeatures

        n_features = X.shape[1]
        if self.maps is None:
            columns, gammas = kernel_columns(self.groups, self.gamma, n_features)
            widths = per_kernel(self.n_components, len(columns), "n_components")
            maps = [RandomFourierFeatures(n_components=check_integer(w, "n_components", 1),
                                          gamma=g) for w, g in zip(widths, gammas)]
        else:
            if isinstance(self.maps, (str, bytes)) or not hasattr(self.maps, "__len__"):
                raise ValueError(f"maps must be a list of feature maps, got {self.maps!r}")
            maps = list(self.maps)
            if not maps:
                raise ValueError("maps is empty: give at least one feature map")
            columns, _ = kernel_columns(self.groups, "scale", n_features)
            if self.groups is None:
                columns = columns * len(maps)
            if len(maps) != len(columns):
                raise ValueError(f"maps has {len(maps)} entries but groups defines "
                                 f"{len(columns)} groups: give one map per group")
        fitted = []
        for t, (cols, feature_map) in enumerate(zip(columns, maps)):
            if not hasattr(feature_map, "transform"):
                raise ValueError(f"maps[{t}] is not a feature map: {feature_map!r}")
            try:
                check_is_fitted(feature_map)
            except NotFittedError:
                feature_map = clone(feature_map)
                if "random_state" in feature_map.get_params():
                    feature_map.set_params(random_state=int(rng.integers(2 ** 31 - 1)))
                feature_map.fit(X[:, cols])
            else:
                expected = getattr(feature_map, "n_features_in_", len(cols))
                if expected != len(cols):
                    raise ValueError(f"maps[{t}] was fitted on {expected} columns but its group "
                                     f"has {len(cols)}")
            fitted.append(feature_map)
        return columns, fitted

    def _features(self, X, groups=None):
        """The concatenated features of the kernels in ``groups`` (all by default), float64."""
        groups = range(len(self.feature_maps_)) if groups is None else groups
        widths = [int(self.feature_bounds_[t + 1] - self.feature_bounds_[t]) for t in groups]
        check_fits_in_memory(8 * X.shape[0] * sum(widths), f"n_samples={X.shape[0]}",
                             "the concatenated random features")
        F = np.empty((X.shape[0], sum(widths)))
        start = 0
        for t, width in zip(groups, widths):
            block = self.feature_maps_[t].transform(X[:, self.kernel_columns_[t]])
            if block.shape[1] != width:
                raise ValueError(f"feature map {t} gives {block.shape[1]} features, not the "
                                 f"{width} it gave at fit")
            F[:, start:start + width] = block
            start += width
        return F

    # -- parameters -------------------------------------------------------------

    def _check_params(self):
        check_choice(self.loss, "loss", self._losses)
        if self.alpha is not None:
            check_positive(self.alpha, "alpha", allow_zero=True)
        self._max_iter = check_integer(self.max_iter, "max_iter", 1)
        check_positive(self.tol, "tol")
        self._n_alphas = check_integer(self.n_alphas, "n_alphas", 2)
        ratio = self.alpha_min_ratio
        if (isinstance(ratio, bool) or not isinstance(ratio, numbers.Real)
                or not 0 < ratio < 1):
            raise ValueError(f"alpha_min_ratio must be a number in (0, 1), got {ratio!r}")
        check_choice(self.alpha_selection, "alpha_selection", ("min", "one_se"))
        check_fraction(self.validation_fraction, "validation_fraction", allow_zero=False)
        return self._make_loss()

    def _make_loss(self):
        return _Loss(self.loss)

    # -- fit ---------------------------------------------------------------------

    def _fit(self, X, T, stratify, loss):
        rng = check_generator(self.random_state)
        X = np.asarray(X, dtype=np.float64)
        self.kernel_columns_, self.feature_maps_ = self._make_maps(X, rng)
        widths = [_width(m, X[:1, cols])
                  for m, cols in zip(self.feature_maps_, self.kernel_columns_)]
        self.feature_bounds_ = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
        F = self._features(X)
        bounds = self.feature_bounds_
        self.n_groups_ = len(widths)

        with blas_single_thread(), ThreadPoolExecutor(n_worker_threads()) as pool:
            if self.alpha is None:
                alpha, W, b = self._path(F, T, bounds, loss, rng, stratify, pool)
            else:
                alpha, W, b = float(self.alpha), None, None
            products = _products(F, T, loss, pool)
            lipschitz = products.lipschitz()
            b0 = loss.best_intercept(T)
            scale = max(_alpha_max(products, bounds, b0), np.finfo(float).tiny)
            if W is None:
                W = np.zeros((F.shape[1], T.shape[1]))
                b = b0
            if self.alpha is not None and alpha >= scale:
                warnings.warn(f"alpha={alpha:.4g} is at or above alpha_max={scale:.4g}, the "
                              "smallest alpha at which every kernel's weight is zero: the model "
                              "is a constant. Give a smaller alpha, or alpha=None to choose it "
                              "on a validation split", UserWarning, stacklevel=3)
            result = fista(products, bounds, alpha, W, b, lipschitz=lipschitz,
                           max_iter=self._max_iter, tol=self.tol, scale=scale)
        W, b, norms = result.coef, result.intercept, result.group_norms
        if not result.converged:
            warnings.warn(f"FISTA stopped at max_iter={self._max_iter} (alpha={alpha:.4g}): its "
                          f"relative gradient mapping reached {result.residual:.3g} against "
                          f"tol={self.tol}; raise max_iter or tol", ConvergenceWarning, stacklevel=3)
        self.alpha_ = alpha
        self.n_iter_ = result.n_iter
        self.objective_history_ = np.asarray(result.objective_history)
        single = T.shape[1] == 1
        self.coef_ = W[:, 0] if single else W.T.copy()
        self.intercept_ = float(b[0]) if single else b
        self.group_norms_ = norms[:, 0].copy() if single else norms.T.copy()
        self.kernel_weights_ = self.group_norms_ / math.sqrt(2.0)
        active = self.group_norms_ > 0
        self.active_groups_ = np.flatnonzero(active if single else active.any(axis=0))
        return self

    def _path(self, F, T, bounds, loss, rng, stratify, pool):
        """The regularization path on a training split; alpha chosen on the validation rows."""
        n = F.shape[0]
        n_val = max(1, int(round(self.validation_fraction * n)))
        if n - n_val < 2:
            raise ValueError(f"{n} rows are too few to hold out a validation split; give "
                             "alpha or more rows")
        if stratify is not None and np.bincount(stratify).min() < 2:
            stratify = None
        split_seed = int(rng.integers(2 ** 31 - 1))
        try:
            train, val = train_test_split(np.arange(n), test_size=n_val, random_state=split_seed,
                                          stratify=stratify)
        except ValueError:      # too few rows per class for a stratified split
            train, val = train_test_split(np.arange(n), test_size=n_val, random_state=split_seed)
        F_train, T_train = F[train], T[train]
        F_val, T_val = F[val], T[val]
        products = _products(F_train, T_train, loss, pool)
        b = loss.best_intercept(T_train)
        alpha_max = _alpha_max(products, bounds, b)
        if not alpha_max > 0:
            raise ValueError("every group's gradient is zero at the zero solution: the "
                             "targets are constant or the features carry no signal")
        alphas = alpha_max * np.geomspace(1.0, self.alpha_min_ratio, self._n_alphas)
        lipschitz = products.lipschitz()
        W = np.zeros((F.shape[1], T.shape[1]))
        solutions, norms_path, val_loss, val_se = [], [], [], []
        rising = 0
        for alpha in alphas:
            if rising >= PATH_PATIENCE:
                # past the validation minimum and climbing: the smaller alphas (the
                # slowest to solve) would not be chosen by either rule
                break
            result = fista(products, bounds, alpha, W, b, lipschitz=lipschitz,
                           max_iter=self._max_iter, tol=self.tol, scale=alpha_max)
            W, b, norms, lipschitz = result.coef, result.intercept, result.group_norms, result.lipschitz
            if not result.converged:
                warnings.warn(f"FISTA stopped at max_iter={self._max_iter} at alpha={alpha:.4g} on "
                              f"the path: its relative gradient mapping reached {result.residual:.3g} "
                              f"against tol={self.tol}; raise max_iter or tol", ConvergenceWarning,
                              stacklevel=4)
            solutions.append((W, b))
            norms_path.append(norms.sum(axis=1))
            per_row = loss.per_sample(_product(F_val, W) + b, T_val)
            val_loss.append(per_row.mean())
            val_se.append(per_row.std(ddof=1) / math.sqrt(len(per_row)) if len(per_row) > 1
                          else 0.0)
            rising = rising + 1 if len(val_loss) > 1 and val_loss[-1] > val_loss[-2] and \
                val_loss[-1] > min(val_loss) else 0
        val_loss, val_se = np.asarray(val_loss), np.asarray(val_se)
        best = int(np.argmin(val_loss))
        if self.alpha_selection == "one_se":
            # the largest alpha (sparsest model) within one standard error of the best
            best = int(np.flatnonzero(val_loss <= val_loss[best] + val_se[best])[0])
        self.alphas_ = alphas[:len(val_loss)]
        self.group_norms_path_ = np.asarray(norms_path)
        self.validation_loss_ = val_loss
        self.validation_loss_se_ = val_se
        self.alpha_index_ = best
        W, b = solutions[best]
        return float(alphas[best]), W, b

    # -- predict -----------------------------------------------------------------

    def _decision(self, X):
        check_is_fitted(self)
        X = check_input(self, X, reset=False)
        X = np.asarray(X, dtype=np.float64)
        coef = np.atleast_2d(self.coef_)
        scores = np.broadcast_to(np.asarray(self.intercept_, dtype=np.float64),
                                 (X.shape[0], coef.shape[0])).copy()
        active = self.active_groups_
        if active.size:
            # zero groups cost nothing at predict time: their maps are not applied
            F = self._features(X, active)
            rows = np.concatenate([np.arange(self.feature_bounds_[t], self.feature_bounds_[t + 1])
                                   for t in active])
            scores += F @ coef[:, rows].T
        return scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


def _width(feature_map, row):
    """Output width of a fitted map, read from the transform of one row (any map has one)."""
    return int(feature_map.transform(row).shape[1])


def _alpha_max(products, bounds, intercept):
    """The smallest alpha at which every group is zero: ``max_g ||F_g^T l'(b_0)|| / N``."""
    W = np.zeros((products.n_features, products.T.shape[1]))
    Z, _ = products.image_and_loss(W, np.asarray(intercept, dtype=np.float64))
    _, G, _ = products.loss_and_gradient(W, intercept, Z)
    return float(_group_norms(G, bounds).max())


_COMMON_DOC = """
    Parameters
    ----------
    groups : None, array-like of int of shape (n_features,), or list of lists
        The kernels' input columns. ``None``: all columns in one group (several
        kernels on them with a sequence ``gamma``). A group index per column, as
        :func:`kernelmaps.datasets.make_planted_groups` returns and
        ``load("mfeat").extras["groups"]`` gives. Or a list of column lists;
        groups must be disjoint and non-empty.
    n_components : int or sequence of int, default=256
        Random features per kernel (one value, or one per kernel).
    gamma : float, {{'scale', 'median', 'knn50'}} or sequence, default='scale'
        Bandwidth of each kernel's Gaussian ``exp(-gamma ||x - y||^2)``, resolved
        on that kernel's columns. A sequence gives one per group, or, with
        ``groups=None``, one kernel per bandwidth on all columns.
    loss : {losses}, default='squared'
    alpha : float >= 0 or None, default=None
        The group-lasso weight lambda of eq. 10. ``None`` computes the path and
        chooses alpha on a validation split.
    max_iter : int, default=1000
        FISTA iterations per alpha.
    tol : float, default=1e-4
        Stop when the gradient mapping's largest group norm is at most
        ``tol * alpha_max``. On 5000 standardized rows of pendigits and letter,
        1e-4 gives the test accuracy of 1e-6 (to 1e-4) in half the time, and
        1e-6 stops at ``max_iter`` at the path's smallest alphas.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the feature maps (one derived seed per kernel) and the validation split.
    maps : list of feature maps or None, default=None
        One map per group (or per kernel on all columns when ``groups=None``),
        replacing the Gaussian random Fourier features; ``n_components`` and
        ``gamma`` are then not used. Unfitted maps are cloned and fitted on their
        group's columns; fitted maps are used as they are.
    n_alphas : int, default=20
        Points on the geometric path from ``alpha_max`` down to
        ``alpha_min_ratio * alpha_max``. The path stops early once the validation
        loss has risen at three consecutive alphas past its minimum, so
        ``alphas_`` may be shorter.
    alpha_min_ratio : float in (0, 1), default=1e-3
        The path's last alpha over ``alpha_max``.
    alpha_selection : {{'min', 'one_se'}}, default='min'
        ``'min'``: the alpha of the smallest validation loss. ``'one_se'``: the
        largest alpha whose validation loss is within one standard error of it.
    validation_fraction : float in (0, 1), default=0.25
        Rows held out to choose alpha (stratified for classification).

    Attributes
    ----------
    group_norms_ : ndarray of shape (n_groups,) or (n_classes, n_groups)
        ``||w_t||_2`` per kernel (per class for more than two classes).
    kernel_weights_ : ndarray like group_norms_
        ``group_norms_ / sqrt(2)``, the equivalent l1-MKL kernel weights (eq. 16).
    active_groups_ : ndarray of int
        Kernels with a non-zero weight (for any class).
    objective_history_ : ndarray
        The objective (summed over one-vs-rest problems) at the start and after
        every FISTA iteration of the final fit.
    n_iter_ : int
    alpha_ : float
        The alpha of the final fit.
    alphas_ : ndarray of shape (n_alphas,)
        Descending path (only when ``alpha=None``).
    group_norms_path_ : ndarray of shape (n_alphas, n_groups)
        Group norms along the path, summed over classes (only when ``alpha=None``).
    validation_loss_, validation_loss_se_ : ndarray of shape (n_alphas,)
        Mean validation loss along the path and its standard error.
    coef_, intercept_ : ndarrays
        Weights on the concatenated features and the unpenalized intercept.
    feature_maps_ : list of fitted feature maps
    kernel_columns_ : list of ndarray of int
    feature_bounds_ : ndarray of int64 of shape (n_groups + 1,)
        Kernel ``t``'s features are columns ``feature_bounds_[t]:feature_bounds_[t+1]``.

    Notes
    -----
    The objective is ``alpha sum_t ||w_t||_2 + (1/N) sum_i l(y_i, F_i w + b)``
    with an unpenalized intercept ``b``. FISTA (Beck & Teboulle 2009) works on
    the implicitly centred features, so that the intercept decouples, and steps
    with ``1/L``: ``L`` from a power-iteration estimate of ``||F_c||^2 / N`` times
    the loss's curvature bound, doubled if a step ever fails the
    sufficient-decrease test; it restarts its momentum when it points uphill
    (O'Donoghue & Candès 2015). For the squared loss with no more features than
    rows, an iteration is one product with the centred ``P x P`` Gram matrix
    instead of two passes over the ``N x P`` features. ``alpha_max = max_t ||F_t^T l'(b_0)|| / N`` is
    the smallest alpha at which every group is zero. Along the path (fitted on
    the training split), each alpha starts from the previous solution; the final
    fit, on all rows at the chosen alpha, starts from the path's solution there.

    References
    ----------
    Băzăvan, E. G., Li, F. and Sminchisescu, C. Learning random kernel
    approximations for object recognition. NIPS 2012, section 3.3 (eqs. 10-17 and the epsilon-insensitive logistic loss).
    Beck, A. and Teboulle, M. A fast iterative shrinkage-thresholding algorithm for
    linear inverse problems. SIAM J. Imaging Sciences 2(1), 2009.
    O'Donoghue, B. and Candès, E. Adaptive restart for accelerated gradient schemes.
    Foundations of Computational Mathematics 15, 2015.
"""


class GroupLassoMKLClassifier(ClassifierMixin, GroupLassoMKL):
    __doc__ = """Multiple kernel learning classifier: group lasso on random Fourier features.

    One-vs-rest on the +-1 code: one group-lasso problem per class (one for two
    classes), each learning its own kernel weights.
    """ + _COMMON_DOC.format(losses="{'squared', 'logistic'}") + """
    Examples
    --------
    >>> from kernelmaps import GroupLassoMKLClassifier
    >>> from kernelmaps.datasets import make_planted_groups
    >>> X, y, groups, informative = make_planted_groups(600, random_state=0)
    >>> clf = GroupLassoMKLClassifier(groups, n_components=64, random_state=0).fit(X, y)
    >>> clf.group_norms_.shape
    (10,)
    >>> sorted(np.argsort(clf.group_norms_)[-3:].tolist()) == informative.tolist()
    True
    """

    name = "group_lasso_mkl_classifier"
    test_params = {"n_components": 64, "alpha": 0.001, "max_iter": 200, "random_state": 0}
    _losses = ("squared", "logistic")

    def fit(self, X, y):
        """Fit the maps, then the group lasso (along the path when ``alpha=None``)."""
        loss = self._check_params()
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True)
        labels = encode_classes(self, y)
        T = np.ascontiguousarray(one_vs_rest_code(len(self.classes_))[labels])
        return self._fit(X, T, labels, loss)

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class of the largest score (the sign of the score for two classes)."""
        scores = self.decision_function(X)
        return classes_from_scores(self.classes_, scores)

    @available_if(lambda self: self.loss == "logistic")
    def predict_proba(self, X):
        """Class probabilities of the logistic loss (one-vs-rest, normalized; ``loss='logistic'``)."""
        scores = self._decision(X)
        p = 1.0 / (1.0 + np.exp(-scores))
        if p.shape[1] == 1:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)


class GroupLassoMKLRegressor(RegressorMixin, GroupLassoMKL):
    __doc__ = """Multiple kernel learning regressor: group lasso on random Fourier features.

    With ``loss='epsilon_logistic'``, the smooth epsilon-insensitive gamma-logistic
    loss of the paper (eq. after 17),
    ``(1/s) log(1 + e^{s(f-y-eps)}) + (1/s) log(1 + e^{s(y-f-eps)}) - (2/s) log(1 + e^{-s eps})``,
    where ``s`` is ``sharpness`` (the paper's gamma, renamed so that it cannot be
    mistaken for a kernel bandwidth). It tends to ``max(0, |f - y| - eps)`` as
    ``s`` grows.
    """ + _COMMON_DOC.format(losses="{'squared', 'epsilon_logistic'}") + """
    epsilon : float >= 0, default=0.1
        Half-width of the insensitive zone (``loss='epsilon_logistic'``).
    sharpness : float > 0, default=10.0
        The loss's gamma: larger is closer to the epsilon-insensitive loss, with a
        proportionally smaller FISTA step.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import GroupLassoMKLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 6))
    >>> y = np.sin(2 * X[:, 0]) + np.cos(X[:, 1])      # only group 0 matters
    >>> reg = GroupLassoMKLRegressor([0, 0, 1, 1, 2, 2], n_components=64,
    ...                              random_state=0).fit(X, y)
    >>> int(np.argmax(reg.kernel_weights_))
    0
    """

    name = "group_lasso_mkl_regressor"
    test_params = {"n_components": 64, "alpha": 0.001, "max_iter": 200, "random_state": 0}
    _losses = ("squared", "epsilon_logistic")

    def __init__(self, groups=None, *, n_components=256, gamma="scale", loss="squared",
                 alpha=None, max_iter=1000, tol=1e-6, random_state=None, epsilon=0.1,
                 sharpness=10.0, maps=None, n_alphas=20, alpha_min_ratio=1e-3,
                 alpha_selection="min", validation_fraction=0.25):
        super().__init__(groups, n_components=n_components, gamma=gamma, loss=loss,
                         alpha=alpha, max_iter=max_iter, tol=tol, random_state=random_state,
                         maps=maps, n_alphas=n_alphas, alpha_min_ratio=alpha_min_ratio,
                         alpha_selection=alpha_selection,
                         validation_fraction=validation_fraction)
        self.epsilon = epsilon
        self.sharpness = sharpness

    def _make_loss(self):
        check_positive(self.epsilon, "epsilon", allow_zero=True)
        check_positive(self.sharpness, "sharpness")
        return _Loss(self.loss, self.epsilon, self.sharpness)

    def fit(self, X, y):
        """Fit the maps, then the group lasso (along the path when ``alpha=None``)."""
        loss = self._check_params()
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True)
        y = check_regression_targets(self, y, "GroupLassoMKLClassifier")
        T = np.ascontiguousarray(np.asarray(y, dtype=np.float64)[:, None])
        return self._fit(X, T, None, loss)

    def predict(self, X):
        """``F(X) w + b``."""
        return self._decision(X)[:, 0]
