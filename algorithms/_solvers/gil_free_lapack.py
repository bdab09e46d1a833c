"""SciPy's own BLAS ``trsm`` and LAPACK ``potrf``, called without holding the GIL (and in place).

SciPy's wrappers (``solve_triangular``, ``cho_factor``, ``scipy.linalg.blas``)
hold the GIL for the whole call, so two threads that each solve or factor their
own matrix run one after the other: on this project's 2-core machine, two
threads of 20 triangular solves of order 1000 took as long as one thread doing
all 40. The cross-validated Nyström learners solve one such system per bandwidth
and chunk of rows, and factor one per fold and penalty, on the thread pool; the
posterior's pass solves one per block of rows. Here the same routines, found
through SciPy's Cython exports, are called by :mod:`ctypes`, which releases the
GIL for the call: the same code, so the same results bit for bit as SciPy's
wrappers (the factorization as SciPy's lower one, transposed), side by side.
"""

import ctypes

import numpy as np
from numba.extending import get_cython_function_address

_POINTER = ctypes.c_void_p
_ROUTINES = {}


def _routine(module, name, n_arguments):
    """The Fortran routine ``name`` of SciPy's Cython ``module``, as a ctypes function of pointers."""
    if name not in _ROUTINES:
        address = get_cython_function_address(f"scipy.linalg.cython_{module}", name)
        _ROUTINES[name] = ctypes.CFUNCTYPE(None, *([_POINTER] * n_arguments))(address)
    return _ROUTINES[name]


def _by_reference(*values):
    return [ctypes.byref(value) for value in values]


def _lower_trsm(side, transa, L, lda, B, rows, columns, ldb):
    """BLAS ``dtrsm`` in place on the Fortran reading of float64 memory: ``B <- op(L)^-1 B`` (side
    ``b"L"``) or ``B op(L)^-1`` (``b"R"``), ``L`` lower with leading dimension ``lda``, ``B``
    ``rows x columns`` with leading dimension ``ldb``."""
    side, uplo, transa, diag = (ctypes.c_char(flag) for flag in (side, b"L", transa, b"N"))
    rows, columns, one = ctypes.c_int(rows), ctypes.c_int(columns), ctypes.c_double(1.0)
    lda, ldb = ctypes.c_int(max(1, lda)), ctypes.c_int(max(1, ldb))
    _routine("blas", "dtrsm", 11)(*_by_reference(side, uplo, transa, diag, rows, columns, one),
                                  L.ctypes.data_as(_POINTER), ctypes.byref(lda),
                                  B.ctypes.data_as(_POINTER), ctypes.byref(ldb))


class RightUpperSolve:
    """``X -> X T^-1`` for an upper triangular ``T`` (``Phi T = X``), by BLAS ``dtrsm`` without the GIL.

    Parameters
    ----------
    T : ndarray of shape (m, m)
        Upper triangular with a non-zero diagonal (a Cholesky factor); its lower
        triangle is not read.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.gil_free_lapack import RightUpperSolve
    >>> T = np.array([[2.0, 1.0], [0.0, 4.0]])
    >>> RightUpperSolve(T)(np.array([[2.0, 5.0]]))
    array([[1., 1.]])
    """

    def __init__(self, T):
        self.T = np.ascontiguousarray(T, dtype=np.float64)
        if self.T.ndim != 2 or self.T.shape[0] != self.T.shape[1]:
            raise ValueError(f"T must be a square matrix, got shape {self.T.shape}")

    def __call__(self, X):
        """``X T^-1`` in float64, a new C-ordered array of ``X``'s shape (``X`` untouched)."""
        out = np.array(X, dtype=np.float64, order="C")
        if out.ndim != 2 or out.shape[1] != self.T.shape[0]:
            raise ValueError(f"X of shape {out.shape} does not have the {self.T.shape[0]} columns of T")
        if out.size:
            # X T^-1 = Y^T with T^T Y = X^T: in Fortran order the C-ordered T is the lower T^T and X is X^T
            m = out.shape[1]
            _lower_trsm(b"L", b"N", self.T, m, out, m, out.shape[0], m)
        return out


def upper_cholesky_in_place(A):
    """Factor the C-ordered float64 ``A`` in place: its upper triangle becomes ``U``, ``U^T U = A``.

    LAPACK ``dpotrf`` without the GIL; the lower triangle is left as it was.
    Returns LAPACK's ``info``: 0, or ``k > 0`` when the leading minor of order
    ``k`` is not positive definite (``U`` is then incomplete).
    """
    if A.dtype != np.float64 or not A.flags.c_contiguous or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("upper_cholesky_in_place takes a square C-contiguous float64 matrix")
    if not A.size:
        return 0
    # the C-ordered upper triangle is the Fortran-ordered lower one
    uplo, n, info = ctypes.c_char(b"L"), ctypes.c_int(A.shape[0]), ctypes.c_int(0)
    _routine("lapack", "dpotrf", 5)(ctypes.byref(uplo), ctypes.byref(n), A.ctypes.data_as(_POINTER),
                                    ctypes.byref(n), ctypes.byref(info))
    return info.value


def upper_transposed_solve_in_place(U, B):
    """``B <- U^-T B`` in place, for an upper triangular ``U`` (``b x b``) and ``B`` (``b x r``).

    Both are float64 row-major views (unit column stride, any row stride), such as
    blocks of one C-ordered matrix: BLAS ``dtrsm`` reads them where they are, without
    the transposed copies SciPy's ``solve_triangular`` makes of C-ordered blocks, and
    without the GIL. ``U``'s lower triangle is not read.
    """
    for name, A in (("U", U), ("B", B)):
        if A.dtype != np.float64 or A.ndim != 2 or (A.shape[1] > 1 and A.strides[1] != A.itemsize):
            raise ValueError(f"{name} must be a 2-D float64 view with contiguous rows")
        # BLAS steps from row to row by a leading dimension: a positive whole number of elements, at
        # least a row (reversed or overlapping rows have none)
        if A.shape[0] > 1 and (A.strides[0] < A.shape[1] * A.itemsize or A.strides[0] % A.itemsize):
            raise ValueError(f"{name}'s rows must follow each other in memory without overlapping, got "
                             f"strides {A.strides} for shape {A.shape}")
    if U.shape[0] != U.shape[1] or B.shape[0] != U.shape[0]:
        raise ValueError(f"U of shape {U.shape} and B of shape {B.shape} do not make U^T X = B")
    if B.size == 0:
        return B
    # read in column-major order, U is the lower L = U^T and B is B^T: U^T X = B is X^T L^T = B^T,
    # X^T = B^T L^-T (side R, lower, transposed)
    _lower_trsm(b"R", b"T", U, U.strides[0] // U.itemsize, B, B.shape[1], B.shape[0], B.strides[0] // B.itemsize)
    return B
