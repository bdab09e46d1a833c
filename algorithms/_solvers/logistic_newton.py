"""Nyström kernel logistic regression by Newton steps, each solved by Falkon-preconditioned CG.

With ``m`` centres, ``K = K(X, C)`` and ``K_mm = K(C, C)``, each ±1 target column
``y`` gets coefficients ``a`` minimizing

    ``J(a) = (1/n) sum_i log(1 + exp(-y_i (K a)_i)) + (lam / 2) a^T K_mm a``.

(plus an unpenalized intercept ``b``, ``f = K a + b``, by default). Newton's
step solves ``H d = g`` with ``g = K^T l' / n + lam K_mm a`` and
``H = K^T W K / n + lam K_mm`` (``W`` the diagonal of ``l'' = s (1 - s)``,
``s = sigmoid(K a)``). ``H`` is a weighted Falkon system, so it is solved by
conjugate gradient preconditioned by ``B = T^{-1} A^{-1}``, ``T = chol(K_mm)``,
``A = chol(T D T^T / m + lam I)``, where ``D`` holds the weights of the centres
(``K_mm D K_mm / m`` is the centres' estimate of ``K^T W K / n``; for centres that
are not training rows, ``D`` is the mean weight), shared by the columns: one factor
preconditions every column's CG (:mod:`kernelmaps._solvers.logistic_factors`), each
column to its own tolerance (:meth:`_Walk._forcing`). As in Meanti et al. (2020),
``lam`` follows a decreasing path, one Newton step per value, from a large ridge,
where Newton's method converges from zero, down to the target, where the steps
continue until the gradient is small: each step starts inside the region where the
next one converges quickly (Marteau-Ferey et al. 2019). Each column takes the
multiple of Newton's step, among a few, with the lowest objective
(:func:`~kernelmaps._solvers.logistic_line_search.damped_update`, from the logits
of the point and of the step: one forward and one backward product per step),
halved while it raises the objective.

Every pass over the rows (the gradient, the loss, the weights; each CG product
``K^T W K V``) is one :meth:`KernelOperator.sweep` shared by all columns.
"""

from typing import NamedTuple

import numpy as np
import scipy.linalg

from .._core.parallel import blas_single_thread
from .conjugate_gradient import NotPositiveDefiniteError, conjugate_gradient
from .falkon import block_epsilon, cholesky_with_jitter
from .logistic_line_search import damped_update
from .logistic_factors import StepFactors, reuses_factors

#: The first ridge of the path (when the target is smaller), and the factor between
#: consecutive ridges.
PATH_START = 1e-3
PATH_FACTOR = 10.0
#: A step that leaves the relative gradient norm above this fraction of its value before the step
#: moves the Hessian products to full precision
#: (:meth:`kernelmaps._solvers.logistic_passes.LogisticPasses.full_precision`).
STALL_RATIO = 0.9
#: The loosest CG tolerance of a Newton step (see :meth:`_Walk._forcing`).
FORCING_CAP = 0.1


class LogisticNewtonResult(NamedTuple):
    """What :func:`nystroem_logistic_newton` returns."""

    #: ndarray of shape (m, k)
    coef: np.ndarray
    #: ndarray of shape (k,): the intercepts (zero without ``fit_intercept``)
    intercept: np.ndarray
    #: Newton steps taken (path steps included)
    n_iter: int
    #: CG iterations of each Newton step
    cg_iterations: list
    #: the largest relative gradient norm over the columns, ``||g|| / ||g(0)||``, before
    #: each step and at the end
    gradient_norms: np.ndarray
    #: the objective ``J`` summed over the columns, at the same points
    objectives: np.ndarray
    #: the ridge of each step
    penalties: list
    converged: bool


def ridge_path(lam, above=None):
    """The ridges of the path: ``PATH_START / PATH_FACTOR^j`` above ``lam``, then ``lam``.

    From a previous target ``above`` (a larger ridge already solved), the path
    continues from ``above / PATH_FACTOR`` instead of ``PATH_START``.
    """
    path = []
    value = PATH_START if above is None else above / PATH_FACTOR
    while value > lam * PATH_FACTOR:
        path.append(value)
        value /= PATH_FACTOR
    return path + [lam]


