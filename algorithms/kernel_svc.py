"""Exact kernel SVM by greedy dual coordinate descent with an LRU cache of kernel columns."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted

from ._core.base import KernelParameter, RegisteredEstimator, classes_from_scores, encode_classes
from ._kernels.params import FittedKernelMixin
from ._kernels.bandwidth import GAMMA_SAMPLE_SEED, resolve_gamma
from ._kernels.exact import exact_kernel
from ._kernels.matern import NU_DOC
from ._solvers.platt import class_probabilities, fit_sigmoids
from ._solvers.svm_dual import Solver
from ._machines.svc_params import (N_FOLDS, Model, check_fit_memory, check_svc_params, decision_values, label,
                                   one_vs_one_vote)
from ._machines.svc_training_rows import TrainingGram, TrainingRows
from ._kernels.user import callable_gram, check_precomputed_columns, check_square_gram, user_kernel_kind
from ._core.validation import check_input, clear_fitted_state
from ._core.sample_weights import box_constraints, svm_row_weights

__all__ = ["KernelSVC"]


def _gram(svc, X, Y):
    """``K(X, Y)`` of the fitted kernel: a callable's blocks or :func:`kernelmaps.exact_kernel`."""
    if svc.kernel_ == "callable":
        return callable_gram(svc.kernel, X, Y)
    return exact_kernel(np.asarray(X, dtype=np.float64), Y, **svc._kernel_params())


