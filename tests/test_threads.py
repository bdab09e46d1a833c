"""threadpoolctl limits the threads of kernelmaps' row blocks, for the thread that sets it."""

import threading

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import kernelmaps  # noqa: F401  (registers the controller)
from kernelmaps import RandomFourierFeatures
from kernelmaps._core import parallel


def _threads_used(n_rows=4096, step=16):
    """The distinct threads that ran row blocks of one call."""
    seen = set()
    lock = threading.Lock()

    def work(start, stop):
        # long enough per block that a helper thread, if allowed, takes some
        np.linalg.svd(np.random.default_rng(start).standard_normal((40, 40)))
        with lock:
            seen.add(threading.get_ident())

    parallel.run_row_blocks(n_rows, step, work)
    return seen


def test_the_controller_is_listed():
    found = [info for info in threadpool_info() if info["internal_api"] == "numba"]
    assert len(found) == 1 and found[0]["user_api"] == "numba"
    assert found[0]["num_threads"] == numba.get_num_threads()


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two Numba threads")
def test_a_limit_of_one_runs_every_block_on_the_caller_and_is_restored():
    before = numba.get_num_threads()
    assert len(_threads_used()) > 1, "without a limit the helper threads take blocks"
    for limits in (1, {"numba": 1}):
        with threadpool_limits(limits=limits):
            assert numba.get_num_threads() == 1
            assert _threads_used() == {threading.get_ident()}
        assert numba.get_num_threads() == before


def test_a_blas_only_limit_leaves_our_threads_alone():
    before = numba.get_num_threads()
    with threadpool_limits(limits=1, user_api="blas"):
        assert numba.get_num_threads() == before


def test_a_limit_above_the_started_threads_is_capped_and_results_do_not_change():
    X = np.random.default_rng(0).standard_normal((3000, 8))
    rff = RandomFourierFeatures(256, gamma=0.5, random_state=0).fit(X)
    reference = rff.transform(X)
    with threadpool_limits(limits=numba.config.NUMBA_NUM_THREADS + 8):
        assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    with threadpool_limits(limits=1):
        np.testing.assert_array_equal(rff.transform(X), reference)


def _blas_thread_counts():
    return sorted({info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"})


@pytest.mark.parametrize("learner", ["ridge", "logistic"])
def test_the_nystroem_solvers_iterate_on_one_blas_thread_and_factor_on_all(monkeypatch, learner):
    # a threaded m x m solve between two passes leaves BLAS workers spinning on the cores the next
    # pass needs: the iterations run single-threaded, the O(m^3) factorizations on BLAS's threads
    from kernelmaps import NystroemKernelRidge, NystroemLogisticRegression
    from kernelmaps._solvers import conjugate_gradient as cg_module, falkon, logistic_factors, logistic_newton

    seen = {"iterations": set(), "factors": set()}
    original_cg, original_factor = cg_module.conjugate_gradient, falkon.ridge_cholesky

    def counting_cg(*args, **kwargs):
        seen["iterations"].update(_blas_thread_counts())
        return original_cg(*args, **kwargs)

    def counting_factor(*args, **kwargs):
        seen["factors"].update(_blas_thread_counts())
        return original_factor(*args, **kwargs)

    monkeypatch.setattr(falkon if learner == "ridge" else logistic_newton, "conjugate_gradient", counting_cg)
    monkeypatch.setattr(falkon if learner == "ridge" else logistic_factors, "ridge_cholesky", counting_factor)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((600, 4))
    before = _blas_thread_counts()
    with threadpool_limits(limits=2, user_api="blas"):
        if learner == "ridge":
            NystroemKernelRidge(40, alpha=1e-2, random_state=0).fit(X, X[:, 0])
        else:
            NystroemLogisticRegression(40, alpha=1e-2, random_state=0).fit(X, X[:, 0] > 0)
        threaded = _blas_thread_counts()
    assert seen["iterations"] == {1}
    assert seen["factors"] == set(threaded)
    assert _blas_thread_counts() == before
