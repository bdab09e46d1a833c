"""Fastfood: the kernel against a dense NumPy reference, the map against its kernel."""

import functools

import numpy as np
import pytest
from scipy.linalg import hadamard

from kernelmaps import Fastfood, RandomFourierFeatures, relative_frobenius_error
from kernelmaps.fastfood import _fastfood_project

from map_checks import gaussian_map_error


def dense_fastfood(B, perm, G, S):
    """The stacked ``S H G Pi H B`` blocks as one dense matrix (rows = frequencies)."""
    p = B.shape[1]
    H = hadamard(p).astype(np.float64)
    blocks = []
    for b in range(B.shape[0]):
        Pi = np.eye(p)[perm[b]]  # (Pi v)[k] = v[perm[k]]
        blocks.append(np.diag(S[b]) @ H @ np.diag(G[b]) @ Pi @ H @ np.diag(B[b]))
    return np.vstack(blocks)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_projection_matches_dense_matrix(dtype, rtol):
    rng = np.random.RandomState(0)
    ff = Fastfood(40, gamma=0.3, random_state=0).fit(rng.standard_normal((10, 11)))
    B, perm, G, S = ff.blocks_
    X = rng.standard_normal((7, 11))
    V = dense_fastfood(B, perm, G, S)[:40, :11]
    P = np.empty((7, 40), dtype)
    _fastfood_project(X.astype(dtype), B.astype(dtype), perm, G.astype(dtype), S.astype(dtype), P)
    np.testing.assert_allclose(P, X @ V.T, rtol=rtol, atol=rtol * 10)


def test_rows_have_gaussian_norms():
    # rows of V must be distributed in norm like rows of N(0, 2 gamma I_p)
    gamma, p = 0.7, 64
    ff = Fastfood(p * 200, gamma=gamma, random_state=1).fit(np.zeros((2, p)) + np.arange(2)[:, None])
    norms2 = (dense_fastfood(*ff.blocks_) ** 2).sum(axis=1) / (2 * gamma)  # ~ chi^2(p)
    assert abs(norms2.mean() - p) < 0.05 * p
    assert abs(norms2.var() - 2 * p) < 0.15 * 2 * p


GAMMA = 0.15


frob = functools.partial(gaussian_map_error, Fastfood)


@pytest.mark.parametrize("output", ["cos", "cossin"])
def test_error_is_below_the_bound_and_a_wrong_bandwidth_fails(output, cloud):
    assert frob(GAMMA, cloud, 4096, 0, output) < 0.1
    for wrong in (2 * GAMMA, GAMMA / 2):
        assert frob(wrong, cloud, 4096, 0, output, true_gamma=GAMMA) > 0.2


def test_error_falls_with_D(cloud):
    err = {D: np.mean([frob(GAMMA, cloud, D, s) for s in range(4)]) for D in (256, 4096)}
    assert 3.0 < err[256] / err[4096] < 5.3


def test_unbiased_over_seeds(cloud):
    X = cloud[:6]
    K = Fastfood(2, gamma=GAMMA).fit(X).kernel(X)
    est = np.array([(lambda Z: Z @ Z.T)(Fastfood(16, gamma=GAMMA, random_state=s).fit(X).transform(X))
                    for s in range(800)])
    stderr = est.std(axis=0) / np.sqrt(len(est)) + 1e-12
    assert np.all(np.abs(est.mean(axis=0) - K) < 4.5 * stderr)


def test_error_close_to_rff_on_letter(letter_standardized):
    X = letter_standardized[:300]
    rff = RandomFourierFeatures(256, random_state=0).fit(X)
    K = rff.kernel(X)
    e_ff, e_rff = [
        np.mean([relative_frobenius_error(K, Z=C(256, gamma=rff.gamma_, random_state=s).fit(X).transform(X))
                 for s in range(12)])
        for C in (Fastfood, RandomFourierFeatures)]
    assert e_ff < 1.2 * e_rff, (e_ff, e_rff)


def test_float32_close_to_float64(cloud):
    ff = Fastfood(256, gamma=GAMMA, random_state=0).fit(cloud)
    np.testing.assert_allclose(ff.transform(cloud.astype(np.float32)), ff.transform(cloud), atol=1e-5)


def test_parameters_are_checked(cloud):
    with pytest.raises(ValueError, match="even n_components"):
        Fastfood(7, output="cossin").fit(cloud)
    with pytest.raises(ValueError, match="output"):
        Fastfood(8, output="sin").fit(cloud)
    with pytest.raises(ValueError, match="gamma"):
        Fastfood(8, gamma=-1.0).fit(cloud)
