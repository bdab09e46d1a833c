"""LeastSquaresRegressorCV and LeastSquaresClassifierCV: every alpha from one pass, equal to
RidgeCV, to brute-force leave-one-out and to GridSearchCV over the plain learners."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from kernelmaps import (LeastSquaresClassifier, LeastSquaresClassifierCV, LeastSquaresRegressor,
                        LeastSquaresRegressorCV, RandomFourierFeatures)

ALPHAS = np.array([1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0])


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((90, 4))
    rff = RandomFourierFeatures(n_components=24, gamma=0.5, random_state=0).fit(X)
    Z = rff.transform(X)
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_normal(90) + 10.0
    labels = np.argmax(X[:, :3] + 0.6 * rng.standard_normal((90, 3)), axis=1)
    weights = rng.uniform(0.2, 3.0, 90)
    return X, rff, Z, y, labels, weights


def brute_force_loo(Z, y, alpha, fit_intercept, weights=None):
    """Each row's prediction by the fit of every other row."""
    predictions = np.empty(len(y))
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        w = None if weights is None else weights[keep]
        model = LeastSquaresRegressor(alpha=alpha, fit_intercept=fit_intercept, solver="normal")
        predictions[i] = model.fit(Z[keep], y[keep], sample_weight=w).predict(Z[i:i + 1])[0]
    return predictions


# ---------------------------------------------------------------- leave-one-out


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("two_targets", [False, True])
def test_leave_one_out_equals_ridgecv(problem, weighted, two_targets):
    X, _, Z, y, _, weights = problem
    w = weights if weighted else None
    if two_targets:
        y = np.column_stack([y, X[:, 2] * X[:, 3]])
    ours = LeastSquaresRegressorCV(alphas=ALPHAS, scoring="neg_mean_squared_error", store_cv_results=True).fit(
        Z, y, sample_weight=w)
    ridge = RidgeCV(alphas=ALPHAS, store_cv_results=True).fit(Z, y, sample_weight=w)
    assert ours.alpha_ == ridge.alpha_
    np.testing.assert_allclose(ours.coef_, ridge.coef_.T.reshape(ours.coef_.shape), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, np.ravel(ridge.intercept_), rtol=0, atol=1e-8)
    # RidgeCV keeps each row's weighted squared leave-one-out error
    target = y[:, None] if y.ndim == 1 else y[:, :, None]
    scale = 1.0 if w is None else (w[:, None] if y.ndim == 1 else w[:, None, None])
    squared = scale * (target - ours.loo_predictions_) ** 2
    np.testing.assert_allclose(squared, ridge.cv_results_, rtol=1e-8, atol=1e-12)
    if w is None:
        mean = ridge.cv_results_.reshape(len(y), -1, len(ALPHAS)).mean(axis=(0, 1))
        np.testing.assert_allclose(ours.cv_results_["mean_test_score"], -mean, rtol=1e-8)
        assert ours.best_score_ == pytest.approx(ridge.best_score_, rel=1e-8)
    if not two_targets:
        # R² ranks the penalties as the squared errors do
        assert LeastSquaresRegressorCV(alphas=ALPHAS).fit(Z, y, sample_weight=w).alpha_ == ridge.alpha_


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_leave_one_out_equals_refitting_without_each_row(problem, fit_intercept, weighted):
    _, _, Z, y, _, weights = problem
    Z, y, w = Z[:40], y[:40], (weights[:40] if weighted else None)
    alphas = np.array([0.05, 0.5, 5.0])
    ours = LeastSquaresRegressorCV(alphas=alphas, fit_intercept=fit_intercept, store_cv_results=True).fit(
        Z, y, sample_weight=w)
    for a, alpha in enumerate(alphas):
        expected = brute_force_loo(Z, y, alpha, fit_intercept, w)
        np.testing.assert_allclose(ours.loo_predictions_[:, a], expected, rtol=0, atol=1e-8)
    # the default R², of all rows' leave-one-out predictions, weighted by the rows' weights
    errors = (y[:, None] - ours.loo_predictions_) ** 2
    ww = np.ones(40) if w is None else w
    total = ww @ (y - np.average(y, weights=ww)) ** 2
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"], 1 - ww @ errors / total, rtol=1e-10)
    best = int(np.argmax(ours.cv_results_["mean_test_score"]))
    refit = LeastSquaresRegressor(alpha=alphas[best], fit_intercept=fit_intercept).fit(Z, y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_, refit.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, refit.intercept_, rtol=0, atol=1e-8)


