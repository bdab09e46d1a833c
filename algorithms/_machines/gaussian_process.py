"""The Gaussian-process reading of the ridge learners, from the factor of the system their fit solves.

A ridge learner's prediction is the posterior mean of a Gaussian model whose
noise-to-signal ratio is its ``alpha``. With the signal variance (the
*amplitude*) ``s`` and the noise variance ``alpha s / w_i`` of a row of weight
``w_i``, the posterior covariance of the latent function at new rows, and the
evidence of the targets, come from the lower Cholesky factor ``L`` of the
``p x p`` system of the fit (``A = L L^T``) and the ``p x m`` cross terms ``U``
of the ``m`` new rows. In units of ``s``, every variant is

    ``cov / s = P + c U^T A^-1 U``

* function space (exact kernel ridge, ``p = n``): ``A = S K S + alpha I`` with
  ``S = diag(sqrt(w))``, ``U = S K(X, X*)``, ``P = K(X*, X*)``, ``c = -1``;
* weight space (ridge on features, ``p = D``): ``A = Z_c^T W Z_c + alpha I``
  with the features centred at their weighted mean ``mu`` when an intercept is
  fitted, ``U = (Z* - mu)^T``, ``P = alpha / sum(w)`` (the flat-prior
  intercept's variance; 0 without an intercept), ``c = alpha``.

A Nyström machine reuses the weight-space form on its features
``z(x) = L_mm^-1 k_m(x)``: subset of regressors (SoR) is exactly that form;
the deterministic training conditional (DTC) adds the prior's residual
``k(x, x') - z(x)^T z(x')`` to ``P``. Both share the weight-space evidence
(:func:`weight_space_log_det`), the evidence of ``y ~ N(0, s (Z Z^T + alpha W^-1))``.

The evidence of ``k`` targets with amplitudes ``s_j`` is
``sum_j -d_j / (2 s_j) - (m / 2) log(2 pi s_j) - (1/2) log_det`` (:func:`log_evidence`),
with the data fit ``d_j``, the effective number of rows ``m`` and ``log_det``
of each form; its maximum over ``s_j`` is at ``s_j = d_j / m``
(:func:`fitted_amplitude`).

References
----------
Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine Learning.
MIT Press, 2006 (eq. 2.25-2.30: the posterior; eq. 5.8: the evidence; Algorithm 2.1).

Bishop, C. M. Pattern Recognition and Machine Learning. Springer, 2006 (§3.3:
Bayesian linear regression; §3.5: its evidence).

Quiñonero-Candela, J. and Rasmussen, C. E. A unifying view of sparse approximate
Gaussian process regression. JMLR 6, 2005 (SoR and DTC).
"""

import numbers

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._core.parallel import block_rows
from .._core.validation import check_fits_in_memory, check_integer, is_dask_array
from .._solvers.cholesky import lower_cholesky

#: Jitter added to the diagonal of a posterior covariance before its Cholesky
#: factorization in :func:`jittered_cholesky`, as fractions of its largest
#: variance, tried in turn until the factorization succeeds.
JITTERS = (1e-10, 1e-9, 1e-8, 1e-7, 1e-6)


#: The parameters and returns of ``sample_y``, shared by the learners' docstrings.
SAMPLE_Y_DOC = """
        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            The rows, as :meth:`predict` takes them.
        n_samples : int, default=1
            Draws per row (>= 1).
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        samples : ndarray of shape (n_rows, n_samples) or (n_rows, n_targets, n_samples)
            The first for a 1-D ``y``, as scikit-learn's ``GaussianProcessRegressor``.
"""
#: ``predict``'s ``return_cov`` and its returns, shared by the learners' docstrings.
PREDICT_COV_DOC = """        return_cov : bool, default=False
            Also return the posterior covariance of ``f`` at the rows. At most one
            of the two; refused up front when about ``(3 + n_targets)``
            ``n_rows x n_rows`` matrices do not fit in memory.

        Returns
        -------
        y_mean : ndarray of shape (n_rows,) or (n_rows, n_targets)
            ``(n_rows,)`` for a 1-D ``y``, ``(n_rows, n_targets)`` for a 2-D one,
            a column vector included.
        y_std : ndarray of the shape of ``y_mean``, optional
        y_cov : ndarray of shape (n_rows, n_rows) or (n_rows, n_rows, n_targets), optional
"""