def nystroem_logistic_newton(passes, K_mm, lam, *, fit_intercept=True, centres_are_rows=False, max_iter=20,
                             tol=1e-4, cg_max_iter=20, callback=None, on_target=None):
    """Minimize the Nyström logistic objective of every ±1 target column.

    Parameters
    ----------
    passes : LogisticPasses or DaskLogisticPasses
        The passes over the rows ``K = K(X, C)`` and their ±1 targets ``Y``
        (``shape`` is ``(n, m, k)``; ``K`` the operator).
    K_mm : ndarray of shape (m, m)
    lam : float or sequence of float
        The target ridge (> 0), or decreasing targets: each is solved in turn,
        the path to the next starting from the last solution (warm starts, as
        Meanti et al.'s path), and ``on_target`` sees each solution.
    fit_intercept : bool, default=True
        Add an unpenalized intercept ``b`` per column (``f = K a + b``). Newton's
        system then has one more row; eliminating ``b`` leaves
        ``(H - u u^T / (n^2 s)) d = g - u g_b / (n s)`` for ``a``, with
        ``u = K^T W 1`` and ``s = mean(W)``: the same pass per CG iteration plus
        a rank-one correction.
    centres_are_rows : bool, default=False
        True when the centres are training rows: their weights, from the logits
        ``K_mm a + b``, build the preconditioner; otherwise the mean weight does.
    max_iter : int, default=20
        Newton steps per target, the path's included.
    tol : float, default=1e-4
        Stop, at the target ridge, when every column's gradient norm (with the
        intercept's) is at most ``tol`` times its norm at zero, or, once that ratio
        is at most ``sqrt(tol)``, after a step whose predicted gain ``g^T d / 2``
        (half the Newton decrement, ``d`` the CG solution) is at most ``tol`` times
        the objective in every column. A
        point of the path that meets the first at the target ridge ends the path
        early.
    cg_max_iter : int, default=20
        Conjugate gradient iterations per Newton step; a step whose CG ran them all
        is followed by a fresh factor (see
        :func:`~kernelmaps._solvers.logistic_factors.reuses_factors`). Each column's CG stops at a
        relative residual of ``min(0.1, relative gradient norm)`` (an inexact
        Newton method, superlinear near the optimum), loosened up to 0.1 where the
        last step's quadratic model missed the gradient it reached by more
        (Eisenstat and Walker 1996); a column that meets its tolerance leaves the
        products of the CG iterations that follow.
    callback : callable or None
        ``callback(n_iter, gradient_norm, a, b)`` after each step; a true value stops.
    on_target : callable or None
        ``on_target(index, a, b, converged)`` when the target ``lam[index]`` is
        solved (or its steps ran out), before the path moves on; the passes'
        last run is at ``(a, b)``.

    Returns
    -------
    LogisticNewtonResult
        At the last target reached; ``n_iter``, ``cg_iterations`` and the
        per-step lists cover every target's steps.

    References
    ----------
    Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. Kernel methods through the
    roof: handling billions of points efficiently. NeurIPS 2020 (logistic Falkon).
    Marteau-Ferey, U., Bach, F. and Rudi, A. Globally convergent Newton methods for
    ill-conditioned generalized self-concordant losses. NeurIPS 2019.
    Eisenstat, S. C. and Walker, H. F. Choosing the forcing terms in an inexact
    Newton method. SIAM J. Sci. Comput. 17(1), 1996.
    """
    n, m, k = passes.shape
    targets = [float(value) for value in np.atleast_1d(lam)]
    K_mm = np.asarray(K_mm, dtype=np.float64)
    T, _ = cholesky_with_jitter(K_mm, block_epsilon(passes.K))
    point = passes.run(np.zeros((m, k)), np.zeros(k))
    reference = _gradient_norms(point.data_gradient, point.intercept_gradient, fit_intercept)
    reference[reference == 0] = 1.0
    walk = _Walk(passes, K_mm, T, reference, fit_intercept, centres_are_rows, tol, cg_max_iter, callback)
    above, converged = None, False
    for index, target in enumerate(targets):
        point, converged, stopped = walk.to(point, ridge_path(target, above), target, max_iter)
        if on_target is not None:
            on_target(index, point.a, point.b, converged)
        if stopped:
            break
        above = target
    return LogisticNewtonResult(point.a, point.b, walk.steps, walk.cg_iterations, np.asarray(walk.gradient_norms),
                                np.asarray(walk.objectives), walk.penalties, converged)


