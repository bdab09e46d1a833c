"""The fused pass over a run of kept row blocks in one compiled call, summed as the blocks would be one by one.

A pass over kept blocks is memory-bound: :func:`kernelmaps._numba.fused_pass.fused_rows`
streams each block once. Called block by block from Python, every block also
paid for its buffers, its padded weights, its finiteness checks and its step
of the compensated sum (a dozen NumPy calls, 50 to 90 microseconds): at
14 226 rows and 1000 centres (blocks of 256 rows), with five right-hand sides,
that was a quarter of the pass. Here one call runs a thread's whole run of
blocks with the same per-block steps in the same order, so the sum carries
the same bits as the block-by-block pass.
"""

import numpy as np
from numba import njit

from .compensated import two_sum_flat
from .fastmath_arrays import all_finite
from .fused_pass import fused_rows


@njit(cache=True, nogil=True)
def kept_blocks_sum(epilogue, X, S, bias, coefs, V, vectors, weights, addend, stored, block, n_columns, forward,
                    value, error):
    """Add ``K_b^T (D_b K_b V + W_b)`` of each block ``b`` of ``block`` kept rows to a compensated sum.

    Parameters
    ----------
    epilogue, S, bias, coefs, V, vectors
        As :func:`kernelmaps._numba.fused_pass.fused_rows` takes them.
    X : ndarray of shape (n, d)
        The rows (only their count is read: the kernel rows are kept).
    weights : ndarray of shape (n, 0), (n, 1) or (n, k')
        The diagonal ``D`` (columns padded to ``V``'s ``k'`` when more than one).
    addend : ndarray of shape (n, 0) or (n, k')
        ``W``, padded to ``k'`` columns.
    stored : ndarray of shape (n, m)
        The kept kernel rows.
    block : int
        Rows per block: blocks start at multiples of it, the last may be shorter.
    n_columns : int
        ``k``, the unpadded right-hand sides.
    forward : bool
        Whether ``K V`` is computed (``D K V`` is then part of ``U``).
    value, error : ndarray of shape (m, k), float64
        The compensated sum (C-contiguous), updated block by block in place by
        :func:`kernelmaps._numba.compensated.two_sum_flat`, as
        :meth:`~kernelmaps._numba.compensated.CompensatedSum.add` does it.

    Returns
    -------
    int
        The index of the first block whose products are not finite (its sum is
        not added, nor any after it), or -1.
    """
    n, m = stored.shape[0], value.shape[0]
    width = V.shape[0] * V.shape[2]
    out = np.empty((m, width), stored.dtype)
    P = np.empty((block if forward else 0, width), stored.dtype)
    row_terms = np.zeros(block, stored.dtype)
    term = np.empty((m, n_columns), stored.dtype)
    flat_value, flat_error = value.reshape(value.size), error.reshape(error.size)
    for index in range((n + block - 1) // block):
        lo = index * block
        hi = min(n, lo + block)
        rows = P[:hi - lo]
        out[:] = 0
        rows[:] = 0
        fused_rows(epilogue, X[lo:hi], row_terms[:hi - lo], S, bias, coefs, V, vectors, weights[lo:hi],
                   addend[lo:hi], stored[lo:hi], True, rows, out, forward, True)
        if not (all_finite(rows[:, :n_columns]) and all_finite(out[:, :n_columns])):
            return index
        term[:, :] = out[:, :n_columns]
        two_sum_flat(flat_value, flat_error, term.reshape(term.size))
    return -1
