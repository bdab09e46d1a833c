"""Row-block parallelism shared by transforms and Gram matrices."""

import contextlib
import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np


_BLAS_LIBRARIES = None
# One process-wide, reference-counted BLAS limit. BLAS thread counts are
# process-wide: with one limit per caller, two overlapping transforms on two
# threads restore the counts out of order, and the second to finish restores the
# first one's "1" for good. Here the first caller in sets the limit and the last
# one out restores what was there before.
_BLAS_LOCK = threading.Lock()
_BLAS_USERS = 0
_BLAS_SAVED = None


def _blas_libraries():
    """threadpoolctl's controllers of the BLAS libraries loaded (found once)."""
    global _BLAS_LIBRARIES
    if _BLAS_LIBRARIES is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_LIBRARIES = ThreadpoolController().select(user_api="blas").lib_controllers
    return _BLAS_LIBRARIES


@contextlib.contextmanager
def blas_single_thread():
    """Context manager limiting BLAS to one thread (for loops of small products).

    The iterations of the Nyström solvers run inside it too, all but their
    ``O(m^3)`` factorizations. After a threaded call, OpenBLAS's workers spin for
    about 0.1 s before they sleep, and NumPy and SciPy each load their own
    OpenBLAS (Numba's ``np.dot`` calls SciPy's). So a threaded ``m x m`` product
    or triangular solve between two passes leaves a worker spinning on one of the
    cores the next pass's row blocks need, or the other library's threads need.
    On 2 cores (AMD EPYC, Zen 3), a 2000-order ``lauum`` took 0.05 s alone and
    0.12 s right after a NumPy matrix-vector product.

    Safe under concurrency: nested or overlapping uses from any threads share
    one limit, and the BLAS thread count before the first one is restored when
    the last one exits. While any use is active, BLAS is single-threaded for the
    whole process (the setting is process-wide in every BLAS library). It talks
    to the libraries' own controllers directly: a ``threadpoolctl`` limit per
    call re-reads every library, tens of microseconds that showed on small
    transforms.
    """
    global _BLAS_USERS, _BLAS_SAVED
    with _BLAS_LOCK:
        if _BLAS_USERS == 0:
            libraries = _blas_libraries()
            _BLAS_SAVED = [library.num_threads for library in libraries]
            for library, count in zip(libraries, _BLAS_SAVED):
                if count != 1:
                    library.set_num_threads(1)
        _BLAS_USERS += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_USERS -= 1
            if _BLAS_USERS == 0:
                for library, count in zip(_blas_libraries(), _BLAS_SAVED):
                    if count != 1:
                        library.set_num_threads(count)
                _BLAS_SAVED = None


#: Rows a block needs for its BLAS product to run at full speed. OpenBLAS packs
#: the whole right-hand matrix (the projection) again on every call, so a block
#: of R rows pays that copy once per R rows of products. Measured on the RFF
#: transform (N = 20000, d = 64, D = 4096, 2 threads, AMD EPYC znver3): blocks
#: of 1, 2, 4, 8 and 16 MiB (32 to 512 rows in float64) ran at 2.08, 1.51, 1.34,
#: 1.26 and 1.24 times the bare product. Blocks small enough to stay in L2 for
#: the epilogue lose more to that packing than they gain in cache.
PRODUCT_ROWS = 256
#: Smallest block, in bytes: below it the per-block costs (a Python call, a BLAS
#: and a Numba dispatch, some microseconds) would show on narrow outputs.
MIN_BLOCK_BYTES = 256 * 2**10
#: Hard cap of a block's size: peak memory is the output plus at most this much
#: scratch per worker thread.
MAX_BLOCK_BYTES = 32 * 2**20


