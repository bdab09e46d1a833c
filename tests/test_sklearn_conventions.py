"""The public API scikit-learn users expect: feature names, pandas output and
sparse input, on every registered feature map.

Sparse input must give the features of the same rows given dense: bit for bit
where the map computes the same thing (a densified block, a count sketch of the
nonzeros), to rounding where a sparse-dense product replaces the BLAS one.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags

import kernelmaps._core.parallel as parallel
from kernelmaps import (CRAFTMaps, Nystroem, RandomFourierFeatures, RandomMaclaurin, SparseFeatureMap,
                        TensorSketch, relative_frobenius_error)
from kernelmaps._core.validation import check_float_array
from registry import FEATURE_MAPS, REGISTRY, domain, make

pd = pytest.importorskip("pandas")

#: Maps whose sparse path is a sparse-dense product instead of the dense BLAS
#: one: same features up to rounding, not bit for bit.
SPARSE_PRODUCT = {name for name in FEATURE_MAPS if getattr(REGISTRY[name], "accepts_sparse_blocks", False)}
#: Relative tolerance of those, against the largest feature.
RTOL = {np.float64: 1e-12, np.float32: 1e-5}


def fit(est, X, y):
    """Fit with labels only where the objective needs them (the learned maps)."""
    return est.fit(X, y) if getattr(est, "objective", None) == "classification" else est.fit(X)


@pytest.fixture(scope="module")
def sparse_data():
    """Rows with 70 % zeros, the labels the learned maps need, and held-out rows."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((240, 7))
    X[rng.random(X.shape) < 0.7] = 0.0
    return X[:200], np.arange(200) % 3, X[200:]


