"""Every Cholesky factorization of a large order runs in blocks.

OpenBLAS's threaded ``potrf`` crashes the process (SIGSEGV) on large orders once
other threads have run, so no learner may hand LAPACK a matrix of order above
``BLOCK_ORDER``. These tests lower that order and record every LAPACK call.
"""

import numpy as np
import pytest
import scipy.linalg

import kernelmaps
from kernelmaps._solvers import cholesky

BLOCK = 48


@pytest.fixture
def lapack_orders(monkeypatch):
    """The orders of every ``scipy.linalg.cholesky`` call, with blocks of order ``BLOCK``."""
    orders = []
    plain = scipy.linalg.cholesky

    def recording(a, *args, **kwargs):
        orders.append(np.shape(a)[0])
        return plain(a, *args, **kwargs)

    monkeypatch.setattr(cholesky, "BLOCK_ORDER", BLOCK)
    monkeypatch.setattr(scipy.linalg, "cholesky", recording)
    monkeypatch.setattr(np.linalg, "cholesky", lambda *a, **k: pytest.fail("np.linalg.cholesky called"))
    return orders


def _spd(n, seed=0):
    A = np.random.default_rng(seed).standard_normal((n, n // 2))
    return A @ A.T / n + 0.1 * np.eye(n)


@pytest.mark.parametrize("n", [BLOCK - 1, BLOCK, 3 * BLOCK + 5])
def test_lower_cholesky_matches_lapack_and_keeps_its_input(lapack_orders, n):
    K = _spd(n)
    kept = K.copy()
    L = cholesky.lower_cholesky(K)
    np.testing.assert_array_equal(K, kept)
    np.testing.assert_allclose(L, np.tril(L), atol=0)
    np.testing.assert_allclose(L @ L.T, kept, atol=1e-12)
    assert max(lapack_orders) <= BLOCK
    factor = cholesky.cho_factor(K.copy(), overwrite_a=True)
    b = np.arange(n, dtype=float)
    np.testing.assert_allclose(K @ scipy.linalg.cho_solve(factor, b), b, atol=1e-9)


def test_a_matrix_that_is_not_positive_definite_raises_in_blocks(lapack_orders):
    K = _spd(3 * BLOCK)
    K[2 * BLOCK + 3, 2 * BLOCK + 3] = -5.0
    with pytest.raises(np.linalg.LinAlgError):
        cholesky.lower_cholesky(K)


def test_kernel_ridge_and_its_posterior_factor_in_blocks(lapack_orders):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((4 * BLOCK, 3))
    y = np.sin(X[:, 0])
    model = kernelmaps.KernelRidge(alpha=0.1, gamma=0.5).fit(X, y)
    assert lapack_orders and max(lapack_orders) <= BLOCK
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    np.testing.assert_allclose(model.dual_coef_, np.linalg.solve(K + 0.1 * np.eye(len(X)), y), atol=1e-8)
    X_new = rng.standard_normal((2 * BLOCK, 3))
    lapack_orders.clear()
    samples = model.sample_y(X_new, n_samples=3, random_state=0)
    assert samples.shape == (2 * BLOCK, 3)
    assert lapack_orders and max(lapack_orders) <= BLOCK
