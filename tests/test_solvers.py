"""The solver components: the blocked kernel operator, multi-RHS CG, Falkon's preconditioner.

Each is held to its dense NumPy counterpart, and each failure mode (an indefinite
system, a non-finite operator, an impossible ridge) to a named error.
"""

import numba
import numpy as np
import pytest

from kernelmaps import KernelRidge, exact_kernel
from kernelmaps._solvers.conjugate_gradient import NotPositiveDefiniteError, conjugate_gradient
from kernelmaps._solvers.falkon import FalkonPreconditioner, nystroem_kernel_ridge
from kernelmaps._solvers.kernel_operator import MAX_PARTIAL_SUMS, KernelOperator

KERNELS = ["gaussian", "laplacian", "cauchy", "polynomial", "exponential"]


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3000, 4)), rng.standard_normal((120, 4))


def spd(m, seed=0):
    M = np.random.default_rng(seed).standard_normal((m, m))
    return M @ M.T + 0.1 * np.eye(m)


# ------------------------------------------------------------ kernel operator
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_operator_products_equal_the_dense_kernel_matrix(kernel, rows):
    X, C = rows
    rng = np.random.default_rng(1)
    V, W = rng.standard_normal((len(C), 3)), rng.standard_normal((len(X), 3))
    K = KernelOperator(X, C, kernel=kernel, gamma=0.2)
    dense = exact_kernel(X, C, kernel=kernel, gamma=0.2)
    scale = np.abs(dense).max()
    assert K.shape == dense.shape
    np.testing.assert_allclose(K @ V, dense @ V, rtol=0, atol=1e-12 * scale * len(C))
    np.testing.assert_allclose(K.matvec(V[:, 0]), dense @ V[:, 0], rtol=0, atol=1e-12 * scale * len(C))
    np.testing.assert_allclose(K.T @ W, dense.T @ W, rtol=0, atol=1e-12 * scale * len(X))
    np.testing.assert_allclose(K.rmatvec(W[:, 0]), dense.T @ W[:, 0], rtol=0, atol=1e-12 * scale * len(X))
    expected = dense.T @ (dense @ V + W)
    np.testing.assert_allclose(K.normal_matvec(V, W), expected, rtol=1e-11, atol=1e-11 * np.abs(expected).max())
    np.testing.assert_allclose(K.normal_matvec(V), dense.T @ dense @ V, rtol=1e-11)
    np.testing.assert_allclose(K.normal_matvec(None, W), dense.T @ W, rtol=1e-11, atol=1e-11 * scale)


