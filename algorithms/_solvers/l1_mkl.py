"""l1 multiple kernel learning on fixed Gram matrices, by spectral projected gradient.

With Gram matrices ``K_t``, ``K_d = sum_t d_t K_t`` and ``c = alpha / sqrt(2)``,
minimize over ``d >= 0``

    Obj(d) = min_{a, b}  c [ a^T K_d a / 2 + sum_t d_t ] + ||y - K_d a - b 1||^2 / (2 N)

This is the problem of :mod:`kernelmaps.exact_mkl`, whose docstring derives it as
the group lasso of :mod:`kernelmaps.group_lasso_mkl` on feature maps of the kernels.

For a fixed ``d`` the inner problem is the LS-SVM system
``[K_d + mu I, 1; 1^T, 0] [a; b] = [y; 0]`` with ``mu = c N``, solved by one
Cholesky factorization; by the envelope theorem
``dObj/dd_t = c (1 - a^T K_t a / 2)``. ``Obj`` is convex in ``d`` (a perspective
function minimized over the feature weights ``v`` of that derivation), so the
projected descent on ``d`` below finds the global optimum.
"""

import contextlib
import math
from collections import deque
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .._core.parallel import blas_single_thread
from .cholesky import cho_factor

# Spectral projected gradient constants (Birgin, Martinez & Raydan 2000, SPG2).
_NONMONOTONE_MEMORY = 10
_ARMIJO = 1e-4
_STEP_MIN, _STEP_MAX = 1e-30, 1e30
_SAFEGUARD_LOW, _SAFEGUARD_HIGH = 0.1, 0.9
# A backtracking factor this small means the descent direction is lost in round-off.
_SMALLEST_LINE_STEP = 1e-14
# Below this many rows an objective evaluation takes milliseconds and a threaded BLAS
# spends more on synchronizing its threads than it saves: measured 0.3 ms single-threaded
# against 230 ms with two threads per evaluation at N=150 on a busy 2-core machine.
_THREADED_BLAS_MIN_SAMPLES = 2048


class MKLSolution(NamedTuple):
    """Result of :func:`solve_l1_mkl`.

    Attributes
    ----------
    weights : ndarray of shape (n_kernels,)
        The kernel weights ``d >= 0``.
    dual_coef : ndarray of shape (n_samples,)
        ``a``: the prediction is ``sum_t d_t K_t(x, X) a + b``.
    intercept : float
        ``b``.
    objective_history : list of float
        ``Obj(d)`` at the start and after each outer iteration.
    n_iter : int
        Outer iterations run.
    converged : bool
        Whether the largest KKT violation fell to ``tol``.
    kkt_violation : float
        The largest KKT violation reached.
    """

    weights: np.ndarray
    dual_coef: np.ndarray
    intercept: float
    objective_history: list
    n_iter: int
    converged: bool
    kkt_violation: float


class _Point(NamedTuple):
    """Everything one evaluation of ``Obj`` gives at a weight vector ``d``."""

    d: np.ndarray
    objective: float
    kkt_gradient: np.ndarray  # g_t = 1 - a^T K_t a / 2; the gradient is c g
    dual_coef: np.ndarray
    intercept: float


class _L1MKLProblem:
    """``Obj(d)``, its gradient and its inner solution for fixed Gram matrices.

    One ``N x N`` buffer holds ``K_d + mu I`` and then, overwritten, its Cholesky
    factor, so that an evaluation allocates nothing of size ``N^2``.
    """

    def __init__(self, grams, y, alpha):
        self.grams = grams
        self.n_kernels, self.n, _ = grams.shape
        self.y = y
        self.c = alpha / math.sqrt(2.0)
        self.mu = self.c * self.n
        self.rhs = np.column_stack([y, np.ones(self.n)])
        self.buffer = np.empty((self.n, self.n))

    def _gram_plus_ridge(self, d):
        A = self.buffer
        # one pass of gemv over the stacked matrices
        np.dot(d, self.grams.reshape(self.n_kernels, -1), out=A.reshape(-1))
        A.flat[::self.n + 1] += self.mu
        return A

    def inner_solve(self, d):
        """``(a, b)`` solving the bordered system at weights ``d``."""
        A = self._gram_plus_ridge(d)
        try:
            factor = cho_factor(A, overwrite_a=True)
            U = scipy.linalg.cho_solve(factor, self.rhs, check_finite=False)
        except np.linalg.LinAlgError:
            # K_d + mu I is positive definite in exact arithmetic; round-off with a
            # tiny alpha can break Cholesky, where least squares still answers
            U = scipy.linalg.lstsq(self._gram_plus_ridge(d), self.rhs)[0]
        u, v = U[:, 0], U[:, 1]
        b = float(u.sum() / v.sum())
        return u - b * v, b

    def evaluate(self, d):
        """``Obj(d)`` with its gradient, from one Cholesky factorization."""
        if not d.any():
            # K_d = 0: the system is diagonal, a = (y - mean(y)) / mu, b = mean(y)
            b = float(self.y.mean())
            return self._point(d, (self.y - b) / self.mu, b)
        return self._point(d, *self.inner_solve(d))

    def _point(self, d, a, b):
        Ka = (self.grams.reshape(-1, self.n) @ a).reshape(self.n_kernels, self.n)
        quad = Ka @ a
        residual = self.y - d @ Ka - b
        objective = (self.c * (0.5 * float(d @ quad) + float(d.sum()))
                     + float(residual @ residual) / (2.0 * self.n))
        return _Point(d, objective, 1.0 - 0.5 * quad, a, b)