class _Walk:
    """Newton steps along ridge paths, with the record of every step taken."""

    def __init__(self, passes, K_mm, T, reference, fit_intercept, centres_are_rows, tol, cg_max_iter, callback):
        self.passes, self.K_mm, self.T, self.reference = passes, K_mm, T, reference
        self.fit_intercept, self.centres_are_rows, self.tol = fit_intercept, centres_are_rows, tol
        self.cg_max_iter, self.callback = cg_max_iter, callback
        self.steps, self.cg_iterations, self.gradient_norms, self.objectives, self.penalties = 0, [], [], [], []
        self.reuses = reuses_factors(*passes.shape)
        self.factors = StepFactors(K_mm, T, centres_are_rows)
        self.factor = None                  # (ridge, A) of the last factorization
        self.last_relative = np.inf         # the relative gradient norm before the last step
        self.forecast = None                # the last step's _Forecast of the gradient norms

    def _factor(self, point, penalty, image):
        """The step's factor ``A`` (``image = K_mm a``): the last one at the same ridge when
        :func:`~kernelmaps._solvers.logistic_factors.reuses_factors` allows and the last step's CG did not
        run out of iterations (a sign that the stale factor no longer fits)."""
        capped = bool(self.cg_iterations) and self.cg_iterations[-1] >= self.cg_max_iter
        if self.reuses and self.factor is not None and self.factor[0] == penalty and not capped:
            return self.factor[1]
        # the step's O(m^3) factor on BLAS's threads, everything after it single-threaded
        # (see blas_single_thread: a threaded call's spinning workers slow the passes that follow)
        A = self.factors.factor(point, penalty, image)
        self.factor = (penalty, A)
        return A

    def to(self, point, path, lam, max_iter):
        """Steps from ``point`` along ``path`` to its last ridge ``lam``: ``(point, converged, stopped)``,
        ``stopped`` when the callback asked to stop."""
        settled = False
        step = 0
        while True:
            with blas_single_thread():
                penalty, gradient, relative, objective, image = _assess(
                    point, self.K_mm, path[min(step, len(path) - 1)], lam, self.reference, self.fit_intercept,
                    self.tol)
            self.gradient_norms.append(relative)
            self.objectives.append(float(np.sum(objective)))
            if penalty == lam and (relative <= self.tol or settled):
                return point, True, False
            if step >= max_iter:
                return point, False, False
            stalled = relative > STALL_RATIO * self.last_relative
            if stalled:
                self.passes.full_precision()    # reduced-precision Hessian products may stall the steps
            self.last_relative = relative
            forcing = self._forcing(point, gradient, relative, penalty, stalled)
            A = self._factor(point, penalty, image)
            with blas_single_thread():
                point, settled, iterations = self._step(point, gradient, objective, relative, penalty, lam, A,
                                                        forcing, image)
            self.cg_iterations.append(iterations)
            self.penalties.append(penalty)
            step += 1
            self.steps += 1
            if self.callback is not None and self.callback(self.steps, relative, point.a, point.b) and not settled:
                return point, False, True

    def _forcing(self, point, gradient, relative, penalty, stalled):
        """Each column's CG tolerance for the step from ``point``: ``min(0.1, relative)``, loosened to the
        disagreement between the last step's linear model of the gradient and the gradient it reached
        (Eisenstat and Walker's first choice), at most :data:`FORCING_CAP`, unless the last step ``stalled``.

        Where the loss is far from its quadratic model (the exponential tails of nearly separable
        classes), solving Newton's system more exactly than the model's own error buys nothing: on letter
        the gradient fell 3-4x per step whether CG ran 20 or 100 iterations. Where the model agrees, the
        tolerance stays at ``min(0.1, relative)``, which is never looser, so a step slowed by its own
        inexact solve is not kept slow by a loose tolerance. Nor is a step that left the gradient about where
        it was: on an ill-conditioned problem (a ridge of 3e-6 on 300 rows) whose gradient rose and fell from
        step to step, loosening after every step took 20 Newton steps, tight tolerances 18, and this rule 14.
        """
        forecast, self.forecast = self.forecast, None
        tight = min(FORCING_CAP, relative)
        if forecast is None or forecast.penalty != penalty or stalled:
            return np.full(gradient.shape[1], tight)
        reached = _gradient_norms(gradient, point.intercept_gradient, self.fit_intercept)
        disagreement = np.abs(reached - forecast.predicted) / forecast.before
        return np.clip(disagreement, tight, FORCING_CAP)

    def _step(self, point, gradient, objective, relative, penalty, lam, A, forcing, image):
        """Newton's step from ``point`` (``image = K_mm a``) with the preconditioner's factor ``A`` and CG
        tolerances ``forcing``: ``(point, settled, CG iterations)``."""
        try:
            direction, intercept_direction, iterations, linear_residual = _newton_direction(
                self.passes, self.T, A, point, gradient, penalty, self.fit_intercept, self.cg_max_iter, forcing)
        except NotPositiveDefiniteError:
            # float32 products of a kernel flat to within their rounding can lose definiteness
            if not self.passes.full_precision():
                raise
            return self._step(point, gradient, objective, relative, penalty, lam, A, forcing, image)
        # half the Newton decrement g^T H^{-1} g, the decrease the quadratic model
        # predicts for the full step, per column: at most a fraction tol of the
        # objective left to gain ends the fit after this step, whose successors move
        # the coefficients along directions the data barely constrain (at lam = 1e-6
        # on 2·10^4 rows, thirteen more steps of 20 CG passes each change the
        # objective by 4e-6 of itself and the test log-loss in its fifth digit)
        predicted = 0.5 * (np.einsum("ij,ij->j", gradient, direction)
                           + point.intercept_gradient * intercept_direction)
        # only near the optimum (relative gradient below sqrt(tol)): an inexact step's decrement can
        # undershoot by orders of magnitude where the preconditioned system is ill-conditioned (at a
        # ridge below rounding, CG stopped at a 1.4 % residual predicted 2e-8 for an exact 1.9e-4)
        # (and only from a step solved as tightly as the gradient: a tolerance loosened by _forcing leaves the
        # decrement as rough as the model it distrusts)
        settled = penalty == lam and relative <= np.sqrt(self.tol) and bool(np.all(forcing <= relative)) \
            and bool(np.all(predicted <= self.tol * np.abs(objective)))
        start = point
        point, t = damped_update(self.passes, self.K_mm, point, objective, direction, intercept_direction, penalty,
                                 image)
        self.forecast = _Forecast(penalty, _gradient_norms(gradient, start.intercept_gradient, self.fit_intercept),
                                  _linear_model_norms(gradient, start.intercept_gradient, linear_residual, t,
                                                      self.fit_intercept))
        return point, settled, iterations


