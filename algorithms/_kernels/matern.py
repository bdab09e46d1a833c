"""The Matérn kernel of the vocabulary: its ``nu``, its distances and the Bessel form.

``k(x, y) = 2^(1-nu) / Gamma(nu) * s^nu * K_nu(s)``, ``s = 2 sqrt(nu gamma) ||x - y||_2``,
which is scikit-learn's ``Matern(length_scale=l, nu=nu)`` at ``gamma = 1 / (2 l^2)``
(``s = sqrt(2 nu) r / l``). For half-integer ``nu = p + 1/2`` it is ``exp(-s)``
times a polynomial of degree ``p`` (Rasmussen & Williams 2006, eq. 4.16), which
Numba evaluates (:class:`kernelmaps._kernels.formulas.MaternHalfInteger`); for any
other ``nu`` the block holds ``s`` (:class:`kernelmaps._kernels.formulas.MaternDistance`)
and :func:`matern_from_distance` finishes it with ``scipy.special.kve`` (outside
Numba, on the same row block). Both take ``s`` from :func:`matern_distances`,
which keeps the kernel's cusp at 0 exact where the BLAS expansion of the squared
distance is all round-off.

References
----------
Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine Learning.
MIT Press, 2006, section 4.2.1 (eqs. 4.14 and 4.16).
"""

import math
import numbers

import numpy as np
from numba import njit
from scipy.special import gammaln, kve

from .._numba.fastmath import FASTMATH

#: Largest ``p`` of ``nu = p + 1/2`` evaluated as a polynomial in Numba; the
#: polynomial's coefficients stay well inside float32 up to here.
MAX_CLOSED_FORM_ORDER = 8

#: The ``nu`` parameter's text in the docstrings of the estimators that evaluate
#: the exact kernels (:func:`check_nu` validates it).
NU_DOC = """    nu : float, default=1.5
        The Matérn smoothness (> 0), used only when ``kernel='matern'`` (whose
        length-scale is ``1 / sqrt(2 gamma_)``; see :mod:`kernelmaps._kernels.exact`).
"""


def check_nu(nu):
    """The Matérn smoothness ``nu`` as a float; ``ValueError`` unless a finite real > 0."""
    if isinstance(nu, (bool, np.bool_)) or not isinstance(nu, numbers.Real) \
            or not math.isfinite(float(nu)) or not float(nu) > 0:
        raise ValueError(f"nu (the Matérn smoothness) must be a finite real number > 0, got {nu!r}")
    return float(nu)


def half_integer_order(nu):
    """``p`` if ``nu = p + 1/2`` with ``p <= MAX_CLOSED_FORM_ORDER``, else -1."""
    p = nu - 0.5
    if p == int(p) and 0 <= p <= MAX_CLOSED_FORM_ORDER:
        return int(p)
    return -1


def has_closed_form(nu):
    """Whether the Matérn kernel of ``nu`` is evaluated in Numba (no Bessel function on the rows)."""
    return half_integer_order(nu) >= 0


#: Entries of a row that :func:`matern_distances` screens for round-off at a
#: time: a coinciding pair costs a scalar pass over its chunk, not its row.
DISTANCE_CHUNK = 512


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def matern_distances(row, x, V, sq_v, g):
    """In place, turn ``row = x V^T`` (a BLAS product) into ``s = sqrt(g |x - v_j|^2)``.

    The expansion ``|x|^2 + |v|^2 - 2 x.v`` has an absolute rounding error of at
    most ``(2 gamma_d + 4 u)(|x|^2 + |v|^2) ~ (d + 2) eps (|x|^2 + |v|^2)``
    (``u = eps / 2``, ``gamma_d = d u / (1 - d u)`` for a sum of ``d`` products,
    whatever the BLAS summation order, and ``2 |x.v| <= |x|^2 + |v|^2``). For a
    point in both arguments it leaves ``~eps |x|^2`` instead of 0, which the
    Matérn kernel's cusp (``1 - k ~ s^(2 nu)`` for ``nu < 1``) magnifies to
    ``1 - k ~ 1e-5`` in float64 and ``0.2`` in float32. So every entry below twice
    that bound is recomputed as ``sum_k (x_k - v_k)^2``, accurate to ``gamma_d``
    relative. Such entries are rare (coinciding or nearly coinciding points):
    the pass over a chunk of :data:`DISTANCE_CHUNK` entries, which vectorizes,
    only counts them, and a scalar pass fixes them in the chunks that have any.
    The Gaussian kernel needs no such pass: its slope at 0 is ``g``, so the same
    round-off moves it no more near 0 than anywhere else. Negative round-off
    lands below the bound too; NaN (from ``inf - inf``) fails every comparison
    and stays NaN for the callers' finiteness checks.

    Parameters
    ----------
    row : ndarray of shape (m,), float32 or float64
        ``x V^T`` on entry, ``s`` on exit.
    x : ndarray of shape (d,), same dtype
    V : ndarray of shape (m, d), same dtype
    sq_v : ndarray of shape (m,), same dtype, ``|v_j|^2``
    g : scalar of the dtype, ``4 nu gamma``
    """
    d = x.shape[0]
    zero = row.dtype.type(0)
    one = row.dtype.type(1)
    slack = row.dtype.type(2 * (d + 2) * np.finfo(row.dtype).eps)
    sq_x = zero
    for k in range(d):
        sq_x += x[k] * x[k]
    for start in range(0, row.shape[0], DISTANCE_CHUNK):
        # slices, so that each loop starts at 0: from a variable start the index
        # keeps Numba's negative-index wraparound and the loop does not vectorize
        part, part_sq_v = row[start:start + DISTANCE_CHUNK], sq_v[start:start + DISTANCE_CHUNK]
        suspect = zero
        for j in range(part.shape[0]):
            t = sq_x + part_sq_v[j] - (part[j] + part[j])
            t = zero if t < zero else t
            suspect += one if t <= slack * (sq_x + part_sq_v[j]) else zero
            part[j] = t
        if suspect > zero:
            for j in range(part.shape[0]):
                if part[j] <= slack * (sq_x + part_sq_v[j]):
                    v = V[start + j]
                    t = zero
                    for k in range(d):
                        t += (x[k] - v[k]) * (x[k] - v[k])
                    part[j] = t
        for j in range(part.shape[0]):
            part[j] = np.sqrt(g * part[j])


