"""Fourier kernel learning (Băzăvan, Li & Sminchisescu, NIPS 2012, section 3.2).

The histogram kernels against their formulas, the quantile-parametrized map
against its exact kernel (and the paper's Table 1 convention), the RFF-SKL and
KRR-GD gradients against finite differences, the learners' final models against
scikit-learn's ridge solvers, and the learning claim on synthetic data.
"""

import numpy as np
import pytest
import scipy.stats
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.kernel_approximation import SkewedChi2Sampler
from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import chi2_kernel

import kernelmaps.kernel_ridge_gd as krr_gd
from kernelmaps import (FourierKernelRidge, FourierKernelRidgeClassifier, KernelRidgeGD, KernelRidgeGDClassifier,
                        QuantileFourierFeatures, RandomFourierFeatures, exact_kernel, relative_frobenius_error)
from kernelmaps.fourier_kernel_ridge import FourierValidationObjective
from kernelmaps.kernel_ridge_gd import ExactValidationObjective
from kernelmaps.quantile_fourier import draw_quantile_frequencies, unit_quantiles

KERNELS = ("gaussian", "skewed_chi2", "skewed_intersection")


@pytest.fixture(scope="module")
def histograms():
    rng = np.random.default_rng(1)
    H = rng.dirichlet(np.full(6, 0.5), size=(120,))
    return H[:80], H[80:]


# ------------------------------------------------------------ exact kernels
def _naive(X, Y, term):
    return np.array([[term(x, y) for y in Y] for x in X])


@pytest.mark.parametrize("gamma, c", [(0.5, 1.0), (1.3, 0.2), (0.3, 2.0)])
def test_skewed_kernels_are_table_1(histograms, gamma, c):
    X, Y = histograms
    chi2 = _naive(X, Y, lambda x, y: np.prod(2 * (x + c) ** gamma * (y + c) ** gamma
                                             / ((x + c) ** (2 * gamma) + (y + c) ** (2 * gamma))))
    inter = _naive(X, Y, lambda x, y: np.prod(np.minimum(((x + c) / (y + c)) ** gamma, ((y + c) / (x + c)) ** gamma)))
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="skewed_chi2", gamma=gamma, skewedness=c), chi2,
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="skewed_intersection", gamma=gamma, skewedness=c), inter,
                               rtol=1e-12, atol=1e-15)
    K32 = exact_kernel(X.astype(np.float32), Y.astype(np.float32), kernel="skewed_chi2", gamma=gamma, skewedness=c)
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, chi2, rtol=2e-5, atol=1e-6)


def test_scikit_learns_skewed_chi2_is_gamma_one_half(histograms):
    """sklearn's kernel ``prod 2 sqrt(x+c) sqrt(y+c) / (x + y + 2c)`` is Table 1's at sigma = 1/2."""
    X, Y = histograms
    reference = _naive(X, Y, lambda x, y: np.prod(2 * np.sqrt(x + 0.3) * np.sqrt(y + 0.3) / (x + y + 0.6)))
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="skewed_chi2", gamma=0.5, skewedness=0.3), reference,
                               rtol=1e-12)


def test_chi2_kernels(histograms):
    X, Y = histograms
    X = X.copy()
    X[:5, :2] = 0.0  # empty bins in both: 0 / 0 terms contribute nothing
    Y = Y.copy()
    Y[:5, :2] = 0.0
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="chi2", gamma=0.7), chi2_kernel(X, Y, gamma=0.7),
                               rtol=1e-13)
    additive = _naive(X, Y, lambda x, y: np.sum(np.divide(2 * x * y, x + y, out=np.zeros_like(x), where=x + y > 0)))
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="additive_chi2"), additive, rtol=1e-13)
    # the additive kernel of a histogram with itself is its mass
    np.testing.assert_allclose(np.diag(exact_kernel(X, kernel="additive_chi2")), X.sum(axis=1), rtol=1e-13)


