"""Pegasos: a minibatch primal sub-gradient solver for the linear SVM."""

import math

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import (FLOAT_DTYPES, RegisteredEstimator, check_n_components, check_positive, classes_from_scores,
                    encode_classes, one_vs_rest_code)
from ._fastmath import FASTMATH
from ._parallel import blas_single_thread

__all__ = ["PegasosSVC", "pegasos_steps"]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def pegasos_steps(Z, signs, W, b, batches, lam, t0, fit_intercept):
    """Run Pegasos steps in place on one-vs-rest weights.

    For each minibatch ``A`` (a row of ``batches``) and each class ``c``, with
    ``A+`` the rows whose hinge loss is positive and ``eta = 1 / (lam t)``::

        w_c <- (1 - eta lam) w_c + (eta / |A|) sum_{i in A+} y_ic z_i
        w_c <- min(1, (1 / sqrt(lam)) / ||w_c||) w_c

    With ``fit_intercept`` the bias ``b[c]`` is the weight of a constant feature 1:
    it is shrunk and projected with ``w_c``. (An unregularized bias under steps of
    ``1/(lam t)`` diverges for small ``lam``.) The sub-gradient of all classes is
    one BLAS product per step.

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

    References
    ----------
    Shalev-Shwartz, S., Singer, Y., Srebro, N. and Cotter, A. Pegasos: primal
    estimated sub-gradient solver for SVM. Mathematical Programming 127, 2011.
    Yu, F. X. et al. Compact nonlinear maps and circulant extensions. 2015,
    Algorithm 1.
    """
    n_steps, m = batches.shape
    D, C = W.shape
    radius2 = 1.0 / lam
    batch = np.empty((m, D))
    active = np.empty((C, m))
    for step in range(n_steps):
        t = t0 + step + 1
        eta = 1.0 / (lam * t)
        for r in range(m):
            src = Z[batches[step, r]]
            for j in range(D):
                batch[r, j] = src[j]
        scores = np.dot(batch, W)
        for r in range(m):
            i = batches[step, r]
            for c in range(C):
                y = signs[i, c]
                active[c, r] = y if y * (scores[r, c] + b[c]) < 1.0 else 0.0
        grad = np.dot(active, batch)
        shrink = 1.0 - eta * lam
        step_size = eta / m
        for c in range(C):
            gb = 0.0
            for r in range(m):
                gb += active[c, r]
            bc = shrink * b[c] + step_size * gb if fit_intercept else 0.0
            norm2 = bc * bc
            for j in range(D):
                w = shrink * W[j, c] + step_size * grad[c, j]
                W[j, c] = w
                norm2 += w * w
            if norm2 > radius2:
                factor = math.sqrt(radius2 / norm2)
                bc *= factor
                for j in range(D):
                    W[j, c] *= factor
            b[c] = bc


class PegasosSVC(ClassifierMixin, RegisteredEstimator, BaseEstimator):
    """Linear SVM trained by minibatch Pegasos, one-vs-rest for multi-class.

    Minimizes ``lam/2 (||w||^2 + b^2) + mean_i max(0, 1 - y_i (w . z_i + b))`` per
    class by minibatch sub-gradient steps of size ``1/(lam t)``, each followed by
    the projection onto the ball of radius ``1/sqrt(lam)`` (the CNM paper's
    Algorithm 1). The intercept is the weight of a constant feature. The minibatches are drawn in Python from ``random_state``, so the
    result does not depend on the thread count.

    Parameters
    ----------
    alpha : float, default=1e-4
        The regularization ``lam``.
    batch_size : int, default=500
        Minibatch size M (the CNM paper's setting).
    max_iter : int, default=2000
        Number of Pegasos steps.
    fit_intercept : bool, default=True
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)
    n_iter_ : int

    References
    ----------
    Shalev-Shwartz, S., Singer, Y., Srebro, N. and Cotter, A. Pegasos: primal
    estimated sub-gradient solver for SVM. Mathematical Programming 127, 2011.
    Yu, F. X. et al. Compact nonlinear maps and circulant extensions. 2015,
    Algorithm 1.
    """

    name = "pegasos"
    kind = "learner"
    paper = "Shalev-Shwartz et al., Pegasos, Math. Programming 2011; Yu et al. 2015, Alg. 1"
    kernel_family = "linear"
    test_params = {"alpha": 1e-3, "batch_size": 32, "max_iter": 200}

    def __init__(self, alpha=1e-4, *, batch_size=500, max_iter=2000, fit_intercept=True,
                 random_state=None):
        self.alpha = alpha
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def fit(self, Z, y):
        """Train on features ``Z`` and labels ``y``."""
        Z, y = validate_data(self, Z, y, reset=True, dtype=list(FLOAT_DTYPES), order="C")
        lam = check_positive(self.alpha, "alpha")
        batch = check_n_components(self.batch_size, "batch_size")
        n_steps = check_n_components(self.max_iter, "max_iter")
        labels = encode_classes(self, y)
        signs = one_vs_rest_code(len(self.classes_))[labels].astype(np.int8)
        n_out = signs.shape[1]
        rng = check_random_state(self.random_state)
        batches = rng.randint(0, Z.shape[0], size=(n_steps, min(batch, Z.shape[0]))).astype(np.int64)
        W = np.zeros((Z.shape[1], n_out))
        b = np.zeros(n_out)
        # The per-step products are small (M x D by D x C): threaded BLAS spends
        # more on hand-offs than on work (measured about 10x slower on 2 cores).
        with blas_single_thread():
            pegasos_steps(Z, np.ascontiguousarray(signs), W, b, batches, lam, 0, bool(self.fit_intercept))
        self.coef_, self.intercept_, self.n_iter_ = W, b, n_steps
        return self

    def decision_function(self, Z):
        """``Z @ coef_ + intercept_``."""
        check_is_fitted(self)
        Z = validate_data(self, Z, reset=False, dtype=list(FLOAT_DTYPES), order="C")
        scores = Z @ self.coef_ + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, Z):
        """Class with the largest score."""
        scores = self.decision_function(Z)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)
