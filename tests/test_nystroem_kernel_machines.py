"""Nyström kernel ridge (regression, classification) and logistic regression by preconditioned CG."""

import warnings

import numba
import numpy as np
import pytest
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from kernelmaps import (KernelRidge, KernelRidgeClassifier, Nystroem, NystroemKernelRidge,
                        NystroemKernelRidgeClassifier, NystroemLogisticRegression, datasets, exact_kernel)
from kernelmaps._solvers.falkon import nystroem_kernel_ridge
from kernelmaps._solvers.kernel_operator import KernelOperator
from kernelmaps._core.validation import InsufficientMemoryError


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 5))
    Y = np.column_stack([np.sin(X[:, 0]) + X[:, 1] ** 2 / 4, np.cos(X[:, 2])]) + 0.05 * rng.standard_normal((600, 2))
    return X, Y


@pytest.fixture(scope="module")
def letter_subset():
    data = datasets.load("letter")
    mean, std = data.X_train.mean(axis=0), data.X_train.std(axis=0)
    scale = lambda A: (A - mean) / std  # noqa: E731
    return scale(data.X_train[:3000]), data.y_train[:3000], scale(data.X_test[:2000]), data.y_test[:2000]


# ------------------------------------------------------------------ the operator
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "cauchy", "polynomial", "exponential"])
def test_operator_passes_match_numpy(kernel):
    rng = np.random.default_rng(1)
    X, C = rng.standard_normal((700, 4)) * 0.5, rng.standard_normal((30, 4)) * 0.5
    V, W, D = rng.standard_normal((30, 3)), rng.standard_normal((700, 3)), rng.uniform(0, 1, (700, 3))
    K = exact_kernel(X, C, kernel=kernel, gamma=0.3)
    op = KernelOperator(X, C, kernel=kernel, gamma=0.3, degree=2, coef0=1.0)
    np.testing.assert_allclose(op @ V, K @ V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(op.normal_matvec(V, W), K.T @ (K @ V + W), rtol=1e-11)
    np.testing.assert_allclose(op.normal_matvec(V, weights=D), K.T @ (D * (K @ V)), rtol=1e-11)
    np.testing.assert_allclose(op.normal_matvec(None, W), K.T @ W, rtol=1e-11)


def test_float32_operator_keeps_float32_blocks_and_sums_in_float64():
    rng = np.random.default_rng(2)
    X, C, V = rng.standard_normal((3000, 6)), rng.standard_normal((50, 6)), rng.standard_normal((50, 2))
    op = KernelOperator(X.astype(np.float32), C, kernel="gaussian", gamma=0.2)
    assert op.kernel_block(0, 10).dtype == np.float32
    K = exact_kernel(X, C, gamma=0.2)
    result = op.normal_matvec(V)
    assert result.dtype == np.float64
    reference = K.T @ (K @ V)
    assert np.abs(result - reference).max() / np.abs(reference).max() < 1e-5


def test_passes_are_identical_for_any_thread_count(regression):
    X, Y = regression
    fits = []
    previous = numba.get_num_threads()
    try:
        for threads in sorted({1, previous}):
            numba.set_num_threads(threads)
            fits.append(NystroemKernelRidge(n_components=100, alpha=0.1, gamma=0.2, random_state=0).fit(X, Y).coef_)
    finally:
        numba.set_num_threads(previous)
    assert all(np.array_equal(fits[0], f) for f in fits)


# ------------------------------------------------------------------ kernel ridge
@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "polynomial"])
def test_every_row_as_a_centre_is_exact_kernel_ridge(regression, kernel):
    X, Y = regression
    X_test = np.random.default_rng(3).standard_normal((100, 5))
    exact = KernelRidge(alpha=0.5, kernel=kernel, gamma=0.1).fit(X, Y).predict(X_test)
    ours = NystroemKernelRidge(n_components=len(X), alpha=0.5, kernel=kernel, gamma=0.1, tol=1e-12,
                               random_state=0).fit(X, Y).predict(X_test)
    assert np.abs(ours - exact).max() / np.abs(exact).max() < 1e-6


def test_alpha_means_what_it_means_in_kernel_ridge(regression):
    """A ridge ten times too large (lam = alpha, not alpha / n) must not reproduce KernelRidge."""
    X, Y = regression
    exact = KernelRidge(alpha=0.5, gamma=0.1).fit(X, Y[:, 0]).predict(X)
    wrong = KernelRidge(alpha=5.0, gamma=0.1).fit(X, Y[:, 0]).predict(X)
    ours = NystroemKernelRidge(n_components=len(X), alpha=0.5, gamma=0.1, tol=1e-12).fit(X, Y[:, 0]).predict(X)
    assert np.abs(ours - exact).max() < 1e-3 * np.abs(exact - wrong).max()