def test_histogram_kernels_refuse_input_outside_their_domain(histograms):
    X, _ = histograms
    with pytest.raises(ValueError, match=r"non-negative.*X\[0, 1\] = -0.1"):
        exact_kernel(np.where(np.arange(6) == 1, -0.1, X), kernel="chi2")
    with pytest.raises(ValueError, match=r"above -skewedness = -0.5; Y\[0, 0\] = -0.5"):
        exact_kernel(X, np.full((1, 6), -0.5), kernel="skewed_intersection", skewedness=0.5)
    with pytest.raises(ValueError, match="skewedness must be a finite real"):
        exact_kernel(X, kernel="skewed_chi2", skewedness=np.inf)


# ------------------------------------------------------- the quantile map
def test_unit_quantiles_are_those_of_the_spectral_densities():
    u = np.linspace(0.01, 0.99, 99)
    np.testing.assert_allclose(unit_quantiles("gaussian", u), scipy.stats.norm.ppf(u), rtol=1e-12, atol=1e-14)
    # scipy's hyperbolic secant has density sech(x) / pi; ours sech(pi w / 2) / 2 is it scaled by 2 / pi
    np.testing.assert_allclose(unit_quantiles("skewed_chi2", u), 2 / np.pi * scipy.stats.hypsecant.ppf(u),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(unit_quantiles("skewed_intersection", u), scipy.stats.cauchy.ppf(u),
                               rtol=1e-12, atol=1e-14)


def test_scale_one_half_is_scikit_learns_skewed_chi2_sampler(histograms):
    X, Y = histograms
    ours = QuantileFourierFeatures(300, kernel="skewed_chi2", scale=0.5, skewedness=0.4, random_state=7).fit(X)
    peer = SkewedChi2Sampler(skewedness=0.4, n_components=300, random_state=7).fit(X)
    assert np.max(np.abs(ours.transform(Y) - peer.transform(Y))) < 1e-10


def _scattered(n, d, seed):
    return np.random.default_rng(seed).uniform(0.0, 3.0, size=(n, d))


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_kernel_with_per_dimension_scales_against_its_exact_kernel(kernel):
    """1/sqrt(D) falls of the error, and a map at twice or half the scales fails."""
    X = _scattered(200, 4, 3)
    sigma = np.array([0.3, 0.6, 1.0, 1.5])
    K = QuantileFourierFeatures(8, kernel=kernel, scale=sigma, skewedness=0.5).fit(X).kernel(X)

    def error(D, scale):
        return np.median([relative_frobenius_error(K, Z=QuantileFourierFeatures(
            D, kernel=kernel, scale=scale, skewedness=0.5, random_state=seed).fit(X).transform(X))
            for seed in range(3)])

    small, large = error(64, sigma), error(1024, sigma)
    assert large < 0.15 and small / large > 2.5, (small, large)
    for wrong in (2 * sigma, sigma / 2):
        assert error(1024, wrong) > max(3 * large, 0.15), (wrong, large)


def test_the_gaussian_convention_sigma_multiplies_the_frequencies():
    """k = exp(-sigma^2 |x - y|^2 / 2). Table 1 also prints exp(-|x - y|^2 / (2 sigma^2))
    and the sqrt(2)-off exp(-sigma^2 |x - y|^2) is a common slip: both must fail."""
    X = np.random.default_rng(0).standard_normal((200, 3))
    sigma = 0.8
    Z = QuantileFourierFeatures(4096, scale=sigma, random_state=0).fit(X).transform(X)
    right = relative_frobenius_error(exact_kernel(X, gamma=sigma ** 2 / 2), Z=Z)
    off_by_sqrt2 = relative_frobenius_error(exact_kernel(X, gamma=sigma ** 2), Z=Z)
    bandwidth_reading = relative_frobenius_error(exact_kernel(X, gamma=1 / (2 * sigma ** 2)), Z=Z)
    assert right < 0.05 and off_by_sqrt2 > 5 * right and bandwidth_reading > 5 * right, \
        (right, off_by_sqrt2, bandwidth_reading)


def test_set_scales_moves_sigma_without_redrawing(histograms):
    X, Y = histograms
    qff = QuantileFourierFeatures(64, kernel="skewed_intersection", scale=1.0, random_state=2).fit(X)
    quantiles, offsets = qff.quantiles_.copy(), qff.random_offset_.copy()
    sigma = np.linspace(0.2, 2.0, 6)
    Z = qff.set_scales(sigma).transform(Y)
    np.testing.assert_array_equal(qff.quantiles_, quantiles)
    np.testing.assert_array_equal(qff.random_offset_, offsets)
    fresh = QuantileFourierFeatures(64, kernel="skewed_intersection", scale=sigma, random_state=2).fit(X)
    np.testing.assert_array_equal(Z, fresh.transform(Y))
    np.testing.assert_array_equal(qff.random_weights_, sigma[:, None] * quantiles)


def test_quantile_map_errors(histograms):
    X, _ = histograms
    with pytest.raises(NotFittedError):
        QuantileFourierFeatures().set_scales(1.0)
    qff = QuantileFourierFeatures(16, kernel="skewed_chi2", skewedness=0.1).fit(X)
    with pytest.raises(ValueError, match=r"shape \(6,\).*got shape \(5,\)"):
        qff.set_scales(np.ones(5))
    with pytest.raises(ValueError, match="finite and >= 0 in every dimension.*index 2"):
        qff.set_scales([1, 1, -1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"above -skewedness = -0.1; the smallest entry is -0.19"):
        qff.transform(X - 0.2)
    with pytest.raises(ValueError, match=r"above -skewedness"):
        QuantileFourierFeatures(kernel="skewed_chi2", skewedness=0.1).fit(X - 0.2)
    with pytest.raises(ValueError, match="kernel must be one of"):
        QuantileFourierFeatures(kernel="laplacian").fit(X)
    with pytest.raises(ValueError, match="scale must be"):
        QuantileFourierFeatures(scale="large").fit(X)


# ------------------------------------------------------------- gradients
def _split(seed=0, d=5, n=90, n_val=40, targets=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.05, 2.0, size=(n + n_val, d))
    T = rng.standard_normal((n + n_val, targets))
    return X[:n], T[:n], X[n:], T[n:], rng.uniform(0.3, 1.2, size=d)


def _finite_differences(objective, sigma, step=1e-6):
    return np.array([(objective(sigma + step * e, False)[0] - objective(sigma - step * e, False)[0]) / (2 * step)
                     for e in np.eye(len(sigma))])


@pytest.mark.parametrize("kernel", KERNELS)
def test_rff_skl_gradient_matches_finite_differences(kernel):
    X, T, U, V, sigma = _split()
    inputs = (X, U) if kernel == "gaussian" else (np.log(X + 0.5), np.log(U + 0.5))
    H, b = draw_quantile_frequencies(kernel, X.shape[1], 96, np.random.RandomState(0))
    objective = FourierValidationObjective(inputs[0], T, inputs[1], V, H, b, 0.05)
    _, gradient = objective(sigma)
    numeric = _finite_differences(objective, sigma)
    assert np.max(np.abs(gradient - numeric)) < 1e-6 * np.max(np.abs(numeric)), (gradient, numeric)


def test_krr_gd_gradient_matches_finite_differences():
    X, T, U, V, sigma = _split(1)
    objective = ExactValidationObjective(X, T, U, V, 0.05)
    _, gradient = objective(sigma)
    numeric = _finite_differences(objective, sigma)
    assert np.max(np.abs(gradient - numeric)) < 1e-6 * np.max(np.abs(numeric)), (gradient, numeric)


def test_rff_objective_tends_to_the_exact_one_as_D_grows():
    """At the same sigma the RFF-SKL validation loss approaches KRR-GD's: the gap
    (median over seeds) shrinks with D and is small at D = 2048."""
    X, T, U, V, sigma = _split(2, targets=1)
    sigma = sigma * 2  # a kernel narrow enough that few features fit it poorly
    exact = ExactValidationObjective(X, T, U, V, 1e-3)(sigma)[0]

    def gap(D):
        gaps = []
        for seed in range(5):
            H, b = draw_quantile_frequencies("gaussian", X.shape[1], D, np.random.RandomState(seed))
            gaps.append(abs(FourierValidationObjective(X, T, U, V, H, b, 1e-3)(sigma)[0] - exact) / exact)
        return np.median(gaps)

    small, large = gap(32), gap(2048)
    assert large < 0.05 and large < small / 4, (small, large)


# ------------------------------------------------------------ the learners
def test_final_models_are_the_ridge_solutions_at_the_learned_scales():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(150)
    rff = FourierKernelRidge(64, alpha=0.3, max_iter=5, random_state=0).fit(X, y)
    Z = rff.feature_map_.transform(X)
    ridge = Ridge(alpha=0.3, fit_intercept=False, solver="cholesky").fit(Z, y - y.mean())
    np.testing.assert_allclose(rff.predict(X), ridge.predict(Z) + y.mean(), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(rff.feature_map_.scales_, rff.scales_)

    exact = KernelRidgeGD(alpha=0.3, max_iter=5, random_state=0).fit(X, y)
    reference = SklearnKernelRidge(alpha=0.3, kernel="rbf", gamma=0.5).fit(X * exact.scales_, y - y.mean())
    np.testing.assert_allclose(exact.predict(X), reference.predict(X * exact.scales_) + y.mean(),
                               rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("cls, extra", [(FourierKernelRidge, {"n_components": 128}), (KernelRidgeGD, {})])
def test_history_scales_and_stopping(cls, extra):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 4))
    y = np.sin(2 * X[:, 0])
    est = cls(alpha=0.01, max_iter=40, random_state=0, **extra).fit(X, y)
    history = est.objective_history_
    assert len(history) == est.n_iter_ + 1 and est.n_iter_ <= 40
    assert np.all(np.diff(history) <= 1e-12 * history[0])  # L-BFGS-B's line search only descends
    assert history[-1] < 0.2 * history[0]
    common = cls(alpha=0.01, per_dimension=False, max_iter=10, random_state=0, **extra).fit(X, y)
    assert np.ptp(common.scales_) == 0
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        cls(alpha=0.01, max_iter=1, tol=0.0, random_state=0, **extra).fit(X, y)
    refit = cls(alpha=0.01, max_iter=40, random_state=0, **extra).fit(X, y)
    np.testing.assert_array_equal(refit.scales_, est.scales_)


@pytest.mark.parametrize("cls", [FourierKernelRidgeClassifier, KernelRidgeGDClassifier])
def test_classifiers_share_one_kernel_across_one_vs_rest(cls):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 3))
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes along the first dimension only
    extra = {"n_components": 256} if cls is FourierKernelRidgeClassifier else {}
    clf = cls(alpha=0.01, max_iter=30, random_state=0, **extra).fit(X, y)
    assert clf.decision_function(X).shape == (300, 3)
    assert clf.score(X, y) > 0.9
    assert clf.scales_[0] > 3 * clf.scales_[1:].max(), clf.scales_


