"""Sample and class weights of the least-squares, kernel ridge and Pegasos learners.

The references are independent of the code under test: the unweighted fit on the
rows repeated as many times as their integer weight (a weight of 0 drops the row),
scikit-learn's ``Ridge`` and ``KernelRidge`` given the same weights, and
``sklearn.utils.class_weight.compute_sample_weight`` for the class weights.
"""

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge
from sklearn.linear_model import Ridge
from sklearn.utils.class_weight import compute_class_weight, compute_sample_weight

from kernelmaps import (ECOCClassifier, KernelRidge, KernelRidgeClassifier, LeastSquaresClassifier,
                        LeastSquaresRegressor, PegasosSVC)
from registry import REGISTRY
from registry import make as make_learner

#: Closed forms (normal equations, Cholesky) against their references.
RTOL = 1e-8
#: Conjugate gradient run to tol=1e-11, against the closed form.
CG_RTOL = 1e-6


def dense_problem(n=80, d=6, n_classes=3, seed=0):
    """Rows, real targets (two columns), labels with every class among the rows of
    positive weight, and integer weights 0..3 with some zeros."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = np.column_stack([X @ rng.standard_normal(d) + np.sin(3 * X[:, 0]), X[:, 1] * X[:, 2]]) + 0.5
    labels = np.argmax(X[:, :n_classes] + 0.5 * rng.standard_normal((n, n_classes)), axis=1)
    w = rng.integers(0, 4, n)
    w[:n_classes * 2] = 1  # keep a row of each class (and some others) weighted
    labels[:n_classes] = np.arange(n_classes)
    return X, Y, labels, w


def repeated(X, y, w):
    """The rows of ``X`` and ``y`` each repeated ``w`` times (0: dropped)."""
    rows = np.repeat(np.arange(len(w)), w.astype(int))
    return X[rows], y[rows]


def sparse_problem(n, d, seed, density=0.1):
    rng = np.random.default_rng(seed)
    Z = sp.random(n, d, density=density, format="csr", random_state=np.random.RandomState(seed))
    y = Z @ rng.standard_normal(d) + 1.0
    w = rng.integers(0, 4, n).astype(float)
    w[0] = 1.0
    return Z, y, w


def assert_rel_close(a, b, rtol):
    """``a == b`` to ``rtol`` relative to the larger magnitude of ``b``."""
    a, b = np.asarray(a), np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, float(np.abs(b).max())))


# ------------------------------------------------------------ many classes
def test_many_classes_fit_without_warnings():
    """26 classes (as the letter set has) are no sign of a regression target."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2600, 8))
    y = np.arange(2600) % 26
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LeastSquaresClassifier().fit(X, y)
        ECOCClassifier(code_size=16, random_state=0).fit(X, y)
        # a block of rows that holds every class once is no regression target either
        clf = LeastSquaresClassifier().partial_fit(X[:30], y[:30], classes=np.arange(26))
        clf.partial_fit(X[30:60], y[30:60])
    assert len(clf.classes_) == 26


def test_a_regression_target_still_warns_or_fails():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 3))
    with pytest.raises(ValueError, match="Unknown label type"):
        LeastSquaresClassifier().fit(X, rng.standard_normal(100))
    with pytest.raises(ValueError, match="Unknown label type"):
        LeastSquaresClassifier().partial_fit(X, np.arange(100.0), classes=[0.5, 1.5])


