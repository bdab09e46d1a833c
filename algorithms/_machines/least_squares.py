"""What the least-squares learners share: the one-pass fit over row blocks, by the
normal equations or by conjugate gradient, with optional sample weights, and the
regressor's Gaussian reading (Bayesian linear regression on the features)."""

import warnings
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, is_classifier
from scipy.linalg import LinAlgWarning
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted

from .._core.base import RegisteredEstimator, RowBlockMap
from .._core.parallel import block_rows
from .._core.sample_weights import check_sample_weight, drop_zero_weights, refuse_balanced
from .._core.sparse_map import SparseFeatureMap
from .._core.validation import (check_choice, check_input, check_integer, check_positive, clear_fitted_state,
                                dask_support, format_bytes, is_dask_array, user_stacklevel)
from .._solvers.normal_equations import NormalEquations
from .._solvers.sparse_ridge import SOLVERS, ridge_cg, select_solver
from .gaussian_process import (GaussianPosteriorMixin, check_amplitude, factor_log_det, fitted_amplitude,
                               log_evidence, weight_space_log_det)

#: Rows of features one mapped block holds while it is accumulated (``fit`` with a
#: ``feature_map``): about this many bytes of float64 features per block.
MAPPED_BLOCK_BYTES = 32 * 2**20
#: A minimized objective below this fraction of the targets' sum of squares keeps
#: fewer than 6 digits when the moments give it (``1e6`` machine epsilons).
INEXACT_OBJECTIVE = 1e6 * np.finfo(np.float64).eps


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


def check_feature_map(feature_map):
    """A fitted kernelmaps feature map (dense or sparse output), or an error saying what is wrong."""
    if not isinstance(feature_map, RowBlockMap):
        raise TypeError(f"feature_map must be a kernelmaps feature map, got {type(feature_map).__name__}")
    check_is_fitted(feature_map, msg=(
        f"feature_map {type(feature_map).__name__} is not fitted: fit it first (on a Dask array, "
        "fit reads a bounded sample of the rows)"))
    return feature_map


def check_class_labels(values, name):
    """``check_classification_targets`` without its warning that more than half of the
    values are distinct: right for a list of classes, or a small block of rows,
    which may well hold every class once."""
    kind = type_of_target(values, input_name=name)
    if kind not in ("binary", "multiclass"):
        raise ValueError(f"Unknown label type: {kind!r}. {name} must hold discrete class labels "
                         "(a classifier cannot fit a regression target of continuous values)")


def class_indices(classes, y):
    """Indices of the labels ``y`` in the sorted ``classes``; an error for labels outside them."""
    check_class_labels(y, "y")
    labels = np.searchsorted(classes, y)
    known = classes[np.minimum(labels, len(classes) - 1)]
    if np.any(labels >= len(classes)) or np.any(known != y):
        unknown = np.setdiff1d(np.unique(y), classes)
        raise ValueError(f"y has labels {unknown[:10].tolist()} outside classes {classes.tolist()}")
    return labels


def validate_rows(learner, Z, y, reset, feature_map, **validation):
    """Validated ``(Z, y)`` of a learner on features; with a map, ``Z`` are its inputs and
    the learner's ``n_features_in_`` is the map's width.

    ``validation`` is passed to :func:`~kernelmaps._core.validation.check_input`
    (the targets' checks, e.g. ``multi_output``).
    """
    if feature_map is None:
        return check_input(learner, Z, y, reset=reset, accept_sparse=True, **validation)
    feature_map = check_feature_map(feature_map)
    X, y = check_input(feature_map, Z, y, reset=False, accept_sparse=True, **validation)
    if reset:
        learner.n_features_in_ = feature_map.n_components_
    elif learner.n_features_in_ != feature_map.n_components_:
        raise ValueError(f"feature_map gives {feature_map.n_components_} features, but "
                         f"{type(learner).__name__} was fitted on {learner.n_features_in_}")
    return X, y


def _refuse_dask_weights(learner, sample_weight):
    """Dask input accumulates chunks on the workers, with no weights beside them."""
    if sample_weight is not None:
        raise ValueError(f"{type(learner).__name__} takes no sample_weight with Dask input: fit the rows "
                         "in memory (or by partial_fit blocks) to weigh them")
    refuse_balanced(getattr(learner, "class_weight", None))


