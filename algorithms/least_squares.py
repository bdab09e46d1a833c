"""Regularized least squares on features: normal equations accumulated in one pass over
row blocks, or conjugate gradient for very wide sparse features."""

import warnings
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ._base import RegisteredEstimator, RowBlockMap, classes_from_scores, one_vs_rest_code
from ._parallel import block_rows
from ._solvers.normal_equations import NormalEquations
from ._solvers.sparse_ridge import SOLVERS, ridge_cg, select_solver
from ._sparse_map import SparseFeatureMap
from ._validation import (check_choice, check_input, check_integer, check_positive, clear_fitted_state,
                          dask_support, is_dask_array)

__all__ = ["LeastSquaresClassifier", "LeastSquaresRegressor"]


#: Rows of features one mapped block holds while it is accumulated (``fit`` with a
#: ``feature_map``): about this many bytes of float64 features per block.
MAPPED_BLOCK_BYTES = 32 * 2**20

def _mapped_blocks(X, feature_map):
    """``(rows, Z)`` for consecutive row blocks of inputs ``X`` mapped by ``feature_map``.

    Only one block of features exists at a time: the inputs plus a map never form
    the ``N x D`` feature matrix. Blocks are taller than the transform's own, so
    that the ``Z^T Z`` update of each is one efficient rank-k product.
    """
    width = feature_map.n_components_
    step = max(256, MAPPED_BLOCK_BYTES // (8 * width))
    for start in range(0, X.shape[0], step):
        rows = slice(start, min(X.shape[0], start + step))
        yield rows, feature_map.transform(X[rows])


def _check_feature_map(feature_map):
    """A fitted kernelmaps feature map (dense or sparse output), or an error saying what is wrong."""
    if not isinstance(feature_map, RowBlockMap):
        raise TypeError(f"feature_map must be a kernelmaps feature map, got {type(feature_map).__name__}")
    check_is_fitted(feature_map, msg=(
        f"feature_map {type(feature_map).__name__} is not fitted: fit it first (on a Dask array, "
        "fit reads a bounded sample of the rows)"))
    return feature_map


class _LeastSquaresBase(RegisteredEstimator, BaseEstimator):
    """Ridge least squares: one-pass normal equations (accumulate, merge, solve) or CG.

    Subclasses define how a block's targets enter either solver
    (``_target_arguments``), what the first call learns (``_begin``) and the
    number of targets (``_n_targets``).
    """

    kind = "learner"
    paper = "Rahimi & Recht, NIPS 2007 (Fourier + LS)"
    kernel_family = "linear"
    test_params = {"alpha": 1.0}

    #: Keyword arguments of the targets' validation (``check_input``).
    _y_validation: ClassVar[dict] = {}

    def __init__(self, alpha=1.0, *, fit_intercept=True, solver="auto", tol=1e-4, max_iter=1000):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter

    def _solver_params(self):
        return (check_choice(self.solver, "solver", SOLVERS), check_positive(self.tol, "tol"),
                check_integer(self.max_iter, "max_iter", 1))

    def _check_one_pass(self, what, fitted=()):
        """Refuse CG where ``fitted`` learners' accumulated normal equations are continued
        (``partial_fit``, ``merge``, Dask input add them up; CG keeps no such sum)."""
        if self._solver_params()[0] == "cg":
            raise ValueError(f"{what} works only with the normal equations, not solver='cg': "
                             "use solver='normal' or 'auto'")
        if any(getattr(learner, "solver_", "normal") == "cg" for learner in fitted):
            raise ValueError(f"{what} continues the normal equations, but a fit by conjugate gradient "
                             "(solver_='cg') keeps none: fit with solver='normal'")

    def _start_equations(self):
        # Dask's fit_learner calls _begin without a solver_: it always accumulates
        if getattr(self, "solver_", "normal") == "normal":
            self.normal_equations_ = self._new_equations()

    def _add_block(self, equations, Z, targets):
        equations.add(Z, **self._target_arguments(targets))

    def _add_rows(self, Z, y, feature_map=None):
        targets = self._block_targets(y)
        if self.solver_ == "cg":
            return self._solve_iteratively(Z if feature_map is None else feature_map.transform(Z), targets)
        self._accumulate(self.normal_equations_, Z, targets, feature_map)
        return self._solve()

    def _accumulate(self, equations, Z, targets, feature_map=None):
        """Add the rows ``Z`` (features, or inputs of ``feature_map``) block by block."""
        if feature_map is not None:
            for rows, Z_rows in _mapped_blocks(Z, feature_map):
                self._add_block(equations, Z_rows, targets[rows])
            return equations
        # a block's float64 copy and its Z^T Z update: the library's one block rule;
        # NormalEquations.add blocks sparse rows itself, by the size of their product
        step = max(1, Z.shape[0]) if sp.issparse(Z) else block_rows(8 * Z.shape[1])
        for start in range(0, Z.shape[0], step):
            rows = slice(start, start + step)
            self._add_block(equations, Z[rows], targets[rows])
        return equations

    def _new_equations(self):
        return NormalEquations(self.n_features_in_, self._n_targets())

    def _fit(self, Z, y, feature_map):
        if is_dask_array(Z) or is_dask_array(y):
            self._check_one_pass("Dask input")
            return dask_support().fit_learner(self, Z, y, feature_map=feature_map)
        clear_fitted_state(self)
        Z, y = self._validate_rows(Z, y, True, feature_map)
        sparse = sp.issparse(Z) if feature_map is None else isinstance(feature_map, SparseFeatureMap)
        self.solver_ = select_solver(self._solver_params()[0], self.n_features_in_, sparse)
        self._begin(np.unique(y) if is_classifier(self) else y)
        return self._add_rows(Z, y, feature_map)

    def _partial_fit(self, Z, y, first, feature_map, classes=None):
        self._check_one_pass("partial_fit", () if first else (self,))
        if is_dask_array(Z) or is_dask_array(y):
            extra = {"classes": classes} if is_classifier(self) else {}
            return dask_support().fit_learner(self, Z, y, feature_map=feature_map, partial=True, **extra)
        Z, y = self._validate_rows(Z, y, first, feature_map)
        if first:
            self.solver_ = "normal"
            self._begin(y if classes is None else classes)
        return self._add_rows(Z, y, feature_map)

    def _solve(self):
        alpha = check_positive(self.alpha, "alpha", allow_zero=True)
        self.coef_, self.intercept_ = self.normal_equations_.solve(alpha, self.fit_intercept)
        # one direct solve: scikit-learn asks n_iter_ >= 1 of an estimator with max_iter
        self.solver_, self.n_iter_ = "normal", 1
        return self

    def _solve_iteratively(self, Z, targets):
        _, tol, max_iter = self._solver_params()
        alpha = check_positive(self.alpha, "alpha", allow_zero=True)
        result = ridge_cg(Z, alpha, fit_intercept=self.fit_intercept, tol=tol, max_iter=max_iter,
                          **self._target_arguments(targets))
        if not result.converged:
            warnings.warn(f"{type(self).__name__} stopped at max_iter={max_iter}: the relative residual of "
                          f"conjugate gradient reached {result.residual:.3g} against tol={tol}; the "
                          "coefficients are its last iterate: raise max_iter or alpha, or tol",
                          ConvergenceWarning, stacklevel=5)
        self.coef_, self.intercept_, self.n_iter_ = result.coef, result.intercept, result.n_iter
        return self

    def _validate_rows(self, Z, y, reset, feature_map):
        """Validated ``(Z, y)``; with a map, ``Z`` are its inputs and the learner's
        ``n_features_in_`` is the map's width."""
        kwargs = self._y_validation
        if feature_map is None:
            return check_input(self, Z, y, reset=reset, accept_sparse=True, **kwargs)
        feature_map = _check_feature_map(feature_map)
        X, y = check_input(feature_map, Z, y, reset=False, accept_sparse=True, **kwargs)
        if reset:
            self.n_features_in_ = feature_map.n_components_
        elif self.n_features_in_ != feature_map.n_components_:
            raise ValueError(f"feature_map gives {feature_map.n_components_} features, but "
                             f"{type(self).__name__} was fitted on {self.n_features_in_}")
        return X, y

    def merge(self, other):
        """Add the rows another partial fit has seen, then re-solve (the map-reduce step).

        Two learners fitted (``fit`` or ``partial_fit``) on disjoint rows, in other
        processes or on other machines, merge into the learner of all their rows:
        the coefficients equal those of one fit on the union. ``other`` is unchanged.

        Parameters
        ----------
        other : estimator of the same class
            Fitted with the same classes (and, for ECOC, the same code) on the same
            number of features.

        Returns
        -------
        self
        """
        check_is_fitted(self)
        check_is_fitted(other)
        if type(other) is not type(self):
            raise TypeError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        self._check_one_pass("merge", (self, other))
        for attribute in ("classes_", "code_"):
            mine, theirs = getattr(self, attribute, None), getattr(other, attribute, None)
            if (mine is None) != (theirs is None) or (
                    mine is not None and (mine.shape != theirs.shape or np.any(mine != theirs))):
                raise ValueError(f"cannot merge learners with different {attribute}: give both the same "
                                 "classes (and random_state, for the code) on their first partial_fit")
        self.normal_equations_.merge(other.normal_equations_)
        return self._solve()

    def _scores(self, Z):
        check_is_fitted(self)
        Z = check_input(self, Z, reset=False, accept_sparse=True)
        scores = Z @ self.coef_.astype(Z.dtype, copy=False) + self.intercept_.astype(Z.dtype, copy=False)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LeastSquaresClassifier(ClassifierMixin, _LeastSquaresBase):
    """One-vs-rest ridge classification on features ("Fourier + LS").

    Each class gets a least-squares regressor onto ``+1`` (the class) / ``-1`` (the
    rest); a binary problem uses one. All share the Hessian ``Z^T Z + alpha I``,
    accumulated together with ``Z^T Y`` in one pass over row blocks, so the fit
    runs out of core through :meth:`partial_fit`. Prediction is the arg-max score.
    Sparse features are never densified; very wide ones (random binning's) go to
    conjugate gradient (:func:`kernelmaps._solvers.sparse_ridge.ridge_cg`).

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty (>= 0).
    fit_intercept : bool, default=True
        Unpenalized intercept per class.
    solver : {'auto', 'normal', 'cg'}, default='auto'
        'normal': the normal equations (the only solver of ``partial_fit``,
        ``merge`` and Dask input). 'cg': Jacobi-preconditioned conjugate gradient
        on implicitly centred features. 'auto' (:func:`select_solver`): 'cg' for
        sparse features wider than 4096 columns or when two ``D x D`` float64
        matrices would not fit in memory, 'normal' otherwise.
    tol : float, default=1e-4
        'cg' stops at this relative residual of the preconditioned system;
        classifiers' predictions rarely change below it, and each tenfold
        smaller ``tol`` costs more iterations.
    max_iter : int, default=1000
        'cg' iterations at most; a ``ConvergenceWarning`` if ``tol`` is not met.

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)
    solver_ : {'normal', 'cg'}
    n_iter_ : int
        Conjugate gradient iterations (1 for the one solve of the normal equations).

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (Table 1, "Fourier + LS", eq. 4).

    Hestenes, M. R. and Stiefel, E. Methods of conjugate gradients for solving
    linear systems. J. Res. Natl. Bur. Stand. 49(6), 1952.

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

    def _n_targets(self):
        return self._code().shape[1]

    def fit(self, Z, y, *, feature_map=None):
        """Fit on features ``Z`` and labels ``y`` in one pass over row blocks.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
            The features; with ``feature_map``, its inputs. A row-chunked Dask
            array is accumulated chunk by chunk on the workers and solved here
            (:func:`kernelmaps.dask.fit_learner`).
        y : array-like of shape (n_samples,), or a Dask array
        feature_map : fitted kernelmaps feature map, optional
            Maps ``Z`` block by block while accumulating, so that the features
            never exist in full (then ``predict`` takes ``feature_map.transform(X)``).
            Conjugate gradient maps all rows once (sparse output is compact).

        Returns
        -------
        self
        """
        return self._fit(Z, y, feature_map)

    def partial_fit(self, Z, y, classes=None, *, feature_map=None):
        """Accumulate a block of rows and re-solve.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
        y : array-like of shape (n_samples,), or a Dask array
        classes : array-like, required on the first call
        feature_map : fitted kernelmaps feature map, optional
            As in :meth:`fit`.
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            raise ValueError("classes must be given on the first call to partial_fit")
        return self._partial_fit(Z, y, first, feature_map, classes=classes)

    def _begin(self, classes):
        """First call: check the parameters, learn the classes, start the equations."""
        check_positive(self.alpha, "alpha", allow_zero=True)
        check_classification_targets(classes)
        self.classes_ = np.unique(classes)
        if len(self.classes_) < 2:
            raise ValueError(f"need at least 2 classes, got {len(self.classes_)} class")
        self._start_equations()

    def _labels(self, y):
        """Indices of ``y`` in ``classes_``; an error for labels outside them."""
        check_classification_targets(y)
        labels = np.searchsorted(self.classes_, y)
        known = self.classes_[np.minimum(labels, len(self.classes_) - 1)]
        if np.any(labels >= len(self.classes_)) or np.any(known != y):
            unknown = np.setdiff1d(np.unique(y), self.classes_)
            raise ValueError(f"y has labels {unknown[:10].tolist()} outside classes {self.classes_.tolist()}")
        return labels

    def _target_arguments(self, labels):
        return {"labels": labels, "code": self._code()}

    def _block_targets(self, y):
        return self._labels(y)

    def decision_function(self, Z):
        """``Z @ coef_ + intercept_``: one score per class (one column if binary).

        A Dask array gives a lazy Dask array.
        """
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "decision_function")
        return self._scores(Z)

    def predict(self, Z):
        """Class with the largest score (lazily for a Dask array)."""
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "predict")
        scores = self.decision_function(Z)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)


