"""What the learners and maps on Dask arrays share (``pip install 'kernelmaps[dask]'``).

:mod:`kernelmaps.dask` (the feature maps and the one-pass learners) and
:mod:`kernelmaps._machines.dask_nystroem` (the Nyström kernel machines) both check a
row-chunked array, align its chunks to row blocks, turn targets into chunks of
the same rows, make a fitted object one node of the graph and run each task on
one thread. Only modules that need the ``dask`` extra import this one.
"""

import contextlib
import math
import warnings

import dask
import dask.array as da
import numba
import numpy as np
from dask.base import tokenize

from .._core.parallel import blas_single_thread
from .._numba.fastmath_arrays import all_finite
from .._core.validation import NON_NUMERIC_KINDS, available_memory_bytes, is_dask_array, user_stacklevel


def check_chunk(block, start, targets=None):
    """Raise ``ValueError`` naming the rows when a task's chunk of ``X`` (or of its
    targets) holds NaN or infinity: a map step reads each chunk before its products."""
    if not all_finite(block):
        raise ValueError(f"X contains NaN or infinity in rows {start}-{start + block.shape[0] - 1}")
    if targets is not None and not np.isfinite(targets).all():
        raise ValueError(f"y contains NaN or infinity in rows {start}-{start + block.shape[0] - 1}")


@contextlib.contextmanager
def serial():
    """One thread for Numba and BLAS inside a task: Dask runs the chunks in parallel.

    ``numba.set_num_threads`` is per thread, so concurrent tasks on one worker's
    threads do not disturb each other.
    """
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        with blas_single_thread():
            yield
    finally:
        numba.set_num_threads(previous)


def _distributed_client():
    """The active ``dask.distributed`` client, or ``None`` when graphs run in this process."""
    client = getattr(dask.base.get_scheduler(), "__self__", None)
    return client if client is not None and hasattr(client, "who_has") else None


def worker_memory():
    """The memory each worker of the active ``dask.distributed`` cluster can still take, in
    bytes, or ``None`` when the graphs run in this process (no distributed client).

    A worker's room is its memory limit less the memory its process holds now; a worker
    without a limit is given an equal share of this machine's available memory (the
    workers of a ``LocalCluster`` share it).
    """
    client = _distributed_client()
    if client is None:
        return None
    # asked of the scheduler directly: Client.scheduler_info returns the client's cached identity,
    # which the client's periodic refresh (distributed 2026.8 asks it for no workers) can overwrite
    # between the fetch and the read; a cluster of two workers then looked empty
    workers = list(client.sync(client.scheduler.identity)["workers"].values())
    if not workers:
        raise RuntimeError("the Dask cluster has no workers: start some before fitting")
    shared = available_memory_bytes() / len(workers)
    room = []
    for info in workers:
        limit = info.get("memory_limit") or 0
        used = (info.get("metrics") or {}).get("memory", 0) or 0
        room.append(max(0.0, float(limit - used)) if limit else shared)
    return room


class Homes:
    """Where each of a list of persisted ``Delayed`` objects is held on a distributed cluster.

    A task that reads a large persisted object (a chunk's operator with its kept
    kernel blocks) must run where the object is: the scheduler places it there, but
    work stealing may move it to an idle worker, which then fetches a copy, twice the
    memory for as long as both hold it. :meth:`pinned` restricts each such task to the
    workers that hold its object *now* (asked of the scheduler at each call, so that an
    object recomputed elsewhere after a worker was lost is followed, and a task whose
    object is held nowhere is left free rather than waiting for a worker that is gone).

    Parameters
    ----------
    persisted : list of dask.delayed.Delayed
        The results of ``dask.persist``. Without a distributed client there is nothing
        to pin and :meth:`pinned` does nothing.
    """

    def __init__(self, persisted):
        self.client = _distributed_client()
        self.count = len(persisted)
        self.futures = None
        if self.client is not None:
            from distributed import futures_of

            self.futures = [futures_of(item) for item in persisted]

    def pinned(self):
        """One context per object: ``dask.annotate`` that keeps a task made inside it on
        the object's workers (no annotation off a cluster or for an object held nowhere)."""
        if self.futures is None:
            return [contextlib.nullcontext() for _ in range(self.count)]
        from distributed import wait

        flat = [future for futures in self.futures for future in futures]
        wait(flat)
        holders = self.client.who_has(flat)
        contexts = []
        for futures in self.futures:
            workers = sorted({worker for future in futures for worker in holders.get(future.key, ())})
            contexts.append(dask.annotate(workers=workers, allow_other_workers=False) if workers
                            else contextlib.nullcontext())
        return contexts


