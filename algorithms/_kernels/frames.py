"""The frames kernels are evaluated in, and the domains of the histogram kernels.

Two changes of variable keep the exact kernels accurate and defined:

* shift-invariant kernels only see ``x - y``, so they are evaluated on data
  centred and divided by a power of two (:func:`shift_invariant_frame`,
  :func:`to_frame`), with the bandwidth carried over (:func:`frame_gamma`);
* the skewed histogram kernels are shift-invariant kernels of ``log(x + c)``
  (:func:`skewed_log`), defined for ``x > -c``; the chi2 kernels need
  ``x >= 0`` (:func:`kernelmaps._core.validation.check_non_negative`).
"""

import math
import numbers

import numpy as np

#: The shift-invariant kernels of the vocabulary of :mod:`kernelmaps._kernels.exact`,
#: defined here because the bandwidth heuristics need them too.
SHIFT_INVARIANT = ("gaussian", "laplacian", "cauchy", "matern")


def shift_invariant_frame(A):
    """A centre and a power-of-two scale that bring the rows of ``A`` near the unit ball.

    A shift-invariant kernel only sees differences, so ``k(x, y)`` can be
    evaluated on ``(x - c) / s``: centring removes the cancellation of
    ``|x|^2 + |y|^2 - 2 x.y`` for data far from the origin (it costs float32 all
    its digits at an offset of 1e4), and a power-of-two ``s`` (exact to divide
    by) keeps ``|x|^2`` finite at any magnitude. :func:`frame_gamma` carries
    ``s`` into the bandwidth.

    Returns
    -------
    center : ndarray of shape (d,), float64
    scale : float
        ``2^k`` with ``max |A - center|`` in ``[2^k, 2^(k+1))``, or 1.0.
    """
    A = np.asarray(A, dtype=np.float64)
    # the mean of A / 2^k: a plain sum of rows near 1e308 would overflow
    coarse = power_of_two_below(float(np.max(np.abs(A))) if A.size else 0.0)
    center = (A * (1.0 / coarse)).mean(axis=0) * coarse
    return center, power_of_two_below(float(np.max(np.abs(A - center))) if A.size else 0.0)


def power_of_two_below(value):
    """``2^floor(log2(value))`` for a finite ``value > 0``, else 1.0."""
    if not (0.0 < value < np.inf):
        return 1.0
    return 2.0 ** math.floor(math.log2(value))


def to_frame(A, center, scale, dtype):
    """``(A - center) / scale`` in ``dtype``, computed in float64 with ``center`` rounded to ``dtype``.

    With the centre rounded first, a float32 row lands on exactly the values that
    the transforms' own float32 ``(x - center) * (1 / scale)`` gives it (the
    float64 difference of two float32 numbers rounds to their float32 difference,
    and a power of two scales exactly), so a landmark met again in a transform
    is at distance 0 from itself; in float64 nothing is rounded, and nothing
    overflows at any magnitude.
    """
    center = np.asarray(center, dtype=dtype).astype(np.float64)
    return np.ascontiguousarray((np.asarray(A, dtype=np.float64) - center) * (1.0 / scale), dtype=dtype)


def frame_gamma(kernel, gamma, scale, dtype):
    """The bandwidth that gives ``k`` on data divided by ``scale``.

    ``gamma s^2`` for the Gaussian, Cauchy and Matérn kernels (squared differences; Matérn's
    block ``g`` is ``4 nu gamma``, see :func:`kernelmaps._kernels.formulas.kernel_record`),
    ``gamma s`` for the Laplacian and the hyperbolic secant (absolute ones). Clamped to the dtype's largest number: an
    infinite bandwidth would turn ``gamma * 0`` on the diagonal into NaN, while
    the clamped one still gives ``exp(-huge * t) = 0`` for ``t > 0``
    (:func:`dtype_gamma`).
    """
    value = gamma * scale if kernel in ("laplacian", "sech") else gamma * scale * scale
    return dtype_gamma(value, dtype)


def dtype_gamma(value, dtype):
    """A positive bandwidth as a finite, nonzero number of ``dtype``.

    Clamped to ``[tiny, max]`` of the dtype: 0 would make ``gamma / gamma`` in
    the kernel formulas a division by zero, and infinity would make
    ``gamma * 0`` NaN; at either end the kernel values are the same to the
    dtype's precision (1 at distance 0, 0 at any other).
    """
    info = np.finfo(dtype)
    return dtype(min(max(value, float(info.tiny)), float(info.max)))


def check_skewedness(skewedness):
    """A finite real ``c`` of ``log(x + c)``, as a float."""
    if isinstance(skewedness, (bool, np.bool_)) or not isinstance(skewedness, numbers.Real) \
            or not np.isfinite(skewedness):
        raise ValueError(f"skewedness must be a finite real number, got {skewedness!r}")
    return float(skewedness)


def skewed_log(A, c, name, dtype=None):
    """``log(A + c)`` (computed in float64, returned in ``A``'s dtype or ``dtype``).

    Raises ``ValueError`` naming the first entry with ``A <= -c``, where the
    skewed kernels are not defined.
    """
    A = np.asarray(A)
    shifted = A.astype(np.float64) + c
    if A.size and not (shifted > 0).all():
        row, col = np.argwhere(~(shifted > 0))[0]
        raise ValueError(
            f"the skewed kernels read log({name} + skewedness) and need every entry of {name} above "
            f"-skewedness = {-c:g}; {name}[{row}, {col}] = {float(A[row, col])!r}"
        )
    return np.log(shifted).astype(dtype or A.dtype, copy=False)