def test_learner_parameter_errors():
    X = np.random.default_rng(6).standard_normal((40, 3))
    y = X[:, 0]
    for params, message in [({"alpha": 0}, "alpha must be finite and > 0"),
                            ({"validation_fraction": 0.0}, r"validation_fraction must be finite and > 0"),
                            ({"validation_fraction": 1.0}, r"validation_fraction must be in \(0, 1\)"),
                            ({"per_dimension": "yes"}, "per_dimension must be True or False"),
                            ({"max_iter": 0}, "max_iter must be >= 1"),
                            ({"scale_penalty": -1.0}, "scale_penalty must be finite and >= 0")]:
        for cls in (FourierKernelRidge, KernelRidgeGD):
            with pytest.raises(ValueError, match=message):
                cls(**params).fit(X, y)
    with pytest.raises(ValueError, match="empty training or validation split"):
        KernelRidgeGD(validation_fraction=0.9).fit(X[:2], y[:2])
    with pytest.raises(ValueError, match="above -skewedness"):
        FourierKernelRidge(16, kernel="skewed_chi2").fit(X, y)
    with pytest.raises(ValueError, match="kernel must be one of"):
        FourierKernelRidge(16, kernel="cauchy").fit(X, y)


def test_krr_gd_refuses_more_samples_than_its_documented_limit(monkeypatch):
    monkeypatch.setattr(krr_gd, "KRR_GD_MAX_SAMPLES", 30)
    X = np.random.default_rng(7).standard_normal((31, 2))
    with pytest.raises(ValueError, match=r"KRR_GD_MAX_SAMPLES=30 samples.*n_samples=31"):
        KernelRidgeGD().fit(X, X[:, 0])


