"""The Nyström kernel ridge machines on row-chunked Dask arrays (``pip install 'kernelmaps[dask]'``).

``NystroemKernelRidge.fit`` and ``NystroemKernelRidgeClassifier.fit`` route a Dask
``X`` here (:func:`fit`):

* the centres and the bandwidth heuristic read a bounded, seeded sample of the
  rows (:func:`kernelmaps.dask.sample_rows`, at least ``n_components`` rows);
* every conjugate-gradient iteration is one map-reduce over the row chunks
  (:class:`DaskKernelOperator`): each chunk's task runs the in-memory
  :class:`~kernelmaps._solvers.kernel_operator.KernelOperator` pass on its rows,
  single-threaded, and a tree of merges adds the ``m x k`` partials as
  compensated sums, so that the result is the in-memory pass's whatever the
  chunking;
* when ``kernel_cache`` allows (:func:`plan_kept_blocks`), each chunk's operator
  is persisted on its worker with its kernel blocks, so that every pass after the
  first reads them instead of evaluating the kernel;
* the ``m x m`` work (the centres' Gram matrix, the preconditioner's Cholesky
  factors, the triangular solves) runs on the client, as in memory.

With an active ``dask.distributed.Client`` the passes run on its cluster. The
fitted estimator is an ordinary in-memory one; its ``predict`` on a Dask array is
lazy (:func:`kernelmaps.dask.predict_lazily`).
"""

import contextlib
import numbers

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.sizeof import sizeof
except ImportError as error:  # pragma: no cover - exercised by the no-dask test in a subprocess
    raise ImportError("fitting the Nyström kernel machines on Dask arrays needs the optional 'dask' extra: "
                      "pip install 'kernelmaps[dask]'") from error

from sklearn.base import is_classifier
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets

from .._core.base import one_vs_rest_code
from .._core.validation import MEMORY_FRACTION, clear_fitted_state, format_bytes, is_dask_array
from .._numba.fastmath_arrays import all_finite
from .._solvers.kernel_operator import KernelOperator
from ..dask import FIT_SAMPLE_ROWS, TREE_FAN_IN, sample_rows
from .dask_support import (Homes, align_rows, as_targets, check_chunk, check_rows, graph_node, known_rows, serial,
                           tree_sum, worker_memory)
from .nystroem import AUTO_CACHE_FRACTION, kernel_cache_budget


@sizeof.register(KernelOperator)
def _operator_bytes(operator):
    # The scheduler weighs moving a task's inputs against running the task where they
    # are: a chunk's operator is its rows and its kept blocks, which must not be copied
    # to another worker for every pass.
    return int(operator.X.nbytes + (0 if operator.kept is None else operator.kept.nbytes))


def _chunk_operator(block, start, centres, params, keep_blocks):
    """One chunk's :class:`KernelOperator`, after checking the chunk is finite (once per
    pass, or once per fit when the operator, with its kept blocks, stays on its worker)."""
    check_chunk(block, start)
    return KernelOperator(block, centres, keep_blocks=keep_blocks, **params)


def _chunk_pass(operator, start, targets, V):
    """One chunk's ``K^T (K V + W)`` (the map step)."""
    if targets is not None:
        check_chunk(operator.X, start, targets)
    with serial():
        W = None if targets is None else np.asarray(targets, dtype=np.float64).reshape(operator.shape[0], -1)
        return operator.normal_matvec(V, W, compensated=True)


