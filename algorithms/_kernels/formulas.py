"""Each kernel's formula on a block of rows, one Numba function per kernel, chosen by type.

A kernel evaluated on row blocks is a small record (a ``NamedTuple``) holding its
scalars in the block's dtype: :class:`Gaussian`, :class:`Polynomial`, ... Numba
types a record by its class, so :func:`kernel_block` compiles one specialization
per kernel and dtype and picks the kernel's block function at compile time: no
code numbers, no branch on the kernel inside the loops. Each record names its
block function here, next to its formula, and says whether the block starts from
the BLAS product ``X V^T`` (``product = True``: the block holds it on entry and
the function is its element-wise epilogue) or is computed from ``X`` and ``V``
directly (the L1, Cauchy and histogram kernels, which have no BLAS form).

The functions run serially and without the GIL on one row block of a thread
pool (:mod:`kernelmaps._kernels.blocks` runs the pipeline around them: the frame,
the product, the finishing step and the finiteness check), and inside the exact
SVM's column cache. They write ``G`` in place.

References
----------
Williams, C. K. I. and Seeger, M. Using the Nyström method to speed up kernel
machines. NIPS 2001.
Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine Learning.
MIT Press, 2006, eq. 4.16 (the half-integer Matérn kernels).
"""

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import overload

from .._numba.fastmath import FASTMATH
from .._numba.fastmath_exp import vexp, vexp_nonpositive
from .frames import frame_gamma
from .matern import half_integer_order, matern_distances

#: record class -> its block function (filled by :func:`_block_of`)
_BLOCKS = {}


def _block_of(record):
    """Register the decorated Numba function as the block of ``record``."""
    def register(function):
        _BLOCKS[record] = function
        return function

    return register


class Gaussian(NamedTuple):
    """``exp(-gamma |x - v|^2)``, from ``x.v`` by ``|x|^2 + |v|^2 - 2 x.v``."""

    gamma: float
    product = True


class Exponential(NamedTuple):
    """``exp(gamma <x, v>)``."""

    gamma: float
    product = True


class Polynomial(NamedTuple):
    """``(gamma <x, v> + coef0)^degree``."""

    gamma: float
    coef0: float
    degree: int
    product = True


class MaternHalfInteger(NamedTuple):
    """Matérn of ``nu = order + 1/2``: ``exp(-s) sum_k a_k s^k``, ``s = sqrt(g |x - v|^2)``, ``g = 4 nu gamma``."""

    g: float
    order: int
    product = True


class MaternDistance(NamedTuple):
    """The Matérn distance ``s = sqrt(g |x - v|^2)`` alone, for a ``nu`` with no closed form.

    :func:`kernelmaps._kernels.matern.matern_from_distance` finishes the block.
    """

    g: float
    product = True


class Laplacian(NamedTuple):
    """``exp(-gamma |x - v|_1)``."""

    gamma: float
    product = False


class Cauchy(NamedTuple):
    """``prod_k 1 / (1 + gamma (x_k - v_k)^2)``."""

    gamma: float
    product = False


class Sech(NamedTuple):
    """``prod_k sech(gamma (x_k - v_k))``: the skewed chi2 kernel on ``log(x + c)``."""

    gamma: float
    product = False


class Chi2(NamedTuple):
    """``exp(-gamma sum_k (x_k - v_k)^2 / (x_k + v_k))`` on non-negative data."""

    gamma: float
    product = False


class AdditiveChi2(NamedTuple):
    """``sum_k 2 x_k v_k / (x_k + v_k)`` on non-negative data (``one``: 1 in the block's dtype)."""

    one: float
    product = False


class PrecomputedColumns(NamedTuple):
    """A user's Gram matrix read as a kernel: ``V``'s rows are rows of the Gram matrix and
    the last entry of each row of ``X`` is the column it reads, ``G[i, j] = V[j, int(X[i, -1])]``
    (the exact SVM's columns of ``kernel='precomputed'``; ``one``: 1 in the block's dtype)."""

    one: float
    product = False


#: The record class of each kernel name :func:`kernel_record` takes (Matérn's depends on ``nu``).
RECORDS = {"gaussian": Gaussian, "exponential": Exponential, "polynomial": Polynomial, "laplacian": Laplacian,
           "cauchy": Cauchy, "sech": Sech, "chi2": Chi2}


