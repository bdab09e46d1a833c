"""Nyström kernel ridge regression and classification with ``gamma`` and ``alpha`` chosen by
cross-validation: every fold, bandwidth and penalty of the grid from one pass over the rows."""

from sklearn.base import ClassifierMixin, RegressorMixin

from ._core.targets import OneVsRestFitMixin, RegressionFitMixin
from ._kernels.matern import NU_DOC
from ._machines.nystroem import KERNEL_CACHE_DOC
from ._machines.nystroem_cv import (GAMMAS_DOC, GRID_CACHE_DOC, SEARCH_DOC, TARGET_INPUT, InMemoryFit,
                                    NystroemCVBase, RefittedClassifier)
from .nystroem_kernel_ridge import NystroemKernelRidge, NystroemKernelRidgeClassifier

__all__ = ["NystroemKernelRidgeCV", "NystroemKernelRidgeClassifierCV"]

_SHARED_DOC = """
    The search scores the plain machine's model (``f(x) = sum_j a_j k(x, c_j)``
    minimizing ``||K a - y||^2 + alpha a^T K_mm a`` on a fold's training rows,
    ``K_mm`` jittered as the plain machine's fit does) at every point of the grid,
    exactly: ``GridSearchCV`` over the plain machine with the same centres
    (``landmarks=components_``), grid and folds gives the same scores, up to its
    conjugate gradient's tolerance. ``cv_results_`` lists the points in
    ``GridSearchCV``'s order of ``param_grid={'alpha': alphas, 'gamma': gammas}``
    (alpha outer, gamma inner); ties go to the first, as there.

    What the grid shares:

    - the centres, drawn once from all rows (a rule's draw, or given ones);
    - per block of rows, the product ``X C^T`` (one GEMM): each bandwidth's kernel
      block is its formula's epilogue on it (the L1 and Cauchy kernels start
      from the rows instead);
    - the folds: per bandwidth, one pass adds the features ``Phi = K T^{-1}``
      (``T^T T = K_mm + jitter I``) of each row to the normal equations of its
      test fold; a fold's training system is all rows' minus its own;
    - the penalties: one eigendecomposition of a training system gives every
      ``alpha``'s solution (ridge on ``Phi`` is the machine's objective); a grid
      of fewer than 10 penalties takes one Cholesky factorization each instead,
      which costs less (an eigendecomposition with its vectors costs about ten).

    R² and the squared errors follow from a fold's normal equations; accuracy
    and other scorers take one more pass computing each test fold's predictions
    for every ``alpha`` at once, evaluating the kernel blocks again (or reading
    them, ``n_gammas n m`` entries, kept within a ``kernel_cache`` budget in bytes).

    Cost: ``O(n m d + n_gammas n m^2)`` for the pass (two BLAS-3 products per row
    block and bandwidth: the triangular solve and the normal equations), one
    ``m x m`` eigendecomposition (or a factorization per penalty) per bandwidth
    and fold, then the refit: the plain machine's fit, its conjugate gradient
    started from the search's direct solution at the best point, which meets
    ``tol`` at once for float64 rows (two passes; float32 rows' features are
    rounded to float32 in the search, so CG still refines). Memory: ``n_gammas (n_folds + 2) + 3`` float64
    matrices of ``m x m``, refused up front when they do not fit. Rows in memory
    only: a Dask array is refused (search on a sample, then fit the plain
    machine on the Dask rows at ``gamma_`` and ``alpha_``).

    Parameters
    ----------
    n_components : int or 'auto', default='auto'
        The centres ``m``, as in :class:`NystroemKernelRidge` (``'auto'``:
        ``min(1000, n)``), drawn from all rows.
    alphas : array-like of shape (n_alphas,), default=(1e-6, 1e-5, ..., 1e6)
        Positive finite penalties, :class:`NystroemKernelRidge`'s ``alpha``
        (on the scale of the summed squared errors). Each further penalty costs
        ``O(m^2)`` per bandwidth and fold.
""" + GAMMAS_DOC + """""" + NU_DOC + """    landmarks : {'uniform', 'kmeans', 'leverage'} or array of shape (m, n_features)
        How the centres are chosen, as in :class:`kernelmaps.Nystroem`; the
        ``'leverage'`` rule scores the rows with the kernel at the ``'scale'``
        heuristic's bandwidth.
    cv : None, int, cross-validation generator or iterable, default=None
        None: 5 folds (or one held-out split with ``validation_fraction``). An
        int ``k``: ``KFold(k)`` (``StratifiedKFold(k)`` for the classifier); a
        splitter or an iterable of ``(train, test)`` pairs, as ``GridSearchCV``
        takes them, each split's training rows exactly the rows outside its test
        rows.
    validation_fraction : float in (0, 1) or None, default=None
        Score on one held-out share of the rows (stratified for the classifier)
        instead of folds: ``cv`` must then be None.
    scoring : str or callable, default=None
        None: R² for the regressor, accuracy for the classifier. A scikit-learn
        scorer name (``sklearn.metrics.get_scorer``) or a callable
        ``scorer(estimator, X, y)`` of ``predict`` or ``decision_function``.
        ``'evidence'`` (the regressor's, with ``cv=None``): no folds; each point
        scored by the DTC log marginal likelihood of all rows, the amplitude at
        its maximizer (:class:`NystroemKernelRidge`'s
        ``dtc_log_marginal_likelihood_`` with ``variance='dtc'`` and
        ``amplitude='dtc'``), every penalty from one eigendecomposition per
        bandwidth.
    refit : bool, default=True
        Fit the plain machine at the best ``(gamma_, alpha_)`` on every row (on
        the same centres; its conjugate gradient at the plain machine's default
        ``tol`` and ``max_iter``). False fits no model: ``predict`` then raises,
        and only the search's attributes are set.
""" + KERNEL_CACHE_DOC + GRID_CACHE_DOC + """    verbose : bool, default=False
        One tqdm progress bar over the whole search (passes, eigendecompositions, refit).
""" + SEARCH_DOC + """    best_estimator_ : estimator
        The plain machine refitted at the best point (with ``refit=True``), its
        conjugate gradient started from the search's solution (``n_iter_`` 0 for
        float64 rows).
    gammas_ : ndarray of shape (n_gammas,)
        The bandwidths searched (``'auto'`` resolved).
    components_ : ndarray of shape (n_components_, n_features)
        The centres, shared by every fit of the search and by the refit.
    n_components_ : int
    component_indices_ : ndarray of int or None
        The rows used as centres (``None`` for k-means or given centres).
    kernel_ : str
    kernel_cache_ : int
        Bytes of kernel blocks kept between the passes (0: none).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of a ``DataFrame`` ``X``, if it had string names.
    classes_ : ndarray of shape (n_classes,)
        The classifier's classes.

    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017.
    Golub, G. H., Heath, M. and Wahba, G. Generalized cross-validation as a
    method for choosing a good ridge parameter. Technometrics 21(2), 1979.
"""


