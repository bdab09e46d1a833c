"""SciPy's trsm and potrf called without the GIL: the same results as SciPy's wrappers, bit for bit."""

import threading

import numpy as np
import pytest
import scipy.linalg

from kernelmaps._solvers.gil_free_lapack import (RightUpperSolve, upper_cholesky_in_place,
                                                 upper_transposed_solve_in_place)


@pytest.mark.parametrize("m", [1, 5, 131])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_solve_is_scipys_triangular_solve(m, dtype):
    rng = np.random.default_rng(m)
    T = np.triu(rng.standard_normal((m, m))) + m * np.eye(m)
    T_with_lower = T + np.tril(rng.standard_normal((m, m)), -1)  # the lower triangle is not read
    X = rng.standard_normal((50, m)).astype(dtype)
    ours = RightUpperSolve(T_with_lower)(X)
    reference = scipy.linalg.solve_triangular(T, X.astype(np.float64).T, trans="T", lower=False).T
    assert ours.dtype == np.float64 and ours.shape == X.shape and ours.flags.c_contiguous
    np.testing.assert_array_equal(ours, reference)
    np.testing.assert_allclose(ours @ T, X, rtol=1e-12, atol=1e-12)
    assert RightUpperSolve(T)(np.empty((0, m))).shape == (0, m)
    with pytest.raises(ValueError, match="columns of T"):
        RightUpperSolve(T)(np.ones((3, m + 1)))


def test_the_factorization_is_scipys_and_reports_what_is_not_positive_definite():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((70, 70))
    S = A @ A.T + np.eye(70)
    ours = S.copy()
    assert upper_cholesky_in_place(ours) == 0
    # LAPACK's lower factorization of the transposed memory: SciPy's lower factor, transposed
    np.testing.assert_array_equal(np.triu(ours), scipy.linalg.cholesky(S, lower=True).T)
    np.testing.assert_allclose(np.triu(ours).T @ np.triu(ours), S, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.tril(ours, -1), np.tril(S, -1))  # left as it was
    indefinite = S.copy()
    indefinite[3, 3] = -1.0
    assert upper_cholesky_in_place(indefinite) == 4
    with pytest.raises(ValueError, match="C-contiguous float64"):
        upper_cholesky_in_place(np.asfortranarray(S))


@pytest.mark.parametrize("b, r", [(1, 1), (7, 30), (40, 3)])
def test_the_in_place_solve_of_blocks_of_one_matrix_is_scipys(b, r):
    rng = np.random.default_rng(b + r)
    A = rng.standard_normal((b + r + 5, b + r + 9))
    k, e = 2, 2 + b
    A[k:e, k:e] += b * np.eye(b)
    before = A.copy()
    U, B = A[k:e, k:e], A[k:e, e:e + r]
    expected = scipy.linalg.solve_triangular(np.triu(U), B, trans="T", lower=False)
    upper_transposed_solve_in_place(U, B)
    np.testing.assert_allclose(A[k:e, e:e + r], expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.triu(before[k:e, k:e]).T @ A[k:e, e:e + r], before[k:e, e:e + r], atol=1e-10)
    # nothing outside B is written, and U's lower triangle (random here) is not read
    outside = np.ones(A.shape, dtype=bool)
    outside[k:e, e:e + r] = False
    np.testing.assert_array_equal(A[outside], before[outside])
    with pytest.raises(ValueError, match="float64 view with contiguous rows"):
        upper_transposed_solve_in_place(U, B.astype(np.float32))
    if r > 1:
        with pytest.raises(ValueError, match="contiguous rows"):
            upper_transposed_solve_in_place(U, A[k:e, e:e + 2 * r:2])
    with pytest.raises(ValueError, match="do not make"):
        upper_transposed_solve_in_place(U, np.ones((b + 1, r)))
    if b > 1:
        with pytest.raises(ValueError, match="rows must follow each other"):
            upper_transposed_solve_in_place(U, A[k:e, e:e + r][::-1])
        with pytest.raises(ValueError, match="rows must follow each other"):
            upper_transposed_solve_in_place(U[::-1], B)


def test_threads_solving_at_once_get_each_their_own_result():
    rng = np.random.default_rng(1)
    T = np.triu(rng.standard_normal((200, 200))) + 200 * np.eye(200)
    blocks = [rng.standard_normal((300, 200)) for _ in range(4)]
    solve = RightUpperSolve(T)
    results = [None] * len(blocks)

    def work(index):
        results[index] = solve(blocks[index])

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(blocks))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for block, result in zip(blocks, results):
        np.testing.assert_array_equal(result, solve(block))
