"""The alternating optimization of learned cosine maps (Yu, Kumar, Rowley & Chang, 2015).

A learned map ``Z(x) = sqrt(2/k) cos(proj(x) + b)`` starts as a random Fourier
map and learns its projection, jointly with a linear SVM (eq. 5, Algorithm 3)
or to approximate the Gaussian kernel (section 5, eq. 10).
:class:`LearnedCosineMap` holds the scheme once for the dense map
(:mod:`kernelmaps.cnm`) and the circulant one (:mod:`kernelmaps.optimized_circulant`):
each step takes the gradient ``dL/dP`` of a minibatch's ``P = proj(X_A) + b``
(eq. 9 for the hinge, eq. 11 for the kernel MSE), which the subclass carries
back to its parameter arrays, then one :func:`projection_step` per array.
"""

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._core.base import FeatureMap, classes_from_scores, encode_classes, one_vs_rest_code
from .._core.parallel import blas_single_thread
from .._core.validation import (check_choice, check_float_array, check_fraction, check_input, check_n_components,
                                check_positive, clear_fitted_state, dask_support, is_dask_array)
from .._kernels.bandwidth import resolve_gamma
from .._numba.fastmath import FASTMATH, row_needs_libm, trig_limit, vsincos
from .._numba.fastmath_exp import vexp
from .._solvers.pegasos_dense import DENSE_ACTIVE_FRACTION, draw_minibatches, pegasos_steps
from .._solvers.pegasos_kernels import active_pairs, hinge_margins
from ..pegasos import PegasosSVC
from .cosine import cos_features

# The held-out Gram matrix that picks the best round of objective='kernel' has
# rows^2 entries, so it takes at most this many minibatches of the held-out rows
# (10 % of a large training set would not fit in memory); two give four times
# the pairs of one step, enough to compare rounds.
_KERNEL_VALIDATION_BATCHES = 2


@dataclass(frozen=True)
class TrainingSchedule:
    """The validated training parameters of a learned map, built once per ``fit``."""

    lam: float  # λ (alpha): of the SVM objective and of the paper's step 1/(λ t)
    eta0: float | None  # relative step of the RMS-normalized rule; None: the paper's rule
    batch_size: int  # M, the rows of every minibatch
    n_steps_w: int  # Pegasos steps on the one-vs-rest weights per round (T1)
    n_steps_theta: int  # SGD steps on the projection per round (T2)
    n_rounds: int  # rounds of alternation after the initial map (max_iter, the paper's T)
    validation_fraction: float  # share of the training rows held out for early stopping

    @property
    def paper_step(self):
        """Whether the projection takes the paper's ``1/(λ t)`` steps."""
        return self.eta0 is None


