"""Compact Nonlinear Maps (Yu, Kumar, Rowley & Chang, 2015, sections 4-6).

A cosine map ``Z(x) = sqrt(2/k) cos(Θ^T [x; 1])`` whose projection ``Θ`` is
learned, either jointly with a linear SVM (the classification objective of
eq. 5, Algorithm 3) or to approximate the Gaussian kernel (section 5, eq. 10).
The alternating scheme lives in :class:`LearnedCosineMap`, which is shared with
the optimized circulant map (:mod:`kernelmaps.optimized_circulant`): a subclass
only says how it projects (``P = proj(X)``) and how a gradient ``dL/dP`` flows
back to its parameters.

Gradients, for a minibatch ``A`` of ``M`` rows, ``P = proj(X_A) + b``,
``S = sin(P)`` and ``s = sqrt(2/k)``:

* classification, one-vs-rest over classes ``c`` with signs ``y_rc`` and the
  hinge active set ``a_rc = [y_rc (w_c . z_r + b_c) < 1]`` (eq. 9 summed over
  classes)::

      dL/dP_ri = (s / M) S_ri sum_c a_rc y_rc W_ic

* kernel approximation, ``E = K(X_A, X_A) - Z Z^T`` and
  ``L = (1/M^2) sum_rq E_rq^2`` (eq. 11)::

      dL/dP = (4 s / M^2) (E Z) ∘ S

and for the dense map ``dL/dΘ = [X_A, 1]^T dL/dP``.
"""

import math

import numpy as np
from numba import njit
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ._base import FeatureMap, classes_from_scores, encode_classes, one_vs_rest_code
from ._validation import (check_choice, check_float_array, check_fraction, check_input, check_n_components,
                          check_positive, clear_fitted_state)
from ._parallel import blas_single_thread
from ._fastmath import FASTMATH, row_needs_libm, trig_limit, vexp, vsincos
from ._kernels import resolve_gamma
from .pegasos import (DENSE_ACTIVE_FRACTION, PegasosSVC, active_pairs, _draw_minibatches, hinge_margins,
                      _pegasos_steps)
from .rff import _cos_features, _draw_spectral

__all__ = ["CompactNonlinearMap"]

