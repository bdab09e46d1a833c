"""Exact kernel SVM by greedy dual coordinate descent with an LRU cache of kernel columns."""

from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted

from ._base import KernelParameter, RegisteredEstimator, classes_from_scores, encode_classes
from ._kernel_params import FittedKernelMixin
from ._kernels import GAMMA_SAMPLE_SEED, check_kernel_params, exact_kernel, resolve_gamma
from ._solvers.platt import class_probabilities, fit_sigmoids
from ._solvers.svm_dual import SOLVER_VECTORS, _Solver
from ._validation import (check_bool, check_choice, check_fits_in_memory, check_input, check_n_components,
                          check_positive, clear_fitted_state)
from ._sample_weights import box_constraints, check_class_weight, svm_row_weights

__all__ = ["KernelSVC"]

#: Folds of the cross-validation that gives ``probability=True`` its held-out decision values (LIBSVM's 5).
N_FOLDS = 5


class _Params(NamedTuple):
    """:class:`KernelSVC`'s parameters, validated, with ``selection='auto'`` resolved."""

    C: float
    tol: float
    cache_mb: float
    max_iter: int
    kernel: str
    degree: int
    coef0: float
    selection: str
    shrinking: bool
    probability: bool


class _Model(NamedTuple):
    """The binary problems of one training run: ``y_i a_i`` per problem and row, and the rest."""

    dual: np.ndarray
    intercept: np.ndarray
    n_iter: np.ndarray
    pairs: np.ndarray


