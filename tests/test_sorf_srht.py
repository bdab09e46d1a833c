"""SORF and SRHT: kernels against dense NumPy references, maps against their kernels."""

import numpy as np
import pytest
from scipy.linalg import hadamard

from kernelmaps import (SRHT, Fastfood, RandomFourierFeatures, StructuredOrthogonalFeatures, kernel_mse,
                        relative_frobenius_error)
from kernelmaps.sorf import _sorf_project
from kernelmaps.srht import _srht, _srht_apply, _srht_draw


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_sorf_projection_matches_dense_matrix(dtype, rtol):
    rng = np.random.RandomState(0)
    so = StructuredOrthogonalFeatures(40, gamma=0.3, random_state=0).fit(rng.standard_normal((10, 11)))
    D3, D2, D1 = so.blocks_
    p = so.padded_features_
    assert p == max(16, StructuredOrthogonalFeatures.min_block)
    H = hadamard(p).astype(np.float64)
    W = np.vstack([H @ np.diag(D1[b]) @ H @ np.diag(D2[b]) @ H @ np.diag(D3[b])
                   for b in range(so.n_blocks_)])[:40, :11]
    X = rng.standard_normal((7, 11))
    P = np.empty((7, 40), dtype)
    _sorf_project(X.astype(dtype), D3.astype(dtype), D2.astype(dtype), D1.astype(dtype), P)
    np.testing.assert_allclose(P, X @ W.T, rtol=rtol, atol=rtol * 10)
    # rows: orthogonal within a block, norm sqrt(p) * sqrt(2 gamma)
    Wb = np.vstack([H @ np.diag(D1[0]) @ H @ np.diag(D2[0]) @ H @ np.diag(D3[0])])
    np.testing.assert_allclose(Wb @ Wb.T, p * 2 * 0.3 * np.eye(p), atol=1e-10)


def test_sorf_small_inputs_are_padded_to_a_useful_block():
    """At d = 2 unpadded SORF draws from a tiny finite set of frequencies and its
    error was 3.6 (vs 0.43 for RFF) on banana; padded, it stays near RFF's."""
    from kernelmaps import RandomFourierFeatures, relative_frobenius_error

    X = np.random.default_rng(2).standard_normal((300, 2))
    errors = {}
    for cls in (StructuredOrthogonalFeatures, RandomFourierFeatures):
        # unpadded: 1.26 against RFF's 0.12; padded to 32: 0.13
        errors[cls.__name__] = np.mean([
            relative_frobenius_error(cls(512, gamma=1.0).fit(X).kernel(X),
                                     Z=cls(512, gamma=1.0, random_state=s).fit(X).transform(X))
            for s in range(4)])
    assert errors["StructuredOrthogonalFeatures"] < 1.3 * errors["RandomFourierFeatures"], errors


@pytest.fixture(scope="module")
def cloud():
    return np.random.default_rng(5).standard_normal((300, 16))


def test_sorf_error_bound_and_wrong_bandwidth_fails(cloud):
    gamma = 0.02
    K = StructuredOrthogonalFeatures(2, gamma=gamma).fit(cloud).kernel(cloud)

    def err(g):
        Z = StructuredOrthogonalFeatures(4096, gamma=g, random_state=0).fit(cloud).transform(cloud)
        return relative_frobenius_error(K, Z=Z)

    assert err(gamma) < 0.05
    for wrong in (2 * gamma, gamma / 2):
        assert err(wrong) > 0.2


def test_mse_ordering_on_letter(letter_standardized):
    """Yu et al. (2016): at the same D, SORF < RFF; Fastfood ~ RFF (paired over seeds)."""
    X = letter_standardized[:300]
    rff = RandomFourierFeatures(64, gamma="scale", random_state=0).fit(X)
    K = rff.kernel(X)
    mse = {C: np.array([kernel_mse(K, Z=C(64, gamma=rff.gamma_, random_state=s).fit(X).transform(X))
                        for s in range(20)])
           for C in (RandomFourierFeatures, StructuredOrthogonalFeatures, Fastfood)}
    rff_mse, sorf_mse, ff_mse = mse.values()
    diff = rff_mse - sorf_mse
    assert diff.mean() > 2 * diff.std() / np.sqrt(len(diff)), (rff_mse.mean(), sorf_mse.mean())
    assert ff_mse.mean() < 1.2 * rff_mse.mean(), (ff_mse.mean(), rff_mse.mean())


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize("n_features, n_components", [(11, 5), (11, 40), (16, 16)])
def test_srht_matches_dense_matrix(dtype, rtol, n_features, n_components):
    rng = np.random.RandomState(0)
    signs, index = _srht_draw(n_features, n_components, rng)
    p = signs.shape[1]
    H = hadamard(p).astype(np.float64)
    M = np.vstack([H @ np.diag(s) for s in signs])[index, :n_features] / np.sqrt(n_components)
    X = rng.standard_normal((7, n_features))
    out = np.empty((7, n_components), dtype)
    _srht_apply(X.astype(dtype), signs.astype(dtype), index, dtype(1 / np.sqrt(n_components)), out)
    np.testing.assert_allclose(out, X @ M.T, rtol=rtol, atol=rtol * 10)
    np.testing.assert_allclose(_srht(X.astype(dtype), signs, index), out, rtol=rtol)


def test_srht_preserves_inner_products_in_expectation():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 50))
    est = np.array([(lambda Z: Z @ Z.T)(SRHT(8, random_state=s).fit(X).transform(X)) for s in range(2000)])
    K = SRHT(8).fit(X).kernel(X)
    np.testing.assert_allclose(K, X @ X.T)
    stderr = est.std(axis=0) / np.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - K) < 4.5 * stderr)
    # a wrong scale (sqrt(2) off) is far outside
    assert np.any(np.abs(2 * est.mean(axis=0) - K) > 10 * stderr)


def test_srht_error_falls_with_D():
    X = np.random.default_rng(1).standard_normal((100, 500))
    K = X @ X.T
    err = [np.mean([relative_frobenius_error(K, Z=SRHT(D, random_state=s).fit(X).transform(X))
                    for s in range(6)]) for D in (32, 128)]
    # sampling without replacement from p = 512 coordinates: sqrt((1/32 - 1/512) / (1/128 - 1/512)) = 2.2
    assert 1.7 < err[0] / err[1] < 2.8, err
    X2 = X[:, :256]  # D = p keeps every coordinate of an orthogonal transform: exact
    np.testing.assert_allclose(SRHT(256, random_state=0).fit(X2).transform(X2) @ SRHT(256, random_state=0)
                               .fit(X2).transform(X2).T, X2 @ X2.T, rtol=1e-10, atol=1e-9)


def test_srht_rejects_a_wide_block():
    signs, index = _srht_draw(8, 4, np.random.RandomState(0))
    with pytest.raises(ValueError, match="columns"):
        _srht(np.ones((2, 9)), signs, index)
