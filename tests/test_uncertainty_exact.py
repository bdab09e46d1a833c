"""The Gaussian-process reading of exact kernel ridge, against scikit-learn's.

``KernelRidge``'s posterior (mean, std, covariance) and evidence equal those of
scikit-learn's ``GaussianProcessRegressor`` with the same kernel, the noise variance
``alpha * amplitude`` and the signal variance ``amplitude``. ``amplitude='auto'`` is
the numerical maximizer of the evidence, and ``sample_y`` draws from the returned
covariance.
"""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, DotProduct, Exponentiation, Matern

from kernelmaps import KernelRidge, exact_kernel
from kernelmaps._core.validation import InsufficientMemoryError

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


def covariance_z_scores(samples, mean, cov):
    """z-scores of the draws' empirical mean and covariance entries against ``(mean, cov)``.

    A covariance entry from ``N`` Gaussian draws has the sampling variance
    ``(C_ij^2 + C_ii C_jj) / N``; the mean's entries ``C_ii / N``.
    """
    n_draws = samples.shape[1]
    centred = samples - mean[:, None]
    empirical = centred @ centred.T / n_draws
    variance = np.diagonal(cov)
    z_cov = (empirical - cov) / np.sqrt((cov**2 + np.outer(variance, variance)) / n_draws)
    z_mean = samples.mean(axis=1) - mean
    z_mean = z_mean / np.sqrt(variance / n_draws)
    return np.abs(np.concatenate([z_cov.ravel(), z_mean]))


def test_sample_y_draws_from_the_returned_covariance():
    X, y, X_test = smooth_problem(n_test=6)
    model = KernelRidge(0.05, gamma=0.3).fit(X, y)
    rows = X_test
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


def test_a_precomputed_gram_gives_the_evidence_but_no_posterior_at_new_rows():
    X, y, X_test = smooth_problem()
    named = KernelRidge(0.05, gamma=0.3).fit(X, y)
    precomputed = KernelRidge(0.05, kernel="precomputed").fit(exact_kernel(X, None, kernel="gaussian", gamma=0.3), y)
    assert precomputed.log_marginal_likelihood() == pytest.approx(named.log_marginal_likelihood(), rel=1e-12)
    with pytest.raises(ValueError, match="k\\(x, x\\) of the new rows"):
        precomputed.predict(exact_kernel(X_test, X, kernel="gaussian", gamma=0.3), return_std=True)


def test_unfitted_posterior_is_refused():
    X, _, _ = smooth_problem()
    model = KernelRidge()
    for call in (lambda: model.predict(X, return_std=True), lambda: model.predict(X, return_cov=True),
                 lambda: model.sample_y(X), model.log_marginal_likelihood):
        with pytest.raises(NotFittedError):
            call()