def _gradient_norms(gradient, intercept_gradient, fit_intercept):
    squares = np.einsum("ij,ij->j", gradient, gradient)
    return np.sqrt(squares + intercept_gradient ** 2 if fit_intercept else squares)


def _assess(point, K_mm, penalty, lam, reference, fit_intercept, tol):
    """``(penalty, gradient, relative gradient norm, objective per column, K_mm a)`` at ``point``.

    ``penalty`` is the path's, or ``lam`` when the point already solves the target
    problem: the rest of the path (300 steps for ``lam = 1e-300``) would not move it.
    One product ``K_mm a`` serves the gradients, the objective, the step's factor and its update.
    """
    image = K_mm @ point.a

    def gradient_at(ridge):
        gradient = point.data_gradient + ridge * image
        return gradient, float(np.max(_gradient_norms(gradient, point.intercept_gradient, fit_intercept) / reference))

    gradient, relative = gradient_at(penalty)
    if penalty != lam and gradient_at(lam)[1] <= tol:
        penalty = lam
        gradient, relative = gradient_at(lam)
    return penalty, gradient, relative, point.loss + 0.5 * penalty * np.einsum("ij,ij->j", point.a, image), image


def _newton_direction(passes, T, A, point, gradient, penalty, fit_intercept, max_iter, tol):
    """Newton's step ``(d, d_b)`` per column, ``d`` by CG on ``B^T S B v = B^T r``, ``d = B v``."""
    n, m, k = passes.shape
    u, s = point.weighted_sum, point.weight_mean
    # s > 0 unless every weight underflowed (a separable column far along its path)
    s_safe = np.where(s > 0, s, 1.0)

    def through_A(U, trans):
        return scipy.linalg.solve_triangular(A, U, lower=False, trans=trans, check_finite=False)

    def schur(V, columns):
        image = passes.hessian_product(V, columns) / n
        if fit_intercept:
            image -= u[:, columns] * (np.einsum("ij,ij->j", u[:, columns], V) / (n * n * s_safe[columns]))
        return image

    def preconditioned_hessian(U, columns):
        inner = through_A(U, "N")
        V = scipy.linalg.solve_triangular(T, inner, lower=False, check_finite=False)
        image = scipy.linalg.solve_triangular(T, schur(V, columns), lower=False, trans="T", check_finite=False)
        # the ridge through T (lam T^T T = lam K_mm up to the jitter), exact in the new variables
        return through_A(image + penalty * inner, "T")

    residual = gradient - u * (point.intercept_gradient / (n * s_safe)) if fit_intercept else gradient
    rhs = through_A(scipy.linalg.solve_triangular(T, residual, lower=False, trans="T", check_finite=False), "T")
    # each column's products and triangular solves stop once its own tolerance is met
    result = conjugate_gradient(preconditioned_hessian, rhs, max_iter=max_iter, tol=tol, columns=True)
    direction = scipy.linalg.solve_triangular(T, through_A(result.x, "N"), lower=False, check_finite=False)
    # CG's residual is B^T (residual - S d); B^-T = T^T A^T brings it back to the gradient's coordinates
    linear_residual = _upper_product(T, _upper_product(A, result.residual, transposed=True), transposed=True)
    if not fit_intercept:
        return direction, np.zeros(k), result.n_iter, linear_residual
    intercept_direction = (point.intercept_gradient - np.einsum("ij,ij->j", u, direction) / n) / s_safe
    return direction, np.where(s > 0, intercept_direction, 0.0), result.n_iter, linear_residual


