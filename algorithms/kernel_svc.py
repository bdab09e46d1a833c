"""Exact kernel SVM by greedy dual coordinate descent with an LRU cache of kernel columns."""

import warnings

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from ._base import (KernelParameter, RegisteredEstimator, check_choice, check_n_components,
                    check_positive, classes_from_scores, encode_classes)
from ._fastmath import FASTMATH
from ._kernels import (GAMMA_SAMPLE_SEED, KERNEL_CODES, LAST_BLAS_KERNEL_CODE, check_kernel_params,
                       exact_kernel, kernel_block, resolve_gamma)
from ._validation import check_fits_in_memory, check_input, clear_fitted_state

__all__ = ["KernelSVC"]

#: Length-``n`` float64 or int64 vectors a fit holds besides the column cache: the
#: labels, the signs, the row subset, the kernel diagonal and its permuted copy,
#: ``|x|^2``, the slot map, the dual variables, ``z = Q a`` (or ``G``), ``G_bar``
#: and the permutation.
SOLVER_VECTORS = 11


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _kernel_column(i, length, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner, last_used,
                   col_len, clock):
    """Entries ``0 .. length-1`` of the column ``K(X, x_i)`` through a fixed-size LRU cache.

    Returns the cached row, valid on its first ``length`` entries (at least). A
    hit refreshes the slot's time stamp and computes only the entries the slot
    does not hold yet (``col_len``: a shrunk problem asks for its active
    variables only, as LIBSVM's ``get_Q(i, len)``); a miss evicts the least
    recently used slot (empty slots, stamped -1, go first). Entries are one BLAS
    matrix-vector product plus the epilogue :func:`kernelmaps._kernels.kernel_block`.

    Parameters
    ----------
    i, length : int
    X : ndarray of shape (n, d), float64
    sq : ndarray of shape (n,), ``|x_j|^2``
    code, gamma, coef0, degree : kernel (see :func:`kernelmaps._kernels.kernel_block`)
    cache : ndarray of shape (n_slots, n), float64
    slot_of : ndarray of shape (n,), int64, slot of column i or -1
    slot_owner : ndarray of shape (n_slots,), int64, column held or -1
    last_used : ndarray of shape (n_slots,), int64
    col_len : ndarray of shape (n_slots,), int64, valid leading entries per slot
    clock : int

    References
    ----------
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation",
    section "Greedy Coordinate Descent" (LRU cache of kernel columns, as LIBSVM).
    Chang, C.-C. and Lin, C.-J. LIBSVM: a library for support vector machines.
    ACM TIST 2, 2011 (columns of the active length, section 5.1).
    """
    s = slot_of[i]
    if s < 0:
        s = 0
        for t in range(1, last_used.shape[0]):
            if last_used[t] < last_used[s]:
                s = t
        if slot_owner[s] >= 0:
            slot_of[slot_owner[s]] = -1
        slot_owner[s] = i
        slot_of[i] = s
        col_len[s] = 0
    start = col_len[s]
    if start < length:
        segment = cache[s, start:length]
        if code <= LAST_BLAS_KERNEL_CODE:
            segment[:] = np.dot(X[start:length], X[i])
        kernel_block(segment.reshape((1, length - start)), X[i : i + 1], X[start:length], sq[start:length],
                     code, gamma, coef0, degree)
        col_len[s] = length
    last_used[s] = clock
    return cache[s]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _greedy_coordinate_descent(X, sq, code, gamma, coef0, degree, bias, y, C, tol, max_iter,
                              cache, slot_of, slot_owner, last_used, col_len, clock0, alpha, z, q_diag):
    """Greedy coordinate descent on the SVM dual ``min 1/2 a^T Q a - e^T a, 0 <= a <= C``.

    ``Q_ij = y_i y_j (K_ij + bias)``. Each step computes every coordinate's optimal
    step ``delta_i = max(-a_i, min(C - a_i, (1 - z_i) / Q_ii))`` from ``z = Q a``
    (O(n)), takes the largest ``|delta_i|``, and updates ``z`` with one column of
    ``Q`` (O(n), the column from the LRU cache). Stops when ``max |delta_i| < tol``.

    ``alpha`` and ``z`` are updated in place (a warm start if not zero).

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
            hi = C - alpha[i]
            d = hi if d > hi else d
            d = lo if d < lo else d
            if abs(d) > best_abs:
                best_abs = abs(d)
                best_delta = d
                best = i
        if best < 0 or best_abs < tol:
            return it, True, clock
        clock += 1
        col = _kernel_column(best, n, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                             last_used, col_len, clock)
        alpha[best] += best_delta
        scale = best_delta * y[best]
        for j in range(n):
            z[j] += scale * y[j] * (col[j] + bias)
    return max_iter, False, clock


#: LIBSVM's floor of a non-positive curvature ``K_ii + K_jj - 2 K_ij`` (a numerical
#: zero or a kernel that is not positive definite).
TAU = 1e-12


@njit(cache=True, nogil=True)
def _swap_variables(i, j, X, sq, y, alpha, G, G_bar, k_diag, perm, cache, slot_of, slot_owner, col_len):
    """Exchange the places ``i < j`` of two variables of the problem, as LIBSVM's
    ``swap_index``: their rows of ``X`` and every per-variable array, their
    cached columns (which follow their owners) and their entries in every cached
    column. A column that holds ``i`` but not ``j`` keeps its first ``i`` entries.
    Physical swaps keep the active variables first and contiguous, so the loops
    over them stay plain vectorizable loops and the column products stay BLAS.
    """
    for k in range(X.shape[1]):
        X[i, k], X[j, k] = X[j, k], X[i, k]
    sq[i], sq[j] = sq[j], sq[i]
    y[i], y[j] = y[j], y[i]
    alpha[i], alpha[j] = alpha[j], alpha[i]
    G[i], G[j] = G[j], G[i]
    G_bar[i], G_bar[j] = G_bar[j], G_bar[i]
    k_diag[i], k_diag[j] = k_diag[j], k_diag[i]
    perm[i], perm[j] = perm[j], perm[i]
    slot_i, slot_j = slot_of[i], slot_of[j]
    slot_of[i], slot_of[j] = slot_j, slot_i
    if slot_i >= 0:
        slot_owner[slot_i] = j
    if slot_j >= 0:
        slot_owner[slot_j] = i
    for s in range(slot_owner.shape[0]):
        if slot_owner[s] < 0:
            continue
        if col_len[s] > j:
            cache[s, i], cache[s, j] = cache[s, j], cache[s, i]
        elif col_len[s] > i:
            col_len[s] = i


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _select_working_set(active, y, alpha, G, k_diag, C, tol, X, sq, code, gamma, coef0, degree,
                        cache, slot_of, slot_owner, last_used, col_len, clock):
    """WSS 2 of Fan, Chen & Lin over the first ``active`` variables.

    ``i`` has the largest ``-y_i G_i`` among the variables that can move up;
    ``j``, among those that can move down with ``b_ij = -y_i G_i + y_j G_j > 0``,
    minimizes ``-b_ij^2 / a_ij``, ``a_ij = K_ii + K_jj - 2 K_ij`` (floored at
    ``TAU``). Returns ``(i, j, clock)``; ``j = -1`` when the maximal violation
    ``m(a) - M(a)`` is below ``tol`` (optimal on these variables).
    """
    g_max = -np.inf
    i = -1
    for t in range(active):
        if y[t] > 0:
            if alpha[t] < C and -G[t] >= g_max:
                g_max = -G[t]
                i = t
        elif alpha[t] > 0 and G[t] >= g_max:
            g_max = G[t]
            i = t
    if i < 0:
        return i, -1, clock
    clock += 1
    col_i = _kernel_column(i, active, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                           last_used, col_len, clock)
    g_max2 = -np.inf
    j = -1
    best = np.inf
    for t in range(active):
        # the variables that can move down: y_t = +1 above 0, y_t = -1 below C
        if (alpha[t] > 0) if y[t] > 0 else (alpha[t] < C):
            yg = y[t] * G[t]
            if yg >= g_max2:
                g_max2 = yg
            grad_diff = g_max + yg
            if grad_diff > 0:
                quad = k_diag[i] + k_diag[t] - 2.0 * col_i[t]
                quad = quad if quad > 0 else TAU
                obj = -(grad_diff * grad_diff) / quad
                if obj <= best:
                    best = obj
                    j = t
    if g_max + g_max2 < tol:
        j = -1
    return i, j, clock


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _reconstruct_gradient(active, y, alpha, G, G_bar, C, X, sq, code, gamma, coef0, degree,
                          cache, slot_of, slot_owner, last_used, col_len, clock):
    """``G`` of the shrunk variables ``active ..`` again, from ``G_bar`` and the free
    variables (all free variables are active), by whichever loop reads fewer
    kernel entries, as LIBSVM's ``reconstruct_gradient``. Returns the clock."""
    n = X.shape[0]
    if active == n:
        return clock
    for t in range(active, n):
        G[t] = G_bar[t] - 1.0
    n_free = 0
    for t in range(active):
        if 0.0 < alpha[t] < C:
            n_free += 1
    if n_free * n > 2 * active * (n - active):
        for t in range(active, n):
            clock += 1
            col = _kernel_column(t, active, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                                 last_used, col_len, clock)
            acc = 0.0
            for s in range(active):
                if 0.0 < alpha[s] < C:
                    acc += alpha[s] * y[s] * col[s]
            G[t] += y[t] * acc
    else:
        for s in range(active):
            if 0.0 < alpha[s] < C:
                clock += 1
                col = _kernel_column(s, n, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                                     last_used, col_len, clock)
                a = alpha[s] * y[s]
                for t in range(active, n):
                    G[t] += a * y[t] * col[t]
    return clock


