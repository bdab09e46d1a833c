"""The Numba loops of random binning: bin keys, the vocabulary's hash tables, lookup.

A point's bin in a grid is the d-tuple ``floor((x_j - u_j) / delta_j)``. The
tuple is reduced to a 64-bit key by hashing the bit patterns of its float64
entries, so no bin index is ever converted to an integer (which would overflow
for a point far from the origin on a fine grid). Two different tuples of a grid
share a key with probability about ``2^-64`` per pair.

Each grid's vocabulary is an open-addressing hash table with linear probing:
``keys`` (``0`` marks an empty slot) and ``values`` of the same power-of-two
length. During ``fit`` the values are the bins' indices in the order the rows
first reach them; the fitted tables hold output columns.
"""

import numpy as np
from numba import njit

from .murmur import fmix64

#: The key that marks an empty slot; a bin whose hash is 0 takes :data:`_ZERO_KEY`.
_EMPTY = np.uint64(0)
_ZERO_KEY = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def _slot(key, mask):
    # the key's low bits, as a signed index (uint64 and int64 arithmetic would mix to float)
    return np.int64(key & np.uint64(mask))


@njit(cache=True, nogil=True)
def row_keys(x, shifts, inverse_pitches, bins, bits, keys):
    """The keys of one row's bins in every grid.

    Parameters
    ----------
    x : ndarray of shape (d,), float32 or float64
    shifts, inverse_pitches : ndarray of shape (d, P), float64
        ``u`` and ``1 / delta`` of grid ``p`` in column ``p``: the loops over the
        grids are the inner ones, and vectorize.
    bins : ndarray of shape (P,), float64, scratch
    bits : ndarray of shape (P,), uint64, the same memory as ``bins``
    keys : ndarray of shape (P,), uint64, written

    Returns
    -------
    int
        The number of bin coordinates that overflowed to infinity (a point too
        far out for the grid's pitch); their keys are meaningless.
    """
    d, P = shifts.shape
    overflowed = 0
    for p in range(P):
        keys[p] = _ZERO_KEY
    for j in range(d):
        xj = np.float64(x[j])
        for p in range(P):
            # + 0.0 turns a -0.0 (x_j == u_j == -0.0) into the +0.0 of its bin
            bins[p] = np.floor((xj - shifts[j, p]) * inverse_pitches[j, p]) + 0.0
        for p in range(P):
            overflowed += np.isinf(bins[p])
            keys[p] = fmix64((keys[p] ^ bits[p]) + _ZERO_KEY)
    for p in range(P):
        if keys[p] == _EMPTY:
            keys[p] = _ZERO_KEY
    return overflowed


@njit(cache=True, nogil=True)
def block_keys(X, shifts, inverse_pitches, out):
    """``out[p, i]``: the key of row ``i``'s bin in grid ``p`` (shape (P, n), uint64).

    Returns the first row with an overflowed bin coordinate, or -1.
    """
    P = shifts.shape[1]
    bins = np.empty(P)
    bits = bins.view(np.uint64)
    keys = np.empty(P, dtype=np.uint64)
    first_overflow = -1
    for i in range(X.shape[0]):
        if row_keys(X[i], shifts, inverse_pitches, bins, bits, keys) and first_overflow < 0:
            first_overflow = i
        for p in range(P):
            out[p, i] = keys[p]
    return first_overflow


@njit(cache=True, nogil=True)
def insert_keys(new_keys, start, table_keys, table_values, count, limit):
    """Add ``new_keys[start:]`` to a table, numbering new bins from ``count``.

    Stops before the table would hold more than ``limit`` bins, so that the
    caller can grow it first.

    Returns
    -------
    count : int
        Bins in the table.
    stop : int
        The first key not yet inserted (``len(new_keys)`` when all were).
    """
    mask = table_keys.shape[0] - 1
    for i in range(start, new_keys.shape[0]):
        key = new_keys[i]
        slot = _slot(key, mask)
        while True:
            found = table_keys[slot]
            if found == key:
                break
            if found == _EMPTY:
                if count >= limit:
                    return count, i
                table_keys[slot] = key
                table_values[slot] = count
                count += 1
                break
            slot = (slot + 1) & mask
    return count, new_keys.shape[0]


@njit(cache=True, nogil=True)
def rehash(table_keys, table_values, new_keys, new_values, offset):
    """Move a table's entries into an empty larger one, adding ``offset`` to the values."""
    mask = new_keys.shape[0] - 1
    for s in range(table_keys.shape[0]):
        key = table_keys[s]
        if key != _EMPTY:
            slot = _slot(key, mask)
            while new_keys[slot] != _EMPTY:
                slot = (slot + 1) & mask
            new_keys[slot] = key
            new_values[slot] = table_values[s] + offset


@njit(cache=True, nogil=True)
def lookup_columns(X, shifts, inverse_pitches, table_keys, table_columns, table_starts, first_columns,
                   value, indices, data):
    """Write each row's column in every grid's vocabulary, and its value.

    Grid ``p``'s table is ``table_keys[table_starts[p]:table_starts[p + 1]]``.
    A row in a bin the vocabulary does not hold gets the entry
    ``(first_columns[p], 0)``: a zero in a column of its own grid, so the row's
    columns stay distinct, and the caller removes it.

    Returns
    -------
    unseen : int
        The number of such unseen bins.
    first_overflow : int
        The first row with an overflowed bin coordinate, or -1.
    """
    P = shifts.shape[1]
    bins = np.empty(P)
    bits = bins.view(np.uint64)
    keys = np.empty(P, dtype=np.uint64)
    unseen = 0
    first_overflow = -1
    for i in range(X.shape[0]):
        if row_keys(X[i], shifts, inverse_pitches, bins, bits, keys) and first_overflow < 0:
            first_overflow = i
        for p in range(P):
            start = table_starts[p]
            mask = table_starts[p + 1] - start - 1
            key = keys[p]
            slot = _slot(key, mask)
            column = -1
            while True:
                found = table_keys[start + slot]
                if found == key:
                    column = table_columns[start + slot]
                    break
                if found == _EMPTY:
                    break
                slot = (slot + 1) & mask
            if column >= 0:
                indices[i, p] = column
                data[i, p] = value
            else:
                indices[i, p] = first_columns[p]
                data[i, p] = 0
                unseen += 1
    return unseen, first_overflow
