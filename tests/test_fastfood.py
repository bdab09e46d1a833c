"""Fastfood: the kernel against a dense NumPy reference, the map against its kernel."""

import numpy as np
import pytest

from kernelmaps import Fastfood, RandomFourierFeatures, relative_frobenius_error
from kernelmaps.fastfood import _fastfood_project

from kernel_checks import assert_within_bound_and_a_wrong_bandwidth_fails
from naive import fastfood_matrix


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_projection_matches_dense_matrix(dtype, rtol):
    rng = np.random.RandomState(0)
    ff = Fastfood(40, gamma=0.3, random_state=0).fit(rng.standard_normal((10, 11)))
    B, perm, G, S = ff.blocks_
    X = rng.standard_normal((7, 11))
    V = fastfood_matrix(B, perm, G, S)[:40, :11]
    P = np.empty((7, 40), dtype)
    _fastfood_project(X.astype(dtype), B.astype(dtype), perm, G.astype(dtype), S.astype(dtype), P)
    np.testing.assert_allclose(P, X @ V.T, rtol=rtol, atol=rtol * 10)


def test_rows_have_gaussian_norms():
    # rows of V must be distributed in norm like rows of N(0, 2 gamma I_p)
    gamma, p = 0.7, 64
    ff = Fastfood(p * 200, gamma=gamma, random_state=1).fit(np.zeros((2, p)) + np.arange(2)[:, None])
    norms2 = (fastfood_matrix(*ff.blocks_) ** 2).sum(axis=1) / (2 * gamma)  # ~ chi^2(p)
    assert abs(norms2.mean() - p) < 0.05 * p
    assert abs(norms2.var() - 2 * p) < 0.15 * 2 * p


GAMMA = 0.15


# The Gaussian with output="cos" is checked with the other maps in test_kernel_approximation.
def test_cossin_within_the_bound_and_a_wrong_bandwidth_fails(cloud):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: Fastfood(4096, gamma=gamma, output="cossin", random_state=0), cloud, GAMMA, 0.1)


def test_error_close_to_rff_on_letter(letter_standardized):
    X = letter_standardized[:300]
    rff = RandomFourierFeatures(256, random_state=0).fit(X)
    K = rff.kernel(X)
    e_ff, e_rff = [
        np.mean([relative_frobenius_error(K, Z=C(256, gamma=rff.gamma_, random_state=s).fit(X).transform(X))
                 for s in range(12)])
        for C in (Fastfood, RandomFourierFeatures)]
    assert e_ff < 1.2 * e_rff, (e_ff, e_rff)
