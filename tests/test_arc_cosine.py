"""Arc-cosine features (Cho & Saul 2009): the closed form against its integral, the
Numba epilogue against NumPy, the map against the kernel, and the structured
projection's row norms.

The arc-cosine family is not one of ``test_kernel_approximation``'s families
(its kernels have no bandwidth), so its statistical checks live here.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from kernel_checks import assert_dense_form_matches

import kernelmaps._kernels.arc_cosine as arc
import kernelmaps._maps.hadamard as hadamard_map
import kernelmaps.arc_cosine as arc_cosine_module
from kernelmaps import ArcCosineFeatures, arc_cosine_kernel, relative_frobenius_error
from kernelmaps._core.validation import FeatureOverflowError

ORDERS = (0, 1, 2)
#: ``J_n(0)``: ``k_n(x, x) = ||x||^(2n) J_n(0) / pi``.
DIAGONAL = {0: 1.0, 1: 1.0, 2: 3.0}


def naive_features(P, weight, order):
    """NumPy reference of the epilogue: ``weight * Theta(p) p^order`` with ``Theta(0) = 1/2``."""
    step = np.where(P > 0, 1.0, np.where(P == 0, 0.5, 0.0)).astype(P.dtype)
    return (weight * step * np.where(P > 0, P, 0) ** order).astype(P.dtype)


def monte_carlo(x, y, order, n_draws, seed):
    """``2 E_w[Theta(w.x) Theta(w.y) (w.x)^n (w.y)^n]`` over ``n_draws`` Gaussian ``w``: mean and standard error."""
    W = np.random.default_rng(seed).standard_normal((n_draws, len(x)))
    a, b = W @ x, W @ y
    values = 2.0 * (a > 0) * (b > 0) * np.maximum(a, 0) ** order * np.maximum(b, 0) ** order
    return values.mean(), values.std() / np.sqrt(n_draws)


@pytest.fixture(scope="module")
def cloud():
    return np.random.default_rng(5).standard_normal((20, 5))


# ---------------------------------------------------------------- closed form
@pytest.mark.parametrize("order", ORDERS)
def test_closed_form_is_the_integral(order):
    """Monte-Carlo integration with 400000 draws of ``w`` agrees within 4.5 standard
    errors at angles from 10 to 170 degrees; half or twice the value, or the
    neighbouring order's formula, is far outside."""
    rng = np.random.default_rng(0)
    for angle in (10, 60, 90, 135, 170):
        t = np.radians(angle)
        x = np.array([1.3, 0.0, 0.0])
        y = 0.7 * np.array([np.cos(t), np.sin(t), 0.0])
        rotation = np.linalg.qr(rng.standard_normal((3, 3)))[0]
        x, y = rotation @ x, rotation @ y
        mean, se = monte_carlo(x, y, order, 400_000, seed=angle)
        exact = arc_cosine_kernel(x[None], y[None], order=order)[0, 0]
        assert abs(mean - exact) < 4.5 * se, (angle, mean, exact, se)
        for wrong in (0.5 * exact, 2.0 * exact, arc_cosine_kernel(x[None], y[None], order=(order + 1) % 3)[0, 0]):
            assert abs(mean - wrong) > 10 * se, (angle, mean, wrong, se)


def test_order_zero_is_one_minus_the_angle_over_pi(cloud):
    U = cloud / np.linalg.norm(cloud, axis=1, keepdims=True)
    theta = np.arccos(np.clip(U @ U.T, -1, 1))
    np.testing.assert_allclose(arc_cosine_kernel(3.0 * cloud, order=0), 1 - theta / np.pi, atol=1e-12)


@pytest.mark.parametrize("order", ORDERS)
def test_closed_form_values(order, cloud):
    """The diagonal is ``||x||^(2n) J_n(0)/pi``; orthogonal and opposite rows give
    ``J_n(pi/2)/pi`` (1/2, 1/pi, 1/2) and ``J_n(pi) = 0``; the kernel is symmetric,
    positive semi-definite and homogeneous of degree ``n`` in each argument."""
    K = arc_cosine_kernel(cloud, order=order)
    norms = np.linalg.norm(cloud, axis=1)
    np.testing.assert_allclose(np.diag(K), DIAGONAL[order] * norms ** (2 * order), rtol=1e-12)
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-10 * np.abs(K).max()
    np.testing.assert_allclose(arc_cosine_kernel(2.0 * cloud, cloud, order=order), 2.0**order * K, rtol=1e-12)
    e = np.eye(2)
    at_right_angle = {0: 0.5, 1: 1 / np.pi, 2: 0.5}[order]
    assert arc_cosine_kernel(e[:1], e[1:], order=order)[0, 0] == pytest.approx(at_right_angle, rel=1e-14)
    assert arc_cosine_kernel(e[:1], -e[:1], order=order)[0, 0] == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("order", ORDERS)