def with_doc(*fragments):
    """Append the docstring ``fragments`` to the decorated function's docstring (none under ``python -OO``)."""
    def decorate(function):
        if function.__doc__ is not None:
            function.__doc__ = function.__doc__.rstrip(" ") + "".join(fragments)
        return function

    return decorate


def check_amplitude(amplitude):
    """``'auto'`` or the amplitude as a positive finite float; a ``ValueError`` otherwise."""
    if isinstance(amplitude, str) and amplitude == "auto":
        return amplitude
    if isinstance(amplitude, (bool, np.bool_)) or not isinstance(amplitude, numbers.Real) \
            or not (np.isfinite(amplitude) and amplitude > 0):
        raise ValueError(f"amplitude must be 'auto' or a positive finite float, got {amplitude!r}")
    return float(amplitude)


def fitted_amplitude(amplitude, data_fit, n_effective):
    """Per-target amplitudes: the given one, or under ``'auto'`` the evidence's maximizer ``d_j / m``.

    ``nan`` where ``m <= 0`` leaves no degree of freedom to estimate it.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._machines.gaussian_process import fitted_amplitude
    >>> fitted_amplitude("auto", np.array([4.0, 10.0]), 4)
    array([1. , 2.5])
    >>> fitted_amplitude(2.0, np.array([4.0, 10.0]), 4)
    array([2., 2.])
    """
    data_fit = np.asarray(data_fit, dtype=np.float64)
    if amplitude != "auto":
        return np.full(data_fit.shape, float(amplitude))
    if n_effective <= 0:
        return np.full(data_fit.shape, np.nan)
    return data_fit / n_effective


def factor_log_det(factor):
    """``log |A|`` from the Cholesky factor ``L`` of ``A = L L^T``."""
    return 2.0 * float(np.sum(np.log(np.diagonal(factor))))


def function_space_log_det(factor, log_weight_sum=0.0):
    """``log |K + alpha W^-1|`` from the factor of ``S K S + alpha I``: ``log |A| - sum_i log w_i``."""
    return factor_log_det(factor) - log_weight_sum


def weight_space_log_det(log_det_A, n_features, alpha, n_effective, weight_sum=None, log_weight_sum=0.0):
    """The ``log_det`` of the weight-space evidence, from ``log |A|`` of the features' ``D x D`` system.

    ``log |A| + (m - D) log alpha + log sum(w) - sum_i log w_i``, the term ``log sum(w)``
    only with an intercept (``weight_sum`` given, then ``m = n - 1``). Without an
    intercept it is ``log |Z Z^T + alpha W^-1|`` (the matrix determinant lemma);
    with the flat-prior intercept integrated out it adds the ``log sum(w)`` of its
    posterior precision. ``alpha`` may be an array (one ``log |A|`` each).
    """
    log_det = log_det_A + (n_effective - n_features) * np.log(alpha) - log_weight_sum
    return log_det if weight_sum is None else log_det + np.log(weight_sum)


def log_evidence(data_fit, log_det, n_effective, amplitude):
    """The log marginal likelihood summed over targets.

    ``sum_j -d_j / (2 s_j) - (m / 2) log(2 pi s_j) - log_det / 2``: ``+inf`` for a
    target of amplitude 0 (the maximizer when its data fit is 0).

    Examples
    --------
    One target, ``y ~ N(0, 2)`` at ``y = 1``:

    >>> import numpy as np
    >>> from kernelmaps._machines.gaussian_process import log_evidence
    >>> round(log_evidence(np.array([1.0]), 0.0, 1, np.array([2.0])), 6)  # log N(1; 0, 2)
    -1.515512
    """
    data_fit, amplitude = np.asarray(data_fit, dtype=np.float64), np.asarray(amplitude, dtype=np.float64)
    if np.any(amplitude == 0):
        return np.inf
    terms = -0.5 * data_fit / amplitude - 0.5 * n_effective * np.log(2 * np.pi * amplitude) - 0.5 * log_det
    return float(np.sum(terms))


