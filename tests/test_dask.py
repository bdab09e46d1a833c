"""kernelmaps on Dask: lazy transforms, fits on a sample, one-pass learners out of core.

Run on a real ``dask.distributed.LocalCluster`` of two worker processes bound to
127.0.0.1; skipped, with the reason, when the ``dask`` extra is absent.
"""

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the 'dask' extra is absent: pip install 'kernelmaps[dask]'")
distributed = pytest.importorskip("distributed", reason="the 'dask' extra is absent: pip install 'kernelmaps[dask]'")

import dask  # noqa: E402
from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

import kernelmaps  # noqa: E402
import kernelmaps.dask as kdask  # noqa: E402
from kernelmaps import (ECOCClassifier, LeastSquaresClassifier, LeastSquaresRegressor, NormalEquations,  # noqa: E402
                        Nystroem, RandomFourierFeatures, SparseFeatureMap)
from registry import FEATURE_MAPS, domain, make  # noqa: E402

#: Coefficients of the Dask path against the in-memory one: sums of the same rows
#: in another order.
RTOL = 1e-10


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1100, 6))
    labels = (X[:, 0] * X[:, 1] > 0).astype(int) + 2 * (X[:, 2] > 0.5)
    return X, labels


def relative_error(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# ----------------------------------------------------------------- without Dask


def test_the_core_imports_and_works_without_dask():
    script = textwrap.dedent("""
        import sys
        sys.modules["dask"] = None  # as if the extra were not installed
        sys.modules["distributed"] = None
        import numpy as np
        import kernelmaps
        assert "kernelmaps.dask" not in sys.modules
        X = np.random.default_rng(0).standard_normal((50, 4))
        Z = kernelmaps.RandomFourierFeatures(n_components=32, random_state=0).fit_transform(X)
        kernelmaps.LeastSquaresClassifier().fit(Z, X[:, 0] > 0)
        try:
            import kernelmaps.dask
        except ImportError as error:
            assert "pip install 'kernelmaps[dask]'" in str(error), error
        else:
            raise AssertionError("kernelmaps.dask imported without dask")
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


# ----------------------------------------------------------------- transform


@pytest.mark.parametrize("name", FEATURE_MAPS)
def test_every_map_transforms_a_dask_array_lazily_and_bit_identically(name, rows, client):
    X = domain(name, rows[0])
    est = make(name).fit(X[:300])
    if isinstance(est, SparseFeatureMap):
        # a lazy Dask array holds dense chunks: a sparse map transforms chunks in memory
        with pytest.raises(TypeError, match="compute its rows"):
            est.transform(da.from_array(X, chunks=(130, -1)))
        return
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        expected = est.transform(Xd)
        lazy = est.transform(da.from_array(Xd, chunks=(130, -1)))
        assert isinstance(lazy, da.Array)
        assert lazy.shape == expected.shape and lazy.dtype == expected.dtype
        step = est._block_step(dtype, X.shape[1])
        assert all(edge % step == 0 for edge in np.cumsum(lazy.chunks[0])[:-1])
        np.testing.assert_array_equal(lazy.compute(), expected)


def test_chunkings_agree_and_a_feature_chunked_array_is_rejoined_with_a_warning(rows, client):
    X = rows[0]
    est = RandomFourierFeatures(n_components=200, random_state=0).fit(X)
    expected = est.transform(X)
    for chunks in [(1100, -1), (7, -1), (333, -1), ((1, 500, 99, 500), -1)]:
        np.testing.assert_array_equal(est.transform(da.from_array(X, chunks=chunks)).compute(), expected)
    with pytest.warns(kdask.FeatureChunksWarning, match="chunked along its 6 features"):
        lazy = est.transform(da.from_array(X, chunks=(500, 3)))
    np.testing.assert_array_equal(lazy.compute(), expected)


def test_the_fitted_map_is_one_node_of_the_graph(rows):
    X = rows[0]
    est = RandomFourierFeatures(n_components=4096, random_state=0).fit(X)
    map_bytes = len(pickle.dumps(est))
    lazy = est.transform(da.from_array(X, chunks=(10, -1)))  # 110 tasks
    graph = dict(lazy.__dask_graph__())
    task_bytes = [len(pickle.dumps(task)) for task in graph.values()]
    # one task holds the map; the other 220 (110 slices of X, 110 transforms) refer to it by key
    assert sum(size > map_bytes // 2 for size in task_bytes) == 1
    assert sum(task_bytes) < 1.5 * map_bytes


def test_bad_dask_input_gets_a_clear_error(rows, client):
    X = rows[0]
    est = RandomFourierFeatures(n_components=16, random_state=0).fit(X)
    with pytest.raises(ValueError, match="2-D"):
        est.transform(da.from_array(X[:, 0], chunks=100))
    with pytest.raises(ValueError, match="has 5 features"):
        est.transform(da.from_array(X[:, :5], chunks=(100, -1)))
    with pytest.raises(TypeError, match="numeric"):
        est.transform(da.from_array(X.astype(str), chunks=(100, -1)))
    with pytest.raises(NotFittedError):
        RandomFourierFeatures().transform(da.from_array(X, chunks=(100, -1)))
    bad = X.copy()
    bad[1050, 2] = np.nan
    lazy = est.transform(da.from_array(bad, chunks=(100, -1)))  # found when the chunk runs
    with pytest.raises(ValueError, match="NaN"):
        lazy.compute()
    with pytest.raises(TypeError, match="works in memory and got a Dask collection"):
        kernelmaps.KernelSVC().fit(da.from_array(X, chunks=(100, -1)), rows[1])


def test_unknown_chunk_sizes_get_the_fix_in_the_message(rows):
    X, labels = rows
    lazy = da.from_array(X, chunks=(100, -1))
    filtered = lazy[lazy[:, 0] > 0]  # boolean indexing: NaN row-chunk sizes
    fitted = RandomFourierFeatures(n_components=16, random_state=0).fit(X)
    calls = {
        "fit": lambda: RandomFourierFeatures(n_components=16, random_state=0).fit(filtered),
        "transform": lambda: fitted.transform(filtered),
        "fit_learner": lambda: kdask.fit_learner(LeastSquaresRegressor(), filtered, filtered[:, 1],
                                                 feature_map=fitted),
    }
    for what, call in calls.items():
        with pytest.raises(ValueError, match=r"X has unknown chunk sizes.*X.compute_chunk_sizes\(\)"):
            call()
    with pytest.raises(ValueError, match=r"y has unknown chunk sizes.*y.compute_chunk_sizes\(\)"):
        kdask.fit_learner(LeastSquaresRegressor(), lazy, lazy[lazy[:, 0] > 0, 1], feature_map=fitted)
    known = filtered.compute_chunk_sizes()  # the fix the message names works
    np.testing.assert_array_equal(fitted.transform(known).compute(), fitted.transform(X[X[:, 0] > 0]))


# ----------------------------------------------------------------- fit on a sample


@pytest.mark.parametrize("gamma", ["scale", "median", "knn50"])
def test_bandwidth_heuristics_read_a_seeded_sample(gamma, rows):
    X = da.from_array(rows[0], chunks=(128, -1))
    on_dask = kdask.fit(RandomFourierFeatures(n_components=64, gamma=gamma, random_state=3), X, n_rows=400)
    sample = kdask.sample_rows(X, 400, random_state=3)
    assert sample.shape == (400, 6)
    in_memory = RandomFourierFeatures(n_components=64, gamma=gamma, random_state=3).fit(sample)
    assert on_dask.gamma_ == in_memory.gamma_
    np.testing.assert_array_equal(on_dask.transform(rows[0]), in_memory.transform(rows[0]))
    # below the bound the sample is every row: the map fitted in memory on all of X
    whole = RandomFourierFeatures(n_components=64, gamma=gamma, random_state=3).fit(X)
    assert whole.gamma_ == RandomFourierFeatures(n_components=64, gamma=gamma, random_state=3).fit(rows[0]).gamma_


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans"])
def test_nystroem_landmarks_come_from_the_sample(landmarks, rows):
    X = da.from_array(rows[0], chunks=(128, -1))
    on_dask = kdask.fit(Nystroem(n_components=40, landmarks=landmarks, random_state=1), X, n_rows=500)
    in_memory = Nystroem(n_components=40, landmarks=landmarks, random_state=1).fit(
        kdask.sample_rows(X, 500, random_state=1))
    np.testing.assert_array_equal(on_dask.transform(rows[0]), in_memory.transform(rows[0]))


def test_a_learned_map_fits_on_a_sample_of_rows_and_labels(rows):
    X, labels = da.from_array(rows[0], chunks=(200, -1)), da.from_array(rows[1], chunks=200)
    cnm = make("cnm", objective="classification")
    on_dask = kdask.fit(clone(cnm), X, labels, n_rows=300)
    sample_X, sample_y = kdask.sample_rows(X, 300, random_state=cnm.random_state, y=labels)
    np.testing.assert_array_equal(on_dask.transform(rows[0]), clone(cnm).fit(sample_X, sample_y).transform(rows[0]))


# ----------------------------------------------------------------- one-pass learners


def _learners():
    return [LeastSquaresClassifier(alpha=0.5), ECOCClassifier(code_size=12, alpha=0.5, random_state=0),
            LeastSquaresRegressor(alpha=0.5)]


def _targets(learner, rows):
    X, labels = rows
    return labels if is_classifier(learner) else np.c_[X[:, 0] ** 2, np.sin(X[:, 1])]


@pytest.mark.parametrize("learner", _learners(), ids=lambda est: type(est).__name__)
def test_one_pass_learners_on_a_cluster_equal_the_in_memory_fit(learner, rows, client):
    X, _ = rows
    y = _targets(learner, rows)
    rff = RandomFourierFeatures(n_components=96, gamma=0.2, random_state=0).fit(X)
    Z = rff.transform(X)
    expected = clone(learner).fit(Z, y)
    for chunks in (1100, 128, 333):
        Xd = da.from_array(X, chunks=(chunks, -1))
        yd = da.from_array(y, chunks=(chunks,) + y.shape[1:])
        on_features = clone(learner).fit(rff.transform(Xd), yd)
        on_inputs = clone(learner).fit(Xd, yd, feature_map=rff)
        for fitted in (on_features, on_inputs):
            assert relative_error(fitted.coef_, expected.coef_) < RTOL
            assert relative_error(fitted.intercept_, expected.intercept_) < RTOL
    predicted = on_inputs.predict(rff.transform(Xd))
    assert isinstance(predicted, da.Array)
    if is_classifier(learner):
        np.testing.assert_array_equal(predicted.compute(), expected.predict(Z))
    else:
        np.testing.assert_allclose(predicted.compute(), expected.predict(Z), rtol=1e-8, atol=1e-10)
    if hasattr(learner, "decision_function"):
        scores = on_inputs.decision_function(rff.transform(Xd))
        assert isinstance(scores, da.Array)
        np.testing.assert_allclose(scores.compute(), expected.decision_function(Z), rtol=1e-8, atol=1e-10)


def test_inputs_plus_a_map_in_memory_equal_the_features(rows):
    X, labels = rows
    rff = RandomFourierFeatures(n_components=64, random_state=0).fit(X)
    fused = LeastSquaresClassifier().fit(X, labels, feature_map=rff)
    expected = LeastSquaresClassifier().fit(rff.transform(X), labels)
    assert relative_error(fused.coef_, expected.coef_) < RTOL
    assert fused.n_features_in_ == 64
    with pytest.raises(NotFittedError, match="feature_map"):
        LeastSquaresClassifier().fit(X, labels, feature_map=RandomFourierFeatures())


def test_partial_fits_merge_into_the_fit_of_all_rows(rows, client):
    X, labels = rows
    Z = RandomFourierFeatures(n_components=48, random_state=0).fit_transform(X)
    expected = ECOCClassifier(code_size=10, random_state=0).fit(Z, labels)
    classes = np.unique(labels)
    left = ECOCClassifier(code_size=10, random_state=0).partial_fit(Z[:400], labels[:400], classes=classes)
    right = ECOCClassifier(code_size=10, random_state=0).partial_fit(
        da.from_array(Z[400:], chunks=(200, -1)), labels[400:], classes=classes)
    merged = left.merge(right)
    assert relative_error(merged.coef_, expected.coef_) < RTOL
    assert merged.normal_equations_.n_samples == 1100
    with pytest.raises(ValueError, match="different code_"):
        left.merge(ECOCClassifier(code_size=10, random_state=1).partial_fit(Z, labels, classes=classes))
    with pytest.raises(ValueError, match="cannot merge normal equations"):
        NormalEquations(3, 1).merge(NormalEquations(4, 1))


def test_a_killed_worker_is_survived(client):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((4000, 5))
    y = X[:, 0] - X[:, 1] ** 2
    rff = RandomFourierFeatures(n_components=64, random_state=0).fit(X)
    expected = LeastSquaresRegressor(alpha=0.1).fit(rff.transform(X), y)

    def slowly(block):
        time.sleep(0.2)
        return block

    Xd = da.from_array(X, chunks=(100, -1)).map_blocks(slowly, dtype=X.dtype)  # 40 chunks, about 4 s
    pids = client.run(os.getpid)
    victim = next(iter(pids.values()))
    result = {}

    def fit():
        result["learner"] = LeastSquaresRegressor(alpha=0.1).fit(Xd, y, feature_map=rff)

    import threading

    worker = threading.Thread(target=fit)
    worker.start()
    time.sleep(1.5)  # some chunks done, others running or waiting
    os.kill(victim, signal.SIGKILL)
    worker.join(timeout=120)
    assert not worker.is_alive()
    assert victim not in client.run(os.getpid).values()  # the nanny started a new worker
    assert relative_error(result["learner"].coef_, expected.coef_) < RTOL


def test_dask_config_schedulers_give_the_same_answers(rows):
    """Without a cluster (Dask's local threads), the results are the same."""
    X, labels = rows
    rff = RandomFourierFeatures(n_components=32, random_state=0).fit(X)
    with dask.config.set(scheduler="threads"):
        Z = rff.transform(da.from_array(X, chunks=(100, -1))).compute()
        fitted = LeastSquaresClassifier().fit(da.from_array(X, chunks=(100, -1)), labels, feature_map=rff)
    np.testing.assert_array_equal(Z, rff.transform(X))
    assert relative_error(fitted.coef_, LeastSquaresClassifier().fit(Z, labels).coef_) < RTOL