class LeastSquaresRegressor(RegressorMixin, _LeastSquaresBase):
    """Ridge regression on features, accumulated in one pass over row blocks.

    Sparse features are never densified; very wide ones go to conjugate gradient.

    Parameters
    ----------
    alpha : float, default=1.0
    fit_intercept : bool, default=True
    solver : {'auto', 'normal', 'cg'}, default='auto'
        As in :class:`LeastSquaresClassifier`; 'auto' (:func:`select_solver`) is
        'cg' for sparse features wider than 4096 columns or when two ``D x D``
        float64 matrices would not fit in memory, 'normal' otherwise.
    tol, max_iter : float, default=1e-4, and int, default=1000
        Conjugate gradient's stopping rule, as in :class:`LeastSquaresClassifier`.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_targets)
    intercept_ : ndarray of shape (n_targets,)
    solver_ : {'normal', 'cg'}
    n_iter_ : int

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (eq. 4).

    Hestenes, M. R. and Stiefel, E. Methods of conjugate gradients for solving
    linear systems. J. Res. Natl. Bur. Stand. 49(6), 1952.

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
    _y_validation = {"multi_output": True, "y_numeric": True}

    def _n_targets(self):
        return self.n_targets_

    def fit(self, Z, y, *, feature_map=None):
        """Fit on features ``Z`` and targets ``y`` (1-D or 2-D).

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
            The features; with ``feature_map``, its inputs (see
            :meth:`LeastSquaresClassifier.fit`).
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a Dask array
        feature_map : fitted kernelmaps feature map, optional

        Returns
        -------
        self
        """
        return self._fit(Z, y, feature_map)

    def partial_fit(self, Z, y, *, feature_map=None):
        """Accumulate a block of rows and re-solve.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a Dask array
        feature_map : fitted kernelmaps feature map, optional
        """
        return self._partial_fit(Z, y, not hasattr(self, "n_targets_"), feature_map)

    def _begin(self, y):
        check_positive(self.alpha, "alpha", allow_zero=True)
        self.n_targets_ = self._targets(y).shape[1]
        self._start_equations()

    @staticmethod
    def _targets(y):
        return np.asarray(y, dtype=np.float64).reshape(len(y), -1)

    def _target_arguments(self, T):
        return {"T": T}

    def _block_targets(self, y):
        T = self._targets(y)
        if T.shape[1] != self.n_targets_:
            raise ValueError(f"y has {T.shape[1]} targets, but the first call had {self.n_targets_}")
        return T

    def predict(self, Z):
        """Predicted targets (lazily for a Dask array)."""
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "predict")
        return self._scores(Z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
