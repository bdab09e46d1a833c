"""Contract tests generated from the registry: every estimator gets them."""

import pickle

import numba
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelmaps
from registry import ALL, FEATURE_MAPS, RANDOM_MAPS, REGISTRY, SIZED_MAPS, dense, domain, make


def test_registry_is_the_public_algorithms_dict():
    assert kernelmaps.ALGORITHMS is REGISTRY
    assert "rff" in REGISTRY
    for name, cls in REGISTRY.items():
        assert cls.name == name
        assert cls.paper, f"{name} names no paper"
        assert cls.kind in ("feature_map", "learner", "baseline")
        assert getattr(kernelmaps, cls.__name__) is cls, f"{cls.__name__} is not exported"
        if cls.kind == "feature_map":
            assert cls.kernel_family
            if cls.benchmark is not None:  # a map whose width the data sets has no grid to sweep
                assert bool(cls.benchmark.get("n_components")) == ("n_components" in cls().get_params())


#: scikit-learn checks an estimator cannot pass, with the reason (run as xfail).
EXPECTED_FAILED_CHECKS = {
    "pegasos": dict.fromkeys(
        ["check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data"],
        "stochastic minibatches: integer weights equal repeated rows in expectation, not bit for bit "
        "(tests/test_sample_weight.py tests what holds)"),
    "kernel_ridge_classifier": {
        "check_class_weight_classifiers": "a narrow Gaussian kernel without intercept: far from the heavy "
        "class's rows a test point takes the sign of its nearest rows, however light their weight"},
    "kernel_svc": {"check_sample_weight_equivalence_on_dense_data":
                   "the dual is solved to tol (1e-3): weights and repeated rows agree to about tol, not to the "
                   "check's rtol=1e-7, as for scikit-learn's SVC (tests/test_kernel_svc_probability.py holds "
                   "them to 1e-3 at tol=1e-6)"},
}


@parametrize_with_checks([make(name) for name in ALL],
                         expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS.get(est.name, {}))
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((300, 6)), rng.standard_normal((50, 6))


@pytest.mark.parametrize("name", FEATURE_MAPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_shape_and_dtype(name, dtype, data):
    X, Y = (domain(name, A) for A in data)
    est = make(name).fit(X.astype(dtype))
    Z = est.transform(Y.astype(dtype))
    assert Z.shape == (Y.shape[0], est.n_components_)
    assert Z.dtype == dtype
    assert np.isfinite(dense(Z)).all()


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_integers_are_computed_in_float64(name, data):
    X = domain(name, data[0])
    Xi = np.round(X * 3).astype(np.int64)
    est = make(name).fit(Xi)
    Z = est.transform(Xi)
    assert Z.dtype == np.float64
    np.testing.assert_array_equal(dense(Z), dense(est.transform(Xi.astype(np.float64))))


#: (map, width) pairs a map cannot make at its test parameters, each with the reason.
#: Every map makes every width today; an entry here must raise a ValueError naming
#: n_components.
WIDTHS_A_MAP_CANNOT_MAKE = {}


@pytest.mark.parametrize("name", SIZED_MAPS)
@pytest.mark.parametrize("n_components", [1, 7, 33])
def test_n_components_is_the_exact_width(name, n_components, data):
    X, _ = data
    if (name, n_components) in WIDTHS_A_MAP_CANNOT_MAKE:
        with pytest.raises(ValueError, match="n_components"):
            make(name, n_components=n_components).fit(X)
        return
    est = make(name, n_components=n_components).fit(X)
    assert est.transform(X[:5]).shape == (5, n_components)


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_same_seed_same_bits_whatever_the_thread_count(name, data):
    X = np.vstack([domain(name, data[0])] * 10)  # several row blocks
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        Z1 = dense(make(name, random_state=3).fit(X).transform(X))
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        Z2 = dense(make(name, random_state=3).fit(X).transform(X))
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(Z1, Z2)
    if name in RANDOM_MAPS:
        Z3 = dense(make(name, random_state=4).fit(X).transform(X))
        assert Z1.shape != Z3.shape or not np.array_equal(Z1, Z3), "random_state has no effect"


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_blocked_transform_equals_row_by_row(name, data, monkeypatch):
    import kernelmaps._core.base as base

    X = domain(name, data[0])
    est = make(name).fit(X)
    Z = dense(est.transform(X))
    monkeypatch.setattr(base, "block_rows", lambda *_: 16)
    np.testing.assert_allclose(dense(est.transform(X)), Z, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", FEATURE_MAPS)
@pytest.mark.parametrize(
    "bad, message",
    [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")],
)
def test_non_finite_input_is_rejected(name, bad, message, data):
    X = domain(name, data[0])
    Xb = X.copy()
    Xb[3, 2] = bad
    with pytest.raises(ValueError, match=message):
        make(name).fit(Xb)
    est = make(name).fit(X)
    with pytest.raises(ValueError, match=message):
        est.transform(Xb)


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_wrong_feature_count_unfitted_and_empty_input(name, data):
    from sklearn.exceptions import NotFittedError

    X = domain(name, data[0])
    with pytest.raises(NotFittedError):
        make(name).transform(X)
    est = make(name).fit(X)
    with pytest.raises(ValueError, match="features"):
        est.transform(X[:, :-1])
    with pytest.raises(ValueError, match="sample"):
        est.transform(X[:0])
    with pytest.raises(ValueError):
        est.transform(X[0])  # 1-D


@pytest.mark.parametrize("name", SIZED_MAPS)
@pytest.mark.parametrize("bad", [0, -3, 2.5, "ten", None])
def test_impossible_n_components(name, bad, data):
    X, _ = data
    with pytest.raises(ValueError, match="n_components"):
        make(name, n_components=bad).fit(X)


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_pickle_round_trip(name, data):
    X, Y = (domain(name, A) for A in data)
    est = make(name).fit(X)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(dense(again.transform(Y)), dense(est.transform(Y)))


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_kernel_method_gives_the_gram_matrix(name, data):
    X, Y = (domain(name, A) for A in data)
    est = make(name).fit(X)
    try:
        K = est.kernel(X[:20], Y[:10])
    except NotImplementedError:
        pytest.skip(f"{name} approximates no fixed kernel")
    assert K.shape == (20, 10)
    assert np.isfinite(K).all()
    K_sym = est.kernel(Y)
    np.testing.assert_allclose(K_sym, K_sym.T, rtol=1e-10, atol=1e-12)


def test_public_surface_is_estimators_and_documented_functions():
    import importlib.metadata

    from numba.core.registry import CPUDispatcher

    estimators = {cls.__name__ for cls in REGISTRY.values()}
    functions = {"ALGORITHMS", "arc_cosine_kernel", "datasets", "exact_kernel", "fwht", "kernel_mse",
                 "min_max_kernel", "nrmse", "relative_frobenius_error", "resolve_gamma", "tanimoto_kernel"}
    # a documented base class whose subclasses are the registered estimators
    bases = {"GroupLassoMKL"}
    assert set(kernelmaps.__all__) == estimators | functions | bases
    assert not [name for name in kernelmaps.__all__ if isinstance(getattr(kernelmaps, name), CPUDispatcher)]
    assert kernelmaps.__version__ == importlib.metadata.version("kernelmaps")
