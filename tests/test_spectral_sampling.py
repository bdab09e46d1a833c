"""Matérn frequencies (RFF, ORF) and quasi-Monte Carlo frequencies (RFF): draws against their laws, maps
against their kernels."""

import warnings

import numpy as np
import pytest
from scipy import stats

from kernelmaps import OrthogonalRandomFeatures, RandomFourierFeatures, exact_kernel, relative_frobenius_error
from kernelmaps._maps.qmc import U_MIN, draw_spectral_qmc, sobol_uniforms, student_t_scale
from kernelmaps._maps.spectral import draw_spectral
from kernelmaps.orf import _draw_orthogonal_gaussian

from kernel_checks import assert_unbiased_over_seeds, assert_within_bound_and_a_wrong_bandwidth_fails, gram_error

GAMMA = 0.15  # kernel values spread over (0, 1] on the 5-d cloud, as in test_rff
MAPS = {"rff": RandomFourierFeatures, "orf": OrthogonalRandomFeatures}


def squared_norm_ratio(W, gamma):
    """``||w||^2 / (2 gamma d)`` per column: ``F(d, 2 nu)`` for a Matérn frequency
    (``chi^2(d)/d`` over an independent ``chi^2(2 nu)/(2 nu)``)."""
    return (W ** 2).sum(axis=0) / (2 * gamma * W.shape[0])


# ---------------------------------------------------------------- Matérn: the draws
@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_frequencies_are_multivariate_student_t(nu):
    d, gamma = 5, 0.3
    W = draw_spectral("matern", gamma, (d, 4000), np.random.RandomState(0), nu=nu)
    # each entry is a Student-t with 2 nu degrees of freedom and scale sqrt(2 gamma)
    assert stats.kstest(W[0] / np.sqrt(2 * gamma), stats.t(2 * nu).cdf).pvalue > 1e-3
    # and the entries of a column share their chi-square: the squared norm is F(d, 2 nu)
    assert stats.kstest(squared_norm_ratio(W, gamma), stats.f(d, 2 * nu).cdf).pvalue > 1e-3


@pytest.mark.parametrize("nu", [0.5, 1.5])
def test_one_chi_square_per_entry_would_fail(nu):
    """A chi-square per entry has the right one-dimensional marginals but samples a
    product of one-dimensional Student-t laws: the squared norms are not F(d, 2 nu)
    and the features approximate another kernel."""
    d, gamma, n = 5, GAMMA, 4000
    rng = np.random.RandomState(0)
    per_entry = (rng.normal(0, np.sqrt(2 * gamma), (d, n))
                 * student_t_scale(rng.chisquare(2 * nu, size=(d, n)), nu))
    assert stats.kstest(squared_norm_ratio(per_entry, gamma), stats.f(d, 2 * nu).cdf).pvalue < 1e-6
    if nu == 0.5:
        # measured: 0.06 with the shared draw, 0.59 with per-entry draws (0.21 at nu = 1.5)
        X = np.random.default_rng(5).standard_normal((300, d))
        rff = RandomFourierFeatures(n, kernel="matern", nu=nu, gamma=gamma, random_state=0).fit(X)
        K = rff.kernel(X)
        assert gram_error(rff, X, K) < 0.1
        rff.random_weights_ = per_entry
        assert gram_error(rff, X, K) > 0.3


@pytest.mark.parametrize("nu", [0.5, 2.5])
def test_orf_matern_norms_follow_the_radial_law_and_blocks_stay_orthogonal(nu):
    d, scale = 4, 0.7
    rng = np.random.RandomState(1)
    draws = [_draw_orthogonal_gaussian(d, d, scale, rng, nu=nu) for _ in range(800)]
    ratios = np.concatenate([squared_norm_ratio(W, scale ** 2 / 2) for W in draws])
    assert stats.kstest(ratios, stats.f(d, 2 * nu).cdf).pvalue > 1e-3
    gram = draws[0].T @ draws[0]
    np.testing.assert_allclose(gram - np.diag(np.diag(gram)), 0, atol=1e-10)


def test_orf_gaussian_draw_is_unchanged_by_the_matern_option():
    a = _draw_orthogonal_gaussian(3, 7, 0.5, np.random.RandomState(4))
    b = _draw_orthogonal_gaussian(3, 7, 0.5, np.random.RandomState(4), nu=None)
    np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- Matérn: the maps
