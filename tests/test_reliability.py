"""No silent wrong answers on bad or absurd input.

Each test here was written against a failure found by trying bad inputs on every
registered estimator; where a case applies to every estimator it is generated
from the registry. The properties over random input are in
``test_reliability_properties.py``.
"""

import threading
import tracemalloc

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from threadpoolctl import threadpool_info

import kernelmaps
from kernelmaps._kernels.bandwidth import resolve_gamma
from kernelmaps._core.validation import FeatureOverflowError, InsufficientMemoryError
from registry import ALL, FEATURE_MAPS, REGISTRY, SIZED_MAPS, dense, domain, fit, make, stored, takes


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5))
    y = (X[:, 0] + 0.3 * rng.standard_normal(120) > 0).astype(int)
    return X, y


def blas_threads():
    return sorted((info["internal_api"], info["num_threads"]) for info in threadpool_info()
                  if info["user_api"] == "blas")


# 1 ------------------------------------------------------------- refit
@pytest.mark.parametrize("name", ALL)
def test_refit_clears_every_fitted_attribute(name, data):
    X, y = domain(name, data[0]), data[1]
    est = fit(make(name), X, y)
    est.left_over_by_an_earlier_fit_ = "stale"
    fit(est, X, y)
    assert not hasattr(est, "left_over_by_an_earlier_fit_")


@pytest.mark.parametrize("name", ["cnm", "optimized_circulant"])
def test_kernel_objective_refit_without_labels_forgets_the_classifier(name, data):
    X, y = data
    est = make(name, objective="kernel").fit(X, y)
    assert est.predict(X).shape == (len(X),)
    est.fit(X[:, :3])  # a new width and no labels
    assert not hasattr(est, "classifier_")
    with pytest.raises(ValueError, match="without y"):
        est.predict(X[:, :3])


# 2 ------------------------------------------------------- bandwidths
@pytest.mark.parametrize("heuristic", ["scale", "median", "knn50"])
@pytest.mark.parametrize("magnitude", [1e-150, 1e-20, 1e20, 1e150])
def test_bandwidth_heuristics_scale_with_the_data(heuristic, magnitude, data):
    X, _ = data
    reference = resolve_gamma(heuristic, X, "gaussian", np.random.RandomState(0))
    scaled = resolve_gamma(heuristic, X * magnitude, "gaussian", np.random.RandomState(0))
    np.testing.assert_allclose(scaled * magnitude**2, reference, rtol=1e-9)


@pytest.mark.parametrize("heuristic", ["scale", "median", "knn50"])
@pytest.mark.parametrize("magnitude", [1e-300, 1e300])
def test_bandwidth_out_of_float64_range_is_a_clear_error(heuristic, magnitude, data):
    X, _ = data
    with pytest.raises(ValueError, match="outside the float64 range"):
        resolve_gamma(heuristic, X * magnitude, "gaussian", np.random.RandomState(0))


@pytest.mark.parametrize("heuristic", ["median", "knn50"])
def test_only_truly_coinciding_rows_are_called_degenerate(heuristic):
    with pytest.raises(ValueError, match="coincide"):
        resolve_gamma(heuristic, np.full((10, 3), 7.0), "gaussian", np.random.RandomState(0))
    tiny = np.zeros((10, 3))
    tiny[:, 0] = np.arange(10) * 1e-150
    assert resolve_gamma(heuristic, tiny, "gaussian", np.random.RandomState(0)) > 0


def test_kernel_svc_on_large_data_uses_a_scaled_gamma(data):
    X, y = data
    small = kernelmaps.KernelSVC(gamma="scale").fit(X, y)
    large = kernelmaps.KernelSVC(gamma="scale").fit(X * 1e150, y)
    np.testing.assert_allclose(large.gamma_ * 1e300, small.gamma_, rtol=1e-9)
    assert np.mean(large.predict(X * 1e150) == small.predict(X)) > 0.95
    with pytest.raises(ValueError, match="gamma='scale'.*outside the float64 range"):
        kernelmaps.KernelSVC(gamma="scale").fit(X * 1e300, y)  # was a ZeroDivisionError


