"""``X T^-1`` by column blocks of GEMMs, against LAPACK's triangular solve."""

import numpy as np
import pytest
import scipy.linalg

from kernelmaps import exact_kernel
from kernelmaps._solvers.triangular import BLOCK_COLUMNS, RightUpperSolve


@pytest.mark.parametrize("m", [1, 5, BLOCK_COLUMNS, 2 * BLOCK_COLUMNS + 37])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_solve_is_lapacks_triangular_solve(m, dtype):
    rng = np.random.default_rng(m)
    A = rng.standard_normal((m, m))
    T = np.triu(A) + m * np.eye(m)
    X = rng.standard_normal((50, m)).astype(dtype)
    ours = RightUpperSolve(T)(X)
    reference = scipy.linalg.solve_triangular(T, X.astype(np.float64).T, trans="T", lower=False).T
    assert ours.dtype == np.float64 and ours.shape == X.shape
    np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours @ T, X, rtol=1e-12, atol=1e-12)


def test_an_ill_conditioned_factor_keeps_the_residual_at_the_rounding():
    """The Cholesky factor of Gaussian kernel centres at a small bandwidth (cond(T) near 1e6)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 10))
    centres = X[:300]
    K_mm = exact_kernel(centres, None, gamma=0.002)
    T = scipy.linalg.cholesky(K_mm + 1e-12 * 300 * np.eye(300), lower=False)
    assert np.linalg.cond(T) > 1e5
    K = exact_kernel(X, centres, gamma=0.002)
    ours = RightUpperSolve(T)(K)
    reference = scipy.linalg.solve_triangular(T, K.T, trans="T", lower=False).T
    assert np.abs(ours @ T - K).max() < 1e-13
    assert np.abs(ours - reference).max() < 1e-8 * np.abs(reference).max()
