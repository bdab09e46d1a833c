"""Branchless, vectorizable exp for Numba kernels.

:func:`vexp` is the exponential of a float32 or float64 scalar; inside ``@njit``
code it resolves at compile time to the implementation of its argument's type,
and a loop calling it vectorizes (Numba has no SVML here, so ``math.exp`` would be
a scalar libm call). :func:`vexp_nonpositive` is the same function for arguments
known to be at most 0, as the distance kernels' ``exp(-gamma d)`` are: it skips
the clamp at the top of the range, which on a Zen 4 (AVX-512) took 6 % of the
fused Gaussian pass at d = 16.

Both reduce ``x = k ln 2 + r`` with ``|r| <= ln(2)/2`` and use a polynomial of
degree 10 (float64) or 6 (float32) interpolating at Chebyshev nodes, with
``1 + r`` kept exact. Over a dense sweep of the whole range, subnormal results
included, the largest relative error on normal results is 1.3e-15 (float64) and
8.0e-8 (float32); results overflow to inf, and underflow gradually through the
subnormals to 0, where libm's do. Tested against numpy in
``tests/test_fastmath.py``, on the AVX-512 and the AVX2 scaling alike.

The last step, ``p 2**k``, is one instruction with AVX-512 (``vscalefpd``,
``vscalefps``, from LLVM's ``ldexp``), and five vector operations on the bits of
the rounding sum otherwise (where LLVM's ``ldexp`` would be a libm call per
element). Both give the same bits: each rounds ``p 2**k`` once.
"""

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from .fastmath import (LN2_HI, LN2_HI_F, LN2_LO, LN2_LO_F, POLY_FLAGS, ROUND32, ROUND64, bits_to_float, by_dtype,
                       float_to_bits)

# The argument is clamped just outside the range where the result is a finite,
# nonzero number, so that k stays in range: 2**k is then a normal number in two
# factors while the result still overflows to inf (or underflows to 0) where
# libm's does.
_EXP64_HIGH = 720.0  # ln(largest float64) = 709.78
_EXP64_LOW = -760.0  # ln(smallest float64 subnormal) = -744.44
_EXP32_HIGH = 100.0  # ln(largest float32) = 88.72
_EXP32_LOW = -110.0  # ln(smallest float32 subnormal) = -103.28
# IEEE 754 layout: the exponent bias, and the bits of mantissa below the exponent
_BIAS64, _MANTISSA64 = 1023, 52
_BIAS32, _MANTISSA32 = 127, 23
_LOG2E = 1.44269504088896338700e00
_LOG2E_F = np.float32(1.44269504088896341)
# fastmath's rounding sums (adding 1.5 * 2**52, or 1.5 * 2**23, rounds to an integer held
# in the low mantissa bits), also carrying twice the exponent bias into those bits for
# the two-factor scaling
_EXP_ROUND64 = ROUND64 + 2 * _BIAS64
_EXP_ROUND32 = np.float32(ROUND32 + 2 * _BIAS32)
# exp(r) = 1 + r + r^2 q(r) on |r| <= ln(2)/2, q interpolating (exp(r) - 1 - r) / r^2
# (its series, summed in long double) at deg(q) + 1 Chebyshev nodes: deg(q) = 8 for
# float64 (Taylor needs 12 terms for 1e-15), 4 for float32 (Cephes' expf has 7). The
# Gaussian epilogue calling vexp is bound by vector-op throughput, so each op saved
# shows: float64 0.86 ns/element fused (1.15 with Taylor's degree 13) vs np.exp 0.80,
# float32 0.38 (0.47) vs 0.44. Estrin's scheme and a 4-entry 2**(j/4) table with
# degree 7 measured slower: they add more ops than they save.
_P0, _P1, _P2, _P3, _P4, _P5, _P6, _P7, _P8 = (
    0.5, 0.16666666666648303, 0.04166666666665137, 0.00833333335371711, 0.0013888888905869284,
    0.00019841208757064867, 2.480153641207907e-05, 2.7625101973433264e-06, 2.761379420954373e-07)
_F = np.float32
_P0_F, _P1_F, _P2_F, _P3_F, _P4_F = (_F(c) for c in (
    0.5, 0.16666577756404877, 0.041666556149721146, 0.008363173343241215, 0.0013926175888627768))


def target_has_avx512():
    """True if the code Numba compiles in this process may use AVX-512F.

    Numba hands LLVM ``NUMBA_CPU_FEATURES`` when it is set and the host's features
    otherwise, whatever ``NUMBA_CPU_NAME`` says; this reads the same list. Cached
    kernels are keyed on that list too, so a choice made from it at compile time
    never meets code compiled for other features."""
    from numba.core import config
    from numba.core.codegen import get_host_cpu_features

    features = config.CPU_FEATURES if config.CPU_FEATURES is not None else get_host_cpu_features()
    return "+avx512f" in features.split(",")