# 3 ----------------------------------------------- float32 Nyström
@pytest.mark.parametrize("offset", [1e3, 1e4])
def test_float32_nystroem_far_from_the_origin_matches_float64(offset):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((600, 8)) + offset
    K = kernelmaps.exact_kernel(X[:300], kernel="gaussian", gamma=0.1)
    errors = []
    for dtype in (np.float64, np.float32):
        ny = kernelmaps.Nystroem(150, gamma=0.1, random_state=0).fit(X.astype(dtype))
        Z = ny.transform(X[:300].astype(dtype)).astype(np.float64)
        errors.append(kernelmaps.relative_frobenius_error(K, Z=Z))
    assert errors[0] < 0.2
    assert abs(errors[1] - errors[0]) < 0.01 * errors[0] + 1e-4, errors


def test_float32_exact_kernel_far_from_the_origin():
    X = np.random.default_rng(2).standard_normal((50, 4)) + 1e4
    K64 = kernelmaps.exact_kernel(X, kernel="gaussian", gamma=0.2)
    K32 = kernelmaps.exact_kernel(X.astype(np.float32), kernel="gaussian", gamma=0.2)
    assert np.max(np.abs(K32 - K64)) < 1e-2  # was O(1) from |x|^2 cancellation


@pytest.mark.parametrize("kernel", ["gaussian", "laplacian", "cauchy"])
def test_exact_kernel_at_extreme_magnitudes(kernel):
    X = np.random.default_rng(3).standard_normal((20, 3))
    K = kernelmaps.exact_kernel(X, kernel=kernel, gamma=0.3)
    for magnitude in (1e-150, 1e155, 1e300):
        power = 1 if kernel == "laplacian" else 2
        gamma = 0.3 * (1.0 / magnitude) ** power
        if 0 < gamma < np.inf:  # the same kernel values, in other units
            K_scaled = kernelmaps.exact_kernel(X * magnitude, kernel=kernel, gamma=gamma)
            np.testing.assert_allclose(K_scaled, K, rtol=1e-9, atol=1e-12)
        # at a fixed gamma, huge distances give 0, never 1 (inf - inf must not read as 0)
        far = kernelmaps.exact_kernel(X * magnitude, kernel=kernel, gamma=0.3)
        off_diagonal = ~np.eye(len(X), dtype=bool)
        if magnitude > 1:
            assert np.all(far[off_diagonal] < 1e-300)
        np.testing.assert_array_equal(np.diag(far), 1.0)


# 4 --------------------------------------------------------- Pegasos
@pytest.mark.parametrize("magnitude", [1e155, 1e200])
def test_pegasos_on_large_features_keeps_its_weights(magnitude, data):
    X, y = data
    # at 1e100 no square overflows; from there on every hinge is active and the
    # steps scale with the features, so the weights must stay the same
    reference = kernelmaps.PegasosSVC(alpha=1e-2, batch_size=32, max_iter=300, random_state=0).fit(X * 1e100, y)
    large = kernelmaps.PegasosSVC(alpha=1e-2, batch_size=32, max_iter=300, random_state=0).fit(X * magnitude, y)
    assert np.abs(large.coef_).max() > 1.0  # was all zeros
    np.testing.assert_allclose(large.coef_, reference.coef_, rtol=1e-9)
    np.testing.assert_array_equal(large.predict(X * magnitude), reference.predict(X * 1e100))


def test_pegasos_beyond_float64_is_a_clear_error(data):
    X, y = data
    with pytest.raises(FeatureOverflowError, match="Rescale the features"):
        kernelmaps.PegasosSVC(alpha=1e-2, batch_size=32, max_iter=50, random_state=0).fit(X * 1e307, y)


# 5 ---------------------------------------------------- finite output
@pytest.mark.parametrize("name", sorted(n for n in FEATURE_MAPS if "gamma" in REGISTRY[n]().get_params()
                                        and REGISTRY[n].kernel_family in ("shift_invariant", "learned")))
