"""Nyström kernel logistic regression by preconditioned Newton steps (logistic Falkon)."""

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state

from ._core.base import classes_from_scores
from ._core.targets import OneVsRestFitMixin
from ._core.validation import check_bool, check_integer, is_dask_array
from ._kernels.matern import NU_DOC
from ._machines.nystroem import (KERNEL_CACHE_DOC, DaskRoutedFit, NystroemMachineBase, dask_logistic_passes,
                                 kernel_cache_budget)
from ._solvers.kernel_operator import KernelOperator
from ._solvers.logistic_newton import nystroem_logistic_newton
from ._solvers.logistic_passes import LogisticPasses, logistic_probabilities

__all__ = ["NystroemLogisticRegression"]

#: The values of ``hessian_dtype``.
HESSIAN_DTYPES = ("auto", "float32", "float64")


def check_hessian_dtype(value):
    """Refuse a ``hessian_dtype`` outside :data:`HESSIAN_DTYPES`."""
    if not (isinstance(value, str) and value in HESSIAN_DTYPES):
        raise ValueError(f"hessian_dtype must be one of {', '.join(map(repr, HESSIAN_DTYPES))}, got {value!r}")


def uses_float32_hessian(hessian_dtype, dtype):
    """Whether a fit on in-memory rows of ``dtype`` takes its Hessian products in float32: float64
    rows unless ``hessian_dtype='float64'`` (float32 rows are float32 throughout)."""
    return hessian_dtype != "float64" and np.dtype(dtype) != np.float32


def plan_logistic_cache(budget, n_rows, n_single_rows, m, dtype, single):
    """``(keep, keep_single, bytes kept)``: whether a logistic fit keeps the blocks of its ``n_rows`` rows
    in ``dtype``, and (with float32 Hessian products, ``single``) the float32 blocks of the products'
    ``n_single_rows`` rows, within ``budget`` bytes.

    The float32 blocks, read by every CG iteration, come first; the blocks in ``dtype`` are kept
    beside them when both fit.
    """
    if not single:
        n_bytes = KernelOperator.kept_bytes(n_rows, m, dtype)
        return n_bytes <= budget, False, n_bytes if n_bytes <= budget else 0
    single_bytes = KernelOperator.kept_bytes(n_single_rows, m, np.float32)
    double_bytes = KernelOperator.kept_bytes(n_rows, m, dtype)
    keep_single = single_bytes <= budget
    keep = keep_single and single_bytes + double_bytes <= budget
    return keep, keep_single, keep_single * single_bytes + keep * double_bytes