def test_zero_rows_follow_the_step_at_zero(order, cloud):
    """``Theta(0) = 1/2``: a zero row has ``k_0 = 1/2`` against everything and
    ``k_n = 0`` for ``n >= 1``, in the closed form and in the features alike."""
    X = np.vstack([np.zeros(5), cloud])
    K = arc_cosine_kernel(X, order=order)
    expected = 0.5 if order == 0 else 0.0
    np.testing.assert_allclose(K[0], expected, atol=1e-15)
    np.testing.assert_allclose(K[:, 0], expected, atol=1e-15)
    D = 64
    Z = ArcCosineFeatures(D, order=order, random_state=0).fit(X).transform(X)
    np.testing.assert_allclose(Z[0], expected * np.sqrt(2 / D) if order == 0 else 0.0, rtol=1e-15)


def test_float32_in_float32_out_and_sparse_is_densified(cloud):
    K = arc_cosine_kernel(cloud.astype(np.float32), order=1)
    assert K.dtype == np.float32
    np.testing.assert_allclose(K, arc_cosine_kernel(cloud, order=1), rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(arc_cosine_kernel(sp.csr_matrix(cloud), cloud[:3], order=2),
                               arc_cosine_kernel(cloud, cloud[:3], order=2), rtol=1e-12)


# ---------------------------------------------------------------- epilogue
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_epilogue_matches_numpy(order, dtype):
    rng = np.random.default_rng(order)
    P = rng.standard_normal((7, 300)).astype(dtype)
    P[:, ::17] = 0.0  # exact zeros take Theta(0) = 1/2
    weight = rng.uniform(0.5, 2.0, 300).astype(dtype)
    expected = naive_features(P, weight, order)
    out = P.copy()
    assert arc.arc_cosine_features(out, weight, order) is True
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6 if dtype == np.float32 else 1e-15, atol=0)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_epilogue_never_hides_a_non_finite_projection(order, bad):
    P = np.ones((3, 40))
    P[1, 7] = bad
    assert arc.arc_cosine_features(P, np.ones(40), order) is False
    assert not np.isfinite(P[1, 7]) and np.isfinite(np.delete(P, 7, axis=1)).all()


# ---------------------------------------------------------------- the map
def _max_z(grams, K):
    se = grams.std(axis=0) / np.sqrt(len(grams))
    return (np.abs(grams.mean(axis=0) - K) / (se + 1e-12)).max()


@pytest.mark.parametrize("projection", ["dense", "structured"])
@pytest.mark.parametrize("order", ORDERS)
def test_map_is_unbiased_and_a_wrong_constant_or_order_fails(projection, order, cloud):
    """Over 150 seeds the mean of ``Z Z^T`` is within 4.5 standard errors of the
    kernel at every entry; against half or twice the kernel, or the kernel of
    another order, it is not."""
    X = cloud[:12]
    grams = np.array([(lambda Z: Z @ Z.T)(ArcCosineFeatures(128, order=order, projection=projection,
                                                             random_state=seed).fit(X).transform(X))
                      for seed in range(150)])
    K = arc_cosine_kernel(X, order=order)
    assert _max_z(grams, K) < 4.5
    for wrong in (0.5 * K, 2.0 * K, arc_cosine_kernel(X, order=(order + 1) % 3)):
        assert _max_z(grams, wrong) > 10


@pytest.mark.parametrize("projection", ["dense", "structured"])
@pytest.mark.parametrize("order", ORDERS)
def test_error_within_bound_and_falling_as_one_over_sqrt_D(projection, order):
    X = np.random.default_rng(5).standard_normal((300, 5))
    K = arc_cosine_kernel(X, order=order)

    def error(D, seed):
        est = ArcCosineFeatures(D, order=order, projection=projection, random_state=seed).fit(X)
        return relative_frobenius_error(K, Z=est.transform(X))

    small = np.median([error(64, seed) for seed in range(3)])
    large = np.median([error(1024, seed) for seed in range(3)])
    assert large < {0: 0.1, 1: 0.12, 2: 0.25}[order], (small, large)
    assert small / large > 2.5, (small, large)