def test_a_gamma_that_makes_the_map_infinite_is_refused(name, data):
    X, y = data
    with pytest.raises(ValueError, match="gamma"):
        fit(make(name, gamma=1e308), X, y).transform(X)


@pytest.mark.parametrize("name", FEATURE_MAPS)
@pytest.mark.parametrize("magnitude", [1e-300, 1e155, 1e300])
def test_no_map_returns_non_finite_features(name, magnitude, data):
    X, y = domain(name, data[0]), data[1]
    try:
        est = fit(make(name), X * magnitude, y)
        Z = est.transform(X * magnitude)
    except (FeatureOverflowError, ValueError) as error:
        assert any(word in str(error) for word in ("overflow", "gamma", "float64", "non-finite")), error
        return
    assert np.isfinite(stored(Z)).all()


@pytest.mark.parametrize("name", ["tensor_sketch", "random_maclaurin", "craftmaps"])
def test_polynomial_overflow_names_the_input_and_parameters(name, data):
    X, _ = data
    est = make(name).fit(X)
    with pytest.raises(FeatureOverflowError, match=r"overflowed float64.*max \|x\|.*degree"):
        est.transform(X * 1e300)


# 6 -------------------------------------------------- kernel before fit
@pytest.mark.parametrize("name", sorted(n for n in ALL if callable(getattr(REGISTRY[n](), "kernel", None))))
def test_kernel_before_fit_is_not_fitted_error(name, data):
    X, _ = data
    with pytest.raises(NotFittedError):
        make(name).kernel(X)