# Measured at D = 4096 on the cloud: errors 0.04-0.06 (RFF and ORF, nu = 1/2, 3/2, 5/2);
# with gamma off by 2 they are 0.37-0.55.
@pytest.mark.parametrize("name", sorted(MAPS))
@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5])
def test_matern_within_the_bound_and_a_wrong_bandwidth_fails(name, nu, cloud):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: MAPS[name](4096, kernel="matern", nu=nu, gamma=gamma, random_state=0), cloud, GAMMA, 0.12)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_matern_drawn_with_another_nu_fails(name, cloud):
    """nu reaches the draw: frequencies of nu = 1/2 miss the nu = 5/2 kernel (measured 0.25-0.27)."""
    right = MAPS[name](4096, kernel="matern", nu=2.5, gamma=GAMMA, random_state=0).fit(cloud)
    K = right.kernel(cloud)
    wrong = MAPS[name](4096, kernel="matern", nu=0.5, gamma=GAMMA, random_state=0).fit(cloud)
    assert gram_error(right, cloud, K) < 0.08 < 0.18 < gram_error(wrong, cloud, K)


@pytest.mark.parametrize("name, output", [("rff", "cos"), ("rff", "cossin"), ("orf", "cos")])
def test_matern_unbiased_over_seeds(name, output, cloud):
    X = cloud[:6]
    maps = [MAPS[name](16, kernel="matern", nu=1.5, gamma=GAMMA, output=output, random_state=s).fit(X)
            for s in range(600)]
    assert_unbiased_over_seeds(maps, X, maps[0].kernel(X), n_sigma=4.5)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_kernel_method_evaluates_the_matern_of_the_fitted_nu(name, cloud):
    est = MAPS[name](8, kernel="matern", nu=2.5, gamma=GAMMA, random_state=0).fit(cloud)
    assert est.nu_ == 2.5
    np.testing.assert_allclose(est.kernel(cloud[:20]),
                               exact_kernel(cloud[:20], kernel="matern", gamma=GAMMA, nu=2.5), rtol=1e-12)
    gaussian = MAPS[name](8, gamma=GAMMA, nu="ignored", random_state=0).fit(cloud)  # nu is Matérn's only
    assert gaussian.nu_ is None


@pytest.mark.parametrize("name", sorted(MAPS))
@pytest.mark.parametrize("nu", [0, -1.5, np.inf, "1.5", True])
def test_bad_nu_is_a_clear_error(name, nu, cloud):
    with pytest.raises(ValueError, match="nu"):
        MAPS[name](8, kernel="matern", nu=nu).fit(cloud)


def test_orf_refuses_kernels_without_a_radial_density(cloud):
    with pytest.raises(ValueError, match="kernel must be one of"):
        OrthogonalRandomFeatures(8, kernel="laplacian").fit(cloud)


# ---------------------------------------------------------------- quasi-Monte Carlo
def test_sobol_points_are_reproducible_scrambled_and_warning_free():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scipy warns on a count that is not a power of two
        a = sobol_uniforms(100, 3, np.random.RandomState(0))
        b = sobol_uniforms(100, 3, np.random.RandomState(0))
        c = sobol_uniforms(100, 3, np.random.RandomState(1))
        full = sobol_uniforms(128, 3, np.random.RandomState(0))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    np.testing.assert_array_equal(a, full[:100])  # a prefix of the balanced net
    assert a.min() >= U_MIN and a.max() <= 1 - U_MIN
    # a net: each of the 128 intervals [k/128, (k+1)/128) of a coordinate holds one point
    assert np.array_equal(np.sort((full[:, 0] * 128).astype(int)), np.arange(128))


@pytest.mark.parametrize("kernel, law", [
    ("gaussian", lambda g: stats.norm(scale=np.sqrt(2 * g))),
    ("laplacian", lambda g: stats.cauchy(scale=g)),
    ("cauchy", lambda g: stats.laplace(scale=np.sqrt(g))),
    ("matern", lambda g: stats.t(2 * 1.5, scale=np.sqrt(2 * g))),
])
def test_qmc_frequencies_follow_the_spectral_density(kernel, law):
    """Each coordinate of the mapped Sobol' points has the spectral marginal (and
    Matérn's squared norms the F law); a scale off by sqrt(2) is rejected."""
    gamma, d = 0.3, 3
    W, b = draw_spectral_qmc(kernel, gamma, d, 4096, np.random.RandomState(0), nu=1.5)
    assert W.shape == (d, 4096) and np.isfinite(W).all()
    for row in W:
        assert stats.kstest(row, law(gamma).cdf).pvalue > 0.01
    assert stats.kstest(W[0] * np.sqrt(2), law(gamma).cdf).pvalue < 1e-6
    assert stats.kstest(b, stats.uniform(scale=2 * np.pi).cdf).pvalue > 0.01
    if kernel == "matern":
        assert stats.kstest(squared_norm_ratio(W, gamma), stats.f(d, 3.0).cdf).pvalue > 0.01


