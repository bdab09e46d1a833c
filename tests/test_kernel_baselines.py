"""Exact kernel baselines: greedy coordinate descent SVM and kernel ridge."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.datasets import load_digits
from sklearn.svm import SVC

from kernelmaps import KernelRidge, KernelRidgeClassifier, KernelSVC, datasets
from kernelmaps._kernels import exact_kernel
from kernelmaps.kernel_svc import _greedy_coordinate_descent, _kernel_column
from kernelmaps._kernels import KERNEL_CODES, KERNELS

from naive import greedy_coordinate_descent


def cache_state(n, n_slots):
    """An empty kernel-column cache of ``n_slots`` columns for ``n`` points."""
    return (np.empty((n_slots, n)), np.full(n, -1, dtype=np.int64),
            np.full(n_slots, -1, dtype=np.int64), np.full(n_slots, -1, dtype=np.int64))


@pytest.mark.parametrize("kernel", sorted(KERNELS))  # the kernels KernelSVC takes
def test_kernel_column_is_the_gram_column_and_the_cache_is_lru(kernel):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    sq = np.einsum("ij,ij->i", X, X)
    K = exact_kernel(X, kernel=kernel, gamma=0.4, degree=3, coef0=0.5)
    cache, slot_of, slot_owner, last_used = cache_state(40, 2)

    def column(i, clock):
        return _kernel_column(i, X, sq, KERNEL_CODES[kernel], 0.4, 0.5, 3, cache, slot_of,
                             slot_owner, last_used, clock)

    for clock, i in enumerate([3, 7, 3, 11]):  # 11 evicts 7, the least recently used
        np.testing.assert_allclose(column(i, clock), K[:, i], rtol=1e-12, atol=1e-12)
    assert sorted(slot_owner) == [3, 11]
    assert slot_of[7] == -1 and slot_of[3] >= 0 and slot_of[11] >= 0


@pytest.mark.parametrize("n_slots", [2, 60])
def test_greedy_coordinate_descent_matches_numpy(n_slots):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    K = exact_kernel(X, kernel="gaussian", gamma=0.5)
    Q = np.outer(y, y) * (K + 1.0)
    expected, n_expected = greedy_coordinate_descent(Q, 2.0, 1e-6, 5000)
    alpha, z = np.zeros(60), np.zeros(60)
    cache, slot_of, slot_owner, last_used = cache_state(60, n_slots)
    it, converged, _ = _greedy_coordinate_descent(
        X, np.einsum("ij,ij->i", X, X), 0, 0.5, 1.0, 2, 1.0, y, 2.0, 1e-6, 5000,
        cache, slot_of, slot_owner, last_used, 0, alpha, z, np.diag(Q).copy())
    assert converged and it == n_expected
    np.testing.assert_allclose(alpha, expected, atol=1e-10)
    np.testing.assert_allclose(z, Q @ alpha, atol=1e-9)
    # KKT of the box-constrained dual at the tolerance
    grad = Q @ alpha - 1
    assert np.all(grad[alpha < 1e-12] > -1e-4)
    assert np.all(grad[alpha > 2.0 - 1e-12] < 1e-4)


def split(name, n_train, n_test=3000, seed=0):
    ds = datasets.load(name)
    idx = np.random.RandomState(seed).permutation(len(ds.X_train))[:n_train]
    scaler = StandardScaler().fit(ds.X_train[idx])
    return (scaler.transform(ds.X_train[idx]), ds.y_train[idx],
            scaler.transform(ds.X_test[:n_test]), ds.y_test[:n_test])


def accuracy(est, data):
    Xtr, ytr, Xte, yte = data
    return (est.fit(Xtr, ytr).predict(Xte) == yte).mean()


@pytest.mark.parametrize("name, n_train, C", [("banana", 1000, 1.0), ("magic04", 1500, 1.0)])
def test_binary_accuracy_matches_svc(name, n_train, C):
    data = split(name, n_train)
    ours = accuracy(KernelSVC(C=C, gamma=0.1), data)
    theirs = accuracy(SVC(C=C, gamma=0.1), data)
    assert abs(ours - theirs) <= 0.005, (ours, theirs)


@pytest.fixture(scope="module")
def letter():
    return split("letter", 1500, 2000)


def test_one_vs_one_matches_svc_on_letter(letter):
    ours = accuracy(KernelSVC(C=5.0, gamma=1 / 16, multi_class="ovo"), letter)
    theirs = accuracy(SVC(C=5.0, gamma=1 / 16), letter)
    assert abs(ours - theirs) <= 0.005, (ours, theirs)


def test_one_vs_rest_matches_svc_trained_one_vs_rest(letter):
    ours = accuracy(KernelSVC(C=5.0, gamma=1 / 16), letter)
    theirs = accuracy(OneVsRestClassifier(SVC(C=5.0, gamma=1 / 16)), letter)
    assert abs(ours - theirs) <= 0.005, (ours, theirs)


def test_tiny_cache_gives_the_same_model():
    Xtr, ytr, _, _ = split("banana", 300)
    big = KernelSVC(gamma=0.5).fit(Xtr, ytr)
    tiny = KernelSVC(gamma=0.5, cache_size=1e-6).fit(Xtr, ytr)
    np.testing.assert_allclose(tiny.dual_coef_, big.dual_coef_, atol=1e-12)
    np.testing.assert_array_equal(tiny.support_, big.support_)


@pytest.mark.parametrize("selection", ["greedy", "second_order"])
def test_decision_function_is_the_dual_expansion(selection):
    Xtr, ytr, Xte, _ = split("banana", 200, 50)
    svc = KernelSVC(C=3.0, kernel="laplacian", gamma=0.7, selection=selection).fit(Xtr, ytr)
    K = exact_kernel(Xte, Xtr[svc.support_], kernel="laplacian", gamma=0.7)
    # greedy folds the bias into the kernel (k + 1); SMO's bias is free, -rho
    expected = ((K + 1) @ svc.dual_coef_[0] if selection == "greedy"
                else K @ svc.dual_coef_[0] + svc.intercept_[0])
    np.testing.assert_allclose(svc.decision_function(Xte), expected, atol=1e-10)
    assert np.all(np.abs(svc.dual_coef_) <= 3.0 + 1e-12)


def test_max_iter_warns():
    Xtr, ytr, _, _ = split("banana", 200, 10)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        KernelSVC(max_iter=5).fit(Xtr, ytr)


@pytest.mark.parametrize("params, message", [
    ({"C": 0}, "C"), ({"tol": -1}, "tol"), ({"cache_size": 0}, "cache_size"),
    ({"max_iter": 0}, "max_iter"), ({"multi_class": "ecoc"}, "multi_class"),
    ({"kernel": "sigmoid"}, "kernel"),
])
def test_svc_bad_parameters_are_named(params, message):
    X = np.random.default_rng(0).standard_normal((20, 2))
    with pytest.raises(ValueError, match=message):
        KernelSVC(**params).fit(X, X[:, 0] > 0)


# ------------------------------------------------------------------ ridge
@pytest.mark.parametrize("kernel, sk_kernel", [("gaussian", "rbf"), ("laplacian", "laplacian"),
                                               ("polynomial", "poly")])
def test_kernel_ridge_matches_scikit_learn(kernel, sk_kernel):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((150, 4))
    Y = np.column_stack([np.sin(X[:, 0]) + X[:, 1] ** 2, X[:, 2] * X[:, 3]])
    Xt = rng.standard_normal((40, 4))
    for y in (Y[:, 0], Y):
        ours = KernelRidge(0.3, kernel=kernel, gamma=0.2, degree=3, coef0=0.5).fit(X, y)
        sk = SkKernelRidge(alpha=0.3, kernel=sk_kernel, gamma=0.2, degree=3, coef0=0.5).fit(X, y)
        assert ours.predict(Xt).shape == sk.predict(Xt).shape
        np.testing.assert_allclose(ours.predict(Xt), sk.predict(Xt), rtol=1e-8, atol=1e-8)


def test_kernel_ridge_classifier_is_ridge_on_plus_minus_one(letter):
    Xtr, ytr, Xte, yte = letter
    clf = KernelRidgeClassifier(1.0, gamma=1 / 16).fit(Xtr, ytr)
    T = np.where(ytr[:, None] == clf.classes_[None, :], 1.0, -1.0)
    reg = KernelRidge(1.0, gamma=1 / 16).fit(Xtr, T)
    np.testing.assert_allclose(clf.decision_function(Xte), reg.predict(Xte), atol=1e-9)
    assert (clf.predict(Xte) == yte).mean() > 0.75  # SVC at C = 5 on this split: about 0.85
    Xb, yb, Xbt, ybt = split("banana", 500)
    assert (KernelRidgeClassifier(0.1, gamma=0.5).fit(Xb, yb).predict(Xbt) == ybt).mean() > 0.85


def test_kernel_ridge_rejects_bad_alpha():
    X = np.random.default_rng(0).standard_normal((20, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for bad in (0, -1.0, "big"):
            with pytest.raises(ValueError, match="alpha"):
                KernelRidge(bad).fit(X, X[:, 0])


def test_second_order_selection_solves_libsvms_dual():
    """selection='second_order' is LIBSVM's problem: SVC's decisions and accuracy."""
    from sklearn.datasets import load_digits
    from sklearn.svm import SVC

    from kernelmaps import KernelSVC

    X, y = load_digits(return_X_y=True)
    X = X / 16
    ours = KernelSVC(C=10, gamma=0.05, multi_class="ovo", selection="second_order", tol=1e-5).fit(X[:1000], y[:1000])
    theirs = SVC(C=10, gamma=0.05, tol=1e-5).fit(X[:1000], y[:1000])
    assert np.mean(ours.predict(X[1000:]) == theirs.predict(X[1000:])) > 0.995
    np.testing.assert_allclose(np.sort(ours.intercept_), np.sort(theirs.intercept_), atol=1e-3)
    with pytest.raises(ValueError, match="fit_intercept=False needs selection='greedy'"):
        KernelSVC(selection="second_order", fit_intercept=False).fit(X[:50], y[:50])


def test_auto_selection_is_second_order_with_an_intercept_and_greedy_without():
    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300]
    assert KernelSVC(gamma=0.05).fit(X, y).selection_ == "second_order"
    greedy = KernelSVC(gamma=0.05, fit_intercept=False).fit(X, y)
    assert greedy.selection_ == "greedy"
    explicit = KernelSVC(gamma=0.05, fit_intercept=False, selection="greedy").fit(X, y)
    np.testing.assert_array_equal(greedy.dual_coef_, explicit.dual_coef_)
    with pytest.raises(ValueError, match="selection"):
        KernelSVC(selection="fastest").fit(X, y)