def kernel_record(kernel, gamma, degree, coef0, nu, scale, dtype):
    """The record of ``kernel`` for blocks of ``dtype`` evaluated on data divided by ``scale``.

    ``kernel`` is a name of :data:`RECORDS`, ``'additive_chi2'`` (no bandwidth) or
    ``'matern'``, whose record follows from ``nu`` (a closed form for half-integer
    ``nu`` up to :data:`kernelmaps._kernels.matern.MAX_CLOSED_FORM_ORDER`, the
    distance otherwise) and whose scale is ``g = 4 nu gamma`` (``s^2 = 4 nu gamma
    |x - y|^2``). ``scale`` is 1.0 outside a frame (see
    :func:`kernelmaps._kernels.frames.frame_gamma`).
    """
    dtype = np.dtype(dtype).type
    if kernel == "additive_chi2":
        return AdditiveChi2(dtype(1.0))
    if kernel == "matern":
        order = half_integer_order(nu)
        g = frame_gamma(kernel, 4.0 * nu * gamma, scale, dtype)
        return MaternHalfInteger(g, order) if order >= 0 else MaternDistance(g)
    bandwidth = frame_gamma(kernel, gamma, scale, dtype)
    if kernel == "polynomial":
        return Polynomial(bandwidth, dtype(coef0), int(degree))
    return RECORDS[kernel](bandwidth)


def kernel_block(kernel, G, X, V, sq_v):
    """In place, turn ``G`` into the kernel block ``K(X, V)`` of the record ``kernel`` (Numba only).

    Parameters
    ----------
    kernel : a record of this module, its scalars in ``G``'s dtype
    G : ndarray of shape (n, m), float32 or float64
        ``X V^T`` on entry when ``kernel.product``; the block on exit.
    X : ndarray of shape (n, d), same dtype
    V : ndarray of shape (m, d), same dtype
    sq_v : ndarray of shape (m,), same dtype, ``|v_j|^2`` (read by the distance kernels)
    """
    raise NotImplementedError("kernel_block is called from Numba code; use evaluate_block from Python")


def starts_from_product(kernel):
    """Whether the block of the record ``kernel`` holds ``X V^T`` on entry (a constant in Numba)."""
    return type(kernel).product


@overload(starts_from_product, jit_options={"cache": True})
def _starts_from_product(kernel):
    if isinstance(kernel, types.BaseNamedTuple) and kernel.instance_class in _BLOCKS:
        product = bool(kernel.instance_class.product)
        return lambda kernel: product
    return None


@overload(kernel_block, jit_options={"cache": True, "nogil": True, "fastmath": FASTMATH})
def _kernel_block(kernel, G, X, V, sq_v):
    block = _BLOCKS.get(getattr(kernel, "instance_class", None)) if isinstance(kernel, types.BaseNamedTuple) \
        else None
    if block is None:
        return None
    return lambda kernel, G, X, V, sq_v: block(kernel, G, X, V, sq_v)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def evaluate_block(kernel, G, X, V, sq_v):
    """:func:`kernel_block` called from Python (one specialization per record class and dtype)."""
    kernel_block(kernel, G, X, V, sq_v)


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _squared_norm(x, zero):
    total = zero
    for k in range(x.shape[0]):
        total += x[k] * x[k]
    return total


@_block_of(Gaussian)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _gaussian_block(kernel, G, X, V, sq_v):
    gamma = kernel.gamma
    zero = gamma - gamma
    for i in range(G.shape[0]):
        row = G[i]
        sq_x = _squared_norm(X[i], zero)
        for j in range(G.shape[1]):
            # row + row, not 2 * row: an integer times a float32 is a float64
            # in Numba, and the float64 exp ran at a quarter of the speed
            t = sq_x + sq_v[j] - (row[j] + row[j])
            # clamps round-off below 0 but keeps NaN (from inf - inf), which the
            # callers' finiteness checks turn into an error instead of k = 1
            t = zero if t < zero else t
            row[j] = vexp_nonpositive(-gamma * t)


@_block_of(Exponential)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _exponential_block(kernel, G, X, V, sq_v):
    gamma = kernel.gamma
    for i in range(G.shape[0]):
        row = G[i]
        for j in range(G.shape[1]):
            row[j] = vexp(gamma * row[j])


@_block_of(Polynomial)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _polynomial_block(kernel, G, X, V, sq_v):
    gamma, coef0, degree = kernel.gamma, kernel.coef0, kernel.degree
    one = gamma / gamma
    for i in range(G.shape[0]):
        row = G[i]
        for j in range(G.shape[1]):
            base = gamma * row[j] + coef0
            acc = one
            for _ in range(degree):
                acc *= base
            row[j] = acc


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def matern_polynomial(order, one):
    """The coefficients ``a_0 .. a_p`` of the Matérn polynomial of ``nu = p + 1/2``, in ``one``'s dtype.

    ``a_0 = 1``, ``a_(k+1) = a_k 2 (p - k) / ((2p - k)(k + 1))``: the kernel is
    ``exp(-s) sum_k a_k s^k``.
    """
    coefs = np.full(order + 1, one)
    for k in range(order):
        coefs[k + 1] = coefs[k] * ((2.0 * (order - k)) / ((2.0 * order - k) * (k + 1.0)))
    return coefs


