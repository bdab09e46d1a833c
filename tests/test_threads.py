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
