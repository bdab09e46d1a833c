"""Learning kernel scales on a validation split: the loop RFF-SKL and KRR-GD share.

Both learners fit ridge regression in closed form on a training split and move the
kernel's scales ``sigma`` (one per input dimension, or one for all) to minimize
the squared error on a held-out split (Băzăvan et al. 2012, eqs. 3-4; Chapelle et
al. 2002). They differ only in how the objective and its gradient are computed:
through random Fourier features (:mod:`kernelmaps.fourier_kernel_ridge`) or
through the exact Gram matrix (:mod:`kernelmaps.kernel_ridge_gd`).

The objective is

    J(sigma) = ||f||^2 / (n_val * n_targets) + scale_penalty * ||sigma||^2,
    f = predictions on the validation split - validation targets,

minimized over ``theta = log sigma`` with L-BFGS-B (``scipy.optimize``), which keeps
``sigma`` positive. Targets are centred by their training mean (the model's
intercept), which does not depend on ``sigma``.
"""

import math
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._core.base import RegisteredEstimator, classes_from_scores
from .._solvers.cholesky import cho_factor
from .._core.targets import OneVsRestFitMixin, RegressionFitMixin
from .._core.validation import (check_bool, check_fraction, check_input, check_integer, check_positive,
                                user_stacklevel)

#: Factors of the heuristic scales tried before L-BFGS starts (one objective
#: evaluation each): the descent starts from the best.
INITIAL_SCALE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: L-BFGS-B keeps ``log sigma`` within this many natural-log units of its start,
#: so that a scale can fall by 1e-6 (a dimension switched off) but never reach 0
#: or overflow the frequencies.
LOG_SCALE_RANGE = (-14.0, 7.0)


def heuristic_scales(Phi, per_dimension):
    """Starting scales from the kernel's input ``Phi`` (n x d).

    One common scale ``sqrt(2 / (d Var))``, scikit-learn's ``gamma='scale'``
    (``gamma = 1 / (d Var)``, ``sigma^2 = 2 gamma``); per dimension,
    ``sqrt(2 / (d Var_i))``, the same rule on standardized columns, so that no
    dimension starts switched off by its units (a constant column gets the common
    scale).
    """
    d = Phi.shape[1]
    var = float(np.var(Phi))
    if not (var > 0 and np.isfinite(var)):
        raise ValueError("every training input is the same: the kernel scales cannot be learned")
    common = math.sqrt(2.0 / (d * var))
    if not per_dimension:
        return np.full(d, common)
    column_var = np.var(Phi, axis=0)
    positive = column_var > 0
    scales = np.full(d, common)
    scales[positive] = np.sqrt(2.0 / (d * column_var[positive]))
    return scales


def cholesky_solver(A):
    """``b -> A^-1 b`` for a symmetric positive definite ``A`` (overwritten)."""
    try:
        factor = cho_factor(A, overwrite_a=True)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            "the ridge system is not positive definite in floating point: increase alpha"
        ) from None
    return lambda b: scipy.linalg.cho_solve(factor, b, check_finite=False)


