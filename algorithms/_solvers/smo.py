"""LIBSVM's SMO: second-order working-set selection and shrinking on the SVM dual with a free bias."""

import numpy as np
from numba import njit, types
from numba.extending import overload

from .._numba.fastmath import FASTMATH
from .kernel_cache import kernel_column


#: LIBSVM's floor of a non-positive curvature ``K_ii + K_jj - 2 K_ij`` (a numerical
#: zero or a kernel that is not positive definite).
TAU = 1e-12


def upper_bound(C, k):
    """The upper bound of variable ``k``: ``C`` itself (one bound for all, a float)
    or ``C[k]`` (a bound per variable: weighted samples or classes, as LIBSVM's
    ``C_i``). The solvers call it in their loops; for a float ``C`` it compiles
    to the constant, so the unweighted problem pays nothing for the per-variable bounds."""
    return C if np.ndim(C) == 0 else C[k]


@overload(upper_bound)
def _upper_bound_overload(C, k):
    if isinstance(C, types.Array):
        return lambda C, k: C[k]
    return lambda C, k: C


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
def _select_working_set(active, y, alpha, G, k_diag, C, perm, tol, X, sq, kernel,
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
            if alpha[t] < upper_bound(C, perm[t]) and -G[t] >= g_max:
                g_max = -G[t]
                i = t
        elif alpha[t] > 0 and G[t] >= g_max:
            g_max = G[t]
            i = t
    if i < 0:
        return i, -1, clock
    clock += 1
    col_i = kernel_column(i, active, X, sq, kernel, cache, slot_of, slot_owner,
                          last_used, col_len, clock)
    g_max2 = -np.inf
    j = -1
    best = np.inf
    for t in range(active):
        # the variables that can move down: y_t = +1 above 0, y_t = -1 below C
        if (alpha[t] > 0) if y[t] > 0 else (alpha[t] < upper_bound(C, perm[t])):
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
def _reconstruct_gradient(active, y, alpha, G, G_bar, C, perm, X, sq, kernel,
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
        if 0.0 < alpha[t] < upper_bound(C, perm[t]):
            n_free += 1
    if n_free * n > 2 * active * (n - active):
        for t in range(active, n):
            clock += 1
            col = kernel_column(t, active, X, sq, kernel, cache, slot_of, slot_owner,
                                last_used, col_len, clock)
            acc = 0.0
            for s in range(active):
                if 0.0 < alpha[s] < upper_bound(C, perm[s]):
                    acc += alpha[s] * y[s] * col[s]
            G[t] += y[t] * acc
    else:
        for s in range(active):
            if 0.0 < alpha[s] < upper_bound(C, perm[s]):
                clock += 1
                col = kernel_column(s, n, X, sq, kernel, cache, slot_of, slot_owner,
                                    last_used, col_len, clock)
                a = alpha[s] * y[s]
                for t in range(active, n):
                    G[t] += a * y[t] * col[t]
    return clock


@njit(cache=True, nogil=True)
def _is_shrinkable(t, g_max1, g_max2, y, alpha, G, C, perm):
    """LIBSVM's ``be_shrunk``: a variable at a bound whose gradient points out of
    the box by more than the current violation stays there (Fan et al., sec. 5)."""
    if alpha[t] >= upper_bound(C, perm[t]):
        return -G[t] > (g_max1 if y[t] > 0 else g_max2)
    if alpha[t] <= 0.0:
        return G[t] > (g_max2 if y[t] > 0 else g_max1)
    return False


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _shrink(active, unshrink, y, alpha, G, G_bar, k_diag, perm, C, tol, X, sq, kernel,
            cache, slot_of, slot_owner, last_used, col_len, clock):
    """LIBSVM's ``do_shrinking``: move the variables that will stay at their bound
    behind the active ones. Near the end (violation below ``10 tol``) the gradient
    is reconstructed once and every variable is active again before shrinking
    anew. Returns ``(active, unshrink, clock)``."""
    g_max1 = -np.inf  # max -y_t G_t over the variables that can move up
    g_max2 = -np.inf  # max  y_t G_t over the variables that can move down
    for t in range(active):
        box = upper_bound(C, perm[t])
        if y[t] > 0:
            if alpha[t] < box:
                g_max1 = max(g_max1, -G[t])
            if alpha[t] > 0:
                g_max2 = max(g_max2, G[t])
        else:
            if alpha[t] < box:
                g_max2 = max(g_max2, -G[t])
            if alpha[t] > 0:
                g_max1 = max(g_max1, G[t])
    if not unshrink and g_max1 + g_max2 <= 10.0 * tol:
        unshrink = True
        clock = _reconstruct_gradient(active, y, alpha, G, G_bar, C, perm, X, sq, kernel,
                                      cache, slot_of, slot_owner, last_used, col_len, clock)
        active = X.shape[0]
    t = 0
    while t < active:
        if _is_shrinkable(t, g_max1, g_max2, y, alpha, G, C, perm):
            active -= 1
            while active > t:
                if not _is_shrinkable(active, g_max1, g_max2, y, alpha, G, C, perm):
                    _swap_variables(t, active, X, sq, y, alpha, G, G_bar, k_diag, perm, cache, slot_of,
                                    slot_owner, col_len)
                    break
                active -= 1
        t += 1
    return active, unshrink, clock


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _update_alpha_pair(i, j, col_i, y, alpha, G, k_diag, c_i, c_j):
    """The two-variable step of LIBSVM's ``Solver::Solve``: the minimizer of the
    dual along ``y_i a_i + y_j a_j = const`` in closed form (curvature floored at
    ``TAU``), clipped to the box ``[0, c_i] x [0, c_j]`` while keeping that sum."""
    q_ij = y[i] * y[j] * col_i[j]
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
        if diff > c_i - c_j:
            if alpha[i] > c_i:
                alpha[i] = c_i
                alpha[j] = c_i - diff
        elif alpha[j] > c_j:
            alpha[j] = c_j
            alpha[i] = c_j + diff
    else:
        quad = k_diag[i] + k_diag[j] - 2.0 * q_ij
        quad = quad if quad > 0 else TAU
        delta = (G[i] - G[j]) / quad
        total = alpha[i] + alpha[j]
        alpha[i] -= delta
        alpha[j] += delta
        if total > c_i:
            if alpha[i] > c_i:
                alpha[i] = c_i
                alpha[j] = total - c_i
        elif alpha[j] < 0:
            alpha[j] = 0.0
            alpha[i] = total
        if total > c_j:
            if alpha[j] > c_j:
                alpha[j] = c_j
                alpha[i] = total - c_j
        elif alpha[i] < 0:
            alpha[i] = 0.0
            alpha[j] = total


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _update_gradient(active, i, j, old_i, old_j, y, alpha, G, col_i, col_j):
    """``G += Q_i (a_i - old_i) + Q_j (a_j - old_j)`` on the active variables:
    the two kernel columns are all the step changes."""
    d_i = (alpha[i] - old_i) * y[i]
    d_j = (alpha[j] - old_j) * y[j]
    for t in range(active):
        G[t] += y[t] * (col_i[t] * d_i + col_j[t] * d_j)


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _update_G_bar(i, j, old_i, old_j, c_i, c_j, y, alpha, G_bar, X, sq, kernel,
                  cache, slot_of, slot_owner, last_used, col_len, clock):
    """``G_bar`` follows the variables of the step that reach or leave their upper
    bound, with their full kernel columns (every variable, shrunk or not), as
    LIBSVM's update of ``alpha_status`` and ``G_bar``. Returns the clock."""
    n = X.shape[0]
    for v, old, c_v in ((i, old_i, c_i), (j, old_j, c_j)):
        was_upper = old >= c_v
        if was_upper != (alpha[v] >= c_v):
            clock += 1
            col = kernel_column(v, n, X, sq, kernel, cache, slot_of, slot_owner,
                                last_used, col_len, clock)
            step = c_v * y[v] if alpha[v] >= c_v else -c_v * y[v]
            for t in range(n):
                G_bar[t] += step * y[t] * col[t]
    return clock


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _calculate_rho(y, alpha, G, C, perm):
    """LIBSVM's ``calculate_rho``: the mean of ``y_t G_t`` over the free variables,
    else the middle of the interval that the variables at a bound leave feasible."""
    upper = np.inf
    lower = -np.inf
    total = 0.0
    n_free = 0
    for t in range(y.shape[0]):
        yg = y[t] * G[t]
        box = upper_bound(C, perm[t])
        if 0 < alpha[t] < box:
            n_free += 1
            total += yg
        elif (alpha[t] >= box) == (y[t] < 0):  # at C with y = -1, or at 0 with y = +1
            upper = min(upper, yg)
        else:
            lower = max(lower, yg)
    return total / n_free if n_free > 0 else (upper + lower) / 2.0


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def smo_second_order(X, sq, kernel, y, C, tol, max_iter, shrinking,
                     cache, slot_of, slot_owner, last_used, col_len, clock0, alpha, G, G_bar, k_diag, perm):
    """SMO with second-order working-set selection and shrinking on the SVM dual with a free bias.

    ``min_a 1/2 a^T Q a - e^T a`` subject to ``y^T a = 0`` and ``0 <= a_t <= C_t``,
    ``Q_ij = y_i y_j k(x_i, x_j)``, as LIBSVM solves it. ``C`` is one bound for
    every variable (a float) or one per variable (an array in the original order
    of the variables: the variable now at ``t`` has the bound ``C[perm[t]]``), as
    LIBSVM's ``C_i`` of weighted samples and classes; the two-variable step clips
    to both bounds as LIBSVM's ``Solver::Solve`` does. Each step picks the pair
    of :func:`_select_working_set` (WSS 2) and solves the two-variable problem in
    closed form, clipped to the box (:func:`_update_alpha_pair`); ``G = Q a - e``
    is kept up to date on the active variables with the two kernel columns (from
    the LRU cache, :func:`_update_gradient`). Stops when the maximal violation
    ``m(a) - M(a)`` falls below ``tol``; ``rho`` is then :func:`_calculate_rho`'s.

    With ``shrinking``, every ``min(n, 1000)`` steps the variables that will stay
    at a bound are moved behind the active ones (:func:`_shrink`) and the steps
    work on the active ones only: shorter loops and shorter kernel columns.
    ``G_bar_t = sum_{a_s = C_s} C_s Q_ts`` is kept (:func:`_update_G_bar`) so that the
    gradient of the shrunk variables can be rebuilt (:func:`_reconstruct_gradient`); optimality is only
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
                                                  X, sq, kernel, cache, slot_of, slot_owner,
                                                  last_used, col_len, clock)
        i, j, clock = _select_working_set(active, y, alpha, G, k_diag, C, perm, tol, X, sq, kernel, cache, slot_of,
                                          slot_owner, last_used, col_len, clock)
        if j < 0:
            # optimal on the active variables: optimal on all of them, or shrink again soon
            clock = _reconstruct_gradient(active, y, alpha, G, G_bar, C, perm, X, sq, kernel,
                                          cache, slot_of, slot_owner, last_used, col_len, clock)
            active = n
            i, j, clock = _select_working_set(active, y, alpha, G, k_diag, C, perm, tol, X, sq, kernel, cache,
                                              slot_of, slot_owner, last_used, col_len, clock)
            if j < 0:
                converged = True
                break
            counter = 1
        it += 1
        clock += 1
        col_i = kernel_column(i, active, X, sq, kernel, cache, slot_of, slot_owner,
                              last_used, col_len, clock)
        clock += 1
        col_j = kernel_column(j, active, X, sq, kernel, cache, slot_of, slot_owner,
                              last_used, col_len, clock)
        # col_i may have been evicted by col_j only if the cache holds a single slot
        # (it holds at least two), so both rows stay valid here
        c_i = upper_bound(C, perm[i])
        c_j = upper_bound(C, perm[j])
        old_i = alpha[i]
        old_j = alpha[j]
        _update_alpha_pair(i, j, col_i, y, alpha, G, k_diag, c_i, c_j)
        _update_gradient(active, i, j, old_i, old_j, y, alpha, G, col_i, col_j)
        if shrinking:
            clock = _update_G_bar(i, j, old_i, old_j, c_i, c_j, y, alpha, G_bar, X, sq, kernel,
                                  cache, slot_of, slot_owner, last_used, col_len, clock)
    clock = _reconstruct_gradient(active, y, alpha, G, G_bar, C, perm, X, sq, kernel,
                                  cache, slot_of, slot_owner, last_used, col_len, clock)
    rho = _calculate_rho(y, alpha, G, C, perm)
    return it, converged, clock, rho


def smo_gap(y, alpha, G, C):
    """``m(a) - M(a)``, the stopping measure of the second-order SMO (Fan, Chen & Lin).

    ``C`` is a float or the bounds of the variables in the order of ``alpha``."""
    score = -y * G
    up = np.where(y > 0, alpha < C, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < C)
    return float(score[up].max(initial=-np.inf) - score[low].min(initial=np.inf))
