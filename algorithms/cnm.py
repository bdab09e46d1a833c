"""Compact Nonlinear Maps (Yu, Kumar, Rowley & Chang, 2015, sections 4-6).

A cosine map ``Z(x) = sqrt(2/k) cos(Θ^T [x; 1])`` whose dense projection ``Θ`` is
learned, jointly with a linear SVM (eq. 5, Algorithm 3) or to approximate the
Gaussian kernel (section 5, eq. 10). The alternating scheme, its gradients and
its step rules are shared with the optimized circulant map and live in
:mod:`kernelmaps._maps.learned`; this module adds the dense projection,
``dL/dΘ = [X_A, 1]^T dL/dP``, and a round of ``Θ`` steps fused into one Numba call.
"""

import math

import numpy as np
from numba import njit

from ._maps.learned import LearnedCosineMap, cos_sin_features, hinge_rows_backward, projection_step
from ._maps.spectral import draw_spectral
from ._numba.fastmath import FASTMATH
from ._solvers.pegasos_dense import draw_minibatches
from ._solvers.pegasos_kernels import hinge_buffers, hinge_margins

__all__ = ["CompactNonlinearMap"]


@njit(cache=True, nogil=True, inline="always")
def _rms(values):
    """Root mean square of a 2-D array: ``rms(∇)`` of the RMS-normalized step.

    Inlined, it sums with the fastmath flags of the fused round, row by row as
    that round always has (the generic path takes NumPy's mean).
    """
    rows, cols = values.shape
    sq = 0.0
    for j in range(rows):
        for i in range(cols):
            sq += values[j, i] * values[j, i]
    return math.sqrt(sq / (rows * cols))


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _project_minibatch(X, rows, theta, offset, Xb, P):
    """The forward projection of a minibatch: ``Xb = X_A`` (its rows, contiguous
    for BLAS) and ``P = X_A Θ + offset``."""
    M, d = Xb.shape
    k = P.shape[1]
    for r in range(M):
        for j in range(d):
            Xb[r, j] = X[rows[r], j]
    np.dot(Xb, theta, P)
    for r in range(M):
        for i in range(k):
            P[r, i] += offset[i]


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _projection_gradients(Xb, dP, active_rows, n, Xa, g_theta, g_offset):
    """``∇Θ = X_A^T dP`` and ``∇offset = sum_r dP_r`` over the ``n`` rows with an
    active class (``dP[:n]``, packed): the other rows have ``dP = 0`` and are left
    out of the product."""
    d = Xb.shape[1]
    k = dP.shape[1]
    for q in range(n):
        for j in range(d):
            Xa[q, j] = Xb[active_rows[q], j]
    np.dot(Xa[:n].T, dP[:n], g_theta)
    g_offset[:] = 0.0
    for q in range(n):
        for i in range(k):
            g_offset[i] += dP[q, i]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _dense_hinge_sgd_steps(X, signs, W, b, theta, offset, batches, lam, paper_step, eta0, size_theta,
                          size_offset, t0):
    """Algorithm 2 for the dense map: SGD steps on ``(Θ, offset)`` with ``(W, b)`` fixed.

    For each minibatch ``A`` (a row of ``batches``), with ``s = sqrt(2/k)``::

        P = X_A Θ + offset,   Z = s cos(P),   scores = Z W + b
        dP = (s / M) sin(P) ∘ (G W^T),   G_rc = y_rc [y_rc scores_rc < 1]
        ∇Θ = X_A^T dP,   ∇offset = sum_r dP_r

    (eq. 9 summed over the classes), then one
    :func:`kernelmaps._maps.learned.projection_step` on each of ``Θ`` and
    ``offset``, ``t`` counting from ``t0 + 1``. It is the computation of
    ``LearnedCosineMap._sgd_projection`` with ``CompactNonlinearMap``'s hooks,
    in one call, because Python's overhead per step would be a third of the step. The
    products are BLAS; ``G W^T`` and ``X_A^T dP`` only touch the active pairs
    and the rows with an active class.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
    signs : ndarray of shape (n, C), int8, +1 / -1
    W : ndarray of shape (k, C), float64
    b : ndarray of shape (C,), float64
    theta : ndarray of shape (d, k), float64, updated in place
    offset : ndarray of shape (k,), float64, updated in place
    batches : ndarray of shape (T, M), int64 row indices
    lam : float
    paper_step : bool
        The paper's ``1/(lam t)`` step rather than the RMS-normalized one.
    eta0 : float
        Relative step of the RMS-normalized rule (unused with ``paper_step``).
    size_theta, size_offset : float
        The initial RMS of ``theta`` and ``offset``.
    t0 : int
        Steps already taken.

    Returns
    -------
    int
        ``t0 + T``.

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, Algorithm 2 and eq. 9.
    """
    n_steps, M = batches.shape
    d, k = theta.shape
    C = W.shape[1]
    scale = math.sqrt(2.0 / k)
    factor = scale / M
    WT = np.ascontiguousarray(W.T)
    Xb = np.empty((M, d))
    P = np.empty((M, k))
    Z = np.empty((M, k))
    S = np.empty((M, k))
    scores, margins, counts, active_rows, pair_slot, pair_class = hinge_buffers(M, C)
    G = np.empty((M, C))
    GW = np.empty((M, k))
    dP = np.empty((M, k))
    Xa = np.empty((M, d))
    g_theta = np.empty((d, k))
    g_offset = np.empty(k)
    offset_row = offset.reshape(1, k)  # the step rule takes 2-D arrays: the offsets as one row
    g_offset_row = g_offset.reshape(1, k)
    for step in range(n_steps):
        t = t0 + step + 1
        rows = batches[step]
        _project_minibatch(X, rows, theta, offset, Xb, P)
        cos_sin_features(P, scale, Z, S)
        np.dot(Z, W, scores)
        _, n_active = hinge_margins(scores, b, signs, rows, margins, counts)
        n = hinge_rows_backward(S, margins, counts, n_active, signs, rows, WT, factor, G, GW, dP,
                                active_rows, pair_slot, pair_class)
        if n == 0:
            continue  # a zero gradient: neither rule moves
        _projection_gradients(Xb, dP, active_rows, n, Xa, g_theta, g_offset)
        projection_step(theta, g_theta, t, lam, paper_step, eta0, size_theta,
                        0.0 if paper_step else _rms(g_theta))
        projection_step(offset_row, g_offset_row, t, lam, paper_step, eta0, size_offset,
                        0.0 if paper_step else _rms(g_offset_row))
    return t0 + n_steps


