"""The branchless cos/sin/exp/log against numpy."""

import os
import subprocess
import sys

import numpy as np
import pytest

from numba import njit

from kernelmaps._numba import fastmath as fm
from kernelmaps._numba import fastmath_arrays as arrays
from kernelmaps._numba import fastmath_exp as fm_exp
from kernelmaps._numba.fastmath_log import vlog

TOL = {np.float64: 1e-14, np.float32: 1e-6}
LIMIT = {np.float64: fm.TRIG_LIMIT64, np.float32: fm.TRIG_LIMIT32}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1.0, 10.0, 1e3, "limit"])
@pytest.mark.parametrize("func, ref", [(arrays.cos, np.cos), (arrays.sin, np.sin)])
def test_trig_matches_numpy(dtype, scale, func, ref):
    rng = np.random.default_rng(1)
    scale = LIMIT[dtype] if scale == "limit" else scale
    x = (rng.uniform(-1, 1, 200_001) * scale).astype(dtype)
    got = func(x)
    assert got.dtype == dtype
    exact = ref(x.astype(np.float64))  # the float32 input's exact value, in float64
    assert np.abs(got - exact).max() < TOL[dtype]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trig_beyond_the_polynomial_range_falls_back_to_libm(dtype):
    x = np.array([0.5, LIMIT[dtype] * 7.3, -1e20, 3.0], dtype=dtype)
    np.testing.assert_allclose(arrays.cos(x), np.cos(x.astype(np.float64)), atol=TOL[dtype])
    np.testing.assert_allclose(arrays.sin(x), np.sin(x.astype(np.float64)), atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_trig_special_values(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype)
    with np.errstate(invalid="ignore"):
        for func, ref in ((arrays.cos, np.cos), (arrays.sin, np.sin)):
            np.testing.assert_array_equal(func(x), ref(x))


@pytest.mark.parametrize("dtype, lo, hi", [
    (np.float64, -745.0, 709.7), (np.float64, -5.0, 5.0), (np.float32, -87.0, 88.0),
    (np.float32, -5.0, 5.0),
])
@pytest.mark.parametrize("func", [arrays.exp, arrays.exp_nonpositive])
def test_exp_matches_numpy(dtype, lo, hi, func):
    rng = np.random.default_rng(2)
    x = rng.uniform(lo, hi if func is arrays.exp else 0.0, 200_001).astype(dtype)
    got = func(x)
    assert got.dtype == dtype
    exact = np.exp(x.astype(np.float64))
    normal = exact > np.finfo(dtype).tiny
    rel = np.abs(got[normal] - exact[normal]) / exact[normal]
    assert rel.max() < TOL[dtype]
    # subnormal results: absolute error far below the smallest normal number
    assert np.abs(got[~normal] - exact[~normal]).max(initial=0) < np.finfo(dtype).tiny


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exp_special_values(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 1e4, -1e4], dtype=dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(arrays.exp(x), np.exp(x))
    x = np.array([np.nan, -np.inf, 0.0, -0.0, -1e4, -np.finfo(dtype).max], dtype=dtype)
    np.testing.assert_array_equal(arrays.exp_nonpositive(x), np.exp(x))


def test_exp_nonpositive_refuses_a_positive_argument():
    with pytest.raises(ValueError, match="entries <= 0, got a largest entry of 0.5"):
        arrays.exp_nonpositive(np.array([-1.0, 0.5]))


def test_non_float_input_is_rejected():
    with pytest.raises(TypeError, match="float32 or float64"):
        arrays.cos(np.arange(4))


@njit(cache=False)
def _apply_vlog(x, out):
    for i in range(x.shape[0]):
        out[i] = vlog(x[i])


@pytest.mark.parametrize("dtype, ulps", [(np.float64, 1.0), (np.float32, 1.0)])
def test_vector_log_is_within_an_ulp(dtype, ulps):
    info = np.finfo(dtype)
    rng = np.random.default_rng(1)
    x = np.exp(rng.uniform(np.log(info.tiny), np.log(info.max), 20000)).astype(dtype)
    edges = [info.smallest_subnormal, info.smallest_subnormal * 3, info.tiny / 3, info.tiny, info.max,
             0.5, 1.0, 2.0, np.sqrt(2.0), np.sqrt(0.5), 1 - info.epsneg, 1 + info.eps]
    x = np.concatenate([x, np.array(edges, dtype=dtype)])
    got = np.empty_like(x)
    _apply_vlog(x, got)
    assert got.dtype == dtype
    exact = np.log(x.astype(np.float64))
    # against the correctly rounded value, in units of the result's last place
    error = np.abs(got.astype(np.float64) - exact) / np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)
    assert error.max() <= ulps, (x[np.argmax(error)], error.max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("func", [arrays.exp, arrays.exp_nonpositive])
def test_exp_dense_sweep_with_thresholds(dtype, func):
    # every reduction interval k ln2 +- ln2/2 of the range, subnormal results included,
    # and the points around which the two-factor scaling changes its split
    info = np.finfo(dtype)
    log_max, log_tiny = np.log(info.max.astype(np.float64)), np.log(info.smallest_subnormal.astype(np.float64))
    ln2 = np.log(2.0)
    k = np.arange(np.floor(log_tiny / ln2) - 2, np.ceil(log_max / ln2) + 2)
    x = np.concatenate([np.linspace(log_tiny - 1, log_max + 1, 400_001),
                        (k[:, None] * ln2 + np.array([-0.5, -0.3466, 0.0, 0.3466, 0.5]) * ln2).ravel()])
    x = x.astype(dtype)
    if func is arrays.exp_nonpositive:
        x = x[x <= 0]
    got = func(x)
    with np.errstate(over="ignore"):
        exact = np.exp(x.astype(np.float64))
    normal = (exact > info.tiny) & (exact < info.max)
    rel = np.abs(got[normal] - exact[normal]) / exact[normal]
    assert rel.max() < TOL[dtype] / 4
    sub = exact <= info.tiny
    assert np.abs(got[sub] - exact[sub]).max() < info.tiny * TOL[dtype]
    assert np.all(got >= 0)
    # overflow and underflow where libm's lie, away from rounding at the threshold
    assert np.all(np.isinf(got[x > log_max * (1 + 1e-6)]))
    assert np.all(np.isfinite(got[x < log_max * (1 - 1e-6)]))
    assert np.all(got[x < log_tiny - 1] == 0)


_OTHER_SCALING_PROBE = """
import sys
import numpy as np
from kernelmaps._numba import fastmath_arrays as arrays
from kernelmaps._numba.fastmath_exp import target_has_avx512
x = np.load(sys.argv[1])
np.save(sys.argv[2], np.stack([arrays.exp(x), arrays.exp_nonpositive(np.minimum(x, 0))]))
print(target_has_avx512())
"""


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exp_gives_the_same_bits_with_and_without_avx512(dtype, tmp_path):
    """With AVX-512 ``p 2**k`` is one ``vscalef``; without it, two factors made from the bits of the
    rounding sum. Both round once, so the AVX2 code (compiled in a subprocess) gives the same bits."""
    from llvmlite import binding

    from benchmarks.machine import features_without_avx512

    if not fm_exp.target_has_avx512():
        pytest.skip("the vscalef scaling needs a target with AVX-512")
    probe = njit(cache=False)(lambda x: fm_exp.vexp(x) + fm_exp.vexp_nonpositive(x))
    probe(dtype(-1.0))
    assert "vscalef" in "".join(probe.inspect_asm().values())
    info = np.finfo(dtype)
    log_max, log_tiny = np.log(info.max.astype(np.float64)), np.log(info.smallest_subnormal.astype(np.float64))
    x = np.concatenate([np.linspace(log_tiny - 2, log_max + 2, 100_001),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e4, -1e4]]).astype(dtype)
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, NUMBA_CPU_FEATURES=features_without_avx512(dict(binding.get_host_cpu_features())),
               NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _OTHER_SCALING_PROBE, str(tmp_path / "x.npy"),
                           str(tmp_path / "y.npy")], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "False"
    with np.errstate(over="ignore"):
        here = np.stack([arrays.exp(x), arrays.exp_nonpositive(np.minimum(x, 0))])
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), here)
