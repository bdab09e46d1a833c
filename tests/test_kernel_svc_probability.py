"""KernelSVC's probabilities (Platt scaling, pairwise coupling), sample weights and class weights.

References: scikit-learn's SVC (LIBSVM) on the same problems, the unweighted fit
on repeated or dropped rows, and plain NumPy/SciPy versions of Platt's sigmoid
fit and of LIBSVM's pairwise coupling iteration written here.
"""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.metrics import log_loss
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight

from kernelmaps import KernelSVC
from kernelmaps._solvers.platt import couple_pairwise, fit_sigmoid


def problem(n, n_classes=2, seed=0, weights=None):
    """A standardized, noisy problem of 4 features (3 informative)."""
    X, y = make_classification(n_samples=n, n_features=4, n_informative=3, n_redundant=0, n_classes=n_classes,
                               n_clusters_per_class=1, class_sep=1.0, flip_y=0.05, weights=weights,
                               random_state=seed)
    return StandardScaler().fit_transform(X), y


def scale(scores):
    return float(np.abs(scores).max())


# ------------------------------------------------------------ references
def platt_reference(f, positive):
    """Platt's (A, B) by BFGS on the cross-entropy against the targets of Lin, Lin & Weng."""
    n_pos = positive.sum()
    n_neg = positive.size - n_pos
    t = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def objective(theta):
        z = theta[0] * f + theta[1]
        p = expit(-z)  # P(y = +1 | f) = 1 / (1 + exp(A f + B))
        value = -np.sum(t * np.log(p) + (1 - t) * np.log(1 - p))
        dz = t - p
        return value, np.array([dz @ f, dz.sum()])

    return minimize(objective, np.zeros(2), jac=True, method="BFGS", options={"gtol": 1e-11}).x


def libsvm_coupling(r, max_iter=10000, eps=1e-13):
    """LIBSVM's ``multiclass_probability`` (Wu, Lin & Weng method 2 by fixed-point
    steps), run to a tight tolerance; ``r[i, j]`` is P(i beats j)."""
    k = r.shape[0]
    Q = -r.T * r
    np.fill_diagonal(Q, [sum(r[j, t] ** 2 for j in range(k) if j != t) for t in range(k)])
    p = np.full(k, 1.0 / k)
    Qp = Q @ p
    for _ in range(max_iter):
        Qp = Q @ p
        pQp = p @ Qp
        if np.abs(Qp - pQp).max() < eps:
            break
        for t in range(k):
            diff = (pQp - Qp[t]) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) ** 2
            Qp = (Qp + diff * Q[t]) / (1 + diff)
            p /= 1 + diff
    return p


# ------------------------------------------------------------ Platt scaling
@pytest.mark.parametrize("shift", [0.3, 1.5])  # overlapping, nearly separable
def test_platt_sigmoid_matches_a_scipy_reference(shift):
    rng = np.random.default_rng(0)
    positive = rng.random(300) < 0.4
    f = np.where(positive, shift, -shift) + rng.standard_normal(300)
    A, B = fit_sigmoid(f, positive)
    np.testing.assert_allclose([A, B], platt_reference(f, positive), rtol=1e-4, atol=1e-4)
    assert A < 0  # larger decision values, larger probabilities of the positive class


def test_coupling_matches_libsvms_iteration():
    rng = np.random.default_rng(1)
    k = 4
    pairs = np.array([(a, b) for a in range(k) for b in range(a + 1, k)])
    r = rng.uniform(0.02, 0.98, size=(20, len(pairs)))
    ours = couple_pairwise(r, pairs, k)
    for row, p in zip(r, ours):
        R = np.zeros((k, k))
        R[pairs[:, 0], pairs[:, 1]] = row
        R[pairs[:, 1], pairs[:, 0]] = 1 - row
        np.testing.assert_allclose(p, libsvm_coupling(R), atol=1e-8)
    # consistent pairwise probabilities r_ij = p_i / (p_i + p_j) give p back
    p = np.array([0.1, 0.2, 0.3, 0.4])
    consistent = (p[pairs[:, 0]] / (p[pairs[:, 0]] + p[pairs[:, 1]]))[None]
    np.testing.assert_allclose(couple_pairwise(consistent, pairs, k)[0], p, atol=1e-12)


