"""A fixed-size LRU cache of kernel columns, as LIBSVM keeps for its dual solvers.

The cache is five arrays that the Numba solvers pass along (``cache``,
``slot_of``, ``slot_owner``, ``last_used``, ``col_len``) plus a clock, so that
the kernels take arrays and scalars only and stay cacheable.
"""

import numpy as np
from numba import njit

from .._kernels.formulas import kernel_block, starts_from_product
from .._numba.fastmath import FASTMATH


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def kernel_column(i, length, X, sq, kernel, cache, slot_of, slot_owner, last_used,
                  col_len, clock):
    """Entries ``0 .. length-1`` of the column ``K(X, x_i)`` through a fixed-size LRU cache.

    Returns the cached row, valid on its first ``length`` entries (at least). A
    hit refreshes the slot's time stamp and computes only the entries the slot
    does not hold yet (``col_len``: a shrunk problem asks for its active
    variables only, as LIBSVM's ``get_Q(i, len)``); a miss evicts the least
    recently used slot (empty slots, stamped -1, go first). Entries are one BLAS
    matrix-vector product (for a kernel that starts from one) plus the kernel's formula,
    :func:`kernelmaps._kernels.formulas.kernel_block`.

    Parameters
    ----------
    i, length : int
    X : ndarray of shape (n, d), float64
    sq : ndarray of shape (n,), ``|x_j|^2``
    kernel : a record of :mod:`kernelmaps._kernels.formulas`, float64 scalars
    cache : ndarray of shape (n_slots, n), float64
    slot_of : ndarray of shape (n,), int64, slot of column i or -1
    slot_owner : ndarray of shape (n_slots,), int64, column held or -1
    last_used : ndarray of shape (n_slots,), int64
    col_len : ndarray of shape (n_slots,), int64, valid leading entries per slot
    clock : int

    References
    ----------
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation",
    section "Greedy Coordinate Descent" (LRU cache of kernel columns, as LIBSVM).
    Chang, C.-C. and Lin, C.-J. LIBSVM: a library for support vector machines.
    ACM TIST 2, 2011 (columns of the active length, section 5.1).
    """
    s = slot_of[i]
    if s < 0:
        s = 0
        for t in range(1, last_used.shape[0]):
            if last_used[t] < last_used[s]:
                s = t
        if slot_owner[s] >= 0:
            slot_of[slot_owner[s]] = -1
        slot_owner[s] = i
        slot_of[i] = s
        col_len[s] = 0
    start = col_len[s]
    if start < length:
        segment = cache[s, start:length]
        if starts_from_product(kernel):
            segment[:] = np.dot(X[start:length], X[i])
        kernel_block(kernel, segment.reshape((1, length - start)), X[i : i + 1], X[start:length], sq[start:length])
        col_len[s] = length
    last_used[s] = clock
    return cache[s]
