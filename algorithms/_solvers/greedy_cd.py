"""Greedy coordinate descent on the SVM dual without equality constraint (the lecture's solver)."""

import numpy as np
from numba import njit

from .._numba.fastmath import FASTMATH
from .kernel_cache import kernel_column
from .smo import upper_bound


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def greedy_coordinate_descent(X, sq, kernel, bias, y, C, tol, max_iter,
                              cache, slot_of, slot_owner, last_used, col_len, clock0, alpha, z, q_diag):
    """Greedy coordinate descent on the SVM dual ``min 1/2 a^T Q a - e^T a, 0 <= a_i <= C_i``.

    ``Q_ij = y_i y_j (K_ij + bias)``. Each step computes every coordinate's optimal
    step ``delta_i = max(-a_i, min(C_i - a_i, (1 - z_i) / Q_ii))`` from ``z = Q a``
    (O(n)), takes the largest ``|delta_i|``, and updates ``z`` with one column of
    ``Q`` (O(n), the column from the LRU cache). Stops when ``max |delta_i| < tol``.

    ``C`` is one bound for all (a float) or one per variable (an array: weighted
    samples or classes). ``alpha`` and ``z`` are updated in place (a warm start if
    not zero).

    Returns
    -------
    n_iter : int
    converged : bool
    clock : int
        The cache clock after the run (pass it as ``clock0`` of the next run).

    References
    ----------
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation",
    section "Greedy Coordinate Descent" (a simplified SMO, Platt 1998).
    """
    n = X.shape[0]
    clock = clock0
    for it in range(max_iter):
        best = -1
        best_abs = 0.0
        best_delta = 0.0
        for i in range(n):
            q = q_diag[i]
            if q <= 0.0:
                continue
            d = (1.0 - z[i]) / q
            lo = -alpha[i]
            hi = upper_bound(C, i) - alpha[i]
            d = hi if d > hi else d
            d = lo if d < lo else d
            if abs(d) > best_abs:
                best_abs = abs(d)
                best_delta = d
                best = i
        if best < 0 or best_abs < tol:
            return it, True, clock
        clock += 1
        col = kernel_column(best, n, X, sq, kernel, cache, slot_of, slot_owner,
                            last_used, col_len, clock)
        alpha[best] += best_delta
        scale = best_delta * y[best]
        for j in range(n):
            z[j] += scale * y[j] * (col[j] + bias)
    return max_iter, False, clock


def largest_greedy_step(alpha, z, q_diag, C):
    """The largest clipped coordinate step, the stopping measure of greedy coordinate descent."""
    positive = q_diag > 0
    upper = np.broadcast_to(C, alpha.shape)[positive] - alpha[positive]
    step = np.clip((1.0 - z[positive]) / q_diag[positive], -alpha[positive], upper)
    return float(np.abs(step).max(initial=0.0))
