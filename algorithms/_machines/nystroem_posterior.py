"""The Gaussian-process reading of Nyström kernel ridge: SoR and DTC posteriors, the SGPR and DTC evidence.

:class:`kernelmaps.NystroemKernelRidge` minimizes ``||K_nm a - y||^2 + alpha
a^T K_mm a`` (with Falkon's jitter ``j`` on ``K_mm``'s diagonal: ``K_mm + j I =
T^T T``). That is the posterior mean of the subset-of-regressors (SoR) prior
``f(x) = k_m(x)^T a``, ``a ~ N(0, s (K_mm + j I)^-1)``, with the noise variance
``alpha s``: on the features ``z(x) = T^-T k_m(x)`` the prior is
``f(x) = z(x)^T w``, ``w ~ N(0, s I)``, Bayesian linear regression in the
weight-space form of :mod:`kernelmaps._machines.gaussian_process`:

* SoR: ``var f(x) = alpha s z^T A^-1 z`` with ``A = Z^T Z + alpha I``, ``Z = K_nm T^-1``;
* DTC (deterministic training conditional) adds the prior's residual
  ``s (k(x, x') - z(x)^T z(x'))``: the exact GP's posterior when every training
  row is a centre, and the prior far from the centres, where SoR's variance goes to 0.

Both have the evidence ``log N(y; 0, s (Q_nn + alpha I))`` with ``Q_nn = Z Z^T``
(the DTC likelihood), from ``A``'s factor by the matrix determinant lemma and
Woodbury's identity. Titsias's bound (SGPR) subtracts ``tr(s K_nn - s Q_nn) /
(2 alpha s) = tr(K_nn - Q_nn) / (2 alpha)`` per target: the amplitude cancels,
so ``amplitude='dtc'`` (the DTC likelihood's maximizer ``s = y^T (Q_nn + alpha
I)^-1 y / n``) maximizes the bound too. ``amplitude='auto'`` maximizes FITC's
likelihood instead, ``log N(y; 0, s (Q_nn + Lambda))`` with ``Lambda =
diag(K_nn - Q_nn) + alpha I``: ``s = y^T (Q_nn + Lambda)^-1 y / n``, by Woodbury's
identity from ``Z^T Lambda^-1 Z`` and ``Z^T Lambda^-1 y``, summed in the same pass
(each block's ``Lambda`` from its features' squared norms).

Everything comes from one pass over the training rows, ``Z^T Z`` and ``Z^T y``
(:meth:`kernelmaps._solvers.kernel_operator.KernelOperator.gram`, which reads the
kept kernel blocks; each block's features from a triangular solve with ``T``),
then a Cholesky factorization of ``A``, ``O(m^3)``.

References
----------
Quiñonero-Candela, J. and Rasmussen, C. E. A unifying view of sparse approximate
Gaussian process regression. JMLR 6, 2005 (SoR, DTC).

Titsias, M. Variational learning of inducing variables in sparse Gaussian
processes. AISTATS 2009.

Snelson, E. and Ghahramani, Z. Sparse Gaussian processes using pseudo-inputs.
NIPS 18, 2006 (FITC).

Wilson, J. T., Borovitskiy, V., Terenin, A., Mostowsky, P. and Deisenroth, M. P.
Efficiently sampling functions from Gaussian process posteriors. ICML 2020.
"""

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state

from .._core.parallel import block_rows, n_worker_threads
from .._core.validation import check_fits_in_memory, check_input, check_integer
from .._kernels.exact import exact_kernel, kernel_diagonal
from .._solvers.cholesky import lower_cholesky
from .._solvers.gil_free_lapack import RightUpperSolve
from .gaussian_process import (SAMPLE_Y_DOC, GaussianPosteriorMixin, check_amplitude, factor_log_det,
                               fitted_amplitude, jittered_cholesky, log_evidence, weight_space_log_det, with_doc)

#: The posterior variances ``variance`` offers (``None``: no posterior is kept).
VARIANCES = ("dtc", "sor")


