"""Nyström kernel logistic regression with ``gamma`` and ``alpha`` chosen by cross-validation:
every fold a column of the same Newton steps, every ``alpha`` a point of one ridge path."""

import warnings

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from ._core.targets import OneVsRestFitMixin
from ._core.validation import check_fits_in_memory, check_integer, check_positive, user_stacklevel
from ._kernels.exact import exact_kernel
from ._kernels.matern import NU_DOC
from ._machines.cv_scoring import check_logistic_scoring, logistic_score
from ._machines.nystroem import KERNEL_CACHE_DOC, kernel_cache_budget
from ._machines.nystroem_cv import (GAMMAS_DOC, SEARCH_DOC, TARGET_INPUT, InMemoryFit, NystroemCVBase,
                                    RefittedClassifier)
from ._solvers.kernel_operator import KernelOperator
from ._solvers.logistic_newton import nystroem_logistic_newton
from ._solvers.logistic_passes import LogisticPasses
from .nystroem_logistic import (NystroemLogisticRegression, check_hessian_dtype, plan_logistic_cache,
                                 uses_float32_hessian)

__all__ = ["NystroemLogisticRegressionCV"]

#: The default penalties, ``1 / C`` from 1e-3 to 1e3: below them a separable fold's
#: logits grow without bound and its Newton steps stop at ``max_iter`` unconverged;
#: each costs a few Newton steps per bandwidth.
DEFAULT_LOGISTIC_ALPHAS = tuple(10.0**k for k in range(-3, 4))


