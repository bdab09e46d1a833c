"""Branchless, vectorizable cos and sin for Numba kernels.

Numba on this stack has no SVML, so ``np.cos`` or ``math.exp`` inside a loop is a
scalar libm call and the loop cannot vectorize. The functions here are written as
range reduction plus a polynomial with selects instead of branches, so that LLVM
inlines them and emits SIMD code for the loops that call them. The exp and the log,
built on the same bit casts, are :mod:`kernelmaps._numba.fastmath_exp`'s and
:mod:`kernelmaps._numba.fastmath_log`'s.

Inside ``@njit`` code call the generic :func:`vcos`, :func:`vsin` and :func:`vsincos`
(and :func:`kernelmaps._numba.fastmath_exp.vexp`,
:func:`kernelmaps._numba.fastmath_log.vlog`): each resolves at compile time to the
float32 or float64 implementation of its argument's type, so float32 kernels stay
in float32 and use twice the SIMD lanes.

Accuracy (tested against numpy in ``tests/test_fastmath.py``):

* float64: absolute error below 1e-14 for cos/sin with ``|x| <= TRIG_LIMIT64``;
* float32: absolute error below 1e-6 for ``|x| <= TRIG_LIMIT32``.

Beyond the trig limits the Cody-Waite reduction loses bits. Kernels that can meet
such arguments check a row cheaply (a vectorized sum of squares) and fall back to
``math.cos`` for that row: see :func:`row_needs_libm`.

Polynomial coefficients are the published minimax sets of fdlibm (``__kernel_sin``,
``__kernel_cos``) for float64 and of Cephes (``sinf``, ``cosf``) for float32.
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
POLY_FLAGS = {"nsz", "arcp", "contract", "afn"}

TRIG_LIMIT64 = 1.0e6  # k * PIO2_1 is exact while |k| < 2**20
TRIG_LIMIT32 = 8192.0  # Cephes' stated range for the float32 reduction


# -- float64 constants (fdlibm) ---------------------------------------------
_TWO_OVER_PI = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e00  # first 33 bits of pi/2
_PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
_PIO2_3 = 2.02226624871116645580e-21  # next 33 bits
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10

# cos on the half-period: x = k pi + r with |r| <= pi/2, cos x = (-1)^k cos r. One
# even polynomial replaces the sin/cos pair and the quadrant selects of a pi/2
# reduction: cos r = 1 + z q(z), z = r^2, with q the Chebyshev interpolant of
# (cos(sqrt z) - 1) / z on [0, (pi/2)^2], computed at 40 digits by
#     mpmath.chebyfit(lambda z: (mpmath.cos(mpmath.sqrt(z)) - 1) / z if z else -0.5,
#                     [0, (mpmath.pi / 2) ** 2], N)
# with N = 8 (float64: largest error of the polynomial evaluated in float64 over
# the interval 2.4e-16) and N = 5 (float32: 1.2e-7); the constant term 1 is kept
# exact, so cos 0 = 1. Taylor's series would need 10 and 6 terms for the same
# accuracy.
_Q0, _Q1, _Q2, _Q3, _Q4, _Q5, _Q6, _Q7 = (
    -0.5, 0.04166666666666634, -0.0013888888888860709, 2.4801587292446213e-05,
    -2.755731776732053e-07, 2.0876630867422994e-09, -1.1464689885720029e-11, 4.6276759850181716e-14)
_ONE_OVER_PI = 3.18309886183790671538e-01
_PI_1 = 2.0 * _PIO2_1  # doubling is exact: pi in three 33-bit parts
_PI_2 = 2.0 * _PIO2_2
_PI_3 = 2.0 * _PIO2_3
# Adding 1.5 * 2**52 (2**23 in float32) rounds a float to an integer held in the low
# mantissa bits of the sum: k and its parity come out of one FMA and a bit cast,
# with no float-to-int conversion (AVX2 has none for float64 vectors, so LLVM
# scalarizes it).
ROUND64 = 6755399441055744.0
ROUND32 = np.float32(12582912.0)

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
LN2_HI_F = _F(0.693359375)
LN2_LO_F = _F(-2.12194440e-4)
_Q0_F, _Q1_F, _Q2_F, _Q3_F, _Q4_F = (_F(c) for c in (
    -0.5, 0.0416666604578495, -0.0013888651737943292, 2.4774579287623055e-05, -2.62975163423107e-07))
_ONE_OVER_PI_F = _F(0.318309886183790671538)
_DP1PI_F = _F(3.140625)  # Cephes' pi/4 parts times 4 (exact): pi in three parts
_DP2PI_F = _F(9.67502593994140625e-4)
_DP3PI_F = _F(1.509957990978376432e-7)


#: The integer type of each float's width: a bit cast maps one to the other.
_SAME_WIDTH_INT = {types.float64: types.int64, types.float32: types.int32}


def _bitcast_intrinsic(name, targets, doc):
    """An intrinsic ``name(value)`` reinterpreting the bits of ``value`` as the
    type ``targets`` maps its type to (of the same width): one LLVM ``bitcast``,
    no conversion. Other argument types do not type."""

    def typer(typingctx, value):
        target = targets.get(value)
        if target is None:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(signature.return_type))

        return target(value), codegen

    # intrinsic() takes its name and docstring from the typer, so that typing
    # errors and help() tell the two apart
    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


bits_to_float = _bitcast_intrinsic(
    "bits_to_float", {i: f for f, i in _SAME_WIDTH_INT.items()},
    "Reinterpret the bits of an int64 (int32) as a float64 (float32).")
float_to_bits = _bitcast_intrinsic(
    "float_to_bits", _SAME_WIDTH_INT, "Reinterpret the bits of a float64 (float32) as an int64 (int32).")


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
@njit(cache=True, fastmath=POLY_FLAGS, inline="never")  # see _scaled_cos64
def _sincos64(x):
    t = x * _TWO_OVER_PI + ROUND64
    k = t - ROUND64
    r = x - k * _PIO2_1
    r = r - k * _PIO2_2
    r = r - k * _PIO2_3
    q = float_to_bits(t)  # its low bits are k's: 1.5 * 2**52 is a multiple of 4
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    c = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    return _by_quadrant(q, s, c)


# inline="never" at Numba's level (LLVM still inlines it) keeps these flags on
# its instructions: inlined into a caller compiled with "reassoc", the reduction
# (x * (1/pi) + 1.5 * 2**52) - 1.5 * 2**52 would fold into a plain product.
@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _scaled_cos64(x, scale):
    """``scale * cos(x)`` for ``|x| <= TRIG_LIMIT64``: half-period reduction, one
    even polynomial with ``scale`` folded into its coefficients (hoisted out of
    loops), the sign from k's parity bit."""
    t = x * _ONE_OVER_PI + ROUND64
    k = t - ROUND64
    r = x - k * _PI_1
    r = r - k * _PI_2
    r = r - k * _PI_3
    z = r * r
    c = scale + z * (scale * _Q0 + z * (scale * _Q1 + z * (scale * _Q2 + z * (scale * _Q3 + z * (
        scale * _Q4 + z * (scale * _Q5 + z * (scale * _Q6 + z * (scale * _Q7))))))))
    return bits_to_float(float_to_bits(c) ^ (float_to_bits(t) << 63))


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _cos64(x):
    return _scaled_cos64(x, 1.0)


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _sin64(x):
    return _sincos64(x)[0]


