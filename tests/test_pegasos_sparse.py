"""PegasosSVC on sparse features: the scaled-weights kernel against the dense steps."""

import numpy as np
import pytest
import scipy.sparse as sp

import kernelmaps.pegasos
from kernelmaps import PegasosSVC
from kernelmaps._solvers.pegasos_sparse import MIN_SCALE, pegasos_sparse_steps
from kernelmaps._core.validation import FeatureOverflowError
from kernelmaps._solvers.pegasos_dense import draw_minibatches, pegasos_steps


def planted(n_rows, n_features, n_classes, seed, density=0.2):
    """Sparse rows (about ``density`` of the entries non-zero) labelled by a random
    linear rule, as a dense array, its CSR copy and the labels."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n_rows, n_features)) * (rng.random((n_rows, n_features)) < density)
    y = np.argmax(Z @ rng.standard_normal((n_features, n_classes)), axis=1) if n_classes > 2 else \
        (Z @ rng.standard_normal(n_features) > 0).astype(int)
    return Z, sp.csr_matrix(Z), y


def with_index_dtype(Z, index_dtype):
    Z = Z.copy()
    Z.indices, Z.indptr = Z.indices.astype(index_dtype), Z.indptr.astype(index_dtype)
    return Z


def ball_norms(clf):
    return np.sqrt((clf.coef_**2).sum(axis=0) + clf.intercept_**2)


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sparse_and_dense_fits_agree(n_classes, fit_intercept, dtype, index_dtype):
    Z, Zs, y = planted(300, 40, n_classes, seed=n_classes)
    Z, Zs = Z.astype(dtype), with_index_dtype(Zs.astype(dtype), index_dtype)
    for max_iter in (1, 300):
        params = dict(alpha=0.05, batch_size=16, max_iter=max_iter, fit_intercept=fit_intercept, random_state=1)
        dense = PegasosSVC(**params).fit(Z, y)
        sparse = PegasosSVC(**params).fit(Zs, y)
        if max_iter == 1:  # the first step lands outside the ball: the kept norm decides the projection
            np.testing.assert_allclose(ball_norms(dense), 1 / np.sqrt(0.05), rtol=1e-12)
        assert sparse.coef_.dtype == np.float64 and sparse.coef_.shape == dense.coef_.shape
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)
        if not fit_intercept:
            assert np.all(sparse.intercept_ == 0.0)
        np.testing.assert_array_equal(sparse.predict(Zs), dense.predict(Z))


def test_index_dtype_reaches_the_kernel():
    """int64 indices stay int64 through validation (the kernel compiles for both)."""
    _, Zs, y = planted(50, 10, 2, seed=0)
    seen = []

    def spy(data, indices, *args):
        seen.append((data.dtype, indices.dtype))
        return pegasos_sparse_steps(data, indices, *args)

    for index_dtype in (np.int32, np.int64):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("kernelmaps._solvers.pegasos_sparse.pegasos_sparse_steps", spy)
            PegasosSVC(batch_size=8, max_iter=5).fit(with_index_dtype(Zs.astype(np.float32), index_dtype), y)
    assert seen == [(np.float32, np.int32), (np.float32, np.int64)]


def wide_planted(n_rows=5000, n_features=500_000, n_classes=3, nnz=10, pool=2000, seed=0):
    """Rows of ``nnz`` ones: half in the columns of their class's pool, half anywhere
    past the pools, so that which columns are set decides the class."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_rows)
    informative = y[:, None] * pool + np.argsort(rng.random((n_rows, pool)), axis=1)[:, :nnz // 2]
    noise = rng.integers(n_classes * pool, n_features, (n_rows, nnz - nnz // 2))
    cols = np.hstack([informative, noise])
    Z = sp.csr_matrix((np.ones(cols.size), cols.ravel(), np.arange(0, cols.size + 1, nnz)),
                      shape=(n_rows, n_features))
    Z.sum_duplicates()
    assert Z.nnz == n_rows * nnz  # no repeated column in a row at this seed
    return Z, y


def test_wide_sparse_features_fit_predict_and_learn(monkeypatch):
    Z, y = wide_planted()

    def dense_steps(*args):
        raise AssertionError("sparse features went to the dense kernel")

    monkeypatch.setattr(kernelmaps.pegasos, "pegasos_steps", dense_steps)
    clf = PegasosSVC(alpha=1e-4, batch_size=100, max_iter=200, random_state=0).fit(Z, y)
    assert clf.coef_.shape == (500_000, 3)
    assert np.isfinite(clf.coef_).all()
    # weights only where the training rows have non-zeros
    assert not np.any(clf.coef_[np.setdiff1d(np.arange(500_000), Z.indices)])
    scores = clf.decision_function(Z)
    assert scores.shape == (5000, 3)
    assert clf.predict(Z).shape == (5000,)
    assert clf.score(Z, y) > 0.9  # chance is 1/3


def run_both(Z, Zs, signs, batches, lam, fit_intercept, min_scale, W0=None, b0=None, t0=0):
    D, C = Z.shape[1], signs.shape[1]
    W = np.zeros((D, C)) if W0 is None else W0.copy()
    b = np.zeros(C) if b0 is None else b0.copy()
    W_dense, b_dense = W.copy(), b.copy()
    n_folds = pegasos_sparse_steps(Zs.data, Zs.indices, Zs.indptr, signs, W, b, batches, lam, t0,
                                   fit_intercept, min_scale)
    pegasos_steps(Z, signs, W_dense, b_dense, batches, lam, t0, fit_intercept)
    return W, b, W_dense, b_dense, n_folds


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_folding_the_scale_into_the_weights_changes_nothing(fit_intercept):
    Z, Zs, y = planted(200, 30, 3, seed=7)
    signs = np.where(y[:, None] == np.arange(3), 1, -1).astype(np.int8)
    batches = draw_minibatches(np.random.RandomState(0), 200, 150, 16)
    lam = 0.05
    # the default folds only at the first step, whose shrink factor is 0
    W, b, W_dense, b_dense, n_folds = run_both(Z, Zs, signs, batches, lam, fit_intercept, MIN_SCALE)
    assert n_folds == 3
    # a threshold above every shrink factor 1 - 1/t (t <= 150) folds at every step
    W_f, b_f, _, _, n_folds = run_both(Z, Zs, signs, batches, lam, fit_intercept, 0.999)
    assert n_folds == 3 * 150
    for W_got, b_got in ((W, b), (W_f, b_f)):
        np.testing.assert_allclose(W_got, W_dense, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(b_got, b_dense, rtol=1e-9, atol=1e-12)


def test_steps_continue_from_given_weights():
    """Started at t0 > 0 from non-zero weights (whose norm the kernel sums first),
    the scale never folds and the steps still match."""
    Z, Zs, y = planted(200, 30, 3, seed=8)
    signs = np.where(y[:, None] == np.arange(3), 1, -1).astype(np.int8)
    batches = draw_minibatches(np.random.RandomState(1), 200, 200, 16)
    lam = 0.05
    W0, b0 = np.zeros((30, 3)), np.zeros(3)
    pegasos_steps(Z, signs, W0, b0, batches[:50], lam, 0, True)
    W, b, W_dense, b_dense, n_folds = run_both(Z, Zs, signs, batches[50:], lam, True, MIN_SCALE, W0, b0, t0=50)
    assert n_folds == 0
    np.testing.assert_allclose(W, W_dense, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b, b_dense, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_decision_function_on_sparse_equals_on_its_dense_copy(fmt):
    Z, Zs, y = planted(300, 40, 4, seed=3)
    clf = PegasosSVC(alpha=0.01, batch_size=32, max_iter=200, random_state=0).fit(Zs, y)
    Zf = Zs.asformat(fmt)
    np.testing.assert_allclose(clf.decision_function(Zf), clf.decision_function(Z), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(Zf), clf.predict(Z))
    assert clf.score(Zf, y) == clf.score(Z, y)


@pytest.mark.parametrize("magnitude", [1e155, 1e200])
def test_sparse_features_whose_squares_overflow_match_dense(magnitude):
    Z, Zs, y = planted(200, 20, 2, seed=4)
    params = dict(alpha=1e-2, batch_size=32, max_iter=100, random_state=0)
    dense = PegasosSVC(**params).fit(Z * magnitude, y)
    sparse = PegasosSVC(**params).fit(Zs * magnitude, y)
    assert np.abs(sparse.coef_).max() > 1.0
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-9, atol=1e-12)


def test_sparse_features_beyond_float64_are_a_clear_error():
    _, Zs, y = planted(200, 20, 2, seed=4)
    with pytest.raises(FeatureOverflowError, match=r"magnitude up to .*e\+307.*Rescale the features"):
        PegasosSVC(alpha=1e-2, batch_size=32, max_iter=50, random_state=0).fit(Zs * 1e307, y)