class NystroemKernelRidgeCV(RegressorMixin, InMemoryFit, RegressionFitMixin, NystroemCVBase):
    __doc__ = """Nyström kernel ridge regression with ``gamma`` and ``alpha`` chosen by cross-validation.

    :class:`NystroemKernelRidge` searched over a ``gammas x alphas`` grid at
    the cost of about one pass over the rows per bandwidth, then refitted at
    the best point.
""" + _SHARED_DOC + """
    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import NystroemKernelRidgeCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(2000, 2))
    >>> y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(2000)
    >>> reg = NystroemKernelRidgeCV(n_components=200, alphas=[1e-3, 1e-1, 10.0], gammas=[0.05, 0.5, 5.0],
    ...                             random_state=0).fit(X, y)
    >>> reg.gamma_, reg.alpha_
    (0.5, 0.1)
    >>> len(reg.cv_results_["params"]), round(reg.best_score_, 2)
    (9, 0.96)
"""

    name = "nystroem_kernel_ridge_cv"
    plain_machine = NystroemKernelRidge
    _multi_output_targets = True
    _target_input = TARGET_INPUT

    def predict(self, X):
        """The refitted model's predictions (shape ``(n_samples,)`` for a 1-D ``y``)."""
        model, X = self._fitted_model(X)
        return model.predict(X)

    def _truth(self, targets):
        return targets[:, 0] if targets.shape[1] == 1 else targets

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class NystroemKernelRidgeClassifierCV(ClassifierMixin, RefittedClassifier, InMemoryFit, OneVsRestFitMixin,
                                      NystroemCVBase):
    __doc__ = """Nyström kernel ridge classification with ``gamma`` and ``alpha`` chosen by cross-validation.

    :class:`NystroemKernelRidgeClassifier` (one-vs-rest regression onto +1 / -1,
    one column for two classes) searched over a ``gammas x alphas`` grid, then
    refitted at the best point. The folds score the classes of all rows: a
    training fold that misses a class still has its column, as ``GridSearchCV``
    does not (use stratified folds, the default for an int ``cv``).
""" + _SHARED_DOC + """
    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import NystroemKernelRidgeClassifierCV
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NystroemKernelRidgeClassifierCV(n_components=50, alphas=[1e-2, 1.0], gammas=[0.1, 1.0],
    ...                                       random_state=0).fit(X, y)
    >>> clf.cv_results_["mean_test_score"].shape
    (4,)
    >>> bool(clf.best_score_ > 0.9), clf.predict(X[:3]).tolist()
    (True, [0, 0, 0])
"""

    name = "nystroem_kernel_ridge_classifier_cv"
    plain_machine = NystroemKernelRidgeClassifier
    _target_input = TARGET_INPUT