# ---------------------------------------------------------------- float32
@njit(cache=True, fastmath=POLY_FLAGS, inline="never")  # see _scaled_cos32
def _sincos32(x):
    t = x * _TWO_OVER_PI_F + ROUND32
    k = t - ROUND32
    r = x - k * _DP1_F
    r = r - k * _DP2_F
    r = r - k * _DP3_F
    q = float_to_bits(t)
    z = r * r
    s = r + r * z * (_S1_F + z * (_S2_F + z * _S3_F))
    c = _F(1.0) - _F(0.5) * z + z * z * (_C1_F + z * (_C2_F + z * _C3_F))
    return _by_quadrant(q, s, c)


# inline="never" at Numba's level (LLVM still inlines it) keeps these flags on
# its instructions: inlined into a caller compiled with "reassoc", the reduction
# (x * (1/pi) + 1.5 * 2**52) - 1.5 * 2**52 would fold into a plain product.
@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _scaled_cos32(x, scale):
    """``scale * cos(x)`` for ``|x| <= TRIG_LIMIT32``, as :func:`_scaled_cos64`."""
    t = x * _ONE_OVER_PI_F + ROUND32
    k = t - ROUND32
    r = x - k * _DP1PI_F
    r = r - k * _DP2PI_F
    r = r - k * _DP3PI_F
    z = r * r
    c = scale + z * (scale * _Q0_F + z * (scale * _Q1_F + z * (scale * _Q2_F + z * (
        scale * _Q3_F + z * (scale * _Q4_F)))))
    return bits_to_float(np.int32(float_to_bits(c) ^ (float_to_bits(t) << 31)))


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _cos32(x):
    return _scaled_cos32(x, _F(1.0))


@njit(cache=True, fastmath=POLY_FLAGS, inline="never")
def _sin32(x):
    return _sincos32(x)[0]


# ------------------------------------------------------- generic entry points
def vcos(x):
    """Vectorizable cosine of a float32 or float64 scalar (Numba only)."""
    return math.cos(x)


def vsin(x):
    """Vectorizable sine of a float32 or float64 scalar (Numba only)."""
    return math.sin(x)


def vscaled_cos(x, scale):
    """``scale * cos(x)`` for ``|x| <= trig_limit(x)``, ``scale`` of x's type, with
    ``scale`` folded into the polynomial (Numba only)."""
    return scale * math.cos(x)


def vsincos(x):
    """``(sin(x), cos(x))`` sharing one range reduction (Numba only)."""
    return math.sin(x), math.cos(x)


def trig_limit(x):
    """The largest ``|x|`` for which :func:`vcos` is accurate, in x's type."""
    return TRIG_LIMIT64


def by_dtype(impl32, impl64):
    def typer(x):
        if x == types.float32:
            return lambda x: impl32(x)
        if x == types.float64:
            return lambda x: impl64(x)
        return None

    return typer


overload(vcos)(by_dtype(_cos32, _cos64))
overload(vsin)(by_dtype(_sin32, _sin64))
overload(vsincos)(by_dtype(_sincos32, _sincos64))


@overload(vscaled_cos)
def _vscaled_cos_impl(x, scale):
    if x == types.float32 and scale == types.float32:
        return lambda x, scale: _scaled_cos32(x, scale)
    if x == types.float64 and scale == types.float64:
        return lambda x, scale: _scaled_cos64(x, scale)
    return None


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
