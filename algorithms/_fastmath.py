"""Branchless, vectorizable cos, sin and exp for Numba kernels.

Numba on this stack has no SVML, so ``np.cos`` or ``math.exp`` inside a loop is a
scalar libm call and the loop cannot vectorize. The functions here are written as
range reduction plus a polynomial with selects instead of branches, so that LLVM
inlines them and emits SIMD code for the loops that call them.

Inside ``@njit`` code call the generic :func:`vcos`, :func:`vsin`, :func:`vsincos`
and :func:`vexp`: each resolves at compile time to the float32 or float64
implementation of its argument's type, so float32 kernels stay in float32 and use
twice the SIMD lanes.

Accuracy (tested against numpy in ``tests/test_fastmath.py``):

* float64: absolute error below 1e-14 for cos/sin with ``|x| <= TRIG_LIMIT64``;
  relative error below 1e-14 for exp over its whole range.
* float32: absolute error below 1e-6 for ``|x| <= TRIG_LIMIT32``; relative error
  below 1e-6 for exp.

Beyond the trig limits the Cody-Waite reduction loses bits. Kernels that can meet
such arguments check a row cheaply (a vectorized sum of squares) and fall back to
``math.cos`` for that row: see :func:`row_needs_libm`.

Polynomial coefficients are the published minimax sets of fdlibm (``__kernel_sin``,
``__kernel_cos``) for float64 and of Cephes (``sinf``, ``cosf``, ``expf``) for
float32; the float64 exp uses the Taylor series to degree 13 on
``|r| <= ln(2)/2``, whose truncation error is below 2e-16.
"""

import math

import numpy as np
from numba import njit, types
from numba.extending import intrinsic, overload

# The library's shared fastmath flags: they allow reassociation (for vectorized
# reductions) and contraction, but keep NaN and inf semantics ("nnan"/"ninf" off).
FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}
# The polynomials themselves are compiled without "reassoc": reassociation could
# fold the three-part Cody-Waite reduction x - k*P1 - k*P2 - k*P3 into one product
# and destroy its extra precision.
_POLY_FLAGS = {"nsz", "arcp", "contract", "afn"}

TRIG_LIMIT64 = 1.0e6  # k * PIO2_1 is exact while |k| < 2**20
TRIG_LIMIT32 = 8192.0  # Cephes' stated range for the float32 reduction

# exp clamps its argument just outside the range where the result is a finite,
# nonzero number, so that 2**k stays a normal number in two factors while the
# result still overflows to inf (or underflows to 0) where libm's does.
_EXP64_HIGH = 720.0  # ln(largest float64) = 709.78
_EXP64_LOW = -760.0  # ln(smallest float64 subnormal) = -744.44
_EXP32_HIGH = 100.0  # ln(largest float32) = 88.72
_EXP32_LOW = -110.0  # ln(smallest float32 subnormal) = -103.28
# IEEE 754 layout: the exponent bias, and the bits of mantissa below the exponent
_BIAS64, _MANTISSA64 = 1023, 52
_BIAS32, _MANTISSA32 = 127, 23

# -- float64 constants (fdlibm) ---------------------------------------------
_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e00  # first 33 bits of pi/2
_PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
_PIO2_3 = 2.02226624871116645580e-21  # next 33 bits
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11
_LOG2E = 1.44269504088896338700e00
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10

# -- float32 constants (Cephes) ---------------------------------------------
_F = np.float32
_TWO_OVER_PI_F = _F(0.636619772367581343)
_DP1_F = _F(1.5703125)
_DP2_F = _F(4.837512969970703125e-4)
_DP3_F = _F(7.54978995489188216e-8)
_S1_F = _F(-1.6666654611e-1)
_S2_F = _F(8.3321608736e-3)
_S3_F = _F(-1.9515295891e-4)
_C1_F = _F(4.166664568298827e-2)
_C2_F = _F(-1.388731625493765e-3)
_C3_F = _F(2.443315711809948e-5)
_LOG2E_F = _F(1.44269504088896341)
_LN2_HI_F = _F(0.693359375)
_LN2_LO_F = _F(-2.12194440e-4)
_E1_F = _F(5.0000001201e-1)
_E2_F = _F(1.6666665459e-1)
_E3_F = _F(4.1665795894e-2)
_E4_F = _F(8.3334519073e-3)
_E5_F = _F(1.3981999507e-3)
_E6_F = _F(1.9875691500e-4)


