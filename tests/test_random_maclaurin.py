"""Random Maclaurin features: kernels against NumPy, the map against its kernel."""

import math
import warnings

import numpy as np
import pytest

from kernelmaps import RandomMaclaurin
from kernelmaps.random_maclaurin import (_hadamard_projections, _maclaurin_coefficients, _maclaurin_products,
                                         sample_degrees)

from kernel_checks import assert_unbiased_over_seeds, assert_within_bound_and_a_wrong_bandwidth_fails, gram_error
from naive import maclaurin_products, signed_hadamard_blocks


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_maclaurin_products_match_numpy(dtype, rtol):
    rng = np.random.default_rng(0)
    degrees = np.array([0, 2, 3, 5], dtype=np.int64)
    counts = np.array([3, 7, 4, 2], dtype=np.int64)
    col_starts = np.concatenate([[0], np.cumsum(degrees * counts)[:-1]]).astype(np.int64)
    P = rng.standard_normal((9, int(np.sum(degrees * counts)))).astype(dtype)
    scales = rng.uniform(0.5, 2, 4).astype(dtype)
    out = np.full((9, 20), -7.0, dtype)
    _maclaurin_products(P, degrees, counts, col_starts, scales, out, 4)
    ref = maclaurin_products(P.astype(np.float64), degrees, counts, col_starts, scales.astype(np.float64), 20, 4)
    np.testing.assert_allclose(out[:, 4:], ref[:, 4:], rtol=rtol)
    assert np.all(out[:, :4] == -7.0)  # columns before the offset are left alone


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_hadamard_projections_match_the_dense_matrices(dtype, rtol):
    rng = np.random.RandomState(1)
    d, p, T, n_proj = 11, 16, 3, 40
    signs = rng.choice([-1.0, 1.0], size=(T, p))
    slot_of = np.full(T * p, -1, dtype=np.int64)
    slot_of[rng.permutation(T * p)[:n_proj]] = np.arange(n_proj)
    rows = signed_hadamard_blocks(signs)[:, :d]  # all T p Hadamard rows
    W = np.empty((n_proj, d))
    W[slot_of[slot_of >= 0]] = rows[slot_of >= 0]
    X = rng.standard_normal((6, d))
    P = np.empty((6, n_proj), dtype)
    _hadamard_projections(X.astype(dtype), signs.astype(dtype), slot_of, P)
    np.testing.assert_allclose(P, X @ W.T, rtol=rtol, atol=rtol * 10)
    assert set(np.unique(W)) == {-1.0, 1.0}  # Rademacher vectors


@pytest.mark.parametrize("kernel, params", [("polynomial", dict(degree=4, gamma=0.7, coef0=1.3)),
                                            ("exponential", dict(degree=0, gamma=0.7, coef0=0.0))])
def test_maclaurin_coefficients_sum_to_the_kernel(kernel, params):
    coef, max_degree = _maclaurin_coefficients(kernel, params["degree"], params["gamma"], params["coef0"])
    t = 0.9
    series = sum(coef(n) * t**n for n in range(40))
    exact = (0.7 * t + 1.3) ** 4 if kernel == "polynomial" else math.exp(0.7 * t)
    assert series == pytest.approx(exact, rel=1e-12)
    assert max_degree == (4 if kernel == "polynomial" else None)


def test_degrees_follow_the_truncated_renormalized_law():
    coef, max_degree = _maclaurin_coefficients("polynomial", 3, 1.0, 1.0)
    degrees, weight = sample_degrees(coef, max_degree, 2, 60000, np.random.RandomState(0))
    # P[N=n] ∝ 2^-(n+1) on {2, 3}: 2/3 and 1/3
    assert np.mean(degrees == 2) == pytest.approx(2 / 3, abs=0.01)
    assert set(np.unique(degrees)) == {2, 3}
    assert weight(2) == pytest.approx(coef(2) * 3 / 2) and weight(3) == pytest.approx(coef(3) * 3)
    # homogeneous kernel: only the degree with a non-zero coefficient is drawn
    coef, max_degree = _maclaurin_coefficients("polynomial", 3, 1.0, 0.0)
    assert set(sample_degrees(coef, max_degree, 0, 100, np.random.RandomState(0))[0]) == {3}
    # an infinite series: the geometric law from n_min
    coef, _ = _maclaurin_coefficients("exponential", 0, 1.0, 0.0)
    degrees, weight = sample_degrees(coef, None, 2, 60000, np.random.RandomState(0))
    assert np.mean(degrees == 2) == pytest.approx(0.5, abs=0.01)
    assert weight(4) == pytest.approx(coef(4) * 8)


