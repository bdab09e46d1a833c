"""Tensor Sketch: the count sketch against NumPy, the map against its kernel."""

import numpy as np
import pytest

from kernelmaps import TensorSketch, relative_frobenius_error
from kernelmaps.tensor_sketch import _count_sketches

import naive
from kernel_checks import gram_error


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("extra", [0, 1])
def test_count_sketches_match_numpy(dtype, rtol, extra):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((7, 9))
    hashes = rng.randint(0, 5, size=(3, 9 + extra)).astype(np.int64)  # many collisions
    signs = rng.choice([-1.0, 1.0], size=(3, 9 + extra)) * 0.7
    C = np.zeros((7, 3, 5), dtype)
    _count_sketches(X.astype(dtype), hashes, signs.astype(dtype), C)
    np.testing.assert_allclose(C, naive.count_sketches(X, hashes, signs, 5), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("sparse", [False, True])
def test_count_sketches_clear_what_earlier_rows_left_in_their_bins(sparse):
    """The kernels clear only the hashed bins of their scratch: reused for new
    rows (dense, or sparse with other nonzeros), it holds the new sketches only."""
    import scipy.sparse as sp

    from kernelmaps.tensor_sketch import _count_sketches_csr

    rng = np.random.RandomState(1)
    hashes = rng.randint(0, 40, size=(2, 7)).astype(np.int64)  # 6 features and the constant
    signs = rng.choice([-1.0, 1.0], size=(2, 7))
    C = np.zeros((4, 2, 40))
    for seed in (2, 3):
        X = np.random.RandomState(seed).standard_normal((4, 6))
        X[X < 0.3] = 0  # different nonzeros from one round to the next
        if sparse:
            csr = sp.csr_matrix(X)
            _count_sketches_csr(csr.indptr.astype(np.int64), csr.indices.astype(np.int64), csr.data, 0, 6,
                                hashes, signs, C)
        else:
            _count_sketches(X, hashes, signs, C)
        np.testing.assert_allclose(C, naive.count_sketches(X, hashes, signs, 40), rtol=1e-12, atol=1e-12)


def test_map_is_the_circular_convolution_of_the_sketches():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((10, 6))
    ts = TensorSketch(33, degree=3, gamma=0.5, coef0=2.0, random_state=0).fit(X)
    C = naive.count_sketches(X, ts.hashes_, ts.signs_, 33)
    ref = np.real(np.fft.ifft(np.prod(np.fft.fft(C, axis=2), axis=1), axis=1))
    np.testing.assert_allclose(ts.transform(X), ref, rtol=1e-10, atol=1e-12)
    # the count sketch of x'^(x)3 under the hash sum_j h_j mod D, sign prod_j s_j, directly
    x = np.append(X[0], 1.0)
    direct = np.zeros(33)
    for a in range(7):
        for b in range(7):
            for c in range(7):
                h = (ts.hashes_[0, a] + ts.hashes_[1, b] + ts.hashes_[2, c]) % 33
                direct[h] += ts.signs_[0, a] * ts.signs_[1, b] * ts.signs_[2, c] * x[a] * x[b] * x[c]
    np.testing.assert_allclose(ts.transform(X[:1])[0], direct, rtol=1e-10, atol=1e-12)


def sketch_error(X, n_components, seed, degree=3):
    return gram_error(TensorSketch(n_components, degree=degree, gamma=1.0, coef0=1.0, random_state=seed).fit(X), X)


# Degree 3 is checked with the other maps in test_kernel_approximation.
@pytest.mark.parametrize("degree", [1, 2, 4])
def test_any_degree(degree, sphere):
    assert np.mean([sketch_error(sphere, 2048, s, degree) for s in range(2)]) < 0.15


def test_float32_stays_float32_and_agrees(sphere):
    ts = TensorSketch(256, degree=3, gamma=1.0, coef0=1.0, random_state=0).fit(sphere)
    Z32 = ts.transform(sphere.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, ts.transform(sphere), atol=1e-5)


def test_same_error_as_scikit_learn(sphere):
    from sklearn.kernel_approximation import PolynomialCountSketch

    K = TensorSketch(8, degree=3, gamma=1.0, coef0=1.0).fit(sphere).kernel(sphere)
    ours = np.mean([sketch_error(sphere, 1024, s) for s in range(4)])
    theirs = np.mean([relative_frobenius_error(K, Z=PolynomialCountSketch(
        degree=3, gamma=1.0, coef0=1.0, n_components=1024, random_state=s).fit(sphere).transform(sphere))
        for s in range(4)])
    assert 0.7 < ours / theirs < 1.4, (ours, theirs)


@pytest.mark.parametrize("bad, name", [(dict(degree=0), "degree"), (dict(gamma=-1.0), "gamma"),
                                       (dict(coef0=-1.0), "coef0")])
def test_bad_parameters_are_named(bad, name, sphere):
    with pytest.raises(ValueError, match=name):
        TensorSketch(64, **bad).fit(sphere)