@njit(cache=True, nogil=True)
def _is_shrinkable(t, g_max1, g_max2, y, alpha, G, C):
    """LIBSVM's ``be_shrunk``: a variable at a bound whose gradient points out of
    the box by more than the current violation stays there (Fan et al., sec. 5)."""
    if alpha[t] >= C:
        return -G[t] > (g_max1 if y[t] > 0 else g_max2)
    if alpha[t] <= 0.0:
        return G[t] > (g_max2 if y[t] > 0 else g_max1)
    return False


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _shrink(active, unshrink, y, alpha, G, G_bar, k_diag, perm, C, tol, X, sq, code, gamma, coef0, degree,
            cache, slot_of, slot_owner, last_used, col_len, clock):
    """LIBSVM's ``do_shrinking``: move the variables that will stay at their bound
    behind the active ones. Near the end (violation below ``10 tol``) the gradient
    is reconstructed once and every variable is active again before shrinking
    anew. Returns ``(active, unshrink, clock)``."""
    g_max1 = -np.inf  # max -y_t G_t over the variables that can move up
    g_max2 = -np.inf  # max  y_t G_t over the variables that can move down
    for t in range(active):
        if y[t] > 0:
            if alpha[t] < C:
                g_max1 = max(g_max1, -G[t])
            if alpha[t] > 0:
                g_max2 = max(g_max2, G[t])
        else:
            if alpha[t] < C:
                g_max2 = max(g_max2, -G[t])
            if alpha[t] > 0:
                g_max1 = max(g_max1, G[t])
    if not unshrink and g_max1 + g_max2 <= 10.0 * tol:
        unshrink = True
        clock = _reconstruct_gradient(active, y, alpha, G, G_bar, C, X, sq, code, gamma, coef0, degree,
                                      cache, slot_of, slot_owner, last_used, col_len, clock)
        active = X.shape[0]
    t = 0
    while t < active:
        if _is_shrinkable(t, g_max1, g_max2, y, alpha, G, C):
            active -= 1
            while active > t:
                if not _is_shrinkable(active, g_max1, g_max2, y, alpha, G, C):
                    _swap_variables(t, active, X, sq, y, alpha, G, G_bar, k_diag, perm, cache, slot_of,
                                    slot_owner, col_len)
                    break
                active -= 1
        t += 1
    return active, unshrink, clock


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _smo_second_order(X, sq, code, gamma, coef0, degree, y, C, tol, max_iter, shrinking,
                      cache, slot_of, slot_owner, last_used, col_len, clock0, alpha, G, G_bar, k_diag, perm):
    """SMO with second-order working-set selection and shrinking on the SVM dual with a free bias.

    ``min_a 1/2 a^T Q a - e^T a`` subject to ``y^T a = 0`` and ``0 <= a <= C``,
    ``Q_ij = y_i y_j k(x_i, x_j)``, as LIBSVM solves it. Each step picks the pair
    of :func:`_select_working_set` (WSS 2) and solves the two-variable problem in
    closed form, clipped to the box; ``G = Q a - e`` is kept up to date on the
    active variables with the two kernel columns (from the LRU cache). Stops when
    the maximal violation ``m(a) - M(a)`` falls below ``tol``.

    With ``shrinking``, every ``min(n, 1000)`` steps the variables that will stay
    at a bound are moved behind the active ones (:func:`_shrink`) and the steps
    work on the active ones only: shorter loops and shorter kernel columns.
    ``G_bar_t = C sum_{a_s = C} Q_ts`` is kept so that the gradient of the shrunk
    variables can be rebuilt (:func:`_reconstruct_gradient`); optimality is only
    accepted after every variable is active again. Variables are moved
    physically (:func:`_swap_variables`): ``X``, ``sq``, ``y``, ``alpha``, ``G``,
    ``G_bar``, ``k_diag`` and the cache are permuted in place, and ``perm[t]`` is
    the original index of the variable now at ``t``.

    Returns
    -------
    n_iter : int
    converged : bool
    clock : int
    rho : float
        The bias term: the decision function is ``sum_i y_i a_i k(x_i, x) - rho``.

    References
    ----------
    Fan, R.-E., Chen, P.-H. and Lin, C.-J. Working set selection using second order
    information for training support vector machines. JMLR 6, 2005 (WSS 2,
    shrinking in section 5). Chang, C.-C. and Lin, C.-J. LIBSVM: a library for
    support vector machines. ACM TIST 2, 2011 (sections 4.1, 5.1, 5.2: the update,
    shrinking with gradient reconstruction, and the bias).
    """
    n = X.shape[0]
    clock = clock0
    active = n
    unshrink = False
    counter = min(n, 1000) + 1
    converged = False
    it = 0
    while it < max_iter:
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(n, 1000)
                active, unshrink, clock = _shrink(active, unshrink, y, alpha, G, G_bar, k_diag, perm, C, tol,
                                                  X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                                                  last_used, col_len, clock)
        i, j, clock = _select_working_set(active, y, alpha, G, k_diag, C, tol, X, sq, code, gamma, coef0,
                                          degree, cache, slot_of, slot_owner, last_used, col_len, clock)
        if j < 0:
            # optimal on the active variables: optimal on all of them, or shrink again soon
            clock = _reconstruct_gradient(active, y, alpha, G, G_bar, C, X, sq, code, gamma, coef0, degree,
                                          cache, slot_of, slot_owner, last_used, col_len, clock)
            active = n
            i, j, clock = _select_working_set(active, y, alpha, G, k_diag, C, tol, X, sq, code, gamma, coef0,
                                              degree, cache, slot_of, slot_owner, last_used, col_len, clock)
            if j < 0:
                converged = True
                break
            counter = 1
        it += 1
        clock += 1
        col_i = _kernel_column(i, active, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                               last_used, col_len, clock)
        clock += 1
        col_j = _kernel_column(j, active, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                               last_used, col_len, clock)
        # col_i may have been evicted by col_j only if the cache holds a single slot
        # (it holds at least two), so both rows stay valid here
        q_ij = y[i] * y[j] * col_i[j]
        old_i = alpha[i]
        old_j = alpha[j]
        if y[i] != y[j]:
            quad = k_diag[i] + k_diag[j] + 2.0 * q_ij
            quad = quad if quad > 0 else TAU
            delta = (-G[i] - G[j]) / quad
            diff = alpha[i] - alpha[j]
            alpha[i] += delta
            alpha[j] += delta
            if diff > 0:
                if alpha[j] < 0:
                    alpha[j] = 0.0
                    alpha[i] = diff
            elif alpha[i] < 0:
                alpha[i] = 0.0
                alpha[j] = -diff
            if diff > 0:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = C - diff
            elif alpha[j] > C:
                alpha[j] = C
                alpha[i] = C + diff
        else:
            quad = k_diag[i] + k_diag[j] - 2.0 * q_ij
            quad = quad if quad > 0 else TAU
            delta = (G[i] - G[j]) / quad
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            if total > C:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = total - C
            elif alpha[j] < 0:
                alpha[j] = 0.0
                alpha[i] = total
            if total > C:
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = total - C
            elif alpha[i] < 0:
                alpha[i] = 0.0
                alpha[j] = total
        d_i = (alpha[i] - old_i) * y[i]
        d_j = (alpha[j] - old_j) * y[j]
        for t in range(active):
            G[t] += y[t] * (col_i[t] * d_i + col_j[t] * d_j)
        if shrinking:
            # G_bar follows the variables that reach or leave the upper bound (full columns)
            for v, old in ((i, old_i), (j, old_j)):
                was_upper = old >= C
                if was_upper != (alpha[v] >= C):
                    clock += 1
                    col = _kernel_column(v, n, X, sq, code, gamma, coef0, degree, cache, slot_of, slot_owner,
                                         last_used, col_len, clock)
                    step = C * y[v] if alpha[v] >= C else -C * y[v]
                    for t in range(n):
                        G_bar[t] += step * y[t] * col[t]
    clock = _reconstruct_gradient(active, y, alpha, G, G_bar, C, X, sq, code, gamma, coef0, degree,
                                  cache, slot_of, slot_owner, last_used, col_len, clock)
    # rho: the mean of y_t G_t over the free variables, else the middle of the feasible interval
    upper = np.inf
    lower = -np.inf
    total = 0.0
    n_free = 0
    for t in range(n):
        yg = y[t] * G[t]
        if 0 < alpha[t] < C:
            n_free += 1
            total += yg
        elif (alpha[t] >= C) == (y[t] < 0):  # at C with y = -1, or at 0 with y = +1
            upper = min(upper, yg)
        else:
            lower = max(lower, yg)
    rho = total / n_free if n_free > 0 else (upper + lower) / 2.0
    return it, converged, clock, rho


