"""Nyström kernel ridge regression and classification by preconditioned conjugate gradient (Falkon)."""

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state

from ._core.base import classes_from_scores
from ._core.targets import OneVsRestFitMixin, RegressionFitMixin
from ._kernels.matern import NU_DOC
from ._machines.nystroem import KERNEL_CACHE_DOC, DaskRoutedFit, NystroemMachineBase
from ._machines.gaussian_process import PREDICT_COV_DOC, with_doc
from ._machines.nystroem_posterior import NystroemPosteriorMixin, posterior_square_matrices
from ._solvers.falkon import nystroem_kernel_ridge

__all__ = ["NystroemKernelRidge", "NystroemKernelRidgeClassifier"]

_SHARED_PARAMETERS_DOC = """
    The model is ``f(x) = sum_j a_j k(x, c_j)`` on ``m = n_components`` centres
    ``c_j``. It minimizes ``(1/n) ||K_nm a - y||^2 + lam a^T K_mm a`` with
    ``lam = alpha / n``, so that ``alpha`` is kernel ridge's (``||K c - y||^2 +
    alpha c^T K c``): with every training row as a centre the model is
    :class:`kernelmaps.KernelRidge`'s. The normal equations
    ``(K_nm^T K_nm / n + lam K_mm) a = K_nm^T y / n`` are solved by conjugate
    gradient preconditioned as Falkon does, by two ``m x m`` Cholesky factors
    (``T = chol(K_mm)``, ``A = chol(T T^T / m + lam I)``), which make the system
    close to the identity: a few tens of iterations whatever ``lam``.

    ``K_nm`` is never held. Each iteration is one pass over the rows in blocks on
    the thread pool: per block, one single-threaded GEMM and the fused Numba
    kernel epilogue give ``K_b``, then ``K_b^T (K_b v)`` while it is in cache;
    every target (every class) shares the pass, and the per-thread partial sums
    are added in a fixed order (the same result for any thread count). Time
    ``O(n m d + n m k)`` per iteration, memory ``O(m^2)`` plus a block of rows
    per thread. float32 input gives float32 kernel blocks and products, summed in
    float64. The conjugate gradient is the library's multi-right-hand-side one
    (:mod:`kernelmaps._solvers.conjugate_gradient`), not
    ``scipy.sparse.linalg.cg``, which solves one right-hand side per call and
    would cost a pass per class.

    A row-chunked ``dask.array`` is fitted out of core: centres from a bounded
    seeded sample, each iteration one map-reduce over the chunks, the ``m x m``
    work on the client; ``predict`` is then lazy.

    Parameters
    ----------
    n_components : int or 'auto', default='auto'
        The number of centres ``m``. ``'auto'``: ``min(1000, n)`` for ``n``
        training rows (with early stopping, the rows left after the split), so
        that a small problem uses every row. A rule (``landmarks`` a string)
        draws at most one centre per row: an ``n_components`` above ``n`` uses
        every row, with a ``UserWarning``. Given centres are used as given.
        Falkon's theory asks ``m`` of order ``sqrt(n)`` for the exact kernel
        ridge's accuracy.
    alpha : float, default=1.0
        Ridge penalty (> 0), as in :class:`kernelmaps.KernelRidge`.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern', 'polynomial', 'exponential'}
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or a heuristic (see :func:`kernelmaps.resolve_gamma`).
    degree : int, default=2
    coef0 : float, default=1.0
""" + NU_DOC + """    landmarks : {'uniform', 'kmeans', 'leverage'} or array of shape (m, n_features)
        How the centres are chosen, as in :class:`kernelmaps.Nystroem`.
    max_iter : int, default=100
        Conjugate gradient iterations (a ``ConvergenceWarning`` when reached).
    tol : float, default=1e-4
        Stop when every target's relative residual of the preconditioned system
        is at most ``tol`` (scikit-learn's ``Ridge`` stops its CG at the same
        1e-4). Predictions settle well before the residual does: on a synthetic
        problem with n = 30000, m = 4096, their test RMSE changed by less than
        0.1 % after the residual passed 1e-3. float32 blocks carry about 1e-7
        relative error each, so below ~1e-6 a float32 fit may stop at ``max_iter``.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows (stratified for the
        classifier), and stop when the held-out loss (mean squared error;
        classification error for the classifier) has not improved for
        ``n_iter_no_change`` iterations, keeping the best coefficients.
    validation_fraction : float in (0, 1), default=0.1
    n_iter_no_change : int, default=5
""" + KERNEL_CACHE_DOC + """    verbose : bool, default=False
        A tqdm progress bar over the iterations, with the residual.
    random_state : int, RandomState or None
        Seeds the centres, the bandwidth heuristic's sample and the split.
"""
_SHARED_ATTRIBUTES_DOC = """
    Attributes
    ----------
    coef_ : ndarray of shape (n_components_,) or (n_components_, n_outputs)
        The coefficients ``a`` of the centres.
    n_components_ : int
        The number of centres used (see ``n_components``).
    components_ : ndarray of shape (n_components_, n_features), float64
        The centres.
    component_indices_ : ndarray of int or None
        The training rows used as centres (``None`` for k-means or given centres).
    n_iter_ : int
    residuals_ : ndarray
        Largest relative residual over the targets, at the start and after each
        iteration.
    validation_losses_ : ndarray or None
        The held-out loss after each iteration (with early stopping).
    lambda_ : float
        ``alpha / n``.
    gamma_ : float
    kernel_ : str
    kernel_cache_ : int
        Bytes of ``K(X, C)`` kept by the fit (0: every pass evaluated the kernel).
"""
_SHARED_REFERENCES_DOC = """
    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017.
    Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. Kernel methods through the
    roof: handling billions of points efficiently. NeurIPS 2020.
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation"
    (Nyström training by an iterative solver with a fast matrix-vector product).
"""