def block_rows(n_bytes_per_row):
    """Rows per block: the one rule of transforms, Gram matrices and accumulations.

    :data:`PRODUCT_ROWS` rows, more when a row is so narrow that the block
    would be smaller than :data:`MIN_BLOCK_BYTES`, never more than
    :data:`MAX_BLOCK_BYTES`. Wide inputs need no taller blocks: the projection
    repacked per call costs ``d D`` against the block's ``R d D`` products,
    whatever ``d`` (at d = 784, D = 4096, N = 2500, blocks of 256 rows ran at
    0.66x (float32) and 0.84x (float64) the time of the 392-row blocks an
    earlier ``d / 2`` rule gave, which left one thread a block more than the
    other). The rule depends on the row's size only, never on the number of
    rows or threads, so every row is computed in the same block whatever the
    data's length, chunking or thread count.

    Parameters
    ----------
    n_bytes_per_row : int
        Bytes one row of the block occupies (output plus scratch).

    Returns
    -------
    int
    """
    n_bytes_per_row = max(1, n_bytes_per_row)
    rows = max(PRODUCT_ROWS, MIN_BLOCK_BYTES // n_bytes_per_row)
    return int(max(1, min(rows, MAX_BLOCK_BYTES // n_bytes_per_row)))


def n_worker_threads():
    """Worker threads for row blocks: Numba's thread count (``NUMBA_NUM_THREADS``)."""
    import numba

    return max(1, numba.get_num_threads())


# One pool of helper threads for every call, kept between calls: starting threads
# for each transform is a fixed cost that decided small transforms (D = 256 on a
# few thousand rows). It is resized when Numba's thread count changes; the caller
# is the other worker.
_POOL = None
_POOL_LOCK = threading.Lock()
_WORKER = threading.local()


def _mark_worker():
    _WORKER.active = True


def _worker_pool(n_threads):
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers != n_threads:
            previous, _POOL = _POOL, ThreadPoolExecutor(
                max_workers=n_threads, thread_name_prefix="kernelmaps-blocks", initializer=_mark_worker)
            if previous is not None:
                previous.shutdown(wait=False)
        return _POOL


def _after_fork_in_child():
    # a forked child has none of its parent's threads, and a lock held by one of
    # them at the fork would never be released
    global _POOL, _POOL_LOCK, _BLAS_LOCK, _BLAS_USERS, _BLAS_SAVED
    _POOL, _POOL_LOCK = None, threading.Lock()
    _BLAS_LOCK, _BLAS_USERS, _BLAS_SAVED = threading.Lock(), 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def run_row_blocks(n_rows, step, work):
    """Call ``work(start, stop)`` for consecutive row blocks on a thread pool.

    The calling thread works too, taking blocks from the same counter as the
    pool's threads (kept for the process: one pool, sized by Numba's thread
    count), so a small call finishes on the caller before a worker has woken
    up, and pays neither thread start-up nor hand-over. Each block runs BLAS
    single-threaded followed by serial ``nogil`` Numba code on one thread, so a
    block's product is still in cache for its epilogue and the BLAS and Numba
    thread pools never compete for the cores (with 2 cores, interleaving a
    threaded GEMM and a ``prange`` epilogue per block was measured 3-9x slower).
    Because every block is computed the same way whatever thread takes it,
    results are bit-identical for any thread count.
    """
    blocks = [(start, min(n_rows, start + step)) for start in range(0, n_rows, step)]
    n_workers = n_worker_threads()
    n_threads = min(n_workers, len(blocks))
    with blas_single_thread():
        # a call from inside a block (a map built on another map) runs serially
        if n_threads <= 1 or getattr(_WORKER, "active", False):
            for start, stop in blocks:
                work(start, stop)
            return
        next_block = itertools.count()  # next() is atomic under the GIL
        errors = []

        def drain():
            for index in next_block:
                if index >= len(blocks) or errors:
                    return
                try:
                    work(*blocks[index])
                except BaseException as error:
                    errors.append(error)
                    return

        pool = _worker_pool(n_workers - 1)
        helpers = [pool.submit(drain) for _ in range(n_threads - 1)]
        drain()
        for helper in helpers:
            # a helper that has not started has nothing left to do; one that
            # has is finishing its last block, which must end before we return
            if not helper.cancel():
                helper.result()
        if errors:
            raise errors[0]


class ThreadScratch:
    """Per-thread scratch buffers, reused by the row blocks of one transform call.

    A fresh multi-megabyte ``np.empty`` per block is served by ``mmap`` and pays a
    page fault per 4 KiB on first touch: measured as slow as the block's FFTs
    (Tensor Sketch) or its GEMM (Random Maclaurin). Created in
    ``_prepare_transform``, so the buffers live for one call and never on the
    estimator; each worker thread sees its own.
    """

    def __init__(self):
        self._local = threading.local()

    def __reduce__(self):
        # a copy sent to another process (a Dask worker) starts with no scratch of its own
        return (ThreadScratch, ())

    def get(self, key, shape, dtype, zeroed=False):
        """A C-contiguous ``shape`` array of ``dtype``: contents undefined, or with
        ``zeroed``, zero when first allocated and then as its user left it (a
        kernel that keeps its own record of what it wrote can then clear only that)."""
        size = math.prod(shape)
        buf = getattr(self._local, key, None)
        if buf is None or buf.size < size or buf.dtype != dtype:
            buf = (np.zeros if zeroed else np.empty)(size, dtype=dtype)
            setattr(self._local, key, buf)
        return buf[:size].reshape(shape)
