"""The logistic function and its loss for Numba kernels: :func:`sigmoid` and :func:`softplus`.

Both are branch-free apart from selects, on :func:`~kernelmaps._numba.fastmath_exp.vexp_nonpositive`
and :func:`~kernelmaps._numba.fastmath_log.vlog`, so the loops that call them vectorize. They are
inlined into the calling kernel (``inline="always"``) and compile for the argument's dtype.
"""

from numba import njit

from .fastmath import FASTMATH
from .fastmath_exp import vexp_nonpositive
from .fastmath_log import vlog


@njit(cache=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def log1p_small(e):
    """``log(1 + e)`` for ``0 <= e <= 1`` without losing ``e``'s digits when ``e`` is tiny (Goldberg's trick:
    the rounding of ``1 + e`` cancels in ``log(u) / (u - 1)``)."""
    u = 1 + e
    d = u - 1
    return e if d == 0 else vlog(u) * (e / d)


@njit(cache=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def softplus(a):
    """``log(1 + exp(a))`` for any finite ``a``, without overflow."""
    return (a if a > 0 else 0 * a) + log1p_small(vexp_nonpositive(-abs(a)))


@njit(cache=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def sigmoid(a):
    """``1 / (1 + exp(-a))`` without overflow: ``exp(-|a|) <= 1`` in either branch."""
    e = vexp_nonpositive(-abs(a))
    return 1 / (1 + e) if a >= 0 else e / (1 + e)