class _NystroemRidgeBase(NystroemMachineBase):
    paper = "Rudi, Carratino & Rosasco, FALKON: An optimal large scale kernel method, NIPS 2017"

    def _solve(self, X, T, labels, loss):
        """Fit ``coef_``; return the operator of the training rows and the solver's
        :class:`~kernelmaps._solvers.falkon.KernelRidgeSolution`."""
        self._check_params(X.shape[1])
        rng = check_random_state(self.random_state)
        train, held_out = self._split_for_early_stopping(X.shape[0], labels)
        if held_out is not None:
            X, X_val, T, target_val = X[train], X[held_out], T[train], (T if labels is None else labels)[held_out]
        else:
            X_val = target_val = None
        self._set_kernel_and_centres(X, rng)
        keep = self._plan_kernel_cache(X.shape[0] + (0 if X_val is None else X_val.shape[0]), X.dtype)
        K = self._operator(X, keep_blocks=keep)
        return K, self.solve_on(K, T, X_val, target_val, loss)

    def solve_on(self, K, T, X_val=None, target_val=None, loss=None):
        """Solve for ``coef_`` on the operator ``K`` of the training rows (in memory or Dask); return the
        solver's solution."""
        n = K.shape[0]
        self.lambda_ = float(self.alpha) / n
        # a cross-validated learner's refit leaves the search's direct solution here, for this one fit only:
        # CG starts from it (and stops at once when it meets tol); any start gives the same minimizer
        start = self.__dict__.pop("_cg_start", None)
        with self._progress(self.max_iter, "conjugate gradient") as bar:
            callback, state = self._early_stopper(X_val, target_val, loss, bar)
            # without held-out rows the callback only moves the progress bar: no coefficients to form
            solution = nystroem_kernel_ridge(K, self._centre_gram(), T, self.lambda_, max_iter=self.max_iter,
                                             tol=self.tol, x0=start, callback=callback,
                                             callback_coef=X_val is not None)
        result = solution.cg
        coef = solution.coef if state.best_coef is None else state.best_coef
        self.coef_ = coef[:, 0] if np.ndim(T) == 1 else coef
        self.n_iter_ = result.n_iter
        self.residuals_ = result.residuals
        self.validation_losses_ = np.asarray(state.losses) if X_val is not None else None
        self.jitter_ = solution.preconditioner.jitter
        if not result.converged and result.n_iter >= self.max_iter:
            self._warn_not_converged("the relative residual of conjugate gradient", result.residuals[-1])
        return solution