def _label(value):
    """A class label as the user wrote it (``3``, ``'cat'``), not as NumPy prints its scalars."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _decision_values(X, support_vectors, dual_coef, intercept, kernel_params):
    """``K(X, SV) dual_coef^T + intercept``, of shape (n_samples, n_problems)."""
    if len(support_vectors) == 0:
        return np.zeros((X.shape[0], dual_coef.shape[0]))
    K = exact_kernel(np.asarray(X, dtype=np.float64), support_vectors, **kernel_params)
    return K @ dual_coef.T + intercept


class KernelSVC(ClassifierMixin, FittedKernelMixin, RegisteredEstimator, BaseEstimator):
    """Exact kernel SVM: LIBSVM's SMO with shrinking, or greedy dual coordinate descent.

    By default (``selection='auto'`` with ``fit_intercept``) it solves LIBSVM's
    dual with a free bias, ``min_a 1/2 a^T Q a - e^T a`` subject to
    ``y^T a = 0`` and ``0 <= a_i <= C_i``, ``Q_ij = y_i y_j k(x_i, x_j)``, by SMO
    with second-order working-set selection and shrinking
    (:func:`kernelmaps._solvers.smo._smo_second_order`), as scikit-learn's ``SVC`` does.
    ``selection='greedy'`` solves the lecture's dual without equality constraint,
    with ``Q_ij = y_i y_j (k(x_i, x_j) + 1)`` when ``fit_intercept`` (the bias is
    the weight of a constant feature, so it is regularized like the other
    weights) and ``Q_ij = y_i y_j k(x_i, x_j)`` otherwise, by greedy coordinate
    descent (:func:`kernelmaps._solvers.greedy_cd._greedy_coordinate_descent`).
    Multi-class problems train one binary SVM per class (one-vs-rest, the
    default: the problems share the cache of kernel columns) or per pair of
    classes (``multi_class='ovo'``, as ``SVC``). Each row's bound is
    ``C_i = C * class_weight[y_i] * sample_weight_i``, as LIBSVM's and ``SVC``'s;
    ``probability=True`` adds Platt's probabilities (:meth:`predict_proba`).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint (of a row of weight 1 and class weight 1).
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'polynomial', 'exponential'}
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or a heuristic (see :func:`kernelmaps.resolve_gamma`). The
        row sample of 'median' and 'knn50' is drawn with the fixed seed
        ``GAMMA_SAMPLE_SEED`` (not ``random_state``), so the bandwidth, like
        the rest of a fit without probabilities, is deterministic. It is
        computed on the rows of positive weight.
    degree : int, default=2
    coef0 : float, default=1.0
    tol : float, default=1e-3
        Second order: stop when the largest KKT violation ``m(a) - M(a)`` is
        below ``tol`` (as ``SVC``). Greedy: stop when the largest coordinate step
        ``max |delta_i|`` is below ``tol``.
    cache_size : float, default=200
        Memory of the kernel-column cache in MB (as scikit-learn's ``SVC``): it holds
        ``max(2, cache_size * 2**20 // (8 n))`` float64 columns of length n,
        evicted least recently used first.
    max_iter : int, default=1_000_000
        Coordinate steps per binary problem (a ``ConvergenceWarning`` if reached).
    fit_intercept : bool, default=True
        Add the constant 1 to the kernel (a regularized bias).
    multi_class : {'ovr', 'ovo'}, default='ovr'
        One-vs-rest (one problem per class on all rows, sharing the column cache,
        prediction by the largest decision value), or one-vs-one as LIBSVM and
        scikit-learn's ``SVC`` (one problem per pair of classes on their rows,
        prediction by votes, ties to the first class). On ``letter`` (26 classes)
        one-vs-one is what matches ``SVC``'s accuracy: both solvers reach the same
        one-vs-rest accuracy, about 1.6 points lower at C = 1.
    selection : {'auto', 'greedy', 'second_order'}, default='auto'
        ``'greedy'``: the lecture's greedy coordinate descent on the dual with the
        bias folded into the kernel (above). ``'second_order'``: LIBSVM's solver,
        SMO on the dual with a free bias (``y^T a = 0``) and the second-order
        working-set selection of Fan, Chen & Lin (:func:`kernelmaps._solvers.smo._smo_second_order`);
        ``tol`` is then the largest KKT violation, as ``SVC``'s.
        ``'auto'``: ``'second_order'``, the faster (full ``letter``, C = 10,
        one-vs-one: 0.63 s against greedy's 1.50 s and ``SVC``'s 0.77 s on a
        2-core Xeon, ``python -m benchmarks.experiments run kernel-svc-speed``),
        unless ``fit_intercept=False``, which only the greedy solver has.
    shrinking : bool, default=True
        Shrink the second-order solver's problem as LIBSVM does (and as ``SVC``
        by default): every ``min(n, 1000)`` steps, variables that will stay at a
        bound leave the active set; the gradient is rebuilt before optimality is
        accepted, so the solution is the same to ``tol``. Only the second-order
        solver shrinks; the greedy one runs the same whatever this says.
    class_weight : None, 'balanced' or dict, default=None
        Multiplies ``C`` per class, as ``SVC``'s: row ``i`` gets the bound
        ``C * class_weight[y_i] * sample_weight_i``. ``'balanced'``: class ``c``
        weighs ``n_samples / (n_classes * n_c)`` (scikit-learn's
        ``compute_class_weight``; with ``sample_weight`` the counts are sums of
        weights, so that integer weights still equal repeated rows, where ``SVC``
        counts rows). A dict maps class labels to non-negative weights (1 for
        the classes it omits); a key that is not a class of ``y`` is an error.
        Each binary problem keeps every row's weight, the weight of the row's
        own class label: in a one-vs-rest problem the rows of the "rest" keep
        their classes' weights (not the weight of a "rest" class), and a
        one-vs-one problem weighs the rows of its two classes by those classes'
        weights, as LIBSVM.
    probability : bool, default=False
        Also learn class probabilities, as LIBSVM and ``SVC`` do: ``fit`` trains
        the binary problems on the folds of a 5-fold stratified cross-validation
        (shuffled with ``random_state``), fits Platt's sigmoid
        ``1 / (1 + exp(A f + B))`` to each problem's held-out decision values
        ``f`` by the Newton method of Lin, Lin & Weng (``probA_``, ``probB_``),
        then trains the model on all rows: about five fits more than without.
        Two classes: the sigmoid. One-vs-one: the pairwise probabilities
        coupled by Wu, Lin & Weng's method 2, as LIBSVM. One-vs-rest: one
        sigmoid per class, normalized to sum to 1, as scikit-learn's
        ``CalibratedClassifierCV``. The sigmoids are fitted unweighted on the
        rows of positive weight (as LIBSVM), and each class needs 5 of them.
        ``predict`` still takes the decision values, so it can disagree with
        the most probable class of :meth:`predict_proba` near the boundary.
    random_state : int, RandomState instance or None, default=None
        Shuffles the cross-validation folds of ``probability=True``; nothing
        else in a fit is random.

    Attributes
    ----------
    classes_ : ndarray
    support_ : ndarray of int
        Training rows with a non-zero dual coefficient in some binary problem.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        ``y_i a_i`` per binary problem (zero for rows outside a one-vs-one pair).
    intercept_ : ndarray of shape (n_problems,)
        ``bias * sum_i y_i a_i`` (greedy), ``-rho`` (second order).
    pairs_ : ndarray of shape (n_problems, 2) or None
        Class indices ``(a, b)`` of each one-vs-one problem (``a`` is positive).
    n_iter_ : ndarray of shape (n_problems,)
    selection_ : str
        The solver used (``'auto'`` resolved).
    gamma_ : float
    kernel_ : str
    class_weight_ : ndarray of shape (n_classes,)
        Each class's weight (ones without ``class_weight``).
    probA_, probB_ : ndarray of shape (n_problems,)
        With ``probability=True``: Platt's sigmoid ``1 / (1 + exp(probA_ f + probB_))``
        of each binary problem, the probability of its positive class (class 1
        of two, the column's class one-vs-rest, ``pairs_[p, 0]`` one-vs-one)
        given its decision value ``f``.

    References
    ----------
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation",
    section "Greedy Coordinate Descent for Kernel SVM".
    Platt, J. Sequential minimal optimization. Microsoft Research TR-98-14, 1998.
    Fan, R.-E., Chen, P.-H. and Lin, C.-J. Working set selection using second
    order information for training support vector machines. JMLR 6, 2005.
    Platt, J. Probabilistic outputs for support vector machines and comparisons
    to regularized likelihood methods. Advances in Large Margin Classifiers, 1999.
    Lin, H.-T., Lin, C.-J. and Weng, R. C. A note on Platt's probabilistic
    outputs for support vector machines. Machine Learning 68, 2007.
    Wu, T.-F., Lin, C.-J. and Weng, R. C. Probability estimates for multi-class
    classification by pairwise coupling. JMLR 5, 2004.

    Examples
    --------
    Trained on the even rows of iris, scored on the odd ones:

    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import KernelSVC
    >>> X, y = load_iris(return_X_y=True)
    >>> svc = KernelSVC(C=1.0, gamma=0.5)
    >>> print(round(svc.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 2))
    0.99
    >>> svc.dual_coef_.shape  # one-vs-rest: a row per class, a column per support vector
    (3, 33)
    >>> svc.selection_  # 'auto': LIBSVM's second-order SMO, as fit_intercept=True
    'second_order'

    Class probabilities (Platt's sigmoids on cross-validated decision values,
    coupled pairwise one-vs-one):

    >>> import numpy as np
    >>> from sklearn.metrics import log_loss
    >>> svc = KernelSVC(gamma=0.5, multi_class="ovo", probability=True, random_state=0)
    >>> proba = svc.fit(X[::2], y[::2]).predict_proba(X[1::2])
    >>> proba.shape  # a column per class of svc.classes_
    (75, 3)
    >>> bool(np.allclose(proba.sum(axis=1), 1.0))
    True
    >>> print(round(log_loss(y[1::2], proba), 1))
    0.1
    """

    name = "kernel_svc"
    kind = "baseline"
    paper = "Exact kernel SVM by greedy coordinate descent (lecture; Platt 1998 SMO)"
    kernel_family = "any"
    test_params = {"C": 1.0, "gamma": 0.5, "max_iter": 20000}
    # one-vs-one in the benchmarks, as scikit-learn's SVC, so both solve the same problems
    benchmark = {"params": {"kernel": "gaussian", "C": 1.0, "multi_class": "ovo"}}

    kernel = KernelParameter()

    @classmethod
    def peers(cls):
        from sklearn.svm import SVC

        def sklearn_svc(gamma, kernel="gaussian", C=1.0, **_):
            names = {"gaussian": "rbf", "rbf": "rbf", "polynomial": "poly"}
            return SVC(kernel=names[kernel], gamma=gamma, C=C)

        return {"sklearn.SVC": sklearn_svc}

    def __init__(self, C=1.0, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0, tol=1e-3,
                 cache_size=200, max_iter=1_000_000, fit_intercept=True, multi_class="ovr", selection="auto",
                 shrinking=True, class_weight=None, probability=False, random_state=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.selection = selection
        self.shrinking = shrinking
        self.class_weight = class_weight
        self.probability = probability
        self.random_state = random_state

    def _check_params(self):
        C = check_positive(self.C, "C")
        tol = check_positive(self.tol, "tol")
        cache_mb = check_positive(self.cache_size, "cache_size")
        max_iter = check_n_components(self.max_iter, "max_iter")
        check_choice(self.multi_class, "multi_class", ("ovr", "ovo"))
        check_choice(self.selection, "selection", ("auto", "greedy", "second_order"))
        if self.selection == "second_order" and not self.fit_intercept:
            raise ValueError("selection='second_order' solves LIBSVM's dual, whose bias is free; "
                             "fit_intercept=False needs selection='greedy'")
        shrinking = check_bool(self.shrinking, "shrinking")
        probability = check_bool(self.probability, "probability")
        check_class_weight(self.class_weight)
        selection = self.selection
        if selection == "auto":
            selection = "second_order" if self.fit_intercept else "greedy"
        kernel, degree, coef0 = check_kernel_params(self.kernel, self.degree, self.coef0)
        return _Params(C=C, tol=tol, cache_mb=cache_mb, max_iter=max_iter, kernel=kernel, degree=degree,
                       coef0=coef0, selection=selection, shrinking=shrinking, probability=probability)

    def fit(self, X, y, sample_weight=None):
        """Train one binary SVM per class or pair of classes (one for two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights, non-negative and finite: row ``i``'s box constraint
            is ``C * class_weight[y_i] * sample_weight[i]`` (as ``SVC``'s), so an
            integer weight equals repeating the row. Rows of weight 0 are
            dropped before anything else (the ``gamma`` heuristic included), so
            they have no effect.

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True)
        params = self._check_params()
        n = X.shape[0]
        check_fits_in_memory(min(params.cache_mb * 2**20, 8.0 * n * n) + 8.0 * SOLVER_VECTORS * n,
                             f"cache_size={self.cache_size}", f"the kernel column cache for n_samples={n}")
        labels = encode_classes(self, y)
        self.class_weight_, weights = svm_row_weights(self.class_weight, self.classes_, labels, X, sample_weight)
        box, kept = box_constraints(params.C, weights)
        if kept is not None:
            X, labels = X[kept], labels[kept]
        self.kernel_ = params.kernel
        self.degree_ = params.degree
        self.coef0_ = params.coef0
        self.gamma_ = resolve_gamma(self.gamma, X, params.kernel, np.random.RandomState(GAMMA_SAMPLE_SEED))
        X64 = np.ascontiguousarray(X, dtype=np.float64)
        self.bias_ = 1.0 if self.fit_intercept else 0.0
        self.selection_ = params.selection
        model = self._train(X64, labels, box, params)
        self.pairs_ = model.pairs
        self.n_iter_ = model.n_iter
        support = np.flatnonzero(np.any(model.dual != 0, axis=0))
        self.support_ = support if kept is None else kept[support]
        self.support_vectors_ = X64[support]
        self.dual_coef_ = np.ascontiguousarray(model.dual[:, support])
        self.intercept_ = model.intercept
        if params.probability:
            scores = self._cross_validated_scores(X64, labels, box, params)
            self.probA_, self.probB_ = fit_sigmoids(scores, labels, self.pairs_, len(self.classes_))
        return self

    def _train(self, X64, labels, box, params):
        """The binary problems on the rows ``X64`` of class indices ``labels`` and bounds ``box``."""
        n = X64.shape[0]
        n_classes = len(self.classes_)
        solver = _Solver(X64, self._kernel_params(), box, params.tol, params.max_iter, params.cache_mb, self.bias_,
                         params.selection, params.shrinking)
        if n_classes == 2 or self.multi_class == "ovr":
            # the problems share the rows, hence one cache of kernel columns
            n_out = 1 if n_classes == 2 else n_classes
            pairs = None
            dual = np.zeros((n_out, n))
            intercept = np.zeros(n_out)
            n_iter = np.zeros(n_out, dtype=np.int64)
            rows = np.arange(n)
            for c in range(n_out):
                target = 1 if n_out == 1 else c
                signs = np.where(labels == target, 1.0, -1.0)
                dual[c], intercept[c], n_iter[c] = solver.solve(
                    rows, signs, f"{_label(self.classes_[target])} vs rest" if n_out > 1 else "of the two classes")
        else:
            pairs = np.array([(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)])
            dual = np.zeros((len(pairs), n))
            intercept = np.zeros(len(pairs))
            n_iter = np.zeros(len(pairs), dtype=np.int64)
            for p, (a, b) in enumerate(pairs):
                rows = np.flatnonzero((labels == a) | (labels == b))
                signs = np.where(labels[rows] == a, 1.0, -1.0)
                coef, intercept[p], n_iter[p] = solver.solve(
                    rows, signs, f"{_label(self.classes_[a])} vs {_label(self.classes_[b])}")
                dual[p, rows] = coef
        return _Model(dual=dual, intercept=intercept, n_iter=n_iter, pairs=pairs)

    def _cross_validated_scores(self, X64, labels, box, params):
        """Held-out decision values of every binary problem, by stratified ``N_FOLDS``-fold cross-validation."""
        counts = np.bincount(labels, minlength=len(self.classes_))
        if counts.min() < N_FOLDS:
            fewest = int(np.argmin(counts))
            raise ValueError(
                f"probability=True fits Platt's sigmoids to the decision values of a {N_FOLDS}-fold stratified "
                f"cross-validation, which needs {N_FOLDS} rows (of positive weight) per class; class "
                f"{_label(self.classes_[fewest])} has {counts[fewest]}: use probability=False or more rows")
        folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=check_random_state(self.random_state))
        scores = None
        for train, test in folds.split(X64, labels):
            model = self._train(X64[train], labels[train], box if np.ndim(box) == 0 else box[train], params)
            support = np.flatnonzero(np.any(model.dual != 0, axis=0))
            fold_scores = _decision_values(X64[test], X64[train][support], model.dual[:, support],
                                           model.intercept, self._kernel_params())
            if scores is None:
                scores = np.empty((len(labels), fold_scores.shape[1]))
            scores[test] = fold_scores
        return scores

    def decision_function(self, X):
        """``sum_i y_i a_i (k(x_i, x) + bias)`` per binary problem.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_problems):
        one column per class (``'ovr'``) or per pair ``pairs_`` (``'ovo'``).
        """
        check_is_fitted(self)
        X = check_input(self, X, reset=False)
        scores = _decision_values(X, self.support_vectors_, self.dual_coef_, self.intercept_,
                                  self._kernel_params())
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the largest decision value (one-vs-one: of the most votes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1 or self.pairs_ is None:
            return classes_from_scores(self.classes_, scores)
        votes = np.zeros((scores.shape[0], len(self.classes_)), dtype=np.int64)
        winners = np.where(scores > 0, self.pairs_[:, 0], self.pairs_[:, 1])
        for p in range(winners.shape[1]):
            np.add.at(votes, (np.arange(len(votes)), winners[:, p]), 1)
        return self.classes_[np.argmax(votes, axis=1)]

    def _has_probabilities(self):
        if not self.probability:
            raise AttributeError("predict_proba and predict_log_proba need probability=True, which fits "
                                 "Platt's sigmoids at fit")
        return True

    @available_if(_has_probabilities)
    def predict_proba(self, X):
        """Class probabilities: Platt's sigmoids of the decision values, combined over the binary problems.

        Two classes: the sigmoid of the decision value; one-vs-one: pairwise
        coupling (Wu, Lin & Weng, method 2); one-vs-rest: the classes' sigmoids
        normalized to sum to 1. See ``probability``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; each row sums to 1.
        """
        check_is_fitted(self)
        if not hasattr(self, "probA_"):
            raise NotFittedError("this KernelSVC was fitted with probability=False: fit it again with "
                                 "probability=True to get predict_proba")
        scores = self.decision_function(X)
        scores = scores.reshape(scores.shape[0], -1)
        return class_probabilities(scores, self.probA_, self.probB_, self.pairs_, len(self.classes_))

    @available_if(_has_probabilities)
    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`, of shape (n_samples, n_classes)."""
        return np.log(self.predict_proba(X))