def spectral_log_evidence(eigenvalues, projected, spread, alphas, n_effective, weight_sum=None, log_weight_sum=0.0):
    """The evidence of every penalty, each target's amplitude at its maximizer, from one eigendecomposition.

    The centred system ``Z_c^T W Z_c = U diag(e) U^T`` with ``p = U^T Z_c^T W y_c``
    gives the minimized objective ``R = |y_c|_W^2 - sum_k p_k^2 / (e_k + alpha)`` and
    ``log |A| = sum_k log(e_k + alpha)`` of every ``alpha`` at ``O(D)`` each: the
    weight-space evidence (:func:`weight_space_log_det`) with ``amplitude='auto'``.

    Parameters
    ----------
    eigenvalues : ndarray of shape (n_features,)
    projected : ndarray of shape (n_features, n_targets)
        ``p``.
    spread : ndarray of shape (n_targets,)
        ``|y_c|_W^2``: the weighted sum of squares about the mean (with an intercept) or about 0.
    alphas : ndarray of shape (n_alphas,)
    n_effective, weight_sum, log_weight_sum
        As :func:`weight_space_log_det` takes them.

    Returns
    -------
    ndarray of shape (n_alphas,)
        The log evidence summed over targets; ``R`` is clipped at 0 against rounding.
    """
    shifted = eigenvalues[:, None] + alphas[None, :]
    objective = np.maximum(spread[None, :] - np.einsum("dt,da->at", projected * projected, 1.0 / shifted), 0.0)
    log_det = weight_space_log_det(np.sum(np.log(shifted), axis=0), len(eigenvalues), alphas, n_effective,
                                   weight_sum, log_weight_sum)
    data_fit = objective / alphas[:, None]
    return np.array([log_evidence(fit, det, n_effective, fitted_amplitude("auto", fit, n_effective))
                     for fit, det in zip(data_fit, log_det)])


def posterior_variance(factor, U, prior, coefficient):
    """``P + c diag(U^T A^-1 U)`` for ``A = L L^T``: variances in units of the amplitude.

    Rounding below 0 (a new row on a training row, in the function-space form) is set to 0.
    """
    V = scipy.linalg.solve_triangular(factor, U, lower=True, check_finite=False)
    return np.maximum(prior + coefficient * np.einsum("ij,ij->j", V, V), 0.0)


def posterior_covariance(factor, U, prior, coefficient):
    """``P + c U^T A^-1 U`` for ``A = L L^T``, symmetric: the covariance in units of the amplitude."""
    V = scipy.linalg.solve_triangular(factor, U, lower=True, check_finite=False)
    cov = V.T @ V
    cov *= coefficient
    cov += prior
    cov += cov.T
    cov *= 0.5
    return cov


def jittered_cholesky(cov):
    """Lower Cholesky factor of ``cov + j max(diag(cov)) I``, ``j`` the first of :data:`JITTERS` that factors.

    A covariance of zeros gives a factor of zeros (every draw is the mean).
    """
    scale = float(np.max(np.diagonal(cov), initial=0.0))
    if scale <= 0:
        return np.zeros_like(cov)
    for jitter in JITTERS:
        jittered = cov.copy()
        jittered[np.diag_indices_from(jittered)] += jitter * scale
        try:
            return lower_cholesky(jittered, overwrite_a=True)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError(f"the posterior covariance is not positive semi-definite: its Cholesky "
                                f"factorization fails even with {JITTERS[-1]:g} of its largest variance added "
                                "to the diagonal")


