"""Statistical checks of a feature map against its exact kernel, and of posterior draws against their covariance.

One copy of each, used by the checks generated per kernel family
(test_kernel_approximation) and by the per-map tests of the variants those do
not cover (other kernels, the cos/sin output, other up- and down-projections).
"""

import numpy as np
import scipy.sparse as sp

from kernelmaps import kernel_mse, relative_frobenius_error


def gram_error(est, X, K=None):
    """Relative Frobenius error of the fitted map's ``Z Z^T`` on ``X`` against ``K``
    (default: the map's own ``kernel(X)``)."""
    Z = est.transform(X)
    return relative_frobenius_error(est.kernel(X) if K is None else K, Z=Z.toarray() if sp.issparse(Z) else Z)


def kernel_mse_per_seed(cls, X, n_components, gamma, n_seeds):
    """The kernel MSE on ``X`` of ``cls(n_components, gamma=gamma)`` drawn with each
    seed ``0, 1, ..., n_seeds - 1``, against the map's kernel (for paired comparisons)."""
    K = cls(n_components, gamma=gamma, random_state=0).fit(X).kernel(X)
    return np.array([kernel_mse(K, Z=cls(n_components, gamma=gamma, random_state=seed).fit(X).transform(X))
                     for seed in range(n_seeds)])


def assert_within_bound_and_a_wrong_bandwidth_fails(draw, X, gamma, bound):
    """``draw(gamma)`` fitted on ``X`` is within ``bound`` of its kernel, and drawn at
    ``2 gamma`` or ``gamma / 2`` it is more than ``2 bound`` from that same kernel."""
    right = draw(gamma).fit(X)
    K = right.kernel(X)
    assert gram_error(right, X, K) < bound
    for wrong in (2 * gamma, gamma / 2):
        error = gram_error(draw(wrong).fit(X), X, K)
        assert error > 2 * bound, (wrong, error)


def assert_unbiased_over_seeds(maps, X, K, n_sigma):
    """The mean of ``Z Z^T`` on ``X`` over the fitted ``maps`` (one a seed) is within
    ``n_sigma`` standard errors of ``K`` at every entry."""
    grams = [(lambda Z: Z @ Z.T)(est.transform(X)) for est in maps]
    grams = np.array([gram.toarray() if sp.issparse(gram) else gram for gram in grams])
    standard_error = grams.std(axis=0) / np.sqrt(len(grams))
    z = np.abs(grams.mean(axis=0) - K) / (standard_error + 1e-12)
    assert z.max() < n_sigma, z.max()


def assert_dense_form_matches(est, X, module, threshold_name, expect_dense, monkeypatch):
    """A fitted structured map whose transform may use the dense matrix it
    equals: the form it chose is ``expect_dense``, and forcing the structured
    form (``module.threshold_name = 0``) gives the same features in both dtypes."""
    form, _ = est._prepare_projection(np.dtype(np.float64))
    assert (form == "dense") == expect_dense
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        Z = est.transform(X.astype(dtype))
        monkeypatch.setattr(module, threshold_name, 0)
        Z_structured = est.transform(X.astype(dtype))
        monkeypatch.undo()
        assert Z.dtype == Z_structured.dtype == dtype
        np.testing.assert_allclose(Z, Z_structured, rtol=0, atol=tol)


def covariance_z_scores(samples, mean, cov):
    """z-scores of the draws' empirical mean and covariance entries against ``(mean, cov)``.

    A covariance entry from ``N`` Gaussian draws has the sampling variance
    ``(C_ij^2 + C_ii C_jj) / N``; the mean's entries ``C_ii / N``.
    """
    n_draws = samples.shape[1]
    centred = samples - mean[:, None]
    empirical = centred @ centred.T / n_draws
    variance = np.diagonal(cov)
    z_cov = (empirical - cov) / np.sqrt((cov**2 + np.outer(variance, variance)) / n_draws)
    z_mean = samples.mean(axis=1) - mean
    z_mean = z_mean / np.sqrt(variance / n_draws)
    return np.abs(np.concatenate([z_cov.ravel(), z_mean]))