def test_dense_map_matches_its_numpy_definition():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, 5))
    rm = RandomMaclaurin(40, degree=3, gamma=0.5, coef0=2.0, random_state=0).fit(X)
    a0, a1 = 2.0**3, 3 * 2.0**2 * 0.5
    P = X @ rm.random_weights_
    ref = maclaurin_products(P, rm.degrees_, rm.counts_, rm.col_starts_, rm.scales_, 40, 6)
    ref[:, 0] = math.sqrt(a0)
    ref[:, 1:6] = math.sqrt(a1) * X
    np.testing.assert_allclose(rm.transform(X), ref, rtol=1e-12)
    assert rm.n_exact_ == 6 and rm.counts_.sum() == 34


# The default (dense, h01, polynomial) is checked with the other maps in
# test_kernel_approximation. Typical errors at D = 4096 on the unit sphere: 0.033
# (polynomial, Hadamard), 0.012 (exponential); a gamma off by 2 gives > 0.19.
@pytest.mark.parametrize("kw, bound", [(dict(degree=3, coef0=1.0, structured=True), 0.08),
                                       (dict(kernel="exponential"), 0.04)])
def test_variants_within_the_bound_and_a_wrong_gamma_fails(kw, bound, sphere):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: RandomMaclaurin(4096, gamma=gamma, random_state=0, **kw), sphere, 1.0, bound)


def test_maclaurin_coefficients_kernel_is_the_polynomial_kernel(sphere):
    coefficients = [math.comb(3, n) * 0.5**n for n in range(4)]  # (0.5 t + 1)^3
    rm = RandomMaclaurin(2048, kernel="maclaurin", coefficients=coefficients, random_state=0).fit(sphere)
    K = RandomMaclaurin(100, degree=3, gamma=0.5, coef0=1.0).fit(sphere).kernel(sphere)
    np.testing.assert_allclose(rm.kernel(sphere), K, rtol=1e-12)
    assert gram_error(rm, sphere, K) < 0.05


@pytest.mark.parametrize("kw", [dict(h01=False), dict(h01=False, structured=True)])
def test_variants_without_h01_unbiased_over_seeds(kw, sphere):
    X = sphere[:6]
    maps = [RandomMaclaurin(256, degree=3, gamma=0.6, coef0=1.5, random_state=s, **kw).fit(X) for s in range(400)]
    # measured: every entry within 2.5 standard errors (about 0.03 here)
    assert_unbiased_over_seeds(maps, X, maps[0].kernel(X), n_sigma=4.5)


def test_h01_lowers_the_error(sphere):
    def error(h01):
        return np.mean([gram_error(RandomMaclaurin(512, degree=3, h01=h01, random_state=s).fit(sphere), sphere)
                        for s in range(3)])

    with_h01, without = error(True), error(False)
    assert with_h01 < 0.7 * without


def test_too_few_components_for_h01_falls_back_with_a_warning(sphere):
    with pytest.warns(UserWarning, match="h01=False"):
        rm = RandomMaclaurin(8, degree=3, random_state=0).fit(sphere)
    assert not rm.h01_ and rm.n_exact_ == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RandomMaclaurin(10, degree=3, random_state=0).fit(sphere).h01_


def test_degree_one_with_h01_is_exact(sphere):
    rm = RandomMaclaurin(12, degree=1, gamma=0.5, coef0=2.0, random_state=0).fit(sphere)
    K = rm.kernel(sphere)
    np.testing.assert_allclose(rm.transform(sphere) @ rm.transform(sphere).T, K, rtol=1e-12)


@pytest.mark.parametrize("bad", [dict(kernel="gaussian"), dict(gamma=0.0), dict(coef0=-1.0), dict(degree=-1),
                                 dict(kernel="maclaurin"), dict(kernel="maclaurin", coefficients=[1.0, -0.5])])
def test_bad_parameters_are_named(bad, sphere):
    name = "coefficients" if bad.get("kernel") == "maclaurin" else next(iter(bad))
    with pytest.raises(ValueError, match=name):
        RandomMaclaurin(64, **bad).fit(sphere)
