"""Ridge least squares for a whole grid of penalties from one pass over the rows.

The pass fills the weighted moments of each test fold of a cross-validation
(:class:`FoldMoments`); a fold's training system is then the moments of all rows
minus its own. One eigendecomposition of a training system, ``A = U diag(s) U^T``,
gives its solution for every penalty ``alpha`` at the cost of a product by ``U``
(:class:`RidgePath`), the squared errors on a test fold follow from the fold's
moments (:func:`squared_error_sums`), and exact leave-one-out residuals from one
more pass over the rows, ``e_i / (1 - h_i)`` with the hat matrix's diagonal
``h_i = w_i sum_k (u_k . (z_i - mean))^2 / (s_k + alpha) + w_i / sum(w)``.

References
----------
Golub, G. H., Heath, M. and Wahba, G. Generalized cross-validation as a method
for choosing a good ridge parameter. Technometrics 21(2), 1979.

Rifkin, R. M. and Lippert, R. A. Notes on regularized least squares.
MIT-CSAIL-TR-2007-025, 2007.
"""

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .normal_equations import NormalEquations, overflow_error


class RidgeMoments(NormalEquations):
    """:class:`NormalEquations` that also sums the weighted squares of the targets.

    The targets are accumulated minus ``target_offset`` (the same for every
    accumulator that is merged or subtracted), so that a squared error computed
    from the sums keeps its digits when the targets lie far from zero.

    Parameters
    ----------
    n_features, n_targets : int
    target_offset : ndarray of shape (n_targets,), optional
        Subtracted from every target (zeros by default).

    Attributes
    ----------
    target_square_sum : ndarray of shape (n_targets,)
        ``sum_i w_i (t_i - target_offset)^2``, per target.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.ridge_path import RidgeMoments
    >>> moments = RidgeMoments(n_features=1, n_targets=1, target_offset=np.array([10.0]))
    >>> moments.add(np.ones((3, 1)), np.array([[9.0], [10.0], [12.0]]), sample_weight=np.array([1.0, 1.0, 2.0]))
    >>> moments.target_sum, moments.target_square_sum
    (array([3.]), array([9.]))
    """

    def __init__(self, n_features, n_targets, target_offset=None):
        super().__init__(n_features, n_targets)
        offset = np.zeros(n_targets) if target_offset is None else target_offset
        self.target_offset = np.asarray(offset, dtype=np.float64).reshape(n_targets)
        self.target_square_sum = np.zeros(n_targets)

    # the squares of huge targets overflow as the Gram matrix does: reported by the solve
    @np.errstate(over="ignore", invalid="ignore")
    def add(self, Z, T=None, *, labels=None, code=None, sample_weight=None):
        """Accumulate a block of rows, as :meth:`NormalEquations.add`."""
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(-1)
        if T is not None:
            T = np.asarray(T, dtype=np.float64).reshape(Z.shape[0], -1) - self.target_offset
            squares = (T * T).sum(axis=0) if w is None else w @ (T * T)
        else:
            code = np.asarray(code, dtype=np.float64) - self.target_offset
            squares = np.bincount(labels, weights=w, minlength=code.shape[0]) @ (code * code)
        super().add(Z, T, labels=labels, code=code, sample_weight=sample_weight)
        self.target_square_sum += squares

    def merge(self, other):
        """Add the rows another accumulator of the same offset has seen."""
        if not isinstance(other, RidgeMoments) or not np.array_equal(other.target_offset, self.target_offset):
            raise ValueError("only RidgeMoments of the same target_offset merge: their squared targets "
                             "are sums about that offset")
        super().merge(other)
        self.target_square_sum += other.target_square_sum
        return self