@pytest.mark.parametrize("n_classes, multi_class", [(2, "ovr"), (3, "ovo")])
def test_sigmoids_are_fitted_to_the_cross_validated_decision_values(n_classes, multi_class):
    X, y = problem(200, n_classes, seed=1)
    svc = KernelSVC(gamma=0.3, multi_class=multi_class, probability=True, random_state=3).fit(X, y)
    # the same folds as fit's: StratifiedKFold(5, shuffle=True) seeded by random_state
    cv = StratifiedKFold(5, shuffle=True, random_state=3)
    f = cross_val_predict(KernelSVC(gamma=0.3, multi_class=multi_class), X, y, cv=cv, method="decision_function")
    f = f.reshape(len(y), -1)
    for p in range(f.shape[1]):
        if n_classes == 2:
            rows, positive = np.arange(len(y)), y == 1
        else:
            a, b = svc.pairs_[p]
            rows = np.flatnonzero((y == a) | (y == b))
            positive = y[rows] == a
        np.testing.assert_allclose([svc.probA_[p], svc.probB_[p]], fit_sigmoid(f[rows, p], positive), rtol=1e-9)
    # and the model itself is trained on every row, as without probabilities
    plain = KernelSVC(gamma=0.3, multi_class=multi_class).fit(X, y)
    np.testing.assert_array_equal(svc.decision_function(X), plain.decision_function(X))


@pytest.mark.parametrize("n_classes, multi_class", [(2, "ovr"), (3, "ovr"), (3, "ovo")])
def test_probabilities_are_distributions_over_the_classes(n_classes, multi_class):
    X, y = problem(150, n_classes, seed=2)
    labels = np.array(["ant", "bee", "cat"])[y]
    svc = KernelSVC(gamma=0.5, multi_class=multi_class, probability=True, random_state=0).fit(X, labels)
    proba = svc.predict_proba(X[:40])
    assert proba.shape == (40, n_classes)
    assert np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(svc.predict_log_proba(X[:40]), np.log(proba))
    n_problems = 1 if n_classes == 2 else (n_classes if multi_class == "ovr" else 3)
    assert svc.probA_.shape == svc.probB_.shape == (n_problems,)
    if n_classes == 3 and multi_class == "ovr":
        # one sigmoid per class, normalized (as CalibratedClassifierCV)
        sig = np.clip(expit(-(svc.decision_function(X[:40]) * svc.probA_ + svc.probB_)), 1e-7, 1 - 1e-7)
        np.testing.assert_allclose(proba, sig / sig.sum(axis=1, keepdims=True), rtol=1e-12)
    # the most probable class is nearly always the predicted one
    agree = np.mean(svc.classes_[proba.argmax(axis=1)] == svc.predict(X[:40]))
    assert agree > 0.9


@pytest.mark.filterwarnings("ignore::FutureWarning")  # SVC's probability=True is deprecated in scikit-learn 1.9
@pytest.mark.parametrize("n_classes, multi_class", [(2, "ovr"), (3, "ovo"), (3, "ovr")])
def test_held_out_log_loss_is_close_to_svcs(n_classes, multi_class):
    X, y = problem(600, n_classes, seed=3)
    X_train, y_train, X_test, y_test = X[:400], y[:400], X[400:], y[400:]
    ours = KernelSVC(C=1.0, gamma=0.2, multi_class=multi_class, probability=True, random_state=0)
    ours_loss = log_loss(y_test, ours.fit(X_train, y_train).predict_proba(X_test))
    svc = SVC(C=1.0, gamma=0.2, probability=True, random_state=0).fit(X_train, y_train)
    svc_loss = log_loss(y_test, svc.predict_proba(X_test))
    prior = np.bincount(y_train) / len(y_train)
    constant_loss = log_loss(y_test, np.tile(prior, (len(y_test), 1)))
    assert abs(ours_loss - svc_loss) < max(0.05, 0.2 * svc_loss), (ours_loss, svc_loss)
    assert ours_loss < 0.6 * constant_loss, (ours_loss, constant_loss)


def test_the_cross_validation_is_seeded_by_random_state():
    X, y = problem(120, seed=4)

    def sigmoid(seed):
        svc = KernelSVC(gamma=0.5, probability=True, random_state=seed).fit(X, y)
        return svc.probA_[0], svc.probB_[0]

    assert sigmoid(7) == sigmoid(7)
    assert sigmoid(7) != sigmoid(8)


def test_predict_proba_exists_only_with_probability():
    X, y = problem(60, seed=5)
    assert not hasattr(KernelSVC(), "predict_proba")
    assert not hasattr(KernelSVC(), "predict_log_proba")
    with pytest.raises(AttributeError, match="predict_proba"):
        KernelSVC(gamma=0.5).fit(X, y).predict_proba(X)
    assert hasattr(KernelSVC(probability=True), "predict_proba")
    # switched on after a fit without: the sigmoids are missing, and the error says so
    svc = KernelSVC(gamma=0.5).fit(X, y).set_params(probability=True)
    with pytest.raises(NotFittedError, match="probability=False"):
        svc.predict_proba(X)
    with pytest.raises(ValueError, match="probability must be True or False"):
        KernelSVC(probability="yes").fit(X, y)


