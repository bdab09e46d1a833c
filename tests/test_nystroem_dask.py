"""The Nyström kernel machines (ridge and logistic) fitted out of core on Dask arrays.

Run on a real ``dask.distributed.LocalCluster`` of two worker processes bound to
127.0.0.1; skipped, with the reason, when the ``dask`` extra is absent.
"""

import warnings

import dask
import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the 'dask' extra is absent: pip install 'kernelmaps[dask]'")
distributed = pytest.importorskip("distributed", reason="the 'dask' extra is absent: pip install 'kernelmaps[dask]'")

from kernelmaps import (NystroemKernelRidge, NystroemKernelRidgeClassifier,  # noqa: E402
                        NystroemLogisticRegression)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12000, 8))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] / 2 + 0.1 * rng.standard_normal(12000)
    labels = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    return X, y, labels


def relative(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("cls", [NystroemKernelRidge, NystroemKernelRidgeClassifier])
def test_dask_fit_equals_the_in_memory_fit_on_the_same_centres(client, data, cls):
    X, y, labels = data
    target = y if cls is NystroemKernelRidge else labels
    params = dict(n_components=300, alpha=1.0, tol=1e-6, max_iter=300)
    lazy = cls(gamma="scale", random_state=0, **params).fit(da.from_array(X, chunks=2500),
                                                          da.from_array(target, chunks=2500))
    in_memory = cls(gamma=lazy.gamma_, landmarks=lazy.components_, **params).fit(X, target)
    np.testing.assert_array_equal(X[lazy.component_indices_], lazy.components_)  # indices of X's rows
    assert lazy.n_iter_ == in_memory.n_iter_
    assert relative(lazy.coef_, in_memory.coef_) < 1e-8
    X_test = da.from_array(X[:3000], chunks=1000)
    predicted = lazy.predict(X_test)
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), in_memory.predict(X[:3000])) if cls is not NystroemKernelRidge \
        else np.testing.assert_allclose(predicted.compute(), in_memory.predict(X[:3000]), rtol=1e-7, atol=1e-9)
    if cls is NystroemKernelRidgeClassifier:
        np.testing.assert_array_equal(lazy.classes_, [0, 1, 2])
        assert lazy.decision_function(X_test).compute().shape == (3000, 3)


@pytest.mark.parametrize("classes", [2, 3])
def test_dask_logistic_fit_equals_the_in_memory_fit(client, data, classes):
    """Each Newton step's passes as map-reduces over the chunks: the same steps, CG
    iterations and coefficients (1e-6 relative) as the in-memory fit on the same
    centres, for one and several one-vs-rest columns. On Dask the Hessian products are float64: the
    in-memory fit with float64 products is the one it equals."""
    X, _, labels = data
    labels = np.minimum(labels, classes - 1)
    params = dict(n_components=200, alpha=1.0, gamma="scale", random_state=0)
    lazy = NystroemLogisticRegression(**params).fit(da.from_array(X, chunks=2500), da.from_array(labels, chunks=2500))
    in_memory = NystroemLogisticRegression(**params, hessian_dtype="float64").fit(X, labels)
    np.testing.assert_array_equal(lazy.component_indices_, in_memory.component_indices_)
    assert lazy.n_iter_ == in_memory.n_iter_ and lazy.cg_iterations_ == in_memory.cg_iterations_
    assert relative(lazy.coef_, in_memory.coef_) < 1e-6
    np.testing.assert_allclose(lazy.intercept_, in_memory.intercept_, rtol=1e-6)
    np.testing.assert_array_equal(lazy.classes_, np.arange(classes))
    probabilities = lazy.predict_proba(da.from_array(X[:2000], chunks=500)).compute()
    np.testing.assert_allclose(probabilities, in_memory.predict_proba(X[:2000]), rtol=1e-6, atol=1e-9)


