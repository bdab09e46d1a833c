"""The arc-cosine kernels of Cho & Saul (2009): closed form, feature epilogue, order check.

For ``n`` in {0, 1, 2} the kernel of order ``n`` is defined by the integral

    ``k_n(x, y) = 2 E_w[Theta(w.x) Theta(w.y) (w.x)^n (w.y)^n]``,  ``w ~ N(0, I_d)``,

with the Heaviside step ``Theta(z) = (1 + sign z) / 2`` (so ``Theta(0) = 1/2``),
and has the closed form (Cho & Saul 2009, section 2)

    ``k_n(x, y) = (1/pi) ||x||^n ||y||^n J_n(theta)``,  ``theta = arccos(x.y / (||x|| ||y||))``,

    ``J_0 = pi - theta``,
    ``J_1 = sin(theta) + (pi - theta) cos(theta)``,
    ``J_2 = 3 sin(theta) cos(theta) + (pi - theta) (1 + 2 cos^2(theta))``.

A zero row has no angle. The integral is still defined: for ``x = 0`` every
``w.x`` is 0, ``Theta(0) = 1/2`` and ``0^n = 0``, so ``k_0(0, y) = 2 (1/2) (1/2)
= 1/2`` for every ``y`` (``0`` included) and ``k_n(0, y) = 0`` for ``n >= 1``. The
closed form gives the same values with ``cos(theta) := 0`` (``theta = pi/2``) for a
zero row, which is how it is evaluated here.

The random features ``z(x) = sqrt(2/D) [Theta(w_i.x) (w_i.x)^n]_i`` satisfy
``E[z(x).z(y)] = k_n(x, y)``: the epilogue :func:`arc_cosine_features` turns the
product ``X W`` into them.

References
----------
Cho, Y. and Saul, L. K. Kernel methods for deep learning. NIPS 2009.
"""

import numbers

import numpy as np
from numba import njit

from .._core.parallel import block_rows, run_row_blocks
from .._core.validation import FeatureOverflowError
from .._numba.fastmath import FASTMATH

#: The orders with a closed form here.
ORDERS = (0, 1, 2)


def check_order(order):
    """``order`` as a Python ``int`` in :data:`ORDERS`, or a ``ValueError`` naming it."""
    if isinstance(order, (bool, np.bool_)) or not isinstance(order, numbers.Integral):
        raise ValueError(f"order must be an integer in {list(ORDERS)}, got {order!r}")
    if int(order) not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)} (closed forms of Cho & Saul 2009), got {order}")
    return int(order)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def arc_cosine_features(P, weight, order):
    """In place, ``P[i, j] <- weight[j] * Theta(P[i, j]) P[i, j]^order``, ``Theta(0) = 1/2``.

    The epilogue after the projection ``P = X W``, serial on one row block (the
    blocks run on the thread pool). ``weight[j]`` is ``sqrt(2/D)`` times
    ``s_j^order`` for a projection whose row ``j`` has the norm ``s_j`` folded
    out (``Theta(s p) (s p)^n = s^n Theta(p) p^n`` for ``s > 0``), or ``sqrt(2/D)``.
    A non-finite projection gives a NaN feature, never a silent 0 or 1/2.

    Parameters
    ----------
    P : ndarray of shape (n, D), float32 or float64, C-contiguous
    weight : ndarray of shape (D,), same dtype, positive
    order : int, 0, 1 or 2

    Returns
    -------
    bool
        True if every output is finite (the sum of the non-negative outputs is);
        False means "not established", and the caller checks.

    References
    ----------
    Cho, Y. and Saul, L. K. Kernel methods for deep learning. NIPS 2009, section 2.
    """
    n, m = P.shape
    one = weight[0] / weight[0]
    zero = one - one
    half = one / (one + one)
    total = zero
    for i in range(n):
        row = P[i]
        if order == 0:
            for j in range(m):
                p = row[j]
                step = one if p > zero else (half if p == zero else zero)
                # a non-finite p gives NaN: p - p in a select, since in a sum
                # (step + (p - p)) the reassociating flags cancel it
                gap = p - p
                v = weight[j] * step if gap == zero else gap
                row[j] = v
                total += v
        elif order == 1:
            for j in range(m):
                p = row[j]
                v = weight[j] * (p * (one if p > zero else zero))
                row[j] = v
                total += v
        else:
            for j in range(m):
                p = row[j]
                r = p * (one if p > zero else zero)
                v = weight[j] * (r * r)
                row[j] = v
                total += v
    return total - total == zero


