"""Exact kernel ridge regression and classification in closed form (small N)."""

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ._core.base import KernelParameter, RegisteredEstimator, classes_from_scores, encode_classes, one_vs_rest_code
from ._kernels.params import FittedKernelMixin
from ._kernels.bandwidth import GAMMA_SAMPLE_SEED, resolve_gamma
from ._kernels.exact import exact_kernel, kernel_diagonal
from ._kernels.matern import NU_DOC, check_nu
from ._kernels.names import check_kernel_params
from ._kernels.user import (callable_gram, check_precomputed_columns, check_square_gram, drop_zero_weight_gram,
                            user_kernel_kind)
from ._solvers.cholesky import lower_cholesky
from ._machines.gaussian_process import (PREDICT_COV_DOC, GaussianPosteriorMixin, check_amplitude,
                                         fitted_amplitude, function_space_log_det, log_evidence, with_doc)
from ._core.sample_weights import CLASS_WEIGHT_DOC, check_sample_weight, class_row_weights, drop_zero_weights
from ._core.targets import OneVsRestFitMixin, RegressionFitMixin
from ._core.validation import check_fits_in_memory, check_input, check_positive, clear_fitted_state

__all__ = ["KernelRidge", "KernelRidgeClassifier"]

_KERNEL_DOC = """    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern', 'polynomial', 'exponential', \
'precomputed'} or callable
        ``'precomputed'``, as scikit-learn's: ``fit`` takes the square training
        Gram matrix ``K(X, X)`` (finite, symmetric to 1e-8 relative) and
        ``predict`` takes ``K(X_test, X_train)`` (all training rows, in order);
        ``X_fit_`` is then None. A callable ``kernel(X_block, Y)`` returns the
        Gram block ``K(X_block, Y)``; it is called on row blocks, one at a time,
        and each block is checked for shape and finiteness. With either,
        ``gamma``, ``degree``, ``coef0`` and ``nu`` are not used.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or a heuristic (see :func:`kernelmaps.resolve_gamma`). The
        row sample of 'median' and 'knn50' is drawn with the fixed seed
        ``GAMMA_SAMPLE_SEED``, so that ``fit`` is deterministic without a
        ``random_state`` parameter.
    degree : int, default=2
    coef0 : float, default=1.0
""" + NU_DOC


