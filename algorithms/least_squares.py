"""Regularized least squares on features, accumulated in one pass over row blocks."""

import numpy as np
import scipy.linalg
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ._base import RegisteredEstimator, check_positive, classes_from_scores, one_vs_rest_code
from ._parallel import block_rows
from ._validation import FeatureOverflowError, check_fits_in_memory, check_input, clear_fitted_state

__all__ = ["LeastSquaresClassifier", "LeastSquaresRegressor"]



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


class NormalEquations:
    """One-pass accumulator of ``Z^T Z``, ``Z^T T`` and the sums an intercept needs.

    ``add`` can be called on any number of row blocks (out of core); ``solve``
    returns the ridge solution with an unpenalized intercept,
    ``min ||Z w + b - T||^2 + alpha ||w||^2``, by centering the accumulated
    moments. Everything is accumulated in float64.

    Parameters
    ----------
    n_features : int
    n_targets : int

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.least_squares import NormalEquations
    >>> Z = np.random.default_rng(0).standard_normal((30, 2))
    >>> T = Z @ np.array([[1.0], [2.0]]) + 3.0
    >>> equations = NormalEquations(n_features=2, n_targets=1)
    >>> for rows in (slice(0, 10), slice(10, 30)):  # two blocks, one pass
    ...     equations.add(Z[rows], T[rows])
    >>> coef, intercept = equations.solve(alpha=0.0)
    >>> np.round(coef.ravel(), 3), np.round(intercept, 3)
    (array([1., 2.]), array([3.]))
    """

    def __init__(self, n_features, n_targets):
        # the Gram matrix, and its copy in the solve
        check_fits_in_memory(8 * (2 * n_features * n_features + 2 * n_features * n_targets),
                             f"n_features={n_features}", "the normal equations Z^T Z and Z^T T")
        self.largest_feature = 0.0
        self.gram = np.zeros((n_features, n_features))
        self.cross = np.zeros((n_features, n_targets))
        self.feature_sum = np.zeros(n_features)
        self.target_sum = np.zeros(n_targets)
        self.n_samples = 0

    def add(self, Z, T=None, *, labels=None, code=None):
        """Accumulate a block of rows.

        Give either targets ``T`` (n x n_targets), or integer ``labels`` with a
        ``code`` matrix (n_classes x n_targets) meaning ``T[i] = code[labels[i]]``;
        the latter never forms ``T``.
        """
        Z64 = np.asarray(Z, dtype=np.float64)
        if Z64.size:
            # only for the overflow message: max and -min need no |Z| copy
            self.largest_feature = max(self.largest_feature, float(Z64.max()), -float(Z64.min()))
        self.gram += Z64.T @ Z64
        self.feature_sum += Z64.sum(axis=0)
        self.n_samples += Z64.shape[0]
        if T is not None:
            T = np.asarray(T, dtype=np.float64).reshape(Z64.shape[0], -1)
            self.cross += Z64.T @ T
            self.target_sum += T.sum(axis=0)
        else:
            sums = np.zeros((code.shape[0], Z64.shape[1]))
            _class_sums(np.ascontiguousarray(Z64), np.ascontiguousarray(labels, dtype=np.int64), sums)
            counts = np.bincount(labels, minlength=code.shape[0]).astype(np.float64)
            self.cross += sums.T @ code
            self.target_sum += counts @ code

    def solve(self, alpha, fit_intercept=True):
        """Return ``(coef, intercept)``: coef of shape (n_features, n_targets)."""
        n = self.n_samples
        if n == 0:
            raise ValueError("no samples were accumulated")
        if not (np.isfinite(self.gram).all() and np.isfinite(self.cross).all()):
            raise FeatureOverflowError(
                "Z^T Z (or Z^T y) overflowed float64: features of magnitude up to "
                f"{self.largest_feature:.3g} square past the largest float. Rescale the features "
                "(or the targets)."
            )
        if fit_intercept:
            mean_z = self.feature_sum / n
            mean_t = self.target_sum / n
            A = self.gram - n * np.outer(mean_z, mean_z)
            B = self.cross - n * np.outer(mean_z, mean_t)
        else:
            A, B = self.gram.copy(), self.cross
        A[np.diag_indices_from(A)] += alpha
        try:
            coef = scipy.linalg.solve(A, B, assume_a="pos")
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
            # alpha = 0 with rank-deficient features: minimum-norm solution
            coef = scipy.linalg.lstsq(A, B)[0]
        intercept = mean_t - mean_z @ coef if fit_intercept else np.zeros(B.shape[1])
        return coef, intercept