# 7 ------------------------------------------------------- memory
@pytest.mark.parametrize("name", SIZED_MAPS)
def test_impossible_width_is_refused_before_allocating(name, data):
    X, y = data
    tracemalloc.start()
    try:
        with pytest.raises(InsufficientMemoryError, match=r"n_components.*GiB.*available"):
            fit(make(name, n_components=10**9), X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20, f"{peak / 2**20:.0f} MiB allocated before refusing"


def test_impossible_learner_sizes_are_refused(data):
    X, y = data
    with pytest.raises(InsufficientMemoryError, match="max_iter"):
        kernelmaps.PegasosSVC(max_iter=10**9).fit(X, y)
    wide = np.zeros((4, 200_000))
    with pytest.raises(InsufficientMemoryError, match="n_features=200000"):
        kernelmaps.LeastSquaresRegressor(solver="normal").fit(wide, np.arange(4.0))
    with pytest.raises(InsufficientMemoryError, match="n_components=100000000"):
        kernelmaps.Nystroem(10**8).fit(X)


# 8 --------------------------------------------- NumPy integer parameters
@pytest.mark.parametrize("name", SIZED_MAPS)
@pytest.mark.parametrize("integer", [np.uint8, np.int16, np.int64])
def test_numpy_integer_width(name, integer, data):
    X, y = data
    width = 24 if name != "craftmaps" else 16
    expected = fit(make(name, n_components=width), X, y).transform(X)
    est = fit(make(name, n_components=integer(width)), X, y)
    assert type(est.n_components_) is int
    np.testing.assert_array_equal(est.transform(X), expected)


@pytest.mark.parametrize("name", ALL)
def test_numpy_integers_in_every_integer_parameter(name, data):
    X, y = domain(name, data[0]), data[1]
    integers = {key: value for key, value in REGISTRY[name].test_params.items()
                if isinstance(value, int) and not isinstance(value, bool)}
    if not integers:
        pytest.skip(f"{name} has no integer test parameter")
    plain = fit(make(name), X, y)
    numpy = fit(make(name, **{key: np.uint16(value) for key, value in integers.items()}), X, y)
    method = "transform" if hasattr(plain, "transform") else "predict"
    np.testing.assert_array_equal(dense(getattr(numpy, method)(X)), dense(getattr(plain, method)(X)))


@pytest.mark.parametrize("name, params", [
    ("pegasos", {"batch_size": np.uint8(32), "max_iter": np.uint16(300)}),
    ("kernel_svc", {"max_iter": np.uint16(20000)}),
    ("ecoc", {"code_size": np.uint8(16)}),
    ("cnm", {"batch_size": np.uint8(50), "n_steps_w": np.uint8(5), "max_iter": np.uint8(2)}),
])
def test_numpy_integer_parameters_of_learners(name, params, data):
    X, y = data
    expected = make(name, **{key: int(value) for key, value in params.items()}).fit(X, y).predict(X)
    np.testing.assert_array_equal(make(name, **params).fit(X, y).predict(X), expected)


# 9 --------------------------------------------- learners on huge features
@pytest.mark.parametrize("name", ["least_squares", "least_squares_regressor", "ecoc"])
def test_learners_name_the_overflow_of_the_normal_equations(name, data):
    X, y = data
    with pytest.raises(FeatureOverflowError, match=r"Z\^T Z .*overflowed float64"):
        make(name).fit(X * 1e200, y)


# 10 ------------------------------------------------- non-numeric input
NON_NUMERIC = {
    "numeric strings": lambda X: X.astype(str),
    "bytes": lambda X: X.astype(bytes),
    "datetime64": lambda X: (X * 1e3).astype("datetime64[s]"),
    "timedelta64": lambda X: (X * 1e3).astype("timedelta64[s]"),
    "object strings": lambda X: X.astype(str).astype(object),
}


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("kind", sorted(NON_NUMERIC))
def test_non_numeric_input_is_refused(name, kind, data):
    X, y = domain(name, data[0]), data[1]
    bad = NON_NUMERIC[kind](X)
    with pytest.raises(TypeError, match="numeric|numbers"):
        fit(make(name), bad, y)
    est = fit(make(name), X, y)
    method = est.transform if hasattr(est, "transform") else est.predict
    with pytest.raises(TypeError, match="numeric|numbers"):
        method(bad)


# 11 ---------------------------------------------------- shared state
@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_concurrent_transforms_restore_the_blas_threads(name, data):
    X, y = domain(name, data[0]), data[1]
    est = fit(make(name), np.vstack([X] * 4), np.concatenate([y] * 4))
    many_rows = np.vstack([X] * 20)
    before = blas_threads()
    errors = []

    def work():
        try:
            for _ in range(5):
                est.transform(many_rows)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert blas_threads() == before


def test_overlapping_blas_limits_restore_the_original_count():
    """Two transforms whose limits overlap and end in the order they began: the
    first one out must not restore the limit of one thread left by the second."""
    from kernelmaps._core.parallel import blas_single_thread

    before = blas_threads()
    first, second = blas_single_thread(), blas_single_thread()
    first.__enter__()
    second.__enter__()
    assert all(count == 1 for _, count in blas_threads())
    first.__exit__(None, None, None)
    assert all(count == 1 for _, count in blas_threads()), "a transform is still running"
    second.__exit__(None, None, None)
    assert blas_threads() == before


# ------------------------------------------------------------- iterative solvers

#: Estimators that iterate to a tolerance. Fixed-budget stochastic ones (Pegasos,
#: the learned maps' rounds) have ``max_iter`` but no ``tol`` and nothing to reach.
ITERATIVE = sorted(name for name in ALL if takes(name, "max_iter") and takes(name, "tol"))


@pytest.mark.parametrize("name", ITERATIVE)
def test_a_solver_stopped_by_max_iter_warns_with_the_residual_it_reached(name, data):
    X, y = data
    # the least-squares learners iterate only by conjugate gradient, not their 'auto' choice here
    iterative = {"solver": "cg"} if takes(name, "solver") else {}
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1\b.*reached [-+0-9.e]+ against tol=") as record:
        make(name, max_iter=1, **iterative).fit(X, y)  # called here: the warning must point at this file
    # the warning points at the user's call, not at a line inside kernelmaps
    assert {w.filename for w in record if issubclass(w.category, ConvergenceWarning)} == {__file__}