def check_rows(X, name="X"):
    """A 2-D numeric Dask array chunked along rows only (rejoined with a warning otherwise)."""
    if not is_dask_array(X) or not hasattr(X, "chunks"):
        raise TypeError(f"{name} must be a dask.array.Array, got {type(X).__name__}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows, features), got a {X.ndim}-D Dask array of shape {X.shape}")
    kind = np.dtype(X.dtype).kind
    if kind in NON_NUMERIC_KINDS or kind not in "biuf":
        raise TypeError(f"{name} has dtype {X.dtype}: kernelmaps reads numeric features")
    if len(X.chunks[1]) > 1:
        # the warning is the public module's, which imports this one: read at call time
        from ..dask import FeatureChunksWarning

        warnings.warn(FeatureChunksWarning(
            f"{name} is chunked along its {X.shape[1]} features ({len(X.chunks[1])} chunks); every map "
            f"reads whole rows, so the chunks are rejoined ({name}.rechunk({{1: -1}})), which copies them. "
            "Chunk along rows only to avoid the copy."), stacklevel=user_stacklevel())
        X = X.rechunk({1: -1})
    return X


def known_rows(X, name="X"):
    """``X`` itself, refused with the fix when its row chunks have unknown sizes.

    Boolean indexing (``X[X[:, 0] > 0]``) leaves NaN chunk sizes. Learning them means
    computing every chunk of ``X``, a whole extra pass over data that may live out of
    core, so the user decides: ``compute_chunk_sizes()`` once, or persist first.
    """
    if any(math.isnan(size) for size in X.chunks[0]):
        raise ValueError(
            f"{name} has unknown chunk sizes along its rows (as after boolean indexing such as "
            f"{name}[{name}[:, 0] > 0]), and kernelmaps needs the row count here. Call "
            f"{name} = {name}.compute_chunk_sizes() first: it computes {name}'s chunks once to "
            f"count their rows (persist {name} before it to avoid computing them twice)")
    return X


def graph_node(obj, prefix):
    """``obj`` as one node of the graph, so that every task refers to it by key.

    Dask embeds a plain argument in every task, where the distributed scheduler
    pickles it once per task; a ``Delayed`` node is sent to each worker once.
    """
    return dask.delayed(obj, pure=True, name=f"{prefix}-{tokenize(obj)}")


def _merge(*parts):
    """One merge task: the first part with every other part merged into it."""
    total = parts[0]
    for part in parts[1:]:
        total.merge(part)
    return total


def tree_sum(parts, fan_in):
    """The reduce step of a map-reduce: a tree of merge tasks over ``parts``, one ``Delayed``.

    Each part has a ``merge(other)`` method that adds ``other`` into it in place
    (the normal equations' accumulators, the kernel passes' compensated sums);
    each task merges at most ``fan_in`` parts, so no task holds more than
    ``fan_in + 1`` of them and the tree has depth ``log_fan_in(len(parts))``.

    Parameters
    ----------
    parts : list of dask.delayed.Delayed
        At least one.
    fan_in : int
        Parts per merge task (at least 2).

    Returns
    -------
    dask.delayed.Delayed
        The sum of all parts.
    """
    while len(parts) > 1:
        parts = [dask.delayed(_merge, pure=True)(*parts[i:i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


def _aligned_chunks(row_chunks, step):
    """Row chunks whose boundaries are the nearest multiples of ``step`` (none lost)."""
    n = int(sum(row_chunks))
    bounds = {int(round(edge / step)) * step for edge in np.cumsum(row_chunks)[:-1]}
    edges = [0] + sorted(edge for edge in bounds if 0 < edge < n) + [n]
    return tuple(int(size) for size in np.diff(edges))


def align_rows(X, step):
    """``X`` rechunked, if needed, so that its chunks start on multiples of ``step``."""
    X = known_rows(X)
    chunks = _aligned_chunks(X.chunks[0], step)
    return X if chunks == tuple(X.chunks[0]) else X.rechunk({0: chunks})


def as_targets(y, row_chunks, n_rows):
    if is_dask_array(y):
        known_rows(y, "y")
    if len(y) != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {len(y)}")
    if is_dask_array(y):
        if y.ndim == 2 and len(y.chunks[1]) > 1:
            y = y.rechunk({1: -1})
        return y.rechunk({0: row_chunks})
    y = np.asarray(y)
    return da.from_array(y, chunks=(row_chunks,) + y.shape[1:])
