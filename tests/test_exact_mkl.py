"""Exact l1 multiple kernel learning (GMKL / SimpleMKL): the solver against plain NumPy
and brute force, the group-lasso equivalence of Băzăvan et al. (eq. 16-17), the
closed-form lambda_max, a planted problem, and input validation."""

import warnings

import numpy as np
import pytest
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning, NotFittedError

import kernelmaps.exact_mkl as exact_mkl
from kernelmaps import ExactMKLClassifier, ExactMKLRegressor, RandomFourierFeatures, exact_kernel
from kernelmaps._solvers.l1_mkl import _L1MKLProblem
from kernelmaps.datasets import make_planted_groups
from kernelmaps._solvers.l1_mkl import solve_l1_mkl


# ------------------------------------------------------------ NumPy references
def reference_inner(grams, y, alpha, d):
    """``(a, b)`` of the bordered LS-SVM system, by a dense ``np.linalg.solve``."""
    n = len(y)
    mu = alpha / np.sqrt(2) * n
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = np.tensordot(d, grams, axes=1) + mu * np.eye(n)
    M[:n, n] = M[n, :n] = 1.0
    solution = np.linalg.solve(M, np.append(y, 0.0))
    return solution[:n], solution[n]


def reference_objective(grams, y, alpha, d):
    """``Obj(d)`` and its gradient, written out from the definition."""
    n, c = len(y), alpha / np.sqrt(2)
    a, b = reference_inner(grams, y, alpha, d)
    Kd = np.tensordot(d, grams, axes=1)
    residual = y - Kd @ a - b
    objective = c * (0.5 * a @ Kd @ a + d.sum()) + residual @ residual / (2 * n)
    gradient = c * (1 - 0.5 * np.einsum("i,tij,j->t", a, grams, a))
    return objective, gradient


def gaussian_grams(X, groups, gammas):
    return np.array([exact_kernel(X[:, cols], gamma=g) for cols, g in zip(groups, gammas)])


def lambda_max_per_kernel(grams, y):
    yc = y - y.mean()
    return np.sqrt(np.einsum("i,tij,j->t", yc, grams, yc)) / len(y)


