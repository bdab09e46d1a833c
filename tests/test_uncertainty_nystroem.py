"""The Gaussian-process reading of Nyström kernel ridge, against exact and brute-force references.

With every training row as a centre, the DTC posterior and both evidences are
scikit-learn's ``GaussianProcessRegressor``'s (noise variance ``alpha * amplitude``,
signal variance ``amplitude``). With fewer centres, the SoR and DTC posteriors, the
DTC likelihood and Titsias's bound equal their formulas evaluated densely with
``Q_nn = K_nm (K_mm + jitter I)^-1 K_mn``; ``sample_y`` draws from ``return_cov``.
"""

import numpy as np
import pytest
import scipy.stats
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern

from kernelmaps import NystroemKernelRidge, exact_kernel
from kernelmaps._core.validation import InsufficientMemoryError
from kernelmaps._machines import nystroem as nystroem_machines
from kernelmaps._machines.nystroem_posterior import posterior_square_matrices
from kernelmaps._solvers.kernel_operator import KernelOperator

from kernel_checks import covariance_z_scores

RTOL = 1e-6
#: Largest |z| of an entry of the empirical covariance or mean of N_DRAWS draws; a
#: covariance off by x2 gives |z| of about sqrt(N_DRAWS / 8) = 16 on its diagonal.
Z_BOUND = 5.0
N_DRAWS = 2000


