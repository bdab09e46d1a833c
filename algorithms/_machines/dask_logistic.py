"""The passes of the Nyström logistic machine over a row-chunked Dask array.

:func:`kernelmaps._solvers.logistic_newton.nystroem_logistic_newton` reads the
rows only through a passes object; :class:`DaskLogisticPasses` gives it the same
interface as the in-memory
:class:`~kernelmaps._solvers.logistic_passes.LogisticPasses`; each of its passes
is one map-reduce over the chunks:

* :meth:`~DaskLogisticPasses.run`: per chunk, the gradient ``K^T l' / n``, the
  sums of the loss, of ``l'`` and of the weights ``W``, and ``u = K^T W 1``;
* :meth:`~DaskLogisticPasses.losses`: per chunk, the loss at multiples of a
  step, from ``K [a, d]`` (the in-memory passes keep both logits instead), and
  :meth:`~DaskLogisticPasses.move` a run at the multiples chosen;
* :meth:`~DaskLogisticPasses.hessian_product`: per chunk, ``K^T W K V``. The
  weights are not stored between passes (they would be ``n x k`` on the client,
  or state on the workers): each task recomputes them from ``K a`` in the same
  product, ``K [a, V]``, at ``k`` more columns of a pass whose cost is the
  kernel's evaluation (or, with the blocks kept on the workers, their read).

Every partial sum is compensated, so the merges in any order give the in-memory
fit's sums, and the coefficients equal the in-memory fit's on the same centres.
"""

import numpy as np

try:
    from .dask_support import graph_node, serial, tree_sum
except ImportError as error:  # pragma: no cover - exercised by the no-dask test in a subprocess
    raise ImportError("fitting the Nyström logistic machine on Dask arrays needs the optional 'dask' extra: "
                      "pip install 'kernelmaps[dask]'") from error

from .._numba.compensated import CompensatedSum
from .._solvers.logistic_passes import line_losses, pass_rows, point_from_sums, row_weights
from ..dask import TREE_FAN_IN


class _PassSums:
    """One chunk's (or a merge's) ``K^T [l' / n, W]`` and ``(3, k)`` row sums, both compensated."""

    def __init__(self, both, sums):
        self.both, self.sums = both, sums

    def merge(self, other):
        self.both.merge(other.both)
        self.sums.merge(other.sums)
        return self


def _chunk_targets(operator, targets):
    # the targets are the ±1 code of checked labels
    return np.asarray(targets, dtype=np.float64).reshape(operator.shape[0], -1)


def _chunk_run(operator, targets, a, b, n):
    """One chunk's share of a point: the map step of :meth:`DaskLogisticPasses.run`."""
    k = b.shape[0]
    with serial():
        Y = _chunk_targets(operator, targets)
        sums = CompensatedSum((3, k))

        def rows_map(lo, hi, F):
            U, _, part = pass_rows(Y[lo:hi], b, n, np.zeros((hi - lo, k)) if F is None else F)
            sums.add(part)
            return U

        # at a = 0 (where every fit starts) the logits are b without a product
        return _PassSums(operator.sweep_sum(a if a.any() else None, rows_map, 2 * k), sums)


def _chunk_losses(operator, targets, a_and_direction, b, intercept_direction, t):
    """One chunk's sums of the losses at multiples ``t`` of a step: the map step of
    :meth:`DaskLogisticPasses.losses`, from the logits of ``K [a, d]``."""
    k = b.shape[0]
    with serial():
        Y = _chunk_targets(operator, targets)
        F = operator @ a_and_direction
        sums = CompensatedSum(t.shape)
        sums.add(line_losses(Y, F[:, :k] + b, F[:, k:] + intercept_direction, t))
        return sums


def _chunk_hessian(operator, targets, a, b, V, columns):
    """One chunk's ``K^T W K V`` in the target columns ``columns``, its weights ``W`` from ``K a + b`` (``a`` and
    ``b`` of those columns) in the same product."""
    k = b.shape[0]
    with serial():
        Y = _chunk_targets(operator, targets)[:, columns]

        def rows_map(lo, hi, F):
            return row_weights(Y[lo:hi], F[:, :k] + b) * F[:, k:]

        return operator.sweep_sum(np.hstack([a, V]), rows_map, V.shape[1])


class DaskLogisticPasses:
    """The passes of a logistic fit over a :class:`~kernelmaps._machines.dask_nystroem.DaskKernelOperator`.

    Parameters
    ----------
    K : DaskKernelOperator
    Y : dask.array.Array of shape (n, k)
        The ±1 targets, row-chunked as ``K``'s rows.
    """

    def __init__(self, K, Y):
        self.K = K
        n, m = K.shape
        Y = Y.reshape(n, -1).rechunk({0: K.X.chunks[0], 1: -1})
        self.shape = (n, m, Y.shape[1])
        self._targets = Y.to_delayed().ravel()
        self._point = self._step = None

    def _map_reduce(self, task, *args):
        parts = self.K.map_chunks(task, self._targets, shared=args)
        return tree_sum(parts, TREE_FAN_IN).compute()

    def run(self, a, b):
        """The point at ``(a, b)``; its weights serve the next :meth:`hessian_product` calls."""
        a = np.ascontiguousarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        total = self._map_reduce(_chunk_run, graph_node(a, "kernelmaps-a"), b, self.shape[0])
        self._point, self._step = (a, b), None
        return point_from_sums(a, b, self.shape[0], total.both.result(), total.sums.result())

    def along(self, direction, intercept_direction):
        """Take the step ``(a - t d, b - t d_b)`` from the last point (its products come with :meth:`losses`)."""
        self._step = (np.ascontiguousarray(direction, dtype=np.float64),
                      np.asarray(intercept_direction, dtype=np.float64))

    def losses(self, t):
        """``(s, k)`` mean losses at ``s`` multiples ``t`` (``(s, k)``) of the step :meth:`along`: one map-reduce of
        ``K [a, d]``, the logits the in-memory passes keep."""
        if self._step is None:
            raise RuntimeError("losses needs a step from the last point: call along first")
        (a, b), (direction, intercept_direction) = self._point, self._step
        both = graph_node(np.hstack([a, direction]), "kernelmaps-ad")
        t = np.asarray(t, dtype=np.float64)
        return self._map_reduce(_chunk_losses, both, b, intercept_direction, t).result() / self.shape[0]

    def move(self, t):
        """The point at ``t`` (one multiple per column) times the step :meth:`along`."""
        if self._step is None:
            raise RuntimeError("move needs a step from the last point: call along first")
        (a, b), (direction, intercept_direction) = self._point, self._step
        return self.run(a - t * direction, b - t * intercept_direction)

    def full_precision(self):
        """The Hessian products are in the rows' precision already: False (nothing changes)."""
        return False

    def hessian_product(self, V, columns=slice(None)):
        """``K^T W K V`` at the weights of the last point run, for the target columns ``columns`` (``V`` has one
        column each)."""
        a, b = self._point
        if not isinstance(columns, slice):
            a, b = np.ascontiguousarray(a[:, columns]), b[columns]
        V = graph_node(np.ascontiguousarray(V, dtype=np.float64), "kernelmaps-v")
        return self._map_reduce(_chunk_hessian, graph_node(a, "kernelmaps-a"), b, V, columns).result()