def test_leave_one_out_of_a_classifier_scores_the_leave_one_out_decisions(problem):
    _, _, Z, _, labels, _ = problem
    Z, labels = Z[:45], labels[:45]
    ours = LeastSquaresClassifierCV(alphas=[0.1, 1.0], store_cv_results=True).fit(Z, labels)
    for a, alpha in enumerate([0.1, 1.0]):
        decisions = np.empty((45, 3))
        for i in range(45):
            keep = np.arange(45) != i
            model = LeastSquaresClassifier(alpha=alpha, solver="normal").fit(Z[keep], labels[keep])
            decisions[i] = model.decision_function(Z[i:i + 1])
        np.testing.assert_allclose(ours.loo_predictions_[:, :, a], decisions, rtol=0, atol=1e-8)
        accuracy = np.mean(ours.classes_[decisions.argmax(axis=1)] == labels)
        assert ours.cv_results_["mean_test_score"][a] == pytest.approx(accuracy)


# ----------------------------------------------------------------------- K-fold


@pytest.mark.parametrize("scoring", [None, "neg_mean_squared_error", "neg_mean_absolute_error"])
def test_k_fold_scores_equal_grid_search(problem, scoring):
    _, _, Z, y, _, _ = problem
    folds = KFold(4, shuffle=True, random_state=1)
    ours = LeastSquaresRegressorCV(alphas=ALPHAS, cv=folds, scoring=scoring).fit(Z, y)
    grid = GridSearchCV(LeastSquaresRegressor(solver="normal"), {"alpha": ALPHAS}, cv=folds, scoring=scoring).fit(Z, y)
    for k in range(4):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"],
                                   grid.cv_results_[f"split{k}_test_score"], rtol=1e-6, atol=1e-9)
    for column in ("mean_test_score", "std_test_score"):
        np.testing.assert_allclose(ours.cv_results_[column], grid.cv_results_[column], rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"], grid.cv_results_["rank_test_score"])
    assert ours.alpha_ == grid.best_params_["alpha"]
    np.testing.assert_allclose(ours.coef_, grid.best_estimator_.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, grid.best_estimator_.intercept_, rtol=0, atol=1e-8)
    frame = pd.DataFrame(ours.cv_results_)
    assert list(frame["param_alpha"]) == list(ALPHAS) and len(frame) == len(ALPHAS)


@pytest.mark.parametrize("scoring", [None, "balanced_accuracy"])
def test_k_fold_classifier_equals_grid_search(problem, scoring):
    _, _, Z, _, labels, _ = problem
    ours = LeastSquaresClassifierCV(alphas=ALPHAS, cv=5, scoring=scoring).fit(Z, labels)
    grid = GridSearchCV(LeastSquaresClassifier(solver="normal"), {"alpha": ALPHAS}, cv=StratifiedKFold(5),
                        scoring=scoring).fit(Z, labels)
    for k in range(5):
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"],
                                   grid.cv_results_[f"split{k}_test_score"], rtol=1e-6)
    assert ours.alpha_ == grid.best_params_["alpha"]
    np.testing.assert_allclose(ours.coef_, grid.best_estimator_.coef_, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.predict(Z), grid.predict(Z))


def test_k_fold_with_sample_weights_scores_the_weighted_errors(problem):
    _, _, Z, y, _, weights = problem
    folds = list(KFold(3, shuffle=True, random_state=2).split(Z))
    ours = LeastSquaresRegressorCV(alphas=ALPHAS, cv=folds, scoring="neg_mean_squared_error").fit(
        Z, y, sample_weight=weights)
    for k, (train, test) in enumerate(folds):
        expected = []
        for alpha in ALPHAS:
            model = LeastSquaresRegressor(alpha=alpha).fit(Z[train], y[train], sample_weight=weights[train])
            expected.append(-np.average((y[test] - model.predict(Z[test])) ** 2, weights=weights[test]))
        np.testing.assert_allclose(ours.cv_results_[f"split{k}_test_score"], expected, rtol=1e-6)