def test_float32_hessian_products_are_refused_on_dask(client, data):
    X, _, labels = data
    model = NystroemLogisticRegression(n_components=20, hessian_dtype="float32")
    with pytest.raises(ValueError, match="hessian_dtype='float32' is for in-memory rows"):
        model.fit(da.from_array(X, chunks=2500), da.from_array(labels, chunks=2500))


def test_dask_fit_is_deterministic_and_keeps_float32(client, data):
    X, y, _ = data
    X32 = da.from_array(X.astype(np.float32), chunks=3000)
    fits = [NystroemKernelRidge(n_components=200, alpha=0.1, gamma=0.1, random_state=1).fit(X32, y)
            for _ in range(2)]
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    reference = NystroemKernelRidge(n_components=200, alpha=0.1, gamma=0.1, random_state=1).fit(
        da.from_array(X, chunks=3000), y)
    assert relative(fits[0].predict(X), reference.predict(X)) < 1e-3


def test_centres_of_a_sampled_fit_are_rows_of_x(client, data, monkeypatch):
    """More rows than the sample: the centres come from the sample, their indices are X's rows."""
    import kernelmaps._machines.dask_nystroem as machines

    X, y, _ = data
    monkeypatch.setattr(machines, "FIT_SAMPLE_ROWS", 1000)
    model = NystroemKernelRidge(n_components=300, alpha=1.0, random_state=0).fit(da.from_array(X, chunks=2500), y)
    assert model.component_indices_.max() >= 1000 and len(set(model.component_indices_)) == 300
    np.testing.assert_array_equal(X[model.component_indices_], model.components_)


