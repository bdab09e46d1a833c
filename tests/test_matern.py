"""The Matérn kernel: against scikit-learn, its limits, its Numba block, and the estimators that take it."""

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import Matern

from kernelmaps import KernelRidge, KernelSVC, Nystroem, exact_kernel
from kernelmaps._kernels.blocks import KernelBlocks
from kernelmaps._kernels.formulas import kernel_record
from kernelmaps._solvers.kernel_cache import kernel_column
from kernelmaps._solvers.kernel_operator import KernelOperator
from scipy.special import gamma as gamma_function, kv

NUS = [0.5, 1.5, 2.5, 0.7, 4.0]


def naive_matern(X, Y, gamma, nu):
    """``2^(1-nu)/Gamma(nu) s^nu K_nu(s)``, ``s = 2 sqrt(nu gamma) |x - y|``, in plain NumPy/SciPy."""
    r = np.sqrt(((X[:, None, :].astype(np.float64) - Y[None, :, :]) ** 2).sum(-1))
    s = 2.0 * np.sqrt(nu * gamma) * r
    with np.errstate(invalid="ignore"):
        K = 2.0 ** (1.0 - nu) / gamma_function(nu) * s ** nu * kv(nu, s)
    K[s == 0] = 1.0
    return K


@pytest.fixture
def points():
    rng = np.random.default_rng(0)
    return rng.standard_normal((40, 3)), rng.standard_normal((25, 3))


@pytest.mark.parametrize("nu", NUS)
def test_matches_scikit_learn_at_gamma_one_over_two_l_squared(nu, points):
    X, Y = points
    for l in (0.5, 2.0):
        gamma = 1.0 / (2.0 * l * l)
        expected = Matern(length_scale=l, nu=nu)(X, Y)
        np.testing.assert_allclose(exact_kernel(X, Y, kernel="matern", gamma=gamma, nu=nu), expected,
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(exact_kernel(X, kernel="matern", gamma=gamma, nu=nu), Matern(l, nu=nu)(X),
                                   rtol=1e-10, atol=1e-12)
        K32 = exact_kernel(X.astype(np.float32), Y.astype(np.float32), kernel="matern", gamma=gamma, nu=nu)
        assert K32.dtype == np.float32
        np.testing.assert_allclose(K32, expected, rtol=1e-4, atol=1e-5)
        # a gamma off by 2 (e.g. l^2 for 2 l^2) is far from scikit-learn's
        wrong = exact_kernel(X, Y, kernel="matern", gamma=2 * gamma, nu=nu)
        assert np.abs(wrong - expected).max() > 1e-2


def test_nu_one_half_is_the_one_dimensional_laplacian(points):
    x = points[0][:, :1]
    np.testing.assert_allclose(exact_kernel(x, kernel="matern", gamma=0.3, nu=0.5),
                               exact_kernel(x, kernel="laplacian", gamma=np.sqrt(2 * 0.3)), rtol=1e-12)


def test_large_nu_tends_to_the_gaussian_of_the_same_gamma(points):
    X, Y = points
    gaussian = exact_kernel(X, Y, kernel="gaussian", gamma=0.4)
    errors = [np.abs(exact_kernel(X, Y, kernel="matern", gamma=0.4, nu=nu) - gaussian).max()
              for nu in (2.5, 20, 200, 2000)]
    # the gap closes as 1/nu (2000 goes through Debye's expansion of K_nu, where kve overflows)
    assert errors[3] < 3e-4 and errors[3] < errors[2] / 5 < errors[1] / 25 < errors[0] / 100
    other = exact_kernel(X, Y, kernel="gaussian", gamma=0.8)
    assert np.abs(exact_kernel(X, Y, kernel="matern", gamma=0.4, nu=200) - other).max() > 0.1


@pytest.mark.parametrize("nu", [0, -1.5, np.nan, np.inf, "1.5", True, None])
def test_bad_nu_is_refused_naming_nu(nu, points):
    X, _ = points
    with pytest.raises(ValueError, match="nu"):
        exact_kernel(X, kernel="matern", nu=nu)
    for estimator in (Nystroem(10, kernel="matern", nu=nu), KernelRidge(kernel="matern", nu=nu)):
        with pytest.raises(ValueError, match="nu"):
            estimator.fit(X, X[:, 0])


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, 3.5, 0.7])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_kernel_block_matches_numpy(nu, dtype, rtol, points):
    X, V = (A.astype(dtype) for A in points)
    blocks = KernelBlocks(V, "matern", 0.3, nu=nu, dtype=dtype, frame=(None, 1.0))
    assert blocks.record.product
    G = blocks.fill(X, np.empty((X.shape[0], V.shape[0]), dtype))
    assert G.dtype == dtype
    np.testing.assert_allclose(G, naive_matern(X, V, 0.3, nu), rtol=rtol, atol=rtol * 1e-1)


@pytest.mark.parametrize("nu", [1.5, 0.7])
def test_kernel_operator_and_svm_column_are_the_gram(nu, points):
    X, C = points
    K = exact_kernel(X, C, kernel="matern", gamma=0.3, nu=nu)
    op = KernelOperator(X, C, kernel="matern", gamma=0.3, nu=nu)
    np.testing.assert_allclose(op @ np.eye(C.shape[0]), K, rtol=1e-12, atol=1e-13)
    record = kernel_record("matern", 0.3, 2, 1.0, 2.5, 1.0, np.float64)
    cache = (np.empty((2, 40)), np.full(40, -1, dtype=np.int64), np.full(2, -1, dtype=np.int64),
             np.full(2, -1, dtype=np.int64), np.zeros(2, dtype=np.int64))
    col = kernel_column(3, 40, X, np.einsum("ij,ij->i", X, X), record, *cache, 0)
    np.testing.assert_allclose(col, exact_kernel(X, kernel="matern", gamma=0.3, nu=2.5)[:, 3], rtol=1e-12,
                               atol=1e-13)


