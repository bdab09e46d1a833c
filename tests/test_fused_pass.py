"""The fused kernel pass: ``K V``, ``K^T U`` and ``K^T (D K V + W)`` without the kernel block in memory."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from kernelmaps._core.validation import FeatureOverflowError
from kernelmaps._kernels.fused import (FUSED_MAX_CENTRE_BYTES, FUSED_MAX_COLUMN_BYTES, FUSED_MAX_COLUMNS,
                                       FUSED_MAX_FEATURES, fused_columns)
from kernelmaps._numba.tiles import TILE_ROWS, lanes
from kernelmaps._solvers.kernel_operator import KernelOperator

#: (kernel, nu) of every fused kernel
FUSED = [("gaussian", 1.5), ("laplacian", 1.5), ("cauchy", 1.5), ("matern", 0.5), ("matern", 1.5),
         ("matern", 2.5), ("polynomial", 1.5), ("exponential", 1.5)]
TOLERANCE = {np.float64: 1e-10, np.float32: 2e-4}


def reference_kernel(kernel, X, C, gamma, nu, degree=3, coef0=0.7):
    """``K(X, C)`` in float64 from explicit differences and inner products."""
    X, C = X.astype(np.float64), C.astype(np.float64)
    diff = X[:, None, :] - C[None, :, :]
    squared = (diff ** 2).sum(-1)
    if kernel == "gaussian":
        return np.exp(-gamma * squared)
    if kernel == "laplacian":
        return np.exp(-gamma * np.abs(diff).sum(-1))
    if kernel == "cauchy":
        return np.prod(1.0 / (1.0 + gamma * diff ** 2), axis=-1)
    if kernel == "matern":
        s = 2.0 * np.sqrt(nu * gamma * squared)
        polynomial = {0.5: 1.0, 1.5: 1.0 + s, 2.5: 1.0 + s + s ** 2 / 3.0}[nu]
        return polynomial * np.exp(-s)
    if kernel == "polynomial":
        return (gamma * X @ C.T + coef0) ** degree
    return np.exp(gamma * X @ C.T)


@pytest.fixture(params=["fused", "blas"])
def products(request, monkeypatch):
    """Which products a pass with several columns takes: the fused pass's tiles, or BLAS on the blocks of
    its values (``FUSED_MAX_COLUMNS`` set to one column)."""
    if request.param == "blas":
        for dtype in list(FUSED_MAX_COLUMNS):
            monkeypatch.setitem(FUSED_MAX_COLUMNS, dtype, 1)
    return request.param


def relative_error(result, reference):
    return np.abs(result - reference).max() / max(np.abs(reference).max(), 1e-300)


def problem(n, m, d, k, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = (0.6 * rng.standard_normal((n, d))).astype(dtype)
    C = 0.6 * rng.standard_normal((m, d))
    return X, C, rng.standard_normal((m, k)), rng.standard_normal((n, k)), rng.uniform(0.1, 1.0, (n, k))


def operator(X, C, kernel, gamma, nu):
    op = KernelOperator(X, C, kernel=kernel, gamma=gamma, degree=3, coef0=0.7, nu=nu)
    assert op.fused is not None
    return op


def check_passes(op, K, X, V, W, D, tolerance):
    """Every product of the pass against ``K``; returns the largest relative error."""
    weights = D[:, 0] if D.shape[1] == 1 else D
    errors = [relative_error(op @ V, K @ V),
              relative_error(op.normal_matvec(V), K.T @ (K @ V)),
              relative_error(op.normal_matvec(V, W), K.T @ (K @ V + W)),
              relative_error(op.normal_matvec(V, weights=D[:, 0]), K.T @ (D[:, :1] * (K @ V))),
              relative_error(op.normal_matvec(V, weights=weights), K.T @ (D * (K @ V))),
              relative_error(op.normal_matvec(None, W), K.T @ W),
              relative_error(op.T @ W, K.T @ W),
              relative_error(op.sweep(V, nonlinear_rows, 2 * V.shape[1]), K.T @ nonlinear_rows(0, 0, K @ V)),
              relative_error(op.sweep(None, lambda lo, hi, _: W[lo:hi], W.shape[1]), K.T @ W)]
    return max(errors)


def nonlinear_rows(lo, hi, image):
    """A row-wise map with more columns than ``K V`` (as the logistic gradient's ``[l', W]``)."""
    return np.hstack([np.tanh(image), image * image])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel, nu", FUSED)
@pytest.mark.parametrize("n, m, d, k", [(203, 37, 5, 1), (203, 37, 5, 26), (3, 1, 1, 2), (517, 70, 1, 1),
                                        (301, 129, 16, 26)])
def test_fused_pass_matches_numpy(kernel, nu, dtype, n, m, d, k):
    # rows not a multiple of the tile, centres not a multiple of the vector width
    assert n % TILE_ROWS or m % lanes(dtype)
    gamma = 0.4 / d
    X, C, V, W, D = problem(n, m, d, k, dtype)
    K = reference_kernel(kernel, X, C, gamma, nu)
    error = check_passes(operator(X, C, kernel, gamma, nu), K, X, V, W, D, TOLERANCE[dtype])
    assert error < TOLERANCE[dtype], error


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel, nu", FUSED)
def test_blas_products_of_the_fused_values_match_numpy(kernel, nu, dtype, monkeypatch):
    monkeypatch.setitem(FUSED_MAX_COLUMNS, np.dtype(dtype), 1)
    X, C, V, W, D = problem(301, 129, 16, 26, dtype)
    gamma = 0.4 / 16
    K = reference_kernel(kernel, X, C, gamma, nu)
    error = check_passes(operator(X, C, kernel, gamma, nu), K, X, V, W, D, TOLERANCE[dtype])
    assert error < TOLERANCE[dtype], error


@pytest.mark.parametrize("kernel, nu", FUSED)
def test_a_wrong_bandwidth_is_caught(kernel, nu):
    X, C, V, W, D = problem(203, 37, 5, 2, np.float64)
    K = reference_kernel(kernel, X, C, 0.08, nu)
    error = check_passes(operator(X, C, kernel, 0.16, nu), K, X, V, W, D, TOLERANCE[np.float64])
    assert error > 1e-3


@pytest.mark.parametrize("n_columns", [1, 3])
def test_several_blocks_give_the_same_sums_at_any_thread_count(n_columns, products):
    X, C, V, W, D = problem(5000, 300, 8, n_columns, np.float32, seed=3)
    op = operator(X, C, "gaussian", 0.1, 1.5)
    assert op.shape[0] > 4 * op.block  # several blocks and groups
    previous = numba.get_num_threads()
    results = []
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            results.append(op.normal_matvec(V, W, weights=D))
    finally:
        numba.set_num_threads(previous)
    assert all(np.array_equal(results[0], r) for r in results)
    K = reference_kernel("gaussian", X, C, 0.1, 1.5)
    assert relative_error(results[0], K.T @ (D * (K @ V) + W)) < TOLERANCE[np.float32]


@pytest.mark.parametrize("name", ["V", "W", "weights"])
def test_non_finite_operands_are_refused(name, products):
    X, C, V, W, D = problem(50, 10, 3, 2, np.float64)
    operands = {"V": V, "W": W, "weights": D}
    operands[name][4, 1] = np.nan
    op = operator(X, C, "gaussian", 0.3, 1.5)
    with pytest.raises(ValueError, match=f"{name} contains NaN"):
        op.normal_matvec(operands["V"], operands["W"], weights=operands["weights"])
    if name == "V":
        with pytest.raises(ValueError, match="V contains NaN"):
            op @ V


def test_an_overflowing_kernel_names_itself_and_the_rows():
    X, C, V, W, D = problem(300, 20, 3, 1, np.float32)
    op = operator(X * 50, C * 50, "exponential", 10.0, 1.5)
    with pytest.raises(FeatureOverflowError, match="exponential kernel .* overflows float32 .* on rows 0-"):
        op.normal_matvec(V)


@pytest.mark.filterwarnings("error")
def test_overflowing_products_name_the_kernel_on_either_path(products):
    """Finite kernel values (6e37 in float32) whose products overflow: the fused pass checks its products,
    and so do the BLAS products of its blocks, without NumPy's overflow warning first."""
    X, C = np.ones((50, 1), np.float32), np.ones((20, 1))
    op = operator(X, C, "exponential", 87.0, 1.5)
    assert np.isfinite(op.kernel_block(0, 50)).all()
    for product in (lambda: op.normal_matvec(np.full((20, 3), 1e3)), lambda: op @ np.full((20, 3), 1e3),
                    lambda: op.T @ np.full((50, 3), 1e3)):
        with pytest.raises(FeatureOverflowError, match=r"exponential kernel .* \(in its products\) on rows 0-49"):
            product()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_columns", [1, 3, 70])
