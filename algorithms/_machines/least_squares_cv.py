"""What the cross-validated least-squares learners share: the folds, the memory plan,
the passes over the rows (in memory or on Dask), the choice of the penalty and the refit."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, is_classifier
from sklearn.model_selection import check_cv

from .._core.base import RegisteredEstimator
from .._core.sample_weights import check_sample_weight, refuse_balanced
from .._core.validation import (check_bool, check_fits_in_memory, clear_fitted_state, dask_support,
                                is_dask_array)
from .._solvers.ridge_path import RidgePath, centred_system, squared_error_sums, total_sum_of_squares
from .cv_passes import EvaluationPass, MomentsPass, run_chunk, run_rows
from .cv_scoring import best_index, check_scoring, cv_results, scorer_scores, squared_error_score
from .gaussian_process import spectral_log_evidence
from .least_squares import LeastSquaresBase, check_feature_map, validate_rows

#: The default grid: one penalty per decade from 1e-6 to 1e6. ``alpha`` weighs the
#: summed squared errors, so a good one grows with the rows (``n`` times the
#: per-row ridge of kernel ridge, 1e-6 to 1e-1 for smooth to noisy problems):
#: these 13 cover that for a few to a million rows, and each costs only
#: ``O(D^2)`` (``O(D)`` a row for leave-one-out) beside one eigendecomposition.
DEFAULT_ALPHAS = tuple(10.0**k for k in range(-6, 7))
#: Rows of the targets whose mean is the offset the moments are summed about.
OFFSET_ROWS = 1000


def check_alphas(alphas):
    """The penalties as a float64 array, or an error naming what is wrong with them.

    Examples
    --------
    >>> from kernelmaps._machines.least_squares_cv import check_alphas
    >>> check_alphas([0.1, 1, 10])
    array([ 0.1,  1. , 10. ])
    >>> check_alphas([1.0, -1.0])
    Traceback (most recent call last):
    ...
    ValueError: alphas must be finite and > 0, got [-1.0]
    """
    return check_grid(alphas, "alphas", "for one alpha, fit LeastSquaresRegressor or LeastSquaresClassifier")


def check_grid(values, name, single):
    """The grid of one positive parameter (``name``) as a float64 array, or an error naming
    what is wrong with it; ``single`` says what to do with one value instead of a grid."""
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise ValueError(f"{name} must be a 1-D array-like of values, got {values!r}; {single}")
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be real numbers, got dtype {array.dtype}")
    array = array.astype(np.float64)
    if array.size == 0:
        raise ValueError(f"{name} is empty: give at least one value")
    bad = ~(np.isfinite(array) & (array > 0))
    if bad.any():
        raise ValueError(f"{name} must be finite and > 0, got {array[bad][:5].tolist()}")
    return array


def fold_membership(cv, Z, y, groups, classifier):
    """``(membership, partition)``: whether each row is in each test fold, and whether the folds partition the rows.

    ``cv=None`` (leave-one-out) gives ``(None, False)``. Every split's training
    rows must be exactly the rows outside its test rows, both non-empty: a
    training system is all rows' moments minus its test fold's.
    """
    if cv is None:
        return None, False
    n = Z.shape[0]
    if isinstance(cv, (bool, np.bool_)):
        raise ValueError(f"cv must be None, an int >= 2, a splitter or an iterable of splits, got {cv!r}")
    if isinstance(cv, numbers.Integral) and not 2 <= cv <= n:
        raise ValueError(f"cv={cv} folds need 2 <= cv <= the number of rows, which is {n}")
    splitter = check_cv(cv, y, classifier=classifier)
    splits = list(splitter.split(Z, y, groups))
    check_fits_in_memory(n * len(splits), f"cv with {len(splits)} splits", "the test folds of every row")
    membership = np.zeros((n, len(splits)), dtype=bool)
    for k, (train, test) in enumerate(splits):
        train, test = np.asarray(train), np.asarray(test)
        covered = np.zeros(n, dtype=np.intp)
        for rows in (train, test):
            if rows.size and (rows.dtype.kind not in "iu" or rows.min() < -n or rows.max() >= n):
                raise ValueError(f"cv's split {k} holds indices that are not rows of the {n} rows")
            np.add.at(covered, rows, 1)
        if not (train.size and test.size) or np.any(covered != 1):
            raise ValueError(f"cv's split {k} must split the {n} rows into non-empty training and test rows, "
                             "each row in exactly one: the training system of a split is all rows' moments "
                             "minus its test rows'")
        membership[test, k] = True
    return membership, bool(np.all(membership.sum(axis=1) == 1))


def path_log_evidence(path, total, fit_intercept):
    """Every penalty's Bayesian linear regression evidence (``amplitude='auto'``) on the rows of ``total``,
    from the path's eigendecomposition: :class:`kernelmaps.LeastSquaresRegressor`'s
    ``log_marginal_likelihood()`` at each ``alpha``."""
    spread = total_sum_of_squares(total) if fit_intercept else total.target_square_sum
    n_effective = total.n_samples - 1 if fit_intercept else total.n_samples
    return spectral_log_evidence(path.eigenvalues, path.projected, spread, path.alphas, n_effective,
                                 total.weight_sum if fit_intercept else None, total.log_weight_sum)


class InMemoryRows:
    """Validated rows in memory: a pass takes their row blocks in turn."""

    def __init__(self, Z, targets, membership, fit_weight, score_weight, feature_map):
        self.Z, self.targets, self.membership, self.feature_map = Z, targets, membership, feature_map
        self.fit_weight, self.score_weight = fit_weight, score_weight

    def run(self, task):
        return run_rows(task, task.start(), self.Z, self.targets, self.membership, self.fit_weight,
                        self.score_weight, self.feature_map)


class DaskRows:
    """Rows of a Dask array: a pass is one map-reduce over its chunks."""

    def __init__(self, X, y, membership, feature_map):
        self.X, self.y, self.membership, self.feature_map = X, y, membership, feature_map

    def run(self, task):
        rows = (self.y,) if self.membership is None else (self.y, self.membership)
        return dask_support().map_reduce(run_chunk, task, self.X, *rows, feature_map=self.feature_map)


class LeastSquaresCVBase(RegisteredEstimator, BaseEstimator):
    """Ridge least squares on features with the penalty chosen by cross-validation, every penalty from one pass.

    Subclasses say how targets are encoded (``_encode``, ``_block_targets``),
    enter the moments (``_moment_targets``) and the residuals (``_target_matrix``),
    weigh the rows (``_row_weights``) and are scored (``_truth``).
    """

    kind = "learner"
    paper = ("Golub, Heath & Wahba, Technometrics 1979 (GCV); Rifkin & Lippert 2007 (leave-one-out RLS); "
             "Rahimi & Recht, NIPS 2007 (Fourier + LS)")
    kernel_family = "linear"
    test_params = {"alphas": (0.01, 0.1, 1.0, 10.0)}

    #: Keyword arguments of the targets' validation (``check_input``).
    _y_validation: dict = {}

    def __init__(self, alphas=DEFAULT_ALPHAS, *, cv=None, scoring=None, fit_intercept=True,
                 store_cv_results=False):
        self.alphas = alphas
        self.cv = cv
        self.scoring = scoring
        self.fit_intercept = fit_intercept
        self.store_cv_results = store_cv_results

    def fit(self, Z, y, sample_weight=None, *, feature_map=None, groups=None):
        """Score every ``alpha`` by cross-validation, then fit all rows at the best.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
            The features; with ``feature_map``, its inputs. A row-chunked Dask
            array is read chunk by chunk on the workers, once per pass.
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a Dask array
            The targets, or a classifier's labels (a Dask ``y`` of labels, or
            one that a splitter reads, is computed once: ``n`` values, not the rows).
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Non-negative weight of each row, in the fits and the scores; rows of
            weight 0 are dropped after the folds are drawn. Not with Dask input.
        feature_map : fitted kernelmaps feature map, optional
            Maps ``Z`` block by block in each pass, so that the features never
            exist in full (then ``predict`` takes ``feature_map.transform(X)``).
        groups : array-like of shape (n_samples,), optional
            Group labels for a group splitter ``cv``.

        Returns
        -------
        self
        """
        return self._fit(Z, y, sample_weight, feature_map, groups)

    def _validate_rows(self, Z, y, reset, feature_map):
        return validate_rows(self, Z, y, reset, feature_map, **self._y_validation)

    def _fit(self, Z, y, sample_weight, feature_map, groups):
        clear_fitted_state(self)
        alphas = check_alphas(self.alphas)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        if check_bool(self.store_cv_results, "store_cv_results") and self.cv is not None:
            raise ValueError("store_cv_results=True keeps the leave-one-out predictions: it needs cv=None")
        if is_dask_array(Z) or is_dask_array(y):
            rows, offset = self._dask_rows(Z, y, sample_weight, feature_map, groups, fit_intercept)
        else:
            rows, offset = self._memory_rows(Z, y, sample_weight, feature_map, groups, fit_intercept)
        scoring = check_scoring(self.scoring, is_classifier(self), rows.score_weight is not None)
        if scoring.kind == "evidence" and (self.cv is not None or self.store_cv_results):
            raise ValueError("scoring='evidence' scores every alpha by the marginal likelihood of all rows, with no "
                             "folds and no leave-one-out predictions: set cv=None and store_cv_results=False")
        self._check_memory(rows, len(alphas), scoring)
        n_splits = 0 if rows.membership is None else rows.membership.shape[1]
        moments = rows.run(MomentsPass(self, n_splits, rows.partition, offset))
        if rows.membership is None:
            return self._leave_one_out(rows, moments.all_rows(), alphas, scoring, fit_intercept)
        return self._k_fold(rows, moments, alphas, scoring, fit_intercept)

    def _memory_rows(self, Z, y, sample_weight, feature_map, groups, fit_intercept):
        Z, y = validate_rows(self, Z, y, True, feature_map, ensure_min_samples=2, **self._y_validation)
        sample_weight = check_sample_weight(sample_weight, Z)
        n_given = Z.shape[0]
        membership, partition = fold_membership(self.cv, Z, y, groups, is_classifier(self))
        kept = None if sample_weight is None or np.all(sample_weight > 0) else np.flatnonzero(sample_weight > 0)
        if kept is not None:
            # rows of weight 0 decide nothing: the folds are drawn on every row, then lose them
            Z, y, sample_weight = Z[kept], y[kept], sample_weight[kept]
            membership = None if membership is None else membership[kept]
        self._check_rows_left(Z.shape[0], membership)
        targets = self._encode(y)
        rows = InMemoryRows(Z, targets, membership, self._row_weights(targets, sample_weight), sample_weight,
                            feature_map)
        rows.partition, rows.n_rows, rows.kept, rows.n_given = partition, len(y), kept, n_given
        return rows, self._target_offset(targets[:OFFSET_ROWS], fit_intercept)

    def _dask_rows(self, X, y, sample_weight, feature_map, groups, fit_intercept):
        from .dask_support import check_rows, known_rows

        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__} takes no sample_weight with Dask input: fit the rows in "
                             "memory to weigh them")
        refuse_balanced(getattr(self, "class_weight", None))
        if not is_dask_array(X):
            raise TypeError("with a Dask y, Z must be a Dask array too: wrap it with dask.array.from_array")
        X = known_rows(check_rows(X, "Z"), "Z")
        if X.shape[0] < 2:
            raise ValueError(f"Z has {X.shape[0]} rows: cross-validation needs 2 rows or more")
        if len(y) != X.shape[0]:
            raise ValueError(f"Z has {X.shape[0]} rows but y has {len(y)}")
        self.n_features_in_ = X.shape[1]
        if feature_map is not None:
            feature_map = check_feature_map(feature_map)
            if X.shape[1] != feature_map.n_features_in_:
                raise ValueError(f"Z has {X.shape[1]} features, but feature_map was fitted on "
                                 f"{feature_map.n_features_in_}")
            self.n_features_in_ = feature_map.n_components_
        # the labels, or what a splitter reads, come into memory: n values, not n rows of features
        needs_y = is_classifier(self) or self.cv is not None
        y_values = np.asarray(y.compute() if is_dask_array(y) else y) if needs_y else None
        targets = self._encode(y_values if needs_y else y[:OFFSET_ROWS], dask_y=not needs_y)
        membership, partition = fold_membership(self.cv, X, y_values, groups, is_classifier(self))
        self._check_rows_left(X.shape[0], membership)
        rows = DaskRows(X, y, membership, feature_map)
        rows.partition, rows.n_rows, rows.kept, rows.score_weight = partition, X.shape[0], None, None
        return rows, self._target_offset(np.asarray(targets[:OFFSET_ROWS]), fit_intercept)

    @staticmethod
    def _check_rows_left(n_rows, membership):
        if n_rows < 2:
            raise ValueError(f"cross-validation needs 2 rows of positive weight or more, got {n_rows}")
        if membership is not None:
            empty = np.flatnonzero(~membership.any(axis=0) | membership.all(axis=0))
            if len(empty):
                raise ValueError(f"cv's split {int(empty[0])} has no test rows or no training rows of positive "
                                 "weight: every split needs both")

    def _check_memory(self, rows, n_alphas, scoring):
        """Refuse, before the pass, a plan whose ``D x D`` matrices (one per test fold) or tables do not fit."""
        D, T, A = self.n_features_in_, self._n_outputs(), n_alphas
        K = 0 if rows.membership is None else rows.membership.shape[1]
        # the folds' moments, all rows', a training system and its eigenvectors
        matrices = K + 3
        second_pass = K and scoring.kind != "squared"
        collected_rows = rows.n_rows * max(1, K) if (scoring.kind == "scorer" or self.store_cv_results) else 0
        n_bytes = 8 * (matrices * D * D + (K * D * A * T if second_pass else 0) + 2 * D * A * T
                       + 2 * collected_rows * A * T)
        folds = "leave-one-out" if K == 0 else f"{K} test folds"
        check_fits_in_memory(n_bytes, f"n_features={D}", f"{matrices} matrices of {D} x {D} ({folds}), every "
                             f"penalty's coefficients and predictions ({A} alphas)")

    def _leave_one_out(self, rows, total, alphas, scoring, fit_intercept):
        path = RidgePath(*centred_system(total, None, fit_intercept), alphas, fit_intercept, total.target_offset)
        if scoring.kind == "evidence":
            return self._select_on_path(path, alphas, path_log_evidence(path, total, fit_intercept))
        collect = scoring.kind == "scorer" or self.store_cv_results
        part = rows.run(EvaluationPass(self, len(alphas), collect, path=path))
        if scoring.kind == "squared":
            scores = squared_error_score(scoring.name, part.squared, total_sum_of_squares(total), total.weight_sum)
        elif scoring.kind == "accuracy":
            scores = part.hits[0] / part.counted[0]
        if collect:
            outputs, targets, weights = part.rows(0)
            if scoring.kind == "scorer":
                scores = scorer_scores(scoring, outputs, self._truth(targets), weights, self._scored_classes())
            if self.store_cv_results:
                self.loo_predictions_ = self._stored_predictions(outputs, rows)
        return self._select_on_path(path, alphas, scores)

    def _select_on_path(self, path, alphas, scores):
        """Keep ``cv_results_`` of every penalty's score, and the path's solution of the best."""
        self.cv_results_ = cv_results(alphas, scores)
        best = best_index(scores)
        self.coef_, self.intercept_ = path.solution(best)
        return self._selected(alphas, best)

    def _k_fold(self, rows, moments, alphas, scoring, fit_intercept):
        total = moments.all_rows()
        split_scores, solutions = [], []
        for test in moments.tests:
            path = RidgePath(*centred_system(total, test, fit_intercept), alphas, fit_intercept, total.target_offset)
            coef, intercept = path.solutions()
            del path
            if scoring.kind == "squared":
                split_scores.append(squared_error_score(scoring.name, squared_error_sums(test, coef, intercept),
                                                        total_sum_of_squares(test), test.weight_sum))
            else:
                solutions.append((coef, intercept))
        if scoring.kind != "squared":
            part = rows.run(EvaluationPass(self, len(alphas), scoring.kind == "scorer", fold_solutions=solutions))
            for k in range(len(solutions)):
                if scoring.kind == "accuracy":
                    split_scores.append(part.hits[k] / part.counted[k])
                else:
                    outputs, targets, weights = part.rows(k)
                    split_scores.append(scorer_scores(scoring, outputs, self._truth(targets), weights,
                                                      self._scored_classes()))
        self.cv_results_ = cv_results(alphas, np.array(split_scores))
        best = best_index(self.cv_results_["mean_test_score"])
        coef, intercept = total.solve(alphas[best], fit_intercept)
        self.coef_, self.intercept_ = coef, intercept + (total.target_offset if fit_intercept else 0.0)
        return self._selected(alphas, best)

    def _selected(self, alphas, best):
        self.alpha_ = float(alphas[best])
        self.best_score_ = float(self.cv_results_["mean_test_score"][best])
        return self

    def _stored_predictions(self, outputs, rows):
        """Every row's leave-one-out outputs as ``RidgeCV`` lays them out; NaN for rows of weight 0."""
        if rows.kept is not None:
            full = np.full((rows.n_given,) + outputs.shape[1:], np.nan)
            full[rows.kept] = outputs
            outputs = full
        outputs = outputs.transpose(0, 2, 1)
        return outputs[:, 0, :] if outputs.shape[1] == 1 and not self._two_dimensional_output() else outputs

    def _target_offset(self, targets, fit_intercept):
        """Zeros, or for a regressor with an intercept the mean of the first targets (the moments' offset)."""
        return np.zeros(self._n_outputs())

    def _scored_classes(self):
        return None

    def _two_dimensional_output(self):
        return True

    # Z @ coef_ + intercept_, as the plain learners score
    _scores = LeastSquaresBase._scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
