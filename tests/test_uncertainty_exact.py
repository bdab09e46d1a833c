"""The Gaussian-process reading of the exact ridge learners, against exact references.

``KernelRidge``'s posterior (mean, std, covariance) and evidence equal those of
scikit-learn's ``GaussianProcessRegressor`` with the same kernel, the noise variance
``alpha * amplitude`` and the signal variance ``amplitude``; ``LeastSquaresRegressor``'s
equal a brute-force Bayesian linear regression on the same features (a Gaussian
weight prior, a flat-prior intercept integrated out) and scikit-learn's
``BayesianRidge`` at its fitted precisions. ``amplitude='auto'`` is the numerical
maximizer of the evidence, and ``sample_y`` draws from the returned covariance.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, Exponentiation, Matern
from sklearn.linear_model import BayesianRidge

from kernelmaps import KernelRidge, LeastSquaresRegressor, RandomFourierFeatures, exact_kernel
from kernelmaps._core.validation import InsufficientMemoryError

from kernel_checks import covariance_z_scores

RTOL = 1e-6
#: Largest |z| of an entry of the empirical covariance (or mean) of the draws: a wrong
#: covariance (x2) gives |z| of about sqrt(N / 8) = 22 on the diagonal for N draws below.
Z_BOUND = 5.0
N_DRAWS = 4000


def smooth_problem(n=40, d=3, n_test=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y, rng.normal(size=(n_test, d))


def sklearn_gp(kernel, X, y, alpha, amplitude=1.0, sample_weight=None):
    """The GP of noise variance ``alpha * amplitude / w_i`` and prior ``amplitude * kernel``."""
    noise = alpha * amplitude / (1.0 if sample_weight is None else sample_weight)
    prior = kernel if amplitude == 1.0 else ConstantKernel(amplitude, "fixed") * kernel
    return GaussianProcessRegressor(prior, alpha=noise, optimizer=None, normalize_y=False).fit(X, y)


def assert_same_posterior(ours, theirs, X_test):
    mean, std = ours.predict(X_test, return_std=True)
    their_mean, their_std = theirs.predict(X_test, return_std=True)
    np.testing.assert_allclose(mean, their_mean, rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(std, their_std, rtol=RTOL)
    mean, cov = ours.predict(X_test, return_cov=True)
    their_mean, their_cov = theirs.predict(X_test, return_cov=True)
    np.testing.assert_allclose(mean, their_mean, rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(cov, their_cov, rtol=RTOL, atol=RTOL * np.abs(their_cov).max())
    np.testing.assert_allclose(ours.log_marginal_likelihood(), theirs.log_marginal_likelihood(), rtol=RTOL)


# ------------------------------------------------------------------ KernelRidge
@pytest.mark.parametrize("amplitude", [1.0, 2.5, 0.04])
@pytest.mark.parametrize("kernel, nu", [("gaussian", None), ("matern", 0.5), ("matern", 1.5), ("matern", 2.5)])
def test_kernel_ridge_is_sklearns_gaussian_process(kernel, nu, amplitude):
    X, y, X_test = smooth_problem()
    gamma, alpha = 0.3, 0.05
    length_scale = 1.0 / np.sqrt(2.0 * gamma)
    reference = RBF(length_scale) if kernel == "gaussian" else Matern(length_scale, nu=nu)
    ours = KernelRidge(alpha, kernel=kernel, gamma=gamma, nu=nu or 1.5, amplitude=amplitude).fit(X, y)
    assert ours.amplitude_ == amplitude and ours.noise_variance_ == pytest.approx(alpha * amplitude)
    assert_same_posterior(ours, sklearn_gp(reference, X, y, alpha, amplitude), X_test)


def test_kernel_ridge_of_a_kernel_with_its_own_diagonal_is_sklearns_gaussian_process():
    # (x.y + 1.5)^2: k(x, x) varies with x, so the prior variance is not the constant 1
    X, y, X_test = smooth_problem()
    ours = KernelRidge(0.2, kernel="polynomial", gamma=1.0, coef0=1.5, degree=2, amplitude=0.3).fit(X, y)
    assert_same_posterior(ours, sklearn_gp(Exponentiation(DotProduct(np.sqrt(1.5), "fixed"), 2), X, y, 0.2, 0.3),
                          X_test)
    callable_kernel = KernelRidge(0.2, kernel=lambda A, B: (A @ B.T + 1.5) ** 2, amplitude=0.3).fit(X, y)
    assert_same_posterior(callable_kernel, ours, X_test)


def test_weighted_kernel_ridge_is_the_gaussian_process_of_per_row_noise():
    X, y, X_test = smooth_problem()
    w = np.random.default_rng(3).uniform(0.2, 3.0, len(y))
    ours = KernelRidge(0.1, gamma=0.3, amplitude=1.7).fit(X, y, sample_weight=w)
    theirs = sklearn_gp(RBF(1.0 / np.sqrt(0.6)), X, y, 0.1, 1.7, sample_weight=w)
    assert_same_posterior(ours, theirs, X_test)


def test_auto_amplitude_maximizes_sklearns_evidence():
    X, y, _ = smooth_problem()
    gamma, alpha = 0.3, 0.05
    kernel = RBF(1.0 / np.sqrt(2.0 * gamma))
    fitted = KernelRidge(alpha, gamma=gamma).fit(X, y)

    def negative_evidence(log_amplitude):
        return -sklearn_gp(kernel, X, y, alpha, np.exp(log_amplitude)).log_marginal_likelihood()

    best = minimize_scalar(negative_evidence, bracket=(-3.0, 3.0), tol=1e-10)
    assert fitted.amplitude_ == pytest.approx(np.exp(best.x), rel=1e-5)
    assert fitted.log_marginal_likelihood() == pytest.approx(-best.fun, rel=1e-9)
    # the maximum: another amplitude has less evidence, and the mean never changes
    for factor in (0.9, 1.1):
        other = KernelRidge(alpha, gamma=gamma, amplitude=factor * fitted.amplitude_).fit(X, y)
        assert other.log_marginal_likelihood() < fitted.log_marginal_likelihood()
        np.testing.assert_allclose(other.predict(X), fitted.predict(X), rtol=1e-12)


def test_each_target_is_its_own_process_with_sklearns_shapes():
    X, y, X_test = smooth_problem()
    Y = np.column_stack([y, 10.0 * y[::-1] + 1.0])
    both = KernelRidge(0.05, gamma=0.3).fit(X, Y)
    mean, std = both.predict(X_test, return_std=True)
    _, cov = both.predict(X_test, return_cov=True)
    assert mean.shape == std.shape == (len(X_test), 2) and cov.shape == (len(X_test), len(X_test), 2)
    evidence = 0.0
    for j in range(2):
        alone = KernelRidge(0.05, gamma=0.3).fit(X, Y[:, j])
        assert both.amplitude_[j] == pytest.approx(alone.amplitude_, rel=1e-12)
        alone_mean, alone_std = alone.predict(X_test, return_std=True)
        np.testing.assert_allclose(std[:, j], alone_std, rtol=1e-10)
        np.testing.assert_allclose(cov[:, :, j], alone.predict(X_test, return_cov=True)[1], rtol=1e-10, atol=1e-14)
        evidence += alone.log_marginal_likelihood()
    assert both.log_marginal_likelihood() == pytest.approx(evidence, rel=1e-12)
    assert both.sample_y(X_test, 3, random_state=0).shape == (len(X_test), 2, 3)


@pytest.mark.parametrize("make", ["kernel_ridge", "least_squares"])
def test_sample_y_draws_from_the_returned_covariance(make):
    X, y, X_test = smooth_problem(n_test=6)
    if make == "kernel_ridge":
        model = KernelRidge(0.05, gamma=0.3).fit(X, y)
        rows = X_test
    else:
        model = LeastSquaresRegressor(0.5).fit(np.column_stack([X, X**2]), y)
        rows = np.column_stack([X_test, X_test**2])
    mean, cov = model.predict(rows, return_cov=True)
    samples = model.sample_y(rows, N_DRAWS, random_state=0)
    assert samples.shape == (len(rows), N_DRAWS)
    assert covariance_z_scores(samples, mean, cov).max() < Z_BOUND
    # the test has the power to see a wrong covariance
    assert covariance_z_scores(samples, mean, 2.0 * cov).max() > Z_BOUND
    assert covariance_z_scores(samples, mean + 10.0 * np.sqrt(np.diagonal(cov) / N_DRAWS), cov).max() > Z_BOUND
    np.testing.assert_array_equal(samples, model.sample_y(rows, N_DRAWS, random_state=0))


def test_sample_y_on_training_rows_factors_a_near_singular_covariance():
    X, y, _ = smooth_problem()
    model = KernelRidge(1e-8, gamma=0.3).fit(X, y)
    samples = model.sample_y(np.vstack([X, X[:3]]), 5, random_state=1)
    assert np.all(np.isfinite(samples))
    np.testing.assert_allclose(samples[:, 0], model.predict(np.vstack([X, X[:3]])), atol=1e-3)


def test_bad_requests_are_refused_before_any_work(monkeypatch):
    X, y, X_test = smooth_problem()
    model = KernelRidge(0.05, gamma=0.3).fit(X, y)

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel block was computed before the request was refused")

    monkeypatch.setattr(KernelRidge, "_cross_gram", no_kernel)
    too_many_rows = np.zeros((3_000_000, X.shape[1]))
    with pytest.raises(InsufficientMemoryError, match="X with 3000000 rows is too large"):
        model.predict(too_many_rows, return_cov=True)
    with pytest.raises(InsufficientMemoryError, match="X with 3000000 rows is too large"):
        model.sample_y(too_many_rows)
    with pytest.raises(ValueError, match="at most one of return_std and return_cov"):
        model.predict(X_test, return_std=True, return_cov=True)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((2, X.shape[1]), np.nan), return_std=True)
    with pytest.raises(ValueError, match="features"):
        model.predict(X_test[:, :2], return_std=True)
    with pytest.raises(ValueError, match="n_samples"):
        model.sample_y(X_test, n_samples=0)


@pytest.mark.parametrize("amplitude", [0.0, -1.0, np.inf, np.nan, "mle", True])
def test_an_impossible_amplitude_is_refused_at_fit(amplitude):
    X, y, _ = smooth_problem()
    with pytest.raises(ValueError, match="amplitude must be 'auto' or a positive finite float"):
        KernelRidge(amplitude=amplitude).fit(X, y)
    with pytest.raises(ValueError, match="amplitude must be 'auto' or a positive finite float"):
        LeastSquaresRegressor(amplitude=amplitude).fit(X, y)


def test_a_precomputed_gram_gives_the_evidence_but_no_posterior_at_new_rows():
    X, y, X_test = smooth_problem()
    named = KernelRidge(0.05, gamma=0.3).fit(X, y)
    precomputed = KernelRidge(0.05, kernel="precomputed").fit(exact_kernel(X, None, kernel="gaussian", gamma=0.3), y)
    assert precomputed.log_marginal_likelihood() == pytest.approx(named.log_marginal_likelihood(), rel=1e-12)
    with pytest.raises(ValueError, match="k\\(x, x\\) of the new rows"):
        precomputed.predict(exact_kernel(X_test, X, kernel="gaussian", gamma=0.3), return_std=True)


@pytest.mark.parametrize("model", [KernelRidge(), LeastSquaresRegressor()])
def test_unfitted_posterior_is_refused(model):
    X, _, _ = smooth_problem()
    for call in (lambda: model.predict(X, return_std=True), lambda: model.predict(X, return_cov=True),
                 lambda: model.sample_y(X), model.log_marginal_likelihood):
        with pytest.raises(NotFittedError):
            call()


# ------------------------------------------------------------------ LeastSquaresRegressor
def bayesian_linear_regression(Z, y, Z_test, alpha, amplitude, w, intercept):
    """Brute force: the posterior of ``f(z) = z^T b + c`` with ``b ~ N(0, s I)``, a flat prior
    on ``c`` (when ``intercept``), noise ``N(0, alpha s / w_i)``; the evidence with ``c``
    integrated out against the Lebesgue measure. Returns ``(mean, cov, log evidence)``."""
    n, D = Z.shape
    noise = alpha * amplitude
    Phi, Phi_test = (np.column_stack([np.ones(n), Z]), np.column_stack([np.ones(len(Z_test)), Z_test])) \
        if intercept else (Z, Z_test)
    prior_precision = np.eye(Phi.shape[1]) / amplitude
    if intercept:
        prior_precision[0, 0] = 0.0
    posterior_cov = np.linalg.inv(Phi.T @ (w[:, None] * Phi) / noise + prior_precision)
    posterior_mean = posterior_cov @ Phi.T @ (w * y) / noise
    marginal = amplitude * Z @ Z.T + np.diag(noise / w)
    inverse = np.linalg.inv(marginal)
    quadratic, dimension = y @ inverse @ y, n
    log_det = np.linalg.slogdet(marginal)[1]
    if intercept:
        ones = np.ones(n)
        precision = ones @ inverse @ ones
        quadratic -= (ones @ inverse @ y) ** 2 / precision
        dimension, log_det = n - 1, log_det + np.log(precision)
    evidence = -0.5 * quadratic - 0.5 * dimension * np.log(2 * np.pi) - 0.5 * log_det
    return Phi_test @ posterior_mean, Phi_test @ posterior_cov @ Phi_test.T, evidence


def linear_problem(n=30, D=5, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, D)) + 1.0
    y = Z @ rng.normal(size=D) + 2.0 + 0.3 * rng.normal(size=n)
    return Z, y, rng.normal(size=(7, D)) + 1.0, rng.uniform(0.3, 3.0, n)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("intercept", [True, False])
def test_least_squares_is_bayesian_linear_regression(intercept, weighted, sparse):
    Z, y, Z_test, w = linear_problem()
    alpha, amplitude = 0.7, 1.9
    mean, cov, evidence = bayesian_linear_regression(Z, y, Z_test, alpha, amplitude,
                                                     w if weighted else np.ones(len(y)), intercept)
    convert = sp.csr_matrix if sparse else np.asarray
    ours = LeastSquaresRegressor(alpha, fit_intercept=intercept, solver="normal", amplitude=amplitude).fit(
        convert(Z), y, sample_weight=w if weighted else None)
    our_mean, our_std = ours.predict(convert(Z_test), return_std=True)
    np.testing.assert_allclose(our_mean, mean, rtol=RTOL)
    np.testing.assert_allclose(our_std, np.sqrt(np.diagonal(cov)), rtol=RTOL)
    our_mean, our_cov = ours.predict(convert(Z_test), return_cov=True)
    np.testing.assert_allclose(our_cov, cov, rtol=RTOL, atol=RTOL * np.abs(cov).max())
    assert ours.log_marginal_likelihood() == pytest.approx(evidence, rel=RTOL)


def test_least_squares_auto_amplitude_maximizes_the_brute_force_evidence():
    Z, y, Z_test, w = linear_problem()
    fitted = LeastSquaresRegressor(0.7).fit(Z, y, sample_weight=w)
    best = minimize_scalar(lambda t: -bayesian_linear_regression(Z, y, Z_test, 0.7, np.exp(t), w, True)[2],
                           bracket=(-3.0, 3.0), tol=1e-10)
    assert fitted.amplitude_ == pytest.approx(np.exp(best.x), rel=1e-5)
    assert fitted.log_marginal_likelihood() == pytest.approx(-best.fun, rel=1e-9)
    assert fitted.noise_variance_ == pytest.approx(0.7 * fitted.amplitude_, rel=1e-12)


def test_least_squares_is_bayesian_ridge_at_its_fitted_precisions():
    Z, y, Z_test, _ = linear_problem(n=60)
    # no hyper-priors, so that BayesianRidge's score is the evidence; no intercept, whose
    # uncertainty BayesianRidge's std leaves out
    theirs = BayesianRidge(fit_intercept=False, compute_score=True, alpha_1=0.0, alpha_2=0.0, lambda_1=0.0,
                           lambda_2=0.0, tol=1e-12, max_iter=1000).fit(Z, y)
    ours = LeastSquaresRegressor(theirs.lambda_ / theirs.alpha_, fit_intercept=False,
                                 amplitude=1.0 / theirs.lambda_).fit(Z, y)
    assert ours.noise_variance_ == pytest.approx(1.0 / theirs.alpha_, rel=1e-12)
    mean, std = ours.predict(Z_test, return_std=True)
    their_mean, their_std = theirs.predict(Z_test, return_std=True)  # the std of y, with the noise
    np.testing.assert_allclose(mean, their_mean, rtol=RTOL)
    np.testing.assert_allclose(np.sqrt(std**2 + ours.noise_variance_), their_std, rtol=RTOL)
    assert ours.log_marginal_likelihood() == pytest.approx(theirs.scores_[-1], rel=RTOL)


def assert_same_gaussian_reading(model, reference, Z_test):
    """Two fits of the same rows: the same amplitude, evidence and posterior covariance."""
    np.testing.assert_allclose(model.amplitude_, reference.amplitude_, rtol=1e-9)
    assert model.log_marginal_likelihood() == pytest.approx(reference.log_marginal_likelihood(), rel=1e-9)
    cov, reference_cov = model.predict(Z_test, return_cov=True)[1], reference.predict(Z_test, return_cov=True)[1]
    np.testing.assert_allclose(cov, reference_cov, rtol=1e-9, atol=1e-9 * np.abs(reference_cov).max())


def test_a_feature_map_fit_has_the_posterior_of_its_features():
    X, y, X_test = smooth_problem(n=80)
    rff = RandomFourierFeatures(20, gamma=0.3, random_state=0).fit(X)
    mapped = LeastSquaresRegressor(0.1).fit(X, y, feature_map=rff)
    direct = LeastSquaresRegressor(0.1).fit(rff.transform(X), y)
    assert_same_gaussian_reading(mapped, direct, rff.transform(X_test))


def test_merged_partial_fits_have_the_posterior_of_one_fit():
    Z, y, Z_test, _ = linear_problem()
    one = LeastSquaresRegressor(0.7).fit(Z, y)
    first = LeastSquaresRegressor(0.7).partial_fit(Z[:12], y[:12])
    merged = first.merge(LeastSquaresRegressor(0.7).partial_fit(Z[12:], y[12:]))
    assert_same_gaussian_reading(merged, one, Z_test)


def test_least_squares_without_a_factor_refuses_the_posterior_by_name():
    Z, y, Z_test, _ = linear_problem()
    cg = LeastSquaresRegressor(0.7, solver="cg", tol=1e-12).fit(Z, y)
    normal = LeastSquaresRegressor(0.7, solver="normal").fit(Z, y)
    # CG's amplitude comes from its residuals: the same as the normal equations'
    assert cg.amplitude_ == pytest.approx(normal.amplitude_, rel=1e-6)
    for call in (lambda: cg.predict(Z_test, return_std=True), lambda: cg.sample_y(Z_test),
                 cg.log_marginal_likelihood):
        with pytest.raises(ValueError, match="solver_='cg' never forms"):
            call()
    flat = LeastSquaresRegressor(0.0).fit(Z, y)
    with pytest.raises(ValueError, match="alpha=0 is a flat prior"):
        flat.predict(Z_test, return_std=True)
    assert np.isnan(flat.amplitude_)


def test_a_dask_fit_has_the_posterior_of_the_rows_in_memory():
    da = pytest.importorskip("dask.array")
    Z, y, Z_test, _ = linear_problem()
    lazy = LeastSquaresRegressor(0.7).fit(da.from_array(Z, chunks=(8, -1)), da.from_array(y, chunks=8))
    assert_same_gaussian_reading(lazy, LeastSquaresRegressor(0.7).fit(Z, y), Z_test)
    with pytest.raises(TypeError, match="not a Dask array"):
        lazy.predict(da.from_array(Z_test, chunks=4), return_std=True)