# ---------------------------------------------------------- least squares
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_least_squares_regressor_weights_are_repeated_rows(fit_intercept, fmt):
    X, Y, _, w = dense_problem()
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    weighted = LeastSquaresRegressor(0.7, fit_intercept=fit_intercept, solver="normal").fit(Xf, Y, w)
    X_rep, Y_rep = repeated(Xf, Y, w)
    reference = LeastSquaresRegressor(0.7, fit_intercept=fit_intercept, solver="normal").fit(X_rep, Y_rep)
    assert_rel_close(weighted.coef_, reference.coef_, RTOL)
    assert_rel_close(weighted.intercept_, reference.intercept_, RTOL)
    # zero weights are dropped rows: the accumulator saw only the others
    assert weighted.normal_equations_.n_samples == np.count_nonzero(w)
    assert weighted.normal_equations_.weight_sum == w.sum()


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_least_squares_regressor_matches_sklearn_ridge(fit_intercept):
    X, Y, _, _ = dense_problem(seed=3)
    w = np.random.default_rng(3).uniform(0.0, 3.0, len(X))
    for y in (Y[:, 0], Y):
        ours = LeastSquaresRegressor(2.5, fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
        ridge = Ridge(alpha=2.5, fit_intercept=fit_intercept, solver="cholesky").fit(X, y, sample_weight=w)
        assert_rel_close(ours.coef_, ridge.coef_.T.reshape(ours.coef_.shape), RTOL)
        assert_rel_close(ours.intercept_, np.broadcast_to(ridge.intercept_, ours.intercept_.shape), RTOL)
        assert_rel_close(ours.predict(X), ridge.predict(X), RTOL)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_least_squares_classifier_is_weighted_one_vs_rest_ridge(n_classes):
    X, _, labels, _ = dense_problem(n_classes=n_classes, seed=4)
    w = np.random.default_rng(4).uniform(0.1, 3.0, len(X))
    ours = LeastSquaresClassifier(1.5).fit(X, labels, sample_weight=w)
    T = np.where(labels[:, None] == np.arange(n_classes), 1.0, -1.0)
    T = T[:, 1:] if n_classes == 2 else T
    ridge = Ridge(alpha=1.5, solver="cholesky").fit(X, T, sample_weight=w)
    assert_rel_close(ours.coef_, ridge.coef_.T.reshape(ours.coef_.shape), RTOL)
    assert_rel_close(ours.intercept_, np.reshape(ridge.intercept_, ours.intercept_.shape), RTOL)


@pytest.mark.parametrize("cls", [LeastSquaresClassifier, ECOCClassifier])
def test_classifier_weights_are_repeated_rows_and_zero_weights_dropped_rows(cls):
    X, _, labels, w = dense_problem(n_classes=4, seed=5)
    labels[w == 0] = 7  # a class only among the rows of zero weight: as good as absent
    params = {"random_state": 0, "code_size": 12} if cls is ECOCClassifier else {}
    weighted = cls(alpha=0.5, **params).fit(X, labels, sample_weight=w)
    reference = cls(alpha=0.5, **params).fit(*repeated(X, labels, w))
    np.testing.assert_array_equal(weighted.classes_, np.arange(4))
    np.testing.assert_array_equal(weighted.classes_, reference.classes_)
    assert_rel_close(weighted.coef_, reference.coef_, RTOL)
    assert_rel_close(weighted.decision_function(X), reference.decision_function(X), RTOL)


def test_partial_fit_and_merge_accumulate_the_weights():
    X, Y, labels, w = dense_problem(seed=6)
    full = LeastSquaresClassifier(0.3).fit(X, labels, sample_weight=w)
    parts = LeastSquaresClassifier(0.3)
    for rows in (slice(0, 25), slice(25, 50), slice(50, None)):
        parts.partial_fit(X[rows], labels[rows], classes=np.unique(labels), sample_weight=w[rows])
    assert_rel_close(parts.coef_, full.coef_, RTOL)
    left = LeastSquaresRegressor(0.3).fit(X[:40], Y[:40], sample_weight=w[:40])
    right = LeastSquaresRegressor(0.3).partial_fit(X[40:], Y[40:], sample_weight=w[40:])
    merged = left.merge(right)
    reference = LeastSquaresRegressor(0.3).fit(*repeated(X, Y, w))
    assert_rel_close(merged.coef_, reference.coef_, RTOL)
    assert_rel_close(merged.intercept_, reference.intercept_, RTOL)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("shape", [(300, 40), (60, 400)])  # primal CG, then the dual (d > n)
def test_sparse_cg_with_weights_agrees_with_normal_equations_and_repeated_rows(shape, fit_intercept):
    Z, y, w = sparse_problem(*shape, seed=7)
    params = dict(alpha=0.5, fit_intercept=fit_intercept, tol=1e-11, max_iter=5000)
    cg = LeastSquaresRegressor(solver="cg", **params).fit(Z, y, sample_weight=w)
    normal = LeastSquaresRegressor(solver="normal", **params).fit(Z, y, sample_weight=w)
    cg_repeated = LeastSquaresRegressor(solver="cg", **params).fit(*repeated(Z, y, w))
    assert cg.solver_ == "cg" and normal.solver_ == "normal"
    for other in (normal, cg_repeated):
        assert_rel_close(cg.coef_, other.coef_, CG_RTOL)
        assert_rel_close(cg.intercept_, other.intercept_, CG_RTOL)


def test_sparse_cg_classifier_with_weights_matches_dense_normal_equations():
    Z, _, w = sparse_problem(200, 5000, seed=8, density=0.002)
    labels = np.arange(200) % 3
    cg = LeastSquaresClassifier(1.0, tol=1e-11, max_iter=5000).fit(Z, labels, sample_weight=w)
    assert cg.solver_ == "cg"  # 'auto': sparse and wider than 4096 columns
    reference = Ridge(alpha=1.0, solver="cholesky").fit(
        Z.toarray(), np.where(labels[:, None] == np.arange(3), 1.0, -1.0), sample_weight=w)
    assert_rel_close(cg.decision_function(Z), reference.predict(Z.toarray()), CG_RTOL)


# ------------------------------------------------------------- kernel ridge
def test_kernel_ridge_matches_sklearn_with_weights():
    X, Y, _, _ = dense_problem(seed=9)
    w = np.random.default_rng(9).uniform(0.0, 2.0, len(X))
    for kernel, sk_kernel in (("gaussian", "rbf"), ("laplacian", "laplacian")):
        for y in (Y[:, 0], Y):
            ours = KernelRidge(0.3, kernel=kernel, gamma=0.2).fit(X, y, sample_weight=w)
            sk = SklearnKernelRidge(alpha=0.3, kernel=sk_kernel, gamma=0.2).fit(X, y, sample_weight=w)
            assert_rel_close(ours.predict(X[:20] + 0.1), sk.predict(X[:20] + 0.1), RTOL)


@pytest.mark.parametrize("gamma", [0.3, "scale"])
def test_kernel_ridge_weights_are_repeated_rows_and_zeros_dropped(gamma):
    X, Y, labels, w = dense_problem(seed=10)
    Xt = X[:15] + 0.05
    weighted = KernelRidge(0.5, gamma=0.3).fit(X, Y, sample_weight=w)
    reference = KernelRidge(0.5, gamma=0.3).fit(*repeated(X, Y, w))
    assert_rel_close(weighted.predict(Xt), reference.predict(Xt), RTOL)
    # zero weights: the rows are gone, also from the bandwidth heuristic
    keep = w > 0
    weighted = KernelRidge(0.5, gamma=gamma).fit(X, Y, sample_weight=keep.astype(float))
    dropped = KernelRidge(0.5, gamma=gamma).fit(X[keep], Y[keep])
    assert weighted.gamma_ == dropped.gamma_
    assert weighted.X_fit_.shape[0] == keep.sum()
    assert_rel_close(weighted.predict(Xt), dropped.predict(Xt), RTOL)
    clf = KernelRidgeClassifier(0.5, gamma=0.3).fit(X, labels, sample_weight=w)
    clf_reference = KernelRidgeClassifier(0.5, gamma=0.3).fit(*repeated(X, labels, w))
    assert_rel_close(clf.decision_function(Xt), clf_reference.decision_function(Xt), RTOL)


# ------------------------------------------------------------ class weights
CLASSIFIERS = {
    "least_squares": lambda **kw: LeastSquaresClassifier(0.5, **kw),
    "ecoc": lambda **kw: ECOCClassifier(12, 0.5, random_state=0, **kw),
    "kernel_ridge": lambda **kw: KernelRidgeClassifier(0.5, gamma=0.3, **kw),
    "pegasos": lambda **kw: PegasosSVC(1e-2, batch_size=16, max_iter=300, random_state=0, **kw),
}


def scores(clf, X):
    return clf.decision_function(X)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_balanced_class_weight_is_compute_sample_weight(name):
    X, _, labels, _ = dense_problem(seed=11)
    labels[:50] = 0  # unbalanced
    make = CLASSIFIERS[name]
    balanced = make(class_weight="balanced").fit(X, labels)
    explicit = make().fit(X, labels, sample_weight=compute_sample_weight("balanced", labels))
    assert_rel_close(scores(balanced, X), scores(explicit, X), RTOL)
    # not the unweighted fit
    assert not np.allclose(scores(balanced, X), scores(make().fit(X, labels), X), rtol=1e-3)
    # a dict multiplies the sample weights
    w = np.random.default_rng(11).uniform(0.5, 2.0, len(X))
    as_dict = make(class_weight={0: 0.5, 2: 3.0}).fit(X, labels, sample_weight=w)
    by_hand = make().fit(X, labels, sample_weight=w * np.array([0.5, 1.0, 3.0])[labels])
    assert_rel_close(scores(as_dict, X), scores(by_hand, X), RTOL)


def test_balanced_with_sample_weights_counts_the_weighted_rows():
    X, _, labels, w = dense_problem(seed=12)
    ours = LeastSquaresClassifier(0.5, class_weight="balanced").fit(X, labels, sample_weight=w)
    reference = LeastSquaresClassifier(0.5, class_weight="balanced").fit(*repeated(X, labels, w))
    assert_rel_close(ours.coef_, reference.coef_, RTOL)
    keep = w > 0
    per_class = compute_class_weight("balanced", classes=np.arange(3), y=labels[keep], sample_weight=w[keep])
    by_hand = LeastSquaresClassifier(0.5).fit(X, labels, sample_weight=w * per_class[labels])
    assert_rel_close(ours.coef_, by_hand.coef_, RTOL)


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_class_weight_errors(name):
    X, _, labels, _ = dense_problem(seed=13)
    make = CLASSIFIERS[name]
    with pytest.raises(ValueError, match=r"class_weight names classes \[5, 9\]"):
        make(class_weight={0: 1.0, 5: 2.0, 9: 1.0}).fit(X, labels)
    with pytest.raises(ValueError, match="class_weight must be"):
        make(class_weight="balance").fit(X, labels)
    with pytest.raises(TypeError, match="class_weight must be"):
        make(class_weight=[1.0, 2.0, 3.0]).fit(X, labels)
    with pytest.raises(ValueError, match="non-negative"):
        make(class_weight={0: -1.0}).fit(X, labels)


def test_partial_fit_refuses_balanced_but_takes_a_dict():
    X, _, labels, _ = dense_problem(seed=14)
    with pytest.raises(ValueError, match="class_weight='balanced'.*partial_fit"):
        LeastSquaresClassifier(class_weight="balanced").partial_fit(X, labels, classes=[0, 1, 2])
    weights = {0: 2.0, 1: 0.5}
    parts = LeastSquaresClassifier(class_weight=weights)
    parts.partial_fit(X[:40], labels[:40], classes=[0, 1, 2]).partial_fit(X[40:], labels[40:])
    assert_rel_close(parts.coef_, LeastSquaresClassifier(class_weight=weights).fit(X, labels).coef_, RTOL)


# ------------------------------------------------------------------ Pegasos
def pegasos(**kw):
    return PegasosSVC(alpha=1e-2, batch_size=16, max_iter=400, random_state=3, **kw)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_pegasos_unit_weights_and_dropped_rows_are_exact(fmt):
    """The same seed draws the same minibatches: weights of 1 (or all equal) change
    nothing, and rows of weight 0 are as if never given."""
    X, _, labels, w = dense_problem(seed=15)
    Xf = sp.csr_matrix(X) if fmt == "csr" else X
    plain = pegasos().fit(Xf, labels)
    for constant in (1.0, 3.0):
        same = pegasos().fit(Xf, labels, sample_weight=np.full(len(X), constant))
        np.testing.assert_array_equal(same.coef_, plain.coef_)
        np.testing.assert_array_equal(same.intercept_, plain.intercept_)
    keep = w > 0
    weighted = pegasos().fit(Xf, labels, sample_weight=keep * 2.0)
    dropped = pegasos().fit(Xf[np.flatnonzero(keep)], labels[keep])
    np.testing.assert_allclose(weighted.coef_, dropped.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weighted.intercept_, dropped.intercept_, rtol=1e-12, atol=1e-14)


def test_pegasos_weighted_dense_and_sparse_agree():
    X, _, labels, w = dense_problem(seed=16)
    dense = pegasos().fit(X, labels, sample_weight=w)
    sparse = pegasos().fit(sp.csr_matrix(X), labels, sample_weight=w)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)