def _mean_squared_error(predictions, target):
    return np.mean((predictions.reshape(len(target), -1) - target.reshape(len(target), -1)) ** 2)


_POSTERIOR_PARAMETERS_DOC = """    variance : {'dtc', 'sor'} or None, default=None
        The Gaussian process posterior to keep. ``'dtc'``: the subset-of-regressors
        variance plus the Nyström residual ``k(x, x) - Q(x, x)`` (the exact GP's
        when every training row is a centre; the prior far from the centres);
        ``'sor'``: without the residual (it goes to 0 far from the centres).
        ``None`` keeps none: ``predict`` gives the mean only, and the fit costs
        no more. Refused with early stopping and with Dask input.
    amplitude : 'auto', 'dtc' or float, default='auto'
        The prior's signal variance ``s`` (> 0), used with ``variance``. It
        changes only the uncertainty, never the mean. Each estimate is one
        target's maximum likelihood with ``alpha`` held fixed, in closed form:
        ``'auto'`` under FITC's prior (Snelson & Ghahramani 2006), the Nyström
        prior plus each row's residual ``k(x, x) - Q(x, x)`` on the diagonal,
        ``y^T (Q_nn + diag(K_nn - Q_nn) + alpha I)^-1 y / n``, whose prior
        variances are the exact prior's; it costs a second weighted ``m x m``
        product per block in the posterior's pass (``n m^2 / 2`` multiply-adds
        beside the pass's ``n m^2``), and twice its partial sums' memory;
        ``'dtc'``: the DTC likelihood's ``y^T (Q_nn + alpha I)^-1 y / n``, which
        maximizes :meth:`log_marginal_likelihood` (Titsias's bound too). With few centres
        for a rough kernel the DTC estimate reads the variance the centres cannot
        express as signal and its intervals over-cover; FITC's stays nearer the
        exact GP's (on Matérn 3/2 GP-prior data with 5000 rows, amplitude 2.5, and
        m = 500: 3.4 under ``'dtc'``, 2.1 under ``'auto'``, 2.5 for the exact GP;
        95 % intervals covering 98 % and 94 %). Both are the exact GP's when
        every row is a centre (experiment ``uncertainty-amplitude``).
"""
_PARAMETERS_HEADING = """
    Parameters
    ----------
"""
_GAUSSIAN_PROCESS_DOC = """
    **The Gaussian process.** The prediction is the posterior mean of the
    subset-of-regressors (SoR) prior ``f(x) = k_m(x)^T a``, ``a ~ N(0, s
    K_mm^-1)`` (``K_mm`` with the preconditioner's jitter ``jitter_`` on its
    diagonal: float32 rows take a jitter of float32's epsilon, so that their
    posterior is measurably another one, 9 % apart in the std on a small
    Gaussian problem), with the noise variance ``alpha s``: ``alpha`` is the
    noise-to-signal ratio, as in :class:`kernelmaps.KernelRidge`, and the
    amplitude ``s`` cancels from the mean. On the features ``z(x) = T^-T
    k_m(x)`` (``T^T T = K_mm``) it is Bayesian linear regression with
    ``A = Z^T Z + alpha I``: SoR's variance of the latent ``f`` is ``alpha s
    z^T A^-1 z``; DTC's (Quiñonero-Candela & Rasmussen 2005) adds ``s (k(x, x) -
    z^T z)``. ``predict(X, return_std=True)`` gives the std of the latent ``f``,
    shared by the targets up to each one's amplitude; that of a new observation
    ``y`` is ``sqrt(std**2 + noise_variance_)``. Its mean is :meth:`predict`'s
    (the conjugate gradient's coefficients): the exact posterior mean to the
    solver's ``tol``. :meth:`log_marginal_likelihood` is Titsias's (SGPR) lower
    bound on the evidence; the DTC likelihood is ``dtc_log_marginal_likelihood_``.

    Cost of ``variance``: the fit makes one more pass over the rows, ``Z^T Z``
    and ``Z^T y`` (``O(n m^2)``: a triangular solve and a symmetric product per
    block of rows; it reads the kept kernel blocks, else evaluates the kernel again),
    then a Cholesky factorization (``O(m^3)``). The model keeps two ``m x m``
    float64 factors, ``16 m^2`` bytes (268 MB at m = 4096), pickled with it;
    the pass holds about ``threads + 4`` such matrices at its peak (``2 threads +
    6`` under ``amplitude='auto'``, whose weighted product doubles the pass's
    ``O(n m^2)`` work), refused up front when they do not fit. ``return_std`` costs ``O(m^2 + m d)`` per row, in row
    blocks; ``return_cov`` and :meth:`sample_y` with DTC hold ``n_rows x
    n_rows`` matrices, refused up front when they do not fit.
"""
_POSTERIOR_ATTRIBUTES_DOC = """    variance_ : {'dtc', 'sor'} or None
    amplitude_ : float or ndarray of shape (n_targets,) or None
        The signal variance of each target (a float for a 1-D ``y``).
    noise_variance_ : float or ndarray of shape (n_targets,) or None
        ``alpha * amplitude_``.
    posterior_factor_ : ndarray of shape (n_components_, n_components_) or None
        Lower Cholesky factor of ``Z^T Z + alpha I``.
    log_marginal_likelihood_value_ : float or None
        Titsias's bound on the evidence (:meth:`log_marginal_likelihood`).
    dtc_log_marginal_likelihood_ : float or None
        The DTC (and SoR) likelihood ``log N(y; 0, s (Q_nn + alpha I))``
        summed over targets: the bound plus ``n_targets tr(K_nn - Q_nn) / (2 alpha)``.
"""