# ------------------------------------------------- the learning claim
def _informative_and_noise(seed, n):
    """5 informative dimensions N(0, 1) and 15 noise dimensions N(0, 10^2)."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n, 5)), 10.0 * rng.standard_normal((n, 15))])
    y = np.sin(1.5 * X[:, :5]).sum(axis=1) + 0.1 * rng.standard_normal(n)
    return X, y


def _best_single_gamma_rff(X, y, X_test, D, alpha, seed):
    """RFF ridge with one gamma chosen on the same 25 % validation split."""
    n_val = len(X) // 4
    best = None
    for gamma in np.logspace(-5, 1, 13):
        rff = RandomFourierFeatures(D, gamma=gamma, random_state=seed).fit(X[n_val:])
        ridge = Ridge(alpha=alpha).fit(rff.transform(X[n_val:]), y[n_val:])
        error = np.mean((ridge.predict(rff.transform(X[:n_val])) - y[:n_val]) ** 2)
        best = min(best or (np.inf, None), (error, gamma))
    rff = RandomFourierFeatures(D, gamma=best[1], random_state=seed).fit(X)
    return Ridge(alpha=alpha).fit(rff.transform(X), y).predict(rff.transform(X_test))


@pytest.mark.slow
def test_learning_per_dimension_scales_beats_the_best_single_gamma():
    """The issue's claim, on 5 seeds: RFF-SKL's test error is below that of the best
    single-gamma RFF ridge (grid of 13 gammas on a validation split), and the learned
    scales of the 15 noise dimensions end below 0.1x those of the 5 informative ones.

    600 training rows, D = 1000 for both. Measured (``python -m
    benchmarks.experiments run fkl-synthetic``): test MSE 0.087-0.194 against
    1.82-2.23 for the single gamma, noise/informative scale ratio 0.008-0.022. At
    D = 400 or 800 two of the five seeds stop in a worse local optimum where one
    informative scale has collapsed (ratio 0.3-0.8), though still far below the
    single gamma's error: the random-feature objective is less smooth than the
    exact one at small D.
    """
    for seed in range(5):
        X, y = _informative_and_noise(seed, 1600)
        X_train, y_train, X_test, y_test = X[:600], y[:600], X[600:], y[600:]
        skl = FourierKernelRidge(1000, alpha=0.1, random_state=seed).fit(X_train, y_train)
        learned = np.mean((skl.predict(X_test) - y_test) ** 2)
        single = np.mean((_best_single_gamma_rff(X_train, y_train, X_test, 1000, 0.1, seed) - y_test) ** 2)
        assert learned < single, (seed, learned, single)
        assert skl.scales_[5:].max() < 0.1 * skl.scales_[:5].min(), (seed, skl.scales_)
