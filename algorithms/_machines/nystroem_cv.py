"""What the cross-validated Nyström kernel ridge learners share: parameters, folds, memory
plan, the search over the (gamma, alpha) grid (:mod:`kernelmaps._machines.nystroem_grid`),
``cv_results_`` and the refit of the plain machine at the chosen point."""

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._core.base import KernelParameter, RegisteredEstimator, one_vs_rest_code
from .._core.validation import (MEMORY_FRACTION, available_memory_bytes, check_bool, check_fits_in_memory,
                                check_fraction, check_input, is_dask_array, validation_rows)
from .._kernels.exact import exact_kernel
from .._kernels.landmarks import check_landmarks, landmark_count, set_up_landmarks
from .._kernels.matern import check_nu
from .._kernels.names import check_kernel_params
from .._kernels.params import FittedKernelMixin
from .._solvers.falkon import cholesky_with_jitter
from .._solvers.ridge_path import RidgePath, centred_system, squared_error_sums, total_sum_of_squares
from .cv_scoring import best_index, check_scoring, cv_results, scorer_scores, squared_error_score
from .least_squares_cv import DEFAULT_ALPHAS, check_alphas, check_grid, fold_membership, path_log_evidence
from .nystroem import AUTO_CENTRES, check_kernel_cache, kernel_cache_budget
from .nystroem_grid import GridBlocks, chunk_rows, each_fold, fold_moments, fold_outputs, fold_solution

#: ``gammas='auto'``: these multiples of the ``gamma='scale'`` heuristic
#: (``1 / (n_features X.var())``), a factor 4 apart over 2.4 decades.
AUTO_GAMMA_FACTORS = (1 / 16, 1 / 4, 1.0, 4.0, 16.0)
#: Folds of ``cv=None`` without ``validation_fraction``, as scikit-learn's default.
DEFAULT_FOLDS = 5
#: The docstring of the searches' bandwidths and kernel parameters.
GAMMAS_DOC = """    gammas : array-like of shape (n_gammas,) or 'auto', default='auto'
        Positive finite bandwidths. ``'auto'``: the ``gamma='scale'`` heuristic
        (``1 / (n_features X.var())``) times 1/16, 1/4, 1, 4 and 16.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern', 'polynomial', 'exponential'}
    degree : int, default=2
    coef0 : float, default=1.0
"""
#: The docstring of the searches' ``random_state`` and their attributes of the search.
SEARCH_DOC = """    random_state : int, RandomState or None
        Seeds the centres and the held-out split of ``validation_fraction``.

    Attributes
    ----------
    alpha_, gamma_ : float
        The best point of the grid (the first of equal mean scores).
    best_score_ : float
        Its mean cross-validated score.
    best_index_ : int
        Its index in ``cv_results_``.
    cv_results_ : dict of ndarray
        Read by ``pandas.DataFrame`` as ``GridSearchCV``'s: ``params``,
        ``param_alpha``, ``param_gamma``, ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score``.
"""
#: What ``kernel_cache`` means to the cross-validated ridge searches (after the plain machine's text).
GRID_CACHE_DOC = """        In the search itself ``'auto'`` keeps no blocks: a scorer other than R²
        reads each bandwidth's blocks once more (the test folds' predictions), and
        evaluating them again (one distance product shared by every bandwidth, then
        each bandwidth's formula) costs less than writing them to memory and reading
        them back. A number keeps them within that budget. The refit reads
        ``kernel_cache`` as the plain machine does.
"""
#: The input checks of the target mixins' ``fit``: cross-validation needs two rows
#: (scikit-learn's error then names "1 sample").
TARGET_INPUT = {"ensure_min_samples": 2}


def check_gammas(gammas):
    """``None`` for ``'auto'``, else the bandwidths as a float64 array (or an error naming the problem)."""
    if isinstance(gammas, str) and gammas == "auto":
        return None
    return check_grid(gammas, "gammas", "'auto' for multiples of the 'scale' heuristic; for one gamma, "
                      "fit NystroemKernelRidge or NystroemKernelRidgeClassifier")


class InMemoryFit:
    """``fit`` that refuses Dask input by name; before the target mixins' ``fit`` in the MRO."""

    def fit(self, X, y):
        """Search the (gamma, alpha) grid by cross-validation, then refit at the best point.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets, or a classifier's labels.

        Returns
        -------
        self
        """
        if is_dask_array(X) or is_dask_array(y):
            raise TypeError(f"{type(self).__name__} takes rows in memory, not Dask arrays: compute them "
                            "(X.compute()) when they fit, or search on a sample in memory and fit "
                            "NystroemKernelRidge on the Dask rows at the chosen alpha_ and gamma_")
        return super().fit(X, y)