class _KernelRidgeBase(FittedKernelMixin, RegisteredEstimator, BaseEstimator):
    kind = "baseline"
    kernel_family = "any"
    paper = "Exact kernel ridge regression, closed form (lecture: Scalable ML, kernel methods)"

    kernel = KernelParameter()

    def __init__(self, alpha=1.0, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0, nu=1.5):
        self.alpha = alpha
        self._keep_kernel_parameters(kernel, gamma, degree, coef0, nu)

    def _solve(self, X, T, sample_weight=None):
        """Set the kernel attributes and ``dual_coef_ = (K + alpha I)^-1 T``; return
        ``(L, sqrt(w))``, the lower Cholesky factor of the solved system (None if it
        failed) and the roots of the weights (None without them).

        With weights ``w``, as ``sklearn.kernel_ridge.KernelRidge``:
        ``dual_coef_ = S (S K S + alpha I)^-1 S T`` with ``S = diag(sqrt(w))``, the
        minimizer of ``sum_i w_i (f(x_i) - t_i)^2 + alpha ||f||^2``.
        """
        alpha = check_positive(self.alpha, "alpha")
        n = X.shape[0]
        # the Gram matrix and its Cholesky factor
        check_fits_in_memory(2 * 8 * n * n, f"n_samples={n}", "the exact kernel ridge Gram matrix")
        kind = user_kernel_kind(self.kernel)
        if kind == "precomputed":
            self.kernel_, self.degree_, self.coef0_, self.nu_, self.gamma_, self.X_fit_ = (kind,) + (None,) * 5
            K = check_square_gram(X).copy()
        elif kind == "callable":
            self.kernel_, self.degree_, self.coef0_, self.nu_, self.gamma_ = (kind,) + (None,) * 4
            self.X_fit_ = np.ascontiguousarray(X, dtype=np.float64)
            K = callable_gram(self.kernel, self.X_fit_)
        else:
            self.kernel_, self.degree_, self.coef0_ = check_kernel_params(self.kernel, self.degree,
                                                                          self.coef0)
            self.nu_ = check_nu(self.nu)
            self.X_fit_ = np.ascontiguousarray(X, dtype=np.float64)
            self.gamma_ = resolve_gamma(self.gamma, self.X_fit_, self.kernel_,
                                        np.random.RandomState(GAMMA_SAMPLE_SEED))
            K = exact_kernel(self.X_fit_, None, **self._kernel_params())
        root = None
        if sample_weight is not None:
            root = np.sqrt(sample_weight).reshape((-1,) + (1,) * (np.ndim(T) - 1))
            # S K S in place: no second n x n matrix
            K *= root.reshape(-1, 1)
            K *= root.reshape(1, -1)
            T = root * T
        K[np.diag_indices_from(K)] += alpha
        factor = None
        try:
            factor = lower_cholesky(K)
            dual_coef = scipy.linalg.cho_solve((factor, True), T, check_finite=False)
        except np.linalg.LinAlgError:
            # K + alpha I is positive definite in exact arithmetic; round-off with a
            # tiny alpha can break Cholesky, where least squares still answers
            dual_coef = scipy.linalg.lstsq(K, T)[0]
        self.dual_coef_ = dual_coef if root is None else root * dual_coef
        return factor, root

    def _scores(self, X):
        check_is_fitted(self)
        return self._cross_gram(check_input(self, X, reset=False)) @ self.dual_coef_

    def _cross_gram(self, X):
        """``K(X, X_fit_)`` of validated rows (for 'precomputed', ``X`` itself, checked)."""
        if self.kernel_ == "precomputed":
            K = check_precomputed_columns(X, self.n_features_in_, "predict")
            columns = getattr(self, "fit_columns_", None)
            return K if columns is None else K[:, columns]
        if self.kernel_ == "callable":
            return callable_gram(self.kernel, X, self.X_fit_)
        return exact_kernel(np.asarray(X, dtype=np.float64), self.X_fit_, **self._kernel_params())

    def _drop_zero_weights(self, X, y, sample_weight):
        """``drop_zero_weights``; a precomputed Gram matrix loses the rows' columns too (``fit_columns_``)."""
        if user_kernel_kind(self.kernel) == "precomputed":
            if X.shape[0] != X.shape[1]:
                return X, y, sample_weight  # refused by _solve, after the class checks
            X, y, sample_weight, self.fit_columns_ = drop_zero_weight_gram(X, y, sample_weight)
            return X, y, sample_weight
        return drop_zero_weights(X, y, sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # as scikit-learn's KernelRidge: with 'precomputed' the fit matrix is K(X, X)
        tags.input_tags.pairwise = user_kernel_kind(self.kernel) == "precomputed"
        return tags


class KernelRidge(RegressorMixin, GaussianPosteriorMixin, RegressionFitMixin, _KernelRidgeBase):
    __doc__ = """Exact kernel ridge regression, ``f(x) = sum_i c_i k(x_i, x)``, and its Gaussian-process posterior.

    ``c = (K + alpha I)^-1 y`` by a Cholesky factorization (LAPACK's, in blocks above order 4096):
    O(n^2 d) time for the Gram matrix, O(n^3) for the solve, O(n^2) memory, so for
    small N only. There is no intercept, as in ``sklearn.kernel_ridge.KernelRidge``
    (whose predictions this matches): center ``y`` or add a constant to the kernel.
    With ``sample_weight`` it minimizes ``sum_i w_i (f(x_i) - y_i)^2 + alpha ||f||^2``,
    as scikit-learn does (``K`` scaled by ``sqrt(w)`` on both sides).
    For classification see :class:`KernelRidgeClassifier`.

    **The Gaussian process.** The prediction is the posterior mean of the prior
    ``f ~ GP(0, s k)`` with the amplitude (signal variance) ``s = amplitude_``
    and the noise variance ``alpha s`` (``alpha s / w_i`` for a row of weight
    ``w_i``): ``s`` cancels from the mean, and scales the posterior covariance
    ``s (k(X*, X*) - K*^T S (S K S + alpha I)^-1 S K*)`` (Rasmussen & Williams
    2006, eq. 2.25-2.26; ``S = diag(sqrt(w))``, the identity without weights).
    ``predict(X, return_std=True)`` gives the std of the latent ``f``; that of
    a new observation ``y`` is ``sqrt(std**2 + noise_variance_)``. The evidence
    (eq. 5.8) is ``log N(y; 0, s (K + alpha W^-1))``; ``amplitude='auto'``
    maximizes it over ``s`` with ``alpha`` held fixed, in closed form:
    ``s = y^T (K + alpha W^-1)^-1 y / n``. Each target column is its own
    process, with the shared kernel and ``alpha`` and its own amplitude, so that
    a target in other units gets its std in its units. A weight of ``w`` gives
    the posterior of ``w`` copies of its row; the evidence counts it as one
    row of noise variance ``alpha s / w``. The fit keeps the Cholesky factor of
    ``S K S + alpha I``: ``8 n^2`` bytes held by the fitted model (and pickled).

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty (> 0): the noise-to-signal variance ratio.
""" + _KERNEL_DOC + """    amplitude : 'auto' or float, default='auto'
        The prior's signal variance ``s`` (> 0); 'auto': each target's maximum
        likelihood value ``y^T (K + alpha W^-1)^-1 y / n``. It changes only the
        uncertainty, never the mean.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        Over the rows of positive weight (all rows without ``sample_weight``).
    X_fit_ : ndarray of shape (n_samples, n_features), float64
        The training rows of positive weight.
    gamma_ : float
    kernel_ : str
    amplitude_ : float or ndarray of shape (n_targets,)
        The signal variance of each target (a float for a 1-D ``y``).
    noise_variance_ : float or ndarray of shape (n_targets,)
        ``alpha * amplitude_``: the noise variance of a row of weight 1.
    posterior_factor_ : ndarray of shape (n_samples, n_samples) or None
        Lower Cholesky factor ``L`` of ``S K S + alpha I = L L^T``; None when
        the factorization failed (the solve fell back to least squares): the
        posterior and the evidence are then refused.
    log_marginal_likelihood_value_ : float or None
        The evidence of the fit (:meth:`log_marginal_likelihood`).

    References
    ----------
    Saunders, C., Gammerman, A. and Vovk, V. Ridge regression learning algorithm in
    dual variables. ICML 1998.
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation"
    (kernel ridge regression, its dual and its O(n^3) cost).
    Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine
    Learning. MIT Press, 2006 (eq. 2.25-2.30, Algorithm 2.1; eq. 5.8).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import KernelRidge
    >>> X = np.random.default_rng(0).uniform(-3, 3, size=(50, 1))
    >>> reg = KernelRidge(alpha=1e-3, gamma=0.5).fit(X, np.sin(X).ravel())
    >>> np.round(reg.predict([[0.5], [1.5]]), 2)  # sin(0.5) = 0.479, sin(1.5) = 0.997
    array([0.48, 1.  ])

    The std of the latent function grows away from the data:

    >>> mean, std = reg.predict([[0.5], [6.0]], return_std=True)
    >>> bool(std[0] < 0.01 < std[1])
    True

    Weighted, it matches scikit-learn's with the same weights:

    >>> from sklearn.kernel_ridge import KernelRidge as SklearnKernelRidge
    >>> w = np.random.default_rng(1).uniform(0, 3, 50)
    >>> ours = KernelRidge(alpha=0.1, gamma=0.5).fit(X, np.sin(X).ravel(), sample_weight=w)
    >>> theirs = SklearnKernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X, np.sin(X).ravel(), sample_weight=w)
    >>> bool(np.allclose(ours.predict(X), theirs.predict(X)))
    True
    """

    name = "kernel_ridge"
    _multi_output_targets = True
    test_params = {"alpha": 1.0, "gamma": 0.5}

    def __init__(self, alpha=1.0, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0, nu=1.5,
                 amplitude="auto"):
        super().__init__(alpha, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, nu=nu)
        self.amplitude = amplitude

    def fit(self, X, y, sample_weight=None):
        """Solve for the dual coefficients of every target column, and keep the posterior's factor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Numeric targets.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Non-negative weight of each row's squared error (``None``: all 1),
            as ``sklearn.kernel_ridge.KernelRidge`` takes it; an integer weight
            counts as that many copies of the row. Rows of weight 0 are
            dropped: they are not kept in ``X_fit_`` and do not enter the
            ``gamma`` heuristic.

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True, multi_output=True, y_numeric=True, **self._target_input)
        y = np.asarray(y, dtype=np.float64)
        X, y, sample_weight = self._drop_zero_weights(X, y, check_sample_weight(sample_weight, X))
        self._fit_targets(X, y, None, sample_weight)
        return self

    def _fit_targets(self, X, y, labels, sample_weight=None):
        amplitude = check_amplitude(self.amplitude)
        self.posterior_factor_, self._weight_root = self._solve(X, y, sample_weight)
        # y^T (K + alpha W^-1)^-1 y, each target's data fit: (S y)^T (S K S + alpha I)^-1 (S y)
        data_fit = np.einsum("i...,i...->...", y, self.dual_coef_).reshape(-1)
        n = y.shape[0]
        amplitudes = fitted_amplitude(amplitude, data_fit, n)
        self.amplitude_ = float(amplitudes[0]) if y.ndim == 1 else amplitudes
        self.noise_variance_ = check_positive(self.alpha, "alpha") * self.amplitude_
        self.log_marginal_likelihood_value_ = None if self.posterior_factor_ is None else log_evidence(
            data_fit, function_space_log_det(self.posterior_factor_, np.sum(np.log(sample_weight))
                                             if sample_weight is not None else 0.0), n, amplitudes)

    @with_doc(PREDICT_COV_DOC)
    def predict(self, X, return_std=False, return_cov=False):
        """The posterior mean ``K(X, X_fit) @ dual_coef_``, and its std or covariance.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            With ``kernel='precomputed'``, ``K(X, X_fit)`` (the mean only).
        return_std : bool, default=False
            Also return the posterior std of the latent ``f`` at each row (of
            ``y``: ``sqrt(std**2 + noise_variance_)``). Row blocks, each one
            ``n x b`` triangular solve.
        """
        if return_std or return_cov:
            return self._posterior_predict(X, return_std, return_cov)
        return self._scores(X)

    def _posterior_unavailable(self, new_rows):
        if self.posterior_factor_ is None:
            return (f"the Cholesky factorization of K + alpha I failed (alpha={self.alpha!r} is below the "
                    "rounding of the Gram matrix); the posterior and the evidence need it: raise alpha")
        if new_rows and self.kernel_ == "precomputed":
            return ("kernel='precomputed' gives predict only K(X, X_fit); the posterior variance also needs "
                    "k(x, x) of the new rows: pass the kernel's name or a callable")
        return None

    def _posterior_input(self, X):
        return check_input(self, X, reset=False)

    def _kernel_arguments(self):
        return {"kernel": self.kernel} if self.kernel_ == "callable" else self._kernel_params()

    def _posterior_block(self, X):
        K = self._cross_gram(X)
        U = K.T if self._weight_root is None else (K * self._weight_root.reshape(1, -1)).T
        return (K @ self.dual_coef_).reshape(X.shape[0], -1), U

    def _posterior_prior(self, X, full, U=None):
        X = np.asarray(X, dtype=np.float64)
        arguments = self._kernel_arguments()
        return exact_kernel(X, None, **arguments) if full else kernel_diagonal(X, **arguments)

    def _posterior_coefficient(self):
        return -1.0

    def _single_output(self):
        return self.dual_coef_.ndim == 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class KernelRidgeClassifier(ClassifierMixin, OneVsRestFitMixin, _KernelRidgeBase):
    __doc__ = """Exact kernel ridge classification: one-vs-rest regression onto +1 / -1.

    One solve ``(K + alpha I) C = T`` for all classes, ``T[i, c] = +1`` if ``y_i`` is
    class ``c`` else ``-1`` (one column for two classes); the prediction is the class
    of largest score. A separate class from :class:`KernelRidge` so that the
    estimator type never depends on the dtype of ``y``. Sample and class weights
    weigh each row's squared errors as in :class:`KernelRidge`.

    Parameters
    ----------
    alpha : float, default=1.0
""" + _KERNEL_DOC + CLASS_WEIGHT_DOC + """
    Attributes
    ----------
    classes_ : ndarray
        The classes of the rows of positive weight.
    dual_coef_ : ndarray of shape (n_samples, n_outputs)
    X_fit_ : ndarray of shape (n_samples, n_features), float64
        The training rows of positive weight.
    gamma_ : float
    kernel_ : str

    References
    ----------
    Saunders, C., Gammerman, A. and Vovk, V. Ridge regression learning algorithm in
    dual variables. ICML 1998.
    Rifkin, R. and Klautau, A. In defense of one-vs-all classification. JMLR 5, 2004.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import KernelRidgeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = KernelRidgeClassifier(alpha=1.0, gamma=0.5).fit(X, y)
    >>> clf.dual_coef_.shape  # one column of dual coefficients per class
    (150, 3)
    >>> print(round(clf.score(X, y), 2))
    0.99

    A row of weight 0 is as good as absent:

    >>> import numpy as np
    >>> w = (np.arange(150) % 5 > 0).astype(float)
    >>> weighted = KernelRidgeClassifier(alpha=1.0, gamma=0.5).fit(X, y, sample_weight=w)
    >>> dropped = KernelRidgeClassifier(alpha=1.0, gamma=0.5).fit(X[w > 0], y[w > 0])
    >>> bool(np.allclose(weighted.decision_function(X), dropped.decision_function(X)))
    True
    """

    name = "kernel_ridge_classifier"
    test_params = {"alpha": 1.0, "gamma": 0.5}

    def __init__(self, alpha=1.0, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0, nu=1.5,
                 class_weight=None):
        super().__init__(alpha, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, nu=nu)
        self.class_weight = class_weight

    def fit(self, X, y, sample_weight=None):
        """Solve for the dual coefficients of every one-vs-rest ±1 column of the labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Non-negative weight of each row's squared error (``None``: all 1),
            multiplied by its class's ``class_weight``. Rows of weight 0 are
            dropped: they add no class, are not kept in ``X_fit_`` and do not
            enter the ``gamma`` heuristic.

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True, **self._target_input)
        X, y, sample_weight = self._drop_zero_weights(X, y, check_sample_weight(sample_weight, X))
        labels = encode_classes(self, y)
        weights = class_row_weights(self.class_weight, self.classes_, labels, sample_weight)
        self._solve(X, one_vs_rest_code(len(self.classes_))[labels], weights)
        return self

    def _fit_targets(self, X, T, labels):
        self._solve(X, T)

    def decision_function(self, X):
        """One-vs-rest scores; shape (n_samples,) for two classes."""
        scores = self._scores(X)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the largest score."""
        scores = self.decision_function(X)  # first: it raises NotFittedError
        return classes_from_scores(self.classes_, scores)