class DaskKernelOperator:
    """``K(X, C)`` of a row-chunked Dask array, shape ``(n, m)``: one map-reduce per product.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
        Chunked along rows only, float32 or float64.
    centres : ndarray of shape (m, d)
    kernel_params : dict
        ``kernel``, ``gamma``, ``degree``, ``coef0``.
    keep_blocks : bool, default=False
        Keep each chunk's kernel blocks on the worker that holds the chunk: the
        chunks' operators are persisted (``dask.persist``), the first pass fills
        their blocks and every later pass reads them, as the in-memory operator's
        ``keep_blocks`` does. Without it each task evaluates its chunk's blocks.

    Attributes
    ----------
    operators : list of dask.delayed.Delayed
        Each chunk's :class:`KernelOperator`, in row order (persisted with
        ``keep_blocks``).
    """

    dtype = np.dtype(np.float64)

    def __init__(self, X, centres, kernel_params, keep_blocks=False):
        self.X = X
        self.shape = (X.shape[0], centres.shape[0])
        #: the dtype of each chunk's kernel blocks (see KernelOperator)
        self.block_dtype = np.dtype(np.float32 if X.dtype == np.float32 else np.float64)
        self.centres_node = graph_node(np.ascontiguousarray(centres, dtype=np.float64), "kernelmaps-centres")
        self.params = dict(kernel_params)
        self.starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int)
        self.operators = [dask.delayed(_chunk_operator, pure=True)(block, int(start), self.centres_node,
                                                                   self.params, keep_blocks)
                          for block, start in zip(X.to_delayed().ravel(), self.starts)]
        #: where each persisted operator is (pass tasks run there, never copying one)
        self.homes = None
        if keep_blocks:
            self.operators = list(dask.persist(*self.operators))
            self.homes = Homes(self.operators)

    def map_chunks(self, task, *per_chunk, shared=()):
        """``task(operator, *chunk_args, *shared)`` for every chunk, one ``Delayed`` each.

        With kept blocks on a cluster, each task is restricted to the worker that holds
        its chunk's operator.
        """
        pins = self.homes.pinned() if self.homes is not None else [contextlib.nullcontext()] * len(self.operators)
        parts = []
        for operator, pin, *args in zip(self.operators, pins, *per_chunk):
            with pin:
                parts.append(dask.delayed(task, pure=True)(operator, *args, *shared))
        return parts

    def normal_matvec(self, V, W=None):
        """``K^T (K V + W)`` (``V=None``: ``K^T W``) as one map-reduce over the chunks.

        Parameters
        ----------
        V : ndarray of shape (m, k) or None
        W : dask.array.Array of shape (n, k) or None
            Row-chunked as ``X``.

        Returns
        -------
        ndarray of shape (m, k)
        """
        if V is None and W is None:
            raise ValueError("normal_matvec needs V, W or both")
        if W is not None:
            W = W.reshape(self.shape[0], -1).rechunk({0: self.X.chunks[0], 1: -1})
            targets = W.to_delayed().ravel()
        else:
            targets = [None] * len(self.operators)
        V_node = None if V is None else graph_node(np.ascontiguousarray(V, dtype=np.float64), "kernelmaps-v")
        parts = self.map_chunks(_chunk_pass, [int(start) for start in self.starts], targets, shared=(V_node,))
        # compensated sums: merged in any order, they give the in-memory pass's result
        return tree_sum(parts, TREE_FAN_IN).compute().result()


def plan_kept_blocks(estimator, X, m):
    """Whether the chunks' kernel blocks are kept on the workers; sets ``kernel_cache_``.

    Kept when the blocks, spread evenly over the workers plus the largest chunk's
    (the scheduler need not balance them), fit each worker's budget: ``'auto'`` takes
    ``AUTO_CACHE_FRACTION * MEMORY_FRACTION`` of the worker's room
    (:func:`~kernelmaps._machines.dask_support.worker_memory`), a number is a budget
    per worker (refused when a worker has not that much room). Without a distributed
    client the blocks stay in this process, under the in-memory budget.
    """
    sizes = [KernelOperator.kept_bytes(int(rows), m, X.dtype) for rows in X.chunks[0]]
    room = worker_memory()
    if room is None:
        budget, share = kernel_cache_budget(estimator.kernel_cache), sum(sizes)
    else:
        if isinstance(estimator.kernel_cache, numbers.Real) and estimator.kernel_cache > min(room):
            raise ValueError(
                f"kernel_cache={float(estimator.kernel_cache):.4g} bytes per Dask worker is more than the "
                f"{format_bytes(min(room))} a worker can still take; give a smaller budget, 'auto' or None")
        budget = (AUTO_CACHE_FRACTION * MEMORY_FRACTION * min(room) if estimator.kernel_cache == "auto"
                  else kernel_cache_budget(estimator.kernel_cache))
        share = sum(sizes) / len(room) + max(sizes)
    keep = estimator.kernel_cache is not None and share <= budget
    estimator.kernel_cache_ = sum(sizes) if keep else 0
    return keep