class RefittedClassifier:
    """A cross-validated classifier's outputs: its refitted plain machine's; its labels scored as classes."""

    def decision_function(self, X):
        """The refitted model's one-vs-rest scores; shape (n_samples,) for two classes."""
        model, X = self._fitted_model(X)
        return model.decision_function(X)

    def predict(self, X):
        """The refitted model's classes."""
        model, X = self._fitted_model(X)
        return model.predict(X)

    def _truth(self, labels):
        return self.classes_[labels]

    def _scored_classes(self):
        return self.classes_


class NystroemCVBase(FittedKernelMixin, RegisteredEstimator, BaseEstimator):
    """Nyström kernel ridge with ``gamma`` and ``alpha`` chosen by cross-validation on shared kernel blocks.

    Subclasses name the plain machine refitted at the chosen point (``plain_machine``)
    and how targets are scored (``_truth``, ``_scored_classes``).
    """

    kind = "learner"
    kernel_family = "any"
    paper = ("Rudi, Carratino & Rosasco, FALKON, NIPS 2017; Golub, Heath & Wahba, Technometrics 1979 "
             "(every penalty from one eigendecomposition)")
    test_params = {"n_components": 10, "alphas": (0.1, 1.0, 10.0), "gammas": (0.01, 0.05), "cv": 3}
    #: The plain estimator refitted at the chosen point (set by each public class).
    plain_machine = None

    kernel = KernelParameter()

    def __init__(self, n_components="auto", *, alphas=DEFAULT_ALPHAS, gammas="auto", kernel="gaussian",
                 degree=2, coef0=1.0, nu=1.5, landmarks="uniform", cv=None, validation_fraction=None,
                 scoring=None, refit=True, kernel_cache="auto", verbose=False, random_state=None):
        self.n_components = n_components
        self.alphas = alphas
        self.gammas = gammas
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.nu = nu
        self.landmarks = landmarks
        self.cv = cv
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.refit = refit
        self.kernel_cache = kernel_cache
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------ set-up
    def _check_params(self, n_features, classifier):
        """Validate every parameter before any work; the grid and the :class:`Scoring`."""
        alphas, gammas = check_alphas(self.alphas), check_gammas(self.gammas)
        self.kernel_, self.degree_, self.coef0_ = check_kernel_params(self.kernel, self.degree, self.coef0)
        self.nu_ = check_nu(self.nu)
        check_landmarks(self.landmarks, landmark_count(self.n_components, np.inf, self.landmarks,
                                                       auto=AUTO_CENTRES), n_features)
        check_bool(self.refit, "refit")
        check_bool(self.verbose, "verbose")
        check_kernel_cache(self.kernel_cache)
        scoring = self._check_scoring(classifier)
        if scoring.kind == "evidence" and (self.cv is not None or self.validation_fraction is not None):
            raise ValueError("scoring='evidence' scores every point by the marginal likelihood of all rows, with no "
                             "held-out rows: leave cv=None and validation_fraction=None")
        if self.validation_fraction is not None:
            check_fraction(self.validation_fraction, "validation_fraction", allow_zero=False)
            if self.cv is not None:
                raise ValueError(f"give cv or validation_fraction, not both: cv={self.cv!r} asks for "
                                 f"folds, validation_fraction={self.validation_fraction!r} for one held-out split")
        return alphas, gammas, scoring

    def _check_scoring(self, classifier):
        return check_scoring(self.scoring, classifier, weighted=False)

    def _folds(self, X, y, labels):
        """``(membership, partition)``: whether each row is in each test fold, and whether they partition the rows."""
        if self.validation_fraction is None:
            return fold_membership(DEFAULT_FOLDS if self.cv is None else self.cv, X, y, None, labels is not None)
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        _, held_out = validation_rows(X.shape[0], float(self.validation_fraction), labels, seed,
                                      "give more rows, or cv folds")
        membership = np.zeros((X.shape[0], 1), dtype=bool)
        membership[held_out, 0] = True
        return membership, False

    def _check_memory(self, m, X, n_gammas, n_splits, n_alphas, n_outputs, scoring):
        """Refuse, before any centre is drawn, a grid whose ``m x m`` matrices or tables do not fit."""
        n, d = X.shape
        # per bandwidth: every test fold's normal equations, all rows', the Cholesky factor;
        # then one training system, its eigenvectors and a product
        squares = n_gammas * (n_splits + 2) + 3
        second_pass = scoring.kind != "squared"
        coefficients = (n_gammas * n_splits if second_pass else 2) * m * n_alphas * n_outputs
        collected = n_gammas * n * n_alphas * n_outputs if scoring.kind == "scorer" else 0
        _, chunk = chunk_rows(n, n_gammas, m, d, X.dtype.itemsize)
        n_bytes = 8 * (squares * m * m + coefficients + collected + 2 * chunk * m) \
            + n_gammas * chunk * m * X.dtype.itemsize
        check_fits_in_memory(n_bytes, f"n_components={m}", f"{squares} matrices of {m} x {m} ({n_gammas} gammas "
                             f"x {n_splits} folds) and every penalty's coefficients ({n_alphas} alphas)",
                             "use fewer centres, gammas or folds")

    def _set_up(self, X, alphas, gammas, n_splits, n_outputs, scoring):
        """Draw the centres once from all rows; set the grid ``gammas_`` and the kernel cache plan."""
        rng = check_random_state(self.random_state)
        n_gammas = len(AUTO_GAMMA_FACTORS) if gammas is None else len(gammas)
        set_up_landmarks(X, self.n_components, self.landmarks, rng, gamma="scale", kernel=self.kernel_,
                         kernel_params=self._kernel_params_for, auto=AUTO_CENTRES,
                         before_draw=lambda m: self._check_memory(m, X, n_gammas, n_splits, len(alphas), n_outputs,
                                                                  scoring)).set_on(self)
        self.gammas_ = np.asarray(AUTO_GAMMA_FACTORS) * self.gamma_ if gammas is None else gammas
        kept = n_gammas * X.shape[0] * self.n_components_ * X.dtype.itemsize
        # the search reads its blocks twice at most: 'auto' keeps none of them (see GRID_CACHE_DOC)
        budget = 0 if isinstance(self.kernel_cache, str) else kernel_cache_budget(self.kernel_cache)
        keep = scoring.kind != "squared" and kept <= min(budget, MEMORY_FRACTION * available_memory_bytes())
        self.kernel_cache_ = kept if keep else 0

    def _factors(self, dtype):
        """Each bandwidth's upper ``T`` with ``T^T T = K_mm + jitter I``, jittered as the fitted machine does."""
        eps = float(np.finfo(dtype).eps)
        return [cholesky_with_jitter(exact_kernel(self.components_, None, **self._kernel_params_for(gamma)), eps)[0]
                for gamma in self.gammas_]

    # ------------------------------------------------------------ search
    def _fit_targets(self, X, y, labels):
        classifier = labels is not None
        alphas, gammas, scoring = self._check_params(X.shape[1], classifier)
        X = np.ascontiguousarray(X, dtype=np.float32 if X.dtype == np.float32 else np.float64)
        T = np.asarray(y, dtype=np.float64).reshape(len(y), -1)
        evidence = scoring.kind == "evidence"
        if evidence:
            # no test folds: the pass sums all rows' normal equations only
            membership, partition = np.zeros((X.shape[0], 0), dtype=bool), False
        else:
            membership, partition = self._folds(X, y if labels is None else self.classes_[labels], labels)
        self._set_up(X, alphas, gammas, membership.shape[1], T.shape[1], scoring)
        grid = GridBlocks(X, self.components_, self._kernel_params_for(None), self.gammas_, self.kernel_cache_ > 0)
        n_folds, n_gammas = membership.shape[1], len(self.gammas_)
        second = scoring.kind not in ("squared", "evidence")
        with self._progress(grid.n_chunks() * (1 + second) + max(n_folds, 1) * n_gammas + self.refit) as bar:
            factors = self._factors(X.dtype)
            if classifier:
                code = one_vs_rest_code(len(self.classes_))
                targets = (lambda lo, hi: {"labels": labels[lo:hi], "code": code})
            else:
                targets = (lambda lo, hi: {"T": T[lo:hi]})
            moments = fold_moments(grid, factors, membership, partition, T.shape[1], targets, bar)
            if evidence:
                split_scores = self._log_evidence(moments, alphas, bar)
            else:
                split_scores, coefficients = self._score_paths(moments, factors, alphas, scoring, bar)
            if second:
                parts = fold_outputs(grid, coefficients, membership, T if labels is None else labels, len(alphas),
                                     scoring.kind == "scorer", classifier, bar)
                self._score_outputs(parts, split_scores, scoring)
            del grid
            self._select(alphas, split_scores)
            if self.refit:
                start = self._chosen_solution(moments, factors)
                del moments
                self.best_estimator_ = self._refit(X, y if labels is None else self.classes_[labels], start)
                bar.update(1)

    def _score_paths(self, moments, factors, alphas, scoring, bar):
        """Every fold's scores from its moments (squared errors), or the coefficients ``a`` to score by predictions."""
        n_folds = len(moments[0].tests)
        split_scores = np.full((n_folds, len(alphas), len(factors)), np.nan)
        coefficients = [[None] * n_folds for _ in factors]

        def solve(g, k):
            coef, test = fold_solution(moments[g], k, alphas), moments[g].tests[k]
            if scoring.kind == "squared":
                sse = squared_error_sums(test, coef, np.zeros(coef.shape[1:]))
                split_scores[k, :, g] = squared_error_score(scoring.name, sse, total_sum_of_squares(test),
                                                            test.weight_sum)
            else:
                shape = coef.shape
                coefficients[g][k] = scipy.linalg.solve_triangular(factors[g], coef.reshape(shape[0], -1),
                                                                   check_finite=False).reshape(shape)
            bar.update(1)

        each_fold(len(factors), n_folds, solve)
        return split_scores, coefficients

    def _log_evidence(self, moments, alphas, bar):
        """Every point's DTC log marginal likelihood of all rows, shape (1, n_alphas, n_gammas).

        The DTC model ``y ~ N(0, s (Phi Phi^T + alpha I))`` is Bayesian linear
        regression on the Nyström features ``Phi``: one eigendecomposition of
        ``Phi^T Phi`` per bandwidth gives every penalty's evidence, the amplitude
        ``s`` at its maximizer (:class:`NystroemKernelRidge`'s
        ``dtc_log_marginal_likelihood_`` with ``variance='dtc'`` and ``amplitude='dtc'``).
        """
        scores = np.empty((1, len(alphas), len(moments)))
        for g, accumulated in enumerate(moments):
            total = accumulated.all_rows()
            path = RidgePath(*centred_system(total, fit_intercept=False), alphas, fit_intercept=False)
            scores[0, :, g] = path_log_evidence(path, total, fit_intercept=False)
            bar.update(1)
        return scores

    def _score_outputs(self, parts, split_scores, scoring):
        for g, part in enumerate(parts):
            for k in range(split_scores.shape[0]):
                if scoring.kind == "accuracy":
                    split_scores[k, :, g] = part.hits[k] / part.counted[k]
                else:
                    outputs, targets, weights = part.rows(k)
                    split_scores[k, :, g] = scorer_scores(scoring, outputs, self._truth(targets), weights,
                                                          self._scored_classes())

    def _select(self, alphas, split_scores):
        """``cv_results_`` in ``GridSearchCV``'s order of ``{'alpha': alphas, 'gamma': gammas}``
        (alpha outer, gamma inner), and the best point (the first of equals, as it takes)."""
        n_folds, n_alphas, n_gammas = split_scores.shape
        results = cv_results(np.repeat(alphas, n_gammas), split_scores.reshape(n_folds, n_alphas * n_gammas))
        results["param_gamma"] = np.tile(self.gammas_, n_alphas)
        results["params"] = [{"alpha": float(a), "gamma": float(g)}
                             for a, g in zip(results["param_alpha"], results["param_gamma"])]
        self.cv_results_ = results
        self.best_index_ = best_index(results["mean_test_score"])
        self.alpha_ = float(results["param_alpha"][self.best_index_])
        self.gamma_ = float(results["param_gamma"][self.best_index_])
        self.best_score_ = float(results["mean_test_score"][self.best_index_])

    def _chosen_solution(self, moments, factors):
        """The coefficients ``a`` of all rows at ``(gamma_, alpha_)``, from the moments the search formed:
        ``(Phi^T Phi + alpha I) w = Phi^T y``, ``a = T^-1 w``, solved as the folds' systems are."""
        g = self.best_index_ % len(self.gammas_)  # cv_results_ runs over gamma fastest
        solution = fold_solution(moments[g], None, [self.alpha_])
        return scipy.linalg.solve_triangular(factors[g], solution[:, 0, :], check_finite=False)

    def _refit(self, X, y, start):
        """The plain machine at ``(gamma_, alpha_)`` on every row, on the same centres.

        Its conjugate gradient starts from ``start``, the search's direct solution of the same
        system: for float64 rows it meets ``tol`` at once (``n_iter_ = 0``), where from zero it
        may need ``max_iter`` iterations at a small penalty; float32 rows' search rounds its
        features to float32, and CG refines from there."""
        model = self.plain_machine(n_components=self.n_components_, alpha=self.alpha_, kernel=self.kernel_,
                                   gamma=self.gamma_, degree=self.degree_, coef0=self.coef0_, nu=self.nu_,
                                   landmarks=self.components_, kernel_cache=self.kernel_cache,
                                   random_state=self.random_state)
        model._cg_start = start
        return model.fit(X, y)

    def _progress(self, total):
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=f"{type(self).__name__}: (gamma, alpha) search", disable=not self.verbose,
                    leave=False)

    # ------------------------------------------------------------ the fitted model
    def _fitted_model(self, X):
        """``(best_estimator_, validated X)``, or an error saying why there is no model."""
        check_is_fitted(self, "cv_results_")
        if not hasattr(self, "best_estimator_"):
            raise NotFittedError(f"{type(self).__name__} was fitted with refit=False: it chose alpha_ and gamma_ "
                                 "but fitted no model; set refit=True, or fit the plain machine at them")
        return self.best_estimator_, check_input(self, X, reset=False)

    def _scored_classes(self):
        return None