def l1_mkl_alpha_max(grams, y):
    """The smallest alpha at which ``d = 0`` solves the l1 MKL problem: ``max_t sqrt(yc^T K_t yc) / N``.

    At ``d = 0`` the inner solution is ``a = yc / (c N)``, so ``g_t >= 0`` for every
    kernel exactly when ``c^2 >= yc^T K_t yc / (2 N^2)``, with ``c = alpha / sqrt(2)``.

    Parameters
    ----------
    grams : ndarray of shape (n_kernels, n_samples, n_samples)
    y : ndarray of shape (n_samples,)

    Returns
    -------
    float
    """
    yc = y - y.mean()
    quad = (grams.reshape(-1, len(y)) @ yc).reshape(len(grams), -1) @ yc
    return float(np.sqrt(np.maximum(quad, 0.0).max()) / len(y))


def _kkt_violation(point):
    """Largest violation of ``g_t = 0`` (``d_t > 0``) or ``g_t >= 0`` (``d_t = 0``)."""
    g = point.kkt_gradient
    return float(np.max(np.where(point.d > 0, np.abs(g), np.maximum(0.0, -g))))


def solve_l1_mkl(grams, y, alpha, *, max_iter=100, tol=1e-6, weights=None):
    """Minimize the l1 MKL objective ``Obj(d)`` over ``d >= 0`` (see the module docstring).

    SimpleMKL's reduced gradient for the l1-penalized, unconstrained-sum form of
    GMKL is the gradient with the components of ``d_t = 0`` and a non-negative
    gradient set to zero; it is followed here by the spectral projected gradient
    method: the step ``d <- max(0, d - lambda grad)`` (whose projection zeroes
    exactly those components) with Barzilai-Borwein step lengths ``lambda`` and a
    nonmonotone Armijo backtracking over the last 10 objectives.

    Parameters
    ----------
    grams : ndarray of shape (n_kernels, n_samples, n_samples), float64
        Symmetric positive semi-definite Gram matrices ``K_t``.
    y : ndarray of shape (n_samples,)
    alpha : float
        Group-lasso penalty (> 0); ``c = alpha / sqrt(2)``.
    max_iter : int, default=100
        Outer iterations (each takes one or more objective evaluations).
    tol : float, default=1e-6
        Stop when the largest KKT violation of ``g_t = 1 - a^T K_t a / 2`` is at most
        ``tol``: ``|g_t|`` for ``d_t > 0``, ``max(0, -g_t)`` for ``d_t = 0``.
    weights : ndarray of shape (n_kernels,) or None
        Starting weights (projected onto ``d >= 0``); ``None`` gives ``1 / n_kernels``.

    Returns
    -------
    MKLSolution

    References
    ----------
    Rakotomamonjy, A., Bach, F., Canu, S. and Grandvalet, Y. SimpleMKL. JMLR 9, 2008.
    Birgin, E. G., Martinez, J. M. and Raydan, M. Nonmonotone spectral projected
    gradient methods on convex sets. SIAM J. Optim. 10(4), 2000.
    """
    grams = np.ascontiguousarray(grams, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    threads = (blas_single_thread() if len(y) < _THREADED_BLAS_MIN_SAMPLES
               else contextlib.nullcontext())
    with threads:
        return _spectral_projected_gradient(grams, y, alpha, max_iter, tol, weights)


def _spectral_projected_gradient(grams, y, alpha, max_iter, tol, weights):
    r = grams.shape[0]
    problem = _L1MKLProblem(grams, y, alpha)
    # alpha >= lambda_max = max_t sqrt(yc^T K_t yc) / N: d = 0 is optimal, in closed form
    start = problem.evaluate(np.zeros(r))
    if _kkt_violation(start) <= tol:
        return MKLSolution(start.d, start.dual_coef, start.intercept, [start.objective], 0, True,
                           _kkt_violation(start))
    d = (np.full(r, 1.0 / r) if weights is None
         else np.maximum(0.0, np.asarray(weights, dtype=np.float64).reshape(r)))
    point = problem.evaluate(d)
    history = [point.objective]
    recent = deque([point.objective], maxlen=_NONMONOTONE_MEMORY)
    converged = _kkt_violation(point) <= tol
    reduced = np.where((point.d > 0) | (point.kkt_gradient < 0), point.kkt_gradient, 0.0)
    # a first step that moves the weights by about their own size
    step_length = max(float(point.d.max()), 1.0 / r) / (problem.c * float(np.abs(reduced).max()))
    n_iter = 0
    while not converged and n_iter < max_iter:
        gradient = problem.c * point.kkt_gradient
        direction = np.maximum(0.0, point.d - step_length * gradient) - point.d
        slope = float(gradient @ direction)
        if not slope < 0:
            break  # the projected step vanished in round-off
        reference = max(recent)
        t = 1.0
        while True:
            trial = problem.evaluate(np.maximum(0.0, point.d + t * direction))
            if trial.objective <= reference + _ARMIJO * t * slope:
                break
            curvature = trial.objective - point.objective - t * slope
            t_new = -0.5 * t * t * slope / curvature if curvature > 0 else 0.5 * t
            t = t_new if _SAFEGUARD_LOW * t <= t_new <= _SAFEGUARD_HIGH * t else 0.5 * t
            if t < _SMALLEST_LINE_STEP:
                trial = None
                break
        if trial is None:
            break
        s = trial.d - point.d
        sy = float(s @ (problem.c * trial.kkt_gradient - gradient))
        step_length = (min(_STEP_MAX, max(_STEP_MIN, float(s @ s) / sy)) if sy > 0
                       else _STEP_MAX)
        point = trial
        n_iter += 1
        history.append(point.objective)
        recent.append(point.objective)
        converged = _kkt_violation(point) <= tol
    return MKLSolution(point.d, point.dual_coef, point.intercept, history, n_iter, converged,
                       _kkt_violation(point))