@intrinsic
def _ldexp(typingctx, x, k):
    """``x 2**k`` of a float and an integer-valued float of its type, by LLVM's
    ``ldexp``: overflow to inf, gradual underflow through the subnormals."""
    if x not in (types.float64, types.float32) or k != x:
        return None

    def codegen(context, builder, signature, args):
        value_type = context.get_value_type(signature.return_type)
        name = "llvm.ldexp.{}.i32".format("f64" if signature.return_type == types.float64 else "f32")
        function = builder.module.declare_intrinsic(
            name, fnty=ir.FunctionType(value_type, [value_type, ir.IntType(32)]))
        return builder.call(function, [args[0], builder.fptosi(args[1], ir.IntType(32))])

    return x(x, k), codegen


@njit(cache=True, fastmath=POLY_FLAGS, inline="always")
def _two_factor_scale64(p, t):
    # 2**k = 2**floor(k/2) * 2**ceil(k/2): m >> 1 and m - (m >> 1) are their biased
    # exponents (m = k + 2 bias), and the shift by 52 drops the magic number's bits.
    bits = float_to_bits(t)
    half = bits >> 1
    scale_a = bits_to_float(half << _MANTISSA64)
    scale_b = bits_to_float((bits - half) << _MANTISSA64)
    return p * scale_a * scale_b


@njit(cache=True, fastmath=POLY_FLAGS, inline="always")
def _two_factor_scale32(p, t):
    # as _two_factor_scale64, with float32's 8-bit exponent field
    bits = float_to_bits(t)
    half = np.int32(bits >> 1)
    scale_a = bits_to_float(np.int32(half << _MANTISSA32))
    scale_b = bits_to_float(np.int32((bits - half) << _MANTISSA32))
    return p * scale_a * scale_b


def _times_power_of_two(p, k, t):
    """``p 2**k``: ``k`` an integer-valued float, ``t`` the rounding sum carrying
    ``k + 2 bias`` in its low bits (Numba only)."""
    return p * 2.0**k


@overload(_times_power_of_two, jit_options={"cache": True}, inline="always")
def _times_power_of_two_impl(p, k, t):
    if p not in (types.float64, types.float32) or k != p or t != p:
        return None
    if target_has_avx512():
        return lambda p, k, t: _ldexp(p, k)
    # without AVX-512, LLVM's ldexp is a libm call per element (6 ns instead of
    # 0.7 on a Zen 4 compiling AVX2 code)
    if p == types.float64:
        return lambda p, k, t: _two_factor_scale64(p, t)
    return lambda p, k, t: _two_factor_scale32(p, t)


# The reduction and polynomial are compiled without "reassoc" (POLY_FLAGS), inlined
# into the four entry functions below, which are inline="never" at Numba's level
# (LLVM still inlines them) to keep those flags on their instructions: inlined into
# a caller compiled with "reassoc", the reduction (x log2(e) + 1.5 * 2**52) -
# 1.5 * 2**52 would fold into a plain product.
@njit(cache=True, fastmath=POLY_FLAGS, inline="always")
def _exp64_in_range(xc):
    t = xc * _LOG2E + _EXP_ROUND64  # k + 2 * bias in the low bits
    k = t - _EXP_ROUND64
    r = xc - k * LN2_HI
    r = r - k * LN2_LO
    p = 1.0 + r * (1.0 + r * (_P0 + r * (_P1 + r * (_P2 + r * (_P3 + r * (_P4 + r * (
        _P5 + r * (_P6 + r * (_P7 + r * _P8)))))))))
    return _times_power_of_two(p, k, t)


@njit(cache=True, fastmath=POLY_FLAGS, inline="always")
def _exp32_in_range(xc):
    t = xc * _LOG2E_F + _EXP_ROUND32
    k = t - _EXP_ROUND32
    r = xc - k * LN2_HI_F
    r = r - k * LN2_LO_F
    p = _F(1.0) + r * (_F(1.0) + r * (_P0_F + r * (_P1_F + r * (_P2_F + r * (_P3_F + r * _P4_F)))))
    return _times_power_of_two(p, k, t)


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _exp64(x):
    # Clamping keeps k in range; NaN passes through both clamps and the polynomial.
    xc = _EXP64_HIGH if x > _EXP64_HIGH else x
    xc = _EXP64_LOW if xc < _EXP64_LOW else xc
    return _exp64_in_range(xc)


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _exp32(x):
    xc = _F(_EXP32_HIGH) if x > _F(_EXP32_HIGH) else x
    xc = _F(_EXP32_LOW) if xc < _F(_EXP32_LOW) else xc
    return _exp32_in_range(xc)


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _exp64_nonpositive(x):
    xc = _EXP64_LOW if x < _EXP64_LOW else x
    return _exp64_in_range(xc)


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _exp32_nonpositive(x):
    xc = _F(_EXP32_LOW) if x < _F(_EXP32_LOW) else x
    return _exp32_in_range(xc)


def vexp(x):
    """Vectorizable exponential of a float32 or float64 scalar (Numba only)."""
    return math.exp(x)


def vexp_nonpositive(x):
    """Vectorizable ``exp(x)`` of a float32 or float64 scalar ``x <= 0`` or NaN (Numba only).

    The caller guarantees the sign: a positive argument is not clamped, and past
    the largest finite result the reduction is not valid."""
    return math.exp(x)


overload(vexp)(by_dtype(_exp32, _exp64))
overload(vexp_nonpositive)(by_dtype(_exp32_nonpositive, _exp64_nonpositive))
