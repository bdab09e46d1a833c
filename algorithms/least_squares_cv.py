"""Least squares on features with the ridge penalty chosen by cross-validation: every
penalty of a grid from one pass over the rows and one eigendecomposition."""

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from ._core.base import classes_from_scores, encode_classes, one_vs_rest_code
from ._core.sample_weights import class_row_weights
from ._core.validation import is_dask_array
from ._machines.least_squares import class_indices
from ._machines.least_squares_cv import DEFAULT_ALPHAS, LeastSquaresCVBase

__all__ = ["LeastSquaresClassifierCV", "LeastSquaresRegressorCV"]

_SHARED_DOC = """
    How it works: one pass over the rows accumulates the weighted moments
    ``Z^T W Z``, ``Z^T W y``, ``y^T W y`` (and the sums an intercept needs) of
    every test fold; a fold's training system is all rows' moments minus its
    own. One eigendecomposition ``Z^T W Z = U diag(s) U^T`` of a (centred)
    training system gives its solution for every ``alpha`` of the grid.

    - ``cv=None``: exact leave-one-out, one more pass computing ``U^T z_i`` per
      row block: the residual of row ``i`` left out is ``e_i / (1 - h_i)``, with
      ``h_i = w_i sum_k (u_k . (z_i - mean))^2 / (s_k + alpha) + w_i / sum(w)``
      (the last term with an intercept): the hat matrix's diagonal, as
      scikit-learn's ``RidgeCV`` computes it.
    - ``cv=int``, a splitter or an iterable of splits: one eigendecomposition per
      fold. Scores of squared errors (R², ``'neg_mean_squared_error'``,
      ``'neg_root_mean_squared_error'``) follow from the fold's moments without
      another pass; accuracy and any other scorer take one more pass computing
      every fold's predictions for every ``alpha``. Each split's training rows
      must be exactly the rows outside its test rows.

    Scores are weighted by ``sample_weight`` (the rows' weights, not the class
    weights). ``coef_`` and ``intercept_`` are the fit of all rows at ``alpha_``.

    Memory: ``K + 3`` matrices of ``D x D`` float64 (``K`` test folds, 0 for
    leave-one-out; ``D`` the features' width), checked before the pass starts,
    plus every ``alpha``'s coefficients; with a scorer other than the squared
    errors or accuracy (or ``store_cv_results``), every row's predictions for
    every ``alpha``. Time: one pass over the rows (``O(N D^2)``), ``K``
    eigendecompositions and one Cholesky refit (leave-one-out: one
    eigendecomposition), ``O(D^3)`` each, and, for leave-one-out or a scorer
    of predictions, a second pass (``O(N D^2)``).
"""
_REFERENCES_DOC = """\
    Golub, G. H., Heath, M. and Wahba, G. Generalized cross-validation as a
    method for choosing a good ridge parameter. Technometrics 21(2), 1979.

    Rifkin, R. M. and Lippert, R. A. Notes on regularized least squares.
    MIT-CSAIL-TR-2007-025, 2007.
"""