def test_dask_bad_input_gets_a_clear_error(client, data):
    X, y, labels = data
    bad = X.copy()
    bad[7000, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        NystroemKernelRidge(n_components=50, random_state=0).fit(da.from_array(bad, chunks=2000), y)
    dX = da.from_array(X, chunks=2000)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        NystroemKernelRidge(n_components=50).fit(dX[dX[:, 0] > 0], y[X[:, 0] > 0])
    with pytest.raises(ValueError, match="does not stop early on Dask"):
        NystroemKernelRidge(n_components=50, early_stopping=True).fit(dX, y)
    with pytest.raises(ValueError, match="n_components must be an integer or 'auto'"):
        NystroemKernelRidge(n_components=1000.0).fit(dX, y)
    with pytest.raises(ValueError, match="X has 12000 rows but y has 11999"):
        NystroemKernelRidge(n_components=50).fit(dX, y[:-1])
    with pytest.raises(ValueError, match=r"rechunk\(\{1: -1\}\)"):
        NystroemKernelRidge(n_components=50).fit(da.from_array(X, chunks=(2000, 4)), y)
    with pytest.raises(ValueError, match="Unknown label type"):
        NystroemKernelRidgeClassifier(n_components=50).fit(dX, y)
    with pytest.raises(ValueError, match="does not stop early on Dask input"):
        NystroemLogisticRegression(n_components=50, early_stopping=True).fit(dX, labels)


@pytest.mark.parametrize("cls", [NystroemKernelRidge, NystroemKernelRidgeClassifier])
def test_dask_fit_caps_the_centres_at_the_rows_as_in_memory(client, data, cls):
    X, y, labels = data
    target = (y if cls is NystroemKernelRidge else labels)[:300]
    dX, dy = da.from_array(X[:300], chunks=100), da.from_array(target, chunks=100)
    with pytest.warns(UserWarning) as caught:
        capped = cls(n_components=500, gamma=0.1, random_state=0).fit(dX, dy)
    assert [str(w.message) for w in caught] == [
        "n_components=500 is larger than the 300 rows fitted: using every row as a landmark, n_components_=300"]
    assert caught[0].filename == __file__
    assert capped.n_components_ == 300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        auto = cls(gamma=0.1, random_state=0).fit(dX, dy)
    assert auto.n_components_ == 300
    np.testing.assert_array_equal(auto.coef_, capped.coef_)


def test_logistic_predicts_lazily(client, data):
    X, _, labels = data
    clf = NystroemLogisticRegression(n_components=100, random_state=0).fit(X[:3000], labels[:3000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = clf.predict_proba(da.from_array(X[3000:6000], chunks=1000))
    np.testing.assert_allclose(proba.compute(), clf.predict_proba(X[3000:6000]))


def test_workers_keep_their_chunks_kernel_blocks(client, data):
    """With keep_blocks, each chunk's operator is persisted on one worker and the first pass
    fills its blocks: the exact kernel of its rows, read by every later pass."""
    from kernelmaps import exact_kernel
    from kernelmaps._machines.dask_nystroem import DaskKernelOperator

    X = data[0][:4000]
    centres = X[:50] + 0.1
    params = dict(kernel="gaussian", gamma=0.2, degree=2, coef0=1.0, nu=1.5)
    kept = DaskKernelOperator(da.from_array(X, chunks=1000), centres, params, keep_blocks=True)
    fresh = DaskKernelOperator(da.from_array(X, chunks=1000), centres, params)
    V = np.random.default_rng(0).standard_normal((50, 2))
    first, second = kept.normal_matvec(V), kept.normal_matvec(V)
    np.testing.assert_array_equal(first, fresh.normal_matvec(V))
    np.testing.assert_array_equal(second, first)
    held = {worker: {key for key in keys if str(key).startswith("_chunk_operator")}
            for worker, keys in client.has_what().items()}
    # each chunk's operator on one worker (never copied for a pass), the chunks on both workers
    assert sorted(key for keys in held.values() for key in keys) == sorted(op.key for op in kept.operators)
    assert all(held.values())
    operators = dask.compute(*kept.operators)
    assert all(operator._block_kept.all() for operator in operators)
    np.testing.assert_allclose(np.vstack([operator.kept for operator in operators]),
                               exact_kernel(X, centres, gamma=0.2), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("cls, dtype", [(NystroemKernelRidge, np.float32), (NystroemKernelRidge, np.float64),
                                        (NystroemLogisticRegression, np.float32)])
def test_kept_blocks_on_the_workers_give_the_same_coefficients(client, data, cls, dtype):
    X, y, labels = data
    rows = 12000 if cls is NystroemKernelRidge else 6000
    target = (y if cls is NystroemKernelRidge else labels > 0)[:rows]
    dX, dy = da.from_array(X[:rows].astype(dtype), chunks=2500), da.from_array(target, chunks=2500)
    kept = cls(n_components=200, alpha=1.0, random_state=0).fit(dX, dy)
    fresh = cls(n_components=200, alpha=1.0, random_state=0, kernel_cache=None).fit(dX, dy)
    assert kept.kernel_cache_ == rows * 200 * np.dtype(dtype).itemsize and fresh.kernel_cache_ == 0
    np.testing.assert_array_equal(kept.coef_, fresh.coef_)
    if cls is NystroemKernelRidge:
        too_small = cls(n_components=200, alpha=1.0, random_state=0, kernel_cache=1e6).fit(dX, dy)
        assert too_small.kernel_cache_ == 0  # a budget per worker: 12000 x 200 entries do not fit in 1 MB


def test_a_budget_larger_than_a_workers_room_is_refused(client, data):
    from kernelmaps._machines.dask_support import worker_memory

    X, y, _ = data
    budget = 1.05 * min(worker_memory())
    with pytest.raises(ValueError, match="bytes per Dask worker is more than"):
        NystroemKernelRidge(n_components=50, kernel_cache=budget).fit(da.from_array(X, chunks=3000), y)


def test_the_workers_room_does_not_read_the_clients_cached_identity(client, monkeypatch):
    """The client's periodic refresh keeps an identity without workers; reading it (a race between the
    fetch and the read) made a two-worker cluster look empty."""
    from kernelmaps._machines.dask_support import worker_memory

    monkeypatch.setattr(type(client), "scheduler_info", lambda self, *args, **kwargs: {"workers": {}})
    room = worker_memory()
    assert len(room) == 2 and all(value > 0 for value in room)