def test_multi_output_shares_the_passes_and_equals_separate_fits(regression):
    X, Y = regression
    both = NystroemKernelRidge(n_components=150, alpha=0.1, gamma=0.2, tol=1e-10, max_iter=300,
                               random_state=0).fit(X, Y)
    for column in range(2):
        alone = NystroemKernelRidge(n_components=150, alpha=0.1, gamma=0.2, tol=1e-10, max_iter=300,
                                    random_state=0).fit(X, Y[:, column])
        np.testing.assert_allclose(both.coef_[:, column], alone.coef_, rtol=1e-6, atol=1e-8 * np.abs(alone.coef_).max())


def test_the_preconditioner_matters(letter_subset):
    """After 15 iterations the preconditioned fit predicts as the exact solution does
    (within 1 %); plain CG on the same system is more than 10 % away."""
    X, y, _, _ = letter_subset
    C = X[np.random.default_rng(0).permutation(len(X))[:500]]
    K, K_mm = KernelOperator(X, C, kernel="gaussian", gamma=0.1), exact_kernel(C, gamma=0.1)
    Y = np.where(y[:, None] == np.unique(y)[None, :4], 1.0, -1.0)
    lam, n = 1e-6, len(X)
    preconditioned = nystroem_kernel_ridge(K, K_mm, Y, lam, max_iter=15, tol=0)
    plain = nystroem_kernel_ridge(K, K_mm, Y, lam, preconditioned=False, max_iter=15, tol=0)
    K_nm = exact_kernel(X, C, gamma=0.1)
    H = K_nm.T @ K_nm / n + lam * (K_mm + preconditioned.preconditioner.jitter * np.eye(len(C)))
    exact = K_nm @ scipy.linalg.lstsq(H, K_nm.T @ Y / n)[0]

    def distance(solution):
        return np.linalg.norm(K_nm @ solution.coef - exact) / np.linalg.norm(exact)

    assert distance(preconditioned) < 0.01
    assert distance(plain) > 0.1


def test_classification_matches_exact_kernel_ridge_on_letter(letter_subset):
    X, y, X_test, y_test = letter_subset
    """Two thirds of the rows as centres: within a point of the exact machine (the
    rest is the Nyström approximation's, which the experiments measure at scale)."""
    exact = KernelRidgeClassifier(alpha=1e-2, gamma=0.03).fit(X, y).score(X_test, y_test)
    ours = NystroemKernelRidgeClassifier(n_components=2000, alpha=1e-2, gamma=0.03, random_state=0).fit(X, y)
    assert ours.coef_.shape == (2000, 26)
    assert abs(ours.score(X_test, y_test) - exact) <= 0.01
    assert exact > 0.85


def test_float32_fit_is_close_to_float64(regression):
    X, Y = regression
    kwargs = dict(n_components=100, alpha=0.1, gamma=0.2, random_state=0, tol=1e-5)
    p64 = NystroemKernelRidge(**kwargs).fit(X, Y).predict(X)
    p32 = NystroemKernelRidge(**kwargs).fit(X.astype(np.float32), Y).predict(X.astype(np.float32))
    assert np.abs(p64 - p32).max() / np.abs(p64).max() < 1e-3


@pytest.mark.parametrize("cls", [NystroemKernelRidge, NystroemKernelRidgeClassifier, NystroemLogisticRegression])
def test_float32_fits_a_nearly_constant_kernel(cls):
    # rows of magnitude 0.1 at gamma = 0.02: the kernel is 1 to within float32's rounding
    # in most directions, which Falkon's float64 jitter left in the preconditioned system
    # as negative curvature
    for seed in range(5):
        X = np.random.default_rng(seed).standard_normal((12, 2)) * 0.1
        y = np.arange(12) % 3 if cls is not NystroemKernelRidge else np.arange(12) % 3 * 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the logistic path at tol on a flat kernel
            fits = [cls(n_components=10, alpha=1.0, gamma=0.02, random_state=0).fit(X.astype(dtype), y)
                    for dtype in (np.float32, np.float64)]
        method = "predict" if cls is NystroemKernelRidge else "decision_function"
        values = [getattr(fit, method)(X) for fit in fits]
        assert np.abs(values[0] - values[1]).max() <= 1e-2 * max(1.0, np.abs(values[1]).max())


