"""The passes over the rows of the Nyström logistic machine's in-memory fit, and their per-row terms.

Every pass over the rows (the gradient, the loss, the weights; each CG product
``K^T W K V``) of :func:`kernelmaps._solvers.logistic_newton.nystroem_logistic_newton`
is one :meth:`KernelOperator.sweep` shared by all columns. :class:`LogisticPasses`
runs them in memory; :mod:`kernelmaps._machines.dask_logistic` runs the same
per-row terms over Dask chunks.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from .._numba.fastmath import FASTMATH
from .._numba.logistic import sigmoid, softplus


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


class _Point(NamedTuple):
    a: np.ndarray
    b: np.ndarray
    data_gradient: np.ndarray      # K^T l' / n
    loss: np.ndarray               # mean loss per column
    intercept_gradient: np.ndarray  # mean l' per column
    weight_mean: np.ndarray        # mean W per column
    weighted_sum: np.ndarray       # u = K^T W 1


_UNWEIGHTED = np.empty((0, 0))


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _row_terms(Y, F, b, n, weights, U, W, sums):
    """:func:`pass_rows`'s terms of rows ``F + b``, into ``U``, ``W`` and ``sums`` (zeroed by the caller);
    ``weights`` of shape ``(0, 0)``: unweighted."""
    rows, k = Y.shape
    weighted = weights.shape[0] > 0
    for i in range(rows):
        for j in range(k):
            y = Y[i, j]
            margin = y * (F[i, j] + b[j])
            s = sigmoid(-margin)                # sigmoid(-y f) = -l' / y
            w = s * (1 - s)
            derivative = -y * s
            loss = softplus(-margin)
            if weighted:
                c = weights[i, j]
                w, derivative, loss = w * c, derivative * c, loss * c
            U[i, j] = derivative / n
            U[i, k + j] = w
            W[i, j] = w
            sums[0, j] += loss
            sums[1, j] += derivative
            sums[2, j] += w


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _line_loss_sums(Y, F, F_step, t, weights, out):
    """:func:`line_losses` into ``out`` (zeroed by the caller); ``weights`` of shape ``(0, 0)``: unweighted."""
    rows, k = Y.shape
    weighted = weights.shape[0] > 0
    for i in range(rows):
        for row in range(t.shape[0]):
            for j in range(k):
                loss = softplus(-Y[i, j] * (F[i, j] - t[row, j] * F_step[i, j]))
                out[row, j] += loss * weights[i, j] if weighted else loss


def pass_rows(Y, b, n, F, weights=None, W=None):
    """The per-row terms of one pass at logits ``F + b`` of ±1 targets ``Y`` (rows of a block).

    Returns ``(U, W, sums)``: ``U = [l' / n, W]`` to multiply by ``K^T``, the weights
    ``W = l''`` (into ``W`` if given) and the ``(3, k)`` sums of the loss, ``l'`` and ``W``
    over the rows. ``weights`` (the block's shape) scale each row's loss in each column:
    a zero leaves the row out of that column's problem.
    """
    rows, k = Y.shape
    U = np.empty((rows, 2 * k))
    W = np.empty((rows, k)) if W is None else W
    sums = np.zeros((3, k))
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (k,))
    _row_terms(Y, F, np.ascontiguousarray(b), float(n), _UNWEIGHTED if weights is None else weights, U, W, sums)
    return U, W, sums


def line_losses(Y, F, F_step, t, weights=None):
    """The ``(s, k)`` sums over rows of the loss at the logits ``F - t F_step`` for each row of ``t`` (``(s, k)``,
    a multiple per column): the losses along a step whose logits are ``F_step``, from a point at logits ``F``."""
    out = np.zeros(t.shape)
    _line_loss_sums(Y, F, F_step, np.ascontiguousarray(t, dtype=np.float64),
                    _UNWEIGHTED if weights is None else weights, out)
    return out


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _weights(Y, logits, W):
    rows, k = Y.shape
    for i in range(rows):
        for j in range(k):
            s = sigmoid(-Y[i, j] * logits[i, j])
            W[i, j] = s * (1 - s)


def row_weights(Y, logits):
    """The Hessian weights ``l'' = sigmoid(f) sigmoid(-f)`` of the rows (the same whatever y's sign), with the
    bits of :func:`pass_rows`'s."""
    W = np.empty(Y.shape)
    _weights(Y, logits, W)
    return W


def point_from_sums(a, b, n, both, sums):
    """The :class:`_Point` of a pass: ``both = K^T [l' / n, W]`` and the rows' ``(3, k)`` sums."""
    k = b.shape[0]
    loss, intercept_gradient, weight_mean = sums / n
    return _Point(a, b, both[:, :k], loss, intercept_gradient, weight_mean, both[:, k:])


class LogisticPasses:
    """The passes of an in-memory fit over the rows of ``K`` with ±1 targets ``Y``.

    :meth:`run` evaluates a point (the gradient, the loss, the weights ``W``) and
    keeps its weights and its logits ``K a + b``; a step from it is
    :meth:`along` its direction (one product, whose logits it keeps), :meth:`losses`
    at multiples of it (from the two logits, no pass), and :meth:`move` to the
    multiples chosen (a pass of ``K^T`` alone). :meth:`hessian_product` gives
    ``K^T W K V`` at the last point; ``shape`` is ``(n, m, k)`` and ``K`` the operator.
    A Dask fit has the same interface over row chunks
    (:class:`kernelmaps._machines.dask_logistic.DaskLogisticPasses`).

    ``row_weights(lo, hi)``, if given, returns the ``(hi - lo, k)`` weights of
    rows ``lo:hi`` in each column's loss (cross-validation's columns leave their
    test fold out with zeros). ``logits`` holds the ``(n, k)`` values ``K a + b``
    of the last point (after a :meth:`move`, from the two products it combines).
    ``hessian``, an operator on the same rows and centres (float32 where ``K`` is
    float64), takes :meth:`hessian_product`'s products; the points stay ``K``'s.
    """

    def __init__(self, K, Y, row_weights=None, hessian=None):
        self.K = K
        self.hessian = K if hessian is None else hessian
        self.Y = np.asarray(Y, dtype=np.float64).reshape(K.shape[0], -1)
        self.shape = (K.shape[0], K.shape[1], self.Y.shape[1])
        self.weights = np.empty(self.Y.shape)
        self.row_weights = row_weights
        self.logits = np.empty(self.Y.shape)
        self._point = self._step = None

    def run(self, a, b):
        """The point at ``(a, b)``."""
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        # at a = 0 (where every fit starts) the logits are b without a product
        return self._point_at(a, b, a if a.any() else None, b)

    def along(self, direction, intercept_direction):
        """Take the step ``(a - t d, b - t d_b)`` from the last point: its logits ``K d + d_b``, in one product."""
        self._step = (direction, intercept_direction, self.K @ direction + intercept_direction)

    def losses(self, t):
        """``(s, k)`` mean losses at ``s`` multiples ``t`` (``(s, k)``, one per column) of the step :meth:`along`."""
        self._check_step("losses")
        weights = self._row_weights(0, self.shape[0])
        t = np.asarray(t, dtype=np.float64)
        return line_losses(self.Y, self.logits, self._step[2], t, weights) / self.shape[0]

    def move(self, t):
        """The point at ``t`` (one multiple per column) times the step :meth:`along`, by one pass of ``K^T``."""
        self._check_step("move")
        direction, intercept_direction, F_step = self._step
        a, b = self._point
        self._step = None
        self.logits -= t * F_step
        return self._point_at(a - t * direction, b - t * intercept_direction)

    def _check_step(self, name):
        if self._step is None:
            raise RuntimeError(f"{name} needs a step from the last point: call along first")

    def _row_weights(self, lo, hi):
        return None if self.row_weights is None else self.row_weights(lo, hi)

    def _point_at(self, a, b, V=None, intercepts=None):
        """The point at ``(a, b)`` from one sweep: the logits ``K V + intercepts`` are written first where
        ``intercepts`` is given (``V=None``: no product), else they are the kept ones; then each block's
        :func:`pass_rows` terms, their ``K^T`` product and sums."""
        n, k = self.shape[0], b.shape[0]
        sums = {}

        def rows_map(lo, hi, F):
            if intercepts is not None:
                self.logits[lo:hi] = intercepts if F is None else F + intercepts
            U, _, sums[lo] = pass_rows(self.Y[lo:hi], 0.0, n, self.logits[lo:hi], self._row_weights(lo, hi),
                                       self.weights[lo:hi])
            return U

        both = self.K.sweep(V, rows_map, 2 * k)
        self._point = (a, b)
        totals = np.zeros((3, k))
        for lo in sorted(sums):
            totals += sums[lo]
        return point_from_sums(a, b, n, both, totals)

    def hessian_product(self, V, columns=slice(None)):
        """``K^T W K V`` at the last point, for the target columns ``columns`` (``V`` has one column each)."""
        weights = self.weights if isinstance(columns, slice) else np.ascontiguousarray(self.weights[:, columns])
        return self.hessian.normal_matvec(V, weights=weights)

    def full_precision(self):
        """Take the Hessian products in ``K``'s precision from now on; whether that changes them."""
        changed, self.hessian = self.hessian is not self.K, self.K
        return changed
