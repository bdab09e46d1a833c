"""One kernel vocabulary: every kernel a map approximates is a name of ``exact_kernel``,
and every kernel record's Numba block equals its formula written in NumPy."""

import numpy as np
import pytest
import scipy.sparse as sp

from kernelmaps import arc_cosine_kernel, exact_kernel, min_max_kernel, tanimoto_kernel
from kernelmaps._kernels.formulas import kernel_record, evaluate_block, starts_from_product


@pytest.fixture
def rows():
    rng = np.random.default_rng(4)
    return rng.standard_normal((30, 5)), rng.standard_normal((20, 5))


@pytest.mark.parametrize("order", [0, 1, 2])
def test_arc_cosine_by_name_is_the_arc_cosine_kernel(rows, order):
    X, Y = rows
    np.testing.assert_array_equal(exact_kernel(X, Y, kernel="arc_cosine", degree=order),
                                  arc_cosine_kernel(X, Y, order=order))


@pytest.mark.parametrize("name, function", [("tanimoto", tanimoto_kernel), ("min_max", min_max_kernel)])
def test_set_kernels_by_name_take_dense_and_sparse_rows(rows, name, function):
    X, Y = np.abs(rows[0]), np.abs(rows[1])
    expected = function(X, Y)
    np.testing.assert_allclose(exact_kernel(X, Y, kernel=name), expected, rtol=1e-12)
    np.testing.assert_allclose(exact_kernel(sp.csr_matrix(X), sp.csr_matrix(Y), kernel=name), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="negative"):
        exact_kernel(-X, kernel=name)


def test_linear_and_maclaurin_are_polynomials_of_the_inner_product(rows):
    X, Y = rows
    G = X @ Y.T
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="linear"), G, rtol=1e-12)
    a = [0.5, 1.0, 0.25, 1 / 6]
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="maclaurin", coefficients=a),
                               sum(c * G ** n for n, c in enumerate(a)), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="coefficients"):
        exact_kernel(X, Y, kernel="maclaurin")


def test_scales_multiply_each_feature_before_the_kernel(rows):
    X, Y = rows
    s = np.array([0.5, 1.0, 2.0, 3.0, 0.25])
    np.testing.assert_allclose(exact_kernel(X, Y, kernel="laplacian", gamma=0.3, scales=s),
                               exact_kernel(X * s, Y * s, kernel="laplacian", gamma=0.3), rtol=1e-12)
    with pytest.raises(ValueError, match="scales"):
        exact_kernel(X, Y, scales=-s)


def test_precomputed_has_no_kernel_and_callables_are_evaluated(rows):
    X, Y = rows
    with pytest.raises(ValueError, match="precomputed"):
        exact_kernel(X, Y, kernel="precomputed")
    np.testing.assert_allclose(exact_kernel(X, Y, kernel=lambda A, B: (A @ B.T) ** 2), (X @ Y.T) ** 2)


def _reference(kernel, X, V, gamma, degree, coef0):
    """The kernels' formulas in NumPy, float64."""
    X, V = X.astype(np.float64), V.astype(np.float64)
    diff = X[:, None, :] - V[None, :, :]
    formulas = {
        "gaussian": lambda: np.exp(-gamma * (diff ** 2).sum(-1)),
        "exponential": lambda: np.exp(gamma * X @ V.T),
        "polynomial": lambda: (gamma * X @ V.T + coef0) ** degree,
        "laplacian": lambda: np.exp(-gamma * np.abs(diff).sum(-1)),
        "cauchy": lambda: np.prod(1 / (1 + gamma * diff ** 2), -1),
        "sech": lambda: np.prod(1 / np.cosh(gamma * diff), -1),
    }
    return formulas[kernel]()


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-4)])
@pytest.mark.parametrize("kernel", ["gaussian", "exponential", "polynomial", "laplacian", "cauchy", "sech"])
def test_each_record_block_equals_its_formula(kernel, dtype, rtol):
    rng = np.random.default_rng(7)
    X, V = (0.5 * rng.standard_normal((9, 4))).astype(dtype), (0.5 * rng.standard_normal((11, 4))).astype(dtype)
    record = kernel_record(kernel, 0.7, 3, 0.5, 1.5, 1.0, dtype)
    G = X @ V.T if starts_from_product(record) else np.empty((9, 11), dtype)
    evaluate_block(record, G, X, V, (V.astype(np.float64) ** 2).sum(1).astype(dtype))
    np.testing.assert_allclose(G, _reference(kernel, X, V, 0.7, 3, 0.5), rtol=rtol)
    # a wrong bandwidth is far outside the tolerance
    assert not np.allclose(G, _reference(kernel, X, V, 1.4, 3, 0.5), rtol=rtol)