# ------------------------------------------------------------- feature names
@pytest.mark.parametrize("name", FEATURE_MAPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pandas_output_names_the_columns_and_keeps_the_values(name, dtype, sparse_data):
    X, y, Y = (domain(name, a).astype(dtype) if a.dtype.kind == "f" else a for a in sparse_data)
    est = fit(make(name), X, y)
    Z = est.transform(Y)
    prefix = type(est).__name__.lower()
    expected = [f"{prefix}{i}" for i in range(est.n_components_)]
    assert est.get_feature_names_out().tolist() == expected
    if isinstance(est, SparseFeatureMap):
        # scikit-learn refuses a DataFrame of a sparse output, and says so
        with pytest.raises(ValueError, match="sparse matrix"):
            est.set_output(transform="pandas").transform(Y)
        return
    frame = est.set_output(transform="pandas").transform(Y)
    assert isinstance(frame, pd.DataFrame)
    assert frame.columns.tolist() == expected
    assert (frame.dtypes == dtype).all()
    np.testing.assert_array_equal(frame.to_numpy(), Z)


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_feature_names_need_a_fit(name):
    with pytest.raises(NotFittedError):
        make(name).get_feature_names_out()


def test_pipelines_give_dataframes():
    X = pd.DataFrame(np.random.default_rng(1).standard_normal((60, 4)), columns=list("abcd"))
    scaled = make_pipeline(StandardScaler(), RandomFourierFeatures(16, gamma=0.5, random_state=0))
    plain = scaled.fit_transform(X)
    frame = scaled.set_output(transform="pandas").fit_transform(X)
    assert frame.columns.tolist() == [f"randomfourierfeatures{i}" for i in range(16)]
    np.testing.assert_array_equal(frame.to_numpy(), plain)
    # a map fed by another map: the second sees the first one's column names
    chained = make_pipeline(RandomFourierFeatures(16, gamma=0.5, random_state=0),
                            Nystroem(8, gamma=0.5, random_state=0)).set_output(transform="pandas")
    frame = chained.fit_transform(X)
    assert frame.columns.tolist() == [f"nystroem{i}" for i in range(8)]
    second = chained[-1]
    assert second.feature_names_in_.tolist() == [f"randomfourierfeatures{i}" for i in range(16)]
    assert chained.get_feature_names_out().tolist() == frame.columns.tolist()


# ------------------------------------------------------------------ sparse
def assert_same_features(Z_sparse, Z_dense, name, dtype):
    if issubclass(REGISTRY[name], SparseFeatureMap):
        # sparse output either way: the same entries, bit for bit
        assert type(Z_sparse) is sp.csr_matrix and Z_sparse.dtype == dtype
        Z_sparse, Z_dense = Z_sparse.toarray(), Z_dense.toarray()
    assert type(Z_sparse) is np.ndarray and Z_sparse.dtype == dtype
    if name in SPARSE_PRODUCT:
        scale = float(np.abs(Z_dense).max())
        np.testing.assert_allclose(Z_sparse, Z_dense, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)
    else:
        np.testing.assert_array_equal(Z_sparse, Z_dense)


@pytest.mark.parametrize("name", FEATURE_MAPS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_gives_the_dense_features(name, dtype, fmt, sparse_data):
    X, y, Y = sparse_data
    X, Y = domain(name, X).astype(dtype), domain(name, Y).astype(dtype)
    Xs, Ys = sp.csr_matrix(X).asformat(fmt), sp.csr_array(Y).asformat(fmt)
    dense = fit(make(name), X, y)
    Z = dense.transform(Y)
    assert_same_features(dense.transform(Ys), Z, name, dtype)
    # fitted on sparse input: the same map, so the same features
    assert_same_features(fit(make(name), Xs, y).transform(Ys), Z, name, dtype)


@pytest.mark.parametrize("name, params", [
    ("nystroem", {"kernel": "polynomial"}),  # no centred frame: the block stays sparse
    ("nystroem", {"kernel": "laplacian", "landmarks": "leverage", "gamma": "median"}),
    ("nystroem", {"landmarks": "kmeans"}),
    ("random_maclaurin", {"structured": True}),
    ("random_maclaurin", {"kernel": "exponential", "h01": False}),
    ("tensor_sketch", {"coef0": 0.0, "degree": 3}),  # no appended constant
    ("craftmaps", {"up": "tensor_sketch", "down": "srht"}),
    ("craftmaps", {"up_structured": True}),
    ("rff", {"output": "cossin", "kernel": "laplacian", "gamma": "knn50"}),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_input_with_other_parameters(name, params, dtype, sparse_data):
    X, y, Y = sparse_data
    X, Y = X.astype(dtype), Y.astype(dtype)
    Z = make(name, **params).fit(X).transform(Y)
    Z_sparse = make(name, **params).fit(sp.csr_matrix(X)).transform(sp.csr_matrix(Y))
    assert_same_features(Z_sparse, Z, name, dtype)


@pytest.mark.filterwarnings("ignore:n_components=.*h01=True")  # CRAFTMaps' D < d here
@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_sparse_input_is_never_densified_whole(name, monkeypatch):
    """Transform's peak memory stays far below the dense copy of X: the maps
    that take sparse blocks never densify them, the others one block at a time."""
    # dense X: 160 MB; ORF orthogonalizes d x d blocks at fit, so it gets fewer features
    n, d = (16000, 1250) if name == "orf" else (1000, 20000)
    X = sp.random(n, d, density=5e-4, format="csr", random_state=np.random.RandomState(0))
    y = np.arange(n) % 2
    est = fit(make(name), X[:100], y[:100])
    monkeypatch.setattr(parallel, "MIN_BLOCK_BYTES", 2**18)
    monkeypatch.setattr(parallel, "PRODUCT_ROWS", 16)
    monkeypatch.setattr(parallel, "MAX_BLOCK_BYTES", 2**20)
    tracemalloc.start()
    try:
        Z = est.transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Z.shape == (n, est.n_components_)
    output = Z.data.nbytes + Z.indices.nbytes + Z.indptr.nbytes if sp.issparse(Z) else Z.nbytes
    # the output, blocks of 1 MiB per worker and their per-call set-up; the dense X is 8x more
    assert peak < output + n * d * 8 / 8, f"{name} peaked at {peak / 2**20:.0f} MiB on sparse input"


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_sparse_is_declared_in_the_tags(name):
    assert get_tags(make(name)).input_tags.sparse


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, bool])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_validation_of_sparse_input(dtype, fmt):
    X = sp.random(20, 5, density=0.4, format=fmt, random_state=np.random.RandomState(0)) * 3
    X = X.astype(dtype)
    got = check_float_array(RandomFourierFeatures(), X, reset=True, accept_sparse=True)
    assert sp.issparse(got) and got.format == "csr" and got.has_canonical_format
    assert got.dtype == (np.float32 if dtype == np.float32 else np.float64)
    np.testing.assert_array_equal(got.toarray(), X.toarray().astype(got.dtype))
    dense = check_float_array(RandomFourierFeatures(), X, reset=True, accept_sparse="densify")
    assert isinstance(dense, np.ndarray) and dense.flags.c_contiguous
    with pytest.raises(TypeError, match="[Ss]parse"):
        check_float_array(RandomFourierFeatures(), X, reset=True, accept_sparse=False)


def test_validation_leaves_the_callers_matrix_alone():
    # unsorted indices and a duplicate entry: valid CSR, not canonical
    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3, 3])), shape=(2, 3))
    indices = X.indices.copy()
    got = check_float_array(RandomFourierFeatures(), X, reset=True, accept_sparse=True)
    np.testing.assert_array_equal(X.indices, indices)
    assert got.has_canonical_format
    np.testing.assert_array_equal(got.toarray(), [[2.0, 0.0, 4.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("name", FEATURE_MAPS)
@pytest.mark.parametrize("bad, message", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_sparse_entries_are_rejected(name, bad, message, sparse_data):
    X, y = domain(name, sparse_data[0]), sparse_data[1]
    Xb = sp.csr_matrix(X)
    Xb.data[3] = bad
    with pytest.raises(ValueError, match=message):
        fit(make(name), Xb, y)
    est = fit(make(name), X, y)
    with pytest.raises(ValueError, match=message):
        est.transform(Xb)


#: Learners that take sparse features as they are (random binning's output).
SPARSE_LEARNERS = {"least_squares", "least_squares_regressor", "least_squares_cv", "least_squares_regressor_cv", "ecoc",
                   "pegasos"}


def test_learners_still_refuse_sparse_input(sparse_data):
    X, y, _ = sparse_data
    for name, cls in REGISTRY.items():
        if cls.kind != "feature_map":
            assert get_tags(make(name)).input_tags.sparse == (name in SPARSE_LEARNERS), name


def test_kernel_method_takes_sparse_input(sparse_data):
    X, _, Y = sparse_data
    est = make("nystroem").fit(X)
    np.testing.assert_array_equal(est.kernel(sp.csr_matrix(X[:10]), sp.csc_matrix(Y)), est.kernel(X[:10], Y))


# --------------------------------------------------- CRAFTMaps up-projection
@pytest.fixture(scope="module")
def sphere():
    X = np.random.default_rng(5).standard_normal((300, 8))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_structured_up_projection_approximates_the_kernel_as_well(sphere):
    K = CRAFTMaps(8, degree=3, gamma=1.0, coef0=1.0).fit(sphere).kernel(sphere)

    def error(seed, **params):
        craft = CRAFTMaps(256, n_components_up=2048, degree=3, gamma=1.0, coef0=1.0, random_state=seed,
                          **params).fit(sphere)
        return relative_frobenius_error(K, Z=craft.transform(sphere))

    for down in ("gaussian", "srht"):
        dense = np.mean([error(seed, down=down) for seed in range(3)])
        structured = np.mean([error(seed, down=down, up_structured=True) for seed in range(3)])
        assert structured < 0.4
        assert structured < 1.25 * dense, (down, structured, dense)


def test_up_projection_parameters_reach_random_maclaurin(sphere):
    craft = CRAFTMaps(16, n_components_up=64, up_structured=True, h01=False, random_state=0).fit(sphere)
    assert isinstance(craft.up_, RandomMaclaurin)
    assert craft.up_.structured and craft.up_.signs_ is not None and craft.up_.random_weights_ is None
    assert not craft.up_.h01_ and craft.up_.n_exact_ == 0
    assert CRAFTMaps(16, n_components_up=64, random_state=0).fit(sphere).up_.h01_
    # h01 means nothing to a Tensor Sketch; a structured one does not exist
    assert isinstance(CRAFTMaps(16, up="tensor_sketch", h01=False).fit(sphere).up_, TensorSketch)
    with pytest.raises(ValueError, match="up_structured"):
        CRAFTMaps(16, up="tensor_sketch", up_structured=True).fit(sphere)