class NystroemLogisticRegression(ClassifierMixin, DaskRoutedFit, OneVsRestFitMixin, NystroemMachineBase):
    __doc__ = """Kernel logistic regression on Nyström centres, by Newton steps solved with Falkon's CG.

    The model is ``f(x) = sum_j a_j k(x, c_j)`` on ``m = n_components`` centres.
    For each one-vs-rest ±1 column ``y`` (one column for two classes) it minimizes

        ``sum_i log(1 + exp(-y_i (f(x_i) + b))) + (alpha / 2) a^T K_mm a``,

    with an unpenalized intercept ``b`` (``fit_intercept``), so that ``alpha`` is
    ``1 / C`` of scikit-learn's ``LogisticRegression`` on Nyström features (whose
    ``||w||^2`` is ``a^T K_mm a``), intercept included.

    The solver is the second-order scheme of Meanti et al. (2020): Newton steps,
    each one's system ``(K_nm^T W K_nm / n + lam K_mm) d = g`` solved by conjugate
    gradient preconditioned with Falkon's two Cholesky factors built from the
    weights ``W`` of the centres, along a decreasing ridge path (``1e-3``,
    ``1e-4``, ... down to ``lam = alpha / n``, one step each) that keeps every
    step in the region where Newton's method converges fast; then steps at
    ``lam`` until the gradient norm falls below ``tol`` times its value at zero,
    or a step's Newton decrement predicts a gain of at most ``tol`` times the
    objective (at a small ridge the gradient criterion asks CG for directions the
    data barely constrain, at 20 passes a step, for no change in test loss).
    The loss at 0.5 to 3 times a step comes from the logits of the point and of
    the step's direction, without a pass, and each class keeps the multiple with
    the lowest objective where it adds at least a tenth to the decrease of
    Newton's step (near separable classes, where the loss is close to an
    exponential of the margin, Newton's step is too short); a step that raises
    the objective is halved. Each class's CG stops at its own tolerance, loosened
    where the last step's quadratic model missed the gradient it reached. Where a
    factorization costs more than ten passes (few classes, few rows per centre), the steps at one ridge
    share the preconditioner factor of its first step, and a step whose CG ran out of iterations
    gets a fresh one. Each pass over the rows reads the kept kernel blocks
    (``kernel_cache``) or computes them on the fly (the fused pass, blocks on the
    thread pool), and serves every class at once. Memory ``O(m^2)``
    for the preconditioner factors, which every class shares, plus the
    ``n x classes`` weights and the logits of the point and of the step.

    A row-chunked ``dask.array`` is fitted out of core, as
    :class:`NystroemKernelRidgeClassifier` is: centres from a bounded seeded
    sample, each pass one map-reduce over the chunks (each task recomputes its
    rows' weights in the pass itself, so nothing ``n``-sized stays on the client),
    the ``m x m`` work on the client; the coefficients equal the in-memory fit's
    on the same centres. ``early_stopping`` is refused on Dask input.

    Time is the number of passes times ``O(n m d)`` each: one per CG iteration and
    two per step (the direction's product and the update), plus one at the start. The
    defaults allow ``max_iter x (cg_max_iter + 2) + 1 = 441`` passes; at
    ``lam = 1e-6`` on ``10^5`` rows a fit stops after 7 steps and 103 passes,
    about twice a :class:`NystroemKernelRidge` fit's. ``n_iter_`` and
    ``cg_iterations_`` tell how many passes a fit took.

    Parameters
    ----------
    n_components : int or 'auto', default='auto'
        The number of centres ``m``, as in :class:`kernelmaps.NystroemKernelRidge`:
        ``'auto'`` is ``min(1000, n)`` for ``n`` training rows; more than ``n``
        from a rule uses every row, with a ``UserWarning``.
    alpha : float, default=1.0
        The ridge (> 0), ``1 / C`` of ``LogisticRegression``.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern', 'polynomial', 'exponential'}
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
    degree : int, default=2
    coef0 : float, default=1.0
""" + NU_DOC + """    landmarks : {'uniform', 'kmeans', 'leverage'} or array of shape (m, n_features)
        As in :class:`kernelmaps.Nystroem`. With training rows as centres
        (uniform, leverage) the preconditioner uses their weights; otherwise the
        mean weight.
    max_iter : int, default=20
        Newton steps, the path's included (a ``ConvergenceWarning`` when reached).
    tol : float, default=1e-4
        The Newton steps stop at this relative gradient norm, or, once it is
        below ``sqrt(tol)``, when a step's predicted gain (half its Newton
        decrement) is at most ``tol`` times the objective.
    cg_max_iter : int, default=20
        Conjugate gradient iterations per Newton step.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows (stratified) and stop when
        their classification error has not improved for ``n_iter_no_change``
        Newton steps, keeping the best coefficients.
    validation_fraction : float in (0, 1), default=0.1
    n_iter_no_change : int, default=5
""" + KERNEL_CACHE_DOC + """        With float32 Hessian products (below) the fit keeps their float32 blocks
        first (``4 n m`` bytes, read by every CG iteration), then the blocks in the
        rows' dtype as well when both fit the budget.
    hessian_dtype : {'auto', 'float32', 'float64'}, default='auto'
        The precision of the Hessian products ``K^T W K V`` inside each Newton
        step's CG. ``'auto'`` is float32 for in-memory float64 rows (float32 rows
        are float32 throughout), float64 on Dask input. The gradient, the
        objective and the weights ``W`` stay in the rows' dtype, so the optimum
        is the same; the Hessian only directs the steps, and each CG iteration
        reads half the bytes of kept blocks, or evaluates the kernel at float32's
        speed. Where the products' rounding matters (a ridge so small, or a
        kernel so flat, that it stalls the steps: a step that leaves the
        relative gradient norm above 0.9 of its value, or a CG that meets
        negative curvature), the fit moves to float64 products for its remaining
        steps. ``'float64'`` computes them in the rows' dtype, as a Dask fit
        does: its coefficients equal the Dask fit's on the same centres.
    verbose : bool, default=False
        A tqdm progress bar over the Newton steps.
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_components_, n_outputs)
        One column for two classes, else one per class.
    intercept_ : ndarray of shape (n_outputs,)
    n_components_ : int
        The number of centres used (see ``n_components``).
    kernel_cache_ : int
        Bytes of ``K(X, C)`` kept by the fit (0: every pass evaluated the kernel).
    components_ : ndarray of shape (n_components_, n_features)
    component_indices_ : ndarray of int or None
    n_iter_ : int
        Newton steps.
    cg_iterations_ : list of int
        CG iterations of each Newton step.
    gradient_norms_ : ndarray
        The largest relative gradient norm over the classes before each step and at the end.
    objectives_ : ndarray
        The objective (divided by n, summed over the classes) at the same points.
    penalties_ : list of float
        The ridge ``lam`` of each step.
    lambda_ : float
        ``alpha / n``.

    References
    ----------
    Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. Kernel methods through the
    roof: handling billions of points efficiently. NeurIPS 2020.
    Marteau-Ferey, U., Bach, F. and Rudi, A. Globally convergent Newton methods for
    ill-conditioned generalized self-concordant losses. NeurIPS 2019.
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from kernelmaps import NystroemLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> clf = NystroemLogisticRegression(n_components=100, alpha=1.0, random_state=0).fit(X, y)
    >>> print(round(clf.score(X, y), 2))
    0.97
    >>> clf.predict_proba(X[:2]).round(2)  # two malignant tumours (class 0)
    array([[0.8 , 0.2 ],
           [0.95, 0.05]])
    """

    name = "nystroem_logistic_regression"
    paper = ("Meanti, Carratino, Rosasco & Rudi, Kernel methods through the roof: handling billions of "
             "points efficiently, NeurIPS 2020")
    test_params = {"n_components": 10, "alpha": 1.0, "gamma": 0.02}

    def __init__(self, n_components="auto", *, alpha=1.0, kernel="gaussian", gamma="scale", degree=2,
                 coef0=1.0, nu=1.5, landmarks="uniform", fit_intercept=True, max_iter=20, tol=1e-4, cg_max_iter=20,
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=5, kernel_cache="auto",
                 hessian_dtype="auto", verbose=False, random_state=None):
        super().__init__(n_components, alpha=alpha, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         nu=nu, landmarks=landmarks, max_iter=max_iter, tol=tol, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
                         kernel_cache=kernel_cache, verbose=verbose, random_state=random_state)
        self.fit_intercept = fit_intercept
        self.cg_max_iter = cg_max_iter
        self.hessian_dtype = hessian_dtype

    def _check_solver_params(self):
        super()._check_solver_params()
        check_integer(self.cg_max_iter, "cg_max_iter")
        check_bool(self.fit_intercept, "fit_intercept")
        check_hessian_dtype(self.hessian_dtype)

    def _check_dask_fit(self):
        if self.hessian_dtype == "float32":
            raise ValueError("hessian_dtype='float32' is for in-memory rows: on Dask input the Hessian products "
                             "are float64; use 'auto' or 'float64'")

    def _fit_targets(self, X, T, labels):
        self._check_params(X.shape[1])
        rng = check_random_state(self.random_state)
        train, held_out = self._split_for_early_stopping(X.shape[0], labels)
        X_val = label_val = None
        if held_out is not None:
            X, X_val, T, label_val = X[train], X[held_out], T[train], labels[held_out]
        self._set_kernel_and_centres(X, rng)
        single = uses_float32_hessian(self.hessian_dtype, X.dtype)
        # the blocks in the rows' dtype cover the training and held-out rows, the float32 ones the training rows
        keep, keep_single, self.kernel_cache_ = plan_logistic_cache(
            kernel_cache_budget(self.kernel_cache), X.shape[0] + (0 if X_val is None else X_val.shape[0]),
            X.shape[0], self.n_components_, X.dtype, single)
        hessian = self._operator(X.astype(np.float32), keep_blocks=keep_single) if single else None
        self.solve_on(self._operator(X, keep_blocks=keep), T, X_val, label_val, hessian=hessian)

    def solve_on(self, K, T, X_val=None, label_val=None, hessian=None):
        """Fit ``coef_`` and ``intercept_`` on the operator ``K`` of the training rows and their
        ±1 targets ``T`` (in memory, or a Dask operator with ``T`` a Dask array); ``hessian``, an
        in-memory float32 operator on the same rows and centres, takes the Hessian products."""
        self.lambda_ = float(self.alpha) / K.shape[0]
        passes = dask_logistic_passes(K, T) if is_dask_array(T) else LogisticPasses(K, T, hessian=hessian)
        with self._progress(self.max_iter, "Newton steps") as bar:
            # the held-out rows' blocks only beside the training rows' (not with the float32 blocks alone)
            keep_val = X_val is not None and K.kept is not None
            callback, state = self._early_stopper(X_val, label_val, self._error_rate, bar, keep_blocks=keep_val)
            result = nystroem_logistic_newton(passes, self._centre_gram(), self.lambda_,
                                              fit_intercept=bool(self.fit_intercept),
                                              centres_are_rows=self.component_indices_ is not None,
                                              max_iter=self.max_iter, tol=self.tol, cg_max_iter=self.cg_max_iter,
                                              callback=callback)
        best = state.best_coef is not None
        self.coef_ = state.best_coef if best else result.coef
        self.intercept_ = state.best_intercept if best else result.intercept
        self.n_iter_ = result.n_iter
        self.cg_iterations_ = result.cg_iterations
        self.gradient_norms_ = result.gradient_norms
        self.objectives_ = result.objectives
        self.penalties_ = result.penalties
        self.validation_losses_ = np.asarray(state.losses) if X_val is not None else None
        if not result.converged and result.n_iter >= self.max_iter:
            self._warn_not_converged("the relative gradient norm of the Newton steps", result.gradient_norms[-1])

    def _n_square_matrices(self):
        # K_mm, T, a temporary and the factor A, which every one-vs-rest column shares
        return 4

    def decision_function(self, X):
        """The logits ``f(x)`` of each one-vs-rest problem; shape (n_samples,) for two classes.

        Lazy for a Dask array, as are ``predict`` and ``predict_proba``.
        """
        lazy = self._lazily(X, "decision_function")
        if lazy is not None:
            return lazy
        scores = self._scores(X) + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the largest logit."""
        lazy = self._lazily(X, "predict")
        if lazy is not None:
            return lazy
        scores = self.decision_function(X)  # first: it raises NotFittedError
        return classes_from_scores(self.classes_, scores)

    def predict_proba(self, X):
        """Class probabilities: ``sigmoid(f)`` for two classes; one-vs-rest sigmoids normalized to sum to 1 otherwise.

        Not a Gaussian process classifier: ``f`` is the penalized maximum
        likelihood (MAP) fit, and the probability is the sigmoid of that one
        function, with no averaging over a posterior of ``f`` (a GP classifier's
        Laplace or expectation-propagation probabilities pull towards 1/2 where
        ``f`` is uncertain). They are as calibrated as the logistic fit is, no more.

        Parameters
        ----------
        X : array-like or dask.array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        lazy = self._lazily(X, "predict_proba")
        if lazy is not None:
            return lazy
        return logistic_probabilities(self.decision_function(X))

    def predict_log_proba(self, X):
        """``log(predict_proba(X))``."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