@_block_of(MaternHalfInteger)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _matern_half_integer_block(kernel, G, X, V, sq_v):
    g, order = kernel.g, kernel.order
    coefs = matern_polynomial(order, g / g)
    for i in range(G.shape[0]):
        row = G[i]
        matern_distances(row, X[i], V, sq_v, g)
        for j in range(G.shape[1]):
            s = row[j]
            acc = coefs[order]
            for k in range(order - 1, -1, -1):
                acc = acc * s + coefs[k]
            row[j] = acc * vexp_nonpositive(-s)


@_block_of(MaternDistance)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _matern_distance_block(kernel, G, X, V, sq_v):
    for i in range(G.shape[0]):
        matern_distances(G[i], X[i], V, sq_v, kernel.g)


@_block_of(Laplacian)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _laplacian_block(kernel, G, X, V, sq_v):
    # a row's L1 distances first, then their exp in one loop that vectorizes
    gamma = kernel.gamma
    zero = gamma - gamma
    d = X.shape[1]
    for i in range(G.shape[0]):
        row = G[i]
        x = X[i]
        for j in range(G.shape[1]):
            v = V[j]
            s = zero
            for k in range(d):
                s += abs(x[k] - v[k])
            row[j] = s
        for j in range(G.shape[1]):
            row[j] = vexp_nonpositive(-gamma * row[j])


def pair_entry(kernel, x, v):
    """``k(x, v)`` of the record ``kernel`` from the rows ``x`` and ``v`` alone (Numba only).

    The entry of the kernels without a BLAS form that finish each entry as they go
    (:class:`Cauchy`, :class:`Sech`, :class:`Chi2`, :class:`AdditiveChi2`); their
    block is :func:`_pairwise_block`, which inlines the entry into its loops.
    """
    raise NotImplementedError("pair_entry is called from Numba code")


#: record class -> its entry function (filled by :func:`_entry_of`)
_ENTRIES = {}


def _entry_of(record):
    """Register the decorated Numba function as the entry of ``record``, and
    :func:`_pairwise_block` as its block."""
    def register(function):
        _ENTRIES[record] = function
        _BLOCKS[record] = _pairwise_block
        return function

    return register


@overload(pair_entry, inline="always", jit_options={"cache": True, "nogil": True, "fastmath": FASTMATH})
def _pair_entry(kernel, x, v):
    entry = _ENTRIES.get(getattr(kernel, "instance_class", None)) if isinstance(kernel, types.BaseNamedTuple) \
        else None
    if entry is None:
        return None
    return lambda kernel, x, v: entry(kernel, x, v)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _pairwise_block(kernel, G, X, V, sq_v):
    for i in range(G.shape[0]):
        row = G[i]
        x = X[i]
        for j in range(G.shape[1]):
            row[j] = pair_entry(kernel, x, V[j])


@_entry_of(Cauchy)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _cauchy_entry(kernel, x, v):
    gamma = kernel.gamma
    one = gamma / gamma
    p = one
    for k in range(x.shape[0]):
        t = x[k] - v[k]
        p *= one + gamma * t * t
    return one / p


@_entry_of(Sech)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _sech_entry(kernel, x, v):
    gamma = kernel.gamma
    one = gamma / gamma
    two = one + one
    p = one
    for k in range(x.shape[0]):
        # sech(t) = 2 e / (1 + e^2) with e = exp(-|t|) <= 1: no overflow
        e = vexp_nonpositive(-gamma * abs(x[k] - v[k]))
        p *= two * e / (one + e * e)
    return p


@_entry_of(Chi2)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _chi2_entry(kernel, x, v):
    gamma = kernel.gamma
    zero = gamma - gamma
    one = gamma / gamma
    half = one / (one + one)
    s = zero
    for k in range(x.shape[0]):
        t = x[k] - v[k]
        mean = half * x[k] + half * v[k]
        # half * t * (t / mean): neither t * t nor x + y can overflow
        s += half * t * (t / mean) if mean > zero else zero
    return vexp_nonpositive(-gamma * s)


@_entry_of(AdditiveChi2)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _additive_chi2_entry(kernel, x, v):
    one = kernel.one
    zero = one - one
    half = one / (one + one)
    s = zero
    for k in range(x.shape[0]):
        mean = half * x[k] + half * v[k]
        # 2 x y / (x + y) = x (y / mean), without the product x y
        s += x[k] * (v[k] / mean) if mean > zero else zero
    return s


@_block_of(PrecomputedColumns)
@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _precomputed_columns_block(kernel, G, X, V, sq_v):
    last = X.shape[1] - 1
    for i in range(G.shape[0]):
        row = G[i]
        col = int(X[i, last])
        for j in range(G.shape[1]):
            row[j] = V[j, col]
