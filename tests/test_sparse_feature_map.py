"""The contract of the sparse-output base class, held on a tiny map defined here.

The map has no ``name``, so it stays out of the registry that the contract
tests and the benchmarks iterate over.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelmaps
import kernelmaps._core.base as base
from kernelmaps import SparseFeatureMap
from kernelmaps._core.validation import FeatureOverflowError

from naive import floor_one_hot


class FloorOneHot(SparseFeatureMap):
    """Feature ``j`` of a row sets one column of its own block (see
    :func:`naive.floor_one_hot`), to ``(j + 1) * scale``.

    The blocks are in the reverse order of the features, so the columns come
    out of ``_transform_block`` decreasing and the base class has to sort them.
    """

    def __init__(self, n_components=12, *, scale=1.0):
        self.n_components = n_components
        self.scale = scale

    def _nnz_per_row(self, n_features):
        return n_features

    def _fit(self, X, rng):
        self.width_ = self.n_components_ // X.shape[1]
        if self.width_ < 1:
            raise ValueError(f"n_components={self.n_components_} is below n_features={X.shape[1]}")

    def _prepare_transform(self, dtype):
        return np.arange(1, self.n_features_in_ + 1).astype(dtype) * dtype.type(self.scale)

    def _transform_block(self, X, indices, data, values):
        d = X.shape[1]
        indices[...] = (d - 1 - np.arange(d)) * self.width_ + np.mod(np.floor(X), self.width_).astype(np.intp)
        data[...] = values


#: scikit-learn's checks that set ``n_components=1``, which a map storing one
#: entry per feature cannot meet on their data of several features.
ONE_COMPONENT_CHECKS = ("check_dont_overwrite_parameters", "check_methods_sample_order_invariance",
                        "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_predict1d")


@parametrize_with_checks([FloorOneHot(n_components=40)], expected_failed_checks=lambda _: {
    check: "one entry per feature needs n_components >= n_features" for check in ONE_COMPONENT_CHECKS})
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(scale=3.0, size=(300, 4)), rng.normal(scale=3.0, size=(50, 4))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transform_is_csr_in_the_input_dtype_and_equals_numpy(data, dtype):
    X, Y = (A.astype(dtype) for A in data)
    Z = FloorOneHot(n_components=21).fit(X).transform(Y)
    assert isinstance(Z, sp.csr_matrix)
    assert Z.shape == (50, 21) and Z.dtype == dtype
    assert Z.has_canonical_format
    np.testing.assert_array_equal(np.diff(Z.indptr), 4)  # one entry per feature in every row
    np.testing.assert_array_equal(Z.toarray(), floor_one_hot(Y, 21))


def test_integers_are_computed_in_float64(data):
    X = np.round(data[0]).astype(np.int64)
    Z = FloorOneHot().fit(X).transform(X)
    assert Z.dtype == np.float64
    np.testing.assert_array_equal(Z.toarray(), floor_one_hot(X, 12))


def test_sparse_input_gives_the_dense_inputs_result(data):
    X, Y = data
    est = FloorOneHot().fit(X)
    Y[np.abs(Y) < 1] = 0.0
    Zs = est.transform(sp.csc_matrix(Y))
    assert isinstance(Zs, sp.csr_matrix)
    np.testing.assert_array_equal(Zs.toarray(), est.transform(Y).toarray())


def test_blocks_on_threads_give_the_one_block_result(data, monkeypatch):
    X = data[0]
    est = FloorOneHot().fit(X)
    Z = est.transform(X)
    monkeypatch.setattr(base, "block_rows", lambda *_: 7)
    Zb = est.transform(X)
    np.testing.assert_array_equal(Zb.indptr, Z.indptr)
    np.testing.assert_array_equal(Zb.indices, Z.indices)
    np.testing.assert_array_equal(Zb.data, Z.data)


def test_transform_before_fit_and_the_wrong_width_raise(data):
    X, Y = data
    with pytest.raises(NotFittedError):
        FloorOneHot().transform(X)
    est = FloorOneHot().fit(X)
    with pytest.raises(ValueError, match="features"):
        est.transform(Y[:, :3])


def test_feature_names_name_every_column(data):
    est = FloorOneHot(n_components=8).fit(data[0])
    names = est.get_feature_names_out()
    assert list(names) == [f"flooronehot{i}" for i in range(8)]


def test_non_finite_values_raise(data):
    X = data[0].astype(np.float32)
    est = FloorOneHot(scale=1e38).fit(X)
    with np.errstate(over="ignore"), pytest.raises(FeatureOverflowError,
                                                   match="FloorOneHot.transform overflowed float32"):
        est.transform(X)  # 4e38, the value of the fourth feature, is beyond float32


def test_repeated_or_outside_columns_are_refused(data):
    class Repeating(FloorOneHot):
        def _transform_block(self, X, indices, data, values):
            super()._transform_block(X, indices, data, values)
            indices[:, 1] = indices[:, 0]

    class Outside(FloorOneHot):
        def _transform_block(self, X, indices, data, values):
            super()._transform_block(X, indices, data, values)
            indices[5, 0] = self.n_components_

    X = data[0]
    with pytest.raises(RuntimeError, match="row 0 the columns .*must be distinct"):
        Repeating().fit(X).transform(X)
    with pytest.raises(RuntimeError, match=r"row 5 the columns .*in \[0, 12\)"):
        Outside().fit(X).transform(X)


def test_dask_input_to_transform_is_refused(data):
    da = pytest.importorskip("dask.array")
    est = FloorOneHot().fit(data[0])
    with pytest.raises(TypeError, match="builds a scipy sparse matrix in memory"):
        est.transform(da.from_array(data[1], chunks=(25, 4)))


def test_a_named_subclass_registers_and_the_test_map_does_not(monkeypatch):
    assert FloorOneHot not in kernelmaps.ALGORITHMS.values()
    registry = {}
    monkeypatch.setattr(base, "REGISTRY", registry)

    class Named(FloorOneHot):
        name = "floor_one_hot"
        paper = "none: a test map"

    assert registry == {"floor_one_hot": Named}
    assert "floor_one_hot" not in kernelmaps.ALGORITHMS
