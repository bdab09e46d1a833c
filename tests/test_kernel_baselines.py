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
from kernelmaps._kernels.exact import exact_kernel
from kernelmaps._solvers import greedy_cd
from kernelmaps._solvers.kernel_cache import kernel_column
from kernelmaps._solvers.smo import smo_second_order, _swap_variables
from kernelmaps._kernels.formulas import RECORDS, kernel_record
from kernelmaps._kernels.names import KERNELS
from kernelmaps._core.validation import InsufficientMemoryError

from naive import greedy_coordinate_descent, svm_dual_violation


def cache_state(n, n_slots):
    """An empty kernel-column cache of ``n_slots`` columns for ``n`` points."""
    return (np.empty((n_slots, n)), np.full(n, -1, dtype=np.int64),
            np.full(n_slots, -1, dtype=np.int64), np.full(n_slots, -1, dtype=np.int64),
            np.zeros(n_slots, dtype=np.int64))


@pytest.mark.parametrize("kernel", sorted(set(KERNELS) & set(RECORDS)))  # Matérn: test_matern.py
def test_kernel_column_is_the_gram_column_and_the_cache_is_lru(kernel):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    sq = np.einsum("ij,ij->i", X, X)
    K = exact_kernel(X, kernel=kernel, gamma=0.4, degree=3, coef0=0.5)
    cache, slot_of, slot_owner, last_used, col_len = cache_state(40, 2)

    def column(i, clock, length=40):
        return kernel_column(i, length, X, sq, kernel_record(kernel, 0.4, 3, 0.5, 1.5, 1.0, np.float64), cache,
                             slot_of,
                             slot_owner, last_used, col_len, clock)

    for clock, i in enumerate([3, 7, 3, 11]):  # 11 evicts 7, the least recently used
        np.testing.assert_allclose(column(i, clock), K[:, i], rtol=1e-12, atol=1e-12)
    assert sorted(slot_owner) == [3, 11]
    assert slot_of[7] == -1 and slot_of[3] >= 0 and slot_of[11] >= 0
    # a shrunk problem asks for a prefix; a longer request completes the same slot
    np.testing.assert_allclose(column(5, 4, length=17)[:17], K[:17, 5], rtol=1e-12, atol=1e-12)
    assert col_len[slot_of[5]] == 17
    np.testing.assert_allclose(column(5, 5, length=40), K[:, 5], rtol=1e-12, atol=1e-12)
    assert col_len[slot_of[5]] == 40


@pytest.mark.parametrize("n_slots", [2, 60])
def test_greedy_coordinate_descent_matches_numpy(n_slots):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    K = exact_kernel(X, kernel="gaussian", gamma=0.5)
    Q = np.outer(y, y) * (K + 1.0)
    expected, n_expected = greedy_coordinate_descent(Q, 2.0, 1e-6, 5000)
    alpha, z = np.zeros(60), np.zeros(60)
    it, converged, _ = greedy_cd.greedy_coordinate_descent(
        X, np.einsum("ij,ij->i", X, X), kernel_record("gaussian", 0.5, 2, 1.0, 1.5, 1.0, np.float64), 1.0, y,
        2.0, 1e-6, 5000,
        *cache_state(60, n_slots), 0, alpha, z, np.diag(Q).copy())
    assert converged and it == n_expected
    np.testing.assert_allclose(alpha, expected, atol=1e-10)
    np.testing.assert_allclose(z, Q @ alpha, atol=1e-9)
    # KKT of the box-constrained dual at the tolerance
    grad = Q @ alpha - 1
    assert np.all(grad[alpha < 1e-12] > -1e-4)
    assert np.all(grad[alpha > 2.0 - 1e-12] < 1e-4)