class LeastSquaresBase(RegisteredEstimator, BaseEstimator):
    """Ridge least squares: one-pass normal equations (accumulate, merge, solve) or CG.

    Subclasses define how a block's targets enter either solver
    (``_target_arguments``), what the first call learns (``_begin``), the number
    of targets (``_n_targets``) and the weight of each row (``_row_weights``).
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

    def _row_weights(self, targets, sample_weight, partial=False):
        """Each row's weight (``None``: all 1); classifiers multiply in their class weights."""
        return sample_weight

    def _add_block(self, equations, Z, targets, sample_weight=None):
        equations.add(Z, sample_weight=sample_weight, **self._target_arguments(targets))

    def _add_rows(self, Z, y, feature_map=None, sample_weight=None, partial=False):
        targets = self._block_targets(y)
        weights = self._row_weights(targets, sample_weight, partial)
        if self.solver_ == "cg":
            return self._solve_iteratively(Z if feature_map is None else feature_map.transform(Z), targets,
                                           weights)
        self._accumulate(self.normal_equations_, Z, targets, feature_map, weights)
        return self._solve()

    def _accumulate(self, equations, Z, targets, feature_map=None, sample_weight=None):
        """Add the rows ``Z`` (features, or inputs of ``feature_map``) block by block.

        Without ``sample_weight`` (a Dask chunk) the rows weigh their class weights.
        """
        if sample_weight is None:
            sample_weight = self._row_weights(targets, None, partial=True)
        if feature_map is not None:
            for rows, Z_rows in _mapped_blocks(Z, feature_map):
                self._add_block(equations, Z_rows, targets[rows],
                                None if sample_weight is None else sample_weight[rows])
            return equations
        # a block's float64 copy and its Z^T Z update: the library's one block rule;
        # NormalEquations.add blocks sparse rows itself, by the size of their product
        step = max(1, Z.shape[0]) if sp.issparse(Z) else block_rows(8 * Z.shape[1])
        for start in range(0, Z.shape[0], step):
            rows = slice(start, start + step)
            self._add_block(equations, Z[rows], targets[rows],
                            None if sample_weight is None else sample_weight[rows])
        return equations

    def _new_equations(self):
        return NormalEquations(self.n_features_in_, self._n_targets())

    def _fit(self, Z, y, feature_map, sample_weight=None):
        if is_dask_array(Z) or is_dask_array(y):
            self._check_one_pass("Dask input")
            _refuse_dask_weights(self, sample_weight)
            return dask_support().fit_learner(self, Z, y, feature_map=feature_map)
        clear_fitted_state(self)
        Z, y = self._validate_rows(Z, y, True, feature_map)
        Z, y, sample_weight = drop_zero_weights(Z, y, check_sample_weight(sample_weight, Z))
        sparse = sp.issparse(Z) if feature_map is None else isinstance(feature_map, SparseFeatureMap)
        self.solver_ = select_solver(self._solver_params()[0], self.n_features_in_, sparse)
        if is_classifier(self):
            check_classification_targets(y)
            self._begin(np.unique(y))
        else:
            self._begin(y)
        return self._add_rows(Z, y, feature_map, sample_weight)

    def _partial_fit(self, Z, y, first, feature_map, classes=None, sample_weight=None):
        self._check_one_pass("partial_fit", () if first else (self,))
        if is_dask_array(Z) or is_dask_array(y):
            _refuse_dask_weights(self, sample_weight)
            extra = {"classes": classes} if is_classifier(self) else {}
            return dask_support().fit_learner(self, Z, y, feature_map=feature_map, partial=True, **extra)
        refuse_balanced(getattr(self, "class_weight", None))
        Z, y = self._validate_rows(Z, y, first, feature_map)
        Z, y, sample_weight = drop_zero_weights(Z, y, check_sample_weight(sample_weight, Z))
        if first:
            self.solver_ = "normal"
            self._begin(y if classes is None else classes)
        return self._add_rows(Z, y, feature_map, sample_weight, partial=True)

    def _solve(self):
        alpha = check_positive(self.alpha, "alpha", allow_zero=True)
        solution = self.normal_equations_.solve_factored(alpha, self.fit_intercept)
        self.coef_, self.intercept_ = solution.coef, solution.intercept
        # one direct solve: scikit-learn asks n_iter_ >= 1 of an estimator with max_iter
        self.solver_, self.n_iter_ = "normal", 1
        self._keep_posterior(alpha, solution.factor, solution.objective, self.normal_equations_.n_samples)
        return self

    def _keep_posterior(self, alpha, factor, objective, n_samples):
        """Hook of a learner with a Gaussian reading: the factor of the solved system
        (None after CG), each target's minimized objective and the number of rows."""

    def _solve_iteratively(self, Z, targets, sample_weight=None):
        _, tol, max_iter = self._solver_params()
        alpha = check_positive(self.alpha, "alpha", allow_zero=True)
        result = ridge_cg(Z, alpha, fit_intercept=self.fit_intercept, tol=tol, max_iter=max_iter,
                          sample_weight=sample_weight, **self._target_arguments(targets))
        if not result.converged:
            warnings.warn(f"{type(self).__name__} stopped at max_iter={max_iter}: the relative residual of "
                          f"conjugate gradient reached {result.residual:.3g} against tol={tol}; the "
                          "coefficients are its last iterate: raise max_iter or alpha, or tol",
                          ConvergenceWarning, stacklevel=user_stacklevel())
        self.coef_, self.intercept_, self.n_iter_ = result.coef, result.intercept, result.n_iter
        return self

    def _validate_rows(self, Z, y, reset, feature_map):
        return validate_rows(self, Z, y, reset, feature_map, **self._y_validation)

    def merge(self, other):
        """Add the rows another partial fit has seen, then re-solve (the map-reduce step).

        Two learners fitted (``fit`` or ``partial_fit``) on disjoint rows, in other
        processes or on other machines, merge into the learner of all their rows:
        the coefficients equal those of one fit on the union (with their sample
        weights, if any). ``other`` is unchanged.

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


class FeaturePosteriorMixin(GaussianPosteriorMixin):
    """The Gaussian reading of a least-squares regressor: Bayesian linear regression on its features.

    Weights ``w ~ N(0, s I)``, the intercept under a flat prior, noise
    ``N(0, alpha s / w_i)``: the posterior mean is the ridge solution, and the
    posterior of the latent ``f(x) = z(x) w + b`` comes from the factor ``L`` of
    the centred system ``A = Z_c^T W Z_c + alpha I = L L^T`` that the normal
    equations solve (:mod:`kernelmaps._machines.gaussian_process`, weight space).
    """

    def _solve(self):
        # the last factor's memory is the next solve's D x D system
        self.posterior_factor_ = None
        return super()._solve()

    def _solve_iteratively(self, Z, targets, sample_weight=None):
        super()._solve_iteratively(Z, targets, sample_weight)
        # CG keeps no moments: the objective from the residuals, exactly
        residual = np.asarray(targets - (Z @ self.coef_ + self.intercept_))
        squares = residual * residual if sample_weight is None else sample_weight[:, None] * residual * residual
        objective = squares.sum(axis=0) + self.alpha * np.einsum("ij,ij->j", self.coef_, self.coef_)
        self._keep_posterior(float(self.alpha), None, objective, Z.shape[0])
        return self

    def _keep_posterior(self, alpha, factor, objective, n_samples):
        amplitude = check_amplitude(self.amplitude)
        n_effective = n_samples - 1 if self.fit_intercept else n_samples
        self._posterior_alpha = alpha
        amplitudes = (fitted_amplitude(amplitude, objective / alpha, n_effective) if alpha > 0
                      else np.full(objective.shape, np.nan))
        self.amplitude_ = float(amplitudes[0]) if self._single_output() else amplitudes
        self.noise_variance_ = alpha * self.amplitude_
        self.posterior_factor_ = factor if alpha > 0 else None
        self.log_marginal_likelihood_value_ = None
        if self.posterior_factor_ is None or not np.all(np.isfinite(amplitudes)):
            return
        equations = self.normal_equations_
        inexact = np.flatnonzero(objective < INEXACT_OBJECTIVE * equations.target_square)
        if inexact.size:
            warnings.warn(f"{type(self).__name__}: the minimized ridge objective of target(s) {inexact.tolist()} "
                          f"is below {INEXACT_OBJECTIVE:.1e} of their sum of squares, so the one-pass moments give it "
                          "to fewer than 6 digits, and with it amplitude_ and the evidence: raise alpha, or pass "
                          "a float amplitude", LinAlgWarning, stacklevel=user_stacklevel())
        log_det = weight_space_log_det(factor_log_det(factor), factor.shape[0], alpha, n_effective,
                                       equations.weight_sum if self.fit_intercept else None, equations.log_weight_sum)
        self.log_marginal_likelihood_value_ = log_evidence(objective / alpha, log_det, n_effective, amplitudes)

    def _posterior_unavailable(self, new_rows):
        if self.solver_ == "cg":
            need = format_bytes(2 * 8 * self.n_features_in_**2)
            return ("solver_='cg' never forms Z^T Z + alpha I, whose Cholesky factor the posterior and the "
                    f"evidence need: fit with solver='normal' (two D x D float64 matrices, {need})")
        if self._posterior_alpha == 0:
            return "alpha=0 is a flat prior on the weights (an infinite amplitude): give alpha > 0"
        if self.posterior_factor_ is None:
            return ("the normal equations are singular to working precision (alpha below the rounding of "
                    "Z^T Z): raise alpha")
        if not np.all(np.isfinite(self._amplitudes())):
            return ("one row with an intercept leaves no degree of freedom to estimate amplitude='auto': give a "
                    "float amplitude")
        return None

    def _posterior_input(self, Z):
        return check_input(self, Z, reset=False, accept_sparse=True)

    def _posterior_block(self, Z):
        # the mean exactly as predict computes it
        mean = Z @ self.coef_.astype(Z.dtype, copy=False) + self.intercept_.astype(Z.dtype, copy=False)
        equations = self.normal_equations_
        centre = equations.feature_sum / equations.weight_sum if self.fit_intercept else 0.0
        dense = Z.toarray() if sp.issparse(Z) else Z
        return np.asarray(mean), (np.asarray(dense, dtype=np.float64) - centre).T

    def _posterior_prior(self, Z, full, U=None):
        # the flat-prior intercept's variance, alpha s / sum(w), in units of s
        variance = self._posterior_alpha / self.normal_equations_.weight_sum if self.fit_intercept else 0.0
        return np.full((Z.shape[0],) * (2 if full else 1), variance)

    def _posterior_coefficient(self):
        return self._posterior_alpha

    def _single_output(self):
        return self.n_targets_ == 1 and not getattr(self, "_column_target", False)
