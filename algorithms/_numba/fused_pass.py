"""The fused kernel pass over one row block: ``K V``, ``K^T U`` and ``K^T (D K V + W)`` without the block.

A pass that writes the kernel block ``K(X_b, C)`` to memory reads it back for
the formula, the finiteness check and the two products. Here the block never
exists: :data:`kernelmaps._numba.tiles.TILE_ROWS` rows at a time,

1. the register tiles of :mod:`kernelmaps._numba.tiles` accumulate the rows
   against the packed centres into a ``TILE_ROWS x m`` scratch (cache-resident:
   128 KiB at m = 4096 in float64);
2. the kernel's epilogue turns the accumulations into kernel values in place;
3. ``P = K V``: one dot product per row with one right-hand side, a register
   tile of the scratch against ``V`` packed in chunks of columns with several;
4. ``U = D P + W`` (per row) and ``out += K^T U`` by a rank-``TILE_ROWS``
   update of ``out`` (:func:`kernelmaps._numba.tiles.rank_update`).

With one right-hand side both ways, step 3 of a tile and step 4 of the tile
before it share one sweep over the centres (:func:`_dots_and_update`): the
rows arriving from memory for the one overlap the other's re-read from cache.
On kept rows of 50 000 x 2000 (float64, one thread, a Zen 3 EPYC, Numba target znver3) that sweep
took the pass from 1.9-2.2 to 1.45-1.6 times a ``gemv`` over the same block.

Kept kernel rows (``stored``) are multiplied in place by the same steps 3 and
4, over the same ``m`` centres in the same order: a pass over kept blocks gives
the bits of a pass that evaluates them.

Each epilogue is a small record (a ``NamedTuple`` of its scalars in the rows'
dtype) whose class names its accumulation; :func:`fused_rows` compiles one
specialization per record class and dtype, as the block formulas of
:mod:`kernelmaps._kernels.formulas` do. Which kernel maps to which epilogue, on
which prepared rows and centres, is :mod:`kernelmaps._kernels.fused`.
"""

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import overload

from .fastmath import FASTMATH
from .fastmath_exp import vexp, vexp_nonpositive
from .tiles import TILE_ROWS, TILE_VECTORS, cauchy_tile, dot_tile, l1_tile, rank_update, sqdist_tile

# the one-column product below is written out for four rows
assert TILE_ROWS == 4

#: epilogue class -> its element function (filled by :func:`_entry_of`)
_ENTRIES = {}
_TILES = {"dot": dot_tile, "sqdist": sqdist_tile, "l1": l1_tile, "cauchy": cauchy_tile}


def _entry_of(epilogue):
    def register(function):
        _ENTRIES[epilogue] = function
        return function

    return register


class ClampedExp(NamedTuple):
    """``exp(gamma min(a + r, 0))`` of ``a = 2 x.c - |c|^2`` and ``r = -|x|^2``: the Gaussian."""

    gamma: float
    accumulation = "dot"


class ExpOfDot(NamedTuple):
    """``exp(gamma a)`` of ``a = x.c``: the exponential kernel."""

    gamma: float
    accumulation = "dot"


class PowerOfDot(NamedTuple):
    """``(gamma a + coef0)^degree`` of ``a = x.c``: the polynomial kernel."""

    gamma: float
    coef0: float
    degree: int
    accumulation = "dot"


class ExpOfL1(NamedTuple):
    """``exp(-gamma a)`` of ``a = |x - c|_1``: the Laplacian."""

    gamma: float
    accumulation = "l1"


class Reciprocal(NamedTuple):
    """``1 / a`` of ``a = prod_k (1 + (x_k - c_k)^2)`` on data scaled by ``sqrt(gamma)``: the Cauchy kernel."""

    one: float
    accumulation = "cauchy"


class MaternOfSquares(NamedTuple):
    """``exp(-s) sum_k a_k s^k``, ``s = sqrt(g a)``, of ``a = |x - c|^2``: the half-integer Matérn kernels."""

    g: float
    order: int
    accumulation = "sqdist"


def entry(epilogue, a, row_term, coefs):
    """The kernel value of the accumulation ``a`` (Numba only)."""
    raise NotImplementedError("entry is called from Numba code")