def test_swapping_two_variables_permutes_every_array_and_the_cached_columns():
    rng = np.random.default_rng(3)
    n = 30
    X = rng.standard_normal((n, 3))
    K = exact_kernel(X, kernel="gaussian", gamma=0.3)
    sq = np.einsum("ij,ij->i", X, X)
    cache, slot_of, slot_owner, last_used, col_len = cache_state(n, 4)
    for clock, (i, length) in enumerate([(2, n), (9, 20), (25, 12), (4, 5)]):
        kernel_column(i, length, X, sq, kernel_record("gaussian", 0.3, 2, 1.0, 1.5, 1.0, np.float64), cache,
                      slot_of, slot_owner, last_used, col_len, clock)
    y, alpha, G, G_bar, k_diag = (rng.standard_normal(n) for _ in range(5))  # stand-ins
    originals = [v.copy() for v in (sq, y, alpha, G, G_bar, k_diag)]
    X0, perm = X.copy(), np.arange(n)
    for i, j in [(4, 9), (7, 15), (12, 25)]:
        _swap_variables(i, j, X, sq, y, alpha, G, G_bar, k_diag, perm, cache, slot_of, slot_owner, col_len)
    np.testing.assert_array_equal(X, X0[perm])
    for moved, original in zip((sq, y, alpha, G, G_bar, k_diag), originals):
        np.testing.assert_array_equal(moved, original[perm])
    Kp = K[np.ix_(perm, perm)]
    for s, owner in enumerate(slot_owner):
        if owner >= 0:
            assert slot_of[owner] == s
            np.testing.assert_allclose(cache[s, :col_len[s]], Kp[:col_len[s], owner], rtol=1e-12, atol=1e-12)
    # columns keep the prefix no swap has touched: 9's 20 entries (now at 4) lose 12..19
    # to the swap of 12 and 25; 4's 5 entries (now at 9) lose entry 4 to the first swap
    assert col_len[slot_of[4]] == 12 and col_len[slot_of[9]] == 4 and col_len[slot_of[2]] == n


def smo_problem(n, seed=0):
    """A noisy two-class problem whose SMO at C = 100, gamma = 2 runs well past
    LIBSVM's first shrinking (``min(n, 1000)`` steps)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def run_smo(X, y, C, gamma, shrinking, tol=1e-3, n_slots=None):
    n = len(y)
    perm = np.arange(n, dtype=np.int64)
    Xp, yp, alpha = X.copy(), y.copy(), np.zeros(n)
    G, G_bar = np.full(n, -1.0), np.zeros(n)
    it, converged, _, rho = smo_second_order(
        Xp, np.einsum("ij,ij->i", Xp, Xp), kernel_record("gaussian", gamma, 2, 1.0, 1.5, 1.0, np.float64), yp,
        C, tol, 10**6, shrinking,
        *cache_state(n, n_slots or n), 0, alpha, G, G_bar, np.ones(n), perm)
    assert converged
    out = np.empty(n)
    out[perm] = alpha
    G_out = np.empty(n)
    G_out[perm] = G
    return out, rho, it, perm, G_out


@pytest.mark.parametrize("n_slots", [2, None])
def test_shrinking_smo_reaches_the_same_optimum(n_slots):
    X, y = smo_problem(1500)
    K = exact_kernel(X, kernel="gaussian", gamma=2.0)
    Q = np.outer(y, y) * K
    plain, rho_plain, it_plain, perm_plain, _ = run_smo(X, y, 100.0, 2.0, False, n_slots=n_slots)
    shrunk, rho_shrunk, it_shrunk, perm, G = run_smo(X, y, 100.0, 2.0, True, n_slots=n_slots)
    assert it_shrunk > 1500 and not np.array_equal(perm, np.arange(1500))  # it did shrink
    np.testing.assert_array_equal(perm_plain, np.arange(1500))
    # every variable's gradient was rebuilt: it is Q a - e, and the KKT gap is below tol
    np.testing.assert_allclose(G, Q @ shrunk - 1, atol=1e-8)
    assert svm_dual_violation(Q, y, shrunk, 100.0) < 1e-3
    assert abs(y @ shrunk) < 1e-8 and shrunk.min() >= 0 and shrunk.max() <= 100.0

    def dual(a):
        return 0.5 * a @ Q @ a - a.sum()

    # two points of the same optimum, to the accuracy tol = 1e-3 gives
    assert abs(dual(shrunk) - dual(plain)) <= 1e-6 * abs(dual(plain))
    assert abs(rho_shrunk - rho_plain) < 1e-2


def test_shrinking_matches_libsvm():
    from sklearn.svm import SVC

    X, y = smo_problem(1500, seed=1)
    ours = KernelSVC(C=100.0, gamma=2.0, tol=1e-5).fit(X, y)
    theirs = SVC(C=100.0, gamma=2.0, tol=1e-5).fit(X, y)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, atol=1e-3)
    Xt = np.random.default_rng(9).standard_normal((2000, 2))
    np.testing.assert_allclose(ours.decision_function(Xt), theirs.decision_function(Xt), atol=1e-2)
    off = KernelSVC(C=100.0, gamma=2.0, tol=1e-5, shrinking=False).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(Xt), off.decision_function(Xt), atol=1e-2)
    with pytest.raises(ValueError, match="shrinking"):
        KernelSVC(shrinking="yes").fit(X, y)


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


# ------------------------------------------------------------ KernelSVC's memory plan
class _Trained(Exception):
    """Raised in place of training: the fit got past its checks."""


@pytest.fixture
def no_training(monkeypatch):
    """KernelSVC's solver replaced by one that refuses to train, and 4 GiB of memory available."""
    import kernelmaps._core.validation as validation
    import kernelmaps.kernel_svc as kernel_svc

    def solver(*args, **kwargs):
        raise _Trained

    monkeypatch.setattr(kernel_svc, "Solver", solver)
    monkeypatch.setattr(validation, "available_memory_bytes", lambda: 4 * 2**30)