class _Solver:
    """Runs the dual solver on row subsets, reusing one column cache while the
    subset stays the same (the one-vs-rest problems).

    The second-order solver permutes its copy of the rows, the cache and the
    kernel diagonal in place as it shrinks; ``perm`` (position -> index in
    ``rows``) carries the permutation from one problem to the next, so the cache
    stays valid and each problem's signs are read through it.
    """

    def __init__(self, est, X, C, tol, max_iter, cache_mb, bias, selection, shrinking):
        self.est, self.X, self.C, self.tol, self.max_iter = est, X, C, tol, max_iter
        self.cache_mb, self.bias, self.selection, self.shrinking = cache_mb, bias, selection, shrinking
        self.code = KERNEL_CODES[est.kernel_]
        # the greedy solver folds the bias into the kernel (k + 1); SMO keeps it free
        self.diag = est._kernel_diagonal(X) + (bias if selection == "greedy" else 0.0)
        self.rows = None

    def _reset(self, rows):
        X = np.ascontiguousarray(self.X[rows])
        n = X.shape[0]
        n_slots = int(min(n, max(2, self.cache_mb * 2**20 // (8 * n))))
        self.rows, self.Xs = rows, X
        self.sq = np.einsum("ij,ij->i", X, X)
        self.k_diag = self.diag[rows]
        self.perm = np.arange(n, dtype=np.int64)
        self.cache = np.empty((n_slots, n))
        self.slot_of = np.full(n, -1, dtype=np.int64)
        self.slot_owner = np.full(n_slots, -1, dtype=np.int64)
        self.last_used = np.full(n_slots, -1, dtype=np.int64)
        self.col_len = np.zeros(n_slots, dtype=np.int64)
        self.clock = 0

    def _cache(self):
        return self.cache, self.slot_of, self.slot_owner, self.last_used, self.col_len, self.clock

    def solve(self, rows, signs, label):
        """``(y_i a_i, intercept, steps)`` of the binary problem on ``rows``."""
        if self.rows is None or not np.array_equal(rows, self.rows):
            self._reset(rows)
        est = self.est
        kernel = (self.code, est.gamma_, est.coef0_, est.degree_)
        n = len(rows)
        alpha = np.zeros(n)
        if self.selection == "second_order":
            y = signs[self.perm]  # permuted with the solver's variables from here on
            G, G_bar = np.full(n, -1.0), np.zeros(n)
            it, converged, self.clock, rho = _smo_second_order(
                self.Xs, self.sq, *kernel, y, self.C, self.tol, self.max_iter, self.shrinking, *self._cache(),
                alpha, G, G_bar, self.k_diag, self.perm)
            if not converged:
                self._warn(label, "maximal violating pair's gap", _smo_gap(y, alpha, G, self.C))
            coef = np.empty(n)
            coef[self.perm] = alpha * y
            return coef, -rho, it
        z = np.zeros(n)
        it, converged, self.clock = _greedy_coordinate_descent(
            self.Xs, self.sq, *kernel, self.bias, signs, self.C, self.tol, self.max_iter, *self._cache(),
            alpha, z, self.k_diag)
        if not converged:
            self._warn(label, "largest coordinate step", _largest_greedy_step(alpha, z, self.k_diag, self.C))
        coef = alpha * signs
        return coef, self.bias * coef.sum(), it

    def _warn(self, label, measure, reached):
        warnings.warn(f"KernelSVC stopped at max_iter={self.max_iter} steps on the problem {label}: "
                      f"its {measure} reached {reached:.3g} against tol={self.tol}; raise max_iter "
                      "or tol", ConvergenceWarning, stacklevel=4)


def _label(value):
    """A class label as the user wrote it (``3``, ``'cat'``), not as NumPy prints its scalars."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _smo_gap(y, alpha, G, C):
    """``m(a) - M(a)``, the stopping measure of the second-order SMO (Fan, Chen & Lin)."""
    score = -y * G
    up = np.where(y > 0, alpha < C, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < C)
    return float(score[up].max(initial=-np.inf) - score[low].min(initial=np.inf))


def _largest_greedy_step(alpha, z, q_diag, C):
    """The largest clipped coordinate step, the stopping measure of greedy coordinate descent."""
    positive = q_diag > 0
    step = np.clip((1.0 - z[positive]) / q_diag[positive], -alpha[positive], C - alpha[positive])
    return float(np.abs(step).max(initial=0.0))


class KernelSVC(ClassifierMixin, RegisteredEstimator, BaseEstimator):
    """Exact kernel SVM: LIBSVM's SMO with shrinking, or greedy dual coordinate descent.

    By default (``selection='auto'`` with ``fit_intercept``) it solves LIBSVM's
    dual with a free bias, ``min_a 1/2 a^T Q a - e^T a`` subject to
    ``y^T a = 0`` and ``0 <= a_i <= C``, ``Q_ij = y_i y_j k(x_i, x_j)``, by SMO
    with second-order working-set selection and shrinking
    (:func:`_smo_second_order`), as scikit-learn's ``SVC`` does.
    ``selection='greedy'`` solves the lecture's dual without equality constraint,
    with ``Q_ij = y_i y_j (k(x_i, x_j) + 1)`` when ``fit_intercept`` (the bias is
    the weight of a constant feature, so it is regularized like the other
    weights) and ``Q_ij = y_i y_j k(x_i, x_j)`` otherwise, by greedy coordinate
    descent (:func:`_greedy_coordinate_descent`). Multi-class problems train one
    binary SVM per class (one-vs-rest, the default: the problems share the cache
    of kernel columns)
    or per pair of classes (``multi_class='ovo'``, as ``SVC``).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'polynomial', 'exponential'}
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or a heuristic (see :func:`kernelmaps.resolve_gamma`). The
        row sample of 'median' and 'knn50' is drawn with the fixed seed
        ``GAMMA_SAMPLE_SEED``, so that ``fit`` is deterministic without a
        ``random_state`` parameter.
    degree : int, default=2
    coef0 : float, default=1.0
    tol : float, default=1e-3
        Second order: stop when the largest KKT violation ``m(a) - M(a)`` is
        below ``tol`` (as ``SVC``). Greedy: stop when the largest coordinate step
        ``max |delta_i|`` is below ``tol``.
    cache_size : float, default=200
        Memory of the kernel-column cache in MB (as scikit-learn's ``SVC``): it holds
        ``max(2, cache_size * 2**20 // (8 n))`` float64 columns of length n,
        evicted least recently used first.
    max_iter : int, default=1_000_000
        Coordinate steps per binary problem (a ``ConvergenceWarning`` if reached).
    fit_intercept : bool, default=True
        Add the constant 1 to the kernel (a regularized bias).
    multi_class : {'ovr', 'ovo'}, default='ovr'
        One-vs-rest (one problem per class on all rows, sharing the column cache,
        prediction by the largest decision value), or one-vs-one as LIBSVM and
        scikit-learn's ``SVC`` (one problem per pair of classes on their rows,
        prediction by votes, ties to the first class). On ``letter`` (26 classes)
        one-vs-one is what matches ``SVC``'s accuracy: both solvers reach the same
        one-vs-rest accuracy, about 1.6 points lower at C = 1.
    selection : {'auto', 'greedy', 'second_order'}, default='auto'
        ``'greedy'``: the lecture's greedy coordinate descent on the dual with the
        bias folded into the kernel (above). ``'second_order'``: LIBSVM's solver,
        SMO on the dual with a free bias (``y^T a = 0``) and the second-order
        working-set selection of Fan, Chen & Lin (:func:`_smo_second_order`);
        ``tol`` is then the largest KKT violation, as ``SVC``'s.
        ``'auto'``: ``'second_order'``, the faster (full ``letter``, C = 10,
        one-vs-one: 0.63 s against greedy's 1.50 s and ``SVC``'s 0.77 s on a
        2-core Xeon, ``python -m benchmarks.experiments run kernel-svc-speed``),
        unless ``fit_intercept=False``, which only the greedy solver has.
    shrinking : bool, default=True
        Shrink the second-order solver's problem as LIBSVM does (and as ``SVC``
        by default): every ``min(n, 1000)`` steps, variables that will stay at a
        bound leave the active set; the gradient is rebuilt before optimality is
        accepted, so the solution is the same to ``tol``. Only the second-order
        solver shrinks; the greedy one runs the same whatever this says.

    Attributes
    ----------
    classes_ : ndarray
    support_ : ndarray of int
        Training rows with a non-zero dual coefficient in some binary problem.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        ``y_i a_i`` per binary problem (zero for rows outside a one-vs-one pair).
    intercept_ : ndarray of shape (n_problems,)
        ``bias * sum_i y_i a_i`` (greedy), ``-rho`` (second order).
    pairs_ : ndarray of shape (n_problems, 2) or None
        Class indices ``(a, b)`` of each one-vs-one problem (``a`` is positive).
    n_iter_ : ndarray of shape (n_problems,)
    selection_ : str
        The solver used (``'auto'`` resolved).
    gamma_ : float
    kernel_ : str

    References
    ----------
    Hsieh, C.-J., lecture "Scalable machine learning: kernel approximation",
    section "Greedy Coordinate Descent for Kernel SVM".
    Platt, J. Sequential minimal optimization. Microsoft Research TR-98-14, 1998.
    Fan, R.-E., Chen, P.-H. and Lin, C.-J. Working set selection using second
    order information for training support vector machines. JMLR 6, 2005.

    Examples
    --------
    Trained on the even rows of iris, scored on the odd ones:

    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import KernelSVC
    >>> X, y = load_iris(return_X_y=True)
    >>> svc = KernelSVC(C=1.0, gamma=0.5)
    >>> print(round(svc.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 2))
    0.99
    >>> svc.dual_coef_.shape  # one-vs-rest: a row per class, a column per support vector
    (3, 33)
    >>> svc.selection_  # 'auto': LIBSVM's second-order SMO, as fit_intercept=True
    'second_order'
    """

    name = "kernel_svc"
    kind = "baseline"
    paper = "Exact kernel SVM by greedy coordinate descent (lecture; Platt 1998 SMO)"
    kernel_family = "any"
    test_params = {"C": 1.0, "gamma": 0.5, "max_iter": 20000}
    # one-vs-one in the benchmarks, as scikit-learn's SVC, so both solve the same problems
    benchmark = {"params": {"kernel": "gaussian", "C": 1.0, "multi_class": "ovo"}}

    kernel = KernelParameter()

    @classmethod
    def peers(cls):
        from sklearn.svm import SVC

        def sklearn_svc(gamma, kernel="gaussian", C=1.0, **_):
            names = {"gaussian": "rbf", "rbf": "rbf", "polynomial": "poly"}
            return SVC(kernel=names[kernel], gamma=gamma, C=C)

        return {"sklearn.SVC": sklearn_svc}

    def __init__(self, C=1.0, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0, tol=1e-3,
                 cache_size=200, max_iter=1_000_000, fit_intercept=True, multi_class="ovr", selection="auto",
                 shrinking=True):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.cache_size = cache_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.selection = selection
        self.shrinking = shrinking

    def _check_params(self):
        C = check_positive(self.C, "C")
        tol = check_positive(self.tol, "tol")
        cache_mb = check_positive(self.cache_size, "cache_size")
        max_iter = check_n_components(self.max_iter, "max_iter")
        check_choice(self.multi_class, "multi_class", ("ovr", "ovo"))
        check_choice(self.selection, "selection", ("auto", "greedy", "second_order"))
        if self.selection == "second_order" and not self.fit_intercept:
            raise ValueError("selection='second_order' solves LIBSVM's dual, whose bias is free; "
                             "fit_intercept=False needs selection='greedy'")
        if not isinstance(self.shrinking, (bool, np.bool_)):
            raise ValueError(f"shrinking must be True or False, got {self.shrinking!r}")
        selection = self.selection
        if selection == "auto":
            selection = "second_order" if self.fit_intercept else "greedy"
        kernel, degree, coef0 = check_kernel_params(self.kernel, self.degree, self.coef0)
        return C, tol, cache_mb, max_iter, kernel, degree, coef0, selection, bool(self.shrinking)

    def fit(self, X, y):
        """Train one binary SVM per class or pair of classes (one for two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        X, y = check_input(self, X, y, reset=True)
        C, tol, cache_mb, max_iter, kernel, degree, coef0, selection, shrinking = self._check_params()
        n = X.shape[0]
        check_fits_in_memory(min(cache_mb * 2**20, 8.0 * n * n) + 8.0 * SOLVER_VECTORS * n,
                             f"cache_size={self.cache_size}", f"the kernel column cache for n_samples={n}")
        labels = encode_classes(self, y)
        self.kernel_ = kernel
        self.degree_ = degree
        self.coef0_ = coef0
        self.gamma_ = resolve_gamma(self.gamma, X, kernel, np.random.RandomState(GAMMA_SAMPLE_SEED))
        X64 = np.ascontiguousarray(X, dtype=np.float64)
        n = X64.shape[0]
        n_classes = len(self.classes_)
        bias = 1.0 if self.fit_intercept else 0.0
        self.bias_ = bias
        self.selection_ = selection
        solver = _Solver(self, X64, C, tol, max_iter, cache_mb, bias, selection, shrinking)
        if n_classes == 2 or self.multi_class == "ovr":
            # the problems share the rows, hence one cache of kernel columns
            n_out = 1 if n_classes == 2 else n_classes
            self.pairs_ = None
            dual = np.zeros((n_out, n))
            intercept = np.zeros(n_out)
            self.n_iter_ = np.zeros(n_out, dtype=np.int64)
            rows = np.arange(n)
            for c in range(n_out):
                target = 1 if n_out == 1 else c
                signs = np.where(labels == target, 1.0, -1.0)
                dual[c], intercept[c], self.n_iter_[c] = solver.solve(
                    rows, signs, f"{_label(self.classes_[target])} vs rest" if n_out > 1 else "of the two classes")
        else:
            self.pairs_ = np.array([(a, b) for a in range(n_classes) for b in range(a + 1, n_classes)])
            dual = np.zeros((len(self.pairs_), n))
            intercept = np.zeros(len(self.pairs_))
            self.n_iter_ = np.zeros(len(self.pairs_), dtype=np.int64)
            for p, (a, b) in enumerate(self.pairs_):
                rows = np.flatnonzero((labels == a) | (labels == b))
                signs = np.where(labels[rows] == a, 1.0, -1.0)
                coef, intercept[p], self.n_iter_[p] = solver.solve(
                    rows, signs, f"{_label(self.classes_[a])} vs {_label(self.classes_[b])}")
                dual[p, rows] = coef
        self.support_ = np.flatnonzero(np.any(dual != 0, axis=0))
        self.support_vectors_ = X64[self.support_]
        self.dual_coef_ = np.ascontiguousarray(dual[:, self.support_])
        self.intercept_ = intercept
        return self

    def _kernel_diagonal(self, X64):
        params = self._kernel_params()
        if params["kernel"] in ("gaussian", "laplacian", "cauchy"):
            return np.ones(X64.shape[0])
        # k(x, x) of a dot-product kernel, one row at a time, without the n x n Gram
        return np.array([exact_kernel(row[None], None, **params)[0, 0] for row in X64])

    def _kernel_params(self):
        return {"kernel": self.kernel_, "gamma": self.gamma_, "degree": self.degree_,
                "coef0": self.coef0_}

    def decision_function(self, X):
        """``sum_i y_i a_i (k(x_i, x) + bias)`` per binary problem.

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_problems):
        one column per class (``'ovr'``) or per pair ``pairs_`` (``'ovo'``).
        """
        check_is_fitted(self)
        X = check_input(self, X, reset=False)
        if len(self.support_) == 0:
            scores = np.zeros((X.shape[0], self.dual_coef_.shape[0]))
        else:
            K = exact_kernel(np.asarray(X, dtype=np.float64), self.support_vectors_,
                             **self._kernel_params())
            scores = K @ self.dual_coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class of the largest decision value (one-vs-one: of the most votes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1 or self.pairs_ is None:
            return classes_from_scores(self.classes_, scores)
        votes = np.zeros((scores.shape[0], len(self.classes_)), dtype=np.int64)
        winners = np.where(scores > 0, self.pairs_[:, 0], self.pairs_[:, 1])
        for p in range(winners.shape[1]):
            np.add.at(votes, (np.arange(len(votes)), winners[:, p]), 1)
        return self.classes_[np.argmax(votes, axis=1)]
