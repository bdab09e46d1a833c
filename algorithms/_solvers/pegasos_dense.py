"""Pegasos steps on dense features, and the minibatches every Pegasos solver draws.

:class:`kernelmaps.PegasosSVC` runs these steps on dense features, and the learned
maps (:class:`kernelmaps.CompactNonlinearMap`, :class:`kernelmaps.OptimizedCirculantMap`)
on the features of their current map; the steps on sparse features are
:mod:`kernelmaps._solvers.pegasos_sparse`'s.
"""

import math

import numpy as np
from numba import njit

from .._numba.fastmath import FASTMATH
from .pegasos_kernels import active_pairs, hinge_buffers, hinge_margins, scaled_norm, weights_or_ones

__all__ = ["DENSE_ACTIVE_FRACTION", "draw_minibatches", "pegasos_steps"]


def draw_minibatches(rng, n_rows, n_steps, batch_size):
    """Row indices of ``n_steps`` minibatches of ``min(batch_size, n_rows)`` rows,
    drawn uniformly with replacement in one call: shape (n_steps, M), int64, as
    :func:`pegasos_steps` takes them. (A ``RandomState`` yields the same indices
    as ``n_steps`` draws of one minibatch each.)"""
    return rng.randint(0, n_rows, size=(n_steps, min(batch_size, n_rows))).astype(np.int64, copy=False)


# Above this share of active (row, class) pairs a minibatch's sub-gradient is one
# dense BLAS product; below it, a sum over the active pairs only. Measured on this
# machine (M = 500, C = 26): the two cost the same at about 45 % active, at D = 64
# and at D = 512; trained one-vs-rest weights leave 2-10 % of the pairs active.
DENSE_ACTIVE_FRACTION = 1.0 / 3.0


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _gather_rows(Z, rows, batch):
    """``batch[r] = Z[rows[r]]``: the minibatch's rows, contiguous for the BLAS products."""
    m, D = batch.shape
    for r in range(m):
        src = Z[rows[r]]
        for j in range(D):
            batch[r, j] = src[j]


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _dense_subgradient(batch, signs, rows, row_weights, margins, active, grad, gb):
    """The hinge sub-gradient of every class as one BLAS product:
    ``grad = active @ batch`` with ``active[c, r] = v_r y_rc`` on the active pairs
    and 0 elsewhere; ``gb`` is set to the intercept's."""
    m, C = margins.shape
    gb[:] = 0.0
    for r in range(m):
        v = row_weights[rows[r]]
        for c in range(C):
            y = float(signs[rows[r], c]) * v if margins[r, c] > 0.0 else 0.0
            active[c, r] = y
            gb[c] += y
    np.dot(active, batch, grad)


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _active_pair_subgradient(batch, signs, rows, row_weights, margins, counts, grad, gb, active_rows, pair_slot,
                             pair_class):
    """The hinge sub-gradient of every class summed over the active pairs only;
    ``gb`` is set to the intercept's."""
    D = batch.shape[1]
    gb[:] = 0.0
    grad[:] = 0.0
    _, n_pairs = active_pairs(margins, counts, active_rows, pair_slot, pair_class)
    for a in range(n_pairs):
        r = active_rows[pair_slot[a]]
        c = pair_class[a]
        y = float(signs[rows[r], c]) * row_weights[rows[r]]
        gb[c] += y
        for j in range(D):
            grad[c, j] += y * batch[r, j]


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _step_and_project(W, b, grad, gb, shrink, step_size, radius2, fit_intercept):
    """``w_c <- shrink w_c + step_size grad_c`` (and the intercept with it), then
    the projection of ``(w_c, b_c)`` onto the ball of squared radius ``radius2``."""
    D, C = W.shape
    for c in range(C):
        bc = shrink * b[c] + step_size * gb[c] if fit_intercept else 0.0
        norm2 = bc * bc
        for j in range(D):
            w = shrink * W[j, c] + step_size * grad[c, j]
            W[j, c] = w
            norm2 += w * w
        if norm2 > radius2:
            if norm2 < math.inf:
                factor = math.sqrt(radius2 / norm2)
            else:
                # the squares overflowed (features of magnitude ~1e155 and up)
                factor = math.sqrt(radius2) / scaled_norm(W[:, c], bc)
            bc *= factor
            for j in range(D):
                W[j, c] *= factor
        b[c] = bc


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def pegasos_steps(Z, signs, W, b, batches, lam, t0, fit_intercept, weights=None):
    """Run Pegasos steps in place on one-vs-rest weights.

    For each minibatch ``A`` (a row of ``batches``) and each class ``c``, with
    ``A+`` the rows whose hinge loss is positive and ``eta = 1 / (lam t)``::

        w_c <- (1 - eta lam) w_c + (eta / |A|) sum_{i in A+} v_i y_ic z_i
        w_c <- min(1, (1 / sqrt(lam)) / ||w_c||) w_c

    with ``v_i = weights[i]`` (1 without ``weights``): each row's hinge
    sub-gradient scaled by its weight.

    With ``fit_intercept`` the bias ``b[c]`` is the weight of a constant feature 1:
    it is shrunk and projected with ``w_c``. (An unregularized bias under steps of
    ``1/(lam t)`` diverges for small ``lam``.) The scores of a minibatch are one
    BLAS product; the sub-gradient of all classes is another when many pairs
    are active, else a sum over the active pairs (``DENSE_ACTIVE_FRACTION``).

    Parameters
    ----------
    Z : ndarray of shape (n, D), float32 or float64
    signs : ndarray of shape (n, C), int8, entries +1 / -1
    W : ndarray of shape (D, C), float64, updated in place
    b : ndarray of shape (C,), float64, updated in place
    batches : ndarray of shape (T, M), int64 row indices
    lam : float
    t0 : int
        Steps already taken (the step size continues from ``t0 + 1``).
    fit_intercept : bool
    weights : ndarray of shape (n,), float64, optional
        The rows' weights ``v_i``.

    References
    ----------
    Those of :class:`kernelmaps.PegasosSVC`: Shalev-Shwartz et al. (2011), the
    Pegasos steps, and Yu et al. (2015), Algorithm 1, the minibatch.
    """
    n_steps, m = batches.shape
    D, C = W.shape
    radius2 = 1.0 / lam
    batch = np.empty((m, D))
    scores, margins, counts, active_rows, pair_slot, pair_class = hinge_buffers(m, C)
    active = np.empty((C, m))
    grad = np.empty((C, D))
    gb = np.empty(C)
    row_weights = weights_or_ones(weights, signs.shape[0])
    for step in range(n_steps):
        t = t0 + step + 1
        eta = 1.0 / (lam * t)
        rows = batches[step]
        _gather_rows(Z, rows, batch)
        np.dot(batch, W, scores)
        _, n_active = hinge_margins(scores, b, signs, rows, margins, counts)
        if n_active > DENSE_ACTIVE_FRACTION * m * C:
            _dense_subgradient(batch, signs, rows, row_weights, margins, active, grad, gb)
        else:
            _active_pair_subgradient(batch, signs, rows, row_weights, margins, counts, grad, gb, active_rows,
                                     pair_slot, pair_class)
        _step_and_project(W, b, grad, gb, 1.0 - eta * lam, eta / m, radius2, fit_intercept)
