"""Per-sample losses of the group-lasso learners, as Numba kernels and one object.

The squared loss, the logistic loss on +-1 codes and the smooth
epsilon-insensitive logistic loss of Băzăvan, Li & Sminchisescu (section 3.3),
each summed per column of an ``N x k`` block of predictions, with its derivative.
They are element-wise work around the two BLAS products of a FISTA iteration
(``F @ W`` and ``F^T @ D``): each kernel is one pass over its block.
"""

import numpy as np
from numba import njit
from scipy.optimize import brentq

from .._numba.fastmath import FASTMATH
from .._numba.logistic import sigmoid, softplus

#: Loss name -> code read by the Numba kernels.
LOSS_CODES = {"squared": 0, "logistic": 1, "epsilon_logistic": 2}


@njit(cache=True, nogil=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _loss(code, z, t, epsilon, sharpness):
    if code == 0:
        r = z - t
        return r * r / 2
    if code == 1:
        return softplus(-t * z)
    r = z - t
    return (softplus(sharpness * (r - epsilon)) + softplus(sharpness * (-r - epsilon))
            - 2 * softplus(-sharpness * epsilon)) / sharpness


@njit(cache=True, nogil=True, inline="always", error_model="numpy", fastmath=FASTMATH)
def _loss_derivative(code, z, t, epsilon, sharpness):
    if code == 0:
        return z - t
    if code == 1:
        return -t * sigmoid(-t * z)
    r = z - t
    return sigmoid(sharpness * (r - epsilon)) - sigmoid(sharpness * (-r - epsilon))


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _losses_and_derivatives(code, Z, T, epsilon, sharpness, derivative, totals):
    """Per column: ``totals[k] = sum_i l(Z[i, k], T[i, k])``; ``derivative = dl/dz``."""
    n_rows, n_columns = Z.shape
    totals[:] = 0
    for i in range(n_rows):
        for k in range(n_columns):
            totals[k] += _loss(code, Z[i, k], T[i, k], epsilon, sharpness)
            derivative[i, k] = _loss_derivative(code, Z[i, k], T[i, k], epsilon, sharpness)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _losses(code, Z, T, epsilon, sharpness, totals):
    n_rows, n_columns = Z.shape
    totals[:] = 0
    for i in range(n_rows):
        for k in range(n_columns):
            totals[k] += _loss(code, Z[i, k], T[i, k], epsilon, sharpness)


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _row_losses(code, Z, T, epsilon, sharpness, out):
    """``out[i] = sum_k l(Z[i, k], T[i, k])``: the loss of each row over all problems."""
    n_rows, n_columns = Z.shape
    for i in range(n_rows):
        total = 0.0
        for k in range(n_columns):
            total += _loss(code, Z[i, k], T[i, k], epsilon, sharpness)
        out[i] = total



class Loss:
    """A per-sample loss with the constants of its kernels (mean over rows)."""

    def __init__(self, name, epsilon=0.0, sharpness=1.0):
        self.name = name
        self.code = LOSS_CODES[name]
        self.epsilon = float(epsilon)
        self.sharpness = float(sharpness)

    @property
    def curvature(self):
        """An upper bound of ``l''``: the Lipschitz constant of the gradient per unit ``||F||^2``."""
        # logistic: sigma' <= 1/4; epsilon-IGLL: two sigmoids' slopes, each <= sharpness/4
        return {0: 1.0, 1: 0.25, 2: self.sharpness / 2}[self.code]

    def _constants(self, Z):
        # in the block's dtype: the kernels compile once per dtype, on first use, and a
        # float32 block's loss is computed in float32 throughout
        return Z.dtype.type(self.epsilon), Z.dtype.type(self.sharpness)

    def totals(self, Z, T):
        """``sum_i l(Z[i, k], T[i, k])`` per column."""
        totals = np.empty(Z.shape[1])
        _losses(self.code, Z, T, *self._constants(Z), totals)
        return totals

    def totals_and_derivative(self, Z, T):
        """Loss sums per column and ``dl/dz`` at every entry."""
        derivative = np.empty_like(Z)
        totals = np.empty(Z.shape[1])
        _losses_and_derivatives(self.code, Z, T, *self._constants(Z), derivative, totals)
        return totals, derivative

    def per_sample(self, Z, T):
        """Loss of every row summed over columns (for the standard error of a validation loss)."""
        out = np.empty(Z.shape[0])
        Z = np.ascontiguousarray(Z)
        _row_losses(self.code, Z, T, *self._constants(Z), out)
        return out

    def best_intercept(self, T):
        """The intercept of each column that minimizes the loss when all weights are zero."""
        if self.code == 0:
            return T.mean(axis=0)
        if self.code == 1:
            p = (T > 0).mean(axis=0)
            return np.log(p) - np.log1p(-p)
        out = np.empty(T.shape[1])
        slack = self.epsilon + 50.0 / self.sharpness   # the derivative is +-1 to 1e-21 beyond
        for k in range(T.shape[1]):
            t = np.ascontiguousarray(T[:, k:k + 1])

            def slope(b, t=t):
                return self.totals_and_derivative(np.full_like(t, b), t)[1].sum()

            out[k] = brentq(slope, t.min() - slack, t.max() + slack, xtol=1e-14, rtol=1e-14)
        return out