def check_variance(variance):
    """``None``, ``'dtc'`` or ``'sor'``; a ``ValueError`` otherwise."""
    if variance is None or (isinstance(variance, str) and variance in VARIANCES):
        return variance
    raise ValueError(f"variance must be 'dtc', 'sor' or None (no posterior), got {variance!r}")


def check_nystroem_amplitude(amplitude):
    """``'auto'``, ``'dtc'`` or a positive finite float; a ``ValueError`` otherwise."""
    if isinstance(amplitude, str) and amplitude in ("auto", "dtc"):
        return amplitude
    try:
        return check_amplitude(amplitude)
    except ValueError:
        raise ValueError(f"amplitude must be 'auto', 'dtc' or a positive finite float, got {amplitude!r}") from None


def woodbury_misfit(factor, cross, squares):
    """``squares - |L^-1 cross|^2`` per column, ``L`` the lower ``factor``: the data fit left by Woodbury's
    identity (kept >= 0 against rounding)."""
    projected = scipy.linalg.solve_triangular(factor, cross, lower=True, check_finite=False)
    return np.maximum(squares - np.einsum("ij,ij->j", projected, projected), 0.0)


def fitc_data_fit(Y, noise, ZtDZ, ZtDY):
    """``y^T (Q_nn + Lambda)^-1 y`` per target, ``Lambda = diag(noise)``, from ``Z^T Lambda^-1 Z`` and
    ``Z^T Lambda^-1 Y`` by Woodbury's identity: ``y^T Lambda^-1 y - b^T (I + Z^T Lambda^-1 Z)^-1 b``."""
    inner = ZtDZ.copy()
    inner[np.diag_indices(inner.shape[0])] += 1.0
    return woodbury_misfit(lower_cholesky(inner, overwrite_a=True), ZtDY, np.einsum("ij,ij->j", Y / noise[:, None], Y))


def posterior_square_matrices(amplitude="auto"):
    """``m x m`` float64 matrices the posterior's fit holds at its peak, beyond the solver's: the pass's
    partial sums (one per thread) and their total, its transpose in the symmetrization, and the kept
    factors; under ``amplitude='auto'`` the weighted sums of FITC's amplitude as many again, but one."""
    threads = n_worker_threads()
    return threads + 4 + (threads + 2 if isinstance(amplitude, str) and amplitude == "auto" else 0)