def test_kernel_operator_sums_in_an_order_fixed_by_n_alone(rows):
    X, C = rows
    X = np.vstack([X] * 4)  # more row blocks than partial sums
    V = np.random.default_rng(2).standard_normal((len(C), 2))
    K = KernelOperator(X, C, kernel="gaussian", gamma=0.2)
    assert -(-len(X) // K.block) > MAX_PARTIAL_SUMS
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        serial = K.normal_matvec(V)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        threaded = K.normal_matvec(V)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(serial, threaded)


def test_kernel_operator_refuses_mismatched_widths(rows):
    X, C = rows
    with pytest.raises(ValueError, match="same number of columns"):
        KernelOperator(X, C[:, :3], kernel="gaussian", gamma=1.0)


# ------------------------------------------------------------ conjugate gradient
def test_cg_solves_several_right_hand_sides_at_once():
    A, B = spd(40), np.random.default_rng(3).standard_normal((40, 3))
    passes = []
    result = conjugate_gradient(lambda P: passes.append(1) or A @ P, B, tol=1e-12, max_iter=400)
    assert result.converged
    np.testing.assert_allclose(result.x, np.linalg.solve(A, B), rtol=1e-8, atol=1e-10)
    assert len(passes) == result.n_iter  # one product per iteration for all three columns
    assert result.residuals[0] == 1.0 and result.residuals[-1] <= 1e-12
    single = conjugate_gradient(lambda P: A @ P, B[:, 0], tol=1e-12, max_iter=400)
    assert single.x.shape == (40,)
    np.testing.assert_allclose(single.x, result.x[:, 0], rtol=1e-8)


def test_cg_gives_each_column_its_tolerance_and_stops_multiplying_it_there():
    """Per-column tolerances, and ``columns=True``: the product sees only the unsolved columns (each with its own
    operator here), every column is solved as if alone to its own tolerance, and ``residual`` is ``B - A X``."""
    operators = [spd(30, seed=seed) for seed in (6, 7, 8)]
    B = np.random.default_rng(9).standard_normal((30, 3))
    tol = np.array([1e-2, 1e-10, 1e-5])
    seen = []

    def apply(P, columns):
        indices = np.arange(3)[columns]
        seen.append(tuple(indices))
        return np.hstack([operators[j] @ P[:, i:i + 1] for i, j in enumerate(indices)])

    result = conjugate_gradient(apply, B, tol=tol, max_iter=500, columns=True)
    assert result.converged
    assert seen[0] == (0, 1, 2) and seen[-1] == (1,)
    for j, A in enumerate(operators):
        alone = conjugate_gradient(lambda P: A @ P, B[:, j], tol=tol[j], max_iter=500)
        # the same recurrence but for the rounding of sums over three columns, not one
        np.testing.assert_allclose(result.x[:, j], alone.x, rtol=10 * max(tol[j], 1e-9))
        assert sum(j in columns for columns in seen) == alone.n_iter
        assert np.linalg.norm(B[:, j] - A @ result.x[:, j]) <= tol[j] * np.linalg.norm(B[:, j]) * (1 + 1e-6)
        np.testing.assert_allclose(result.residual[:, j], B[:, j] - A @ result.x[:, j], atol=1e-9)


def test_cg_solves_a_zero_column_by_zero_and_starts_from_x0():
    A, B = spd(20), np.random.default_rng(4).standard_normal((20, 2))
    B[:, 1] = 0.0
    result = conjugate_gradient(lambda P: A @ P, B, tol=1e-12, max_iter=200)
    assert result.converged and not result.x[:, 1].any()
    exact = np.linalg.solve(A, B)
    warm = conjugate_gradient(lambda P: A @ P, B, x0=exact, tol=1e-10)
    assert warm.n_iter == 0 and warm.converged
    by_columns = conjugate_gradient(lambda P, columns: A @ P, B, x0=exact, tol=1e-10, columns=True)
    assert by_columns.n_iter == 0 and by_columns.converged


def test_cg_on_an_indefinite_system_names_the_cause():
    A = np.diag(np.r_[np.ones(5), -np.ones(5)])
    with pytest.raises(NotPositiveDefiniteError, match="not positive definite"):
        conjugate_gradient(lambda P: A @ P, np.ones(10), tol=1e-10)


def test_cg_on_a_non_finite_operator_is_an_error():
    with pytest.raises((FloatingPointError, NotPositiveDefiniteError)):
        conjugate_gradient(lambda P: np.full_like(P, np.nan), np.ones(4))


def test_cg_stops_at_max_iter_and_when_the_callback_says_so():
    A, b = spd(60, seed=5), np.ones(60)
    capped = conjugate_gradient(lambda P: A @ P, b, tol=1e-14, max_iter=3)
    assert capped.n_iter == 3 and not capped.converged and len(capped.residuals) == 4
    seen = []
    stopped = conjugate_gradient(lambda P: A @ P, b, tol=1e-14, max_iter=50,
                                 callback=lambda it, residual, x: seen.append(residual) or it == 2)
    assert stopped.n_iter == 2 and seen == list(stopped.residuals[1:])


# ------------------------------------------------------------ Falkon
def test_falkon_with_every_row_a_centre_is_exact_kernel_ridge():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((600, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(600)
    alpha, gamma = 1e-2, 0.5
    K = KernelOperator(X, X, kernel="gaussian", gamma=gamma)
    solution = nystroem_kernel_ridge(K, exact_kernel(X, gamma=gamma), y, alpha / len(X), tol=1e-10)
    assert solution.cg.converged and solution.cg.n_iter <= 5
    X_test = rng.standard_normal((200, 3))
    ours = exact_kernel(X_test, X, gamma=gamma) @ solution.coef[:, 0]
    exact = KernelRidge(alpha=alpha, kernel="gaussian", gamma=gamma).fit(X, y).predict(X_test)
    np.testing.assert_allclose(ours, exact, rtol=0, atol=1e-6 * np.abs(exact).max())


def test_the_preconditioner_matters():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((4000, 6))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(4000)
    C = X[rng.choice(4000, 300, replace=False)]
    K, K_mm = KernelOperator(X, C, kernel="gaussian", gamma=0.15), exact_kernel(C, gamma=0.15)
    falkon = nystroem_kernel_ridge(K, K_mm, y, 1e-3, max_iter=20, tol=1e-6)
    plain = nystroem_kernel_ridge(K, K_mm, y, 1e-3, preconditioned=False, max_iter=falkon.cg.n_iter, tol=1e-6)
    assert falkon.cg.converged
    assert plain.cg.residuals[-1] > 1e-3, plain.cg.residuals[-1]
    # the same minimizer, reached by the plain iteration given time
    reference = nystroem_kernel_ridge(K, K_mm, y, 1e-3, preconditioned=False, max_iter=3000, tol=1e-10)
    np.testing.assert_allclose(K @ falkon.coef, K @ reference.coef, rtol=0, atol=1e-4)


def test_falkon_warm_start_and_callback_see_the_coefficients():
    rng = np.random.default_rng(8)
    X, y = rng.standard_normal((1000, 3)), rng.standard_normal(1000)
    C = X[:100]
    K, K_mm = KernelOperator(X, C, kernel="gaussian", gamma=0.3), exact_kernel(C, gamma=0.3)
    first = nystroem_kernel_ridge(K, K_mm, y, 1e-3, tol=1e-8)
    again = nystroem_kernel_ridge(K, K_mm, y, 1e-3, tol=1e-6, x0=first.coef)
    assert again.cg.n_iter == 0
    seen = []
    nystroem_kernel_ridge(K, K_mm, y, 1e-3, tol=1e-8, callback=lambda it, r, coef: seen.append(coef.copy()))
    np.testing.assert_allclose(seen[-1], first.coef, rtol=1e-10)
    # a callback that only counts iterations is handed no coefficients, and the solution is the same
    counted = []
    blind = nystroem_kernel_ridge(K, K_mm, y, 1e-3, tol=1e-8, callback=lambda it, r, coef: counted.append(coef),
                                  callback_coef=False)
    assert len(counted) == len(seen) and all(coef is None for coef in counted)
    np.testing.assert_array_equal(blind.coef, first.coef)


def test_falkon_refuses_an_impossible_ridge_or_kernel():
    C = np.random.default_rng(9).standard_normal((10, 2))
    with pytest.raises(ValueError, match="must be positive"):
        FalkonPreconditioner(exact_kernel(C), 0.0)
    with pytest.raises(ValueError, match="not positive definite"):
        FalkonPreconditioner(np.array([[1.0, 2.0], [2.0, 1.0]]), 1e-3)  # eigenvalues 3 and -1
