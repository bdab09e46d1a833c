"""Cholesky factorizations that never hand LAPACK a matrix of large order.

OpenBLAS's threaded ``potrf`` and ``syrk`` crash (SIGSEGV) on large orders in a
process that has started other threads, as every kernelmaps process has (the
row-block pool): on a 2-core AMD EPYC with OpenBLAS 0.3.30, ``potrf`` of a
Gaussian Gram matrix of order 17 000 or 20 000 crashed after one small threaded
matmul elsewhere, while order 16 384 ran (and ran again on a Zen 3 EPYC with
OpenBLAS 0.3.31, after the row-block pool had started) and so did every call on
blocks of :data:`BLOCK_ORDER`. It is a known class of OpenBLAS faults for large
orders (``dpotrf_L_parallel`` → ``dsyrk_thread_LN``). Running the factorization
on one BLAS thread avoids it at half the speed; factoring block by block keeps
every LAPACK call small and every product threaded, at about 1.3 times the time
of the threaded ``potrf`` (39 s against 31 s at order 20 000 on that machine).

LAPACK reads Fortran order, and SciPy copies a C-ordered matrix into it, a
transposed copy as slow as the factorization itself at order 4096. A symmetric
C-ordered matrix read in Fortran order is itself, with its upper triangle as the
lower one: each call here hands LAPACK that reading, and a lower factor so found
is the upper factor of the C-ordered matrix, in its own memory.
"""

import numpy as np
import scipy.linalg

from .gil_free_lapack import upper_transposed_solve_in_place

#: Above this order a factorization runs in blocks of this order (see the module
#: docstring for why: half the largest order seen to run). Below it, one call is
#: faster than blocks of half its order: a ``potrf`` and a ``lauum`` of order 8192 took
#: 6.8 s in one call each, against 8.2 s in blocks of 4096 (a Zen 3 EPYC, 2 cores).
BLOCK_ORDER = 8192


def upper_cholesky(A):
    """Upper ``U`` with ``U^T U = A`` (``A``'s upper triangle read; ``A`` overwritten).

    Orders up to :data:`BLOCK_ORDER` are one LAPACK ``potrf``; larger ones are
    factored block by block (right-looking: ``potrf`` of the diagonal block, a
    triangular solve for its row, GEMM updates of the trailing upper blocks), and
    ``A`` must then be C-ordered.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is not positive definite.
    """
    m = A.shape[0]
    if m <= BLOCK_ORDER:
        return _upper_factor(A, overwrite_a=True)
    for k in range(0, m, BLOCK_ORDER):
        e = min(m, k + BLOCK_ORDER)
        A[k:e, k:e] = _upper_factor(A[k:e, k:e], overwrite_a=False)
        A[k:e, :k] = 0.0
        if e < m:
            upper_transposed_solve_in_place(A[k:e, k:e], A[k:e, e:])
            for j in range(e, m, BLOCK_ORDER):
                A[j:j + BLOCK_ORDER, j:] -= A[k:e, j:j + BLOCK_ORDER].T @ A[k:e, j:]
    return A


def _upper_factor(A, overwrite_a):
    """One LAPACK ``potrf`` of the upper triangle of ``A``, without a transposed copy of a row-major ``A``
    (its Fortran reading is the lower factor's problem; see the module docstring). A diagonal block
    of a larger C-ordered matrix is copied, but column by column of that reading, not transposed."""
    if A.strides[1] == A.itemsize and not A.flags.f_contiguous:
        return scipy.linalg.cholesky(A.T, lower=True, overwrite_a=overwrite_a, check_finite=False).T
    return scipy.linalg.cholesky(A, lower=False, overwrite_a=overwrite_a, check_finite=False)


def lower_cholesky(A, overwrite_a=False):
    """Lower ``L`` with ``L L^T = A`` for a symmetric positive definite ``A``.

    ``A`` is overwritten when ``overwrite_a`` and it is C-ordered; the factor of a
    large ``A`` is then a transposed view of it (Fortran-ordered, as LAPACK's
    solves want it).

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is not positive definite.
    """
    # a symmetric matrix read in C order is its own transpose: the upper factor of
    # the C-ordered array is the lower factor, transposed
    work = A if overwrite_a and A.flags.c_contiguous else np.array(A, order="C")
    return upper_cholesky(work).T


def cho_factor(A, overwrite_a=False):
    """``(L, True)`` for :func:`scipy.linalg.cho_solve`, by :func:`lower_cholesky`."""
    return lower_cholesky(A, overwrite_a=overwrite_a), True


def mirror_upper(square, block=512):
    """Copy the upper triangle of ``square`` onto its lower one, in place, a block of rows at a time
    (no ``m x m`` temporary)."""
    for start in range(0, square.shape[0], block):
        stop = min(square.shape[0], start + block)
        square[start:stop, :start] = square[:start, start:stop].T
        diagonal = square[start:stop, start:stop]
        diagonal[...] = np.triu(diagonal) + np.triu(diagonal, 1).T
    return square