def test_kept_blocks_are_the_fused_values_and_give_the_same_bits(dtype, n_columns, monkeypatch, products):
    """Kept rows hold the 45 centres' values while the right-hand sides are padded to the tile's width:
    70 columns take several chunks of them on every target (64 float32 columns at most per chunk
    with AVX-512), whose stride is the padded one."""
    if products == "fused":
        monkeypatch.setitem(FUSED_MAX_COLUMNS, np.dtype(dtype), n_columns)
    X, C, V, W, D = problem(700, 45, 6, n_columns, dtype, seed=5)
    fresh = operator(X, C, "laplacian", 0.2, 1.5)
    kept = KernelOperator(X, C, kernel="laplacian", gamma=0.2, keep_blocks=True)
    expected = fresh.normal_matvec(V, W, weights=D)
    for _ in range(2):  # fills the kept blocks, then reads them
        np.testing.assert_array_equal(kept.normal_matvec(V, W, weights=D), expected)
    np.testing.assert_array_equal(kept.kept, fresh.kernel_block(0, X.shape[0]))
    np.testing.assert_array_equal(kept @ V, fresh @ V)
    swept = fresh.sweep(V, nonlinear_rows, 2 * n_columns)
    np.testing.assert_array_equal(kept.sweep(V, nonlinear_rows, 2 * n_columns), swept)


