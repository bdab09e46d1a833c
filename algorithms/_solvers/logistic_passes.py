"""The passes over the rows of the Nyström logistic machine's in-memory fit, and their per-row terms.

Every pass over the rows (the gradient, the loss, the weights; each CG product
``K^T W K V``) of :func:`kernelmaps._solvers.logistic_newton.nystroem_logistic_newton`
is one :meth:`KernelOperator.sweep` shared by all columns. :class:`LogisticPasses`
runs them in memory; :mod:`kernelmaps._machines.dask_logistic` runs the same
per-row terms over Dask chunks.
"""

from typing import NamedTuple

import numpy as np


def _log1p_exp(t):
    """``log(1 + exp(t))`` without overflow."""
    return np.logaddexp(0.0, t)


def stable_sigmoid(t):
    """``1 / (1 + exp(-t))`` without overflow: ``exp(-|t|) <= 1``, so neither branch overflows."""
    e = np.exp(-np.abs(t))
    return np.where(t >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def logistic_probabilities(scores):
    """Class probabilities of one-vs-rest logits: ``sigmoid(f)`` beside ``1 - sigmoid(f)`` for one
    column (two classes); otherwise each class's sigmoid, normalized to sum to 1."""
    positive = 1.0 / (1.0 + np.exp(-np.clip(scores, -700, 700)))
    if positive.ndim == 1:
        return np.column_stack([1.0 - positive, positive])
    return positive / positive.sum(axis=1, keepdims=True)


#: The multiples of a Newton step whose loss a run along the step also sums (see
#: :func:`pass_rows`): the solver keeps the multiple with the lowest objective.
LINE_STEPS = (0.5, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0)


class _Point(NamedTuple):
    a: np.ndarray
    b: np.ndarray
    data_gradient: np.ndarray      # K^T l' / n
    loss: np.ndarray               # mean loss per column
    intercept_gradient: np.ndarray  # mean l' per column
    weight_mean: np.ndarray        # mean W per column
    weighted_sum: np.ndarray       # u = K^T W 1
    line_loss: np.ndarray = None   # (len(LINE_STEPS), k) mean loss at those multiples of the step run


def pass_rows(Y, b, n, F, weights=None, start=None):
    """The per-row terms of one pass at logits ``F + b`` of ±1 targets ``Y`` (rows of a block).

    Returns ``(U, W, sums)``: ``U = [l' / n, W]`` to multiply by ``K^T``, the weights
    ``W = l''`` and the ``(3, k)`` sums of the loss, ``l'`` and ``W`` over the rows.
    ``weights`` (the block's shape) scale each row's loss in each column: a zero
    leaves the row out of that column's problem. ``start``, the logits of the point
    a step starts from, adds ``len(LINE_STEPS)`` rows to ``sums``: the loss at the
    logits ``start + t (F + b - start)`` for each ``t`` of :data:`LINE_STEPS`, which
    are linear in the step.
    """
    margin = Y * (F + b)
    s = stable_sigmoid(-margin)                 # sigmoid(-y f) = -l' / y
    W = s * (1.0 - s)
    derivative = -Y * s
    loss = _log1p_exp(-margin)
    if weights is not None:
        W, derivative, loss = W * weights, derivative * weights, loss * weights
    sums = [loss.sum(axis=0), derivative.sum(axis=0), W.sum(axis=0)]
    if start is not None:
        start_margin = Y * start
        for t in LINE_STEPS:
            along = _log1p_exp(-(start_margin + t * (margin - start_margin)))
            sums.append((along if weights is None else along * weights).sum(axis=0))
    return np.hstack([derivative / n, W]), W, np.stack(sums)


def run_forward(a, start):
    """The coefficients a run multiplies ``K`` by: ``a``, and beside it ``a0`` when the run is a step
    from ``start = (a0, b0)`` (whose logits :func:`run_rows` needs for the loss along the step)."""
    return a if start is None else np.hstack([a, start[0]])


def run_rows(Y, b, n, F, weights=None, start=None):
    """:func:`pass_rows` of a run's rows from ``F``, their product with :func:`run_forward`'s coefficients."""
    k = b.shape[0]
    return pass_rows(Y, b, n, F[:, :k], weights, None if start is None else F[:, k:] + start[1])


def run_sum_rows(start):
    """The rows of the sums :func:`run_rows` returns: the loss, ``l'`` and ``W``, and the losses along a step."""
    return 3 if start is None else 3 + len(LINE_STEPS)


def row_weights(Y, logits):
    """The Hessian weights ``l'' = sigmoid(f) sigmoid(-f)`` of the rows (the same whatever y's sign)."""
    s = stable_sigmoid(-Y * logits)
    return s * (1.0 - s)


def point_from_sums(a, b, n, both, sums):
    """The :class:`_Point` of a pass: ``both = K^T [l' / n, W]`` and the rows' ``(3, k)`` sums
    (``(3 + len(LINE_STEPS), k)`` for a run along a step)."""
    k = b.shape[0]
    loss, intercept_gradient, weight_mean = sums[:3] / n
    line_loss = sums[3:] / n if sums.shape[0] > 3 else None
    return _Point(a, b, both[:, :k], loss, intercept_gradient, weight_mean, both[:, k:], line_loss)


class LogisticPasses:
    """The passes of an in-memory fit over the rows of ``K`` with ±1 targets ``Y``.

    :meth:`run` evaluates a point (the gradient, the loss, the weights ``W``) and
    keeps its weights; :meth:`hessian_product` gives ``K^T W K V`` at the last point
    run; ``shape`` is ``(n, m, k)`` and ``K`` the operator. A Dask fit has the same interface over
    row chunks (:class:`kernelmaps._machines.dask_logistic.DaskLogisticPasses`).

    ``row_weights(lo, hi)``, if given, returns the ``(hi - lo, k)`` weights of
    rows ``lo:hi`` in each column's loss (cross-validation's columns leave their
    test fold out with zeros). ``keep_logits`` keeps ``logits``, the ``(n, k)``
    values ``K a + b`` of the last run. ``hessian``, an operator on the same rows and centres (float32
    where ``K`` is float64), takes :meth:`hessian_product`'s products; the points stay ``K``'s.
    """

    def __init__(self, K, Y, row_weights=None, keep_logits=False, hessian=None):
        self.K = K
        self.hessian = K if hessian is None else hessian
        self.Y = np.asarray(Y, dtype=np.float64).reshape(K.shape[0], -1)
        self.shape = (K.shape[0], K.shape[1], self.Y.shape[1])
        self.weights = np.empty(self.Y.shape)
        self.row_weights = row_weights
        self.logits = np.empty(self.Y.shape) if keep_logits else None

    def run(self, a, b, start=None):
        """The point at ``(a, b)``; ``start``, the coefficients ``(a0, b0)`` of the point a step from
        which reaches ``(a, b)``, adds the loss at :data:`LINE_STEPS` multiples of the step."""
        n, k = self.K.shape[0], b.shape[0]
        sums = {}

        def rows_map(lo, hi, F):
            weights = None if self.row_weights is None else self.row_weights(lo, hi)
            if self.logits is not None:
                self.logits[lo:hi] = F[:, :k] + b
            U, self.weights[lo:hi], sums[lo] = run_rows(self.Y[lo:hi], b, n, F, weights, start)
            return U

        both = self.K.sweep(run_forward(a, start), rows_map, 2 * k)
        totals = np.zeros((run_sum_rows(start), k))
        for lo in sorted(sums):
            totals += sums[lo]
        return point_from_sums(a, b, n, both, totals)

    def hessian_product(self, V, columns=slice(None)):
        """``K^T W K V`` at the last point run, for the target columns ``columns`` (``V`` has one column each)."""
        weights = self.weights if isinstance(columns, slice) else np.ascontiguousarray(self.weights[:, columns])
        return self.hessian.normal_matvec(V, weights=weights)

    def full_precision(self):
        """Take the Hessian products in ``K``'s precision from now on; whether that changes them."""
        changed, self.hessian = self.hessian is not self.K, self.K
        return changed