#: From this ``nu`` on, where ``kve`` overflows, ``log K_nu`` comes from Debye's expansion.
DEBYE_NU = 40.0


def _debye_log_kv(nu, s):
    """``log K_nu(s)`` by Debye's uniform expansion in ``z = s / nu`` to the ``u_3`` term.

    ``K_nu(nu z) ~ sqrt(pi / (2 nu)) e^(-nu eta) (1 + z^2)^(-1/4) sum_k (-1)^k u_k(t) / nu^k``,
    ``eta = sqrt(1 + z^2) + log(z / (1 + sqrt(1 + z^2)))``, ``t = 1 / sqrt(1 + z^2)``
    (Abramowitz & Stegun 9.7.8, 9.3.9); relative error ``O(nu^-4)``, below 1e-7 from ``nu = 40``.
    """
    z = s / nu
    root = np.sqrt(1.0 + z * z)
    eta = root + np.log(z / (1.0 + root))
    t = 1.0 / root
    t2 = t * t
    u1 = t * (3.0 - 5.0 * t2) / 24.0
    u2 = t2 * (81.0 - 462.0 * t2 + 385.0 * t2 * t2) / 1152.0
    u3 = t * t2 * (30375.0 - 369603.0 * t2 + 765765.0 * t2 * t2 - 425425.0 * t2 ** 3) / 414720.0
    series = 1.0 - u1 / nu + u2 / nu ** 2 - u3 / nu ** 3
    return 0.5 * math.log(math.pi / (2.0 * nu)) - nu * eta - 0.5 * np.log(root) + np.log(series)


def matern_from_distance(G, nu):
    """In place, turn a block of scaled distances ``s`` into ``2^(1-nu)/Gamma(nu) s^nu K_nu(s)``.

    In log space with the exponentially scaled ``kve`` (``K_nu(s) = kve(nu, s) e^-s``),
    so ``s^nu`` and ``K_nu(s)`` never overflow separately; at ``s = 0``, and where
    ``K_nu`` overflows float64 (``s`` so small the value is 1 to double precision),
    the value is the limit 1. NaN stays NaN. Computed in float64 whatever ``G``'s dtype.
    """
    s = G.astype(np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_kv = np.log(kve(nu, s)) - s
        overflow = np.isposinf(log_kv) & (s > 0)
        if nu >= DEBYE_NU and overflow.any():
            log_kv[overflow] = _debye_log_kv(nu, s[overflow])
        log_k = ((1.0 - nu) * math.log(2.0) - gammaln(nu)) + nu * np.log(s) + log_kv
        out = np.exp(log_k)
    # s = 0 gives log(0) = -inf against log(kve) = +inf: NaN, whose limit is 1; below DEBYE_NU,
    # K_nu overflows only where s is so small that 1 - k < 1e-11
    limit = (s == 0) | (np.isnan(out) & ~np.isnan(s)) | np.isposinf(log_k)
    out[limit] = 1.0
    out[np.isposinf(s)] = 0.0
    np.minimum(out, 1.0, out=out)
    G[...] = out
    return G
