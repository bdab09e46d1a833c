"""Exact kernels against scikit-learn, bandwidth heuristics, metrics."""

import numpy as np
import pytest
from sklearn.metrics import pairwise

from kernelmaps import exact_kernel, kernel_mse, nrmse, relative_frobenius_error
from kernelmaps._kernels.bandwidth import resolve_gamma
from kernelmaps._kernels.names import canonical_kernel
from naive import kernel_matrix


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    return rng.standard_normal((70, 5)), rng.standard_normal((40, 5))


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("kernel, gamma, reference", [
    ("gaussian", 0.3, lambda X, Y, g: pairwise.rbf_kernel(X, Y, gamma=g)),
    ("rbf", 0.3, lambda X, Y, g: pairwise.rbf_kernel(X, Y, gamma=g)),
    ("laplacian", 0.2, lambda X, Y, g: pairwise.laplacian_kernel(X, Y, gamma=g)),
    ("cauchy", 0.7, lambda X, Y, g: kernel_matrix(X, Y, "cauchy", g)),
    ("polynomial", 0.5, lambda X, Y, g: pairwise.polynomial_kernel(X, Y, degree=3, gamma=g, coef0=1.5)),
    ("exponential", 0.25, lambda X, Y, g: np.exp(g * X @ Y.T)),
])
def test_exact_kernels_match_reference(kernel, gamma, reference, xy, dtype, rtol):
    X, Y = xy
    K = exact_kernel(X.astype(dtype), Y.astype(dtype), kernel=kernel, gamma=gamma, degree=3, coef0=1.5)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, reference(X, Y, gamma), rtol=rtol, atol=rtol * 1e-2)


def test_gaussian_gram_has_a_unit_diagonal(xy):
    X, _ = xy
    np.testing.assert_array_equal(np.diag(exact_kernel(X * 1e3, kernel="gaussian", gamma=1e-7)), 1.0)


def test_kernel_vocabulary_errors(xy):
    X, Y = xy
    assert canonical_kernel("RBF") == "gaussian"
    with pytest.raises(ValueError, match="kernel must be one of"):
        exact_kernel(X, Y, kernel="sigmoid")
    with pytest.raises(ValueError, match="same number of features"):
        exact_kernel(X, Y[:, :3])
    with pytest.raises(ValueError, match="gamma"):
        exact_kernel(X, Y, gamma=-1)
    with pytest.raises(ValueError, match="NaN"):
        exact_kernel(np.full((2, 5), np.nan), Y)
    with pytest.raises(ValueError, match="degree"):
        exact_kernel(X, Y, kernel="polynomial", degree=2.5)


def test_gamma_heuristics():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((3000, 8)) * 2.0
    assert resolve_gamma("scale", X, "gaussian", rng) == pytest.approx(1 / (8 * X.var()))
    # median distance between two N(0, 4 I_8) points is about sqrt(2 * 4 * 8) = 8
    g = resolve_gamma("median", X, "gaussian", np.random.RandomState(0))
    assert 1 / (2 * 8.5**2) < g < 1 / (2 * 7.3**2)
    g_knn = resolve_gamma("knn50", X, "gaussian", np.random.RandomState(0))
    sub = X[np.sort(np.random.RandomState(0).choice(3000, 1000, replace=False))]
    D = np.sqrt(((sub[:, None] - sub[None]) ** 2).sum(-1))
    sigma = np.sort(D, axis=1)[:, 50].mean()
    assert g_knn == pytest.approx(2 / sigma**2, rel=1e-10)
    assert resolve_gamma(0.25, X, "gaussian", rng) == 0.25
    for bad in (0, -1.0, np.nan, "mean", True):
        with pytest.raises(ValueError, match="gamma"):
            resolve_gamma(bad, X, "gaussian", rng)
    with pytest.raises(ValueError, match="shift-invariant"):
        resolve_gamma("median", X, "polynomial", rng)


@pytest.mark.parametrize("rng", [None, 0, np.int64(7), np.random.RandomState(0), np.random.default_rng(0)])
def test_gamma_heuristics_take_what_a_random_state_takes(rng):
    X = np.random.default_rng(1).standard_normal((1500, 3))
    g = resolve_gamma("median", X, "gaussian", rng)  # samples 1000 of the 1500 rows
    assert 1 / (2 * 2.35**2) < g < 1 / (2 * 2.0**2)  # N(0, I_3) pairs: median distance sqrt(2 * 2.37)
    if isinstance(rng, int):
        assert g == resolve_gamma("median", X, "gaussian", np.random.RandomState(rng))
    with pytest.raises(ValueError, match="seed"):
        resolve_gamma("median", X, "gaussian", "zero")


def test_metrics():
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    K_hat = np.array([[1.0, 0.3], [0.3, 1.0]])
    assert relative_frobenius_error(K, K_hat) == pytest.approx(np.sqrt(0.08) / np.sqrt(2.5))
    assert kernel_mse(K, K_hat) == pytest.approx(0.02)
    assert nrmse(K, K_hat) == pytest.approx(np.sqrt(0.02) / 0.5)
    Z = np.array([[1.0, 0.0], [0.5, np.sqrt(0.75)]])
    assert relative_frobenius_error(K, Z=Z) == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError, match="shape"):
        kernel_mse(K, np.eye(3))
    with pytest.raises(ValueError, match="exactly one"):
        kernel_mse(K)