@pytest.fixture(scope="module")
def small():
    """Three Gaussian kernels on three column groups, a target driven by two of them."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 6))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 2] * X[:, 3] + 0.1 * rng.standard_normal(60)
    grams = gaussian_grams(X, [[0, 1], [2, 3], [4, 5]], [0.5, 0.5, 0.5])
    return grams, y


# ------------------------------------------------------------ inner problem and gradient
def test_inner_solve_matches_the_bordered_system(small):
    grams, y = small
    alpha = 0.05
    problem = _L1MKLProblem(grams, y, alpha)
    d = np.array([0.3, 1.7, 0.0])
    a, b = problem.inner_solve(d)
    a_ref, b_ref = reference_inner(grams, y, alpha, d)
    np.testing.assert_allclose(a, a_ref, rtol=1e-9, atol=1e-12 * np.abs(a_ref).max())
    np.testing.assert_allclose(b, b_ref, rtol=1e-10)
    point = problem.evaluate(d)
    np.testing.assert_allclose(point.objective, reference_objective(grams, y, alpha, d)[0],
                               rtol=1e-12)
    # d = 0: a = (y - mean y) / mu, b = mean y
    zero = problem.evaluate(np.zeros(3))
    mu = alpha / np.sqrt(2) * len(y)
    np.testing.assert_allclose(zero.dual_coef, (y - y.mean()) / mu, rtol=1e-12)
    assert zero.intercept == pytest.approx(y.mean(), rel=1e-14)
    a0, b0 = reference_inner(grams, y, alpha, np.zeros(3))
    np.testing.assert_allclose(zero.dual_coef, a0, rtol=1e-9, atol=1e-14)


def test_gradient_matches_central_differences(small):
    grams, y = small
    alpha = 0.05
    d = np.random.default_rng(1).uniform(0.2, 2.0, size=3)
    point = _L1MKLProblem(grams, y, alpha).evaluate(d)
    gradient = alpha / np.sqrt(2) * point.kkt_gradient
    h = 1e-5
    numeric = np.array([
        (reference_objective(grams, y, alpha, d + h * e)[0]
         - reference_objective(grams, y, alpha, d - h * e)[0]) / (2 * h)
        for e in np.eye(3)
    ])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5)
    np.testing.assert_allclose(gradient, reference_objective(grams, y, alpha, d)[1], rtol=1e-9)


# ------------------------------------------------------------ the whole solver
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.002])
def test_solver_matches_brute_force_minimization(small, alpha):
    grams, y = small
    solution = solve_l1_mkl(grams, y, alpha, tol=1e-9, max_iter=500)
    assert solution.converged

    def fun(d):
        return reference_objective(grams, y, alpha, d)

    brute = scipy.optimize.minimize(fun, np.full(3, 1 / 3), jac=True, method="L-BFGS-B",
                                    bounds=[(0, None)] * 3,
                                    options={"ftol": 1e-15, "gtol": 1e-13, "maxiter": 5000})
    np.testing.assert_allclose(solution.weights, brute.x, atol=1e-5 * max(1.0, brute.x.max()))
    np.testing.assert_allclose(solution.objective_history[-1], brute.fun, rtol=1e-8)
    np.testing.assert_allclose(solution.objective_history[-1],
                               fun(solution.weights)[0], rtol=1e-12)
    assert solution.objective_history[-1] <= solution.objective_history[0]
    # the solution is the inner solution at its weights
    a, b = reference_inner(grams, y, alpha, solution.weights)
    np.testing.assert_allclose(solution.dual_coef, a, rtol=1e-7, atol=1e-9 * np.abs(a).max())
    assert solution.intercept == pytest.approx(b, rel=1e-8, abs=1e-10)


def test_group_lasso_equivalence_with_explicit_features():
    """Eq. 16-17: v_t = d_t Phi_t^T a solves alpha sum ||v_t|| + ||y - Phi v - b||^2 / (2N)."""
    rng = np.random.default_rng(2)
    n, width = 120, 20
    Phi = [rng.standard_normal((n, width)) / np.sqrt(width) for _ in range(3)]
    y = (Phi[0] @ rng.standard_normal(width) + 0.4 * Phi[1] @ rng.standard_normal(width)
         + 0.1 * rng.standard_normal(n) + 3.0)
    grams = np.array([P @ P.T for P in Phi])
    alpha = 0.4 * lambda_max_per_kernel(grams, y).max()
    solution = solve_l1_mkl(grams, y, alpha, tol=1e-9)
    assert solution.converged
    d, a, b = solution.weights, solution.dual_coef, solution.intercept
    active = d > 0
    assert active.any() and not active.all(), d  # the test needs both kinds of group
    v = [d_t * P.T @ a for d_t, P in zip(d, Phi)]
    residual = y - sum(P @ v_t for P, v_t in zip(Phi, v)) - b
    assert abs(residual.sum()) < 1e-9 * np.abs(y).sum()  # the free intercept
    for t in range(3):
        correlation = Phi[t].T @ residual / n
        norm = np.linalg.norm(v[t])
        if active[t]:
            np.testing.assert_allclose(correlation, alpha * v[t] / norm, rtol=1e-5,
                                       atol=1e-5 * alpha / np.sqrt(width))
            assert d[t] == pytest.approx(norm / np.sqrt(2), rel=1e-5)
        else:
            assert norm == 0.0
            assert np.linalg.norm(correlation) <= alpha * (1 + 1e-6)
    # the MKL objective equals the group-lasso objective at the optimum
    group_lasso = alpha * sum(np.linalg.norm(v_t) for v_t in v) + residual @ residual / (2 * n)
    assert solution.objective_history[-1] == pytest.approx(group_lasso, rel=1e-9)


def test_lambda_max_is_the_closed_form_threshold():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 6))
    y = 2.0 * np.sin(2 * X[:, 0]) + 0.5 * X[:, 3] + 0.05 * rng.standard_normal(80) + 1.5
    groups = [[0, 1], [2, 3], [4, 5]]
    reg = ExactMKLRegressor(groups, gamma=0.5, alpha=1.0).fit(X, y)
    lam = lambda_max_per_kernel(gaussian_grams(X, groups, reg.gammas_), y)
    top = int(np.argmax(lam))
    assert lam[top] > 1.2 * np.sort(lam)[-2]
    above = ExactMKLRegressor(groups, gamma=0.5, alpha=lam[top] * (1 + 1e-6)).fit(X, y)
    np.testing.assert_array_equal(above.kernel_weights_, np.zeros(3))
    assert above.intercept_ == pytest.approx(y.mean(), rel=1e-12)
    np.testing.assert_allclose(above.predict(X[:5]), y.mean(), rtol=1e-12)
    assert above.n_iter_ == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        below = ExactMKLRegressor(groups, gamma=0.5, alpha=lam[top] * 0.98).fit(X, y)
    assert below.kernel_weights_[top] > 0
    assert np.count_nonzero(below.kernel_weights_) == 1


# ------------------------------------------------------------ the estimators
def test_bandwidths_are_resolved_per_kernel_as_random_fourier_features_does():
    X, y, groups, _ = make_planted_groups(n_samples=100, n_groups=3, group_size=3, random_state=4)
    X[:, 3:6] *= 5.0  # groups of different scales get different 'scale' bandwidths
    for gamma in ["scale", "median"]:
        reg = ExactMKLRegressor(groups, gamma=gamma, alpha=0.1).fit(X, y)
        expected = [RandomFourierFeatures(8, gamma=gamma, random_state=0).fit(X[:, cols]).gamma_
                    for cols in reg.kernel_columns_]
        np.testing.assert_array_equal(reg.gammas_, expected)
    assert reg.gammas_[1] < reg.gammas_[0] / 10
    # groups=None with several bandwidths: one kernel per bandwidth on all columns
    several = ExactMKLRegressor(gamma=[0.1, "scale", 2.0], alpha=0.1).fit(X, y)
    assert len(several.kernel_columns_) == 3
    for cols in several.kernel_columns_:
        np.testing.assert_array_equal(cols, np.arange(9))
    np.testing.assert_array_equal(several.gammas_[[0, 2]], [0.1, 2.0])


def test_predict_is_the_weighted_kernel_expansion(small, monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((70, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 2] * X[:, 3]
    groups = [0, 0, 1, 1]
    reg = ExactMKLRegressor(groups, gamma=[0.5, 0.3], alpha=0.01).fit(X, y)
    Y = rng.standard_normal((25, 4))
    cols = reg.kernel_columns_
    expected = reg.intercept_ + sum(
        d_t * exact_kernel(Y[:, c], X[:, c], gamma=g) @ reg.dual_coef_
        for d_t, c, g in zip(reg.kernel_weights_, cols, reg.gammas_))
    np.testing.assert_allclose(reg.predict(Y), expected, rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(exact_mkl, "_PREDICT_BLOCK_BYTES", 8 * 70 * 3)  # blocks of 3 rows
    np.testing.assert_allclose(reg.predict(Y), expected, rtol=1e-10, atol=1e-12)
    # the fitted attributes are the solver's on the same Gram matrices
    grams = gaussian_grams(X, cols, reg.gammas_)
    solution = solve_l1_mkl(grams, y, 0.01)
    np.testing.assert_allclose(reg.kernel_weights_, solution.weights, rtol=1e-12)
    np.testing.assert_allclose(reg.objective_history_, solution.objective_history, rtol=1e-12)
    assert reg.n_iter_ == solution.n_iter > 0


def test_planted_groups_are_found_and_predicted():
    X, y, groups, informative = make_planted_groups(n_samples=400, n_groups=8, group_size=4,
                                                    n_informative=3, random_state=0)
    train, test = slice(0, 300), slice(300, None)
    clf = ExactMKLClassifier(groups, alpha=0.02).fit(X[train], y[train])
    weights = clf.kernel_weights_
    assert weights.shape == (8,)
    np.testing.assert_array_equal(np.sort(np.argsort(weights)[-3:]), informative)
    others = np.setdiff1d(np.arange(8), informative)
    assert weights[informative].min() > 2 * weights[others].max()
    accuracy = np.mean(clf.predict(X[test]) == y[test])
    assert accuracy > 0.8, accuracy
    scores = clf.decision_function(X[test])
    np.testing.assert_array_equal(clf.predict(X[test]), clf.classes_[(scores > 0).astype(int)])
    # the regressor on the same 0/1 targets finds the same groups
    reg = ExactMKLRegressor(groups, alpha=0.01).fit(X[train], y[train])
    np.testing.assert_array_equal(np.sort(np.argsort(reg.kernel_weights_)[-3:]), informative)


def test_multiclass_has_weights_and_scores_per_class():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((150, 6))
    y = np.select([X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0, X[:, 4] > 0], ["near", "right"], "left")
    clf = ExactMKLClassifier([[0, 1], [2, 3], [4, 5]], alpha=0.01).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, ["left", "near", "right"])
    assert clf.kernel_weights_.shape == (3, 3)
    assert clf.dual_coef_.shape == (150, 3)
    assert clf.intercept_.shape == (3,)
    assert clf.n_iter_.shape == (3,)
    assert len(clf.objective_history_) == 3
    scores = clf.decision_function(X[:10])
    assert scores.shape == (10, 3)
    np.testing.assert_array_equal(clf.predict(X[:10]), clf.classes_[np.argmax(scores, axis=1)])
    assert clf.score(X, y) > 0.85
    # "near" is decided by columns 0-1, "left"/"right" by column 4: separate weights per class
    assert np.argmax(clf.kernel_weights_[1]) == 0
    assert np.argmax(clf.kernel_weights_[2]) == 2
    # each class is the binary problem on its +-1 targets
    grams = gaussian_grams(X, clf.kernel_columns_, clf.gammas_)
    for k, label in enumerate(clf.classes_):
        solution = solve_l1_mkl(grams, np.where(y == label, 1.0, -1.0), 0.01)
        np.testing.assert_allclose(clf.kernel_weights_[k], solution.weights, rtol=1e-12)
        assert clf.intercept_[k] == pytest.approx(solution.intercept, rel=1e-12)


def test_binary_classifier_uses_one_problem_with_the_plus_minus_one_code():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((90, 4))
    y = np.where(X[:, 0] * X[:, 1] > 0, "b", "a")
    clf = ExactMKLClassifier([[0, 1], [2, 3]], alpha=0.01).fit(X, y)
    assert clf.kernel_weights_.shape == (2,) and clf.dual_coef_.shape == (90,)
    assert isinstance(clf.intercept_, float) and isinstance(clf.n_iter_, int)
    grams = gaussian_grams(X, clf.kernel_columns_, clf.gammas_)
    solution = solve_l1_mkl(grams, np.where(y == "b", 1.0, -1.0), 0.01)
    np.testing.assert_allclose(clf.kernel_weights_, solution.weights, rtol=1e-12)
    assert clf.decision_function(X[:7]).shape == (7,)


def test_convergence_warning_and_warm_start(small):
    grams, y = small
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        ExactMKLRegressor(gamma=[0.1, 1.0, 5.0], alpha=0.001, max_iter=1, tol=1e-12).fit(
            np.random.default_rng(8).standard_normal((50, 3)), y[:50])
    solution = solve_l1_mkl(grams, y, 0.01, max_iter=2, tol=1e-12)
    assert not solution.converged and solution.n_iter == 2
    assert len(solution.objective_history) == 3
    full = solve_l1_mkl(grams, y, 0.01, tol=1e-9)
    again = solve_l1_mkl(grams, y, 0.01, tol=1e-8, weights=full.weights)
    assert again.converged and again.n_iter == 0


# ------------------------------------------------------------ validation
@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((40, 4))
    return X, X[:, 0] + X[:, 1] ** 2, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("cls", [ExactMKLRegressor, ExactMKLClassifier])
def test_sample_limit_names_the_constant_and_the_random_feature_learner(cls, data, monkeypatch):
    X, y_reg, y_clf = data
    monkeypatch.setattr(exact_mkl, "EXACT_MKL_MAX_SAMPLES", 30)
    y = y_reg if cls is ExactMKLRegressor else y_clf
    with pytest.raises(ValueError, match="EXACT_MKL_MAX_SAMPLES=30.*GroupLassoMKL"):
        cls(alpha=0.1).fit(X, y)
    cls(alpha=0.1).fit(X[:30], y[:30])


@pytest.mark.parametrize("alpha", [0.0, -1.0, np.nan, np.inf, "big"])
@pytest.mark.parametrize("cls", [ExactMKLRegressor, ExactMKLClassifier])
def test_bad_alpha(cls, alpha, data):
    X, y_reg, y_clf = data
    with pytest.raises(ValueError, match="alpha"):
        cls(alpha=alpha).fit(X, y_reg if cls is ExactMKLRegressor else y_clf)


@pytest.mark.parametrize("groups, message", [
    ([[0, 1], [1, 2]], "overlap"),
    ([[0, 1], [2, 7]], "column 7"),
    ([[0, 1], []], "empty"),
    ([0, 0, 2, 2], "empty"),
    ([0, 1, 1], "3 columns"),
])
def test_groups_errors_propagate(groups, message, data):
    X, y, _ = data
    with pytest.raises(ValueError, match=message):
        ExactMKLRegressor(groups, alpha=0.1).fit(X, y)


def test_gamma_per_kernel_count_is_checked(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="gamma has 3 entries"):
        ExactMKLRegressor([[0, 1], [2, 3]], gamma=[1.0, 2.0, 3.0], alpha=0.1).fit(X, y)


@pytest.mark.parametrize("cls", [ExactMKLRegressor, ExactMKLClassifier])
def test_input_errors(cls, data):
    X, y_reg, y_clf = data
    y = y_reg if cls is ExactMKLRegressor else y_clf
    with pytest.raises(NotFittedError):
        cls().predict(X)
    est = cls(alpha=0.1).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls(alpha=0.1).fit(bad, y)
    with pytest.raises(ValueError, match="NaN"):
        est.predict(bad)


def test_target_errors(data):
    X, y_reg, _ = data
    with pytest.raises(ValueError, match="class"):
        ExactMKLClassifier(alpha=0.1).fit(X, np.zeros(40, dtype=int))
    with pytest.raises(ValueError, match="continuous"):
        ExactMKLClassifier(alpha=0.1).fit(X, y_reg)
    with pytest.raises(ValueError, match="numeric"):
        ExactMKLRegressor(alpha=0.1).fit(X, np.where(y_reg > 0, "yes", "no"))
    with pytest.raises(ValueError):
        ExactMKLRegressor(alpha=0.1).fit(X, np.column_stack([y_reg, y_reg]))