def test_early_stopping_keeps_the_best_validation_iterate(regression):
    X, Y = regression
    reg = NystroemKernelRidge(n_components=200, alpha=1e-6, gamma=0.5, tol=1e-14, max_iter=200, early_stopping=True,
                              n_iter_no_change=3, random_state=0).fit(X, Y[:, 0])
    losses = reg.validation_losses_
    assert len(losses) == reg.n_iter_ < 200
    assert np.argmin(losses) == len(losses) - 1 - 3


def test_verbose_shows_a_progress_bar(regression, capsys):
    X, Y = regression
    NystroemKernelRidge(n_components=50, gamma=0.2, verbose=True, random_state=0).fit(X, Y[:, 0])
    assert "NystroemKernelRidge: conjugate gradient" in capsys.readouterr().err


# ------------------------------------------------------------------ logistic
def test_logistic_solves_scikit_learns_problem_on_nystroem_features():
    """alpha = 1 / C of LogisticRegression on the same centres' Nyström features, with and without intercept."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((500, 4))
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(500) > 0).astype(int)
    y[X[:, 2] > 0.8] = 1  # unbalanced: an intercept matters
    for alpha, intercept in ((1.0, True), (1.0, False), (1e-2, True)):
        ours = NystroemLogisticRegression(n_components=80, alpha=alpha, gamma=0.3, tol=1e-9, max_iter=60,
                                          cg_max_iter=200, fit_intercept=intercept, random_state=0).fit(X, y)
        ny = Nystroem(80, gamma=0.3, landmarks=ours.components_).fit(X)
        theirs = LogisticRegression(C=1 / alpha, fit_intercept=intercept, tol=1e-12,
                                    max_iter=20000).fit(ny.transform(X), y)
        assert (abs(float(ours.intercept_[0]) - float(theirs.intercept_[0])) < 1e-4) if intercept \
            else (ours.intercept_ == 0).all()
        a, b = ours.decision_function(X), theirs.decision_function(ny.transform(X))
        assert np.abs(a - b).max() < 1e-4 * np.abs(b).max()
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(ny.transform(X)), atol=1e-5)


def test_logistic_multiclass_is_one_vs_rest(letter_subset):
    X, y, X_test, y_test = letter_subset
    keep = np.isin(y, np.unique(y)[:3])
    X, y = X[keep], y[keep]
    ours = NystroemLogisticRegression(n_components=60, alpha=0.1, gamma=0.1, tol=1e-9, max_iter=60,
                                      cg_max_iter=200, random_state=0).fit(X, y)
    Z = Nystroem(60, gamma=0.1, landmarks=ours.components_).fit(X).transform(X)
    theirs = OneVsRestClassifier(LogisticRegression(C=10.0, tol=1e-12, max_iter=20000)).fit(Z, y)
    a, b = ours.decision_function(X), theirs.decision_function(Z)
    assert np.abs(a - b).max() < 1e-4 * np.abs(b).max()
    P = ours.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert (ours.classes_[P.argmax(axis=1)] == ours.predict(X)).all()


def test_logistic_newton_path_decreases_the_objective_at_the_target():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 3))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] > 0).astype(int)
    clf = NystroemLogisticRegression(n_components=200, alpha=0.1, gamma=0.5, random_state=0).fit(X, y)
    assert clf.penalties_[0] == 1e-3 and clf.penalties_[-1] == clf.lambda_
    at_target = [o for o, p in zip(clf.objectives_[1:], clf.penalties_) if p == clf.lambda_]
    assert all(b <= a + 1e-12 for a, b in zip(at_target, at_target[1:]))


def test_logistic_early_stopping_reads_the_validation_rows_once_per_newton_step():
    """The callback runs once per step: n_iter_no_change counts steps, not half steps."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 3))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] > 0).astype(int)
    clf = NystroemLogisticRegression(100, alpha=0.1, gamma=0.5, early_stopping=True, n_iter_no_change=50,
                                     random_state=0).fit(X, y)
    assert len(clf.validation_losses_) == clf.n_iter_ == len(clf.cg_iterations_)