def test_too_few_rows_per_class_for_the_folds():
    X, y = problem(60, seed=6)
    y = y.copy()
    y[np.flatnonzero(y == 1)[4:]] = 0  # 4 rows of class 1
    with pytest.raises(ValueError, match=r"probability=True.*5-fold.*class 1 has 4"):
        KernelSVC(gamma=0.5, probability=True).fit(X, y)
    KernelSVC(gamma=0.5).fit(X, y)  # fine without probabilities
    # rows of weight 0 do not count
    X, y = problem(60, seed=6)
    weights = np.ones(len(y))
    weights[np.flatnonzero(y == 1)[3:]] = 0.0
    with pytest.raises(ValueError, match="class 1 has 3"):
        KernelSVC(gamma=0.5, probability=True).fit(X, y, sample_weight=weights)


# ------------------------------------------------------------ sample weights
@pytest.mark.parametrize("n_classes, multi_class, selection", [
    (2, "ovr", "second_order"), (2, "ovr", "greedy"), (3, "ovr", "second_order"), (3, "ovo", "second_order"),
])
def test_integer_weights_equal_repeated_rows(n_classes, multi_class, selection):
    X, y = problem(150, n_classes, seed=7)
    weights = np.random.default_rng(0).integers(0, 4, len(y))  # 0 drops the row
    params = dict(C=2.0, gamma=0.5, tol=1e-6, multi_class=multi_class, selection=selection)
    weighted = KernelSVC(**params).fit(X, y, sample_weight=weights)
    repeated = KernelSVC(**params).fit(np.repeat(X, weights, axis=0), np.repeat(y, weights))
    expected = repeated.decision_function(X)
    np.testing.assert_allclose(weighted.decision_function(X), expected, rtol=0, atol=1e-3 * scale(expected))
    assert np.mean(weighted.predict(X) == repeated.predict(X)) > 0.97  # all but points on the boundary


def test_zero_weights_equal_dropped_rows():
    X, y = problem(150, 3, seed=8)
    weights = np.random.default_rng(1).choice([0.0, 1.0, 2.5], len(y))
    kept = np.flatnonzero(weights > 0)
    for params in ({"gamma": 0.5}, {"gamma": "scale", "multi_class": "ovo"}):  # the heuristic sees kept rows only
        weighted = KernelSVC(**params).fit(X, y, sample_weight=weights)
        dropped = KernelSVC(**params).fit(X[kept], y[kept], sample_weight=weights[kept])
        assert weighted.gamma_ == dropped.gamma_
        np.testing.assert_array_equal(weighted.decision_function(X), dropped.decision_function(X))
        np.testing.assert_array_equal(weighted.support_, kept[dropped.support_])
        np.testing.assert_array_equal(weighted.support_vectors_, X[weighted.support_])