# ------------------------------------------------- features never held, and Dask


@pytest.mark.parametrize("cv", [None, 3])
def test_feature_map_equals_materialized_features(problem, cv):
    X, rff, Z, y, labels, weights = problem
    for cls, target in ((LeastSquaresRegressorCV, y), (LeastSquaresClassifierCV, labels)):
        mapped = cls(alphas=ALPHAS, cv=cv).fit(X, target, sample_weight=weights, feature_map=rff)
        held = cls(alphas=ALPHAS, cv=cv).fit(Z, target, sample_weight=weights)
        assert mapped.alpha_ == held.alpha_
        np.testing.assert_allclose(mapped.cv_results_["mean_test_score"], held.cv_results_["mean_test_score"],
                                   rtol=1e-10)
        np.testing.assert_allclose(mapped.coef_, held.coef_, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cv", [None, 3])
@pytest.mark.parametrize("with_map", [False, True])
def test_dask_input_equals_memory(problem, cv, with_map):
    da = pytest.importorskip("dask.array", reason="the 'dask' extra is absent")
    import dask

    X, rff, Z, y, labels, _ = problem
    source = X if with_map else Z
    extra = {"feature_map": rff} if with_map else {}
    with dask.config.set(scheduler="threads"):
        for cls, target in ((LeastSquaresRegressorCV, y), (LeastSquaresClassifierCV, labels)):
            lazy = cls(alphas=ALPHAS, cv=cv).fit(da.from_array(source, chunks=25), da.from_array(target, chunks=25),
                                                 **extra)
            held = cls(alphas=ALPHAS, cv=cv).fit(Z, target)
            assert lazy.alpha_ == held.alpha_
            np.testing.assert_allclose(lazy.cv_results_["mean_test_score"], held.cv_results_["mean_test_score"],
                                       rtol=1e-9)
            np.testing.assert_allclose(lazy.coef_, held.coef_, rtol=1e-9, atol=1e-12)


# -------------------------------------------------------------------- bad input


@pytest.mark.parametrize("alphas, message", [
    ([], "empty"), ([1.0, -1.0], "finite and > 0"), ([0.0, 1.0], "finite and > 0"),
    ([np.nan], "finite and > 0"), ([np.inf], "finite and > 0"), (1.0, "1-D"), ([[1.0, 2.0]], "1-D"),
    (["a"], "real numbers")])
def test_bad_alphas_are_refused(problem, alphas, message):
    _, _, Z, y, _, _ = problem
    with pytest.raises(ValueError, match=message):
        LeastSquaresRegressorCV(alphas=alphas).fit(Z, y)


def test_bad_parameters_and_input_are_refused_up_front(problem):
    _, _, Z, y, labels, _ = problem
    with pytest.raises(ValueError, match="cv=200 folds need 2 <= cv"):
        LeastSquaresRegressorCV(cv=200).fit(Z, y)
    with pytest.raises(ValueError, match="cv=1 folds"):
        LeastSquaresRegressorCV(cv=1).fit(Z, y)
    with pytest.raises(ValueError, match="not a valid scoring value|no_such_score"):
        LeastSquaresRegressorCV(scoring="no_such_score").fit(Z, y)
    with pytest.raises(ValueError, match="predict_proba"):
        LeastSquaresClassifierCV(scoring="neg_log_loss").fit(Z, labels)
    with pytest.raises(ValueError, match="store_cv_results=True .* needs cv=None"):
        LeastSquaresRegressorCV(cv=3, store_cv_results=True).fit(Z, y)
    with pytest.raises(ValueError, match="fit_intercept must be True or False"):
        LeastSquaresRegressorCV(fit_intercept="yes").fit(Z, y)
    with pytest.raises(ValueError, match="NaN"):
        LeastSquaresRegressorCV().fit(np.r_[Z[:-1], np.full((1, Z.shape[1]), np.nan)], y)
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        LeastSquaresClassifierCV().fit(Z, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LeastSquaresClassifierCV().fit(Z, np.zeros(len(Z)))
    with pytest.raises(ValueError, match="split 0 must split"):
        LeastSquaresRegressorCV(cv=[(np.arange(10), np.arange(5, 20))]).fit(Z, y)
    with pytest.raises(ValueError, match="sample_weight.*Dask"):
        da = pytest.importorskip("dask.array")
        LeastSquaresRegressorCV().fit(da.from_array(Z, chunks=30), y, sample_weight=np.ones(len(y)))


def test_plan_beyond_memory_is_refused_before_the_pass(problem):
    X, _, _, y, _, _ = problem
    wide = RandomFourierFeatures(n_components=400_000, random_state=0).fit(X[:2])
    with pytest.raises(MemoryError, match="n_features=400000"):
        LeastSquaresRegressorCV(cv=3).fit(X, y, feature_map=wide)


@pytest.mark.parametrize("cv", [None, 3])
def test_sparse_features_equal_dense(problem, cv):
    _, _, Z, y, labels, weights = problem
    sparse = Z * (np.abs(Z) > 0.2)
    for cls, target in ((LeastSquaresRegressorCV, y), (LeastSquaresClassifierCV, labels)):
        held = cls(alphas=ALPHAS, cv=cv).fit(sparse, target, sample_weight=weights)
        csr = cls(alphas=ALPHAS, cv=cv).fit(sp.csr_matrix(sparse), target, sample_weight=weights)
        assert csr.alpha_ == held.alpha_
        np.testing.assert_allclose(csr.cv_results_["mean_test_score"], held.cv_results_["mean_test_score"],
                                   rtol=1e-10)
        np.testing.assert_allclose(csr.coef_, held.coef_, rtol=1e-10, atol=1e-12)


def test_rows_of_weight_zero_are_left_out_and_stored_as_nan(problem):
    _, _, Z, y, _, weights = problem
    w = weights.copy()
    w[::7] = 0.0
    kept = w > 0
    ours = LeastSquaresRegressorCV(alphas=ALPHAS, store_cv_results=True).fit(Z, y, sample_weight=w)
    without = LeastSquaresRegressorCV(alphas=ALPHAS, store_cv_results=True).fit(Z[kept], y[kept],
                                                                               sample_weight=w[kept])
    assert ours.loo_predictions_.shape == (len(y), len(ALPHAS))
    assert np.isnan(ours.loo_predictions_[~kept]).all()
    np.testing.assert_allclose(ours.loo_predictions_[kept], without.loo_predictions_, rtol=1e-12)
    np.testing.assert_allclose(ours.coef_, without.coef_, rtol=1e-12)


# ---------------------------------------------------------------- evidence
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("multi_output", [False, True])
def test_evidence_scores_each_alpha_by_the_plain_learners_evidence(problem, fit_intercept, weighted, multi_output):
    _, _, Z, y, _, weights = problem
    w = weights if weighted else None
    target = np.column_stack([y, 0.1 * y ** 2]) if multi_output else y
    search = LeastSquaresRegressorCV(ALPHAS, scoring="evidence", fit_intercept=fit_intercept)
    search.fit(Z, target, sample_weight=w)
    evidence = [LeastSquaresRegressor(alpha, fit_intercept=fit_intercept, solver="normal").fit(
        Z, target, sample_weight=w).log_marginal_likelihood() for alpha in ALPHAS]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], evidence, rtol=1e-9)
    best = int(np.argmax(evidence))
    assert search.alpha_ == ALPHAS[best] and search.best_score_ == pytest.approx(evidence[best], rel=1e-9)
    chosen = LeastSquaresRegressor(ALPHAS[best], fit_intercept=fit_intercept, solver="normal").fit(
        Z, target, sample_weight=w)
    np.testing.assert_allclose(search.predict(Z), chosen.predict(Z), rtol=1e-9, atol=1e-9)


def test_evidence_is_refused_where_it_has_no_meaning(problem):
    _, _, Z, y, labels, _ = problem
    with pytest.raises(ValueError, match="classifier has none"):
        LeastSquaresClassifierCV(ALPHAS, scoring="evidence").fit(Z, labels)
    with pytest.raises(ValueError, match="set cv=None and store_cv_results=False"):
        LeastSquaresRegressorCV(ALPHAS, scoring="evidence", cv=3).fit(Z, y)
    with pytest.raises(ValueError, match="set cv=None and store_cv_results=False"):
        LeastSquaresRegressorCV(ALPHAS, scoring="evidence", store_cv_results=True).fit(Z, y)
