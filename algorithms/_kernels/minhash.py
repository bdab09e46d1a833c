"""The kernels min-hash estimates, exactly, and the bias of its b-bit estimate.

* :func:`tanimoto_kernel`: ``x.y / (|x|^2 + |y|^2 - x.y)``, which on 0/1 rows is
  the resemblance (Jaccard index) ``|S1 & S2| / |S1 | S2|`` of their sets.
* :func:`min_max_kernel`: ``sum_i min(x_i, y_i) / sum_i max(x_i, y_i)`` of
  non-negative rows, the resemblance of weighted sets.

Both are 0 for a pair of empty rows (0/0), which is also what the feature map
estimates there: an empty row gets no features. Both take dense or sparse rows
and return a dense float64 Gram matrix.

Both are scale-invariant (``k(cx, cy) = k(x, y)``), and both are computed on
rows divided by a power of two near their largest entry (:func:`_scaled_rows`,
exact), their scales carried as exponents: no square or row sum overflows or
underflows at any finite magnitude, in float32 or float64.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from .._core.parallel import block_rows, run_row_blocks
from .._core.validation import check_non_negative
from .._numba.hashing import HASH_SPACE, min_max_block

#: What the set kernels and min-hash read, for the error on a negative entry.
SETS = "The input must be non-negative (sets, counts, weights)"

__all__ = ["min_max_kernel", "tanimoto_kernel"]


def _rows(X, name):
    return check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], input_name=name)


def _pair(X, Y):
    X = _rows(X, "X")
    Y = X if Y is None else _rows(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features and Y has {Y.shape[1]}: they must have the same")
    return X, Y


def _scaled_rows(A):
    """``(A', e)``: the rows of ``A`` divided by ``2^e_i``, ``e_i`` the binary exponent of their largest |entry|.

    ``A' = diag(2^-e) A`` as float64 (CSR for sparse ``A``, duplicates summed),
    with every row's largest magnitude in ``[1/2, 1)``; ``e_i = 0`` for an
    all-zero row. Dividing by a power of two is exact, except for entries below
    ``2^-1074`` of their row's largest, which no sum over the row can see.
    """
    if sp.issparse(A):
        A = sp.csr_matrix(A, dtype=np.float64, copy=True)
        A.sum_duplicates()
        e = np.frexp(abs(A).max(axis=1).toarray().ravel())[1]
        A.data = np.ldexp(A.data, -np.repeat(e, np.diff(A.indptr)))
        return A, e
    A = np.asarray(A, dtype=np.float64)
    e = np.frexp(np.abs(A).max(axis=1))[1]
    return np.ldexp(A, -e[:, None]), e


def tanimoto_kernel(X, Y=None):
    """Exact Tanimoto (Jaccard) kernel ``x.y / (|x|^2 + |y|^2 - x.y)``.

    On 0/1 rows it is the resemblance ``|S1 & S2| / |S1 | S2|`` of the sets of
    their non-zero columns, the kernel :class:`kernelmaps.MinHash` estimates in
    binary mode. Sparse rows stay sparse: one sparse product ``X Y^T`` and the
    rows' squared norms. A pair of all-zero rows has kernel 0.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n, n_features)
    Y : {array-like, sparse matrix} of shape (m, n_features) or None
        ``None`` means ``Y = X``.

    Returns
    -------
    K : ndarray of shape (n, m), float64

    References
    ----------
    Li, P. and König, A. C. b-Bit minwise hashing. WWW 2010 (the resemblance R).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import tanimoto_kernel
    >>> X = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]])
    >>> tanimoto_kernel(X).round(3)
    array([[1.   , 0.333, 0.   ],
           [0.333, 1.   , 0.   ],
           [0.   , 0.   , 0.   ]])
    """
    X, Y = _pair(X, Y)
    same = Y is X
    if sp.issparse(X) or sp.issparse(Y):
        X, Y = sp.csr_matrix(X), sp.csr_matrix(Y)
    X, x_exponents = _scaled_rows(X)
    Y, y_exponents = (X, x_exponents) if same else _scaled_rows(Y)
    if sp.issparse(X):
        products = (X @ Y.T).toarray()
        x_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        y_norms = np.asarray(Y.multiply(Y).sum(axis=1)).ravel()
    else:
        products = X @ Y.T
        x_norms, y_norms = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Y, Y)
    # x.y / (|x|^2 + |y|^2 - x.y) with x = 2^a x', y = 2^b y', divided through by 2^(a + b);
    # a term beyond float64 means a kernel value below 1e-308, and the quotient gives 0
    shift = x_exponents[:, None] - y_exponents[None, :]
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        denominator = np.ldexp(x_norms[:, None], shift) + np.ldexp(y_norms[None, :], -shift) - products
        return np.where(denominator > 0, products / denominator, 0.0)


def min_max_kernel(X, Y=None):
    """Exact min-max (weighted Jaccard) kernel ``sum_i min(x_i, y_i) / sum_i max(x_i, y_i)``.

    The kernel :class:`kernelmaps.MinHash` estimates in weighted mode, for
    non-negative rows; on 0/1 rows it equals :func:`tanimoto_kernel`. Computed
    by a Numba merge of the rows' sorted non-zero columns (dense input is read
    as CSR), in row blocks on the worker threads. A pair of all-zero rows has
    kernel 0.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n, n_features), non-negative
    Y : {array-like, sparse matrix} of shape (m, n_features) or None
        ``None`` means ``Y = X``.

    Returns
    -------
    K : ndarray of shape (n, m), float64

    Raises
    ------
    ValueError
        For a negative entry.

    References
    ----------
    Ioffe, S. Improved consistent sampling, weighted minhash and L1 sketching.
    ICDM 2010.

    Li, P. 0-bit consistent weighted sampling. KDD 2015 (the min-max kernel).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import min_max_kernel
    >>> X = np.array([[2.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    >>> min_max_kernel(X).round(3)  # (1 + 1 + 0) / (2 + 1 + 1)
    array([[1. , 0.5],
           [0.5, 1. ]])
    """
    X, Y = _pair(X, Y)
    check_non_negative(X, "min_max_kernel", SETS)
    check_non_negative(Y, "min_max_kernel", SETS, name="Y")
    same = Y is X
    X, x_exponents = _scaled_rows(sp.csr_matrix(X))
    Y, y_exponents = (X, x_exponents) if same else _scaled_rows(sp.csr_matrix(Y))
    x_sums = np.asarray(X.sum(axis=1)).ravel()
    y_sums = np.asarray(Y.sum(axis=1)).ravel()
    K = np.empty((X.shape[0], Y.shape[0]))

    def work(start, stop):
        block = X[start:stop]
        min_max_block(block.indptr, block.indices, block.data, Y.indptr, Y.indices, Y.data,
                      x_sums[start:stop], y_sums, x_exponents[start:stop], y_exponents, K[start:stop])

    run_row_blocks(X.shape[0], block_rows(8 * max(1, Y.shape[0])), work)
    return K


def _a(r, b):
    """Li & König's ``A_b(r) = r (1 - r)^(2^b - 1) / (1 - (1 - r)^(2^b))``, for ``0 < r < 1``."""
    log_q = np.log1p(-r)
    return r * np.exp(((1 << b) - 1) * log_q) / -np.expm1((1 << b) * log_q)


def bbit_constants(b, f1, f2, universe=HASH_SPACE):
    """``(C1, C2)`` of Li & König's Theorem 1 for sets of sizes ``f1``, ``f2`` (arrays, > 0).

    With ``r_j = f_j / D`` (``D = universe``, the size of the hashed space),
    ``C1 = A_1 r2/(r1 + r2) + A_2 r1/(r1 + r2)`` and
    ``C2 = A_1 r1/(r1 + r2) + A_2 r2/(r1 + r2)``, where ``A_j = A_b(r_j)``; the
    probability that the lowest ``b`` bits of two sets' minimum hashes agree
    is then ``P_b = C1 + (1 - C2) R``. Both tend to ``2^-b`` as ``r -> 0``.
    """
    r1 = np.asarray(f1, dtype=np.float64) / float(universe)
    r2 = np.asarray(f2, dtype=np.float64) / float(universe)
    a1, a2 = _a(r1, b), _a(r2, b)
    total = r1 + r2
    return (a1 * r2 + a2 * r1) / total, (a1 * r1 + a2 * r2) / total


def low_bits_collision(b, universe=HASH_SPACE):
    """Probability that two distinct values drawn uniformly from ``[0, universe)`` agree in their lowest ``b`` bits.

    The weighted mode reports ``h_j(i*)``, an injective hash of ``i*``: for
    ``i* != i*'`` with the two values a uniform pair of distinct words, the
    chance that two different samples share a column is
    ``(sum_c n_c^2 - D) / (D (D - 1))``, ``n_c`` the values of residue ``c``
    modulo ``2^b`` (``2^-b`` to within ``2^-64``).
    """
    m = 1 << b
    base, extra = divmod(universe, m)
    squares = extra * (base + 1) ** 2 + (m - extra) * base ** 2
    return (squares - universe) / (universe * (universe - 1))