def many_classes(n_classes, rows_per_class, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_classes * rows_per_class, 4)), np.repeat(np.arange(n_classes), rows_per_class)


def test_one_vs_one_duals_are_planned_before_training(no_training):
    """2000 rows of 1000 classes: 499500 one-vs-one problems, whose duals (7.4 GiB) failed
    to allocate after a minute of training; they are refused before it, with what to change."""
    X, y = many_classes(1000, 2)
    with pytest.raises(InsufficientMemoryError, match=r"multi_class='ovo'.*2000 rows of 1000 classes.*"
                       r"499500 one-vs-one problems \(499500 x 2000 float64.*15\.\d GiB.*only 4\.0 GiB.*"
                       r"use multi_class='ovr' \(1000 problems\)"):
        KernelSVC(multi_class="ovo").fit(X, y)
    with pytest.raises(_Trained):  # one-vs-rest fits the plan
        KernelSVC(multi_class="ovr").fit(X, y)


def test_the_cross_validation_of_probabilities_is_planned_too(no_training, monkeypatch):
    import kernelmaps._core.validation as validation

    X, y = many_classes(200, 10)  # 19900 one-vs-one problems on 2000 rows
    monkeypatch.setattr(validation, "available_memory_bytes", lambda: 1.5 * 2**30)
    with pytest.raises(InsufficientMemoryError, match=r"for probability=True.*2000 x 19900 cross-validated.*"
                                                      r"use multi_class='ovr' \(200 problems\), probability=False"):
        KernelSVC(multi_class="ovo", probability=True).fit(X, y)
    with pytest.raises(_Trained):
        KernelSVC(multi_class="ovo").fit(X, y)


def test_too_few_rows_per_class_for_probabilities_is_refused_before_training(no_training):
    X, y = many_classes(3, 8)
    y[:4] = 1  # class 0 keeps 4 rows
    with pytest.raises(ValueError, match=r"probability=True.*5-fold.*class 0 has 4"):
        KernelSVC(probability=True).fit(X, y)