_REFERENCE = """
    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, sections 4-5.
"""


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _cos_sin_features(P, scale, Z, S):
    """``Z <- scale cos(P)`` and ``S <- sin(P)``, sharing one range reduction.

    The forward pass of a minibatch: ``Z`` feeds the scores, ``S`` the gradient.
    A row whose arguments exceed the polynomial's range (a learned projection can
    grow) falls back to libm.

    Parameters
    ----------
    P : ndarray of shape (M, k), float64
    scale : float
    Z, S : ndarray of shape (M, k), float64, written

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eq. 4.
    """
    n, m = P.shape
    limit = trig_limit(scale)
    for r in range(n):
        row = P[r]
        if row_needs_libm(row, limit):
            for i in range(m):
                a = row[i]
                Z[r, i] = scale * math.cos(a)
                S[r, i] = math.sin(a)
        else:
            for i in range(m):
                s, c = vsincos(row[i])
                Z[r, i] = scale * c
                S[r, i] = s


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _hinge_rows_backward(S, margins, counts, n_active, signs, rows, WT, factor, G, GW, dP, active_rows,
                         pair_slot, pair_class):
    """The rows of ``dL/dP`` that are not zero, packed: returns their number ``n``.

    ``dP[q] = factor S[r] ∘ sum_c a_rc y_rc WT[c]`` for the ``q``-th row ``r``
    with an active class (``active_rows[q] = r``); the margins and counts come
    from :func:`kernelmaps.pegasos.hinge_margins`. Trained one-vs-rest weights
    leave few pairs active (3 % on letter at k = 64), so the class sum runs
    over the active pairs only; past ``DENSE_ACTIVE_FRACTION`` it is one BLAS
    product ``G WT`` instead. ``G`` (M, C), ``GW`` (M, k), ``pair_slot`` and
    ``pair_class`` (M * C) are scratch.

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eq. 9.
    """
    M, k = S.shape
    C = WT.shape[0]
    n, n_pairs = active_pairs(margins, counts, active_rows, pair_slot, pair_class)
    if n_active > DENSE_ACTIVE_FRACTION * M * C:
        for r in range(M):
            for c in range(C):
                G[r, c] = float(signs[rows[r], c]) if margins[r, c] > 0.0 else 0.0
        np.dot(G, WT, GW)
        for q in range(n):
            r = active_rows[q]
            for i in range(k):
                dP[q, i] = factor * S[r, i] * GW[r, i]
        return n
    for q in range(n):
        for i in range(k):
            dP[q, i] = 0.0
    for a in range(n_pairs):
        q = pair_slot[a]
        c = pair_class[a]
        y = float(signs[rows[active_rows[q]], c])
        for i in range(k):
            dP[q, i] += y * WT[c, i]
    for q in range(n):
        r = active_rows[q]
        for i in range(k):
            dP[q, i] = factor * S[r, i] * dP[q, i]
    return n


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _hinge_backward(S, scores, signs, W, scale, dP):
    """Gradient of the mean one-vs-rest hinge loss with respect to ``P``.

    ``dP[r, i] = (scale / M) S[r, i] sum_c a_rc y_rc W[i, c]`` with
    ``a_rc = [y_rc scores[r, c] < 1]``: the paper's eq. 9 (before the product
    with ``x``), summed over the classes whose hinge is active for row ``r``.

    Parameters
    ----------
    S : ndarray of shape (M, k), ``sin(P)``
    scores : ndarray of shape (M, C), ``Z W + b``
    signs : ndarray of shape (M, C), int8, +1 / -1
    W : ndarray of shape (k, C)
    scale : float
        ``sqrt(2/k)``.
    dP : ndarray of shape (M, k), written

    Returns
    -------
    float
        The mean hinge loss ``(1/M) sum_rc max(0, 1 - y_rc scores_rc)``.

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eq. 9.
    """
    M, k = S.shape
    C = W.shape[1]
    rows = np.arange(M)
    margins = np.empty((M, C))
    counts = np.empty(M, dtype=np.int64)
    loss, n_active = hinge_margins(scores, np.zeros(C), signs, rows, margins, counts)
    packed = np.empty((M, k))
    active_rows = np.empty(M, dtype=np.int64)
    n = _hinge_rows_backward(S, margins, counts, n_active, signs, rows, np.ascontiguousarray(W.T),
                             scale / M, np.empty((M, C)), np.empty((M, k)), packed, active_rows,
                             np.empty(M * C, dtype=np.int64), np.empty(M * C, dtype=np.int64))
    dP[:] = 0.0
    for q in range(n):
        dP[active_rows[q]] = packed[q]
    return loss / M


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _dense_hinge_sgd_steps(X, signs, W, b, theta, offset, batches, lam, paper_step, eta0, size_theta,
                          size_offset, t0):
    """Algorithm 2 for the dense map: SGD steps on ``(Θ, offset)`` with ``(W, b)`` fixed.

    For each minibatch ``A`` (a row of ``batches``), with ``s = sqrt(2/k)``::

        P = X_A Θ + offset,   Z = s cos(P),   scores = Z W + b
        dP = (s / M) sin(P) ∘ (G W^T),   G_rc = y_rc [y_rc scores_rc < 1]
        ∇Θ = X_A^T dP,   ∇offset = sum_r dP_r

    (eq. 9 summed over the classes) and then, for each of ``Θ`` and ``offset``,
    either the paper's step ``param -= ∇ / (lam t)`` (``paper_step``) or the
    RMS-normalized step ``param -= eta0 size / (rms(∇) sqrt(t)) ∇`` (none when
    ``rms(∇) = 0``), ``t`` counting from ``t0 + 1``. It is the computation of
    ``LearnedCosineMap._sgd_projection`` with ``CompactNonlinearMap``'s hooks,
    in one call: Python's per-step overhead was a third of the step. The
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
    eta0 : float
        Step of the RMS-normalized rule (unused with ``paper_step``).
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
    scores = np.empty((M, C))
    margins = np.empty((M, C))
    counts = np.empty(M, dtype=np.int64)
    G = np.empty((M, C))
    GW = np.empty((M, k))
    dP = np.empty((M, k))
    active_rows = np.empty(M, dtype=np.int64)
    pair_slot = np.empty(M * C, dtype=np.int64)
    pair_class = np.empty(M * C, dtype=np.int64)
    Xa = np.empty((M, d))
    g_theta = np.empty((d, k))
    g_offset = np.empty(k)
    for step in range(n_steps):
        t = t0 + step + 1
        rows = batches[step]
        for r in range(M):
            for j in range(d):
                Xb[r, j] = X[rows[r], j]
        np.dot(Xb, theta, P)
        for r in range(M):
            for i in range(k):
                P[r, i] += offset[i]
        _cos_sin_features(P, scale, Z, S)
        np.dot(Z, W, scores)
        _, n_active = hinge_margins(scores, b, signs, rows, margins, counts)
        n = _hinge_rows_backward(S, margins, counts, n_active, signs, rows, WT, factor, G, GW, dP,
                                 active_rows, pair_slot, pair_class)
        if n == 0:
            continue  # a zero gradient: neither rule moves
        # rows without an active class have dP = 0: leave them out of X_A^T dP
        for q in range(n):
            for j in range(d):
                Xa[q, j] = Xb[active_rows[q], j]
        np.dot(Xa[:n].T, dP[:n], g_theta)
        g_offset[:] = 0.0
        for q in range(n):
            for i in range(k):
                g_offset[i] += dP[q, i]
        if paper_step:
            step_size = lam * t
            for j in range(d):
                for i in range(k):
                    theta[j, i] -= g_theta[j, i] / step_size
            for i in range(k):
                offset[i] -= g_offset[i] / step_size
            continue
        sq = 0.0
        for j in range(d):
            for i in range(k):
                sq += g_theta[j, i] * g_theta[j, i]
        rms = math.sqrt(sq / (d * k))
        if rms > 0.0:
            coef = eta0 * size_theta / (rms * math.sqrt(t))
            for j in range(d):
                for i in range(k):
                    theta[j, i] -= coef * g_theta[j, i]
        sq = 0.0
        for i in range(k):
            sq += g_offset[i] * g_offset[i]
        rms = math.sqrt(sq / k)
        if rms > 0.0:
            coef = eta0 * size_offset / (rms * math.sqrt(t))
            for i in range(k):
                offset[i] -= coef * g_offset[i]
    return t0 + n_steps


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _kernel_residual(G, sqnorms, ZZ, gamma, E):
    """``E <- exp(-gamma ||x_r - x_q||^2) - ZZ[r, q]``; returns ``sum E^2``.

    The residual of eq. 10 on a minibatch, from the BLAS Gram matrices
    ``G = X X^T`` and ``ZZ = Z Z^T``.

    Parameters
    ----------
    G : ndarray of shape (M, M)
    sqnorms : ndarray of shape (M,), the diagonal of ``G``
    ZZ : ndarray of shape (M, M)
    gamma : float
    E : ndarray of shape (M, M), written

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eq. 10.
    """
    M = G.shape[0]
    total = 0.0
    for r in range(M):
        for q in range(M):
            d2 = max(sqnorms[r] + sqnorms[q] - 2.0 * G[r, q], 0.0)
            e = vexp(-gamma * d2) - ZZ[r, q]
            E[r, q] = e
            total += e * e
    return total


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _kernel_backward(EZ, S, factor, dP):
    """``dP <- factor (E Z) ∘ S``, with ``factor = 4 sqrt(2/k) / M^2`` (eq. 11).

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eq. 11.
    """
    M, k = S.shape
    for r in range(M):
        for i in range(k):
            dP[r, i] = factor * EZ[r, i] * S[r, i]


class LearnedCosineMap(FeatureMap):
    """Shared alternating optimization of a learned map ``sqrt(2/k) cos(proj(x) + b)``.

    Subclasses implement

    * ``_init_projection(n_features, k, gamma, rng)``: the random initial
      parameters (a list of float64 arrays), imitating RFF frequencies;
    * ``_project(X, params)``: ``proj(X)``, shape (n, k), float64;
    * ``_project_backward(X, dP, params)``: the gradients of ``sum(dP * proj(X))``
      with respect to each array of ``params``;
    * ``_store(params)``: set the fitted attributes from the learned parameters;
    * ``_prepare_projection(dtype)``, ``_project_block(X, out, projection)``: transform;

    and may override ``_hinge_sgd_projection`` to run a round of Algorithm 2
    for the classification objective in one compiled call (the dense map does).

    The offset ``b`` (the weight of the paper's constant feature, footnote 1)
    is always learned with the projection and starts as RFF's ``U[0, 2 pi)``.
    """

    kernel_family = "learned"
    benchmark = None  # needs labels: benchmarks/bench_learned_maps.py times it
    _objectives = ("classification", "kernel")

    def __init__(self, n_components=64, *, objective="classification", gamma="scale", alpha=1e-4,
                 batch_size=500, n_steps_w=100, n_steps_theta=100, max_iter=20, learning_rate=0.2,
                 validation_fraction=0.1, random_state=None):
        self.n_components = n_components
        self.objective = objective
        self.gamma = gamma
        self.alpha = alpha
        self.batch_size = batch_size
        self.n_steps_w = n_steps_w
        self.n_steps_theta = n_steps_theta
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    # -- parameters -------------------------------------------------------------
    def _check_params(self):
        self.n_components_ = check_n_components(self.n_components)
        check_choice(self.objective, "objective", self._objectives)
        lam = check_positive(self.alpha, "alpha")
        eta0 = None if self.learning_rate == "pegasos" else check_positive(self.learning_rate, "learning_rate")
        return {
            "lam": lam,
            "eta0": eta0,
            "batch": check_n_components(self.batch_size, "batch_size"),
            "T1": check_n_components(self.n_steps_w, "n_steps_w"),
            "T2": check_n_components(self.n_steps_theta, "n_steps_theta", minimum=0),
            "iters": check_n_components(self.max_iter, "max_iter", minimum=0),
            "val": check_fraction(self.validation_fraction, "validation_fraction"),
        }

    def _sgd_projection(self, X, params, p, rng, t0, gradient):
        """T2 minibatch SGD steps on the map's parameters (Algorithm 2)."""
        for step, idx in enumerate(_draw_minibatches(rng, X.shape[0], p["T2"], p["batch"])):
            _, grads = gradient(X[idx], idx)
            t = t0 + step + 1
            for param, grad, size in zip(params, grads, p["sizes"]):
                if p["eta0"] is None:
                    param -= grad / (p["lam"] * t)  # the paper's step
                else:
                    # RMS-normalized step: each array moves by eta0/sqrt(t) of its initial
                    # RMS, whatever the gradient's scale (which varies as 1/sqrt(lam) and 1/k)
                    rms = math.sqrt(float(np.mean(grad * grad)))
                    if rms > 0.0:
                        param -= (p["eta0"] * size / (rms * math.sqrt(t))) * grad
        return t0 + p["T2"]

    # -- fit --------------------------------------------------------------------
    def fit(self, X, y=None):
        """Learn the map (and, given ``y``, its linear classifier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels; required by ``objective='classification'``. With
            ``objective='kernel'`` they are optional and, when given, train a
            :class:`kernelmaps.PegasosSVC` on the learned features so that
            ``predict`` works.

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        if y is None:
            if self.objective == "classification":
                raise ValueError(
                    f"{type(self).__name__}(objective='classification') requires y to be passed, "
                    "but the target y is None"
                )
            X = check_float_array(self, X, reset=True)
        else:
            X, y = check_input(self, X, y, reset=True, ensure_min_samples=1)
            y = column_or_1d(y)
        p = self._check_params()
        self._check_memory_plan(X.shape[1])
        rng = check_random_state(self.random_state)
        X64 = np.asarray(X, dtype=np.float64)
        self.gamma_ = resolve_gamma(self.gamma, X64, "gaussian", rng)
        self.kernel_ = "gaussian"
        labels = None if y is None else encode_classes(self, y)
        n = X64.shape[0]
        order = rng.permutation(n)
        n_val = int(round(p["val"] * n))
        if n_val < 1 or n - n_val < 1:
            n_val = 0
        val, train = order[:n_val], order[n_val:]
        k = self.n_components_
        params = self._init_projection(X64.shape[1], k, self.gamma_, rng)
        params.append(rng.uniform(0.0, 2.0 * np.pi, size=k))
        p["sizes"] = [math.sqrt(float(np.mean(q * q))) for q in params]
        self.n_iter_ = p["iters"]
        # The products of a step are small (M x k x C): threaded BLAS only adds
        # synchronization, measured up to 10x slower on a busy 2-core machine.
        with blas_single_thread():
            if self.objective == "classification":
                self._fit_classification(X64[train], labels[train], X64[val], labels[val], params, p, rng)
            else:
                self._fit_kernel(X64[train], X64[val], params, p, rng)
            if y is not None and self.objective == "kernel":
                # the classification objective has its classifier already (coef_)
                self.classifier_ = PegasosSVC(
                    alpha=p["lam"], batch_size=p["batch"], max_iter=p["T1"] * (p["iters"] + 1),
                    random_state=rng,
                ).fit(self.transform(X), y)
        return self

    def _features(self, X, params):
        P = self._project(X, params)
        _cos_features(P, params[-1], math.sqrt(2.0 / self.n_components_))
        return P

    def _forward(self, Xb, params):
        P = self._project(Xb, params)
        P += params[-1]
        Z = np.empty_like(P)
        S = np.empty_like(P)
        _cos_sin_features(P, math.sqrt(2.0 / self.n_components_), Z, S)
        return Z, S

    def _backward(self, Xb, dP, params):
        grads = self._project_backward(Xb, dP, params)
        grads.append(dP.sum(axis=0))
        return grads

    def _hinge_gradient(self, Xb, signs, W, b, params):
        """Mean hinge loss of a minibatch and its gradient for each parameter array."""
        Z, S = self._forward(Xb, params)
        scores = Z @ W + b
        dP = np.empty_like(S)
        loss = _hinge_backward(S, scores, signs, W, math.sqrt(2.0 / self.n_components_), dP)
        return loss, self._backward(Xb, dP, params)

    def _kernel_gradient(self, Xb, gamma, params):
        """Kernel MSE ``(1/M^2) sum (K - Z Z^T)^2`` of a minibatch and its gradients."""
        Z, S = self._forward(Xb, params)
        M = Xb.shape[0]
        G = Xb @ Xb.T
        E = np.empty((M, M))
        total = _kernel_residual(G, np.ascontiguousarray(np.diag(G)), Z @ Z.T, gamma, E)
        dP = np.empty_like(S)
        _kernel_backward(E @ Z, S, 4.0 * math.sqrt(2.0 / self.n_components_) / (M * M), dP)
        return total / (M * M), self._backward(Xb, dP, params)

    def _fit_classification(self, X, labels, X_val, labels_val, params, p, rng):
        signs = one_vs_rest_code(len(self.classes_))[labels].astype(np.int8)
        C = signs.shape[1]
        W = np.zeros((self.n_components_, C))
        b = np.zeros(C)
        t_w = t_theta = 0
        best, history = None, []
        for it in range(p["iters"] + 1):
            # Algorithm 1: T1 Pegasos steps on (W, b) with the current map
            Z = self._features(X, params)
            batches = _draw_minibatches(rng, X.shape[0], p["T1"], p["batch"])
            _pegasos_steps(Z, signs, W, b, batches, p["lam"], t_w, True)
            t_w += p["T1"]
            # early stopping (section 6.1): keep the best map on held-out rows
            Xs, ls = (X_val, labels_val) if len(X_val) else (X, labels)
            scores = self._features(Xs, params) @ W + b
            pred = (scores[:, 0] > 0).astype(np.intp) if C == 1 else np.argmax(scores, axis=1)
            acc = float(np.mean(pred == ls))
            history.append(acc)
            if best is None or acc > best[0]:
                best = (acc, it, [q.copy() for q in params], W.copy(), b.copy())
            if it == p["iters"]:
                break
            # Algorithm 2: T2 SGD steps on the projection with W fixed
            t_theta = self._hinge_sgd_projection(X, signs, W, b, params, p, rng, t_theta)
        _, self.best_iteration_, params, self.coef_, self.intercept_ = best
        self.validation_scores_ = np.array(history)
        self._store(params)

    def _hinge_sgd_projection(self, X, signs, W, b, params, p, rng, t0):
        """Algorithm 2 for the classification objective: T2 steps with ``(W, b)`` fixed."""
        return self._sgd_projection(
            X, params, p, rng, t0,
            lambda Xb, idx: self._hinge_gradient(Xb, signs[idx], W, b, params),
        )

    def _fit_kernel(self, X, X_val, params, p, rng):
        Xs = X_val if len(X_val) else X
        Xs = Xs[: 2 * p["batch"]]
        K_val = np.exp(-self.gamma_ * _sq_distances(Xs))
        best, history, t_theta = None, [], 0
        for it in range(p["iters"] + 1):
            Z = self._features(Xs, params)
            mse = float(np.mean((K_val - Z @ Z.T) ** 2))
            history.append(mse)
            if best is None or mse < best[0]:
                best = (mse, it, [q.copy() for q in params])
            if it == p["iters"]:
                break
            t_theta = self._sgd_projection(
                X, params, p, rng, t_theta,
                lambda Xb, idx: self._kernel_gradient(Xb, self.gamma_, params),
            )
        _, self.best_iteration_, params = best
        self.validation_scores_ = np.array(history)
        self._store(params)

    # -- transform and predict -------------------------------------------------------
    def _prepare_transform(self, dtype):
        return (self._prepare_projection(dtype), self.offset_.astype(dtype),
                dtype.type(math.sqrt(2.0 / self.n_components_)))

    def _transform_block(self, X, out, context):
        projection, offset, scale = context
        self._project_block(X, out, projection)
        _cos_features(out, offset, scale)

    def decision_function(self, X):
        """Scores of the jointly trained one-vs-rest linear SVM on ``transform(X)``.

        With ``objective='kernel'`` these are the scores of the
        :class:`kernelmaps.PegasosSVC` trained on the learned features (fit with
        ``y``).

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        check_is_fitted(self)
        Z = self.transform(X)
        if self.objective == "kernel":
            if not hasattr(self, "classifier_"):
                raise ValueError("objective='kernel' was fitted without y: no classifier to predict with")
            return self.classifier_.decision_function(Z)
        scores = Z @ self.coef_.astype(Z.dtype) + self.intercept_.astype(Z.dtype)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels of the jointly trained classifier."""
        scores = self.decision_function(X)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)

    def score(self, X, y):
        """Mean accuracy of :meth:`predict`."""
        return float(np.mean(self.predict(X) == np.asarray(y)))

    def _kernel_gram(self, X, Y):
        if self.objective != "kernel":
            raise NotImplementedError(
                f"{type(self).__name__}(objective='classification') learns its own kernel "
                "Z(x).Z(y): it approximates no fixed kernel"
            )
        return super()._kernel_gram(X, Y)

    def _kernel_params(self):
        return {"kernel": "gaussian", "gamma": self.gamma_}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.objective == "classification"
        return tags


def _sq_distances(X):
    sq = np.einsum("ij,ij->i", X, X)
    return np.maximum(sq[:, None] + sq[None, :] - 2.0 * (X @ X.T), 0.0)


class CompactNonlinearMap(LearnedCosineMap):
    """Compact Nonlinear Map: a random Fourier map whose frequencies are learned.

    ``Z(x) = sqrt(2/k) cos(Θ^T [x; 1])``, with ``Θ`` of shape
    ``(n_features + 1, k)``: the last row multiplies a constant feature 1, i.e. it
    is the phase offset (the paper's footnote 1). ``Θ`` starts as RFF's draw for
    ``exp(-gamma ||x - y||^2)`` (Gaussian rows, uniform offsets) and is learned
    by the paper's Algorithm 3: ``max_iter`` rounds of ``n_steps_w`` Pegasos
    steps on the one-vs-rest weights ``W`` (k x C, Algorithm 1, reusing
    :func:`kernelmaps.pegasos.pegasos_steps`) then ``n_steps_theta`` minibatch
    SGD steps on ``Θ`` with ``W`` fixed (Algorithm 2, eq. 9 summed over the
    classes). Multi-class problems share one ``Θ``. Before each projection round
    the pair ``(Θ, W)`` is scored on a held-out ``validation_fraction`` of the
    training rows and the best is kept: early stopping, the regularizer of the
    paper's section 6.1.

    ``objective='kernel'`` (CNM-kerapp, section 5) instead minimizes
    ``sum (K(x, x') - Z(x)^T Z(x'))^2`` over the pairs of each minibatch (eq. 11)
    with the Gaussian ``K``, keeping the ``Θ`` of least held-out kernel MSE;
    ``y``, when given, then trains a :class:`kernelmaps.PegasosSVC` (same
    ``alpha``, ``batch_size`` and number of steps) on the learned features for
    ``predict``.

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
        Minibatch size M.
    n_steps_w, n_steps_theta : int, default=100
        T1 and T2.
    max_iter : int, default=20
        Rounds of Algorithm 3 (T in the paper).
    learning_rate : 'pegasos' or float, default=0.2
        Step of the projection updates (t counts projection steps over all
        rounds). ``'pegasos'`` is the paper's ``Θ <- Θ - ∇/(λ t)``; with
        λ = 1e-4 it moves ``Θ`` by thousands of radians in the first steps and
        the map collapses (measured: letter k=64, 0.04 held-out accuracy). A
        float ``eta0`` takes RMS-normalized steps: each parameter array (``Θ``'s
        frequencies, the offsets) moves by ``eta0 / sqrt(t)`` times its initial
        RMS along ``-∇ / rms(∇)``, which does not depend on the gradient's scale
        (it shrinks as 1/k and grows as 1/sqrt(λ)).
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
    validation_scores_ : ndarray
        Held-out accuracy (classification) or kernel MSE (kernel) per round.
    """

    __doc__ += _REFERENCE

    name = "cnm"
    paper = "Yu, Kumar, Rowley & Chang, Compact nonlinear maps and circulant extensions, arXiv 2015"
    test_params = {"n_components": 16, "objective": "kernel", "gamma": 0.5, "batch_size": 50,
                   "n_steps_w": 5, "n_steps_theta": 5, "max_iter": 2}

    def _init_projection(self, n_features, k, gamma, rng):
        return [_draw_spectral("gaussian", gamma, (n_features, k), rng)]

    def _project(self, X, params):
        return X @ params[0]

    def _project_backward(self, X, dP, params):
        return [X.T @ dP]

    def _hinge_sgd_projection(self, X, signs, W, b, params, p, rng, t0):
        # the generic path's computation fused into one Numba call per round
        theta, offset = params
        paper_step = p["eta0"] is None
        return _dense_hinge_sgd_steps(
            X, signs, W, b, theta, offset, _draw_minibatches(rng, X.shape[0], p["T2"], p["batch"]), p["lam"],
            paper_step, 0.0 if paper_step else p["eta0"], p["sizes"][0], p["sizes"][1], t0,
        )

    def _store(self, params):
        self.theta_ = np.vstack([params[0], params[1][None, :]])
        self.offset_ = self.theta_[-1].copy()


    def _prepare_projection(self, dtype):
        return np.ascontiguousarray(self.theta_[:-1], dtype=dtype)

    def _project_block(self, X, out, projection):
        np.matmul(X, projection, out=out)
