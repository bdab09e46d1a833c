"""The logistic Newton steps keep their preconditioner's factor where factoring costs many passes."""

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernelmaps import NystroemLogisticRegression
from kernelmaps._solvers import logistic_factors, logistic_passes

RIDGE_CHOLESKY = logistic_factors.ridge_cholesky


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    y = (X[:, 0] + 0.5 * np.sin(3 * X[:, 1]) + 0.3 * rng.standard_normal(400)) > 0
    return X, y


def _fit(monkeypatch, ratio=None, **params):
    factors = []

    def counting(T, weights, m, lam):
        factors.append(lam)
        return RIDGE_CHOLESKY(T, weights, m, lam)

    monkeypatch.setattr(logistic_factors, "ridge_cholesky", counting)
    if ratio is not None:
        monkeypatch.setattr(logistic_factors, "FACTOR_REUSE_RATIO", ratio)
    X, y = _data()
    model = NystroemLogisticRegression(200, alpha=1e-3, gamma=0.5, random_state=0, **params).fit(X, y)
    return model, factors, X


def test_the_rule_keeps_the_factor_of_few_columns_and_not_of_many_classes():
    # falkon-sklearn's binary fit (50 000 rows, 2000 centres) and letter's 26 classes on 12 000 rows
    assert logistic_factors.reuses_factors(50_000, 2000, 1)
    assert not logistic_factors.reuses_factors(12_000, 2000, 26)
    assert not logistic_factors.reuses_factors(10**6, 1024, 1)


def test_steps_at_one_ridge_share_a_factor_and_reach_the_same_optimum(monkeypatch):
    assert logistic_factors.reuses_factors(400, 200, 1)
    # float64 Hessian products: the float32 ones move the end point by more than the factor does
    # a tolerance of 1e-6: at the default 1e-4 two paths to one optimum may stop 1e-3 apart in probability
    kept, kept_factors, X = _fit(monkeypatch, hessian_dtype="float64", tol=1e-6)
    fresh, fresh_factors, _ = _fit(monkeypatch, ratio=np.inf, hessian_dtype="float64", tol=1e-6)
    assert fresh_factors == fresh.penalties_
    # a fresh factor where the ridge changes or the step before ran out of CG iterations
    steps = list(zip(kept.penalties_, kept.cg_iterations_))
    expected = [steps[0][0]] + [lam for (before, iterations), (lam, _) in zip(steps, steps[1:])
                                if lam != before or iterations >= kept.cg_max_iter]
    assert kept_factors == expected and len(expected) < kept.n_iter_
    # the factor preconditions only: both stop at the target's tolerance, at one objective (to tol: a fit also
    # stops where a step predicts a gain of at most tol of the objective, and the two take different steps)
    assert kept.gradient_norms_[-1] <= kept.tol and fresh.gradient_norms_[-1] <= fresh.tol
    np.testing.assert_allclose(kept.objectives_[-1], fresh.objectives_[-1], rtol=kept.tol)
    np.testing.assert_allclose(kept.predict_proba(X), fresh.predict_proba(X), atol=1e-4)


def test_float32_hessian_products_that_stall_give_way_to_float64_at_the_same_optimum(monkeypatch):
    """At lam = 2.5e-6 the float32 products leave the gradient norm at 7e-4 for a step: the fit moves
    to float64 products and stops at the tolerance, at the float64 fit's objective."""
    switches = []
    original = logistic_passes.LogisticPasses.full_precision
    monkeypatch.setattr(logistic_passes.LogisticPasses, "full_precision",
                        lambda self: switches.append(original(self)) or switches[-1])
    single, _, X = _fit(monkeypatch, tol=1e-6)
    assert True in switches
    switches.clear()
    double, _, _ = _fit(monkeypatch, hessian_dtype="float64", tol=1e-6)
    assert True not in switches
    assert single.gradient_norms_[-1] <= single.tol and double.gradient_norms_[-1] <= double.tol
    np.testing.assert_allclose(single.objectives_[-1], double.objectives_[-1], rtol=single.tol)
    np.testing.assert_allclose(single.predict_proba(X), double.predict_proba(X), atol=1e-4)


def test_a_step_whose_cg_ran_out_gets_a_fresh_factor(monkeypatch):
    with pytest.warns(ConvergenceWarning, match="max_iter=6"):
        model, factors, _ = _fit(monkeypatch, cg_max_iter=1, max_iter=6)
    assert all(iterations == 1 for iterations in model.cg_iterations_)
    assert len(factors) == model.n_iter_



