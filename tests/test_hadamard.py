"""The FWHT kernels against scipy.linalg.hadamard."""

import ast
import inspect

import numpy as np
import pytest
from scipy.linalg import hadamard

import kernelmaps
from numba import njit
from numba.core.errors import TypingError

import kernelmaps._numba.fwht
from kernelmaps._numba.fwht import REGISTER_BLOCK, _register_row, fwht_row, register_butterflies


def _hadamard_rows(n, rows):
    """Rows ``rows`` of Sylvester's Hadamard matrix of order ``n``: ``H[i, j] = (-1)^popcount(i & j)``."""
    common = np.asarray(rows)[:, None] & np.arange(n)[None, :]
    parity = np.zeros_like(common)
    while common.any():
        parity ^= common & 1
        common >>= 1
    return 1.0 - 2.0 * parity


def test_the_hadamard_rows_are_scipys():
    rows = np.array([0, 1, 37, 63])
    np.testing.assert_array_equal(_hadamard_rows(64, rows), hadamard(64)[rows])


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_fwht_matches_scipy_hadamard(n, dtype, rtol):
    rng = np.random.default_rng(n)
    X = rng.standard_normal((5, n)).astype(dtype)
    # above 1024 the dense reference (2 GB at 16384) is replaced by 200 of its rows, the first and last among them
    outputs = np.arange(n) if n <= 1024 else np.unique(np.r_[0, n - 1, rng.choice(n, 200, replace=False)])
    H = hadamard(n)[outputs] if n <= 1024 else _hadamard_rows(n, outputs)
    expected = X.astype(np.float64) @ H.T
    got = kernelmaps.fwht(X.copy())
    assert got.dtype == dtype
    np.testing.assert_allclose(got[:, outputs], expected, rtol=rtol, atol=rtol * np.sqrt(n) * 4)
    np.testing.assert_allclose(kernelmaps.fwht(X.copy(), normalize=True)[:, outputs], expected / np.sqrt(n),
                               rtol=rtol, atol=rtol * 4)


@njit
def _register_blocks_of(x, size):
    for start in range(0, x.shape[0], size):
        _register_row(x[start:start + size])


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64, 128])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_register_butterflies_transform_each_block(size, dtype, rtol):
    # blocks at an odd element offset: the vector loads must not assume alignment
    buffer = np.random.default_rng(size).standard_normal(3 * size + 1).astype(dtype)
    x = buffer[1:]
    expected = (x.astype(np.float64).reshape(3, size) @ hadamard(size).T).ravel()
    if size > REGISTER_BLOCK:
        pytest.skip(f"this target's register block is {REGISTER_BLOCK} elements")
    _register_blocks_of(x, size)
    np.testing.assert_allclose(x, expected, rtol=rtol, atol=rtol * size)
    assert REGISTER_BLOCK in (64, 128)  # the sizes above cover every block fwht_row uses


def test_the_register_block_fits_the_target_registers():
    from kernelmaps._numba.fwht import VECTOR_BITS, _target_has_avx512

    # 16 vectors of the target's width: 32 registers with AVX-512, 16 without
    assert (REGISTER_BLOCK, VECTOR_BITS) == ((128, 512) if _target_has_avx512() else (64, 256))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_register_butterflies_of_128_elements_on_any_target(dtype):
    @njit
    def block_of_128(x):
        register_butterflies(x, 0, 128)

    x = np.random.default_rng(3).standard_normal(128).astype(dtype)
    expected = hadamard(128) @ x.astype(np.float64)
    block_of_128(x)
    np.testing.assert_allclose(x, expected, rtol=1e-5, atol=1e-4)


def test_register_butterflies_reject_a_strided_array():
    @njit
    def strided(x):
        register_butterflies(x[::2], 0, 4)

    with pytest.raises(TypingError, match="C-contiguous"):
        strided(np.ones(16))


def test_fwht_is_in_place_and_an_involution_up_to_n():
    X = np.random.default_rng(0).standard_normal((3, 1 << 15))
    Y = X.copy()
    assert kernelmaps.fwht(Y) is Y
    kernelmaps.fwht(Y)
    np.testing.assert_allclose(Y / Y.shape[1], X, atol=1e-12)


def test_large_row_matches_the_recursive_definition():
    n = 1 << 20
    x = np.random.default_rng(1).standard_normal((1, n))
    half = n // 2
    lo, hi = x[:, :half].copy(), x[:, half:].copy()
    kernelmaps.fwht(lo)
    kernelmaps.fwht(hi)
    np.testing.assert_allclose(kernelmaps.fwht(x.copy()), np.hstack([lo + hi, lo - hi]), rtol=1e-10, atol=1e-9)


def test_serial_row_kernel_agrees_with_the_public_function():
    X = np.random.default_rng(2).standard_normal((4, 256))
    A = X.copy()
    kernelmaps.fwht(A)
    for row in X:
        fwht_row(row)
    np.testing.assert_array_equal(A, X)


@pytest.mark.parametrize(
    "bad, error, message",
    [
        (np.ones((3, 6)), ValueError, "power of two"),
        (np.ones((3, 1)), ValueError, "power of two"),
        (np.ones(8), ValueError, "2-D"),
        (np.ones((3, 8), dtype=np.int64), TypeError, "float32 or float64"),
        (np.ones((8, 3)).T, ValueError, "C-contiguous"),
        ([[1.0, 2.0]], TypeError, "ndarray"),
    ],
)
def test_fwht_rejects_bad_input(bad, error, message):
    with pytest.raises(error, match=message):
        kernelmaps.fwht(bad)


def test_fwht_rejects_read_only():
    X = np.ones((2, 4))
    X.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        kernelmaps.fwht(X)


def test_the_transform_module_sits_below_the_feature_maps():
    tree = ast.parse(inspect.getsource(kernelmaps._numba.fwht))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level}
    assert not imported & {"_core.base", "_maps.cosine", "_maps.hadamard"}, imported
