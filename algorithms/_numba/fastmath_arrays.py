"""The vectorized functions of :mod:`kernelmaps._numba.fastmath` and
:mod:`kernelmaps._numba.fastmath_exp` applied to whole arrays.

:func:`cos`, :func:`sin`, :func:`exp` and :func:`exp_nonpositive` run the branchless
kernels over a float32 or float64 array (the trig ones fall back to libm for entries
beyond the reduction's range); :func:`all_finite` is the branch-free finiteness test the transforms run on
each output block while it is in cache.
"""

import math

import numpy as np
from numba import njit

from .fastmath import FASTMATH, row_needs_libm, trig_limit, vcos, vsin
from .fastmath_exp import vexp, vexp_nonpositive

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


@njit(cache=True, nogil=True, parallel=False, fastmath=FASTMATH)
def _apply_exp_nonpositive(x, out):
    for j in range(x.shape[0]):
        out[j] = vexp_nonpositive(x[j])


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


def exp_nonpositive(x):
    """Element-wise exponential of a float32 or float64 array of entries ``<= 0`` (or NaN),
    by the kernel the distance kernels use; a positive entry is refused."""
    x = np.asarray(x)
    if np.any(x > 0):
        raise ValueError(f"exp_nonpositive takes entries <= 0, got a largest entry of {np.nanmax(x)}")
    return _elementwise(_apply_exp_nonpositive, x)


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