class NystroemKernelRidge(RegressorMixin, NystroemPosteriorMixin, DaskRoutedFit, RegressionFitMixin,
                          _NystroemRidgeBase):
    __doc__ = """Nyström kernel ridge regression by Falkon's preconditioned conjugate gradient, and its GP posterior.
""" + _SHARED_PARAMETERS_DOC.replace(_PARAMETERS_HEADING, _GAUSSIAN_PROCESS_DOC + _PARAMETERS_HEADING) \
        + _POSTERIOR_PARAMETERS_DOC + _SHARED_ATTRIBUTES_DOC + _POSTERIOR_ATTRIBUTES_DOC + _SHARED_REFERENCES_DOC + """\
    Quiñonero-Candela, J. and Rasmussen, C. E. A unifying view of sparse
    approximate Gaussian process regression. JMLR 6, 2005.
    Titsias, M. Variational learning of inducing variables in sparse Gaussian
    processes. AISTATS 2009.
    Snelson, E. and Ghahramani, Z. Sparse Gaussian processes using
    pseudo-inputs. NIPS 18, 2006 (FITC, the prior of ``amplitude='auto'``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import NystroemKernelRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(5000, 2))
    >>> y = np.sin(X[:, 0]) * np.cos(X[:, 1])
    >>> reg = NystroemKernelRidge(n_components=200, alpha=1e-2, gamma=0.5, random_state=0).fit(X, y)
    >>> print(round(reg.score(X, y), 4))
    1.0
    >>> bool(reg.residuals_[-1] <= 1e-4)  # the relative residual of the last iteration
    True

    With ``variance='dtc'``, the std of the latent function returns to the
    prior's, ``sqrt(amplitude_)``, far from the data:

    >>> reg = NystroemKernelRidge(200, alpha=1e-2, gamma=0.5, variance="dtc", random_state=0).fit(X, y)
    >>> mean, std = reg.predict([[0.0, 0.0], [30.0, 30.0]], return_std=True)
    >>> bool(std[0] < 0.05 * std[1]), bool(np.isclose(std[1], np.sqrt(reg.amplitude_)))
    (True, True)
"""

    name = "nystroem_kernel_ridge"
    _multi_output_targets = True
    test_params = {"n_components": 10, "alpha": 1.0, "gamma": 0.02}

    def __init__(self, n_components="auto", *, alpha=1.0, kernel="gaussian", gamma="scale", degree=2,
                 coef0=1.0, nu=1.5, landmarks="uniform", max_iter=100, tol=1e-4, early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=5, kernel_cache="auto", verbose=False,
                 random_state=None, variance=None, amplitude="auto"):
        super().__init__(n_components, alpha=alpha, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, nu=nu,
                         landmarks=landmarks, max_iter=max_iter, tol=tol, early_stopping=early_stopping,
                         validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
                         kernel_cache=kernel_cache, verbose=verbose, random_state=random_state)
        self.variance = variance
        self.amplitude = amplitude

    def _check_solver_params(self):
        super()._check_solver_params()
        self._check_posterior_params()

    def _n_square_matrices(self):
        return self._square_matrices + (0 if self.variance is None else posterior_square_matrices(self.amplitude))

    def _check_dask_fit(self):
        if self.variance is not None:
            raise ValueError(f"variance={self.variance!r} needs K^T K of the training rows, which a fit on Dask "
                             "arrays does not compute: set variance=None, or fit in memory")

    def _fit_targets(self, X, y, labels):
        K, solution = self._solve(X, y, None, _mean_squared_error)
        self._keep_posterior(K, y, None if self.variance is None else solution.preconditioner.T)

    @with_doc(PREDICT_COV_DOC)
    def predict(self, X, return_std=False, return_cov=False):
        """``K(X, components_) @ coef_`` (lazy for a Dask array), and its posterior std or covariance.

        Parameters
        ----------
        X : array-like or dask.array of shape (n_rows, n_features)
            In memory for ``return_std`` and ``return_cov``.
        return_std : bool, default=False
            Also return the posterior std of the latent ``f`` at each row (of
            ``y``: ``sqrt(std**2 + noise_variance_)``); needs ``variance``.
        """
        if return_std or return_cov:
            return self._posterior_predict(X, return_std, return_cov)
        lazy = self._lazily(X, "predict")
        return self._scores(X) if lazy is None else lazy

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class NystroemKernelRidgeClassifier(ClassifierMixin, DaskRoutedFit, OneVsRestFitMixin, _NystroemRidgeBase):
    __doc__ = """Nyström kernel ridge classification: one-vs-rest regression onto +1 / -1, by Falkon's CG.

    One solve for all classes, ``T[i, c] = +1`` if ``y_i`` is class ``c`` else
    ``-1`` (one column for two classes), as :class:`kernelmaps.KernelRidgeClassifier`
    does; every class shares each pass over the rows. The prediction is the class
    of largest score.
""" + _SHARED_PARAMETERS_DOC + _SHARED_ATTRIBUTES_DOC + _SHARED_REFERENCES_DOC + """
    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import NystroemKernelRidgeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NystroemKernelRidgeClassifier(n_components=50, alpha=1e-2, gamma=0.5, random_state=0).fit(X, y)
    >>> clf.coef_.shape  # one column of coefficients per class
    (50, 3)
    >>> print(round(clf.score(X, y), 2))
    0.99
"""

    name = "nystroem_kernel_ridge_classifier"
    test_params = {"n_components": 10, "alpha": 1.0, "gamma": 0.02}

    def _fit_targets(self, X, T, labels):
        self._solve(X, T, labels, self._error_rate)

    def decision_function(self, X):
        """One-vs-rest scores; shape (n_samples,) for two classes (lazy for a Dask array)."""
        lazy = self._lazily(X, "decision_function")
        if lazy is not None:
            return lazy
        scores = self._scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the largest score (lazy for a Dask array)."""
        lazy = self._lazily(X, "predict")
        if lazy is not None:
            return lazy
        scores = self.decision_function(X)
        return classes_from_scores(self.classes_, scores)