def test_the_fused_pass_stops_at_the_crossover():
    for dtype, limit in FUSED_MAX_FEATURES.items():
        X, C = np.zeros((10, limit + 1), dtype), np.zeros((3, limit + 1))
        assert KernelOperator(X, C, kernel="gaussian", gamma=1.0).fused is None
        assert KernelOperator(X[:, :limit], C[:, :limit], kernel="gaussian", gamma=1.0).fused is not None
    for dtype, limit in FUSED_MAX_COLUMNS.items():
        op = KernelOperator(np.zeros((10, 3), dtype), np.zeros((3, 3)), kernel="gaussian", gamma=1.0)
        assert op._fuses(limit) and not op._fuses(limit + 1) and limit == 8 * lanes(dtype)
    X, C = np.zeros((10, 3)), np.zeros((3, 3))
    assert KernelOperator(X, C, kernel="gaussian", gamma=1.0, fused=False).fused is None
    assert KernelOperator(X, C, kernel="sech", gamma=1.0).fused is None
    assert KernelOperator(X, C, kernel="matern", gamma=1.0, nu=0.7).fused is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_columns", [1, 3])
def test_groups_of_kept_blocks_give_the_bits_of_the_evaluated_blocks(dtype, n_columns, monkeypatch):
    """Past 16 blocks a thread's group holds several: a pass over kept blocks sums a group in one compiled
    call (here groups of two blocks, the last block shorter), and gives the bits of the pass that evaluates
    every block, at any thread count and for every product of the normal equations."""
    X, C, V, W, D = problem(5000, 300, 8, n_columns, dtype, seed=4)
    fresh = operator(X, C, "gaussian", 0.1, 1.5)
    kept = KernelOperator(X, C, kernel="gaussian", gamma=0.1, keep_blocks=True)
    assert kept.group == 2 * kept.block and X.shape[0] % kept.block
    kept.normal_matvec(V)  # fills the kept blocks
    groups = []
    run_kept = type(kept.fused).run_kept
    monkeypatch.setattr(type(kept.fused), "run_kept", lambda self, X, *args, **kw: groups.append(len(X))
                        or run_kept(self, X, *args, **kw))
    cases = [dict(V=V), dict(V=V, W=W), dict(V=V, weights=D), dict(V=V, W=W, weights=D[:, 0]), dict(V=None, W=W)]
    previous = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            for case in cases:
                np.testing.assert_array_equal(kept.normal_matvec(**case), fresh.normal_matvec(**case))
    finally:
        numba.set_num_threads(previous)
    assert sorted(set(groups)) == [X.shape[0] % kept.group, kept.group]