def unit_rows(A):
    """``(norms, U)``: the row norms of ``A`` (float64) and its rows scaled to unit norm.

    Each row is divided by its largest magnitude first, so that neither the
    squares of entries beyond ~1e154 overflow nor those below ~1e-154 underflow.
    A zero row keeps norm 0 and gives a zero row of ``U``.
    """
    A = np.asarray(A, dtype=np.float64)
    peak = np.max(np.abs(A), axis=1)
    peak[peak == 0] = 1.0
    U = A / peak[:, None]
    r = np.sqrt(np.einsum("ij,ij->i", U, U))
    norms = peak * r
    r[r == 0] = 1.0
    U /= r[:, None]
    return norms, U


#: Cosines beyond this magnitude get their angle from the rows themselves: near
#: ``|cos| = 1`` an error ``e`` in the cosine moves ``arccos`` by ``sqrt(2 e)``
#: (1e-8 for a rounding error of 1e-16), and ``k_0 = 1 - theta/pi`` with it.
NEAR_PARALLEL = 0.99
#: Pairs whose angle is recomputed at once (a ``pairs x d`` temporary).
PAIR_CHUNK = 4096


def angles(C, U, V):
    """``arccos`` of the cosines ``C = U V^T`` of unit rows, accurate near 0 and pi.

    Where ``|C| > NEAR_PARALLEL`` the angle is ``2 asin(||u - v|| / 2)`` (or
    ``pi - 2 asin(||u + v|| / 2)``), which keeps full relative precision, and
    ``C`` is replaced by its cosine. ``C`` is clipped to [-1, 1] in place.
    """
    np.clip(C, -1.0, 1.0, out=C)
    theta = np.arccos(C)
    rows, cols = np.nonzero(np.abs(C) > NEAR_PARALLEL)
    for start in range(0, len(rows), PAIR_CHUNK):
        r, c = rows[start:start + PAIR_CHUNK], cols[start:start + PAIR_CHUNK]
        sign = np.where(C[r, c] > 0, -1.0, 1.0)
        half_chord = np.minimum(np.linalg.norm(U[r] + sign[:, None] * V[c], axis=1) / 2, 1.0)
        t = 2.0 * np.arcsin(half_chord)
        theta[r, c] = np.where(sign < 0, t, np.pi - t)
        C[r, c] = np.cos(theta[r, c])
    return theta


def angular_part(C, theta, order):
    """In place, ``C <- J_order(theta) / pi`` given the cosines ``C`` of the angles ``theta``."""
    rest = np.pi - theta
    if order == 0:
        np.divide(rest, np.pi, out=C)
        return C
    sin = np.sin(theta)
    if order == 1:
        J = sin + rest * C
    else:
        J = 3.0 * sin * C + rest * (1.0 + 2.0 * C * C)
    np.divide(J, np.pi, out=C)
    return C


def arc_cosine_gram(X, Y, order):
    """The Gram matrix ``k_order(X[i], Y[j])`` of validated, finite, dense arrays.

    One BLAS product of the unit rows gives the cosines; each row block then gets
    the angular part and the norms ``(||x|| ||y||)^order``. Computed in float64,
    returned in float32 when both inputs are float32. ``Y=None`` means ``Y = X``;
    the diagonal is then exact (``theta = 0``).

    Raises
    ------
    FeatureOverflowError
        If a kernel value is not finite in float64 (order 2 on inputs whose norms
        exceed ~1e77).
    """
    same = Y is None
    dtype = np.float32 if X.dtype == np.float32 and (same or Y.dtype == np.float32) else np.float64
    nx, Ux = unit_rows(X)
    ny, Uy = (nx, Ux) if same else unit_rows(Y)
    K = Ux @ Uy.T
    if same:
        # exact symmetry, and cos(theta) = 1 on the diagonal of every non-zero row
        K += K.T
        K *= 0.5
        np.fill_diagonal(K, np.where(nx > 0, 1.0, 0.0))
    overflowed = []

    def work(start, stop):
        theta = angles(K[start:stop], Ux[start:stop], Uy)
        block = angular_part(K[start:stop], theta, order)
        if order:
            with np.errstate(over="ignore"):
                block *= (nx[start:stop, None] * ny[None, :]) ** order
        if not np.isfinite(block).all():
            overflowed.append(start)

    run_row_blocks(K.shape[0], block_rows(K.shape[1] * 8 * 4), work)
    if overflowed:
        peak = max(float(np.max(np.abs(X))), 0.0 if same else float(np.max(np.abs(Y))))
        raise FeatureOverflowError(
            f"the arc-cosine kernel of order {order} overflows float64 on inputs of magnitude up to "
            f"{peak:.3g}; rescale the input"
        )
    return K.astype(dtype, copy=False)