@intrinsic
def _bits_to_float(typingctx, bits):
    """Reinterpret the bits of an int64 (int32) as a float64 (float32)."""
    if bits == types.int64:
        sig = types.float64(types.int64)
    elif bits == types.int32:
        sig = types.float32(types.int32)
    else:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@njit(cache=True, inline="always")
def _by_quadrant(q, s, c):
    """``(sin x, cos x)`` from ``s = sin r``, ``c = cos r`` with ``x = r + q pi/2``."""
    swap = (q & 1) != 0
    sin_abs = c if swap else s
    cos_abs = s if swap else c
    sin_v = -sin_abs if (q & 2) != 0 else sin_abs
    cos_v = -cos_abs if ((q + 1) & 2) != 0 else cos_abs
    return sin_v, cos_v


# ---------------------------------------------------------------- float64
@njit(cache=True, fastmath=_POLY_FLAGS, inline="always")
def _sincos64(x):
    k = np.floor(x * _TWO_OVER_PI + 0.5)
    r = x - k * _PIO2_1
    r = r - k * _PIO2_2
    r = r - k * _PIO2_3
    q = np.int64(k)
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    c = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    return _by_quadrant(q, s, c)


@njit(cache=True, fastmath=_POLY_FLAGS, inline="never")
def _cos64(x):
    return _sincos64(x)[1]


@njit(cache=True, fastmath=_POLY_FLAGS, inline="never")
def _sin64(x):
    return _sincos64(x)[0]


@njit(cache=True, fastmath=_POLY_FLAGS, inline="never")
def _exp64(x):
    # Clamping keeps the integer exponent in range; the two-factor scaling below
    # then overflows to inf or underflows through the subnormals as libm does.
    xc = x if x < _EXP64_HIGH else _EXP64_HIGH
    xc = xc if xc > _EXP64_LOW else _EXP64_LOW
    k = np.floor(xc * _LOG2E + 0.5)
    r = xc - k * _LN2_HI
    r = r - k * _LN2_LO
    p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
        1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
            1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                1.0 / 479001600 + r * (1.0 / 6227020800)))))))))))))
    n = np.int64(k)
    half = n >> 1
    scale_a = _bits_to_float((half + _BIAS64) << _MANTISSA64)
    scale_b = _bits_to_float((n - half + _BIAS64) << _MANTISSA64)
    res = p * scale_a * scale_b
    return res if x == x else x


# ---------------------------------------------------------------- float32
@njit(cache=True, fastmath=_POLY_FLAGS, inline="always")
def _sincos32(x):
    k = np.floor(x * _TWO_OVER_PI_F + _F(0.5))
    r = x - k * _DP1_F
    r = r - k * _DP2_F
    r = r - k * _DP3_F
    q = np.int32(k)
    z = r * r
    s = r + r * z * (_S1_F + z * (_S2_F + z * _S3_F))
    c = _F(1.0) - _F(0.5) * z + z * z * (_C1_F + z * (_C2_F + z * _C3_F))
    return _by_quadrant(q, s, c)


@njit(cache=True, fastmath=_POLY_FLAGS, inline="never")
def _cos32(x):
    return _sincos32(x)[1]


@njit(cache=True, fastmath=_POLY_FLAGS, inline="never")
def _sin32(x):
    return _sincos32(x)[0]


@njit(cache=True, fastmath=_POLY_FLAGS, inline="never")
def _exp32(x):
    xc = x if x < _F(_EXP32_HIGH) else _F(_EXP32_HIGH)
    xc = xc if xc > _F(_EXP32_LOW) else _F(_EXP32_LOW)
    k = np.floor(xc * _LOG2E_F + _F(0.5))
    r = xc - k * _LN2_HI_F
    r = r - k * _LN2_LO_F
    z = r * r
    p = ((((((_E6_F * r + _E5_F) * r + _E4_F) * r + _E3_F) * r + _E2_F) * r + _E1_F)
         * z + r + _F(1.0))
    n = np.int32(k)
    half = n >> 1
    scale_a = _bits_to_float(np.int32((half + _BIAS32) << _MANTISSA32))
    scale_b = _bits_to_float(np.int32((n - half + _BIAS32) << _MANTISSA32))
    res = p * scale_a * scale_b
    return res if x == x else x


# ------------------------------------------------------- generic entry points
def vcos(x):
    """Vectorizable cosine of a float32 or float64 scalar (Numba only)."""
    return math.cos(x)