def _upper_product(U, X, transposed):
    """``U^T X`` (``transposed``) or ``U X`` for an upper triangular ``U``, by BLAS ``trmm`` (a C-ordered ``U``
    read in Fortran order is the lower ``U^T``, so neither order is copied)."""
    trmm = scipy.linalg.get_blas_funcs("trmm", (U, X))
    if U.flags.f_contiguous:
        return trmm(1.0, U, X, lower=0, trans_a=int(transposed))
    return trmm(1.0, U.T, X, lower=1, trans_a=int(not transposed))


class _Forecast(NamedTuple):
    """What a step's linear model predicts of the gradient where the step lands."""

    penalty: float
    #: per column, the gradient norm (the intercept's included) where the step started
    before: np.ndarray
    #: per column, the norm of the linear model's gradient at the step taken
    predicted: np.ndarray


def _linear_model_norms(gradient, intercept_gradient, linear_residual, t, fit_intercept):
    """Per column, the norm of the gradient the quadratic model predicts after ``t`` times Newton's inexact
    step: ``(1 - t) g + t r`` with ``r`` the step's linear residual (zero in the intercept, eliminated
    exactly)."""
    model = (1.0 - t) * gradient + t * linear_residual
    return _gradient_norms(model, (1.0 - t) * intercept_gradient, fit_intercept)
