"""Each column's CG tolerance in a logistic Newton step: loosened where the last step's quadratic model missed."""

import numpy as np

from kernelmaps import NystroemLogisticRegression, exact_kernel
from kernelmaps._solvers import logistic_newton
from kernelmaps._solvers.falkon import cholesky_with_jitter, ridge_cholesky
from kernelmaps._solvers.kernel_operator import KernelOperator
from kernelmaps._solvers.logistic_passes import LogisticPasses, point_from_sums


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((300, 3))
    C = X[:40]
    Y = np.where(X[:, :2] + 0.5 * rng.standard_normal((300, 2)) > 0, 1.0, -1.0)
    return X, C, Y, rng


def test_the_linear_residual_is_that_of_newtons_system_in_the_gradients_coordinates():
    """The residual a step hands to the forcing term is ``g' - S d`` of the intercept-eliminated Newton system,
    computed here from dense matrices; a loose CG leaves it far from zero."""
    X, C, Y, rng = _problem()
    params = dict(kernel="gaussian", gamma=0.5)
    passes = LogisticPasses(KernelOperator(X, C, **params), Y)
    point = passes.run(0.3 * rng.standard_normal((40, 2)), np.array([0.2, -0.1]))
    K, K_mm = exact_kernel(X, C, **params), exact_kernel(C, C, **params)
    penalty, n = 1e-3, X.shape[0]
    T, _ = cholesky_with_jitter(K_mm)
    A = ridge_cholesky(T, np.full(40, 0.2), 40, penalty)
    gradient = point.data_gradient + penalty * K_mm @ point.a
    direction, _, _, residual = logistic_newton._newton_direction(
        passes, T, A, point, gradient, penalty, True, 50, np.array([0.3, 0.3]))
    W, u, s = passes.weights, point.weighted_sum, point.weight_mean
    for j in range(2):
        schur = K.T @ (W[:, j, None] * K) / n - np.outer(u[:, j], u[:, j]) / (n * n * s[j]) + penalty * T.T @ T
        reduced = gradient[:, j] - u[:, j] * point.intercept_gradient[j] / (n * s[j])
        expected = reduced - schur @ direction[:, j]
        assert np.linalg.norm(expected) > 1e-3 * np.linalg.norm(reduced)
        np.testing.assert_allclose(residual[:, j], expected, atol=1e-10 * np.linalg.norm(reduced))


def test_the_linear_model_norm_is_that_of_the_gradient_along_the_step():
    rng = np.random.default_rng(1)
    g, r, g_b = rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), rng.standard_normal(3)
    t = np.array([1.0, 0.5, 2.0])
    norms = logistic_newton._linear_model_norms(g, g_b, r, t, True)
    for j in range(3):
        model = np.r_[(1 - t[j]) * g[:, j] + t[j] * r[:, j], (1 - t[j]) * g_b[j]]
        np.testing.assert_allclose(norms[j], np.linalg.norm(model), rtol=1e-14)


def _separable():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((900, 2))
    return X, np.digitize(X[:, 0] + X[:, 1], [-1, 0, 1])


def test_loosened_tolerances_take_fewer_cg_iterations_to_the_same_optimum(monkeypatch):
    """On nearly separable classes the quadratic model misses the gradient a step reaches, and solving each step
    less exactly reaches the gradient tolerance in fewer CG iterations, at the same optimum."""
    X, y = _separable()
    params = dict(n_components=100, alpha=1e-2, gamma=1.0, random_state=0, tol=1e-6)
    loosened = NystroemLogisticRegression(**params).fit(X, y)
    monkeypatch.setattr(logistic_newton._Walk, "_forcing",
                        lambda self, point, gradient, relative, penalty, stalled:
                        np.full(gradient.shape[1], min(logistic_newton.FORCING_CAP, relative)))
    tight = NystroemLogisticRegression(**params).fit(X, y)
    assert sum(loosened.cg_iterations_) < sum(tight.cg_iterations_)
    assert loosened.gradient_norms_[-1] <= loosened.tol and tight.gradient_norms_[-1] <= tight.tol
    np.testing.assert_allclose(loosened.predict_proba(X), tight.predict_proba(X), atol=2e-3)


def test_the_forcing_is_tight_after_a_stall_a_new_ridge_or_without_a_step_before():
    walk = logistic_newton._Walk.__new__(logistic_newton._Walk)
    walk.fit_intercept = True
    gradient = np.ones((4, 2))              # a norm of 2 in each column
    sums = np.zeros((3, 2))
    point = point_from_sums(np.zeros((4, 2)), np.zeros(2), 1, np.zeros((4, 4)), sums)
    # the last step started from norms of 4 and its model predicted 0 and 2
    forecast = logistic_newton._Forecast(1e-3, np.array([4.0, 4.0]), np.array([0.0, 2.0]))
    for penalty, stalled, loosened in [(1e-3, False, True), (1e-3, True, False), (1e-4, False, False)]:
        walk.forecast = forecast
        forcing = walk._forcing(point, gradient, 1e-3, penalty, stalled)
        # |2 - 0| / 4 = 0.5 is capped at 0.1; |2 - 2| / 4 = 0 stays at the tight 1e-3
        np.testing.assert_allclose(forcing, [0.1, 1e-3] if loosened else [1e-3, 1e-3])
        assert walk.forecast is None
    np.testing.assert_array_equal(walk._forcing(point, gradient, 0.5, 1e-3, False), [0.1, 0.1])