def accumulate(epilogue, T, X, x_row, S, chunk, bias):
    """The epilogue's register tile (Numba only)."""
    raise NotImplementedError("accumulate is called from Numba code")


def _record_class(epilogue, table):
    if isinstance(epilogue, types.BaseNamedTuple) and epilogue.instance_class in table:
        return epilogue.instance_class
    return None


@overload(entry, jit_options={"cache": True, "nogil": True, "fastmath": FASTMATH})
def _entry(epilogue, a, row_term, coefs):
    record = _record_class(epilogue, _ENTRIES)
    if record is None:
        return None
    function = _ENTRIES[record]
    return lambda epilogue, a, row_term, coefs: function(epilogue, a, row_term, coefs)


# inlined by Numba, not left to LLVM: the znver3 and znver4 tunings judged the tile too big and called it
# once per chunk of centres, which cost the fused pass 15-20 % on a Zen 3 (the Intel tunings inlined it)
@overload(accumulate, jit_options={"cache": True, "nogil": True, "fastmath": FASTMATH}, inline="always")
def _accumulate(epilogue, T, X, x_row, S, chunk, bias):
    record = _record_class(epilogue, _ENTRIES)
    if record is None:
        return None
    tile = _TILES[record.accumulation]
    return lambda epilogue, T, X, x_row, S, chunk, bias: tile(T, 0, X, x_row, S, chunk, bias, TILE_VECTORS)


@_entry_of(ClampedExp)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _clamped_exp(epilogue, a, row_term, coefs):
    t = a + row_term
    # clamps round-off above 0 but keeps NaN, which the finiteness check of the products reports
    t = t - t if t > t - t else t
    return vexp_nonpositive(epilogue.gamma * t)


@_entry_of(ExpOfDot)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _exp_of_dot(epilogue, a, row_term, coefs):
    return vexp(epilogue.gamma * a)


@_entry_of(PowerOfDot)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _power_of_dot(epilogue, a, row_term, coefs):
    base = epilogue.gamma * a + epilogue.coef0
    acc = epilogue.gamma / epilogue.gamma
    for _ in range(epilogue.degree):
        acc *= base
    return acc


@_entry_of(ExpOfL1)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _exp_of_l1(epilogue, a, row_term, coefs):
    return vexp_nonpositive(-epilogue.gamma * a)


@_entry_of(Reciprocal)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _reciprocal(epilogue, a, row_term, coefs):
    return epilogue.one / a


