"""The shared row-block thread pool: reuse, nesting, errors and fork safety."""

import os
import threading

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures
from kernelmaps._core.parallel import run_row_blocks


def test_blocks_cover_every_row_once():
    seen = np.zeros(1000, dtype=int)
    lock = threading.Lock()

    def work(start, stop):
        with lock:
            seen[start:stop] += 1

    run_row_blocks(1000, 37, work)
    assert (seen == 1).all()


def test_the_pool_is_kept_between_calls():
    from kernelmaps._core.parallel import n_worker_threads

    names = set()

    def work(start, stop):
        names.add(threading.current_thread().name)

    for _ in range(5):
        run_row_blocks(64, 8, work)
    # a pool per call would bring new threads (new names) every time
    assert len(names) <= n_worker_threads()


def test_a_call_from_inside_a_block_runs_serially_without_deadlock():
    inner = []

    def inner_work(start, stop):
        inner.append((start, stop))

    def work(start, stop):
        run_row_blocks(10, 2, inner_work)

    run_row_blocks(8, 1, work)  # more blocks than workers, each waiting on its own
    assert len(inner) == 8 * 5


def test_an_error_in_a_block_reaches_the_caller_after_every_block_stopped():
    running = []

    def work(start, stop):
        running.append(start)
        if start == 3:
            raise RuntimeError("block 3 failed")

    with pytest.raises(RuntimeError, match="block 3 failed"):
        run_row_blocks(16, 1, work)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_transforms_with_a_pool_of_its_own():
    X = np.random.default_rng(0).standard_normal((3000, 8))
    rff = RandomFourierFeatures(256, gamma=0.1, random_state=0).fit(X)
    expected = rff.transform(X)  # the parent's pool now has live threads
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        try:
            ok = np.array_equal(rff.transform(X), expected)
            os.write(write, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    assert answer == b"1"