def hinge_objective(clf, X, y, w, lam):
    """``lam/2 (||w||^2 + b^2) + sum_i w_i hinge_i / sum_i w_i`` of a binary PegasosSVC."""
    margins = np.where(y == clf.classes_[1], 1.0, -1.0) * clf.decision_function(X)
    coef, b = clf.coef_.ravel(), clf.intercept_[0]
    return lam / 2 * (coef @ coef + b * b) + w @ np.maximum(0.0, 1.0 - margins) / w.sum()


def test_pegasos_integer_weights_reach_the_repeated_rows_optimum():
    """A stochastic solver cannot equal the fit on repeated rows step by step (its
    minibatches differ), but both minimize the same objective: run long enough, the
    weighted fit reaches the repeated fit's objective value, which the unweighted
    fit (another objective) does not."""
    rng = np.random.default_rng(17)
    X = rng.standard_normal((300, 2))
    y = (X[:, 0] + 0.7 * rng.standard_normal(300) > 0).astype(int)
    w = np.where(y == 1, 4, 1) * rng.integers(1, 3, 300)  # shifts the optimal intercept
    lam = 0.05
    params = dict(alpha=lam, batch_size=64, max_iter=3000)
    X_rep, y_rep = repeated(X, y, w)
    weighted = [PegasosSVC(**params, random_state=s).fit(X, y, sample_weight=w) for s in range(4)]
    reference = [PegasosSVC(**params, random_state=s).fit(X_rep, y_rep) for s in range(4)]
    unweighted = [PegasosSVC(**params, random_state=s).fit(X, y) for s in range(4)]

    def objective(fits):
        return np.mean([hinge_objective(c, X, y, w, lam) for c in fits])

    def weights(fits):
        return np.mean([np.r_[c.coef_.ravel(), c.intercept_] for c in fits], axis=0)

    assert abs(objective(weighted) - objective(reference)) < 0.005 * objective(reference)
    assert objective(unweighted) > 1.03 * objective(reference)
    np.testing.assert_allclose(weights(weighted), weights(reference), atol=0.03 * np.abs(weights(reference)).max())
    assert np.abs(weights(unweighted) - weights(reference)).max() > 0.1 * np.abs(weights(reference)).max()