def test_overflowing_products_of_a_kept_group_name_the_block_they_overflow_in():
    """One row of block 11 (of 20, in the sixth group of two) has kernel values of 6e37 in float32: the kept
    pass's products overflow there, and the error names that block's rows, not its group's first."""
    X, C = np.zeros((5000, 1), np.float32), np.ones((300, 1))
    X[3000] = 1.0
    op = KernelOperator(X, C, kernel="exponential", gamma=87.0, keep_blocks=True)
    assert op.block == 256 and op.group == 512
    op @ np.full((300, 1), 1e-3)  # fills the kept blocks: finite products (1.8e37)
    with pytest.raises(FeatureOverflowError, match=r"exponential kernel .* \(in its products\) on rows 2816-3071"):
        op.normal_matvec(np.full((300, 1), 1e3))


_TILE_CALL_PROBE = """
import re, numba
from numba import njit, types
from kernelmaps._numba import fused_pass

@njit
def every_chunk(epilogue, T, X, S, bias):
    for chunk in range(S.shape[0]):
        fused_pass.accumulate(epilogue, T, X, 0, S, chunk, bias)

for dtype in (types.float64, types.float32):
    record = numba.typeof(fused_pass.ClampedExp(dtype(0.1)))
    every_chunk.compile((record, dtype[:, ::1], dtype[:, ::1], dtype[:, :, ::1], dtype[::1]))
calls = r"(?:movabsq\\s+\\$|call\\w*\\s+)_ZN\\w*accumulate"
print(sum(len(re.findall(calls, asm)) for asm in every_chunk.inspect_asm().values()))
"""


@pytest.mark.parametrize("cpu", ["znver3", "znver4", "skylake-avx512"])
def test_the_register_tile_is_inlined_into_its_callers_loop_whatever_the_tuning(cpu, tmp_path):
    """LLVM's AMD tunings judged the tile's loop too big to inline and called it per chunk of centres, 15-20 %
    of the fused pass on a Zen 3; compiled (not run) for each tuning, no call to it remains."""
    env = dict(os.environ, NUMBA_CPU_NAME=cpu, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _TILE_CALL_PROBE], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "0"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_auto_fuses_up_to_the_centres_byte_budget_and_true_at_any_size(dtype):
    """Past ``FUSED_MAX_CENTRE_BYTES`` of packed centres each tile's sweep over them streams from memory and
    BLAS wins (2-3x at d = 256, m = 16384 on AVX2): ``'auto'`` fuses at the budget and not one centre past
    it, in the rows' dtype; ``fused=True`` fuses either way."""
    d = 256
    at_budget = FUSED_MAX_CENTRE_BYTES // (d * np.dtype(dtype).itemsize)
    X = np.random.default_rng(0).standard_normal((8, d)).astype(dtype)
    for m, fused in ((at_budget, True), (at_budget + 1, False)):
        C = np.random.default_rng(1).standard_normal((m, d))
        assert (KernelOperator(X, C, kernel="gaussian", gamma=0.1).fused is not None) == fused, m
        assert KernelOperator(X, C, kernel="gaussian", gamma=0.1, fused=True).fused is not None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_many_centres_leave_fewer_columns_to_the_fused_products(dtype):
    """With AVX2, the right-hand sides and products a tile's sweep carries stop at ``FUSED_MAX_COLUMN_BYTES``:
    at m = 16384, 16 float64 columns (26 ran 1.1-1.6x slower fused than through BLAS) and 32 float32 ones;
    at m = 1024 the SIMD limit ``FUSED_MAX_COLUMNS`` alone. The operator follows the rule."""
    X = np.random.default_rng(0).standard_normal((8, 4)).astype(dtype)
    for m in (1024, 16384):
        limit = fused_columns(dtype, m)
        if FUSED_MAX_COLUMN_BYTES is None or m == 1024:
            assert limit == FUSED_MAX_COLUMNS[np.dtype(dtype)]
        else:
            assert limit == {np.float32: 32, np.float64: 16}[dtype]
        op = KernelOperator(X, np.random.default_rng(1).standard_normal((m, 4)), kernel="gaussian", gamma=0.1)
        assert op._fuses(limit) and not op._fuses(limit + 1)