def _classifier_targets(estimator, y):
    """``classes_`` from one read of ``y``, and the lazy ±1 one-vs-rest code of every row."""
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D class labels, got shape {y.shape}")
    classes = np.unique(np.asarray(da.unique(y).compute()))
    check_classification_targets(classes)
    if len(classes) < 2:
        raise ValueError(f"need at least 2 classes, got {len(classes)} class")
    estimator.classes_ = classes
    code = one_vs_rest_code(len(classes))
    return y.map_blocks(lambda labels: code[np.searchsorted(classes, labels)], dtype=np.float64, new_axis=1,
                        chunks=(y.chunks[0], (code.shape[1],)))


def fit(estimator, X, y):
    """Fit ``NystroemKernelRidge`` or its classifier on a row-chunked Dask array ``X``.

    Parameters
    ----------
    estimator : NystroemKernelRidge or NystroemKernelRidgeClassifier
    X : dask.array.Array of shape (n_samples, n_features)
    y : dask.array.Array or array-like of shape (n_samples,) or (n_samples, n_targets)

    Returns
    -------
    estimator
    """
    if not is_dask_array(X):
        raise TypeError(f"{type(estimator).__name__} got a Dask y but an in-memory X: give X as a "
                        "dask.array (dask.array.from_array(X, chunks=...)) with y's row chunks")
    if X.ndim == 2 and len(X.chunks[1]) > 1:
        # a transform rejoins the feature chunks once; a fit would rejoin them on every pass
        raise ValueError(f"X is chunked along its {X.shape[1]} features ({len(X.chunks[1])} chunks); the fit "
                         "reads whole rows on every iteration: rechunk it once, X = X.rechunk({1: -1}), and "
                         "persist it if it fits in the cluster's memory")
    X = known_rows(check_rows(X))
    n = X.shape[0]
    if n == 0:
        raise ValueError("X has no rows")
    X = X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)
    if len(y) != n:
        raise ValueError(f"X has {n} rows but y has {len(y)}")
    clear_fitted_state(estimator)
    estimator._check_params(X.shape[1])
    if estimator.early_stopping:
        raise ValueError(f"{type(estimator).__name__} does not stop early on Dask input (holding out rows "
                         "would need a second pass per iteration); set early_stopping=False")
    rng = check_random_state(estimator.random_state)
    take = min(n, max(FIT_SAMPLE_ROWS, estimator._requested_centres()))
    # the rows drawn here, not inside sample_rows, so that the centres' row indices are X's
    rows = np.arange(n) if take == n else np.sort(rng.choice(n, take, replace=False))
    sample = sample_rows(X if take == n else X[rows], take)
    if not all_finite(sample):
        raise ValueError("X contains NaN or infinity (in the sample of rows the centres are drawn from)")
    estimator._set_kernel_and_centres(sample, rng, n_rows=n)
    if estimator.component_indices_ is not None:
        estimator.component_indices_ = rows[estimator.component_indices_]
    estimator.n_features_in_ = X.shape[1]
    # chunks on multiples of the operator's row block: every block, and so every
    # partial product, is the in-memory pass's own
    X = align_rows(X, KernelOperator.rows_per_block(estimator.components_.shape[0], X.shape[1],
                                                    X.dtype.itemsize))
    y = as_targets(y, X.chunks[0], n)
    if is_classifier(estimator):
        targets = _classifier_targets(estimator, y)
    else:
        if np.dtype(y.dtype).kind not in "biuf":
            raise ValueError(f"y must be numeric for {type(estimator).__name__}, got dtype {y.dtype}")
        targets = y.astype(np.float64)
    keep = plan_kept_blocks(estimator, X, estimator.components_.shape[0])
    operator = DaskKernelOperator(X, estimator.components_, estimator._kernel_params(), keep_blocks=keep)
    estimator.solve_on(operator, targets)
    return estimator
