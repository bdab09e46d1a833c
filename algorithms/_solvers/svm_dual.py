"""The binary SVM dual problems of one fit on row subsets, sharing one kernel-column cache."""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._core.validation import user_stacklevel
from .._kernels.exact import exact_kernel
from .._kernels.formulas import PrecomputedColumns, kernel_record
from .._kernels.matern import has_closed_form
from .greedy_cd import greedy_coordinate_descent, largest_greedy_step
from .smo import smo_gap, smo_second_order


#: Length-``n`` float64 or int64 vectors a fit holds besides the column cache: the
#: labels, the signs, the row subset, the kernel diagonal and its permuted copy,
#: ``|x|^2``, the slot map, the dual variables, ``z = Q a`` (or ``G``), ``G_bar``,
#: the permutation and the per-row bounds ``C_i`` of a weighted fit.
SOLVER_VECTORS = 12


def _kernel_diagonal(X, kernel_params):
    """``k(x, x)`` for each row of ``X`` (float64), given :func:`kernelmaps.exact_kernel`'s keywords."""
    if kernel_params["kernel"] in ("gaussian", "laplacian", "cauchy", "matern"):
        return np.ones(X.shape[0])
    # k(x, x) of a dot-product kernel, one row at a time, without the n x n Gram
    return np.array([exact_kernel(row[None], None, **kernel_params)[0, 0] for row in X])


class Solver:
    """Runs the dual solver on row subsets, reusing one column cache while the
    subset stays the same (the one-vs-rest problems).

    The second-order solver permutes its copy of the rows, the cache and the
    kernel diagonal in place as it shrinks; ``perm`` (position -> index in
    ``rows``) carries the permutation from one problem to the next, so the cache
    stays valid and each problem's signs are read through it.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, C-contiguous
        All the rows of the fit; each problem solves on a subset of them. With
        ``kernel_params = {'kernel': 'precomputed'}``, the ``n x n`` Gram matrix.
    kernel_params : dict
        Keywords ``kernel``, ``gamma``, ``degree``, ``coef0`` and ``nu`` of
        :func:`kernelmaps.exact_kernel`, all resolved.
    C : float or ndarray of shape (n_samples,)
        The box constraint: one for every row, or one per row of ``X`` (``C_i`` of
        weighted samples or classes, all positive).
    tol : float
    max_iter : int
        Steps per problem; a ``ConvergenceWarning`` when reached.
    cache_mb : float
        Memory of the kernel-column cache in MB.
    bias : float
        Constant added to the kernel by the greedy solver (0 or 1).
    selection : {'greedy', 'second_order'}
    shrinking : bool
        Shrinking of the second-order solver.
    """

    def __init__(self, X, kernel_params, C, tol, max_iter, cache_mb, bias, selection, shrinking):
        self.X, self.C, self.tol, self.max_iter = X, C, tol, max_iter
        self.cache_mb, self.bias, self.selection, self.shrinking = cache_mb, bias, selection, shrinking
        if kernel_params["kernel"] == "precomputed":
            gram = X
        elif kernel_params["kernel"] == "matern" and not has_closed_form(kernel_params["nu"]):
            # a nu without closed form has no Numba column: its Gram matrix is read instead
            gram = exact_kernel(X, None, **kernel_params)
        else:
            gram = None
            self.kernel = kernel_record(kernel_params["kernel"], kernel_params["gamma"], kernel_params["degree"],
                                        kernel_params["coef0"], kernel_params.get("nu", 1.5), 1.0, np.float64)
            diag = _kernel_diagonal(X, kernel_params)
        if gram is not None:
            # the rows of the Gram matrix, each followed by its column (see PrecomputedColumns)
            n = gram.shape[0]
            self.X = np.empty((n, n + 1))
            self.X[:, :n] = gram
            self.X[:, n] = np.arange(n)
            self.kernel = PrecomputedColumns(np.float64(1.0))
            diag = np.array(np.diagonal(gram), dtype=np.float64)
        # the greedy solver folds the bias into the kernel (k + 1); SMO keeps it free
        self.diag = diag + (bias if selection == "greedy" else 0.0)
        self.rows = None

    def _reset(self, rows):
        X = np.ascontiguousarray(self.X[rows])
        n = X.shape[0]
        n_slots = int(min(n, max(2, self.cache_mb * 2**20 // (8 * n))))
        self.rows, self.Xs = rows, X
        self.sq = np.einsum("ij,ij->i", X, X)
        self.k_diag = self.diag[rows]
        self.perm = np.arange(n, dtype=np.int64)
        self.cache = np.empty((n_slots, n))
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.slot_owner = np.full(n_slots, -1, dtype=np.int64)
        self.last_used = np.full(n_slots, -1, dtype=np.int64)
        self.col_len = np.zeros(n_slots, dtype=np.int64)
        self.clock = 0

    def _cache(self):
        return self.cache, self.slot_of, self.slot_owner, self.last_used, self.col_len, self.clock

    def solve(self, rows, signs, label):
        """``(y_i a_i, intercept, steps)`` of the binary problem on ``rows``."""
        if self.rows is None or not np.array_equal(rows, self.rows):
            self._reset(rows)
        n = len(rows)
        alpha = np.zeros(n)
        # per-row bounds in the order of ``rows``; the SMO reads them through ``perm``
        box = self.C if np.ndim(self.C) == 0 else np.ascontiguousarray(self.C[rows], dtype=np.float64)
        if self.selection == "second_order":
            y = signs[self.perm]  # permuted with the solver's variables from here on
            G, G_bar = np.full(n, -1.0), np.zeros(n)
            it, converged, self.clock, rho = smo_second_order(
                self.Xs, self.sq, self.kernel, y, box, self.tol, self.max_iter, self.shrinking, *self._cache(),
                alpha, G, G_bar, self.k_diag, self.perm)
            if not converged:
                bounds = box if np.ndim(box) == 0 else box[self.perm]
                self._warn(label, "maximal violating pair's gap", smo_gap(y, alpha, G, bounds))
            coef = np.empty(n)
            coef[self.perm] = alpha * y
            return coef, -rho, it
        z = np.zeros(n)
        it, converged, self.clock = greedy_coordinate_descent(
            self.Xs, self.sq, self.kernel, self.bias, signs, box, self.tol, self.max_iter, *self._cache(),
            alpha, z, self.k_diag)
        if not converged:
            self._warn(label, "largest coordinate step", largest_greedy_step(alpha, z, self.k_diag, box))
        coef = alpha * signs
        return coef, self.bias * coef.sum(), it

    def _warn(self, label, measure, reached):
        warnings.warn(f"KernelSVC stopped at max_iter={self.max_iter} steps on the problem {label}: "
                      f"its {measure} reached {reached:.3g} against tol={self.tol}; raise max_iter "
                      "or tol", ConvergenceWarning, stacklevel=user_stacklevel())