class NystroemLogisticRegressionCV(ClassifierMixin, RefittedClassifier, InMemoryFit, OneVsRestFitMixin,
                                   NystroemCVBase):
    __doc__ = """Nyström kernel logistic regression with ``gamma`` and ``alpha`` chosen by cross-validation.

    :class:`NystroemLogisticRegression` searched over a ``gammas x alphas`` grid,
    then refitted at the best point. The search scores the plain machine's model
    (one-vs-rest logistic columns on the same centres) at every point of the grid:
    ``GridSearchCV`` over the plain machine with the same centres
    (``landmarks=components_``), grid and folds gives the same scores, up to the
    Newton steps' tolerance. ``cv_results_`` lists the points in ``GridSearchCV``'s
    order of ``param_grid={'alpha': alphas, 'gamma': gammas}`` (alpha outer,
    gamma inner); ties go to the first, as there.

    What the search shares:

    - the centres, drawn once from all rows (a rule's draw, or given ones);
    - the folds: every fold's one-vs-rest columns are columns of the same Newton
      steps on all rows, a fold's own rows weighted zero in its columns' loss,
      so each pass over the rows (one per CG iteration) serves every fold and
      class, and each bandwidth's kernel block ``K(X, C)`` is computed once and
      kept when ``kernel_cache`` allows;
    - the penalties: one decreasing ridge path per bandwidth (Meanti et al.'s
      path, warm-started from each solution), stopping at every ``alpha`` of the
      grid until its Newton steps converge; the test folds' logits of that
      solution come from the pass that evaluated it, with no extra pass.

    Bandwidths run one after the other, each its own path. A training fold that
    misses a class still has that class's column (``GridSearchCV``'s plain
    machine would not): use stratified folds, the default for an int ``cv``.

    Cost: per bandwidth, the passes of one fit whose right-hand sides are
    ``n_folds x n_outputs`` columns (``O(n m (d + columns))`` each), through
    every penalty's Newton steps; then the refit (one fit of the plain machine).
    Memory: ``4 n n_folds n_outputs`` float64 values (targets, weights, logits,
    a pass's products) and six ``m x m`` matrices, refused up front when they do
    not fit, plus the kept block. A Dask array is refused: search on a sample in
    memory, then fit :class:`NystroemLogisticRegression` on the Dask rows at
    ``gamma_`` and ``alpha_``.

    Parameters
    ----------
    n_components : int or 'auto', default='auto'
        How many centres ``m`` every fit of the search shares; ``'auto'`` takes
        ``min(1000, n)`` of all the rows.
    alphas : array-like of shape (n_alphas,), default=(1e-3, 1e-2, ..., 1e3)
        Positive finite penalties, :class:`NystroemLogisticRegression`'s
        ``alpha`` (``1 / C`` of ``LogisticRegression``), walked from the largest.
""" + GAMMAS_DOC + """""" + NU_DOC + """    landmarks : {'uniform', 'kmeans', 'leverage'} or array of shape (m, n_features)
        How the centres are chosen, as in :class:`kernelmaps.Nystroem`.
    cv : None, int, cross-validation generator or iterable, default=None
        None: 5 stratified folds (or one held-out split with
        ``validation_fraction``). An int ``k``: ``StratifiedKFold(k)``; a splitter
        or an iterable of ``(train, test)`` pairs, as ``GridSearchCV`` takes
        them, each split's training rows exactly the rows outside its test rows.
    validation_fraction : float in (0, 1) or None, default=None
        Score on one stratified held-out share of the rows instead of folds:
        ``cv`` must then be None.
    scoring : str or callable, default=None
        None: accuracy. A scikit-learn scorer name (``'neg_log_loss'``,
        ``'roc_auc'``, ...) or a callable ``scorer(estimator, X, y)`` of
        ``predict``, ``decision_function`` or ``predict_proba``.
    fit_intercept : bool, default=True
    max_iter : int, default=20
        Newton steps per penalty (the path's included).
    tol : float, default=1e-4
        The Newton steps' tolerance, as :class:`NystroemLogisticRegression`'s.
    cg_max_iter : int, default=20
        Conjugate gradient iterations per Newton step.
    refit : bool, default=True
        Fit the plain machine at the best ``(gamma_, alpha_)`` on every row (on
        the same centres). False fits no model: ``predict`` then raises, and only
        the search's attributes are set.
""" + KERNEL_CACHE_DOC + """        With float32 Hessian products (below) the search keeps their float32
        blocks first, then the blocks in the rows' dtype as well when both fit.
    hessian_dtype : {'auto', 'float32', 'float64'}, default='auto'
        The precision of the Hessian products inside each Newton step's CG, as
        :class:`NystroemLogisticRegression`'s (which the refit gets): ``'auto'``
        is float32 for float64 rows. The gradients, objectives and scored logits
        stay in the rows' dtype; a path whose steps stall on the products'
        rounding moves to float64 products for the rest of its bandwidth.
    verbose : bool, default=False
        One tqdm progress bar over the whole search (every penalty of every
        bandwidth, then the refit).
""" + SEARCH_DOC + """    best_estimator_ : NystroemLogisticRegression
        Refitted at the best point (with ``refit=True``).
    n_iter_ : ndarray of int of shape (n_gammas,)
        Newton steps of each bandwidth's path, every penalty's included.
    converged_ : ndarray of bool of shape (n_alphas, n_gammas)
        Whether each point's Newton steps reached ``tol`` (a point that did not
        is scored as it stands, with a ``ConvergenceWarning``).
    gammas_ : ndarray of shape (n_gammas,)
    classes_ : ndarray of shape (n_classes,)
    components_ : ndarray of shape (n_components_, n_features)
    n_components_ : int
    component_indices_ : ndarray of int or None
    kernel_ : str
    kernel_cache_ : int
        Bytes of one bandwidth's kernel blocks kept between the passes (0: none;
        the float32 blocks of the Hessian products and the rows' dtype's, when kept).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
    Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. Kernel methods through the
    roof: handling billions of points efficiently. NeurIPS 2020.
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kernelmaps import NystroemLogisticRegressionCV
    >>> X, y = make_moons(600, noise=0.3, random_state=0)
    >>> clf = NystroemLogisticRegressionCV(60, alphas=[1e-2, 1e-1, 1.0, 10.0], gammas=[0.1, 1.0, 10.0],
    ...                                    scoring="neg_log_loss", cv=3, random_state=0).fit(X, y)
    >>> clf.gamma_, clf.alpha_, round(-clf.best_score_, 2)
    (1.0, 0.1, 0.23)
    >>> clf.predict([[0.0, 1.0], [1.0, -0.5]]).tolist()  # the upper moon, the lower moon
    [0, 1]
"""

    name = "nystroem_logistic_regression_cv"
    plain_machine = NystroemLogisticRegression
    paper = ("Meanti, Carratino, Rosasco & Rudi, Kernel methods through the roof, NeurIPS 2020 "
             "(the ridge path of logistic Falkon)")
    test_params = {"n_components": 10, "alphas": (0.1, 1.0, 10.0), "gammas": (0.01, 0.05), "cv": 3}
    _target_input = TARGET_INPUT

    def __init__(self, n_components="auto", *, alphas=DEFAULT_LOGISTIC_ALPHAS, gammas="auto", kernel="gaussian",
                 degree=2, coef0=1.0, nu=1.5, landmarks="uniform", cv=None, validation_fraction=None,
                 scoring=None, fit_intercept=True, max_iter=20, tol=1e-4, cg_max_iter=20, refit=True,
                 kernel_cache="auto", hessian_dtype="auto", verbose=False, random_state=None):
        super().__init__(n_components, alphas=alphas, gammas=gammas, kernel=kernel, degree=degree, coef0=coef0,
                         nu=nu, landmarks=landmarks, cv=cv, validation_fraction=validation_fraction,
                         scoring=scoring, refit=refit, kernel_cache=kernel_cache, verbose=verbose,
                         random_state=random_state)
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.cg_max_iter = cg_max_iter
        self.hessian_dtype = hessian_dtype

    def _check_params(self, n_features, classifier):
        check_hessian_dtype(self.hessian_dtype)
        check_integer(self.max_iter, "max_iter")
        check_integer(self.cg_max_iter, "cg_max_iter")
        check_positive(self.tol, "tol")
        return super()._check_params(n_features, classifier)

    def _check_scoring(self, classifier):
        return check_logistic_scoring(self.scoring)

    def _check_memory(self, m, X, n_gammas, n_splits, n_alphas, n_outputs, scoring):
        """Refuse, before any centre is drawn, columns or ``m x m`` matrices that do not fit."""
        columns = X.shape[0] * n_splits * n_outputs
        # the float32 copy of the rows for the Hessian products
        single_copy = 4 * X.size if uses_float32_hessian(self.hessian_dtype, X.dtype) else 0
        check_fits_in_memory(8 * (4 * columns + 6 * m * m) + single_copy, f"n_components={m}",
                             f"{n_splits} folds x {n_outputs} one-vs-rest columns of {X.shape[0]} rows and six "
                             f"matrices of {m} x {m}", "use fewer centres or folds")

    def _fit_targets(self, X, T, labels):
        alphas, gammas, scoring = self._check_params(X.shape[1], classifier=True)
        X = np.ascontiguousarray(X, dtype=np.float32 if X.dtype == np.float32 else np.float64)
        membership, _ = self._folds(X, self.classes_[labels], labels)
        n_folds, n_outputs = membership.shape[1], T.shape[1]
        self._set_up(X, alphas, gammas, n_folds, n_outputs, scoring)
        single = uses_float32_hessian(self.hessian_dtype, X.dtype)
        keep, keep_single, self.kernel_cache_ = plan_logistic_cache(
            kernel_cache_budget(self.kernel_cache), X.shape[0], X.shape[0], self.n_components_, X.dtype, single)
        X_single = X.astype(np.float32) if single else None
        # the penalties in decreasing order: the path's order; a stable sort keeps equal ones in grid order
        order = np.argsort(-alphas, kind="stable")
        split_scores = np.full((n_folds, len(alphas), len(self.gammas_)), np.nan)
        self.converged_ = np.zeros((len(alphas), len(self.gammas_)), dtype=bool)
        self.n_iter_ = np.zeros(len(self.gammas_), dtype=int)
        Y = np.tile(T, (1, n_folds))  # fold f's one-vs-rest columns are f n_outputs ... (f + 1) n_outputs - 1
        column_fold = np.repeat(np.arange(n_folds), n_outputs)

        def row_weights(lo, hi):
            return (~membership[lo:hi])[:, column_fold].astype(np.float64)

        with self._progress(len(self.gammas_) * len(alphas) + self.refit) as bar:
            for g, gamma in enumerate(self.gammas_):
                params = self._kernel_params_for(gamma)
                hessian = KernelOperator(X_single, self.components_, keep_blocks=keep_single, **params) \
                    if single else None
                passes = LogisticPasses(KernelOperator(X, self.components_, keep_blocks=keep, **params), Y,
                                        row_weights, hessian=hessian)

                def on_target(index, a, b, converged, g=g, passes=passes):
                    self.converged_[order[index], g] = converged
                    for k in range(n_folds):
                        rows = membership[:, k]
                        logits = passes.logits[rows, k * n_outputs:(k + 1) * n_outputs]
                        split_scores[k, order[index], g] = logistic_score(scoring, logits, self.classes_[labels[rows]],
                                                                          self.classes_)
                    bar.update(1)

                # the plain machine's ridge on a fold's rows, alpha / n_train, scales that fold's mean loss; the
                # columns here weight all rows' mean loss, so alpha / n gives each fold's minimizer
                result = nystroem_logistic_newton(
                    passes, exact_kernel(self.components_, None, **params), alphas[order] / X.shape[0],
                    fit_intercept=bool(self.fit_intercept), centres_are_rows=self.component_indices_ is not None,
                    max_iter=self.max_iter, tol=self.tol, cg_max_iter=self.cg_max_iter, on_target=on_target)
                self.n_iter_[g] = result.n_iter
            self._select(alphas, split_scores)
            if not self.converged_.all():
                self._warn_unconverged()
            if self.refit:
                self.best_estimator_ = self._refit(X, self.classes_[labels])
                bar.update(1)

    def _warn_unconverged(self):
        points = int((~self.converged_).sum())
        warnings.warn(f"{points} of {self.converged_.size} (alpha, gamma) points stopped at max_iter={self.max_iter} "
                      "Newton steps before reaching tol, and were scored there: raise max_iter or tol",
                      ConvergenceWarning, stacklevel=user_stacklevel())

    def _refit(self, X, y):
        """The plain machine at ``(gamma_, alpha_)`` on every row, on the same centres."""
        model = NystroemLogisticRegression(
            n_components=self.n_components_, alpha=self.alpha_, kernel=self.kernel_, gamma=self.gamma_,
            degree=self.degree_, coef0=self.coef0_, nu=self.nu_, landmarks=self.components_,
            fit_intercept=self.fit_intercept, max_iter=self.max_iter, tol=self.tol, cg_max_iter=self.cg_max_iter,
            kernel_cache=self.kernel_cache, hessian_dtype=self.hessian_dtype, random_state=self.random_state)
        return model.fit(X, y)

    def predict_proba(self, X):
        """The refitted model's class probabilities (see :meth:`NystroemLogisticRegression.predict_proba`)."""
        model, X = self._fitted_model(X)
        return model.predict_proba(X)

    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