class FoldMoments:
    """The moments of every test fold of a cross-validation (and of all rows), in one pass.

    Each row is added to the accumulator of each test fold that holds it. When
    the test folds partition the rows (K-fold), the moments of all rows are their
    sum and are not accumulated apart; otherwise (no folds: leave-one-out, or
    test folds that overlap or miss rows) they are.

    Parameters
    ----------
    n_features, n_targets : int
    n_splits : int
        Test folds (0 for none).
    partition : bool
        Whether every row lies in exactly one test fold.
    target_offset : ndarray of shape (n_targets,), optional

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.ridge_path import FoldMoments
    >>> folds = FoldMoments(n_features=2, n_targets=1, n_splits=2, partition=True)
    >>> Z, T = np.arange(8.0).reshape(4, 2), np.ones((4, 1))
    >>> folds.add(Z, np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=bool), T=T)
    >>> [int(test.weight_sum) for test in folds.tests], int(folds.all_rows().weight_sum)
    ([2, 2], 4)
    """

    def __init__(self, n_features, n_targets, n_splits=0, partition=False, target_offset=None):
        self.tests = [RidgeMoments(n_features, n_targets, target_offset) for _ in range(n_splits)]
        self.total = None if partition and n_splits else RidgeMoments(n_features, n_targets, target_offset)

    def add(self, Z, membership=None, *, sample_weight=None, T=None, labels=None, code=None):
        """Add a block of rows; ``membership[i, k]`` says whether row ``i`` is in test fold ``k``."""
        if self.total is not None:
            self.total.add(Z, T, labels=labels, code=code, sample_weight=sample_weight)
        for k, test in enumerate(self.tests):
            rows = np.flatnonzero(membership[:, k])
            if len(rows):
                test.add(Z[rows], None if T is None else T[rows], labels=None if labels is None else labels[rows],
                         code=code, sample_weight=None if sample_weight is None else sample_weight[rows])

    def merge(self, other):
        """Add the rows of another :class:`FoldMoments` of the same folds (the reduce step)."""
        if len(other.tests) != len(self.tests) or (other.total is None) != (self.total is None):
            raise ValueError("cannot merge the moments of different cross-validations")
        for mine, theirs in zip(self.tests, other.tests):
            mine.merge(theirs)
        if self.total is not None:
            self.total.merge(other.total)
        return self

    def all_rows(self):
        """The moments of all rows (the sum of the test folds' when they partition the rows)."""
        if self.total is None:
            first = self.tests[0]
            self.total = RidgeMoments(first.gram.shape[0], first.cross.shape[1], first.target_offset)
            for test in self.tests:
                self.total.merge(test)
        return self.total


def centred_system(total, test=None, fit_intercept=True):
    """The ridge system of ``total``'s rows without ``test``'s, centred for an intercept.

    Parameters
    ----------
    total : RidgeMoments
    test : RidgeMoments, optional
        Rows to leave out (a test fold).
    fit_intercept : bool, default=True

    Returns
    -------
    gram : ndarray of shape (n_features, n_features)
        ``sum w (z - mean_z)(z - mean_z)^T`` (uncentred without intercept), a new array.
    cross : ndarray of shape (n_features, n_targets)
        ``sum w (z - mean_z)(t - mean_t)^T``, targets minus ``total.target_offset``.
    mean_z, mean_t : ndarray
        Weighted means (zeros without intercept); ``mean_t`` about the offset.
    weight : float
        The rows' total weight.
    """
    if not (np.isfinite(total.gram).all() and np.isfinite(total.cross).all()
            and np.isfinite(total.target_square_sum).all()):
        raise overflow_error(total.largest_feature, total.largest_weight)
    gram, cross = total.gram.copy(), total.cross.copy()
    feature_sum, target_sum, weight = total.feature_sum.copy(), total.target_sum.copy(), total.weight_sum
    if test is not None:
        gram -= test.gram
        cross -= test.cross
        feature_sum -= test.feature_sum
        target_sum -= test.target_sum
        weight -= test.weight_sum
    if not weight > 0:
        raise ValueError("a training fold has no rows of positive weight: every split needs training rows")
    if not fit_intercept:
        return gram, cross, np.zeros_like(feature_sum), np.zeros_like(target_sum), weight
    mean_z, mean_t = feature_sum / weight, target_sum / weight
    # a rank-one update in place (gram is symmetric: its transpose is the Fortran array BLAS updates)
    scipy.linalg.blas.dger(-weight, mean_z, mean_z, a=gram.T, overwrite_a=True)
    cross -= weight * np.outer(mean_z, mean_t)
    return gram, cross, mean_z, mean_t, weight