class ScaleLearnerBase(RegisteredEstimator, BaseEstimator):
    """Validation-error learning of kernel scales; subclasses give the objective.

    Subclass hooks:

    * ``_check_params(X)``: validate the subclass's own parameters (and sizes).
    * ``_objective(X_train, T_train, X_val, T_val, rng)``: a callable
      ``(sigma, gradient) -> (loss, dloss/dsigma or None)`` on centred targets,
      whose ``train_inputs`` are the training rows as the kernel's scales see
      them (``X``, or ``log(X + c)``), read for the starting scales.
    * ``_refit(X, T, sigma, rng)``: the final model on all rows with the learned scales.
    * ``_predict_centred(X)``: its predictions, before the intercept.

    A learner lists the class of its own parameters before ``ScaleLearningRegressor``
    or ``ScaleLearningClassifier``; that class's ``__init__`` passes the parameters
    read here to this one.
    """

    def __init__(self, *, alpha, per_dimension, validation_fraction, max_iter, tol, scale_penalty, random_state):
        # the parameters _learn reads; each learner's signature states them with its defaults
        self.alpha = alpha
        self.per_dimension = per_dimension
        self.validation_fraction = validation_fraction
        self.max_iter = max_iter
        self.tol = tol
        self.scale_penalty = scale_penalty
        self.random_state = random_state

    def _learn(self, X, T, stratify):
        self.alpha_ = check_positive(self.alpha, "alpha")
        fraction = check_fraction(self.validation_fraction, "validation_fraction", allow_zero=False)
        max_iter = check_integer(self.max_iter, "max_iter", minimum=1)
        tol = check_positive(self.tol, "tol", allow_zero=True)
        penalty = check_positive(self.scale_penalty, "scale_penalty", allow_zero=True)
        check_bool(self.per_dimension, "per_dimension")
        self._check_params(X)
        rng = check_random_state(self.random_state)
        n = X.shape[0]
        n_val = math.ceil(fraction * n)
        if n_val < 1 or n - n_val < 1:
            raise ValueError(
                f"validation_fraction={fraction} of {n} samples leaves an empty training or "
                "validation split; give more samples or another fraction"
            )
        stratify = stratify if stratify is not None and np.bincount(stratify).min() >= 2 else None
        train, val = train_test_split(np.arange(n), test_size=n_val, random_state=rng, stratify=stratify)
        train, val = np.sort(train), np.sort(val)
        offset = T[train].mean(axis=0)
        objective = self._objective(X[train], T[train] - offset, X[val], T[val] - offset, rng)
        d = X.shape[1]

        def sigma_of(theta):
            return np.exp(theta) if self.per_dimension else np.full(d, math.exp(theta[0]))

        def fun(theta):
            sigma = sigma_of(theta)
            loss, grad = objective(sigma, True)
            # d/dtheta = sigma * d/dsigma; a common scale sums the dimensions
            grad = sigma * grad + 2.0 * penalty * sigma * sigma
            return loss + penalty * float(sigma @ sigma), grad if self.per_dimension else np.array([grad.sum()])

        # the descent starts from the best multiple of the heuristic scales
        start = heuristic_scales(objective.train_inputs, self.per_dimension)
        tried = [(objective(f * start, False)[0] + penalty * float((f * start) @ (f * start)), f)
                 for f in INITIAL_SCALE_FACTORS]
        best_loss, best = min(tried)
        theta0 = np.log(best * start) if self.per_dimension else np.array([math.log(best * start[0])])
        history = [best_loss]
        scipy_bounds = [(t + LOG_SCALE_RANGE[0], t + LOG_SCALE_RANGE[1]) for t in theta0]
        result = scipy.optimize.minimize(
            fun, theta0, jac=True, method="L-BFGS-B", bounds=scipy_bounds,
            options={"maxiter": max_iter, "ftol": tol, "gtol": tol},
            callback=lambda intermediate_result: history.append(float(intermediate_result.fun)),
        )
        if result.status == 1:
            # L-BFGS-B's own gtol test: the largest entry of the gradient projected on the box
            low, high = np.array(scipy_bounds).T
            projected = float(np.max(np.abs(np.clip(result.x - result.jac, low, high) - result.x)))
            warnings.warn(
                f"{type(self).__name__}: L-BFGS stopped at max_iter={max_iter} before the validation "
                f"objective converged: the projected gradient reached {projected:.3g} against "
                f"tol={tol}; increase max_iter", ConvergenceWarning, stacklevel=user_stacklevel())
        self.initial_scales_ = best * start
        self.scales_ = sigma_of(result.x)
        self.objective_history_ = np.asarray(history)
        self.n_iter_ = int(result.nit)
        self.intercept_ = T.mean(axis=0)
        self._refit(X, T - self.intercept_, self.scales_, rng)

    def _scores(self, X):
        check_is_fitted(self)
        X = check_input(self, X, reset=False)
        return self._predict_centred(np.asarray(X, dtype=np.float64)) + self.intercept_


class ScaleLearningRegressor(RegressorMixin, RegressionFitMixin, ScaleLearnerBase):
    """Regression: ``y`` of shape ``(n,)`` or ``(n, n_targets)``."""

    _multi_output_targets = True
    _target_input = {"dtype": np.float64}

    def _fit_targets(self, X, y, labels):
        self._learn(X, y.reshape(len(y), -1), None)
        self._single_target = y.ndim == 1

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with the training data's features.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            One column per target of ``fit``; a 1-D ``y`` gives 1-D predictions.
        """
        scores = self._scores(X)
        return scores[:, 0] if self._single_target else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class ScaleLearningClassifier(ClassifierMixin, OneVsRestFitMixin, ScaleLearnerBase):
    """One-vs-rest classification on ±1 targets, one kernel shared by the classes."""

    _target_input = {"dtype": np.float64}

    def _fit_targets(self, X, T, labels):
        self._learn(X, T, labels)

    def decision_function(self, X):
        """One-vs-rest scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        scores = self._scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)