def vsin(x):
    """Vectorizable sine of a float32 or float64 scalar (Numba only)."""
    return math.sin(x)


def vsincos(x):
    """``(sin(x), cos(x))`` sharing one range reduction (Numba only)."""
    return math.sin(x), math.cos(x)


def vexp(x):
    """Vectorizable exponential of a float32 or float64 scalar (Numba only)."""
    return math.exp(x)


def trig_limit(x):
    """The largest ``|x|`` for which :func:`vcos` is accurate, in x's type."""
    return TRIG_LIMIT64


def _by_dtype(impl32, impl64):
    def typer(x):
        if x == types.float32:
            return lambda x: impl32(x)
        if x == types.float64:
            return lambda x: impl64(x)
        return None

    return typer


overload(vcos)(_by_dtype(_cos32, _cos64))
overload(vsin)(_by_dtype(_sin32, _sin64))
overload(vsincos)(_by_dtype(_sincos32, _sincos64))
overload(vexp)(_by_dtype(_exp32, _exp64))


@overload(trig_limit)
def _trig_limit_impl(x):
    if x == types.float32:
        return lambda x: _F(TRIG_LIMIT32)
    if x == types.float64:
        return lambda x: TRIG_LIMIT64
    return None


@njit(cache=True, fastmath=FASTMATH, inline="always")
def row_needs_libm(row, limit):
    """True if some ``|row[j]|`` may exceed ``limit`` (or is not finite).

    A sum of squares vectorizes where a max-abs reduction does not; it is an upper
    bound on ``max |row[j]|**2``, so a False answer is always safe.
    """
    acc = limit - limit
    for j in range(row.shape[0]):
        acc += row[j] * row[j]
    return not (acc <= limit * limit)


# ---------------------------------------------------- array-level kernels
@njit(cache=True, nogil=True, parallel=False, fastmath=FASTMATH)
def _apply_cos(x, out):
    limit = trig_limit(x[0])
    if row_needs_libm(x, limit):
        for j in range(x.shape[0]):
            out[j] = math.cos(x[j]) if abs(x[j]) > limit else vcos(x[j])
    else:
        for j in range(x.shape[0]):
            out[j] = vcos(x[j])


@njit(cache=True, nogil=True, parallel=False, fastmath=FASTMATH)
def _apply_sin(x, out):
    limit = trig_limit(x[0])
    if row_needs_libm(x, limit):
        for j in range(x.shape[0]):
            out[j] = math.sin(x[j]) if abs(x[j]) > limit else vsin(x[j])
    else:
        for j in range(x.shape[0]):
            out[j] = vsin(x[j])


@njit(cache=True, nogil=True, parallel=False, fastmath=FASTMATH)
def _apply_exp(x, out):
    for j in range(x.shape[0]):
        out[j] = vexp(x[j])


def _elementwise(kernel, x):
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"expected a float32 or float64 array, got dtype {x.dtype}")
    flat = np.ascontiguousarray(x).ravel()
    out = np.empty_like(flat)
    if flat.size:
        kernel(flat, out)
    return out.reshape(x.shape)


def cos(x):
    """Element-wise cosine of a float32 or float64 array by the vectorized kernel.

    Parameters
    ----------
    x : ndarray of float32 or float64

    Returns
    -------
    ndarray of the same shape and dtype.
    """
    return _elementwise(_apply_cos, x)


def sin(x):
    """Element-wise sine of a float32 or float64 array by the vectorized kernel."""
    return _elementwise(_apply_sin, x)


def exp(x):
    """Element-wise exponential of a float32 or float64 array by the vectorized kernel."""
    return _elementwise(_apply_exp, x)


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def all_finite(A):
    """Whether every entry of the 2-D array ``A`` is finite.

    ``x - x`` is 0 for a finite ``x`` and NaN for NaN or infinity, so the sum
    is a branch-free test. ``reassoc`` alone lets the sum vectorize (several
    partial sums) while NaN and infinity keep their meaning: without
    ``nnan``/``ninf`` the compiler may not fold ``x - x`` to 0. Accumulating in
    the array's own dtype keeps float32 rows at full vector width.
    """
    total = A.dtype.type(0)
    for i in range(A.shape[0]):
        row = A[i]
        for j in range(A.shape[1]):
            total += row[j] - row[j]
    return total == 0
