"""SORF and SRHT: kernels against dense NumPy references, maps against their kernels."""

import numpy as np
import pytest

from kernelmaps import SRHT, Fastfood, RandomFourierFeatures, StructuredOrthogonalFeatures
from kernelmaps._maps.hadamard import sorf_project, srht_apply, srht_draw

from kernel_checks import gram_error, kernel_mse_per_seed
from naive import sorf_matrix, srht


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_sorf_projection_matches_dense_matrix(dtype, rtol):
    rng = np.random.RandomState(0)
    so = StructuredOrthogonalFeatures(40, gamma=0.3, random_state=0).fit(rng.standard_normal((10, 11)))
    D3, D2, D1 = so.blocks_
    p = so.padded_features_
    assert p == max(16, StructuredOrthogonalFeatures.min_block)
    W = sorf_matrix(D3, D2, D1)
    X = rng.standard_normal((7, 11))
    P = np.empty((7, 40), dtype)
    sorf_project(X.astype(dtype), D3.astype(dtype), D2.astype(dtype), D1.astype(dtype), P)
    np.testing.assert_allclose(P, X @ W[:40, :11].T, rtol=rtol, atol=rtol * 10)
    # rows: orthogonal within a block, norm sqrt(p) * sqrt(2 gamma)
    np.testing.assert_allclose(W[:p] @ W[:p].T, p * 2 * 0.3 * np.eye(p), atol=1e-10)


def test_sorf_small_inputs_are_padded_to_a_useful_block():
    """At d = 2 unpadded SORF draws from a tiny finite set of frequencies and its
    error was 3.6 (vs 0.43 for RFF) on banana; padded, it stays near RFF's."""
    X = np.random.default_rng(2).standard_normal((300, 2))
    errors = {}
    for cls in (StructuredOrthogonalFeatures, RandomFourierFeatures):
        # unpadded: 1.26 against RFF's 0.12; padded to 32: 0.13
        errors[cls.__name__] = np.mean([gram_error(cls(512, gamma=1.0, random_state=s).fit(X), X) for s in range(4)])
    assert errors["StructuredOrthogonalFeatures"] < 1.3 * errors["RandomFourierFeatures"], errors


def test_mse_ordering_on_letter(letter_standardized):
    """Yu et al. (2016): at the same D, SORF < RFF; Fastfood ~ RFF (paired over seeds)."""
    X = letter_standardized[:300]
    gamma = RandomFourierFeatures(64, gamma="scale", random_state=0).fit(X).gamma_
    rff_mse, sorf_mse, ff_mse = (kernel_mse_per_seed(cls, X, 64, gamma, 20)
                                 for cls in (RandomFourierFeatures, StructuredOrthogonalFeatures, Fastfood))
    diff = rff_mse - sorf_mse
    assert diff.mean() > 2 * diff.std() / np.sqrt(len(diff)), (rff_mse.mean(), sorf_mse.mean())
    assert ff_mse.mean() < 1.2 * rff_mse.mean(), (ff_mse.mean(), rff_mse.mean())


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
@pytest.mark.parametrize("n_features, n_components", [(11, 5), (11, 40), (16, 16)])
def test_srht_matches_dense_matrix(dtype, rtol, n_features, n_components):
    rng = np.random.RandomState(0)
    signs, index = srht_draw(n_features, n_components, rng)
    X = rng.standard_normal((7, n_features))
    out = np.empty((7, n_components), dtype)
    srht_apply(X.astype(dtype), signs.astype(dtype), index, dtype(1 / np.sqrt(n_components)), out)
    np.testing.assert_allclose(out, srht(X, signs, index), rtol=rtol, atol=rtol * 10)


def test_srht_keeping_every_coordinate_is_exact():
    """At D = p the SRHT keeps every coordinate of an orthogonal transform: Z Z^T is
    the linear kernel, which is the map's kernel(). (Unbiasedness and the error's
    fall with D are checked with the other maps in test_kernel_approximation.)"""
    X = np.random.default_rng(1).standard_normal((100, 256))
    est = SRHT(256, random_state=0).fit(X)
    np.testing.assert_allclose(est.kernel(X), X @ X.T)
    Z = est.transform(X)
    np.testing.assert_allclose(Z @ Z.T, X @ X.T, rtol=1e-10, atol=1e-9)
