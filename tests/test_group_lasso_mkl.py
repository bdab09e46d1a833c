"""Group-lasso multiple kernel learning on random features (RFF-GL): kernels, solver, claims."""

import doctest
import math

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg
from sklearn.exceptions import ConvergenceWarning

from kernelmaps import (GroupLassoMKLClassifier, GroupLassoMKLRegressor,
                        RandomFourierFeatures)
from kernelmaps._solvers import group_lasso
from kernelmaps._solvers.fista import fista, group_soft_threshold, lipschitz_estimate
from kernelmaps._solvers.group_lasso import _GramProducts, _Products, solve_group_lasso
from kernelmaps._solvers.group_lasso_losses import Loss
from kernelmaps._solvers.l1_mkl import solve_l1_mkl
from kernelmaps.datasets import make_planted_groups

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# ---------------------------------------------------------------- NumPy references

def prox_reference(V, bounds, threshold):
    out = np.zeros_like(V)
    for g in range(len(bounds) - 1):
        block = V[bounds[g]:bounds[g + 1]]
        norm = np.linalg.norm(block, axis=0)
        scale = np.where(norm > threshold, 1 - threshold / np.where(norm > 0, norm, 1), 0.0)
        out[bounds[g]:bounds[g + 1]] = block * scale
    return out


def loss_reference(name, z, t, epsilon=0.1, sharpness=10.0):
    if name == "squared":
        return (z - t) ** 2 / 2
    if name == "logistic":
        return np.logaddexp(0, -t * z)
    r, s = z - t, sharpness
    return (np.logaddexp(0, s * (r - epsilon)) + np.logaddexp(0, s * (-r - epsilon))
            - 2 * np.logaddexp(0, -s * epsilon)) / s


def objective(F, y, bounds, alpha, coef, intercept, loss="squared", sharpness=10.0):
    z = F @ coef + intercept
    norms = [np.linalg.norm(coef[bounds[g]:bounds[g + 1]]) for g in range(len(bounds) - 1)]
    return loss_reference(loss, z, y, 0.1, sharpness).mean() + alpha * sum(norms)


def grouped_problem(n=300, sizes=(8, 8, 8, 8), seed=0, active=(0, 2)):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, sum(sizes)))
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    w = np.zeros(sum(sizes))
    for g in active:
        w[bounds[g]:bounds[g + 1]] = rng.standard_normal(sizes[g])
    y = F @ w + 0.5 + 0.3 * rng.standard_normal(n)
    return F, y, bounds


# ---------------------------------------------------------------- the kernels

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_group_soft_threshold_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    V = rng.standard_normal((23, 3)).astype(dtype)
    V[5:9, 1] = 0.0                          # a zero group stays zero (no 0/0)
    bounds = np.array([0, 5, 9, 10, 23])
    for threshold in (0.0, 0.7, 1.5, 100.0):
        out, norms = group_soft_threshold(V, bounds, threshold)
        expected = prox_reference(V.astype(np.float64), bounds, threshold)
        rtol = 1e-6 if dtype == np.float32 else 1e-14
        np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(
            norms, [np.linalg.norm(expected[bounds[g]:bounds[g + 1]], axis=0)
                    for g in range(4)], rtol=rtol, atol=rtol)
        assert out.dtype == dtype


