"""Ridge least squares by its normal equations, accumulated in one pass over row blocks."""

import warnings
from typing import NamedTuple, Optional

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numba import njit
from scipy.linalg import LinAlgWarning

from .._core.validation import FeatureOverflowError, check_fits_in_memory, user_stacklevel


@njit(cache=True, nogil=True)
def _class_sums(Z, labels, out):
    """``out[c] += sum of the rows Z[i] with labels[i] == c`` (float64 accumulation).

    Gives ``Z^T Y`` for any class coding without forming the n x C target matrix.
    """
    n, d = Z.shape
    for i in range(n):
        dst = out[labels[i]]
        src = Z[i]
        for j in range(d):
            dst[j] += src[j]


#: Multiply-adds of one sparse block's ``Z^T Z`` (the sum of its rows' squared
#: non-zero counts). They bound the entries of the sparse product the block
#: builds before it is added to the dense Gram matrix; a whole tall matrix at once
#: would build up to ``D x D`` entries beside it, 1.5 times the Gram's own memory.
SPARSE_BLOCK_PRODUCTS = 2**22


def class_sums(Z, labels, n_classes, sample_weight=None):
    """``(n_classes, n_features)`` float64 sums of the rows of ``Z`` in each class.

    ``Z^T Y = class_sums(...).T @ code`` for any class coding ``Y[i] = code[labels[i]]``,
    without the n x C target matrix. Sparse ``Z`` is summed by a sparse one-hot
    product, so that its rows are never densified. With ``sample_weight`` each row
    counts with its weight (``Z^T W Y``), by the same one-hot product holding
    the weights, dense or sparse.

    Parameters
    ----------
    Z : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    labels : ndarray of int of shape (n_samples,), in ``[0, n_classes)``
    n_classes : int
    sample_weight : ndarray of shape (n_samples,), optional

    Returns
    -------
    ndarray of shape (n_classes, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.normal_equations import class_sums
    >>> Z = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> class_sums(Z, np.array([0, 1, 0]), 2)
    array([[6., 8.],
           [3., 4.]])
    >>> class_sums(Z, np.array([0, 1, 0]), 2, sample_weight=np.array([2.0, 1.0, 0.0]))
    array([[2., 4.],
           [3., 4.]])
    """
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    n = Z.shape[0]
    if sp.issparse(Z) or sample_weight is not None:
        values = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        one_hot = sp.csr_matrix((values, (labels, np.arange(n))), shape=(n_classes, n))
        sums = one_hot @ Z
        sums = sums.toarray() if sp.issparse(sums) else np.asarray(sums)
        return sums.astype(np.float64, copy=False)
    sums = np.zeros((n_classes, Z.shape[1]))
    _class_sums(np.ascontiguousarray(Z, dtype=np.float64), labels, sums)
    return sums


def scale_rows(Z, factors):
    """``diag(factors) @ Z`` for dense or CSR ``Z``; a CSR result keeps ``Z``'s pattern.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kernelmaps._solvers.normal_equations import scale_rows
    >>> scale_rows(sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]])), np.array([3.0, 0.5])).toarray()
    array([[3., 0.],
           [0., 1.]])
    """
    if sp.issparse(Z):
        Z = sp.csr_matrix(Z)
        data = Z.data * np.repeat(factors, np.diff(Z.indptr))
        return sp.csr_matrix((data, Z.indices, Z.indptr), shape=Z.shape)
    return Z * factors[:, None]


def overflow_error(largest_feature, largest_weight=None):
    """The error of least-squares moments (``Z^T W Z``, ``Z^T W y``) that overflowed float64.

    It names the magnitude of the features (and of the sample weights, when there
    are any), the cause the user can change, for every least-squares solver.
    """
    weights = "" if largest_weight is None else f", weighted by sample weights up to {largest_weight:.3g},"
    return FeatureOverflowError(
        f"Z^T Z (or Z^T y) overflowed float64: features of magnitude up to {largest_feature:.3g}{weights} "
        "square past the largest float. Rescale the features (or the targets"
        + ("" if largest_weight is None else ", or the weights") + ")."
    )


