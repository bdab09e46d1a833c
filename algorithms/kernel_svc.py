"""Exact kernel SVM by greedy dual coordinate descent with an LRU cache of kernel columns."""

from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._base import KernelParameter, RegisteredEstimator, classes_from_scores, encode_classes
from ._kernel_params import FittedKernelMixin
from ._kernels import GAMMA_SAMPLE_SEED, check_kernel_params, exact_kernel, resolve_gamma
from ._solvers.svm_dual import SOLVER_VECTORS, _Solver
from ._validation import (check_choice, check_fits_in_memory, check_input, check_n_components, check_positive,
                          clear_fitted_state)

__all__ = ["KernelSVC"]


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


def _label(value):
    """A class label as the user wrote it (``3``, ``'cat'``), not as NumPy prints its scalars."""
    return repr(value.item() if isinstance(value, np.generic) else value)


class KernelSVC(ClassifierMixin, FittedKernelMixin, RegisteredEstimator, BaseEstimator):
    """Exact kernel SVM: LIBSVM's SMO with shrinking, or greedy dual coordinate descent.

    By default (``selection='auto'`` with ``fit_intercept``) it solves LIBSVM's
    dual with a free bias, ``min_a 1/2 a^T Q a - e^T a`` subject to
    ``y^T a = 0`` and ``0 <= a_i <= C``, ``Q_ij = y_i y_j k(x_i, x_j)``, by SMO
    with second-order working-set selection and shrinking
    (:func:`kernelmaps._solvers.smo._smo_second_order`), as scikit-learn's ``SVC`` does.
    ``selection='greedy'`` solves the lecture's dual without equality constraint,
    with ``Q_ij = y_i y_j (k(x_i, x_j) + 1)`` when ``fit_intercept`` (the bias is
    the weight of a constant feature, so it is regularized like the other
    weights) and ``Q_ij = y_i y_j k(x_i, x_j)`` otherwise, by greedy coordinate
    descent (:func:`kernelmaps._solvers.greedy_cd._greedy_coordinate_descent`).
    Multi-class problems train one binary SVM per class (one-vs-rest, the
    default: the problems share the cache of kernel columns) or per pair of
    classes (``multi_class='ovo'``, as ``SVC``).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'polynomial', 'exponential'}
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or a heuristic (see :func:`kernelmaps.resolve_gamma`). The
        row sample of 'median' and 'knn50' is drawn with the fixed seed
        ``GAMMA_SAMPLE_SEED``, so that ``fit`` is deterministic without a
        ``random_state`` parameter.
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

    References
    ----------
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation",
    section "Greedy Coordinate Descent for Kernel SVM".
    Platt, J. Sequential minimal optimization. Microsoft Research TR-98-14, 1998.
    Fan, R.-E., Chen, P.-H. and Lin, C.-J. Working set selection using second
    order information for training support vector machines. JMLR 6, 2005.

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
                 shrinking=True):
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
        if not isinstance(self.shrinking, (bool, np.bool_)):
            raise ValueError(f"shrinking must be True or False, got {self.shrinking!r}")
        selection = self.selection
        if selection == "auto":
            selection = "second_order" if self.fit_intercept else "greedy"
        kernel, degree, coef0 = check_kernel_params(self.kernel, self.degree, self.coef0)
        return _Params(C=C, tol=tol, cache_mb=cache_mb, max_iter=max_iter, kernel=kernel, degree=degree,
                       coef0=coef0, selection=selection, shrinking=bool(self.shrinking))

    def fit(self, X, y):
        """Train one binary SVM per class or pair of classes (one for two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

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
        self.kernel_ = params.kernel
        self.degree_ = params.degree
        self.coef0_ = params.coef0
        self.gamma_ = resolve_gamma(self.gamma, X, params.kernel, np.random.RandomState(GAMMA_SAMPLE_SEED))
        X64 = np.ascontiguousarray(X, dtype=np.float64)
        n = X64.shape[0]
        n_classes = len(self.classes_)
        bias = 1.0 if self.fit_intercept else 0.0
        self.bias_ = bias
        self.selection_ = params.selection
        solver = _Solver(X64, self._kernel_params(), params.C, params.tol, params.max_iter, params.cache_mb, bias,
                         params.selection, params.shrinking)
        if n_classes == 2 or self.multi_class == "ovr":
            # the problems share the rows, hence one cache of kernel columns
            n_out = 1 if n_classes == 2 else n_classes
            self.pairs_ = None
            dual = np.zeros((n_out, n))
            intercept = np.zeros(n_out)
            self.n_iter_ = np.zeros(n_out, dtype=np.int64)
            rows = np.arange(n)
            for c in range(n_out):
                target = 1 if n_out == 1 else c
                signs = np.where(labels == target, 1.0, -1.0)
                dual[c], intercept[c], self.n_iter_[c] = solver.solve(
                    rows, signs, f"{_label(self.classes_[target])} vs rest" if n_out > 1 else "of the two classes")
        else:
            self.pairs_ = np.array([(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)])
            dual = np.zeros((len(self.pairs_), n))
            intercept = np.zeros(len(self.pairs_))
            self.n_iter_ = np.zeros(len(self.pairs_), dtype=np.int64)
            for p, (a, b) in enumerate(self.pairs_):
                rows = np.flatnonzero((labels == a) | (labels == b))
                signs = np.where(labels[rows] == a, 1.0, -1.0)
                coef, intercept[p], self.n_iter_[p] = solver.solve(
                    rows, signs, f"{_label(self.classes_[a])} vs {_label(self.classes_[b])}")
                dual[p, rows] = coef
        self.support_ = np.flatnonzero(np.any(dual != 0, axis=0))
        self.support_vectors_ = X64[self.support_]
        self.dual_coef_ = np.ascontiguousarray(dual[:, self.support_])
        self.intercept_ = intercept
        return self

    def decision_function(self, X):
        """``sum_i y_i a_i (k(x_i, x) + bias)`` per binary problem.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_problems):
        one column per class (``'ovr'``) or per pair ``pairs_`` (``'ovo'``).
        """
        check_is_fitted(self)
        X = check_input(self, X, reset=False)
        if len(self.support_) == 0:
            scores = np.zeros((X.shape[0], self.dual_coef_.shape[0]))
        else:
            K = exact_kernel(np.asarray(X, dtype=np.float64), self.support_vectors_,
                             **self._kernel_params())
            scores = K @ self.dual_coef_.T + self.intercept_
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