class _LeastSquaresBase(RegisteredEstimator, BaseEstimator):
    _fitted_private = ("_equations",)

    kind = "learner"
    paper = "Rahimi & Recht, NIPS 2007 (Fourier + LS)"
    kernel_family = "linear"
    test_params = {"alpha": 1.0}

    def __init__(self, alpha=1.0, *, fit_intercept=True):
        self.alpha = alpha
        self.fit_intercept = fit_intercept

    def _accumulate(self, Z, add):
        # a block's float64 copy and its Z^T Z update: the library's one block rule
        step = block_rows(8 * Z.shape[1], Z.shape[1])
        for start in range(0, Z.shape[0], step):
            add(slice(start, start + step))

    def _scores(self, Z):
        check_is_fitted(self)
        Z = check_input(self, Z, reset=False)
        scores = Z @ self.coef_.astype(Z.dtype, copy=False) + self.intercept_.astype(Z.dtype, copy=False)
        return scores.ravel() if scores.shape[1] == 1 else scores


class LeastSquaresClassifier(ClassifierMixin, _LeastSquaresBase):
    """One-vs-rest ridge classification on features ("Fourier + LS").

    Each class gets a least-squares regressor onto ``+1`` (the class) / ``-1`` (the
    rest); a binary problem uses one. All share the Hessian ``Z^T Z + alpha I``,
    accumulated together with ``Z^T Y`` in one pass over row blocks, so the fit
    runs out of core through :meth:`partial_fit`. Prediction is the arg-max score.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty (>= 0).
    fit_intercept : bool, default=True
        Unpenalized intercept per class.

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (Table 1, "Fourier + LS", eq. 4).

    Examples
    --------
    Gaussian kernel features of the digits, then least squares ("Fourier + LS"),
    scored on the rows it was not trained on:

    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import Fastfood, LeastSquaresClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> Z = Fastfood(n_components=512, random_state=0).fit_transform(X / 16)
    >>> clf = LeastSquaresClassifier(alpha=0.1).fit(Z[:1000], y[:1000])
    >>> print(round(clf.score(Z[1000:], y[1000:]), 2))
    0.95
    """

    name = "least_squares"

    def _code(self):
        return one_vs_rest_code(len(self.classes_))

    def fit(self, Z, y):
        """Fit on features ``Z`` and labels ``y`` in one pass over row blocks."""
        clear_fitted_state(self)
        Z, y = check_input(self, Z, y, reset=True)
        return self._accumulate_and_solve(Z, y, np.unique(y), first=True)

    def partial_fit(self, Z, y, classes=None):
        """Accumulate a block of rows and re-solve.

        Parameters
        ----------
        Z : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, required on the first call
        """
        first = not hasattr(self, "classes_")
        Z, y = check_input(self, Z, y, reset=first)
        return self._accumulate_and_solve(Z, y, classes, first)

    def _accumulate_and_solve(self, Z, y, classes, first):
        check_classification_targets(y)
        alpha = check_positive(self.alpha, "alpha", allow_zero=True)
        if first:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit")
            self.classes_ = np.unique(classes)
            if len(self.classes_) < 2:
                raise ValueError(f"need at least 2 classes, got {len(self.classes_)} class")
            self._equations = NormalEquations(Z.shape[1], self._code().shape[1])
        labels = np.searchsorted(self.classes_, y)
        known = self.classes_[np.minimum(labels, len(self.classes_) - 1)]
        if np.any(labels >= len(self.classes_)) or np.any(known != y):
            raise ValueError(f"y has labels outside classes {self.classes_.tolist()}")
        code = self._code()
        self._accumulate(Z, lambda rows: self._equations.add(Z[rows], labels=labels[rows], code=code))
        self.coef_, self.intercept_ = self._equations.solve(alpha, self.fit_intercept)
        return self

    def decision_function(self, Z):
        """``Z @ coef_ + intercept_``: one score per class (one column if binary)."""
        return self._scores(Z)

    def predict(self, Z):
        """Class with the largest score."""
        scores = self.decision_function(Z)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)


class LeastSquaresRegressor(RegressorMixin, _LeastSquaresBase):
    """Ridge regression on features, accumulated in one pass over row blocks.

    Parameters
    ----------
    alpha : float, default=1.0
    fit_intercept : bool, default=True

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (eq. 4).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import LeastSquaresRegressor
    >>> Z = np.random.default_rng(0).standard_normal((30, 2))
    >>> y = Z @ np.array([1.0, 2.0]) + 3.0
    >>> reg = LeastSquaresRegressor(alpha=0.0).fit(Z, y)
    >>> np.round(reg.coef_.ravel(), 3), np.round(reg.intercept_, 3)
    (array([1., 2.]), array([3.]))
    """

    name = "least_squares_regressor"

    def fit(self, Z, y):
        """Fit on features ``Z`` and targets ``y`` (1-D or 2-D)."""
        clear_fitted_state(self)
        Z, y = check_input(self, Z, y, reset=True,
                             multi_output=True, y_numeric=True)
        alpha = check_positive(self.alpha, "alpha", allow_zero=True)
        T = np.asarray(y, dtype=np.float64).reshape(Z.shape[0], -1)
        equations = NormalEquations(Z.shape[1], T.shape[1])
        self._accumulate(Z, lambda rows: equations.add(Z[rows], T[rows]))
        self.coef_, self.intercept_ = equations.solve(alpha, self.fit_intercept)
        return self

    def predict(self, Z):
        """Predicted targets."""
        return self._scores(Z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