class CompactNonlinearMap(LearnedCosineMap):
    """Compact Nonlinear Map: a random Fourier map whose frequencies are learned.

    ``Z(x) = sqrt(2/k) cos(Θ^T [x; 1])``, with ``Θ`` of shape
    ``(n_features + 1, k)``: the last row multiplies a constant feature 1, i.e. it
    is the phase offset (the paper's footnote 1). ``Θ`` starts as RFF's draw for
    ``exp(-gamma ||x - y||^2)`` (Gaussian rows, uniform offsets) and is learned
    by the paper's Algorithm 3, in rounds: ``n_steps_w`` Pegasos steps on the
    one-vs-rest weights ``W`` (k x C, Algorithm 1) with ``Θ`` fixed, then
    ``n_steps_theta`` minibatch SGD steps on ``Θ`` with ``W`` fixed
    (Algorithm 2, eq. 9 summed over the classes). Multi-class problems share one
    ``Θ``. After each Pegasos phase the pair ``(Θ, W)`` is scored on a held-out
    ``validation_fraction`` of the training rows and the best is kept: early
    stopping, the regularizer of the paper's section 6.1.

    ``objective='kernel'`` (CNM-kerapp, section 5) instead minimizes
    ``sum (K(x, x') - Z(x)^T Z(x'))^2`` over the pairs of each minibatch (eq. 11)
    with the Gaussian ``K``, keeping the ``Θ`` of least held-out kernel MSE;
    ``y``, when given, then trains a :class:`kernelmaps.PegasosSVC` (same
    ``alpha`` and ``batch_size``, ``n_steps_w * (max_iter + 1)`` steps) on the
    learned features for ``predict``.

    **The default step differs from the paper's.** Algorithm 2 steps
    ``Θ <- Θ - ∇/(λ t)`` (``learning_rate='pegasos'``), Pegasos's schedule for
    an objective that is λ-strongly convex, as the SVM is in ``W``. The
    objective has no λ term in ``Θ``, so with the paper's λ = 1e-4 the first
    steps move ``Θ`` by thousands of radians and the map collapses to noise
    (measured: letter, k = 64, 0.04 held-out accuracy). The default ``learning_rate=0.2`` takes
    RMS-normalized steps instead: each parameter array (``Θ``'s frequencies,
    the offsets) moves by ``0.2 / sqrt(t)`` times its initial RMS along
    ``-∇ / rms(∇)``, a step that does not depend on the gradient's scale
    (which shrinks as 1/k and grows as 1/sqrt(λ)).

    The per-step element-wise work (sin/cos, hinge active sets, kernel
    residuals) is in serial Numba kernels; the products ``X Θ``, ``Z W``,
    ``[X, 1]^T dP`` are BLAS. With the classification objective a whole round
    of ``Θ`` steps is one call of :func:`_dense_hinge_sgd_steps`, and the
    products with the hinge active set (few pairs, once ``W`` is trained) only
    visit its pairs. Cost per step: O(M k (d + C)) (classification) or
    O(M^2 (d + k)) (kernel); transform O(k d) per row, as RFF.

    Parameters
    ----------
    n_components : int, default=64
        k, the width of the map.
    objective : {'classification', 'kernel'}, default='classification'
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth of the Gaussian kernel that initializes ``Θ`` (and that
        ``objective='kernel'`` approximates); ``'knn50'`` is the paper's rule.
    alpha : float, default=1e-4
        λ of ``λ/2 ||w||^2 + mean hinge``.
    batch_size : int, default=500
        Minibatch size M of every step.
    n_steps_w : int, default=100
        Pegasos steps on ``W`` per round (the paper's T1).
    n_steps_theta : int, default=100
        SGD steps on ``Θ`` per round (the paper's T2).
    max_iter : int, default=20
        Rounds of alternation (the paper's T), **not steps**: unlike
        :class:`kernelmaps.PegasosSVC`'s ``max_iter``, which counts Pegasos
        steps. A fit takes ``n_steps_w * (max_iter + 1)`` Pegasos steps (a last
        phase fits ``W`` to the final ``Θ``) and ``n_steps_theta * max_iter``
        steps on ``Θ``; ``max_iter=0`` keeps the random initial map.
    learning_rate : 'pegasos' or float, default=0.2
        Step of the ``Θ`` updates, ``t`` counting ``Θ`` steps over all rounds:
        ``'pegasos'``, the paper's ``Θ <- Θ - ∇/(λ t)``, or a float ``eta0``
        for RMS-normalized steps of ``eta0 / sqrt(t)`` relative size (see
        above).
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping (0: select on
        the training rows).
    random_state : int, RandomState or None

    Attributes
    ----------
    theta_ : ndarray of shape (n_features + 1, n_components)
        Learned ``Θ``; the last row is the offset.
    offset_ : ndarray of shape (n_components,)
        ``theta_[-1]``.
    coef_ : ndarray of shape (n_components, n_outputs)
        One-vs-rest weights W (classification objective).
    intercept_ : ndarray of shape (n_outputs,)
    classes_ : ndarray
    classifier_ : PegasosSVC
        The classifier of ``objective='kernel'`` fitted with ``y``.
    gamma_ : float
    n_iter_ : int
        Rounds of alternation run (``max_iter``).
    best_iteration_ : int
        The round whose map was kept (0: the initial random map).
    validation_scores_ : ndarray of shape (max_iter + 1,)
        Held-out accuracy (classification) or kernel MSE (kernel) of the
        initial map and after each round.

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, sections 4-5.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import CompactNonlinearMap
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-2, 2, size=(300, 2))
    >>> y = (np.hypot(X[:, 0], X[:, 1]) < 1.2).astype(int)  # a disc: not linearly separable
    >>> cnm = CompactNonlinearMap(8, gamma=1.0, batch_size=100, max_iter=5, random_state=0)
    >>> Z = cnm.fit(X, y).transform(X)
    >>> Z.shape, cnm.theta_.shape, cnm.validation_scores_.shape
    ((300, 8), (3, 8), (6,))
    >>> cnm.score(X, y) > 0.9
    True
    """

    name = "cnm"
    paper = "Yu, Kumar, Rowley & Chang, Compact nonlinear maps and circulant extensions, arXiv 2015"
    test_params = {"n_components": 16, "objective": "kernel", "gamma": 0.5, "batch_size": 50,
                   "n_steps_w": 5, "n_steps_theta": 5, "max_iter": 2}

    def _init_projection(self, n_features, k, gamma, rng):
        return [draw_spectral("gaussian", gamma, (n_features, k), rng)]

    def _project(self, X, params):
        return X @ params[0]

    def _project_backward(self, X, dP, params):
        return [X.T @ dP]

    def _hinge_sgd_projection(self, X, signs, W, b, params, initial_rms, schedule, rng, t0):
        # the generic round, fused into one Numba call
        theta, offset = params
        batches = draw_minibatches(rng, X.shape[0], schedule.n_steps_theta, schedule.batch_size)
        eta0 = 0.0 if schedule.paper_step else schedule.eta0
        return _dense_hinge_sgd_steps(X, signs, W, b, theta, offset, batches, schedule.lam,
                                      schedule.paper_step, eta0, initial_rms[0], initial_rms[1], t0)

    def _store(self, params):
        self.theta_ = np.vstack([params[0], params[1][None, :]])
        self.offset_ = self.theta_[-1].copy()

    def _prepare_projection(self, dtype):
        return np.ascontiguousarray(self.theta_[:-1], dtype=dtype)

    def _project_block(self, X, out, projection):
        np.matmul(X, projection, out=out)