# --------------------------------------------------------------- bad weights
LEARNERS = {
    "least_squares": (LeastSquaresClassifier, "labels"),
    "least_squares_regressor": (LeastSquaresRegressor, "real"),
    "ecoc": (lambda: ECOCClassifier(8, random_state=0), "labels"),
    "kernel_ridge": (KernelRidge, "real"),
    "kernel_ridge_classifier": (KernelRidgeClassifier, "labels"),
    "pegasos": (lambda: PegasosSVC(batch_size=8, max_iter=10, random_state=0), "labels"),
}


@pytest.mark.parametrize("name", LEARNERS)
def test_bad_sample_weights_raise(name):
    X, Y, labels, _ = dense_problem(n=30, seed=18)
    make, kind = LEARNERS[name]
    y = labels if kind == "labels" else Y[:, 0]
    good = np.ones(30)
    for bad, message in [(np.r_[-1.0, good[1:]], "Negative values"), (np.r_[np.nan, good[1:]], "NaN"),
                         (np.r_[np.inf, good[1:]], "infinity"), (good[:20], r"shape|length|entries"),
                         (np.ones((30, 2)), "1D"), (np.zeros(30), "non-zero")]:
        with pytest.raises(ValueError, match=message):
            make().fit(X, y, sample_weight=bad)
    make().fit(X, y, sample_weight=list(good))  # a list is an array-like