@_entry_of(MaternOfSquares)
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _matern_of_squares(epilogue, a, row_term, coefs):
    s = np.sqrt(epilogue.g * a)
    acc = coefs[epilogue.order]
    for k in range(epilogue.order - 1, -1, -1):
        acc = acc * s + coefs[k]
    return acc * vexp_nonpositive(-s)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _product_tile(Pt, T, first, V, chunk, zeros, vectors):
    """``Pt[r, c W:(c + 1) W] = T[first + r] V[c]`` with ``vectors`` (1 to 4) known at run time.

    The rows of ``T`` may be shorter than ``V``'s padded centres: the centres past them
    have zero rows in ``V`` and would add exact zeros."""
    if vectors == 1:
        dot_tile(Pt, 0, T, first, V, chunk, zeros, 1)
    elif vectors == 2:
        dot_tile(Pt, 0, T, first, V, chunk, zeros, 2)
    elif vectors == 3:
        dot_tile(Pt, 0, T, first, V, chunk, zeros, 3)
    else:
        dot_tile(Pt, 0, T, first, V, chunk, zeros, 4)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _rank_update_tile(out, T, first, Ut, chunk, vectors):
    """:func:`rank_update` of rows ``T[first:]`` with ``vectors`` (1 to 4) known at run time."""
    if vectors == 1:
        rank_update(out, T, first, Ut, 0, chunk, 1)
    elif vectors == 2:
        rank_update(out, T, first, Ut, 0, chunk, 2)
    elif vectors == 3:
        rank_update(out, T, first, Ut, 0, chunk, 3)
    else:
        rank_update(out, T, first, Ut, 0, chunk, 4)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _kernel_rows(epilogue, T, rows, row_terms, g, coefs):
    """The epilogue on the first ``rows`` rows of ``T``; the rows of the tile past ``rows``
    are zeroed, so that they add nothing to ``K^T U``."""
    for r in range(rows):
        row = T[r]
        row_term = row_terms[g + r]
        for j in range(row.shape[0]):
            row[j] = entry(epilogue, row[j], row_term, coefs)
    for r in range(rows, TILE_ROWS):
        T[r, :] = T.dtype.type(0)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _stored_rows(T, stored, g, rows, reads):
    """Copy the tile's first ``rows`` kernel rows from ``stored[g:]`` (``reads``) or to it."""
    m = stored.shape[1]
    for r in range(rows):
        if reads:
            T[r, :m] = stored[g + r]
        else:
            stored[g + r] = T[r, :m]
    if reads:
        for r in range(rows, TILE_ROWS):
            T[r, :] = T.dtype.type(0)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _row_dot(row, v, m):
    """``row[:m] . v[:m]``: the same summation order whether ``row`` is a tile's or a kept row."""
    total = row.dtype.type(0)
    for j in range(m):
        total += row[j] * v[j]
    return total


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _tile_rhs(Ut, P, weights, addend, g, rows, forward):
    """``Ut[r] = D P[g + r] + W[g + r]`` for ``r < rows``, 0 past them."""
    zero = Ut.dtype.type(0)
    for r in range(TILE_ROWS):
        for q in range(Ut.shape[1]):
            u = zero
            if r < rows:
                if forward:
                    u = P[g + r, q]
                    if weights.shape[1] == 1:
                        u *= weights[g + r, 0]
                    elif weights.shape[1] > 1:
                        u *= weights[g + r, q]
                if addend.shape[1] > 0:
                    u += addend[g + r, q]
            Ut[r, q] = u


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def fused_rows(epilogue, X, row_terms, S, bias, coefs, V, vectors, weights, addend, stored, reads_stored, P, out,
               forward, backward):
    """One row block of the fused pass: ``P = K V`` and ``out += K^T (D P + W)``.

    Parameters
    ----------
    epilogue : a record of this module, its scalars in ``X``'s dtype
    X : ndarray of shape (b, d), float32 or float64
        The rows, prepared for the epilogue's accumulation (not read with ``reads_stored``).
    row_terms : ndarray of shape (b,)
        Per-row term of the epilogue (``-|x|^2`` of the Gaussian; read by it alone).
    S : ndarray of shape (chunks, d, W)
        The centres, prepared and packed (:func:`kernelmaps._numba.tiles.pack_columns`);
        ``m' = chunks W`` padded centres.
    bias : ndarray of shape (m',)
        Per-centre start of the ``dot`` accumulation.
    coefs : ndarray
        The Matérn polynomial's coefficients (read by :class:`MaternOfSquares` alone).
    V : ndarray of shape (c, m', W')
        The right-hand sides, zero-padded to ``k' = c W'`` columns and packed in
        chunks of ``W' = vectors`` SIMD vectors; one column: shape ``(1, m', 1)``.
    vectors : int
        SIMD vectors per chunk of ``V`` (1 to 4).
    weights : ndarray of shape (b, 0), (b, 1) or (b, k')
        The diagonal ``D``: none, one per row, one per row and column.
    addend : ndarray of shape (b, 0) or (b, k')
        ``W`` (none with 0 columns).
    stored : ndarray of shape (b, m) or (0, 0)
        The block's kernel rows: read instead of evaluated (``reads_stored``), or
        written as they are evaluated; none with shape (0, 0).
    reads_stored : bool
    P : ndarray of shape (b, k')
        Receives ``K V`` when ``forward``.
    out : ndarray of shape (m, k')
        ``K^T U`` is added to it when ``backward`` (``m``: the centres, unpadded; its
        shape is read either way).
    forward, backward : bool
    """
    b = X.shape[0]
    m = out.shape[0]
    n_columns = out.shape[1]
    one_column = n_columns == 1
    # one column both ways: group g's forward dots share their sweep with group g - 1's K^T U, so
    # that the rows streaming in from memory for the one overlap the other's re-read from cache;
    # group g - 1's evaluated rows must then outlive the evaluation of group g: two tiles take turns
    pipelined = one_column and forward and backward
    tiles = np.zeros((2 if pipelined and not reads_stored else 1, TILE_ROWS, S.shape[0] * S.shape[2]), S.dtype)
    Pt = np.zeros((TILE_ROWS, n_columns), S.dtype)
    Ut = np.zeros((TILE_ROWS, n_columns), S.dtype)
    zeros = np.zeros(n_columns, S.dtype)
    tail = np.zeros((TILE_ROWS, X.shape[1]), S.dtype)
    v = V.reshape(V.size)
    out_column = out.reshape(out.size)
    # the rows of the group whose K^T U is still to add (its U in Ut): none yet, zero rows (Ut is zero)
    no_rows = np.zeros((TILE_ROWS, m if pipelined else 0), S.dtype)
    held, held_first = no_rows, 0
    for g in range(0, b, TILE_ROWS):
        rows = min(TILE_ROWS, b - g)
        T = tiles[(g // TILE_ROWS) % tiles.shape[0]]
        # the products read the kept rows in place, or the tile (a last partial tile of kept rows is copied)
        values, first = T, 0
        if reads_stored and rows == TILE_ROWS:
            values, first = stored, g
        elif reads_stored:
            _stored_rows(T, stored, g, rows, True)
        else:
            source, first_row = X, g
            if rows < TILE_ROWS:
                tail[:rows] = X[g:]
                source, first_row = tail, 0
            for chunk in range(S.shape[0]):
                accumulate(epilogue, T, source, first_row, S, chunk, bias)
            _kernel_rows(epilogue, T, rows, row_terms, g, coefs)
            if stored.shape[0] > 0:
                _stored_rows(T, stored, g, rows, False)
        if pipelined:
            dots = _dots_and_update(values, first, v, held, held_first, Ut, out_column, m)
            for r in range(rows):
                P[g + r, 0] = dots[r]
            _tile_rhs(Ut, P, weights, addend, g, rows, forward)
            held, held_first = values, first
            continue
        if forward and one_column:
            for r in range(rows):
                P[g + r, 0] = _row_dot(values[first + r], v, m)
        elif forward:
            for chunk in range(V.shape[0]):
                _product_tile(Pt, values, first, V, chunk, zeros, vectors)
            P[g:g + rows] = Pt[:rows]
        if backward:
            _tile_rhs(Ut, P, weights, addend, g, rows, forward)
            _rank_update_rows(out, out_column, values, first, Ut, V.shape[0], vectors, one_column)
    if pipelined and b > 0:
        # the last group's K^T U, beside the dots of zero rows
        _dots_and_update(no_rows, 0, v, held, held_first, Ut, out_column, m)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _dots_and_update(A, a_first, v, B, b_first, U, out_column, m):
    """``A[a_first + r, :m] . v`` for the four rows ``r``, and ``out_column += B[b_first:b_first + 4, :m]^T U[:, 0]``,
    in one sweep over the centres. Every row's dot goes through this loop (zero rows in ``B`` for the first
    group, in ``A`` after the last), so a row's sum does not depend on where a block or chunk starts."""
    a0, a1, a2, a3 = A[a_first], A[a_first + 1], A[a_first + 2], A[a_first + 3]
    b0, b1, b2, b3 = B[b_first], B[b_first + 1], B[b_first + 2], B[b_first + 3]
    u0, u1, u2, u3 = U[0, 0], U[1, 0], U[2, 0], U[3, 0]
    s0 = s1 = s2 = s3 = A.dtype.type(0)
    for j in range(m):
        w = v[j]
        s0 += a0[j] * w
        s1 += a1[j] * w
        s2 += a2[j] * w
        s3 += a3[j] * w
        out_column[j] += b0[j] * u0 + b1[j] * u1 + b2[j] * u2 + b3[j] * u3
    return s0, s1, s2, s3


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _rank_update_rows(out, out_column, T, first, Ut, n_chunks, vectors, one_column):
    """``out += T[first:first + TILE_ROWS]^T Ut``: one column as a loop over the centres, several by
    register tiles."""
    if one_column:
        t0, t1, t2, t3 = T[first], T[first + 1], T[first + 2], T[first + 3]
        u0, u1, u2, u3 = Ut[0, 0], Ut[1, 0], Ut[2, 0], Ut[3, 0]
        for j in range(out_column.shape[0]):
            out_column[j] += t0[j] * u0 + t1[j] * u1 + t2[j] * u2 + t3[j] * u3
    else:
        for chunk in range(n_chunks):
            _rank_update_tile(out, T, first, Ut, chunk, vectors)
