"""Branchless, vectorizable natural log for Numba kernels: :func:`vlog`.

The log of :mod:`kernelmaps._numba.fastmath`, with its constants: inside ``@njit``
code :func:`vlog` resolves at compile time to the float32 or float64
implementation of its argument's type. Both reduce ``x = 2^k m`` by bit
manipulation, with no branch, so that the loops calling them vectorize; the
argument must be positive and finite (the caller's select guarantees it).

Accuracy (tested against numpy in ``tests/test_fastmath.py``): within one unit in
the last place for positive finite ``x``, subnormals included (fdlibm's
``__ieee754_log``, Cephes' ``logf``).
"""

import math

import numpy as np
from numba import njit
from numba.extending import overload

from .fastmath import LN2_HI, LN2_HI_F, LN2_LO, LN2_LO_F, POLY_FLAGS, bits_to_float, by_dtype, float_to_bits

_F = np.float32

# fdlibm's __ieee754_log: log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f)
_LG1, _LG2, _LG3 = 6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01
_LG4, _LG5, _LG6 = 2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_SMALLEST_NORMAL64 = 2.2250738585072014e-308
_TWO54 = 18014398509481984.0
_MANTISSA_BITS64 = np.int64(0x000FFFFFFFFFFFFF)
_EXPONENT_ONE64 = np.int64(0x3FF0000000000000)
# adding this to the mantissa carries into bit 52 exactly when the mantissa is
# above ~sqrt(2): the reduced argument then lies in [sqrt(2)/2, sqrt(2))
_SQRT2_CARRY64 = np.int64(0x00095F6400000000)
_BIT52 = np.int64(0x0010000000000000)

# Cephes' logf
_SQRTHF_F = _F(0.707106781186547524)
_SMALLEST_NORMAL32 = _F(1.17549435e-38)
_TWO25_F = _F(33554432.0)
_L1_F, _L2_F, _L3_F = _F(7.0376836292e-2), _F(-1.1514610310e-1), _F(1.1676998740e-1)
_L4_F, _L5_F, _L6_F = _F(-1.2420140846e-1), _F(1.4249322787e-1), _F(-1.6668057665e-1)
_L7_F, _L8_F, _L9_F = _F(2.0000714765e-1), _F(-2.4999993993e-1), _F(3.3333331174e-1)


# error_model="numpy": Python's check for a zero divisor (never the case for 2 + f)
# would be a branch in the loop that keeps it from vectorizing
@njit(cache=True, fastmath=POLY_FLAGS, inline="never", error_model="numpy")
def log64(x):
    # x > 0 and finite (the caller's select guarantees it); subnormals are scaled first
    tiny = x < _SMALLEST_NORMAL64
    x = x * _TWO54 if tiny else x
    bits = float_to_bits(x)
    k = (bits >> 52) - 1023 - (54 if tiny else 0)
    mantissa = bits & _MANTISSA_BITS64
    carry = (mantissa + _SQRT2_CARRY64) & _BIT52
    m = bits_to_float(mantissa | (carry ^ _EXPONENT_ONE64))
    k = k + (carry >> 52)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    R = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7))) + w * (_LG2 + w * (_LG4 + w * _LG6))
    hfsq = 0.5 * f * f
    dk = np.float64(k)
    return dk * LN2_HI - ((hfsq - (s * (hfsq + R) + dk * LN2_LO)) - f)


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _log32(x):
    tiny = x < _SMALLEST_NORMAL32
    x = x * _TWO25_F if tiny else x
    bits = float_to_bits(x)
    e = ((bits >> 23) & np.int32(0xFF)) - np.int32(126) - np.int32(25 if tiny else 0)
    m = bits_to_float(np.int32((bits & np.int32(0x007FFFFF)) | np.int32(0x3F000000)))  # in [1/2, 1)
    low = m < _SQRTHF_F
    e = e - np.int32(1 if low else 0)
    t = (m + m if low else m) - _F(1.0)
    z = t * t
    y = (((((((((_L1_F * t + _L2_F) * t + _L3_F) * t + _L4_F) * t + _L5_F) * t + _L6_F) * t + _L7_F) * t
            + _L8_F) * t + _L9_F) * t * z)
    fe = _F(e)
    y = y + LN2_LO_F * fe
    y = y - _F(0.5) * z
    return (t + y) + LN2_HI_F * fe


def vlog(x):
    """Vectorizable natural log of a positive, finite float32 or float64 (Numba only)."""
    return math.log(x)


overload(vlog)(by_dtype(_log32, log64))