class KernelSVC(ClassifierMixin, FittedKernelMixin, RegisteredEstimator, BaseEstimator):
    __doc__ = """Exact kernel SVM: LIBSVM's SMO with shrinking, or greedy dual coordinate descent.

    By default (``selection='auto'`` with ``fit_intercept``) it solves LIBSVM's
    dual with a free bias, ``min_a 1/2 a^T Q a - e^T a`` subject to
    ``y^T a = 0`` and ``0 <= a_i <= C_i``, ``Q_ij = y_i y_j k(x_i, x_j)``, by SMO
    with second-order working-set selection and shrinking
    (:func:`kernelmaps._solvers.smo.smo_second_order`), as scikit-learn's ``SVC`` does.
    ``selection='greedy'`` solves the lecture's dual without equality constraint,
    with ``Q_ij = y_i y_j (k(x_i, x_j) + 1)`` when ``fit_intercept`` (the bias is
    the weight of a constant feature, so it is regularized like the other
    weights) and ``Q_ij = y_i y_j k(x_i, x_j)`` otherwise, by greedy coordinate
    descent (:func:`kernelmaps._solvers.greedy_cd.greedy_coordinate_descent`).
    Multi-class problems train one binary SVM per class (one-vs-rest, the
    default: the problems share the cache of kernel columns) or per pair of
    classes (``multi_class='ovo'``, as ``SVC``). Each row's bound is
    ``C_i = C * class_weight[y_i] * sample_weight_i``, as LIBSVM's and ``SVC``'s;
    ``probability=True`` adds Platt's probabilities (:meth:`predict_proba`).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint (of a row of weight 1 and class weight 1).
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern', 'polynomial', 'exponential', \
'precomputed'} or callable
        ``'precomputed'``, as scikit-learn's ``SVC``: ``fit`` takes the square
        training Gram matrix ``K(X, X)`` (finite, symmetric to 1e-8 relative),
        ``decision_function`` and ``predict`` take ``K(X_test, X_train)`` (all
        training rows, in order), and ``support_vectors_`` is None. A callable
        ``kernel(X_block, Y)`` returns the Gram block ``K(X_block, Y)``, called
        on row blocks one at a time and checked for shape and finiteness. With
        either, the solver reads the ``n x n`` Gram matrix (as for a Matérn
        ``nu`` that is not a half-integer up to 17/2), and ``gamma``,
        ``degree``, ``coef0`` and ``nu`` are not used.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or a heuristic (see :func:`kernelmaps.resolve_gamma`). The
        row sample of 'median' and 'knn50' is drawn with the fixed seed
        ``GAMMA_SAMPLE_SEED`` (not ``random_state``), so the bandwidth, like
        the rest of a fit without probabilities, is deterministic. It is
        computed on the rows of positive weight.
    degree : int, default=2
    coef0 : float, default=1.0
""" + NU_DOC + """    tol : float, default=1e-3
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
        working-set selection of Fan, Chen & Lin (:func:`kernelmaps._solvers.smo.smo_second_order`);
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

    def __init__(self, C=1.0, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0, nu=1.5, tol=1e-3,
                 cache_size=200, max_iter=1_000_000, fit_intercept=True, multi_class="ovr", selection="auto",
                 shrinking=True, class_weight=None, probability=False, random_state=None):
        self.C = C
        self._keep_kernel_parameters(kernel, gamma, degree, coef0, nu)
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
        params = check_svc_params(self)
        labels = encode_classes(self, y)
        self.class_weight_, weights = svm_row_weights(self.class_weight, self.classes_, labels, X, sample_weight)
        box, kept = box_constraints(params.C, weights)
        # what the fit needs of the rows it keeps, refused before any training
        kept_labels = labels if kept is None else labels[kept]
        if params.probability:
            self._check_rows_per_fold(kept_labels)
        check_fit_memory(params, self.multi_class, len(kept_labels), X.shape[1], len(self.classes_))
        if params.kernel == "precomputed":
            X = check_square_gram(X)
        if kept is not None:
            X, labels = (X[np.ix_(kept, kept)] if params.kernel == "precomputed" else X[kept]), labels[kept]
        self.kernel_, self.degree_, self.coef0_, self.nu_ = params.kernel, params.degree, params.coef0, params.nu
        self.gamma_ = None if params.nu is None else \
            resolve_gamma(self.gamma, X, params.kernel, np.random.RandomState(GAMMA_SAMPLE_SEED))
        X64 = np.ascontiguousarray(X, dtype=np.float64)
        # a user's kernel is solved on its Gram matrix (the rows of the solver's kernel columns)
        if params.kernel == "precomputed":
            training = TrainingGram(X64)
        elif params.kernel == "callable":
            training = TrainingGram(callable_gram(self.kernel, X64))
        else:
            training = TrainingRows(X64, self._kernel_params())
        self.bias_ = 1.0 if self.fit_intercept else 0.0
        self.selection_ = params.selection
        model = self._train(training.solver_rows, labels, box, params)
        self.pairs_ = model.pairs
        self.n_iter_ = model.n_iter
        support = np.flatnonzero(np.any(model.dual != 0, axis=0))
        self.support_ = support if kept is None else kept[support]
        self.support_vectors_ = None if params.kernel == "precomputed" else X64[support]
        self.dual_coef_ = np.ascontiguousarray(model.dual[:, support])
        self.intercept_ = model.intercept
        del model  # its duals are not held through the cross-validation (see check_fit_memory)
        if params.probability:
            scores = self._cross_validated_scores(training, labels, box, params)
            self.probA_, self.probB_ = fit_sigmoids(scores, labels, self.pairs_, len(self.classes_))
        return self

    def _train(self, X64, labels, box, params):
        """The binary problems on the rows ``X64`` of class indices ``labels`` and bounds ``box``."""
        n = X64.shape[0]
        n_classes = len(self.classes_)
        kernel_params = {"kernel": "precomputed"} if params.nu is None else self._kernel_params()
        solver = Solver(X64, kernel_params, box, params.tol, params.max_iter, params.cache_mb, self.bias_,
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
                    rows, signs, f"{label(self.classes_[target])} vs rest" if n_out > 1 else "of the two classes")
        else:
            pairs = np.array([(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)])
            dual = np.zeros((len(pairs), n))
            intercept = np.zeros(len(pairs))
            n_iter = np.zeros(len(pairs), dtype=np.int64)
            for p, (a, b) in enumerate(pairs):
                rows = np.flatnonzero((labels == a) | (labels == b))
                signs = np.where(labels[rows] == a, 1.0, -1.0)
                coef, intercept[p], n_iter[p] = solver.solve(
                    rows, signs, f"{label(self.classes_[a])} vs {label(self.classes_[b])}")
                dual[p, rows] = coef
        return Model(dual=dual, intercept=intercept, n_iter=n_iter, pairs=pairs)

    def _check_rows_per_fold(self, labels):
        """Refuse ``probability=True`` when a class has fewer rows (of positive weight) than folds."""
        counts = np.bincount(labels, minlength=len(self.classes_))
        if counts.min() < N_FOLDS:
            fewest = int(np.argmin(counts))
            raise ValueError(
                f"probability=True fits Platt's sigmoids to the decision values of a {N_FOLDS}-fold stratified "
                f"cross-validation, which needs {N_FOLDS} rows (of positive weight) per class; class "
                f"{label(self.classes_[fewest])} has {counts[fewest]}: use probability=False or more rows")

    def _cross_validated_scores(self, training, labels, box, params):
        """Held-out decision values of every binary problem, by stratified ``N_FOLDS``-fold cross-validation.

        ``training`` is a :class:`~kernelmaps._machines.svc_training_rows.TrainingGram` or
        :class:`~kernelmaps._machines.svc_training_rows.TrainingRows`.
        """
        folds = StratifiedKFold(N_FOLDS, shuffle=True, random_state=check_random_state(self.random_state))
        scores = None
        for train, test in folds.split(np.zeros(len(labels)), labels):
            fold_scores = self._fold_scores(training, labels, box, params, train, test)
            if scores is None:
                scores = np.empty((len(labels), fold_scores.shape[1]))
            scores[test] = fold_scores
        return scores

    def _fold_scores(self, training, labels, box, params, train, test):
        """The decision values on the rows ``test`` of the problems trained on the rows ``train``
        (a function of its own, so that a fold's duals are released before the next fold trains)."""
        model = self._train(training.subset(train).solver_rows, labels[train],
                            box if np.ndim(box) == 0 else box[train], params)
        support = np.flatnonzero(np.any(model.dual != 0, axis=0))
        K = training.kernel_between(test, train[support])
        return decision_values(K, model.dual[:, support], model.intercept)

    def decision_function(self, X):
        """``sum_i y_i a_i (k(x_i, x) + bias)`` per binary problem.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_problems):
        one column per class (``'ovr'``) or per pair ``pairs_`` (``'ovo'``).
        """
        check_is_fitted(self)
        X = check_input(self, X, reset=False)
        if self.kernel_ == "precomputed":
            K = check_precomputed_columns(X, self.n_features_in_, "decision_function")[:, self.support_]
        else:
            K = _gram(self, X, self.support_vectors_)
        scores = decision_values(K, self.dual_coef_, self.intercept_)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the largest decision value (one-vs-one: of the most votes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1 or self.pairs_ is None:
            return classes_from_scores(self.classes_, scores)
        return one_vs_one_vote(self.classes_, self.pairs_, scores)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # as scikit-learn's SVC: with 'precomputed' the fit matrix is K(X, X)
        tags.input_tags.pairwise = user_kernel_kind(self.kernel) == "precomputed"
        return tags

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