def test_unit_weights_are_the_unweighted_fit():
    X, y = problem(120, 3, seed=9)
    plain = KernelSVC(gamma=0.5).fit(X, y)
    ones = KernelSVC(gamma=0.5).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_array_equal(ones.decision_function(X), plain.decision_function(X))
    np.testing.assert_array_equal(ones.class_weight_, np.ones(3))
    # a constant weight is a larger C
    np.testing.assert_array_equal(KernelSVC(gamma=0.5).fit(X, y, sample_weight=np.full(len(y), 3.0))
                                  .decision_function(X), KernelSVC(C=3.0, gamma=0.5).fit(X, y).decision_function(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_weighted_fit_matches_svc(n_classes):
    X, y = problem(200, n_classes, seed=10)
    weights = np.random.default_rng(2).uniform(0.0, 3.0, len(y))
    weights[::7] = 0.0
    class_weight = {0: 0.5, 1: 2.0}
    ours = KernelSVC(C=1.5, gamma=0.4, tol=1e-6, multi_class="ovo", class_weight=class_weight)
    ours.fit(X, y, sample_weight=weights)
    svc = SVC(C=1.5, gamma=0.4, tol=1e-6, class_weight=class_weight, decision_function_shape="ovo")
    svc.fit(X, y, sample_weight=weights)
    expected = svc.decision_function(X)
    np.testing.assert_allclose(ours.decision_function(X), expected, rtol=0, atol=2e-3 * scale(expected))
    assert np.mean(ours.predict(X) == svc.predict(X)) > 0.97


@pytest.mark.parametrize("bad, message", [
    (-np.ones(50), "[Nn]egative"),
    (np.ones(49), "sample_weight"),
    (np.full(50, np.nan), "NaN"),
    (np.full(50, np.inf), "infinity"),
    (np.zeros(50), "zero"),
])
def test_invalid_sample_weights(bad, message):
    X, y = problem(50, seed=11)
    with pytest.raises(ValueError, match=message):
        KernelSVC(gamma=0.5).fit(X, y, sample_weight=bad)


def test_a_class_without_positive_weight_is_an_error():
    X, y = problem(60, 3, seed=12)
    with pytest.raises(ValueError, match="leave class 2 without a row of positive weight"):
        KernelSVC(gamma=0.5).fit(X, y, sample_weight=(y != 2).astype(float))
    with pytest.raises(ValueError, match="leave class 0"):
        KernelSVC(gamma=0.5, class_weight={0: 0.0}).fit(X, y)


# ------------------------------------------------------------ class weights
@pytest.mark.parametrize("class_weight", [{0: 1.0, 1: 5.0}, "balanced"])
def test_class_weight_matches_svc_on_an_imbalanced_problem(class_weight):
    X, y = problem(300, seed=13, weights=[0.85, 0.15])
    ours = KernelSVC(gamma=0.3, tol=1e-6, class_weight=class_weight).fit(X, y)
    svc = SVC(gamma=0.3, tol=1e-6, class_weight=class_weight).fit(X, y)
    expected = svc.decision_function(X)
    np.testing.assert_allclose(ours.decision_function(X), expected, rtol=0, atol=2e-3 * scale(expected))
    np.testing.assert_allclose(ours.class_weight_, svc.class_weight_)
    # the weights move the boundary towards the rare class's recall
    plain = KernelSVC(gamma=0.3).fit(X, y)
    assert np.mean(ours.predict(X)[y == 1] == 1) > np.mean(plain.predict(X)[y == 1] == 1)


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
def test_class_weight_is_a_sample_weight_per_class(multi_class):
    # one-vs-rest too: every row keeps its own class's weight in every binary problem
    X, y = problem(150, 3, seed=14)
    weights = {0: 2.0, 1: 0.5, 2: 1.0}
    by_class = KernelSVC(gamma=0.5, multi_class=multi_class, class_weight=weights).fit(X, y)
    by_row = KernelSVC(gamma=0.5, multi_class=multi_class).fit(X, y, sample_weight=np.array([2.0, 0.5, 1.0])[y])
    np.testing.assert_array_equal(by_class.decision_function(X), by_row.decision_function(X))
    np.testing.assert_array_equal(by_class.class_weight_, [2.0, 0.5, 1.0])
    # 'balanced' with sample weights counts weighted rows
    sample_weight = np.random.default_rng(3).integers(1, 4, len(y)).astype(float)
    balanced = KernelSVC(gamma=0.5, class_weight="balanced").fit(X, y, sample_weight=sample_weight)
    np.testing.assert_allclose(balanced.class_weight_, compute_class_weight(
        "balanced", classes=np.arange(3), y=y, sample_weight=sample_weight))


def test_class_weight_with_string_labels():
    X, y = problem(100, seed=15)
    labels = np.array(["no", "yes"])[y]
    a = KernelSVC(gamma=0.5, class_weight={"yes": 3.0}).fit(X, labels)
    b = KernelSVC(gamma=0.5, class_weight={0: 1.0, 1: 3.0}).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("class_weight, message", [
    ({0: 1.0, 7: 2.0}, r"class_weight names classes \[7\] that are not among"),
    ({"0": 2.0}, r"class_weight names classes \['0'\]"),
    ({0: -1.0}, "class_weight values must be finite and non-negative"),
    ({1: np.inf}, "class_weight values must be finite"),
    ("balance", "class_weight must be None, 'balanced' or a dict"),
    ([1.0, 2.0], "class_weight must be None, 'balanced' or a dict"),
])
def test_invalid_class_weight(class_weight, message):
    X, y = problem(50, seed=16)
    with pytest.raises(ValueError, match=message):
        KernelSVC(gamma=0.5, class_weight=class_weight).fit(X, y)


def test_coupling_many_classes_works_in_bounded_blocks():
    """200 classes: 200 rows coupled at once held 258 MB of (n_classes + 1)^2 systems."""
    import tracemalloc

    rng = np.random.default_rng(9)
    k = 200
    pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
    r = rng.uniform(0.05, 0.95, (200, len(pairs)))
    tracemalloc.start()
    try:
        P = couple_pairwise(r, pairs, k)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"coupling held {peak / 2**20:.0f} MiB"
    one_at_a_time = np.vstack([couple_pairwise(r[i:i + 1], pairs, k) for i in range(3)])
    np.testing.assert_allclose(P[:3], one_at_a_time, rtol=1e-12)