@pytest.mark.parametrize("kernel", ["gaussian", "matern", "laplacian", "cauchy"])
def test_qmc_error_is_below_mc_error(kernel):
    """Measured on these 300 rows in 4 dimensions at D = 512 over 8 seeds: QMC/MC
    = 0.50 (gaussian), 0.62 (matern 3/2), 0.67 (laplacian), 0.46 (cauchy); a QMC
    map with gamma off by 1.5x has an error above 0.22, twice MC's."""
    X = np.random.default_rng(1).standard_normal((300, 4))
    K = RandomFourierFeatures(1, kernel=kernel, gamma=0.2).fit(X).kernel(X)

    def error(sampling, seed):
        est = RandomFourierFeatures(512, kernel=kernel, gamma=0.2, sampling=sampling, random_state=seed).fit(X)
        return relative_frobenius_error(K, Z=est.transform(X))

    mc = np.mean([error("mc", s) for s in range(8)])
    qmc = np.mean([error("qmc", s) for s in range(8)])
    assert qmc < 0.8 * mc, (qmc, mc)


@pytest.mark.parametrize("output", ["cos", "cossin"])
def test_qmc_map_is_reproducible_and_unbiased(output, cloud):
    first = RandomFourierFeatures(24, gamma=GAMMA, output=output, sampling="qmc", random_state=3).fit(cloud)
    again = RandomFourierFeatures(24, gamma=GAMMA, output=output, sampling="qmc", random_state=3).fit(cloud)
    other = RandomFourierFeatures(24, gamma=GAMMA, output=output, sampling="qmc", random_state=4).fit(cloud)
    np.testing.assert_array_equal(first.transform(cloud), again.transform(cloud))
    assert not np.allclose(first.random_weights_, other.random_weights_)
    assert (first.random_offset_ is None) == (output == "cossin")
    X = cloud[:6]
    maps = [RandomFourierFeatures(16, gamma=GAMMA, output=output, sampling="qmc", random_state=s).fit(X)
            for s in range(400)]
    assert_unbiased_over_seeds(maps, X, maps[0].kernel(X), n_sigma=4.5)


def test_qmc_offsets_come_from_the_sobol_points(cloud):
    est = RandomFourierFeatures(64, gamma=GAMMA, sampling="qmc", random_state=0).fit(cloud)
    # one point per frequency: 64 offsets in 64 distinct intervals of width 2 pi / 64
    assert np.array_equal(np.sort((est.random_offset_ / (2 * np.pi) * 64).astype(int)), np.arange(64))


def test_bad_sampling_is_a_clear_error(cloud):
    for bad in ("sobol", "QMC", None):
        with pytest.raises(ValueError, match="sampling must be one of"):
            RandomFourierFeatures(8, sampling=bad).fit(cloud)


def test_qmc_beyond_sobol_dimensions_is_a_clear_error():
    X = np.random.default_rng(0).standard_normal((3, 21300))
    with pytest.raises(ValueError, match="sampling='qmc' needs 21301 Sobol' dimensions"):
        RandomFourierFeatures(8, gamma=1.0, sampling="qmc").fit(X)


# ---------------------------------------------------------------- quasi-Monte Carlo quantile features
@pytest.mark.parametrize("kernel", ["gaussian", "skewed_chi2", "skewed_intersection"])
def test_quantile_fourier_qmc_error_is_below_mc_error(kernel):
    """The same Sobol' points through Băzăvan et al.'s quantile functions h; measured on
    these 300 histograms in 4 bins at D = 512 over 6 seeds: QMC/MC 0.62 (gaussian), 0.13
    (skewed_chi2), 0.60 (skewed_intersection)."""
    from kernelmaps import QuantileFourierFeatures

    H = np.random.default_rng(2).dirichlet(np.ones(4), size=300)
    scale = 2.0 if kernel == "gaussian" else 0.5

    def error(sampling, seed):
        est = QuantileFourierFeatures(512, kernel=kernel, scale=scale, sampling=sampling, random_state=seed).fit(H)
        return relative_frobenius_error(est.kernel(H), Z=est.transform(H))

    mc = np.mean([error("mc", s) for s in range(6)])
    qmc = np.mean([error("qmc", s) for s in range(6)])
    assert qmc < 0.8 * mc, (qmc, mc)


def test_quantile_fourier_qmc_is_reproducible_and_checked():
    from kernelmaps import QuantileFourierFeatures

    H = np.random.default_rng(2).dirichlet(np.ones(4), size=50)
    a = QuantileFourierFeatures(100, kernel="skewed_chi2", sampling="qmc", random_state=1).fit(H)
    b = QuantileFourierFeatures(100, kernel="skewed_chi2", sampling="qmc", random_state=1).fit(H)
    np.testing.assert_array_equal(a.transform(H), b.transform(H))
    assert np.isfinite(a.quantiles_).all() and a.quantiles_.shape == (4, 100)
    with pytest.raises(ValueError, match="sampling must be one of"):
        QuantileFourierFeatures(8, sampling="sobol").fit(H)