@pytest.mark.parametrize("name", ["squared", "logistic", "epsilon_logistic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_loss_values_match_numpy(name, dtype):
    rng = np.random.default_rng(2)
    Z = (5 * rng.standard_normal((400, 2))).astype(dtype)
    Z[:3, 0] = [800.0, -800.0, 0.0]          # far tails: no overflow, no lost digits
    T = (np.sign(rng.standard_normal((400, 2))) if name == "logistic"
         else rng.standard_normal((400, 2))).astype(dtype)
    loss = Loss(name, 0.1, 10.0)
    totals, derivative = loss.totals_and_derivative(Z, T)
    expected = loss_reference(name, Z.astype(float), T.astype(float))
    rtol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(totals, expected.sum(axis=0), rtol=rtol)
    np.testing.assert_allclose(loss.totals(Z, T), totals, rtol=1e-12)
    np.testing.assert_allclose(loss.per_sample(Z, T), expected.sum(axis=1), rtol=rtol,
                               atol=1e-300)


@pytest.mark.parametrize("name", ["squared", "logistic", "epsilon_logistic"])
def test_loss_derivatives_match_finite_differences(name):
    rng = np.random.default_rng(3)
    Z = 3 * rng.standard_normal((200, 1))
    T = np.sign(rng.standard_normal((200, 1))) if name == "logistic" else \
        rng.standard_normal((200, 1))
    loss = Loss(name, 0.1, 4.0)
    _, derivative = loss.totals_and_derivative(Z, T)
    h = 1e-6
    numeric = (loss_reference(name, Z + h, T, 0.1, 4.0)
               - loss_reference(name, Z - h, T, 0.1, 4.0)) / (2 * h)
    np.testing.assert_allclose(derivative, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["squared", "logistic", "epsilon_logistic"])
@pytest.mark.parametrize("form", [_Products, _GramProducts])
def test_objective_gradient_matches_finite_differences(name, form):
    if form is _GramProducts and name != "squared":
        pytest.skip("the Gram form is for the squared loss")
    F, y, bounds = grouped_problem(n=150, sizes=(3, 4, 5))
    T = np.sign(y - y.mean())[:, None] if name == "logistic" else y[:, None]
    loss = Loss(name, 0.1, 4.0)
    products = _Products(F, T, loss, None) if form is _Products else _GramProducts(F, T, None)
    rng = np.random.default_rng(4)
    W, b = 0.2 * rng.standard_normal((F.shape[1], 1)), np.array([0.3])
    # both forms work on centred features: predictions (F - mean) W + b', where b' is
    # the solver's own intercept (the Gram form eliminates it: b' = mean(y))
    offset = T.mean(axis=0) if form is _GramProducts else b
    Fc = F - F.mean(axis=0)

    def smooth(W):
        return loss_reference(name, Fc @ W[:, 0] + offset[0], T[:, 0], 0.1, 4.0).mean()

    A, value = products.image_and_loss(W, b)
    value2, G, _ = products.loss_and_gradient(W, b, A)
    np.testing.assert_allclose(value, smooth(W), rtol=1e-10)
    np.testing.assert_allclose(value2, value, rtol=1e-12)
    numeric = np.empty_like(W)
    for j in range(W.shape[0]):
        step = np.zeros_like(W)
        step[j] = 1e-6
        numeric[j] = (smooth(W + step) - smooth(W - step)) / 2e-6
    np.testing.assert_allclose(G, numeric, rtol=1e-5, atol=1e-8)


def test_epsilon_logistic_tends_to_epsilon_insensitive_loss():
    """The paper's Figure 1: the smooth loss approaches max(0, |r| - eps) as gamma grows."""
    r = np.linspace(-1, 1, 4001)[:, None]
    zero = np.zeros_like(r)
    insensitive = np.maximum(0, np.abs(r) - 0.1)
    gaps = []
    for sharpness in (1, 5, 10, 100, 1000):
        loss = Loss("epsilon_logistic", 0.1, float(sharpness))
        values = np.array([loss.totals(r[i:i + 1], zero[i:i + 1])[0] for i in range(len(r))])
        gap = np.abs(values - insensitive[:, 0]).max()
        assert gap <= 2 * math.log(2) / sharpness     # the softplus bound, both terms
        gaps.append(gap)
    assert np.all(np.diff(gaps) < 0)
    assert gaps[-1] < 2e-3


# ---------------------------------------------------------------- the solver

@pytest.mark.parametrize("loss, n", [("squared", 300), ("squared", 20),   # Gram form, passes
                                     ("logistic", 300), ("epsilon_logistic", 300)])
def test_fista_reaches_the_long_run_optimum(loss, n):
    F, y, bounds = grouped_problem(n=n)
    if loss == "logistic":
        y = np.sign(y - np.median(y))
    alpha = 0.1 * solve_group_lasso(F, y, bounds, 1e9, loss=loss, sharpness=5.0).alpha_max
    reference = solve_group_lasso(F, y, bounds, alpha, loss=loss, sharpness=5.0,
                                  max_iter=100000, tol=1e-13)
    best = objective(F, y, bounds, alpha, reference.coef[:, 0], reference.intercept[0], loss,
                     5.0)
    solution = solve_group_lasso(F, y, bounds, alpha, loss=loss, sharpness=5.0)
    assert solution.converged
    value = objective(F, y, bounds, alpha, solution.coef[:, 0], solution.intercept[0], loss,
                      5.0)
    assert abs(value - best) <= 1e-6 * abs(best)
    np.testing.assert_allclose(solution.objective_history[-1], value, rtol=1e-9)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_fista_needs_fewer_iterations_than_proximal_gradient(loss):
    F, y, bounds = grouped_problem(n=400, sizes=(10,) * 6, active=(0, 3))
    F[:, 1:] += 0.8 * F[:, :1]                    # correlated features: ill-conditioned
    if loss == "logistic":
        y = np.sign(y - np.median(y))
    alpha = 0.02 * solve_group_lasso(F, y, bounds, 1e9, loss=loss).alpha_max
    best = solve_group_lasso(F, y, bounds, alpha, loss=loss, max_iter=100000,
                             tol=1e-12).objective_history[-1]
    fast = solve_group_lasso(F, y, bounds, alpha, loss=loss, max_iter=3000, tol=1e-12)
    slow = solve_group_lasso(F, y, bounds, alpha, loss=loss, max_iter=3000, tol=1e-12,
                             accelerated=False)

    def iterations_to_reach(history):        # within 1e-6 of the optimum
        reached = np.flatnonzero(history <= best * (1 + 1e-6))
        return reached[0] if reached.size else np.inf

    assert iterations_to_reach(fast.objective_history) * 3 < iterations_to_reach(
        slow.objective_history)


def test_matches_skglm_group_lasso():
    skglm = pytest.importorskip("skglm", reason="the skglm peer is not installed")
    F, y, bounds = grouped_problem(n=400, sizes=(6, 6, 6, 6, 6))
    alpha = 0.1 * solve_group_lasso(F, y, bounds, 1e9).alpha_max
    ours = solve_group_lasso(F, y, bounds, alpha)
    peer = skglm.GroupLasso(groups=[list(range(bounds[g], bounds[g + 1])) for g in range(5)],
                            alpha=alpha, tol=1e-10, max_iter=1000).fit(F, y)
    mine = objective(F, y, bounds, alpha, ours.coef[:, 0], ours.intercept[0])
    theirs = objective(F, y, bounds, alpha, peer.coef_, peer.intercept_)
    assert abs(mine - theirs) <= 1e-4 * abs(theirs)
    assert mine <= theirs * (1 + 1e-9)
    np.testing.assert_allclose(ours.coef[:, 0], peer.coef_, atol=1e-4)


def test_alpha_max_is_the_smallest_alpha_with_every_group_zero():
    F, y, bounds = grouped_problem()
    alpha_max = solve_group_lasso(F, y, bounds, 1e9).alpha_max
    at = solve_group_lasso(F, y, bounds, alpha_max * 1.0001)
    assert np.all(at.group_norms == 0)
    np.testing.assert_allclose(at.intercept, y.mean())
    below = solve_group_lasso(F, y, bounds, alpha_max * 0.99)
    gradient_norms = [np.linalg.norm(F[:, bounds[g]:bounds[g + 1]].T @ (y - y.mean())) / len(y)
                      for g in range(4)]
    assert np.flatnonzero(below.group_norms[:, 0]).tolist() == [int(np.argmax(gradient_norms))]
    np.testing.assert_allclose(alpha_max, max(gradient_norms), rtol=1e-12)


def test_group_norms_are_the_exact_mkl_weights_on_the_same_features():
    """Eq. 16: exact l1-MKL on the linear kernels of the features gives d_t = ||w_t|| / sqrt(2)."""
    F, y, bounds = grouped_problem(n=120, sizes=(10, 10, 10, 10), active=(0, 1))
    alpha = 0.05 * solve_group_lasso(F, y, bounds, 1e9).alpha_max
    group_lasso = solve_group_lasso(F, y, bounds, alpha, tol=1e-10, max_iter=100000)
    grams = np.stack([F[:, a:b] @ F[:, a:b].T for a, b in zip(bounds[:-1], bounds[1:])])
    exact = solve_l1_mkl(grams, y, alpha, max_iter=2000, tol=1e-10)
    weights = group_lasso.group_norms[:, 0] / math.sqrt(2)
    assert np.count_nonzero(weights) >= 2
    np.testing.assert_allclose(exact.weights, weights, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(exact.intercept, group_lasso.intercept[0], rtol=1e-5)


def test_lipschitz_estimate_takes_an_operator_or_a_matrix():
    rng = np.random.default_rng(0)
    F = rng.standard_normal((60, 12))
    A = F.T @ F / 60
    largest = np.linalg.eigvalsh(A)[-1]
    dense = lipschitz_estimate(A, rtol=1e-10)
    assert dense == pytest.approx(largest, rel=1e-8)
    assert lipschitz_estimate(scipy.sparse.csr_array(A), rtol=1e-10) == pytest.approx(dense, rel=1e-12)
    operator = scipy.sparse.linalg.LinearOperator(A.shape, matvec=lambda v: F.T @ (F @ v) / 60,
                                                  dtype=np.float64)
    assert lipschitz_estimate(operator, rtol=1e-10) == pytest.approx(dense, rel=1e-12)


def test_solver_module_examples_run():
    # the docstring test runs the examples of the top-level modules, not of the solver package
    result = doctest.testmod(group_lasso, optionflags=doctest.NORMALIZE_WHITESPACE, report=False)
    assert result.attempted > 0 and result.failed == 0


# ---------------------------------------------------------------- the estimators

def test_planted_groups_have_the_largest_norms_and_enter_first():
    for seed in range(3):
        X, y, groups, informative = make_planted_groups(800, random_state=seed)
        clf = GroupLassoMKLClassifier(groups, n_components=64, random_state=seed).fit(X, y)
        top = np.sort(np.argsort(clf.group_norms_)[-len(informative):])
        assert top.tolist() == informative.tolist()
        assert np.all(np.diff(clf.alphas_) < 0)
        entered = [np.flatnonzero(row > 0) for row in clf.group_norms_path_]
        first = next(e for e in entered if e.size >= len(informative))
        assert set(informative) <= set(first.tolist()) or first.size > len(informative)
        order = _entry_order(clf.group_norms_path_)
        assert sorted(order[:len(informative)]) == informative.tolist()
        np.testing.assert_allclose(clf.kernel_weights_, clf.group_norms_ / math.sqrt(2))
        assert clf.score(X, y) > 0.8


def _entry_order(path):
    """Groups in the order they first become non-zero along the path (ties by size)."""
    first = np.array([np.argmax(path[:, g] > 0) if np.any(path[:, g] > 0) else len(path)
                      for g in range(path.shape[1])])
    return sorted(range(path.shape[1]), key=lambda g: (first[g], -path[-1, g]))


def test_one_standard_error_rule_picks_a_sparser_or_equal_model():
    X, y, groups, _ = make_planted_groups(800, random_state=1)
    best = GroupLassoMKLClassifier(groups, n_components=64, random_state=0).fit(X, y)
    sparse = GroupLassoMKLClassifier(groups, n_components=64, random_state=0,
                                     alpha_selection="one_se").fit(X, y)
    assert sparse.alpha_ >= best.alpha_
    assert sparse.alpha_index_ <= best.alpha_index_
    at = sparse.alpha_index_
    assert (sparse.validation_loss_[at] <= sparse.validation_loss_[best.alpha_index_]
            + sparse.validation_loss_se_[best.alpha_index_])


def test_multiclass_shapes_and_path_sums_classes():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 2], [-0.5, 0.5])
    clf = GroupLassoMKLClassifier([0, 0, 1, 1, 2, 2], n_components=32, random_state=0,
                                  n_alphas=6).fit(X, y)
    assert clf.group_norms_.shape == clf.kernel_weights_.shape == (3, 3)
    assert clf.group_norms_path_.shape == (len(clf.alphas_), 3) and len(clf.alphas_) <= 6
    assert clf.decision_function(X).shape == (300, 3)
    assert clf.coef_.shape == (3, 96)
    assert clf.score(X, y) > 0.8
    refit = GroupLassoMKLClassifier([0, 0, 1, 1, 2, 2], n_components=32, random_state=0,
                                    alpha=clf.alpha_, loss="logistic").fit(X, y)
    np.testing.assert_allclose(refit.predict_proba(X).sum(axis=1), 1.0)
    assert not hasattr(clf, "predict_proba")               # the squared loss has none


def test_kernel_forms_column_lists_bandwidths_and_fitted_maps():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((200, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 3] ** 2
    by_index = GroupLassoMKLRegressor([0, 0, 1, 1, 1], n_components=16, alpha=1e-3,
                                      random_state=0).fit(X, y)
    by_lists = GroupLassoMKLRegressor([[0, 1], [2, 3, 4]], n_components=16, alpha=1e-3,
                                      random_state=0).fit(X, y)
    np.testing.assert_array_equal(by_index.coef_, by_lists.coef_)
    bandwidths = GroupLassoMKLRegressor(None, n_components=[16, 24, 8],
                                        gamma=[0.01, 0.5, 10.0], alpha=1e-3,
                                        random_state=0).fit(X, y)
    assert bandwidths.group_norms_.shape == (3,)
    assert [m.gamma_ for m in bandwidths.feature_maps_] == [0.01, 0.5, 10.0]
    assert np.diff(bandwidths.feature_bounds_).tolist() == [16, 24, 8]
    maps = [RandomFourierFeatures(n_components=16, gamma=g, random_state=1).fit(X)
            for g in (0.1, 1.0)]
    prefit = GroupLassoMKLRegressor(maps=maps, alpha=1e-3).fit(X, y)
    assert prefit.feature_maps_[0] is maps[0]                # used as given, not refitted
    np.testing.assert_array_equal(prefit._features(X)[:, :16], maps[0].transform(X))
    grouped = GroupLassoMKLRegressor([[0], [3]], maps=[RandomFourierFeatures(n_components=8),
                                                      RandomFourierFeatures(n_components=8)],
                                     alpha=1e-3, random_state=0).fit(X, y)
    assert [m.n_features_in_ for m in grouped.feature_maps_] == [1, 1]


def test_float32_input_and_prediction_skip_zero_groups():
    X, y, groups, informative = make_planted_groups(400, random_state=2)
    path = GroupLassoMKLClassifier(groups, n_components=32, n_alphas=8,
                                   random_state=0).fit(X.astype(np.float32), y)
    sparse = path.alphas_[np.flatnonzero((path.group_norms_path_ > 0).sum(axis=1) >= 3)[0]]
    clf = GroupLassoMKLClassifier(groups, n_components=32, alpha=sparse,
                                  random_state=0).fit(X.astype(np.float32), y)
    assert 0 < clf.active_groups_.size < 10
    full = np.hstack([m.transform(X[:, c]) for m, c in zip(clf.feature_maps_,
                                                            clf.kernel_columns_)])
    np.testing.assert_allclose(clf.decision_function(X), full @ clf.coef_ + clf.intercept_,
                               rtol=1e-10, atol=1e-12)


def test_epsilon_logistic_regressor_fits():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((300, 4))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(300)
    reg = GroupLassoMKLRegressor([0, 1, 2, 3], n_components=32, loss="epsilon_logistic",
                                 epsilon=0.05, sharpness=20.0, random_state=0).fit(X, y)
    assert int(np.argmax(reg.group_norms_)) == 0
    assert reg.score(X, y) > 0.8


def test_convergence_warning_when_max_iter_is_too_small():
    X, y, groups, _ = make_planted_groups(300, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        GroupLassoMKLClassifier(groups, n_components=16, alpha=1e-3, max_iter=2,
                                random_state=0).fit(X, y)


@pytest.mark.parametrize("kwargs, message", [
    (dict(groups=[[0, 1], [1, 2]]), "overlap: column 1"),
    (dict(groups=[[0, 1], [7]]), "names column 7"),
    (dict(groups=[[0, 1], []]), "group 1 is empty"),
    (dict(groups=[0, 0, 2, 2]), "group 1 is empty"),
    (dict(groups=[0, 1]), "for 2 columns, but X has 4"),
    (dict(alpha=-1.0), "alpha must be"),
    (dict(alpha=float("nan")), "alpha must be"),
    (dict(loss="hinge"), "loss"),
    (dict(n_components=[8, 8]), "n_components has 2 entries"),
    (dict(maps=[RandomFourierFeatures(n_components=4)] * 2, groups=[0, 0, 0, 1]), None),
])
def test_bad_input_is_refused_with_a_clear_error(kwargs, message):
    X = np.random.default_rng(0).standard_normal((60, 4))
    y = (X[:, 0] > 0).astype(int)
    if message is None:      # a valid configuration in the table keeps the table honest
        GroupLassoMKLClassifier(alpha=0.01, **kwargs).fit(X, y)
        return
    with pytest.raises(ValueError, match=message):
        GroupLassoMKLClassifier(**{"alpha": 0.01, **kwargs}).fit(X, y)


def test_wrong_task_labels_and_loss_parameters():
    X = np.random.default_rng(0).standard_normal((60, 4))
    with pytest.raises(ValueError, match="Unknown label type"):
        GroupLassoMKLClassifier(alpha=0.01).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="numeric targets"):
        GroupLassoMKLRegressor(alpha=0.01).fit(X, np.array(["a", "b"] * 30))
    with pytest.raises(ValueError, match="sharpness"):
        GroupLassoMKLRegressor(alpha=0.01, loss="epsilon_logistic", sharpness=0).fit(
            X, X[:, 0])
    with pytest.raises(ValueError, match="epsilon"):
        GroupLassoMKLRegressor(alpha=0.01, epsilon=-0.1).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="loss"):
        GroupLassoMKLRegressor(alpha=0.01, loss="logistic").fit(X, X[:, 0])
    fitted = RandomFourierFeatures(n_components=4).fit(X[:, :3])
    with pytest.raises(ValueError, match="fitted on 3 columns but its group has 2"):
        GroupLassoMKLRegressor([0, 0, 1, 1], maps=[fitted, fitted], alpha=0.01).fit(
            X, X[:, 0])
    with pytest.raises(ValueError, match="one map per group"):
        GroupLassoMKLRegressor([0, 0, 1, 1], maps=[fitted], alpha=0.01).fit(X, X[:, 0])


class _NonFiniteLoss:
    """Products whose loss is NaN everywhere: no step size can decrease it."""

    def internal_intercept(self, W, intercept):
        return intercept

    def image_and_loss(self, W, intercept):
        return None, np.full(W.shape[1], np.nan)

    def loss_and_gradient(self, W, intercept, Z):
        return np.full(W.shape[1], np.nan), np.ones_like(W), np.zeros(W.shape[1])

    def intercept(self, W, intercept):
        return intercept


def test_fista_on_a_non_finite_loss_raises_instead_of_spinning():
    with pytest.raises(FloatingPointError, match="FISTA diverged.*not finite"):
        fista(_NonFiniteLoss(), np.array([0, 2]), 0.1, np.zeros((2, 1)), np.zeros(1), lipschitz=(1.0, 1.0),
              max_iter=5, tol=1e-6, scale=1.0)
