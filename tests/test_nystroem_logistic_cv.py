"""NystroemLogisticRegressionCV: every fold a column of the same Newton steps, every alpha a point
of one ridge path per gamma; scores equal GridSearchCV's over the plain machine on the same centres."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from kernelmaps import NystroemLogisticRegression, NystroemLogisticRegressionCV, exact_kernel
from kernelmaps._solvers.kernel_operator import KernelOperator
from kernelmaps._solvers.logistic_newton import nystroem_logistic_newton
from kernelmaps._solvers.logistic_passes import LogisticPasses

ALPHAS = (0.3, 3.0, 30.0)
GAMMAS = (0.05, 0.4)
#: Newton steps run to this tolerance on both sides, so that scores agree to 1e-6
TIGHT = {"tol": 1e-10, "max_iter": 60, "cg_max_iter": 200}


def _problem(n=240, classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    score = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * rng.standard_normal(n)
    edges = np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1])
    return X, np.digitize(score, edges)


def _grid_search(X, y, centres, scoring, folds):
    plain = NystroemLogisticRegression(len(centres), landmarks=centres, **TIGHT)
    return GridSearchCV(plain, {"alpha": list(ALPHAS), "gamma": list(GAMMAS)}, cv=folds, scoring=scoring).fit(X, y)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("scoring", ["neg_log_loss", "accuracy"])
def test_scores_and_choice_equal_grid_search_over_the_plain_machine(classes, scoring):
    X, y = _problem(classes=classes)
    centres = X[::8].copy()
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = NystroemLogisticRegressionCV(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres, cv=folds,
                                        scoring=scoring, **TIGHT).fit(X, y)
    theirs = _grid_search(X, y, centres, scoring, folds)
    for k in range(3):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"],
                                   theirs.cv_results_[f"split{k}_test_score"], rtol=1e-6, atol=1e-9)
    assert (ours.alpha_, ours.gamma_) == (theirs.best_params_["alpha"], theirs.best_params_["gamma"])
    assert ours.cv_results_["params"] == list(theirs.cv_results_["params"])
    assert ours.converged_.all()
    np.testing.assert_allclose(ours.predict_proba(X), theirs.best_estimator_.predict_proba(X), atol=1e-6)


def test_each_target_of_one_path_equals_a_fit_at_that_ridge():
    X, y = _problem()
    centres = X[::10].copy()
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    K = KernelOperator(X, centres, kernel="gaussian", gamma=0.3)
    K_mm = exact_kernel(centres, None, kernel="gaussian", gamma=0.3)
    solutions = {}
    lams = [1e-1, 1e-2, 1e-4]
    nystroem_logistic_newton(LogisticPasses(K, Y), K_mm, lams, tol=1e-10, max_iter=60, cg_max_iter=200,
                             on_target=lambda i, a, b, converged: solutions.setdefault(i, (a.copy(), b.copy(),
                                                                                           converged)))
    assert sorted(solutions) == [0, 1, 2] and all(converged for _, _, converged in solutions.values())
    for i, lam in enumerate(lams):
        alone = nystroem_logistic_newton(LogisticPasses(K, Y), K_mm, lam, tol=1e-10, max_iter=60, cg_max_iter=200)
        # the function on the centres, K_mm a: a is fixed only up to K_mm's near null space
        np.testing.assert_allclose(K_mm @ solutions[i][0], K_mm @ alone.coef, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(solutions[i][1], alone.intercept, rtol=1e-6, atol=1e-8)


def test_zero_row_weights_leave_rows_out_of_a_column():
    X, y = _problem()
    centres = X[::10].copy()
    Y = np.where(y == 1, 1.0, -1.0)[:, None]
    kept = np.arange(len(X)) % 4 != 0
    K_mm = exact_kernel(centres, None, kernel="gaussian", gamma=0.3)
    weighted = nystroem_logistic_newton(
        LogisticPasses(KernelOperator(X, centres, kernel="gaussian", gamma=0.3), Y,
                       row_weights=lambda lo, hi: kept[lo:hi, None].astype(float)), K_mm, 1e-3 * kept.mean(),
        tol=1e-10, max_iter=60, cg_max_iter=200)
    subset = nystroem_logistic_newton(
        LogisticPasses(KernelOperator(X[kept], centres, kernel="gaussian", gamma=0.3), Y[kept]), K_mm, 1e-3,
        tol=1e-10, max_iter=60, cg_max_iter=200)
    np.testing.assert_allclose(K_mm @ weighted.coef, K_mm @ subset.coef, rtol=1e-6, atol=1e-8)


def test_validation_fraction_scores_one_held_out_split():
    X, y = _problem(n=300)
    model = NystroemLogisticRegressionCV(20, alphas=ALPHAS, gammas=GAMMAS, validation_fraction=0.25,
                                         random_state=0).fit(X, y)
    assert "split0_test_score" in model.cv_results_ and "split1_test_score" not in model.cv_results_
    assert model.best_estimator_.alpha == model.alpha_ and model.best_estimator_.gamma == model.gamma_
    np.testing.assert_array_equal(model.best_estimator_.components_, model.components_)


def test_refit_false_fits_no_model():
    X, y = _problem()
    model = NystroemLogisticRegressionCV(20, alphas=ALPHAS, gammas=GAMMAS, cv=3, refit=False).fit(X, y)
    assert model.cv_results_["mean_test_score"].shape == (len(ALPHAS) * len(GAMMAS),)
    with pytest.raises(NotFittedError, match="refit=False"):
        model.predict(X)


def test_points_stopped_by_max_iter_are_said():
    X, y = _problem()
    with pytest.warns(ConvergenceWarning, match="stopped at max_iter=1"):
        model = NystroemLogisticRegressionCV(20, alphas=(1e-3,), gammas=GAMMAS, cv=3, max_iter=1).fit(X, y)
    assert not model.converged_.any()


@pytest.mark.parametrize("params, message", [
    ({"scoring": "evidence"}, "logistic classifier has none"),
    ({"scoring": "no_such_scorer"}, "no_such_scorer"),
    ({"alphas": (1.0, -1.0)}, "alphas"),
    ({"gammas": (0.0,)}, "gammas"),
    ({"tol": -1.0}, "tol"),
    ({"max_iter": 0}, "max_iter"),
    ({"cv": 3, "validation_fraction": 0.2}, "not both"),
    ({"hessian_dtype": "float16"}, "hessian_dtype"),
])
def test_bad_parameters_are_refused_before_any_work(params, message):
    X, y = _problem()
    with pytest.raises(ValueError, match=message):
        NystroemLogisticRegressionCV(10, **{"alphas": ALPHAS, "gammas": GAMMAS, **params}).fit(X, y)


def test_dask_rows_are_refused_by_name():
    da = pytest.importorskip("dask.array")
    X, y = _problem()
    with pytest.raises(TypeError, match="rows in memory"):
        NystroemLogisticRegressionCV(10).fit(da.from_array(X, chunks=60), y)


def test_the_search_takes_float32_hessian_products_and_keeps_their_blocks_first(monkeypatch):
    """float64 rows: the Hessian products run on float32 blocks (kept beside the float64 ones), and the
    scores are those of the float64 products' search; the refit gets the same precision."""
    X, y = _problem(classes=3)
    hessians = []
    original = LogisticPasses.__init__

    def recording(self, K, Y, row_weights=None, hessian=None):
        hessians.append(None if hessian is None else (hessian.X.dtype, hessian.kept is not None))
        original(self, K, Y, row_weights, hessian)

    monkeypatch.setattr(LogisticPasses, "__init__", recording)
    params = dict(alphas=ALPHAS, gammas=GAMMAS, cv=3, random_state=0, **TIGHT)
    single = NystroemLogisticRegressionCV(30, **params).fit(X, y)
    assert hessians[:len(GAMMAS)] == [(np.float32, True)] * len(GAMMAS)
    assert single.kernel_cache_ == X.shape[0] * 30 * 12
    assert single.best_estimator_.hessian_dtype == "auto"
    hessians.clear()
    double = NystroemLogisticRegressionCV(30, hessian_dtype="float64", **params).fit(X, y)
    assert hessians[:len(GAMMAS)] == [None] * len(GAMMAS)
    assert double.kernel_cache_ == X.shape[0] * 30 * 8
    assert single.converged_.all() and double.converged_.all()
    for k in range(3):
        np.testing.assert_allclose(single.cv_results_[f"split{k}_test_score"],
                                   double.cv_results_[f"split{k}_test_score"], rtol=1e-6)
    # a budget for the float32 blocks alone keeps them alone
    alone = NystroemLogisticRegressionCV(30, kernel_cache=X.shape[0] * 30 * 4, **params).fit(X, y)
    assert alone.kernel_cache_ == X.shape[0] * 30 * 4
    # float32 rows are float32 throughout: no second operator
    hessians.clear()
    NystroemLogisticRegressionCV(30, **params).fit(X.astype(np.float32), y)
    assert hessians[:len(GAMMAS)] == [None] * len(GAMMAS)