@pytest.mark.parametrize("cls", [LeastSquaresClassifier, LeastSquaresRegressor])
def test_dask_input_refuses_sample_weight(cls):
    da = pytest.importorskip("dask.array")
    X, Y, labels, w = dense_problem(seed=19)
    y = labels if cls is LeastSquaresClassifier else Y[:, 0]
    with pytest.raises(ValueError, match="sample_weight.*Dask"):
        cls().fit(da.from_array(X, chunks=20), y, sample_weight=w)
    if cls is LeastSquaresClassifier:
        with pytest.raises(ValueError, match="class_weight='balanced'"):
            cls(class_weight="balanced").fit(da.from_array(X, chunks=20), y)
        # a dict weighs each chunk alike: the same fit as in memory
        lazy = cls(class_weight={1: 3.0}).fit(da.from_array(X, chunks=20), da.from_array(y, chunks=20))
        assert_rel_close(lazy.coef_, cls(class_weight={1: 3.0}).fit(X, y).coef_, RTOL)


# ------------------------------------------------------------ scalar weights
#: Every registered learner whose fit takes sample_weight, found by its signature.
WEIGHTED = sorted(name for name, cls in REGISTRY.items()
                  if "sample_weight" in inspect.signature(cls.fit).parameters)


def _target(name, seed):
    X, Y, labels, _ = dense_problem(n=40, seed=seed)
    return X, (labels if is_classifier(REGISTRY[name]()) else Y[:, 0])