class LeastSquaresRegressorCV(RegressorMixin, LeastSquaresCVBase):
    """Ridge regression on features with ``alpha`` chosen by efficient cross-validation.

    :class:`LeastSquaresRegressor` (ridge on features, the intercept centring at
    the weighted means, as ``sklearn.linear_model.Ridge``) for every penalty of
    ``alphas`` at about the cost of one fit; ``sklearn.linear_model.RidgeCV``'s
    leave-one-out on materialized features gives the same ``alpha_`` and
    coefficients, and K-fold the scores of ``GridSearchCV`` over ``alpha``.
    {shared}
    Parameters
    ----------
    alphas : array-like of shape (n_alphas,), default=(1e-6, 1e-5, ..., 1e6)
        Positive finite penalties, on the scale of the summed squared errors
        (``Ridge``'s ``alpha``). A good ``alpha`` grows with the rows (``N``
        times the per-row ridge of kernel ridge, about 1e-6 to 1e-1 for smooth
        to noisy problems): the default's 13 decades cover that from a few rows
        to millions, and each further penalty costs only ``O(D^2)``.
    cv : None, int, cross-validation generator or iterable, default=None
        None: efficient exact leave-one-out. An int ``k`` (``2 <= k <= N``):
        ``KFold(k)``; a splitter or an iterable of ``(train, test)`` pairs as
        ``GridSearchCV`` takes them.
    scoring : str or callable, default=None
        None is R². A scikit-learn scorer name (``sklearn.metrics.get_scorer``)
        or a callable ``scorer(estimator, X, y)``. For leave-one-out, the score
        of all rows' leave-one-out predictions together (not a mean of per-row
        scores), as ``RidgeCV`` with a ``scoring`` does; ``RidgeCV``'s default
        (``scoring=None``, the mean squared leave-one-out error) selects the
        ``alpha`` of ``'neg_mean_squared_error'`` here, and of R² for one target.
        For K-fold, the mean over the folds of each fold's score.
        ``'evidence'``: no folds (``cv=None``), each ``alpha`` scored by the log
        marginal likelihood of all rows under Bayesian linear regression on the
        features (:class:`LeastSquaresRegressor`'s ``log_marginal_likelihood()``
        at that ``alpha``, the amplitude at its maximizer), every ``alpha``
        from the one eigendecomposition: no second pass, ``O(D)`` per ``alpha``.
    fit_intercept : bool, default=True
        Unpenalized intercept, the features and targets centred at their
        weighted means (of each training fold).
    store_cv_results : bool, default=False
        Keep every row's leave-one-out predictions in ``loo_predictions_``
        (``cv=None`` only).

    Attributes
    ----------
    alpha_ : float
        The penalty of the best mean score (the first of equals).
    best_score_ : float
        Its mean score.
    cv_results_ : dict of ndarray
        Read by ``pandas.DataFrame`` as ``GridSearchCV``'s: ``param_alpha``,
        ``params``, ``split{{k}}_test_score`` and ``std_test_score`` (K-fold),
        ``mean_test_score``, ``rank_test_score``.
    loo_predictions_ : ndarray of shape (n_samples, n_alphas) or (n_samples, n_targets, n_alphas)
        With ``store_cv_results=True``: the leave-one-out predictions, laid out as
        ``RidgeCV.cv_results_`` (NaN for rows of weight 0).
    coef_ : ndarray of shape (n_features, n_targets)
    intercept_ : ndarray of shape (n_targets,)
    n_targets_ : int
    n_features_in_ : int
        Width of the features (of ``feature_map``'s output, if given).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of a ``DataFrame`` ``Z``, if it had string names.

    References
    ----------
{references}
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import RidgeCV
    >>> from kernelmaps import LeastSquaresRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((100, 5))
    >>> y = Z @ np.arange(5.0) + rng.standard_normal(100)
    >>> reg = LeastSquaresRegressorCV(alphas=[0.1, 1.0, 10.0, 100.0]).fit(Z, y)
    >>> reg.alpha_ == RidgeCV(alphas=[0.1, 1.0, 10.0, 100.0]).fit(Z, y).alpha_
    True
    >>> sorted(reg.cv_results_)[:3]
    ['mean_test_score', 'param_alpha', 'params']
    """

    name = "least_squares_regressor_cv"
    _y_validation = {"multi_output": True, "y_numeric": True}

    def __init__(self, alphas=DEFAULT_ALPHAS, *, cv=None, scoring=None, fit_intercept=True,
                 store_cv_results=False):
        super().__init__(alphas, cv=cv, scoring=scoring, fit_intercept=fit_intercept,
                         store_cv_results=store_cv_results)

    def predict(self, Z):
        """Predicted targets at ``alpha_``: shape ``(n_samples,)`` for a 1-D ``y``."""
        scores = self._scores(Z)
        return scores.reshape(-1, 1) if scores.ndim == 1 and self._column_target else scores

    def _encode(self, y, dask_y=False):
        """The targets as a float64 matrix; learns their number and shape."""
        T = np.asarray(y.compute() if is_dask_array(y) else y, dtype=np.float64)
        self.n_targets_ = 1 if T.ndim == 1 else T.shape[1]
        self._column_target = T.ndim == 2
        return T.reshape(len(T), -1)

    def _block_targets(self, y):
        T = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        if T.shape[1] != self.n_targets_:
            raise ValueError(f"y has {T.shape[1]} targets in a chunk, but {self.n_targets_} in its first rows")
        return T

    def _n_outputs(self):
        return self.n_targets_

    def _moment_targets(self, T):
        return {"T": T}

    def _target_matrix(self, T):
        return T

    def _truth(self, T):
        return T if self._column_target else T[:, 0]

    def _row_weights(self, T, sample_weight, partial=False):
        return sample_weight

    def _target_offset(self, T, fit_intercept):
        # the moments are summed about the first targets' mean: a squared error
        # from the sums keeps its digits when the targets lie far from zero
        return T.mean(axis=0) if fit_intercept and len(T) else np.zeros(self.n_targets_)

    def _two_dimensional_output(self):
        return self._column_target

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class LeastSquaresClassifierCV(ClassifierMixin, LeastSquaresCVBase):
    """One-vs-rest ridge classification on features with ``alpha`` chosen by efficient cross-validation.

    :class:`LeastSquaresClassifier` (one least-squares regressor onto ``+1`` /
    ``-1`` per class, one in all for two classes, sharing one Hessian) for every
    penalty of ``alphas`` at about the cost of one fit. K-fold gives
    the scores of ``GridSearchCV`` over ``alpha`` (when every training fold
    holds every class: here the classes are those of all rows);
    leave-one-out scores the class of each row's leave-one-out decision values.
    {shared}
    ``class_weight='balanced'`` weighs the classes by their frequencies in all
    rows, the same in every training fold.

    Parameters
    ----------
    alphas : array-like of shape (n_alphas,), default=(1e-6, 1e-5, ..., 1e6)
        Positive finite penalties, as in :class:`LeastSquaresRegressorCV`.
    cv : None, int, cross-validation generator or iterable, default=None
        None: efficient exact leave-one-out. An int ``k``: ``StratifiedKFold(k)``;
        a splitter or an iterable of ``(train, test)`` pairs.
    scoring : str or callable, default=None
        None is accuracy (the share of rows, weighted by ``sample_weight``,
        whose class is right). A scikit-learn scorer name or a callable
        ``scorer(estimator, X, y)`` of ``predict`` or ``decision_function``
        (not ``predict_proba``).
    fit_intercept : bool, default=True
    class_weight : dict, 'balanced' or None, default=None
        As in :class:`LeastSquaresClassifier`; Dask input takes a dict only.
    store_cv_results : bool, default=False
        Keep every row's leave-one-out decision values in ``loo_predictions_``
        (``cv=None`` only).

    Attributes
    ----------
    alpha_ : float
    best_score_ : float
    cv_results_ : dict of ndarray
        As :class:`LeastSquaresRegressorCV`'s.
    loo_predictions_ : ndarray of shape (n_samples, n_outputs, n_alphas)
        With ``store_cv_results=True``: the leave-one-out decision values
        (``n_outputs`` is 1 for two classes), NaN for rows of weight 0.
    classes_ : ndarray of shape (n_classes,)
        The classes of the rows of positive weight.
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
{references}
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (Table 1, "Fourier + LS").

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import Fastfood, LeastSquaresClassifierCV
    >>> X, y = load_digits(return_X_y=True)
    >>> Z = Fastfood(n_components=512, random_state=0).fit_transform(X / 16)
    >>> clf = LeastSquaresClassifierCV(alphas=[0.01, 0.1, 1.0, 10.0], cv=5).fit(Z[:1000], y[:1000])
    >>> clf.alpha_, round(clf.best_score_, 3), round(clf.score(Z[1000:], y[1000:]), 2)
    (0.1, 0.959, 0.95)
    """

    name = "least_squares_cv"

    def __init__(self, alphas=DEFAULT_ALPHAS, *, cv=None, scoring=None, fit_intercept=True, class_weight=None,
                 store_cv_results=False):
        super().__init__(alphas, cv=cv, scoring=scoring, fit_intercept=fit_intercept,
                         store_cv_results=store_cv_results)
        self.class_weight = class_weight

    def decision_function(self, Z):
        """``Z @ coef_ + intercept_``: one score per class (one column if binary)."""
        return self._scores(Z)

    def predict(self, Z):
        """The class of the largest score."""
        scores = self.decision_function(Z)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)

    def _code(self):
        return one_vs_rest_code(len(self.classes_))

    def _encode(self, y, dask_y=False):
        """Learn the classes; the rows' class indices."""
        return encode_classes(self, np.asarray(y))

    def _block_targets(self, y):
        return class_indices(self.classes_, y)

    def _n_outputs(self):
        return self._code().shape[1]

    def _moment_targets(self, labels):
        return {"labels": labels, "code": self._code()}

    def _target_matrix(self, labels):
        return self._code()[labels]

    def _truth(self, labels):
        return self.classes_[labels]

    def _scored_classes(self):
        return self.classes_

    def _row_weights(self, labels, sample_weight, partial=False):
        return class_row_weights(self.class_weight, self.classes_, labels, sample_weight, partial=partial)


LeastSquaresRegressorCV.__doc__ = LeastSquaresRegressorCV.__doc__.format(shared=_SHARED_DOC,
                                                                         references=_REFERENCES_DOC)
LeastSquaresClassifierCV.__doc__ = LeastSquaresClassifierCV.__doc__.format(shared=_SHARED_DOC,
                                                                           references=_REFERENCES_DOC)