class GaussianPosteriorMixin:
    """``predict(return_std, return_cov)``, ``sample_y`` and ``log_marginal_likelihood`` of a ridge learner.

    The learner's fit sets ``posterior_factor_`` (the lower Cholesky factor of its
    system), ``amplitude_`` and ``log_marginal_likelihood_value_``; it implements

    * ``_posterior_unavailable(new_rows)``: why the posterior cannot be given (a
      string), or None; ``new_rows`` is False for the evidence alone;
    * ``_posterior_input(X)``: the validated rows (never a Dask array: refused before);
    * ``_posterior_block(X_rows)``: ``(mean, U)``, the ``(b, k)`` means and the ``(p, b)`` cross terms;
    * ``_posterior_prior(X_rows, full, U)``: ``P``, its diagonal ``(b,)`` or all of it ``(b, b)``
      (``U`` the block's cross terms, for a ``P`` that depends on them);
    * ``_posterior_coefficient()``: ``c``;
    * ``_single_output()``: whether the mean is 1-D (one target given as a 1-D ``y``).
    """

    def _check_posterior(self, new_rows=True):
        check_is_fitted(self)
        reason = self._posterior_unavailable(new_rows)
        if reason is not None:
            raise ValueError(f"{type(self).__name__} has no posterior here: {reason}")

    def _amplitudes(self):
        return np.atleast_1d(np.asarray(self.amplitude_, dtype=np.float64))

    def _posterior_rows(self, X, n_square_matrices=0, what=""):
        """Validated rows, after refusing a posterior that cannot be given, or ``n_square_matrices``
        ``m x m`` float64 matrices (and two ``p x m`` cross terms) that do not fit in memory."""
        self._check_posterior()
        if is_dask_array(X):
            raise TypeError(f"{type(self).__name__}: the posterior's std, covariance and samples take rows in "
                            "memory, not a Dask array: compute its chunks and pass them in turn")
        X = self._posterior_input(X)
        m, p = X.shape[0], self.posterior_factor_.shape[0]
        if n_square_matrices:
            check_fits_in_memory(8 * m * (m * n_square_matrices + 2 * p), f"X with {m} rows", what,
                                 "ask for return_std, or for fewer rows at a time")
        return X

    def _posterior_mean_and_variance(self, X):
        """``(mean (m, k), variance (m,))`` in units of the amplitude, over row blocks of ``X``."""
        factor, coefficient = self.posterior_factor_, self._posterior_coefficient()
        means, variances = [], []
        step = block_rows(8 * factor.shape[0])
        for start in range(0, X.shape[0], step):
            rows = X[start:start + step]
            mean, U = self._posterior_block(rows)
            means.append(mean)
            variances.append(posterior_variance(factor, U, self._posterior_prior(rows, False, U), coefficient))
        return np.concatenate(means), np.concatenate(variances)

    def _posterior_mean_and_covariance(self, X):
        mean, U = self._posterior_block(X)
        cov = posterior_covariance(self.posterior_factor_, U, self._posterior_prior(X, True, U),
                                   self._posterior_coefficient())
        return mean, cov

    def _posterior_predict(self, X, return_std, return_cov):
        """The mean and its std or covariance, shaped as scikit-learn's ``GaussianProcessRegressor`` gives them."""
        if return_std and return_cov:
            raise ValueError("at most one of return_std and return_cov can be True: the std is the square root "
                             "of the covariance's diagonal")
        if return_std:
            X = self._posterior_rows(X)
            amplitude, single = self._amplitudes(), self._single_output()
            mean, variance = self._posterior_mean_and_variance(X)
            std = np.sqrt(variance[:, None] * amplitude)
            return (mean[:, 0], std[:, 0]) if single else (mean, std)
        self._check_posterior()
        amplitude, single = self._amplitudes(), self._single_output()
        X = self._posterior_rows(X, 3 + len(amplitude), "the posterior covariance")
        mean, cov = self._posterior_mean_and_covariance(X)
        if single:
            return mean[:, 0], cov * amplitude[0]
        return mean, cov[:, :, None] * amplitude

    @with_doc(SAMPLE_Y_DOC)
    def sample_y(self, X, n_samples=1, random_state=None):
        """Draw joint samples of the latent function's posterior at the rows ``X``.

        The draws are ``mean + sqrt(amplitude_) L e`` with ``e`` standard normal
        and ``L`` the Cholesky factor of the posterior covariance in units of the
        amplitude (shared by the targets), plus a jitter of ``1e-10`` of its
        largest variance on the diagonal (more, up to ``1e-6``, if the
        factorization needs it). The samples are of the latent ``f``, without
        the noise (add ``noise_variance_`` draws for ``y``). Memory: three
        ``m x m`` float64 matrices for ``m`` rows, refused up front when they do
        not fit.
        """
        n_samples = check_integer(n_samples, "n_samples", 1)
        rng = check_random_state(random_state)
        X = self._posterior_rows(X, 3, "the posterior covariance and its Cholesky factor")
        amplitude = self._amplitudes()
        mean, cov = self._posterior_mean_and_covariance(X)
        root = jittered_cholesky(cov)
        del cov
        m, k = mean.shape
        draws = root @ rng.standard_normal((m, k * n_samples))
        samples = mean[:, :, None] + draws.reshape(m, k, n_samples) * np.sqrt(amplitude)[None, :, None]
        return samples[:, 0, :] if self._single_output() else samples

    def log_marginal_likelihood(self):
        """Log evidence of the fitted model: ``log p(y)`` under its kernel (or features), ``alpha`` and amplitude.

        The sum over targets of each target's evidence (Rasmussen & Williams
        2006, eq. 5.8); no hyperparameter is taken, unlike scikit-learn's
        ``GaussianProcessRegressor.log_marginal_likelihood(theta)``: refit with
        other parameters to compare them.

        Returns
        -------
        float
            ``+inf`` when a target of all zeros gives the amplitude 0 under ``amplitude='auto'``.
        """
        self._check_posterior(new_rows=False)
        return self.log_marginal_likelihood_value_