def _sparse_row_blocks(Z):
    """Consecutive row slices of CSR ``Z``, each at most :data:`SPARSE_BLOCK_PRODUCTS`
    multiply-adds of ``Z^T Z`` (one row at least)."""
    work = np.cumsum(np.diff(Z.indptr).astype(np.int64) ** 2)
    start = 0
    while start < Z.shape[0]:
        done = work[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(work, done + SPARSE_BLOCK_PRODUCTS, side="right")))
        yield slice(start, stop)
        start = stop


def solve_semidefinite(system, B, return_factor=False):
    """``(X, rank)``: the minimum-norm solution of ``A X = B``, ``A = system()`` symmetric positive semi-definite.

    ``rank`` is None when ``A`` is positive definite to working precision: LAPACK's
    Cholesky ``potrf`` factors it and ``pocon`` estimates a reciprocal condition
    number of at least the machine epsilon (scipy's ``solve`` warns below it).
    With ``return_factor``, ``(X, rank, L)``: the lower Cholesky factor ``L`` of
    ``A = L L^T`` in that case, None otherwise.
    Otherwise ``rank`` is the numerical rank ``r`` found by the pivoted Cholesky
    factorization ``P^T A P = U^T U`` (LAPACK's ``pstrf``), which stops where the
    largest remaining diagonal entry falls below ``n eps max(diag(A))``; with the
    thin QR factorization ``U_r^T = Q R`` of its first ``r`` rows,
    ``A^+ = P Q R^{-T} R^{-1} Q^T P^T``. That costs ``O(n^2 r)``, against the
    ``O(n^3)`` singular value decomposition of a dense least-squares solver
    (over a minute at n = 6000 for the rank 199 of 200 centred rows, against
    seconds).

    ``system`` is called once more when the Cholesky factorization fails: each
    call's matrix is factored in place, so that no third ``n x n`` copy is held.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.normal_equations import solve_semidefinite
    >>> Z = np.array([[1.0, 1.0], [2.0, 2.0]])  # rank 1
    >>> X, rank = solve_semidefinite(lambda: Z.T @ Z, Z.T @ np.array([[1.0], [2.0]]))
    >>> X.ravel(), rank  # the minimum-norm solution of Z x = (1, 2)
    (array([0.5, 0.5]), 1)
    """
    lapack = scipy.linalg.lapack
    A = system()
    # A is symmetric: its transpose is the Fortran-ordered matrix LAPACK factors in place
    norm = lapack.dlange("1", A.T)
    factor, info = lapack.dpotrf(A.T, lower=0, overwrite_a=1, clean=1)
    if info == 0 and lapack.dpocon(factor, norm)[0] >= np.finfo(np.float64).eps:
        X, info = lapack.dpotrs(factor, B)
        # the upper factor U of A = U^T U, Fortran-ordered: its transpose is a C-ordered lower L
        return (X, None, factor.T) if return_factor else (X, None)
    del A, factor
    factor, pivots, rank, info = lapack.dpstrf(system().T, lower=0, overwrite_a=1)
    if info < 0 or rank == 0:
        X = np.zeros_like(B)
    else:
        Q, R = scipy.linalg.qr(np.triu(factor[:rank]).T, mode="economic", check_finite=False)
        inner = scipy.linalg.solve_triangular(R, Q.T @ B[pivots - 1], check_finite=False)
        inner = scipy.linalg.solve_triangular(R, inner, trans="T", check_finite=False)
        X = np.empty_like(B)
        X[pivots - 1] = Q @ inner
    rank = 0 if info < 0 else rank
    return (X, rank, None) if return_factor else (X, rank)