def test_structured_row_norms_remove_the_order_two_bias(cloud, monkeypatch):
    """Order 2 scales with ``E||w||^4``: with ``chi(p)`` row norms the structured
    estimate of the kernel's total is within 3 standard errors of it; with the
    fixed norm ``sqrt(p)`` (SORF's) it falls short by about ``p/(p+2)`` (p = 32),
    which this test detects."""
    K = arc_cosine_kernel(cloud, order=2)

    def ratio_and_se():
        ratios = [(lambda Z: (Z @ Z.T).sum())(ArcCosineFeatures(256, order=2, projection="structured",
                                                                random_state=seed).fit(cloud).transform(cloud))
                  for seed in range(200)]
        ratios = np.array(ratios) / K.sum()
        return ratios.mean(), ratios.std() / np.sqrt(len(ratios))

    mean, se = ratio_and_se()
    assert abs(mean - 1) < 3 * se, (mean, se)
    monkeypatch.setattr(arc_cosine_module, "_draw_row_norms", lambda p, size, rng: np.full(size, np.sqrt(p)))
    fixed, fixed_se = ratio_and_se()
    assert abs(fixed - 1) > 5 * fixed_se and fixed == pytest.approx(32 / 34, abs=4 * fixed_se), (fixed, fixed_se)


@pytest.mark.parametrize("n_features, expect_dense", [(6, True), (40, False)])
def test_structured_blocks_equal_their_dense_form(n_features, expect_dense, monkeypatch):
    """Narrow input applies the dense matrix the blocks equal; wide input runs the
    Hadamard kernel; both give the same features in both dtypes."""
    X = np.random.default_rng(0).standard_normal((50, n_features))
    est = ArcCosineFeatures(100, order=2, projection="structured", random_state=0).fit(X)
    assert est.padded_features_ == (32 if n_features <= 32 else 64)
    assert_dense_form_matches(est, X, hadamard_map, "DENSE_MAX_BLOCK", expect_dense, monkeypatch)


@pytest.mark.parametrize("projection", ["dense", "structured"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_input_gives_the_dense_features(projection, dtype, cloud):
    X = cloud.astype(dtype)
    X[np.abs(X) < 0.8] = 0
    est = ArcCosineFeatures(64, order=1, projection=projection, random_state=0).fit(X)
    assert est.accepts_sparse_blocks == (projection == "dense")
    Z = est.transform(X)
    assert Z.dtype == dtype
    np.testing.assert_allclose(est.transform(sp.csr_matrix(X)), Z, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-12)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("order", [3, -1, 1.0, True, "1", None])
def test_bad_order_is_refused(order, cloud):
    with pytest.raises(ValueError, match="order"):
        ArcCosineFeatures(8, order=order).fit(cloud)
    with pytest.raises(ValueError, match="order"):
        arc_cosine_kernel(cloud, order=order)


@pytest.mark.parametrize("projection", ["Dense", "fastfood", None])
def test_bad_projection_is_refused(projection, cloud):
    with pytest.raises(ValueError, match="projection"):
        ArcCosineFeatures(8, projection=projection).fit(cloud)


def test_non_finite_and_mismatched_input_is_refused(cloud):
    bad = cloud.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        arc_cosine_kernel(bad)
    with pytest.raises(ValueError, match="NaN"):
        ArcCosineFeatures(8).fit(bad)
    with pytest.raises(ValueError, match="same number of features"):
        arc_cosine_kernel(cloud, cloud[:, :3])
    with pytest.raises(TypeError, match="numbers"):
        arc_cosine_kernel(cloud.astype(str))


@pytest.mark.parametrize("projection", ["dense", "structured"])
def test_overflow_is_a_clear_error(projection, cloud):
    est = ArcCosineFeatures(16, order=2, projection=projection, random_state=0).fit(cloud)
    with pytest.raises(FeatureOverflowError, match="overflowed float64"):
        est.transform(cloud * 1e200)
    with pytest.raises(FeatureOverflowError, match="order 2"):
        est.kernel(cloud * 1e200)
    # order 0 is scale-free: its exact kernel holds at any magnitude
    np.testing.assert_allclose(arc_cosine_kernel(cloud * 1e300, order=0), arc_cosine_kernel(cloud, order=0),
                               rtol=1e-12)