class RidgePath:
    """Every penalty's ridge solution of one centred system, from one eigendecomposition.

    With ``gram = U diag(s) U^T``, the solution for ``alpha`` is
    ``coef = U diag(1 / (s + alpha)) U^T cross`` and the intercept
    ``mean_t - mean_z . coef``: each further penalty costs a product by ``U``.

    Parameters
    ----------
    gram, cross, mean_z, mean_t, weight
        As :func:`centred_system` returns them; ``gram`` is overwritten.
    alphas : ndarray of shape (n_alphas,)
        Positive penalties.
    fit_intercept : bool, default=True
    target_offset : ndarray of shape (n_targets,), optional
        The offset of the moments' targets, added back to the intercepts.

    Attributes
    ----------
    eigenvalues : ndarray of shape (n_features,)
        ``s``, clipped at 0 (the system is positive semi-definite).
    eigenvectors : ndarray of shape (n_features, n_features)
        ``U``.
    inverse : ndarray of shape (n_features, n_alphas)
        ``1 / (s_k + alpha)``.
    projected : ndarray of shape (n_features, n_targets)
        ``U^T cross``.
    spectral_coef : ndarray of shape (n_features, n_alphas, n_targets)
        The solutions in the eigenbasis, ``U^T coef``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from kernelmaps._solvers.ridge_path import FoldMoments, RidgePath, centred_system
    >>> rng = np.random.default_rng(0)
    >>> Z, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    >>> moments = FoldMoments(3, 1)
    >>> moments.add(Z, T=y[:, None])
    >>> path = RidgePath(*centred_system(moments.all_rows()), alphas=np.array([0.1, 10.0]))
    >>> coef, intercept = path.solutions()
    >>> bool(np.allclose(coef[:, 1, 0], Ridge(alpha=10.0).fit(Z, y).coef_))
    True
    """

    def __init__(self, gram, cross, mean_z, mean_t, weight, alphas, fit_intercept=True, target_offset=None):
        eigenvalues, self.eigenvectors = scipy.linalg.eigh(gram.T, overwrite_a=True, check_finite=False)
        self.eigenvalues = np.maximum(eigenvalues, 0.0)
        self.alphas = np.asarray(alphas, dtype=np.float64)
        self.inverse = 1.0 / (self.eigenvalues[:, None] + self.alphas[None, :])
        self.projected = self.eigenvectors.T @ cross
        self.spectral_coef = self.projected[:, None, :] * self.inverse[:, :, None]
        self.mean_z, self.weight, self.fit_intercept = mean_z, weight, fit_intercept
        offset = np.zeros(cross.shape[1]) if target_offset is None else target_offset
        self.mean_t = mean_t + offset
        self.mean_projection = mean_z @ self.eigenvectors

    def solutions(self):
        """``(coef, intercept)`` of every penalty: shapes (n_features, n_alphas, n_targets), (n_alphas, n_targets)."""
        D, A, T = self.spectral_coef.shape
        coef = (self.eigenvectors @ self.spectral_coef.reshape(D, A * T)).reshape(D, A, T)
        return coef, self.mean_t - np.einsum("d,dat->at", self.mean_z, coef)

    def solution(self, index):
        """``(coef, intercept)`` of the penalty ``alphas[index]``: shapes (n_features, n_targets), (n_targets,)."""
        coef = self.eigenvectors @ self.spectral_coef[:, index, :]
        return coef, self.mean_t - self.mean_z @ coef

    # a row the fit interpolates exactly (h_i = 1) has no finite leave-one-out residual
    @np.errstate(divide="ignore", invalid="ignore")
    def leave_one_out(self, Z, T, weights=None):
        """Leave-one-out residuals ``t_i - f_{-i}(z_i)`` of the rows ``Z`` (of the system) for every penalty.

        Parameters
        ----------
        Z : ndarray or sparse matrix of shape (n_rows, n_features)
        T : ndarray of shape (n_rows, n_targets)
            The rows' targets (not offset).
        weights : ndarray of shape (n_rows,), optional
            The rows' weights in the system.

        Returns
        -------
        ndarray of shape (n_rows, n_alphas, n_targets)
        """
        P = Z @ self.eigenvectors
        P = np.asarray(P.toarray() if sp.issparse(P) else P)
        if self.fit_intercept:
            P -= self.mean_projection
        D, A, n_targets = self.spectral_coef.shape
        fitted = (P @ self.spectral_coef.reshape(D, A * n_targets)).reshape(-1, A, n_targets)
        P *= P
        leverage = P @ self.inverse
        if weights is not None:
            leverage *= weights[:, None]
        if self.fit_intercept:
            leverage += (1.0 if weights is None else weights[:, None]) / self.weight
        residuals = (T - self.mean_t)[:, None, :] - fitted
        return residuals / (1.0 - leverage)[:, :, None]


def squared_error_sums(test, coef, intercept):
    """``sum_i w_i (t_i - z_i . coef - intercept)^2`` over a test fold's rows, from its moments.

    Parameters
    ----------
    test : RidgeMoments
    coef : ndarray of shape (n_features, n_alphas, n_targets)
    intercept : ndarray of shape (n_alphas, n_targets)

    Returns
    -------
    ndarray of shape (n_alphas, n_targets)
        Clipped at 0 against rounding.
    """
    D, A, T = coef.shape
    columns = coef.reshape(D, A * T)
    target = np.tile(np.arange(T), A)
    # the fold's targets are summed about the offset: so is the intercept
    b = (intercept - test.target_offset).reshape(A * T)
    sse = (test.target_square_sum[target] - 2.0 * np.einsum("dc,dc->c", columns, test.cross[:, target])
           - 2.0 * b * test.target_sum[target] + np.einsum("dc,dc->c", columns, test.gram @ columns)
           + 2.0 * b * (test.feature_sum @ columns) + b * b * test.weight_sum)
    return np.maximum(sse, 0.0).reshape(A, T)


def total_sum_of_squares(moments):
    """``sum_i w_i (t_i - mean_t)^2`` per target (the denominator of R²), from the moments."""
    return np.maximum(moments.target_square_sum - moments.target_sum**2 / moments.weight_sum, 0.0)