def _partial_fit(est, X, y, **kwargs):
    classes = {"classes": np.unique(y)} if is_classifier(est) else {}
    return est.partial_fit(X, y, **classes, **kwargs)


def test_every_learner_with_sample_weight_is_tested():
    assert {"kernel_ridge", "kernel_svc", "least_squares", "pegasos"} <= set(WEIGHTED)


@pytest.mark.parametrize("name", WEIGHTED)
@pytest.mark.parametrize("weight", [np.nan, np.inf, -np.inf, np.float32("nan"), np.float64(np.inf)])
def test_a_non_finite_scalar_weight_is_refused(name, weight):
    """A NaN scalar weighed every row out of the fit (a model of no row), an infinite one
    overflowed the sums: both are refused by name, in fit and partial_fit."""
    X, y = _target(name, 20)
    with pytest.raises(ValueError, match="sample_weight must be a finite, non-negative number"):
        make_learner(name).fit(X, y, sample_weight=weight)
    if hasattr(REGISTRY[name], "partial_fit"):
        with pytest.raises(ValueError, match="sample_weight must be a finite, non-negative number"):
            _partial_fit(make_learner(name), X, y, sample_weight=weight)


@pytest.mark.parametrize("name", WEIGHTED)
def test_a_finite_scalar_weight_is_every_rows_weight(name):
    X, y = _target(name, 21)
    scalar = make_learner(name).fit(X, y, sample_weight=2.5)
    full = make_learner(name).fit(X, y, sample_weight=np.full(len(X), 2.5))
    np.testing.assert_array_equal(scalar.predict(X), full.predict(X))
    if hasattr(scalar, "decision_function"):
        np.testing.assert_array_equal(scalar.decision_function(X), full.decision_function(X))
    if hasattr(REGISTRY[name], "partial_fit"):
        blocks = _partial_fit(make_learner(name), X, y, sample_weight=2.5)
        np.testing.assert_array_equal(blocks.predict(X), full.predict(X))
