"""Row-block parallelism shared by transforms and Gram matrices."""

import contextlib
import math
import threading

import numpy as np


_BLAS_CONTROLLER = None
# One process-wide, reference-counted BLAS limit. threadpoolctl's limits are
# process-wide too: with one context per caller, two overlapping transforms on
# two threads restore the limits out of order, and the second to finish restores
# the first one's "1" for good. Here the first caller in sets the limit and the
# last one out restores what was there before.
_BLAS_LOCK = threading.Lock()
_BLAS_USERS = 0
_BLAS_LIMITER = None


def _blas_controller():
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER


@contextlib.contextmanager
def blas_single_thread():
    """Context manager limiting BLAS to one thread (for loops of small products).

    Safe under concurrency: nested or overlapping uses from any threads share
    one limit, and the BLAS thread count before the first one is restored when
    the last one exits. While any use is active, BLAS is single-threaded for the
    whole process (the setting is process-wide in every BLAS library).
    """
    global _BLAS_USERS, _BLAS_LIMITER
    with _BLAS_LOCK:
        if _BLAS_USERS == 0:
            _BLAS_LIMITER = _blas_controller().limit(limits=1, user_api="blas")
        _BLAS_USERS += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_USERS -= 1
            if _BLAS_USERS == 0:
                _BLAS_LIMITER.restore_original_limits()
                _BLAS_LIMITER = None


#: Target size of one row block's output, in bytes: small enough that a block's
#: BLAS product is still in cache (L2/L3) for its Numba epilogue.
BLOCK_BYTES = 4 * 2**20
#: Hard cap of a block's size: peak memory is the output plus at most this much
#: scratch per worker thread.
MAX_BLOCK_BYTES = 32 * 2**20
#: Fewest rows per block (unless a row alone exceeds the cap): a product of a few
#: rows degenerates into matrix-vector products, far slower per element.
MIN_BLOCK_ROWS = 16


def block_rows(n_bytes_per_row, n_features=0):
    """Rows per block: the one rule of transforms, Gram matrices and accumulations.

    About :data:`BLOCK_BYTES` of output, at least :data:`MIN_BLOCK_ROWS`, and at
    least ``n_features / 2`` rows: every block streams the whole projection (or
    Gram) matrix through the cache, so wide inputs need taller blocks to amortize
    it (measured at d = 784, D = 4096: 32-row blocks ran at half the speed of
    512-row ones). Never more than :data:`MAX_BLOCK_BYTES`.

    Parameters
    ----------
    n_bytes_per_row : int
        Bytes one row of the block occupies (output plus scratch).
    n_features : int, default=0
        Width of the matrix every block multiplies with.

    Returns
    -------
    int
    """
    n_bytes_per_row = max(1, n_bytes_per_row)
    rows = max(MIN_BLOCK_ROWS, BLOCK_BYTES // n_bytes_per_row, n_features // 2)
    return int(max(1, min(rows, MAX_BLOCK_BYTES // n_bytes_per_row)))


def n_worker_threads():
    """Worker threads for row blocks: Numba's thread count (``NUMBA_NUM_THREADS``)."""
    import numba

    return max(1, numba.get_num_threads())


def run_row_blocks(n_rows, step, work):
    """Call ``work(start, stop)`` for consecutive row blocks on a thread pool.

    Each block runs BLAS single-threaded followed by serial ``nogil`` Numba code on
    one worker, so a block's product is still in cache for its epilogue and the
    BLAS and Numba thread pools never compete for the cores (with 2 cores,
    interleaving a threaded GEMM and a ``prange`` epilogue per block was measured
    3-9x slower). Because every block is computed the same way whatever the
    number of workers, results are bit-identical for any thread count.
    """
    blocks = [(start, min(n_rows, start + step)) for start in range(0, n_rows, step)]
    n_threads = min(n_worker_threads(), len(blocks))
    with blas_single_thread():
        if n_threads <= 1:
            for start, stop in blocks:
                work(start, stop)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            for future in [pool.submit(work, start, stop) for start, stop in blocks]:
                future.result()


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

    def get(self, key, shape, dtype):
        """A C-contiguous ``shape`` array of ``dtype`` (contents undefined)."""
        size = math.prod(shape)
        buf = getattr(self._local, key, None)
        if buf is None or buf.size < size or buf.dtype != dtype:
            buf = np.empty(size, dtype=dtype)
            setattr(self._local, key, buf)
        return buf[:size].reshape(shape)
