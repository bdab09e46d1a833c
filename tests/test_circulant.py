"""Randomized circulant maps: the FFT pieces against dense circulant matrices, the map
against NumPy and against its kernel."""

import numpy as np
import pytest
from scipy.linalg import circulant

from kernelmaps import CirculantRandomFeatures, RandomFourierFeatures
from kernelmaps._maps.circulant import circulant_project, circulant_spectra, _circular_convolve, circular_correlate

from kernel_checks import assert_dense_form_matches, assert_within_bound_and_a_wrong_bandwidth_fails, kernel_mse_per_seed
from naive import central_differences, circulant_projection, fourier_features, stacked_circulants

GAMMA = 0.15  # kernel values spread over (0, 1] on the cloud, as in test_rff


def test_scipy_circulant_is_the_papers_circ():
    # eq. 12: first row (r0, r_{d-1}, ..., r1), first column r
    r = np.arange(5.0)
    R = circulant(r)
    np.testing.assert_array_equal(R[0], [0, 4, 3, 2, 1])
    np.testing.assert_array_equal(R[:, 0], r)


@pytest.mark.parametrize("d", [1, 2, 7, 16, 31])
def test_convolution_is_the_circulant_product(d):
    rng = np.random.default_rng(d)
    r, x, u = rng.standard_normal((3, d))
    np.testing.assert_allclose(_circular_convolve(r, x), circulant(r) @ x, atol=1e-12)
    np.testing.assert_allclose(circular_correlate(u, x), circulant(x).T @ u, atol=1e-12)


def test_correlation_is_the_gradient_of_eq_17():
    d = 9
    rng = np.random.default_rng(0)
    r, x, w = rng.standard_normal((3, d))
    # eq. 17: -circ(s_1(rev(x))) (w o sin(R x)), with s_1(rev(x)) = (x0, x_{d-1}, ..., x1)
    shifted_rev = np.roll(x[::-1], 1)
    paper = -circulant(shifted_rev) @ (w * np.sin(circulant(r) @ x))
    ours = circular_correlate(-w * np.sin(_circular_convolve(r, x)), x)
    np.testing.assert_allclose(ours, paper, atol=1e-12)
    (numeric,) = central_differences(lambda: w @ np.cos(circulant(r) @ x), [r])
    np.testing.assert_allclose(ours, numeric, atol=1e-7)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("d, n_blocks, n_outputs", [(7, 1, 3), (7, 1, 7), (6, 3, 17), (16, 4, 64)])
def test_project_matches_dense_circulant_blocks(dtype, tol, d, n_blocks, n_outputs):
    rng = np.random.default_rng(n_outputs)
    X = rng.standard_normal((11, d)).astype(dtype)
    r = rng.standard_normal((n_blocks, d)).astype(dtype)
    P = circulant_project(X, circulant_spectra(r), n_outputs)
    assert P.dtype == dtype and P.shape == (11, n_outputs)
    np.testing.assert_allclose(P, X.astype(np.float64) @ stacked_circulants(r)[:n_outputs].T, atol=tol, rtol=0)


@pytest.mark.parametrize("output, D", [("cos", 3), ("cos", 22), ("cossin", 22)])
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_transform_matches_numpy(output, D, dtype, tol, cloud):
    crf = CirculantRandomFeatures(D, gamma=GAMMA, output=output, random_state=3).fit(cloud)
    m = D if output == "cos" else D // 2
    assert crf.circulant_vectors_.shape == (-(-m // 5), 5)
    assert set(np.unique(crf.signs_)) <= {-1.0, 1.0}
    P = circulant_projection(cloud, crf.signs_, crf.circulant_vectors_, m)
    expected = fourier_features(P, crf.random_offset_, output)
    np.testing.assert_allclose(crf.transform(cloud.astype(dtype)), expected, atol=tol, rtol=0)


def test_signs_and_vectors_are_random():
    X = np.random.default_rng(0).standard_normal((10, 400))
    crf = CirculantRandomFeatures(4000, gamma=GAMMA, random_state=0).fit(X)
    assert 0.42 < np.mean(crf.signs_ > 0) < 0.58
    r = crf.circulant_vectors_
    assert abs(r.std() / np.sqrt(2 * GAMMA) - 1) < 0.05
    assert not np.allclose(r[0], r[1])


# The Gaussian with output="cos" is checked with the other maps in test_kernel_approximation.
# Typical error at D = 4096 on the cloud is 0.03-0.04; with the bandwidth off by a
# factor 2 it is above 0.2 (checked by mutating sqrt(2 gamma) to sqrt(gamma) and
# to sqrt(4 gamma) in GaussianProjectionMap._fit, orf.py: this test then fails).
def test_cossin_within_the_bound_and_a_wrong_bandwidth_fails(cloud):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: CirculantRandomFeatures(4096, gamma=gamma, output="cossin", random_state=0), cloud, GAMMA, 0.08)


def test_kernel_mse_within_ten_percent_of_rff_on_letter(letter_standardized):
    """The CNM paper's Fig. 3: randomized circulant MSE almost equal to RFF's.

    Measured on these 300 rows (d = 16) over 200 seeds: circulant/RFF = 1.07 at
    D = d, 4d and 16d. One circulant draw varies more than one RFF draw (relative
    standard deviation 13% against 6% per seed at D = 4d), so the ratio of the
    means over 600 seeds has a standard error of about 0.6%.
    """
    X = letter_standardized[:300]
    D = 4 * X.shape[1]
    gamma = RandomFourierFeatures(1, gamma="knn50", random_state=0).fit(X).gamma_
    ratio = (kernel_mse_per_seed(CirculantRandomFeatures, X, D, gamma, 600).mean()
             / kernel_mse_per_seed(RandomFourierFeatures, X, D, gamma, 600).mean())
    assert 0.9 < ratio < 1.1, ratio


@pytest.mark.parametrize("cls_name", ["CirculantRandomFeatures", "OptimizedCirculantMap"])
@pytest.mark.parametrize("n_features", [2, 16, 64, 65])
def test_narrow_inputs_projected_by_the_dense_matrix_give_the_fft_features(cls_name, n_features, monkeypatch):
    """Inputs of at most DENSE_MAX_FEATURES use the dense matrix the circulant
    blocks equal; forcing the FFT path must give the same features."""
    import kernelmaps
    from kernelmaps._maps import circulant

    X = np.random.default_rng(2).standard_normal((200, n_features))
    y = np.arange(200) % 2
    est = getattr(kernelmaps, cls_name)(96, random_state=0)
    est.fit(X, y) if cls_name == "OptimizedCirculantMap" else est.fit(X)
    assert_dense_form_matches(est, X, circulant, "DENSE_MAX_FEATURES",
                              n_features <= circulant.DENSE_MAX_FEATURES, monkeypatch)