class NystroemPosteriorMixin(GaussianPosteriorMixin):
    """``predict(return_std, return_cov)``, ``sample_y`` and the evidence of Nyström kernel ridge.

    The estimator has ``variance``, ``amplitude`` and ``alpha``; its fit calls
    :meth:`_check_posterior_params` before any work and :meth:`_keep_posterior`
    after the solve.
    """

    _fitted_private = ("_centre_factor",)

    def _check_posterior_params(self):
        variance = check_variance(self.variance)
        check_nystroem_amplitude(self.amplitude)
        if variance is not None and self.early_stopping:
            raise ValueError("early_stopping keeps coefficients that stop short of the solution, which are no "
                             "Gaussian process's posterior mean: set early_stopping=False to fit with "
                             f"variance={variance!r}, or variance=None")

    def _keep_posterior(self, K, y, centre_factor):
        """Set the posterior's attributes from the operator ``K`` of the training rows, the targets ``y`` and
        the upper factor ``T`` of the centres' jittered Gram matrix (all None without ``variance``)."""
        self.variance_ = self.variance
        self.posterior_factor_ = self._centre_factor = None
        self.amplitude_ = self.noise_variance_ = self.log_marginal_likelihood_value_ = None
        self.dtc_log_marginal_likelihood_ = None
        if self.variance is None:
            return
        alpha, (n, m) = float(self.alpha), K.shape
        Y = np.asarray(y, dtype=np.float64).reshape(n, -1)
        amplitude = check_nystroem_amplitude(self.amplitude)
        prior_diagonal = kernel_diagonal(K.X, **self._kernel_params())
        # under FITC's prior each row's noise is alpha plus its Nystrom residual k(x, x) - |z(x)|^2
        noise = np.empty(n) if amplitude == "auto" else None

        def fitc_weights(lo, hi, F):
            noise[lo:hi] = alpha + np.maximum(prior_diagonal[lo:hi] - np.einsum("ij,ij->i", F, F), 0.0)
            return 1.0 / noise[lo:hi]

        # Z^T Z and Z^T y of the features Z = K_nm T^-1, each block's from its own triangular solve (BLAS
        # without the GIL, so the pool's threads overlap): forming K^T K first and solving on both sides
        # would amplify its rounding by cond(K_mm)
        A, Zty, ZtDZ, ZtDy = K.gram(Y, RightUpperSolve(centre_factor),
                                    row_weights=None if noise is None else fitc_weights)
        trace_Q = float(np.trace(A))
        A[np.diag_indices(m)] += alpha
        factor = lower_cholesky(A, overwrite_a=True)
        # y^T (Q_nn + alpha I)^-1 y = (y^T y - |L^-1 Z^T y|^2) / alpha
        data_fit = woodbury_misfit(factor, Zty, np.einsum("ij,ij->j", Y, Y)) / alpha
        if noise is None:
            amplitudes = fitted_amplitude("auto" if amplitude == "dtc" else amplitude, data_fit, n)
        else:
            amplitudes = fitted_amplitude("auto", fitc_data_fit(Y, noise, ZtDZ, ZtDy), n)
        dtc = log_evidence(data_fit, weight_space_log_det(factor_log_det(factor), m, alpha, n), n, amplitudes)
        # tr(K_nn - Q_nn): 0 in exact arithmetic when every row is a centre, rounding kept >= 0
        residual_trace = max(float(np.sum(prior_diagonal)) - trace_Q, 0.0)
        self.posterior_factor_, self._centre_factor = factor, np.asarray(centre_factor, dtype=np.float64)
        self.amplitude_ = float(amplitudes[0]) if self._single_output() else amplitudes
        self.noise_variance_ = alpha * self.amplitude_
        self.dtc_log_marginal_likelihood_ = dtc
        self.log_marginal_likelihood_value_ = dtc - Y.shape[1] * residual_trace / (2.0 * alpha)

    # ------------------------------------------------------------ the mixin's hooks
    def _posterior_unavailable(self, new_rows):
        if getattr(self, "posterior_factor_", None) is None:
            return ("it was fitted with variance=None (or on a Dask array), which keeps none of the m x m "
                    "matrices of the posterior and the evidence: fit in memory with variance='dtc' or 'sor'")
        return None

    def _posterior_input(self, X):
        return check_input(self, X, reset=False)

    def _posterior_block(self, X):
        K = exact_kernel(X, self.components_, **self._kernel_params())
        mean = K @ self.coef_.reshape(K.shape[1], -1)
        features = scipy.linalg.solve_triangular(self._centre_factor, K.T, lower=False, trans="T",
                                                 check_finite=False)
        return mean, features

    def _posterior_prior(self, X, full, features):
        """SoR: 0. DTC: the residual ``k(x, x') - z(x)^T z(x')`` (its diagonal kept >= 0 against rounding)."""
        b = X.shape[0]
        if self.variance_ == "sor":
            return np.zeros((b, b)) if full else np.zeros(b)
        if full:
            return exact_kernel(X, None, **self._kernel_params()) - features.T @ features
        return np.maximum(kernel_diagonal(X, **self._kernel_params()) - np.einsum("ij,ij->j", features, features),
                          0.0)

    def _posterior_coefficient(self):
        return float(self.alpha)

    def _single_output(self):
        return self.coef_.ndim == 1

    def log_marginal_likelihood(self):
        """Titsias's lower bound on the log evidence (SGPR), summed over targets.

        ``log N(y; 0, s (Q_nn + alpha I)) - tr(K_nn - Q_nn) / (2 alpha)`` per
        target: the DTC likelihood (``dtc_log_marginal_likelihood_``) minus the
        trace of the Nyström residual at the training rows, which is 0 when
        every training row is a centre, where both are the exact GP's evidence.
        No hyperparameter is taken: refit with other parameters to compare them.

        Returns
        -------
        float
            ``+inf`` when a target of all zeros gives the amplitude 0 under ``amplitude='auto'``.
        """
        return super().log_marginal_likelihood()

    @with_doc(SAMPLE_Y_DOC)
    def sample_y(self, X, n_samples=1, random_state=None):
        """Joint samples of the latent function's posterior at the rows ``X``, by pathwise conditioning.

        A prior function of SoR is ``f(x) = z(x)^T w``, ``w ~ N(0, s I)``, held
        exactly by the ``m`` weights; Wilson et al.'s update conditions it on
        targets perturbed by the noise ``e ~ N(0, alpha s I)``:
        ``w + A^-1 (Z^T (y - e) - Z^T Z w)``. It is the mean's weights plus
        ``A^-1 (alpha w - Z^T e)``, whose law is ``N(0, alpha s A^-1)``: the
        update of all draws is ``sqrt(alpha s) L^-T E`` for standard normal
        ``E`` (``m x n_samples``), one multi-right-hand-side triangular solve
        with the kept factor ``L L^T = A``, without a pass over the training
        rows. At the rows it is added to :meth:`predict`'s mean (the machine's
        coefficients). With ``variance='dtc'`` the samples add DTC's residual,
        independent of the SoR part: ``sqrt(s) R e'`` with ``R`` the (jittered,
        as :func:`kernelmaps._machines.gaussian_process.jittered_cholesky`)
        Cholesky factor of ``k(X, X) - Q(X, X)`` at the rows, so that their
        covariance is ``predict(X, return_cov=True)``'s. Samples of ``f``,
        without the noise (add ``noise_variance_`` draws for ``y``).

        Time ``O(m^2 (n_rows + S) + n_rows m S)`` for ``S = n_samples`` draws of
        each target, in row blocks; DTC adds ``O(n_rows^3)`` and three
        ``n_rows x n_rows`` float64 matrices (refused up front when they do not
        fit). Wilson, J. T. et al. Efficiently sampling functions from Gaussian
        process posteriors. ICML 2020 (eq. 13: the pathwise update).
        """
        n_samples = check_integer(n_samples, "n_samples", 1)
        rng = check_random_state(random_state)
        dtc = getattr(self, "variance_", None) == "dtc"
        X = self._posterior_rows(X, 3 if dtc else 0, "the DTC residual's covariance and its Cholesky factor")
        amplitude = self._amplitudes()
        b, k = X.shape[0], len(amplitude)
        check_fits_in_memory(8 * b * k * n_samples * 2, f"{n_samples} samples of {b} rows", "the samples",
                             "ask for fewer samples or rows at a time")
        factor, m = self.posterior_factor_, self.posterior_factor_.shape[0]
        update = np.sqrt(float(self.alpha)) * scipy.linalg.solve_triangular(
            factor, rng.standard_normal((m, k * n_samples)), lower=True, trans="T", check_finite=False)
        means, draws = np.empty((b, k)), np.empty((b, k * n_samples))
        step = block_rows(8 * (m + k * n_samples))
        for start in range(0, b, step):
            means[start:start + step], features = self._posterior_block(X[start:start + step])
            draws[start:start + step] = features.T @ update
        if dtc:
            features = self._posterior_block(X)[1]
            draws += jittered_cholesky(self._posterior_prior(X, True, features)) @ rng.standard_normal(draws.shape)
        samples = means[:, :, None] + draws.reshape(b, k, n_samples) * np.sqrt(amplitude)[None, :, None]
        return samples[:, 0, :] if self._single_output() else samples
