"""Random Fourier features: kernels against NumPy, the map against its kernel."""

import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler

from kernelmaps import RandomFourierFeatures, relative_frobenius_error
from kernelmaps.rff import _cos_features, _cossin_features


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
    _cos_features(got, offset, dtype(0.3))
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


def frob(kernel, gamma, X, n_components, seed, output="cos", true_gamma=None):
    rff = RandomFourierFeatures(n_components, kernel=kernel, gamma=gamma, output=output,
                                random_state=seed).fit(X)
    K = RandomFourierFeatures(1, kernel=kernel, gamma=true_gamma or gamma).fit(X).kernel(X)
    return relative_frobenius_error(K, Z=rff.transform(X))


# Bounds sit about 2x above the typical error at D = 4096 (0.04-0.07) and far
# below the error of a map with the bandwidth off by a factor of 2 (> 0.2).
BOUND = {"gaussian": 0.1, "laplacian": 0.12, "cauchy": 0.12}


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "cauchy"])
def test_error_is_below_the_bound_and_a_wrong_bandwidth_fails(kernel, cloud):
    assert frob(kernel, GAMMA, cloud, 4096, 0) < BOUND[kernel]
    for wrong in (2 * GAMMA, GAMMA / 2):
        assert frob(kernel, wrong, cloud, 4096, 0, true_gamma=GAMMA) > 2 * BOUND[kernel]


@pytest.mark.parametrize("output", ["cos", "cossin"])
def test_error_falls_as_one_over_sqrt_D(output, cloud):
    err = {D: np.mean([frob("gaussian", GAMMA, cloud, D, s, output) for s in range(4)])
           for D in (256, 4096)}
    ratio = err[256] / err[4096]  # sqrt(16) = 4 for O(1/sqrt(D))
    assert 3.0 < ratio < 5.3, ratio


def test_cossin_has_lower_error_than_cos_at_the_same_width(cloud):
    cos = np.mean([frob("gaussian", GAMMA, cloud, 512, s, "cos") for s in range(6)])
    pair = np.mean([frob("gaussian", GAMMA, cloud, 512, s, "cossin") for s in range(6)])
    assert pair < cos


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "cauchy"])
@pytest.mark.parametrize("output", ["cos", "cossin"])
def test_unbiased_over_seeds(kernel, output, cloud):
    X = cloud[:6]
    K = RandomFourierFeatures(2, kernel=kernel, gamma=GAMMA).fit(X).kernel(X)
    estimates = np.array([
        (lambda Z: Z @ Z.T)(RandomFourierFeatures(16, kernel=kernel, gamma=GAMMA, output=output,
                                                  random_state=s).fit(X).transform(X))
        for s in range(800)
    ])
    mean = estimates.mean(axis=0)
    stderr = estimates.std(axis=0) / np.sqrt(len(estimates)) + 1e-12
    assert np.all(np.abs(mean - K) < 4.5 * stderr), np.abs(mean - K) / stderr


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


def test_float32_close_to_float64(cloud):
    rff = RandomFourierFeatures(256, gamma=GAMMA, random_state=0).fit(cloud)
    np.testing.assert_allclose(rff.transform(cloud.astype(np.float32)), rff.transform(cloud), atol=1e-5)


def test_parameters_are_checked(cloud):
    with pytest.raises(ValueError, match="even n_components"):
        RandomFourierFeatures(7, output="cossin").fit(cloud)
    with pytest.raises(ValueError, match="output"):
        RandomFourierFeatures(8, output="sin").fit(cloud)
    with pytest.raises(ValueError, match="kernel must be one of"):
        RandomFourierFeatures(8, kernel="polynomial").fit(cloud)
    with pytest.raises(ValueError, match="gamma"):
        RandomFourierFeatures(8, gamma=0).fit(cloud)
    assert RandomFourierFeatures(8, kernel="rbf", gamma="median").fit(cloud).kernel_ == "gaussian"