@pytest.mark.parametrize("nu", [1.5, 0.7])
def test_estimators_take_matern_and_differ_from_the_gaussian(nu):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((120, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    K = exact_kernel(X, kernel="matern", gamma=0.3, nu=nu)
    ny = Nystroem(120, kernel="matern", gamma=0.3, nu=nu, random_state=0).fit(X)
    Z = ny.transform(X)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)
    assert ny.nu_ == nu
    assert np.abs(Nystroem(120, gamma=0.3, random_state=0).fit(X).transform(X) - Z).max() > 1e-2
    svc = KernelSVC(kernel="matern", gamma=0.3, nu=nu).fit(X, y)
    assert svc.nu_ == nu and svc._kernel_params()["nu"] == nu
    gauss_svc = KernelSVC(gamma=0.3).fit(X, y)
    assert np.abs(svc.decision_function(X) - gauss_svc.decision_function(X)).max() > 1e-2
    ridge = KernelRidge(alpha=0.1, kernel="matern", gamma=0.3, nu=nu).fit(X, y)
    np.testing.assert_allclose(ridge.predict(X), K @ np.linalg.solve(K + 0.1 * np.eye(120), y), atol=1e-8)
    assert np.abs(ridge.predict(X) - KernelRidge(alpha=0.1, gamma=0.3).fit(X, y).predict(X)).max() > 1e-2


@pytest.mark.parametrize("nu", [2.5, 0.7])
def test_nystroem_machines_take_matern(nu):
    from kernelmaps import NystroemKernelRidge, NystroemLogisticRegression

    rng = np.random.default_rng(2)
    X = rng.standard_normal((80, 2))
    t = np.sin(2 * X[:, 0]) + X[:, 1]
    # every row a centre: the Nyström machine is the exact kernel ridge
    falkon = NystroemKernelRidge(80, alpha=0.1, kernel="matern", gamma=0.5, nu=nu, landmarks=X, tol=1e-12,
                                 max_iter=500).fit(X, t)
    exact = KernelRidge(alpha=0.1, kernel="matern", gamma=0.5, nu=nu).fit(X, t)
    np.testing.assert_allclose(falkon.predict(X), exact.predict(X), atol=1e-6)
    assert falkon.nu_ == nu
    logistic = NystroemLogisticRegression(20, kernel="matern", gamma=0.5, nu=nu, random_state=0).fit(X, t > 0)
    assert logistic.score(X, t > 0) > 0.8


# ----------------------------------------------------- points in both arguments
@pytest.mark.parametrize("nu", [0.1, 0.3, 0.5, 1.5])
@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_a_point_in_both_arguments_has_kernel_one(nu, dtype, atol):
    """The diagonal of K(X, copy of X): the BLAS expansion of |x - y|^2 leaves ~eps |x|^2
    there, which the cusp of nu < 1 turned into 1 - 3e-5 (float64) and 1 - 0.2 (float32)."""
    X = np.random.default_rng(0).standard_normal((80, 4)).astype(dtype)
    K = exact_kernel(X, X.copy(), kernel="matern", nu=nu, gamma=0.5)
    expected = Matern(length_scale=1.0, nu=nu)(X.astype(np.float64))
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=0, atol=atol)
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-10 if dtype == np.float64 else 1e-4)


@pytest.mark.parametrize("nu", [0.1, 0.3, 0.5])
def test_nearly_coinciding_points_against_scikit_learn(nu):
    X = np.random.default_rng(1).standard_normal((40, 4))
    near = X + 1e-9
    expected = Matern(length_scale=1.0, nu=nu)(X, near)  # 1 - k ~ (distance)^(2 nu), from 1e-5 up
    np.testing.assert_allclose(exact_kernel(X, near, kernel="matern", nu=nu, gamma=0.5), expected,
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_nystroem_with_every_row_a_landmark_is_the_exact_matern_kernel(dtype, atol):
    X = np.random.default_rng(0).standard_normal((80, 4))
    ny = Nystroem(80, kernel="matern", nu=0.3, gamma=0.5, random_state=0).fit(X.astype(dtype))
    Z = ny.transform(X.astype(dtype)).astype(np.float64)
    K = exact_kernel(X.astype(dtype).astype(np.float64), kernel="matern", nu=0.3, gamma=0.5)
    np.testing.assert_allclose(Z @ Z.T, K, rtol=0, atol=atol)


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_kernel_operator_on_rows_that_are_centres(dtype, atol):
    X = np.random.default_rng(0).standard_normal((80, 4)).astype(dtype)
    op = KernelOperator(X, X[:20], kernel="matern", gamma=0.5, nu=0.3)
    np.testing.assert_allclose(np.diag(op @ np.eye(20)), 1.0, rtol=0, atol=atol)


def test_svm_columns_on_their_own_rows():
    X = np.random.default_rng(0).standard_normal((60, 8)) * 3 + 1
    record = kernel_record("matern", 0.5, 2, 1.0, 0.5, 1.0, np.float64)
    expected = Matern(length_scale=1.0, nu=0.5)(X)
    for i in range(60):
        cache = (np.empty((1, 60)), np.full(60, -1, dtype=np.int64), np.full(1, -1, dtype=np.int64),
                 np.full(1, -1, dtype=np.int64), np.zeros(1, dtype=np.int64))
        col = kernel_column(i, 60, X, np.einsum("ij,ij->i", X, X), record, *cache, 0)
        np.testing.assert_allclose(col, expected[:, i], rtol=0, atol=1e-12)
