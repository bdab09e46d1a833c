"""The ``fit`` of learners built from regression problems, written once.

The kernel ridge baselines, the exact and random-feature MKL learners and the
learned-scale ridge learners all solve regression problems: a regressor one per
target column, a classifier one per one-vs-rest ±1 column of its labels (a single
one for two classes). Their ``fit`` differs only in the solving, so it lives here
and each class implements ``_fit_targets``.
"""

import numpy as np

from .base import encode_classes, one_vs_rest_code
from .validation import check_input, check_regression_targets, clear_fitted_state


class RegressionFitMixin:
    """``fit(X, y)`` of a regressor; the class implements ``_fit_targets(X, y, labels=None)``.

    Class attributes:

    * ``_multi_output_targets``: ``y`` may have several columns (``_fit_targets``
      receives them, 1-D or 2-D as given); otherwise it must be 1-D, and strings
      are refused with a pointer to ``_classifier_name``;
    * ``_target_input``: extra keywords of :func:`kernelmaps._core.validation.check_input`.
    """

    _multi_output_targets = False
    _classifier_name = "a classifier"
    _target_input = {}

    def fit(self, X, y):
        """Fit one regression problem per target column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Numeric targets (several columns where the estimator takes them).

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        if self._multi_output_targets:
            X, y = check_input(self, X, y, reset=True, multi_output=True, y_numeric=True, **self._target_input)
            y = np.asarray(y, dtype=np.float64)
        else:
            X, y = check_input(self, X, y, reset=True, **self._target_input)
            y = check_regression_targets(self, y, self._classifier_name)
        self._fit_targets(X, y, None)
        return self


class OneVsRestFitMixin:
    """``fit(X, y)`` of a classifier; the class implements ``_fit_targets(X, T, labels)``.

    ``T`` holds the ±1 one-vs-rest code of each row (shape ``(n, n_classes)``, or
    ``(n, 1)`` for two classes) and ``labels`` the class indices, for stratified
    splits. ``_target_input`` as in :class:`RegressionFitMixin`.
    """

    _target_input = {}

    def fit(self, X, y):
        """Fit one regression problem per one-vs-rest ±1 column of the labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True, **self._target_input)
        labels = encode_classes(self, y)
        self._fit_targets(X, one_vs_rest_code(len(self.classes_))[labels], labels)
        return self