@njit(cache=True, nogil=True, inline="always")
def projection_step(param, grad, t, lam, paper_step, eta0, initial_rms, grad_rms):
    """Step ``t`` (from 1) of Algorithm 2 on one array, in place: the one copy of both rules.

    The paper's rule (``paper_step``) is ``param -= grad / (lam t)``; the
    RMS-normalized one ``param -= eta0 initial_rms / (grad_rms sqrt(t)) grad``
    moves the array by ``eta0 / sqrt(t)`` of its initial RMS whatever the scale
    of the gradient, and not at all when ``grad_rms = 0``. ``param`` and
    ``grad`` are 2-D float64 (a 1-D array as one row, ``np.atleast_2d``).
    Inlined into the IR of its callers, it rounds as they do (NumPy's bits from
    Python, fastmath in :func:`kernelmaps.cnm._dense_hinge_sgd_steps`), so
    each path kept its pinned output.
    """
    rows, cols = param.shape
    if paper_step:
        step_size = lam * t
        for j in range(rows):
            for i in range(cols):
                param[j, i] -= grad[j, i] / step_size
    elif grad_rms > 0.0:
        coef = eta0 * initial_rms / (grad_rms * math.sqrt(t))
        for j in range(rows):
            for i in range(cols):
                param[j, i] -= coef * grad[j, i]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def cos_sin_features(P, scale, Z, S):
    """``Z <- scale cos(P)``, ``S <- sin(P)`` (all (M, k) float64), sharing one range reduction.

    The forward pass of a minibatch: ``Z`` feeds the scores, ``S`` the gradient.
    A row beyond the polynomial's range (a learned projection can grow) takes libm.
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
def hinge_rows_backward(S, margins, counts, n_active, signs, rows, WT, factor, G, GW, dP, active_rows,
                        pair_slot, pair_class):
    """The rows of the hinge's ``dL/dP`` (eq. 9) that are not zero, packed: returns their number ``n``.

    ``dP[q] = factor S[r] ∘ sum_c a_rc y_rc WT[c]`` for the ``q``-th row ``r``
    with an active class (``active_rows[q] = r``); the margins and counts come
    from :func:`kernelmaps._solvers.pegasos_kernels.hinge_margins`. Trained one-vs-rest weights
    leave few pairs active (3 % on letter at k = 64), so the class sum runs
    over the active pairs only; past ``DENSE_ACTIVE_FRACTION`` it is one BLAS
    product ``G WT`` instead. ``G`` (M, C), ``GW`` (M, k), ``pair_slot`` and
    ``pair_class`` (M * C) are scratch.
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
def _kernel_residual(G, sqnorms, ZZ, gamma, E):
    """``E <- exp(-gamma ||x_r - x_q||^2) - ZZ[r, q]``, the residual of eq. 10; returns ``sum E^2``.

    From the BLAS Gram matrices ``G = X X^T``, its diagonal ``sqnorms`` and ``ZZ = Z Z^T``.
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
    """``dP <- factor (E Z) ∘ S``, with ``factor = 4 sqrt(2/k) / M^2`` (eq. 11)."""
    M, k = S.shape
    for r in range(M):
        for i in range(k):
            dP[r, i] = factor * EZ[r, i] * S[r, i]


class LearnedCosineMap(FeatureMap):
    """Shared alternating optimization of a learned map ``sqrt(2/k) cos(proj(x) + b)``.

    Subclasses implement ``_init_projection(n_features, k, gamma, rng)`` (the
    random initial parameters, a list of float64 arrays imitating RFF
    frequencies), ``_project(X, params)`` (``proj(X)``, (n, k) float64),
    ``_project_backward(X, dP, params)`` (the gradients of ``sum(dP * proj(X))``
    for each array of ``params``), ``_store(params)`` (the fitted attributes)
    and, for transform, ``_prepare_projection(dtype)`` and
    ``_project_block(X, out, projection)``. They may override
    ``_hinge_sgd_projection`` to run a round of Algorithm 2 in one compiled call
    (the dense map does). The offset ``b`` (the weight of the paper's constant
    feature, footnote 1) is learned with the projection from RFF's ``U[0, 2 pi)``.
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

    def _training_schedule(self):
        """The training parameters, validated (in the order their errors are reported)."""
        check_choice(self.objective, "objective", self._objectives)
        lam = check_positive(self.alpha, "alpha")
        eta0 = None if self.learning_rate == "pegasos" else check_positive(self.learning_rate, "learning_rate")
        return TrainingSchedule(
            lam=lam, eta0=eta0,
            batch_size=check_n_components(self.batch_size, "batch_size"),
            n_steps_w=check_n_components(self.n_steps_w, "n_steps_w"),
            n_steps_theta=check_n_components(self.n_steps_theta, "n_steps_theta", minimum=0),
            n_rounds=check_n_components(self.max_iter, "max_iter", minimum=0),
            validation_fraction=check_fraction(self.validation_fraction, "validation_fraction"),
        )

    def _sgd_projection(self, X, params, initial_rms, schedule, rng, t0, gradient):
        """One round of Algorithm 2: ``n_steps_theta`` steps on each array of ``params``.

        ``gradient(X_A, A)`` gives a minibatch's loss and gradients; ``t0`` steps
        were taken before. Returns ``t0 + n_steps_theta``.
        """
        batches = draw_minibatches(rng, X.shape[0], schedule.n_steps_theta, schedule.batch_size)
        eta0 = 0.0 if schedule.paper_step else schedule.eta0
        for t, rows in enumerate(batches, start=t0 + 1):
            _, grads = gradient(X[rows], rows)
            for param, grad, size in zip(params, grads, initial_rms):
                grad_rms = 0.0 if schedule.paper_step else math.sqrt(float(np.mean(grad * grad)))
                projection_step(np.atleast_2d(param), np.atleast_2d(grad), t, schedule.lam,
                                schedule.paper_step, eta0, size, grad_rms)
        return t0 + schedule.n_steps_theta

    def fit(self, X, y=None):
        """Learn the map (and, given ``y``, its linear classifier).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels: required by ``objective='classification'``; optional with
            ``objective='kernel'``, where they train a :class:`kernelmaps.PegasosSVC`
            on the learned features for ``predict``.

        Returns
        -------
        self : object
            The map, with its projection and offsets learned.
        """
        if is_dask_array(X):
            return dask_support().fit(self, X, y)
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
        self.n_components_ = check_n_components(self.n_components)
        schedule = self._training_schedule()
        self._check_memory_plan(X.shape[1])
        rng = check_random_state(self.random_state)
        X64 = np.asarray(X, dtype=np.float64)
        self.gamma_ = resolve_gamma(self.gamma, X64, "gaussian", rng)
        self.kernel_ = "gaussian"
        labels = None if y is None else encode_classes(self, y)
        order = rng.permutation(X64.shape[0])
        n_val = int(round(schedule.validation_fraction * len(order)))
        n_val = n_val if 0 < n_val < len(order) else 0  # no split that leaves a side empty
        val, train = order[:n_val], order[n_val:]
        k = self.n_components_
        params = self._init_projection(X64.shape[1], k, self.gamma_, rng)
        params.append(rng.uniform(0.0, 2.0 * np.pi, size=k))
        initial_rms = tuple(math.sqrt(float(np.mean(q * q))) for q in params)
        self.n_iter_ = schedule.n_rounds
        # The products of a step are small (M x k x C): threaded BLAS only adds
        # synchronization, measured up to 10x slower on a busy 2-core machine.
        with blas_single_thread():
            if self.objective == "classification":
                self._fit_classification(X64[train], labels[train], X64[val], labels[val], params, initial_rms,
                                         schedule, rng)
            else:
                self._fit_kernel(X64[train], X64[val], params, initial_rms, schedule, rng)
            if y is not None and self.objective == "kernel":
                # the classification objective has its classifier already (coef_)
                self.classifier_ = PegasosSVC(
                    alpha=schedule.lam, batch_size=schedule.batch_size,
                    max_iter=schedule.n_steps_w * (schedule.n_rounds + 1), random_state=rng,
                ).fit(self.transform(X), y)
        return self

    def _features(self, X, params):
        P = self._project(X, params)
        cos_features(P, params[-1], math.sqrt(2.0 / self.n_components_))
        return P

    def _forward(self, Xb, params):
        P = self._project(Xb, params)
        P += params[-1]
        Z, S = np.empty_like(P), np.empty_like(P)
        cos_sin_features(P, math.sqrt(2.0 / self.n_components_), Z, S)
        return Z, S

    def _backward(self, Xb, dP, params):
        return self._project_backward(Xb, dP, params) + [dP.sum(axis=0)]  # the offset's gradient last

    def _hinge_gradient(self, Xb, signs, W, b, params):
        """Mean one-vs-rest hinge loss of a minibatch (``signs``: its ±1 targets) and its gradients."""
        Z, S = self._forward(Xb, params)
        (M, k), C = S.shape, W.shape[1]
        rows = np.arange(M)
        margins, counts = np.empty((M, C)), np.empty(M, dtype=np.int64)
        loss, n_active = hinge_margins(Z @ W + b, np.zeros(C), signs, rows, margins, counts)
        packed, active_rows = np.empty((M, k)), np.empty(M, dtype=np.int64)
        n = hinge_rows_backward(S, margins, counts, n_active, signs, rows, np.ascontiguousarray(W.T),
                                math.sqrt(2.0 / k) / M, np.empty((M, C)), np.empty((M, k)), packed, active_rows,
                                np.empty(M * C, dtype=np.int64), np.empty(M * C, dtype=np.int64))
        dP = np.zeros_like(S)
        dP[active_rows[:n]] = packed[:n]
        return loss / M, self._backward(Xb, dP, params)

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

    def _fit_classification(self, X, labels, X_val, labels_val, params, initial_rms, schedule, rng):
        signs = one_vs_rest_code(len(self.classes_))[labels].astype(np.int8)
        C = signs.shape[1]
        W, b = np.zeros((self.n_components_, C)), np.zeros(C)
        Xs, ls = (X_val, labels_val) if len(X_val) else (X, labels)
        t_w = t_theta = 0
        best, history = None, []
        for round_ in range(schedule.n_rounds + 1):
            # Algorithm 1: n_steps_w Pegasos steps on (W, b) with the current map
            Z = self._features(X, params)
            batches = draw_minibatches(rng, X.shape[0], schedule.n_steps_w, schedule.batch_size)
            pegasos_steps(Z, signs, W, b, batches, schedule.lam, t_w, True)
            t_w += schedule.n_steps_w
            # early stopping (section 6.1): keep the best map on held-out rows
            scores = self._features(Xs, params) @ W + b
            pred = (scores[:, 0] > 0).astype(np.intp) if C == 1 else np.argmax(scores, axis=1)
            acc = float(np.mean(pred == ls))
            history.append(acc)
            if best is None or acc > best[0]:
                best = (acc, round_, [q.copy() for q in params], W.copy(), b.copy())
            if round_ == schedule.n_rounds:
                break  # a projection round now would never be scored
            # Algorithm 2: n_steps_theta SGD steps on the projection with W fixed
            t_theta = self._hinge_sgd_projection(X, signs, W, b, params, initial_rms, schedule, rng, t_theta)
        _, self.best_iteration_, params, self.coef_, self.intercept_ = best
        self.validation_scores_ = np.array(history)
        self._store(params)

    def _hinge_sgd_projection(self, X, signs, W, b, params, initial_rms, schedule, rng, t0):
        """Algorithm 2 for the classification objective: a round of steps with ``(W, b)`` fixed."""
        return self._sgd_projection(
            X, params, initial_rms, schedule, rng, t0,
            lambda Xb, rows: self._hinge_gradient(Xb, signs[rows], W, b, params),
        )

    def _fit_kernel(self, X, X_val, params, initial_rms, schedule, rng):
        Xs = (X_val if len(X_val) else X)[: _KERNEL_VALIDATION_BATCHES * schedule.batch_size]
        sq = np.einsum("ij,ij->i", Xs, Xs)
        K_val = np.exp(-self.gamma_ * np.maximum(sq[:, None] + sq[None, :] - 2.0 * (Xs @ Xs.T), 0.0))
        best, history, t_theta = None, [], 0
        for round_ in range(schedule.n_rounds + 1):
            Z = self._features(Xs, params)
            mse = float(np.mean((K_val - Z @ Z.T) ** 2))
            history.append(mse)
            if best is None or mse < best[0]:
                best = (mse, round_, [q.copy() for q in params])
            if round_ == schedule.n_rounds:
                break
            t_theta = self._sgd_projection(
                X, params, initial_rms, schedule, rng, t_theta,
                lambda Xb, rows: self._kernel_gradient(Xb, self.gamma_, params),
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
        cos_features(out, offset, scale)

    def decision_function(self, X):
        """Scores of the jointly trained one-vs-rest linear SVM on ``transform(X)``.

        With ``objective='kernel'``, those of the :class:`kernelmaps.PegasosSVC`
        fitted on the learned features (when ``fit`` had ``y``).

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