def test_shared_weights_are_the_floored_geometric_mean_over_columns():
    weights = np.array([[0.25, 0.01, 0.04], [0.0, 0.2, 0.2], [1e-9, 1e-9, 1e-9]])
    shared = logistic_factors.shared_weights(weights, 1e-6)
    # 0.25 * 0.01 * 0.04 = 1e-4; a zero and the tiny weights are raised to the floor
    np.testing.assert_allclose(shared, [1e-4 ** (1 / 3), (1e-6 * 0.2 * 0.2) ** (1 / 3), 1e-6], rtol=1e-12)


def test_the_shared_factor_takes_the_geometric_mean_of_the_centres_weights(monkeypatch):
    """Each factor of a three-class fit is built from the geometric mean over the classes of the
    centres' weights ``s (1 - s)`` at their logits, floored at the ridge (``K_mm``'s diagonal is 1)."""
    logits_seen, weights_seen = [], []

    def sigmoid(t):
        logits_seen.append(np.array(t))
        return logistic_passes.stable_sigmoid(t)

    def recording(T, weights, m, lam):
        weights_seen.append((np.array(weights), lam))
        return RIDGE_CHOLESKY(T, weights, m, lam)

    monkeypatch.setattr(logistic_factors, "stable_sigmoid", sigmoid)
    monkeypatch.setattr(logistic_factors, "ridge_cholesky", recording)
    monkeypatch.setattr(logistic_factors, "FACTOR_REUSE_RATIO", np.inf)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 2))
    y = np.digitize(X[:, 0] + 0.3 * rng.standard_normal(300), [-0.5, 0.5])
    model = NystroemLogisticRegression(60, alpha=1e-3, gamma=0.5, random_state=0, hessian_dtype="float64").fit(X, y)
    assert len(weights_seen) == len(logits_seen) == model.n_iter_ >= 3
    differs = False
    for logits, (weights, lam) in zip(logits_seen, weights_seen):
        s = 1.0 / (1.0 + np.exp(-logits))
        np.testing.assert_allclose(weights, np.exp(np.log(np.maximum(s * (1.0 - s), lam)).mean(axis=1)), rtol=1e-8)
        differs |= not np.allclose(weights, (s * (1.0 - s)).mean(axis=1), rtol=0.1)
    assert differs        # the arithmetic mean would have given other factors


def test_the_factor_is_computed_in_float32_only_well_above_its_rounding():
    # sqrt(2000) eps32 0.25 = 1.3e-6: ten times that is the smallest ridge
    quarter, ones = np.full(2000, 0.25), np.ones(2000)
    assert logistic_factors.factors_in_single(1e-3, quarter, ones)
    assert logistic_factors.factors_in_single(1.4e-5, quarter, ones)
    assert not logistic_factors.factors_in_single(1.2e-5, quarter, ones)
    assert logistic_factors.factors_in_single(1e-5, np.full(2000, 0.02), ones)
    order = logistic_factors.BLOCK_ORDER + 1
    assert not logistic_factors.factors_in_single(1.0, np.full(order, 0.25), np.ones(order))


def test_a_float32_factor_preconditions_as_the_float64_one(monkeypatch):
    """Upcast, the float32 factor is an exact factor of a nearby matrix: CG stays exact, takes about as many
    iterations, and the fit reaches the float64 factor's optimum."""
    dtypes = []

    def recording(T, weights, m, lam):
        dtypes.append(T.dtype)
        return RIDGE_CHOLESKY(T, weights, m, lam)

    monkeypatch.setattr(logistic_factors, "ridge_cholesky", recording)
    X, y = _data()
    params = dict(alpha=1e-2, gamma=0.5, random_state=0, hessian_dtype="float64", tol=1e-6)
    single = NystroemLogisticRegression(200, **params).fit(X, y)
    assert set(dtypes) == {np.dtype(np.float32)}
    dtypes.clear()
    monkeypatch.setattr(logistic_factors, "SINGLE_FACTOR_MARGIN", np.inf)
    double = NystroemLogisticRegression(200, **params).fit(X, y)
    assert set(dtypes) == {np.dtype(np.float64)}
    assert abs(sum(single.cg_iterations_) - sum(double.cg_iterations_)) <= 0.1 * sum(double.cg_iterations_)
    np.testing.assert_allclose(single.objectives_[-1], double.objectives_[-1], rtol=1e-6)
    np.testing.assert_allclose(single.predict_proba(X), double.predict_proba(X), atol=1e-4)