def gp_problem(n=60, d=2, n_test=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y, rng.uniform(-2.5, 2.5, size=(n_test, d))


def exact_centres(X, y, alpha, amplitude, kernel="gaussian", nu=1.5, gamma=0.4):
    """Every training row a centre, solved tightly."""
    return NystroemKernelRidge(len(X), alpha=alpha, kernel=kernel, nu=nu, gamma=gamma, landmarks=X, tol=1e-12,
                               max_iter=2000, variance="dtc", amplitude=amplitude).fit(X, y)


def sklearn_gp(kernel, X, y, alpha, amplitude):
    prior = ConstantKernel(amplitude, "fixed") * kernel
    return GaussianProcessRegressor(prior, alpha=alpha * amplitude, optimizer=None, normalize_y=False).fit(X, y)


@pytest.mark.parametrize("amplitude", [1.0, 2.5, 0.04])
@pytest.mark.parametrize("kernel, nu", [("gaussian", None), ("matern", 1.5)])
def test_dtc_with_every_row_a_centre_is_sklearns_gaussian_process(kernel, nu, amplitude):
    X, y, X_test = gp_problem()
    gamma, alpha = 0.4, 0.05
    length_scale = 1.0 / np.sqrt(2.0 * gamma)
    reference = RBF(length_scale) if kernel == "gaussian" else Matern(length_scale, nu=nu)
    ours = exact_centres(X, y, alpha, amplitude, kernel, nu or 1.5, gamma)
    theirs = sklearn_gp(reference, X, y, alpha, amplitude)
    mean, std = ours.predict(X_test, return_std=True)
    their_mean, their_std = theirs.predict(X_test, return_std=True)
    np.testing.assert_allclose(std, their_std, rtol=RTOL)
    # the mean is the conjugate gradient's, solved to 1e-12 here
    np.testing.assert_allclose(mean, their_mean, rtol=0, atol=1e-6 * np.abs(their_mean).max())
    _, cov = ours.predict(X_test, return_cov=True)
    their_cov = theirs.predict(X_test, return_cov=True)[1]
    np.testing.assert_allclose(cov, their_cov, rtol=RTOL, atol=RTOL * np.abs(their_cov).max())
    evidence = theirs.log_marginal_likelihood()
    assert ours.dtc_log_marginal_likelihood_ == pytest.approx(evidence, rel=RTOL)
    # the trace term of Titsias's bound is 0 when Q_nn = K_nn
    assert ours.log_marginal_likelihood() == pytest.approx(evidence, rel=RTOL)


def test_auto_amplitude_with_every_row_a_centre_is_the_exact_maximizer():
    X, y, _ = gp_problem()
    ours = exact_centres(X, y, 0.05, "auto")
    K = exact_kernel(X, None, gamma=0.4)
    assert ours.amplitude_ == pytest.approx(y @ np.linalg.solve(K + 0.05 * np.eye(len(X)), y) / len(X), rel=RTOL)
    assert ours.noise_variance_ == pytest.approx(0.05 * ours.amplitude_)


@pytest.mark.parametrize("kernel", ["gaussian", "matern"])
def test_auto_amplitude_is_fitcs_maximizer_and_dtc_the_dtc_likelihoods(kernel):
    X, y, _ = gp_problem(n=300)
    common = dict(alpha=0.02, kernel=kernel, gamma=0.4, nu=1.5, variance="dtc", tol=1e-12, max_iter=500,
                  random_state=0)
    fitc = NystroemKernelRidge(20, amplitude="auto", **common).fit(np.asarray(X, np.float32), y)
    dtc = NystroemKernelRidge(20, amplitude="dtc", **common).fit(X, y)
    C, params = fitc.components_, dict(kernel=kernel, gamma=0.4, nu=1.5)
    K_nm = exact_kernel(np.asarray(X, np.float32).astype(np.float64), C, **params)
    Q_nn = K_nm @ np.linalg.solve(exact_kernel(C, None, **params) + fitc.jitter_ * np.eye(len(C)), K_nm.T)
    residual = 1.0 - np.diag(Q_nn)
    assert residual.mean() > 0.01  # 20 centres leave the rows a residual: FITC's prior is not DTC's
    fitc_prior = Q_nn + np.diag(residual + 0.02)
    assert fitc.amplitude_ == pytest.approx(y @ np.linalg.solve(fitc_prior, y) / len(y), rel=1e-6)
    # the DTC likelihood's maximizer reads the residual as signal: a larger amplitude
    assert dtc.amplitude_ == pytest.approx(y @ np.linalg.solve(Q_nn + 0.02 * np.eye(len(y)), y) / len(y), rel=1e-4)
    assert dtc.amplitude_ > 1.05 * fitc.amplitude_
    assert fitc.noise_variance_ == pytest.approx(0.02 * fitc.amplitude_)


def dense_sparse_gp(X, y, X_test, model):
    """SoR and DTC posterior covariances, DTC likelihood and Titsias's bound, from dense ``n x n`` matrices."""
    C, params = model.components_, dict(gamma=model.gamma_)
    K_mm = exact_kernel(C, None, **params) + model.jitter_ * np.eye(len(C))
    K_nm, K_sm = exact_kernel(X, C, **params), exact_kernel(X_test, C, **params)
    s, alpha, n = model.amplitude_, model.alpha, len(X)
    Q_nn = K_nm @ np.linalg.solve(K_mm, K_nm.T)
    noisy = s * (Q_nn + alpha * np.eye(n))
    dtc_evidence = scipy.stats.multivariate_normal(np.zeros(n), noisy).logpdf(y)
    bound = dtc_evidence - np.trace(exact_kernel(X, None, **params) - Q_nn) / (2 * alpha)
    Q_sn = K_sm @ np.linalg.solve(K_mm, K_nm.T)
    Q_ss = K_sm @ np.linalg.solve(K_mm, K_sm.T)
    mean = s * Q_sn @ np.linalg.solve(noisy, y)
    sor = s * Q_ss - s * Q_sn @ np.linalg.solve(noisy, s * Q_sn.T)
    residual = s * (exact_kernel(X_test, None, **params) - Q_ss)
    return mean, sor, sor + residual, dtc_evidence, bound


@pytest.mark.parametrize("amplitude", ["auto", "dtc", 3.0])
def test_few_centres_give_the_dense_sor_and_dtc_formulas(amplitude):
    X, y, X_test = gp_problem(n=120)
    dtc = NystroemKernelRidge(15, alpha=0.02, gamma=0.4, variance="dtc", amplitude=amplitude, tol=1e-12,
                              max_iter=500, random_state=0).fit(X, y)
    sor = NystroemKernelRidge(15, alpha=0.02, gamma=0.4, variance="sor", amplitude=amplitude, tol=1e-12,
                              max_iter=500, random_state=0).fit(X, y)
    mean, sor_cov, dtc_cov, evidence, bound = dense_sparse_gp(X, y, X_test, dtc)
    for model, cov in ((dtc, dtc_cov), (sor, sor_cov)):
        their_mean, their_std = model.predict(X_test, return_std=True)
        np.testing.assert_allclose(their_std, np.sqrt(np.diagonal(cov)), rtol=1e-8)
        np.testing.assert_allclose(model.predict(X_test, return_cov=True)[1], cov, rtol=1e-8,
                                   atol=1e-10 * np.abs(cov).max())
        np.testing.assert_allclose(their_mean, mean, atol=1e-8 * np.abs(mean).max())
        assert model.dtc_log_marginal_likelihood_ == pytest.approx(evidence, rel=1e-10)
        assert model.log_marginal_likelihood() == pytest.approx(bound, rel=1e-10)
    assert bound < evidence


def test_the_mean_is_predicts_and_the_posterior_leaves_the_fit_alone():
    X, y, X_test = gp_problem(n=200)
    plain = NystroemKernelRidge(30, alpha=0.1, gamma=0.4, random_state=0).fit(X, y)
    with_std = NystroemKernelRidge(30, alpha=0.1, gamma=0.4, variance="dtc", random_state=0).fit(X, y)
    np.testing.assert_array_equal(with_std.coef_, plain.coef_)
    mean = with_std.predict(X_test, return_std=True)[0]
    # to rounding: the mean with the std multiplies exact_kernel's block, predict the fused pass's
    np.testing.assert_allclose(mean, plain.predict(X_test), rtol=0, atol=1e-13 * np.abs(mean).max())


def test_dtc_returns_to_the_prior_far_from_the_centres_where_sor_collapses():
    X, y, _ = gp_problem(n=200)
    far = np.array([[40.0, -40.0], [60.0, 10.0]])
    for variance in ("dtc", "sor"):
        model = NystroemKernelRidge(30, alpha=0.1, gamma=0.4, variance=variance, amplitude=2.5,
                                    random_state=0).fit(X, y)
        mean, std = model.predict(far, return_std=True)
        np.testing.assert_allclose(mean, 0.0, atol=1e-300)
        np.testing.assert_allclose(std, np.sqrt(2.5) if variance == "dtc" else 0.0, rtol=1e-12, atol=1e-150)
        near = model.predict(X[:5], return_std=True)[1]
        assert np.all(near < 0.2 * np.sqrt(2.5))


def test_each_target_shares_the_std_up_to_its_amplitude():
    X, y, X_test = gp_problem(n=150)
    both = NystroemKernelRidge(20, alpha=0.1, gamma=0.4, variance="dtc", random_state=0).fit(X, np.c_[y, 3 * y])
    alone = NystroemKernelRidge(20, alpha=0.1, gamma=0.4, variance="dtc", random_state=0).fit(X, y)
    mean, std = both.predict(X_test, return_std=True)
    assert mean.shape == std.shape == (len(X_test), 2)
    np.testing.assert_allclose(both.amplitude_, [alone.amplitude_, 9 * alone.amplitude_], rtol=1e-10)
    np.testing.assert_allclose(std[:, 1], 3 * std[:, 0], rtol=1e-10)
    np.testing.assert_allclose(std[:, 0], alone.predict(X_test, return_std=True)[1], rtol=1e-10)
    assert both.predict(X_test, return_cov=True)[1].shape == (len(X_test), len(X_test), 2)
    assert both.sample_y(X_test, 3, random_state=0).shape == (len(X_test), 2, 3)


@pytest.mark.parametrize("variance", ["dtc", "sor"])
def test_pathwise_samples_have_the_returned_covariance(variance):
    X, y, X_test = gp_problem(n=300, n_test=5)
    # a point beyond the data gives DTC's residual a large share of the variance
    X_test[-1] = [3.5, 3.5]
    model = NystroemKernelRidge(25, alpha=0.1, gamma=0.4, variance=variance, amplitude=2.5,
                                random_state=0).fit(X, y)
    mean, cov = model.predict(X_test, return_cov=True)
    samples = model.sample_y(X_test, N_DRAWS, random_state=0)
    assert samples.shape == (len(X_test), N_DRAWS)
    z = covariance_z_scores(samples, mean, cov)
    print(f"{variance}: largest |z| of {N_DRAWS} draws: {z.max():.2f}")
    assert z.max() < Z_BOUND
    # the test sees a wrong scale: a missing amplitude, or alpha off by 2 in the SoR part
    assert covariance_z_scores(samples, mean, cov / 2.5).max() > Z_BOUND
    halved = NystroemKernelRidge(25, alpha=0.05, gamma=0.4, variance=variance, amplitude=2.5,
                                 random_state=0).fit(X, y)
    assert covariance_z_scores(samples, mean, halved.predict(X_test, return_cov=True)[1]).max() > Z_BOUND
    np.testing.assert_array_equal(samples, model.sample_y(X_test, N_DRAWS, random_state=0))


def test_kernel_operator_gram_is_the_dense_product():
    rng = np.random.default_rng(0)
    X, C, W = rng.normal(size=(3000, 3)), rng.normal(size=(40, 3)), rng.normal(size=(3000, 2))
    K = exact_kernel(X, C, gamma=0.3)
    for keep in (False, True):
        operator = KernelOperator(X, C, kernel="gaussian", gamma=0.3, keep_blocks=keep)
        operator @ np.ones(40)  # fills the kept blocks
        KtK, KtW, none, nothing = operator.gram(W)
        assert none is None and nothing is None
        np.testing.assert_allclose(KtK, K.T @ K, rtol=1e-12)
        np.testing.assert_allclose(KtW, K.T @ W, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(KtK, KtK.T)
    assert operator.gram()[1] is None


def test_the_gram_mirrors_its_upper_triangle_in_place_by_blocks_of_rows():
    from kernelmaps._solvers.cholesky import mirror_upper

    square = np.random.default_rng(2).standard_normal((11, 11))
    expected = np.triu(square) + np.triu(square, 1).T
    assert mirror_upper(square, block=3) is square
    np.testing.assert_array_equal(square, expected)


def test_kernel_operator_gram_with_row_weights_is_the_dense_weighted_product():
    rng = np.random.default_rng(1)
    X, C, W = rng.normal(size=(2500, 3)), rng.normal(size=(30, 3)), rng.normal(size=(2500, 2))
    K = exact_kernel(X, C, gamma=0.3)
    weights = 1.0 / (0.1 + np.arange(len(X)) / len(X))  # rows told apart: a misplaced block fails
    operator = KernelOperator(X, C, kernel="gaussian", gamma=0.3)
    seen = np.zeros(len(X), dtype=int)

    def row_weights(lo, hi, F):
        np.testing.assert_allclose(F, K[lo:hi], rtol=1e-12)
        seen[lo:hi] += 1
        return weights[lo:hi]

    KtK, KtW, KtDK, KtDW = operator.gram(W, row_weights=row_weights)
    np.testing.assert_array_equal(seen, 1)
    np.testing.assert_allclose(KtK, K.T @ K, rtol=1e-12)
    np.testing.assert_allclose(KtDK, K.T @ (weights[:, None] * K), rtol=1e-12)
    np.testing.assert_allclose(KtDW, K.T @ (weights[:, None] * W), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(KtDK, KtDK.T)


def test_bad_requests_are_refused_before_any_work(monkeypatch):
    da = pytest.importorskip("dask.array")
    X, y, X_test = gp_problem()
    plain = NystroemKernelRidge(10, alpha=0.1, gamma=0.4, random_state=0).fit(X, y)
    for call in (lambda: plain.predict(X_test, return_std=True), lambda: plain.predict(X_test, return_cov=True),
                 lambda: plain.sample_y(X_test), plain.log_marginal_likelihood):
        with pytest.raises(ValueError, match="fitted with variance=None"):
            call()
    assert plain.amplitude_ is None and plain.posterior_factor_ is None

    def no_pass(*args, **kwargs):
        raise AssertionError("a pass over the rows ran before the parameters were refused")

    monkeypatch.setattr(KernelOperator, "normal_matvec", no_pass)
    with pytest.raises(ValueError, match="variance must be 'dtc', 'sor' or None"):
        NystroemKernelRidge(10, variance="exact").fit(X, y)
    for bad in (0.0, "fitc", np.nan):
        with pytest.raises(ValueError, match="amplitude must be 'auto', 'dtc' or a positive finite float"):
            NystroemKernelRidge(10, variance="dtc", amplitude=bad).fit(X, y)
    with pytest.raises(ValueError, match="early_stopping"):
        NystroemKernelRidge(10, variance="dtc", early_stopping=True).fit(X, y)
    with pytest.raises(ValueError, match="fit in memory"):
        NystroemKernelRidge(10, variance="sor").fit(da.from_array(X, chunks=(20, -1)), da.from_array(y, chunks=20))
    monkeypatch.undo()

    model = NystroemKernelRidge(10, alpha=0.1, gamma=0.4, variance="dtc", random_state=0).fit(X, y)
    monkeypatch.setattr(NystroemKernelRidge, "_posterior_block", no_pass)
    too_many_rows = np.zeros((3_000_000, X.shape[1]))
    with pytest.raises(InsufficientMemoryError, match="X with 3000000 rows is too large"):
        model.predict(too_many_rows, return_cov=True)
    with pytest.raises(InsufficientMemoryError, match="X with 3000000 rows is too large"):
        model.sample_y(too_many_rows)
    with pytest.raises(InsufficientMemoryError, match="samples"):
        NystroemKernelRidge(10, alpha=0.1, gamma=0.4, variance="sor", random_state=0).fit(X, y).sample_y(
            X_test, n_samples=10**11)
    with pytest.raises(TypeError, match="not a Dask array"):
        model.predict(da.from_array(X_test, chunks=4), return_std=True)
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((2, X.shape[1]), np.nan), return_std=True)


def test_the_memory_plan_counts_the_posteriors_matrices(monkeypatch):
    asked = []
    monkeypatch.setattr(nystroem_machines, "check_fits_in_memory", lambda n_bytes, *args: asked.append(n_bytes))
    NystroemKernelRidge(variance="dtc").check_memory_plan(500, 2, np.float64)
    NystroemKernelRidge().check_memory_plan(500, 2, np.float64)
    assert asked[0] - asked[1] == 8 * posterior_square_matrices() * 500**2