def test_logistic_stops_when_newton_predicts_no_gain_worth_a_step():
    """At a tiny ridge the gradient criterion is out of CG's reach: the fit stops, converged,
    once the Newton decrement says the step gains at most tol of the objective, and its
    objective is then within 2 tol of what a 100-step, exact-CG run reaches."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(6)
    X = rng.standard_normal((4000, 8))
    y = (np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * rng.standard_normal(4000) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        quick = NystroemLogisticRegression(400, alpha=1e-6 * 4000, gamma=0.2, random_state=0).fit(X, y)
    assert quick.n_iter_ < quick.max_iter and quick.gradient_norms_[-1] > quick.tol
    patient = NystroemLogisticRegression(400, alpha=1e-6 * 4000, gamma=0.2, tol=1e-12, max_iter=100,
                                         cg_max_iter=400, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        patient.fit(X, y)
    assert quick.objectives_[-1] <= patient.objectives_[-1] * (1 + 2 * quick.tol)
    assert sum(quick.cg_iterations_) < 0.5 * sum(patient.cg_iterations_)


@pytest.mark.parametrize("alpha", [1e-20, 1e-100, 1e-300])
def test_logistic_fits_with_a_ridge_below_rounding(alpha):
    """Any alpha > 0 fits, as LogisticRegression(C=1e20) does: T D T^T / m + lam I lost its
    positive definiteness to rounding when lam underflowed against T D T^T / m."""
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((80, 4)), rng.integers(0, 2, 80)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = NystroemLogisticRegression(20, alpha=alpha, gamma=0.5, max_iter=100, random_state=3).fit(X, y)
    Z = Nystroem(20, gamma=0.5, landmarks=clf.components_).fit(X).transform(X)
    reference = LogisticRegression(C=1e20, max_iter=10_000).fit(Z, y)
    assert log_loss(y, clf.predict_proba(X)) <= log_loss(y, reference.predict_proba(Z)) + 1e-4
    # a small predicted gain ends the fit only near the optimum: here the inexact steps' gains
    # undershot the exact Newton decrement 10^4-fold while the gradient was 1.4 % of its start
    assert clf.gradient_norms_[-1] <= np.sqrt(clf.tol)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("cls", [NystroemKernelRidge, NystroemKernelRidgeClassifier, NystroemLogisticRegression])
def test_bad_input_gets_a_clear_error(cls, regression):
    X, Y = regression
    y = Y[:, 0] if cls is NystroemKernelRidge else (Y[:, 0] > 0).astype(int)
    with pytest.raises(NotFittedError):
        cls().predict(X)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls(n_components=10).fit(bad, y)
    with pytest.raises(ValueError, match="n_components must be an integer or 'auto'"):
        cls(n_components="all").fit(X, y)
    for alpha in (0.0, -1.0):
        with pytest.raises(ValueError, match="alpha"):
            cls(n_components=10, alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match=r"shape \(n_components, n_features\) = \(10, 5\)"):
        cls(n_components=10, landmarks=np.zeros((10, 4))).fit(X, y)
    # 200000 centres: their Gram matrix and the preconditioner's factors would take 1.3 TB
    with pytest.raises(InsufficientMemoryError, match="n_components=200000 is too large"):
        cls(n_components=200_000).fit(np.resize(X, (200_000, 5)), np.resize(y, 200_000))


def test_blocked_factorizations_match_lapack(monkeypatch):
    """Large orders are factored in blocks (OpenBLAS's threaded potrf and syrk crashed at m = 16384)."""
    from kernelmaps._solvers import cholesky, falkon

    rng = np.random.default_rng(7)
    A = rng.standard_normal((300, 120))
    K = A @ A.T / 120 + np.eye(300)
    T = np.triu(rng.standard_normal((300, 300)))
    w = rng.uniform(0, 1, 300)
    monkeypatch.setattr(cholesky, "BLOCK_ORDER", 64)
    U = falkon.upper_cholesky(K.copy())
    np.testing.assert_allclose(U, scipy.linalg.cholesky(K, lower=False), atol=1e-12)
    A_w = falkon.ridge_cholesky(T, w, 300, 1e-3)
    np.testing.assert_allclose(A_w.T @ A_w, (T * w) @ T.T / 300 + 1e-3 * np.eye(300), atol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        falkon.upper_cholesky(-np.eye(300))


# ------------------------------------------------------------------ centres and rows
NYSTROEM_ESTIMATORS = [Nystroem, NystroemKernelRidge, NystroemKernelRidgeClassifier, NystroemLogisticRegression]


def _fit(cls, X, y, **params):
    params.setdefault("gamma", 0.1)
    if cls is Nystroem:
        return cls(**params).fit(X)
    return cls(**params).fit(X, y if cls is NystroemKernelRidge else (y > 0).astype(int))


@pytest.mark.parametrize("cls", NYSTROEM_ESTIMATORS)
def test_more_centres_than_rows_use_every_row_with_one_warning(cls, regression):
    """Every Nyström estimator caps a rule's centres at the rows, with the same warning,
    pointing at the caller's line, and says in n_components_ how many it used."""
    X, Y = regression
    with pytest.warns(UserWarning) as caught:
        est = _fit(cls, X[:300], Y[:300, 0], n_components=500, random_state=0)
    assert [str(w.message) for w in caught] == [
        "n_components=500 is larger than the 300 rows fitted: using every row as a landmark, n_components_=300"]
    assert caught[0].filename == __file__
    assert est.n_components_ == 300 and est.components_.shape == (300, 5)
    assert sorted(est.component_indices_) == list(range(300))


@pytest.mark.parametrize("cls", NYSTROEM_ESTIMATORS[1:])
def test_early_stopping_caps_at_the_rows_left_for_training(cls, regression):
    X, Y = regression
    with pytest.warns(UserWarning, match="larger than the 240 rows fitted: .*n_components_=240"):
        est = _fit(cls, X[:300], Y[:300, 0], n_components=500, early_stopping=True, validation_fraction=0.2,
                   random_state=0)
    assert est.n_components_ == 240


@pytest.mark.parametrize("cls", NYSTROEM_ESTIMATORS[1:])
def test_auto_centres_are_every_row_of_a_small_problem_silently(cls, regression):
    X, Y = regression
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _fit(cls, X[:300], Y[:300, 0], random_state=0).n_components_ == 300
        assert _fit(cls, X[:200], Y[:200, 0], landmarks=X[:250] + 0.5).n_components_ == 250  # given: as given


@pytest.mark.parametrize("cls", NYSTROEM_ESTIMATORS)
def test_given_centres_are_not_capped(cls, regression):
    X, Y = regression
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = _fit(cls, X[:100], Y[:100, 0], n_components=150, landmarks=X[100:250])
    assert est.n_components_ == 150
    np.testing.assert_array_equal(est.components_, X[100:250])


def test_given_centres_of_a_callable_kernel_are_not_capped(regression):
    X, _ = regression

    def kernel(A, B):
        return exact_kernel(A, B, gamma=0.1)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ny = Nystroem(150, kernel=kernel, landmarks=X[100:250]).fit(X[:100])
    assert ny.n_components_ == 150
    with pytest.warns(UserWarning, match="n_components=150 is larger than the 100 rows fitted"):
        assert Nystroem(150, kernel=kernel).fit(X[:100]).n_components_ == 100


def test_the_capped_default_is_exact_kernel_ridge(regression):
    """With n_components='auto' on a small problem every row is a centre: KernelRidge's model."""
    X, Y = regression
    X_test = np.random.default_rng(4).standard_normal((100, 5))
    for target, ours, exact in [(Y, NystroemKernelRidge, KernelRidge),
                                ((Y[:, 0] > 0.3).astype(int), NystroemKernelRidgeClassifier, KernelRidgeClassifier)]:
        reference = exact(alpha=0.5, gamma=0.1).fit(X, target)
        model = ours(alpha=0.5, gamma=0.1, tol=1e-12, max_iter=300, random_state=0).fit(X, target)
        assert model.n_components_ == len(X)
        if ours is NystroemKernelRidge:
            assert np.abs(model.predict(X_test) - reference.predict(X_test)).max() < 1e-8 * np.abs(Y).max()
        else:
            scores = reference.decision_function(X_test)
            assert np.abs(model.decision_function(X_test) - scores).max() < 1e-8 * np.abs(scores).max()


@pytest.mark.parametrize("cls", NYSTROEM_ESTIMATORS[1:])
@pytest.mark.parametrize("fraction", [None, "0.1", np.nan, 0.0, 1.0, 1.5])
def test_validation_fraction_is_checked_before_the_split(cls, fraction, regression):
    X, Y = regression
    with pytest.raises(ValueError, match="validation_fraction"):
        _fit(cls, X[:80], Y[:80, 0], n_components=20, early_stopping=True, validation_fraction=fraction)


@pytest.mark.parametrize("cls", NYSTROEM_ESTIMATORS[1:])
def test_every_parameter_is_checked_before_any_work(cls, regression, monkeypatch):
    from kernelmaps._machines import nystroem as nystroem_machine

    def no_split(*args):
        raise AssertionError("the rows were split before the parameters were checked")

    monkeypatch.setattr(nystroem_machine, "validation_rows", no_split)
    X, Y = regression
    for bad in [dict(kernel="gauss"), dict(nu=-1.0), dict(landmarks="random"), dict(n_iter_no_change=0),
                dict(landmarks=np.zeros((20, 4))), dict(early_stopping="yes")]:
        with pytest.raises(ValueError, match=next(iter(bad))):
            _fit(cls, X[:80], Y[:80, 0], n_components=20, **{"early_stopping": True, **bad})
