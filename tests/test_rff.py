"""Random Fourier features: kernels against NumPy, the map against its kernel."""

import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler

from kernelmaps import RandomFourierFeatures, relative_frobenius_error
from kernelmaps._maps.cosine import cos_features, _cossin_features

from kernel_checks import assert_unbiased_over_seeds, assert_within_bound_and_a_wrong_bandwidth_fails, gram_error


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-14), (np.float32, 1e-6)])
@pytest.mark.parametrize("magnitude", [1.0, 1e7])
def test_cos_features_matches_numpy(dtype, tol, magnitude):
    rng = np.random.default_rng(0)
    P = (rng.standard_normal((37, 129)) * 5).astype(dtype)
    P[5, 3] = magnitude  # a row that needs the libm fallback when large
    offset = rng.uniform(0, 2 * np.pi, 129).astype(dtype)
    # the argument is formed in the working dtype, as the map does
    expected = 0.3 * np.cos((P + offset).astype(np.float64))
    got = P.copy()
    cos_features(got, offset, dtype(0.3))
    np.testing.assert_allclose(got, expected, atol=tol * 4, rtol=0)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-14), (np.float32, 1e-6)])
def test_cossin_features_matches_numpy(dtype, tol):
    rng = np.random.default_rng(1)
    P = (rng.standard_normal((23, 65)) * 5).astype(dtype)
    P[2, 1] = 3e7
    out = np.empty((23, 130), dtype)
    _cossin_features(P, out, dtype(0.5))
    P64 = P.astype(np.float64)
    np.testing.assert_allclose(out, 0.5 * np.hstack([np.cos(P64), np.sin(P64)]), atol=tol, rtol=0)


GAMMA = 0.15  # kernel values spread over (0, 1] on this cloud


def rff_error(X, n_components, seed, output="cos"):
    return gram_error(RandomFourierFeatures(n_components, gamma=GAMMA, output=output, random_state=seed).fit(X), X)


# The Gaussian kernel with output="cos" is checked with the other maps in
# test_kernel_approximation; these are the variants it does not draw.

# Bounds sit about 2x above the typical error at D = 4096 (0.04-0.07) and far
# below the error of a map with the bandwidth off by a factor of 2 (> 0.2).
@pytest.mark.parametrize("kernel", ["laplacian", "cauchy"])
def test_other_kernels_within_the_bound_and_a_wrong_bandwidth_fails(kernel, cloud):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: RandomFourierFeatures(4096, kernel=kernel, gamma=gamma, random_state=0), cloud, GAMMA, 0.12)


def test_cossin_error_falls_as_one_over_sqrt_D(cloud):
    err = {D: np.mean([rff_error(cloud, D, s, "cossin") for s in range(4)]) for D in (256, 4096)}
    ratio = err[256] / err[4096]  # sqrt(16) = 4 for O(1/sqrt(D))
    assert 3.0 < ratio < 5.3, ratio


def test_cossin_has_lower_error_than_cos_at_the_same_width(cloud):
    cos = np.mean([rff_error(cloud, 512, s, "cos") for s in range(6)])
    pair = np.mean([rff_error(cloud, 512, s, "cossin") for s in range(6)])
    assert pair < cos


@pytest.mark.parametrize("kernel, output", [("gaussian", "cossin"), ("laplacian", "cos"), ("laplacian", "cossin"),
                                            ("cauchy", "cos"), ("cauchy", "cossin")])
def test_other_kernels_and_outputs_unbiased_over_seeds(kernel, output, cloud):
    X = cloud[:6]
    maps = [RandomFourierFeatures(16, kernel=kernel, gamma=GAMMA, output=output, random_state=s).fit(X)
            for s in range(800)]
    assert_unbiased_over_seeds(maps, X, maps[0].kernel(X), n_sigma=4.5)


def test_no_worse_than_rbf_sampler_on_letter(letter_standardized):
    X = letter_standardized
    ours = RandomFourierFeatures(4096, gamma="knn50", random_state=0).fit(X)
    K = ours.kernel(X)
    err_ours = np.mean([
        relative_frobenius_error(K, Z=RandomFourierFeatures(4096, gamma=ours.gamma_, random_state=s)
                                 .fit(X).transform(X)) for s in range(3)])
    err_sk = np.mean([
        relative_frobenius_error(K, Z=RBFSampler(gamma=ours.gamma_, n_components=4096, random_state=10 + s)
                                 .fit(X).transform(X)) for s in range(3)])
    assert err_ours <= 1.1 * err_sk, (err_ours, err_sk)


def test_same_draws_as_rbf_sampler_for_the_same_seed(cloud):
    ours = RandomFourierFeatures(64, gamma=GAMMA, random_state=7).fit(cloud)
    theirs = RBFSampler(gamma=GAMMA, n_components=64, random_state=7).fit(cloud)
    np.testing.assert_allclose(ours.transform(cloud), theirs.transform(cloud), atol=1e-12)


def test_kernel_is_checked(cloud):
    """The parameters every cosine map shares are checked in test_cosine_maps."""
    with pytest.raises(ValueError, match="kernel must be one of"):
        RandomFourierFeatures(8, kernel="polynomial").fit(cloud)
    assert RandomFourierFeatures(8, kernel="rbf", gamma="median").fit(cloud).kernel_ == "gaussian"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cos_features_report_non_finite_arguments(dtype):
    """The epilogue's return value replaces the transform's finiteness pass."""
    P = np.ones((4, 600), dtype)
    offset = np.zeros(600, dtype)
    assert cos_features(P.copy(), offset, dtype(0.5))
    for bad in (np.inf, -np.inf, np.nan):
        Q = P.copy()
        Q[2, 300] = bad
        assert not cos_features(Q, offset, dtype(0.5))
        assert np.isnan(Q[2, 300]) and np.isfinite(np.delete(Q.ravel(), 2 * 600 + 300)).all()


def test_rff_transform_overflowing_to_infinity_is_a_clear_error():
    from kernelmaps._core.validation import FeatureOverflowError

    X = np.random.default_rng(0).standard_normal((50, 64))
    rff = RandomFourierFeatures(64, gamma=1.0, random_state=0).fit(X)
    huge = np.full((5, 64), 1e307)
    with np.errstate(over="ignore"):
        assert not np.isfinite(huge @ rff.random_weights_).all()  # the arguments overflow
    with pytest.raises(FeatureOverflowError, match="overflowed float64"):
        rff.transform(huge)