class RidgeSolution(NamedTuple):
    """What :meth:`NormalEquations.solve_factored` returns."""

    #: ndarray of shape (n_features, n_targets)
    coef: np.ndarray
    #: ndarray of shape (n_targets,): zeros without an intercept
    intercept: np.ndarray
    #: lower Cholesky factor ``L`` of the solved (centred) system ``A = L L^T``, ``(n_features, n_features)``;
    #: None when it is singular to working precision
    factor: Optional[np.ndarray]
    #: ndarray of shape (n_targets,): the minimized ``sum_i w_i (z_i w + b - t_i)^2 + alpha |w|^2``
    #: of each target, from the moments (``t_c^T W t_c - w^T Z_c^T W t_c``), at least 0
    objective: np.ndarray


class NormalEquations:
    """One-pass accumulator of ``Z^T W Z``, ``Z^T W T`` and the sums an intercept needs.

    ``add`` can be called on any number of row blocks (out of core); ``solve``
    returns the ridge solution with an unpenalized intercept,
    ``min sum_i w_i ||z_i w + b - t_i||^2 + alpha ||w||^2``, by centering the
    accumulated moments at the weighted means (``w_i = 1`` without sample
    weights). Everything is accumulated in float64. Blocks may be scipy sparse
    matrices: ``Z^T W Z`` is then a sparse product added into the dense Gram
    matrix, and no block is densified.

    Parameters
    ----------
    n_features : int
    n_targets : int

    Attributes
    ----------
    gram : ndarray of shape (n_features, n_features)
        ``Z^T W Z``.
    cross : ndarray of shape (n_features, n_targets)
        ``Z^T W T``.
    feature_sum, target_sum : ndarray of shape (n_features,) and (n_targets,)
        ``Z^T w`` and ``T^T w``.
    target_square : ndarray of shape (n_targets,)
        ``sum_i w_i t_i^2`` of each target.
    n_samples : int
        Rows accumulated.
    weight_sum : float
        Their total weight (``n_samples`` without sample weights).
    log_weight_sum : float
        ``sum_i log w_i`` over the rows of positive weight (0 without sample
        weights): the Gaussian reading's noise variances are ``sigma^2 / w_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import NormalEquations
    >>> Z = np.random.default_rng(0).standard_normal((30, 2))
    >>> T = Z @ np.array([[1.0], [2.0]]) + 3.0
    >>> equations = NormalEquations(n_features=2, n_targets=1)
    >>> for rows in (slice(0, 10), slice(10, 30)):  # two blocks, one pass
    ...     equations.add(Z[rows], T[rows])
    >>> coef, intercept = equations.solve(alpha=0.0)
    >>> np.round(coef.ravel(), 3), np.round(intercept, 3)
    (array([1., 2.]), array([3.]))

    A row of weight 2 counts as two copies of it:

    >>> weighted, repeated = NormalEquations(2, 1), NormalEquations(2, 1)
    >>> weighted.add(Z[:3], T[:3], sample_weight=np.array([2.0, 1.0, 1.0]))
    >>> repeated.add(Z[[0, 0, 1, 2]], T[[0, 0, 1, 2]])
    >>> bool(np.allclose(weighted.solve(0.1)[0], repeated.solve(0.1)[0], rtol=1e-12))
    True
    """

    def __init__(self, n_features, n_targets):
        # the Gram matrix, and its copy in the solve
        check_fits_in_memory(8 * (2 * n_features * n_features + 2 * n_features * n_targets),
                             f"n_features={n_features}", "the normal equations Z^T Z and Z^T T")
        self.largest_feature = 0.0
        self.largest_weight = None
        self.gram = np.zeros((n_features, n_features))
        self.cross = np.zeros((n_features, n_targets))
        self.feature_sum = np.zeros(n_features)
        self.target_sum = np.zeros(n_targets)
        self.target_square = np.zeros(n_targets)
        self.n_samples = 0
        self.weight_sum = 0.0
        self.log_weight_sum = 0.0

    # an overflow is reported by solve, by its cause, rather than as RuntimeWarnings here
    @np.errstate(over="ignore", invalid="ignore")
    def add(self, Z, T=None, *, labels=None, code=None, sample_weight=None):
        """Accumulate a block of rows (dense, or any scipy sparse format).

        Give either targets ``T`` (n x n_targets), or integer ``labels`` with a
        ``code`` matrix (n_classes x n_targets) meaning ``T[i] = code[labels[i]]``;
        the latter never forms ``T``. ``sample_weight`` (n non-negative floats)
        weighs each row's squared error; ``W`` is never formed: the Gram update
        is that of the rows scaled by ``sqrt(w)`` (a block-sized copy).
        """
        sparse = sp.issparse(Z)
        Z64 = sp.csr_matrix(Z, dtype=np.float64) if sparse else np.asarray(Z, dtype=np.float64)
        if Z64.ndim != 2 or Z64.shape[1] != self.gram.shape[0]:
            raise ValueError(f"a block of shape {Z64.shape} cannot be added to normal equations of "
                             f"{self.gram.shape[0]} features")
        w = None
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64).reshape(-1)
            if w.shape[0] != Z64.shape[0]:
                raise ValueError(f"sample_weight has {w.shape[0]} entries for a block of {Z64.shape[0]} rows")
            if w.size:
                self.largest_weight = max(self.largest_weight or 0.0, float(w.max()))
                self.log_weight_sum += float(np.sum(np.log(w[w > 0])))
        values = Z64.data if sparse else Z64
        if values.size:
            # only for the overflow message: max and -min need no |Z| copy
            self.largest_feature = max(self.largest_feature, float(values.max()), -float(values.min()))
        # Z^T W Z = (sqrt(W) Z)^T (sqrt(W) Z): one symmetric product, as unweighted
        Zs = Z64 if w is None else scale_rows(Z64, np.sqrt(w))
        if sparse:
            for rows in _sparse_row_blocks(Zs):
                block = Zs[rows]
                product = (block.T @ block).tocoo()
                # scattered into the Gram matrix: a dense copy per block would cost D x D each
                np.add.at(self.gram, (product.row, product.col), product.data)
            data = Z64.data if w is None else Z64.data * np.repeat(w, np.diff(Z64.indptr))
            self.feature_sum += np.bincount(Z64.indices, weights=data, minlength=Z64.shape[1])
        else:
            self.gram += Zs.T @ Zs
            self.feature_sum += Z64.sum(axis=0) if w is None else w @ Z64
        self.n_samples += Z64.shape[0]
        self.weight_sum += Z64.shape[0] if w is None else float(w.sum())
        if T is not None:
            T = np.asarray(T, dtype=np.float64).reshape(Z64.shape[0], -1)
            if w is None:
                self.cross += Z64.T @ T
                self.target_sum += T.sum(axis=0)
                self.target_square += np.einsum("ij,ij->j", T, T)
            else:
                self.cross += Z64.T @ (w[:, None] * T)
                self.target_sum += w @ T
                self.target_square += np.einsum("i,ij,ij->j", w, T, T)
        else:
            counts = np.bincount(labels, weights=w, minlength=code.shape[0]).astype(np.float64)
            self.cross += class_sums(Z64, labels, code.shape[0], w).T @ code
            self.target_sum += counts @ code
            self.target_square += counts @ (code * code)

    def merge(self, other):
        """Add the rows another accumulator has seen (the map-reduce step).

        Accumulators of disjoint row sets, filled anywhere (another process, a
        Dask worker, another ``partial_fit``), merge into the accumulator of
        their union: every moment is a (weighted) sum over rows. ``other`` is
        unchanged.

        Parameters
        ----------
        other : NormalEquations
            Of the same ``n_features`` and ``n_targets``.

        Returns
        -------
        self
        """
        if not isinstance(other, NormalEquations):
            raise TypeError(f"can only merge another NormalEquations, got {type(other).__name__}")
        if other.gram.shape != self.gram.shape or other.cross.shape != self.cross.shape:
            raise ValueError(
                f"cannot merge normal equations of {other.gram.shape[0]} features and "
                f"{other.cross.shape[1]} targets into {self.gram.shape[0]} features and "
                f"{self.cross.shape[1]} targets"
            )
        self.gram += other.gram
        self.cross += other.cross
        self.feature_sum += other.feature_sum
        self.target_sum += other.target_sum
        self.target_square += other.target_square
        self.n_samples += other.n_samples
        self.weight_sum += other.weight_sum
        self.log_weight_sum += other.log_weight_sum
        self.largest_feature = max(self.largest_feature, other.largest_feature)
        if other.largest_weight is not None:
            self.largest_weight = max(self.largest_weight or 0.0, other.largest_weight)
        return self

    def solve(self, alpha, fit_intercept=True):
        """Return ``(coef, intercept)``: coef of shape (n_features, n_targets).

        A system singular to working precision (``alpha = 0`` with more features
        than independent rows, or an ``alpha`` below the rounding of ``Z^T Z``)
        gets its minimum-norm solution (:func:`solve_semidefinite`) and a
        ``LinAlgWarning`` that names its numerical rank.
        """
        solution = self.solve_factored(alpha, fit_intercept)
        return solution.coef, solution.intercept

    def solve_factored(self, alpha, fit_intercept=True):
        """:meth:`solve`, with the Cholesky factor of the system and the minimized objective.

        The factor is that of ``Z_c^T W Z_c + alpha I`` (``Z^T W Z + alpha I``
        without an intercept), which the solve computes anyway; the objective is
        ``t_c^T W t_c - coef^T Z_c^T W t_c``, which loses the digits of its ratio
        to ``sum_i w_i t_i^2`` (the one pass keeps no residuals).

        Returns
        -------
        RidgeSolution
        """
        if self.n_samples == 0:
            raise ValueError("no samples were accumulated")
        n = self.weight_sum
        if not n > 0:
            raise ValueError("the accumulated rows all have zero weight")
        if not (np.isfinite(self.gram).all() and np.isfinite(self.cross).all()):
            raise overflow_error(self.largest_feature, self.largest_weight)
        if fit_intercept:
            mean_z = self.feature_sum / n
            mean_t = self.target_sum / n
            B = self.cross - n * np.outer(mean_z, mean_t)
            spread = self.target_square - n * mean_t**2
        else:
            B, spread = self.cross, self.target_square

        def system():
            A = self.gram - n * np.outer(mean_z, mean_z) if fit_intercept else self.gram.copy()
            A[np.diag_indices_from(A)] += alpha
            return A

        coef, rank, factor = solve_semidefinite(system, np.array(B, dtype=np.float64, order="F"), True)
        if rank is not None:
            self._warn_singular(alpha, rank)
        intercept = mean_t - mean_z @ coef if fit_intercept else np.zeros(B.shape[1])
        objective = np.maximum(spread - np.einsum("ij,ij->j", coef, B), 0.0)
        return RidgeSolution(coef, intercept, factor, objective)

    def _warn_singular(self, alpha, rank):
        largest = float(np.max(np.diagonal(self.gram), initial=0.0))
        d = self.gram.shape[0]
        warnings.warn(
            f"the normal equations Z^T Z + alpha I of {d} features are singular to working precision "
            f"(numerical rank {rank}, alpha={alpha:g}): more features than independent rows, or an alpha below "
            f"the rounding of Z^T Z (whose diagonal reaches {largest:.3g}). The coefficients are the "
            f"minimum-norm least-squares solution; an alpha well above {d * np.finfo(np.float64).eps * largest:.3g} "
            "gives the unique ridge solution", LinAlgWarning, stacklevel=user_stacklevel())
