"""Optimized circulant nonlinear maps (Yu, Kumar, Rowley & Chang, 2015, section 8.3).

The map ``sqrt(2/k) cos(R D x + b)`` of :class:`kernelmaps.CirculantRandomFeatures`
with the circulant vectors ``r`` (and the offsets ``b``) learned by the CNM
alternating scheme (:class:`kernelmaps._maps.learned.LearnedCosineMap`). The
gradient of ``sum_i dP_i . (r ⊛ x)`` with respect to ``r`` is ``circ(x)^T dP``, a
circular correlation: the paper's eq. 17, computed by FFT in O(d log d) per row
and block, never forming a circulant matrix.
"""

import numpy as np

from ._maps.circulant import (CirculantProjection, circulant_project, circulant_spectra, circular_correlate,
                              draw_circulant)
from ._maps.learned import LearnedCosineMap

__all__ = ["OptimizedCirculantMap"]


class OptimizedCirculantMap(CirculantProjection, LearnedCosineMap):
    """Circulant nonlinear map whose circulant vectors are learned.

    ``Z(x) = sqrt(2/k) cos([circ(r_0); circ(r_1); ...] D x + b)[:k]`` with ``D``
    a fixed random ±1 diagonal, ``k > d`` concatenating ``ceil(k/d)`` circulant
    blocks and ``k < d`` keeping the first ``k`` outputs (section 8.1). The
    ``r_j`` start Gaussian, ``N(0, 2 gamma I)``, and ``b`` uniform, exactly as
    the randomized circulant map; then the CNM Algorithm 3 alternates, in
    rounds, Pegasos steps on the one-vs-rest weights with SGD steps on
    ``(r, b)``, whose gradient (eq. 17) is ``circ(D x)^T dL/dP`` per block, one
    real-FFT correlation. Early stopping on a held-out split keeps the best map.
    ``objective='kernel'`` fits ``(r, b)`` to the Gaussian kernel instead (the
    CNM-kerapp loss, eq. 10, through the same circulant gradient).

    Cost: O(k log d) per row for transform and for each gradient row; O(k)
    parameters.

    Parameters
    ----------
    n_components : int, default=64
    objective : {'classification', 'kernel'}, default='classification'
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth of the initial (randomized circulant) map's Gaussian kernel.
    alpha : float, default=1e-4
        λ of the linear SVM.
    batch_size : int, default=500
        Minibatch size M of every step.
    n_steps_w : int, default=100
        Pegasos steps on the one-vs-rest weights per round (T1).
    n_steps_theta : int, default=100
        SGD steps on ``(r, b)`` per round (T2).
    max_iter : int, default=20
        Rounds of alternation, **not steps** (unlike
        :class:`kernelmaps.PegasosSVC`'s ``max_iter``): ``n_steps_w *
        (max_iter + 1)`` Pegasos steps and ``n_steps_theta * max_iter`` steps
        on ``(r, b)`` in all.
    learning_rate : 'pegasos' or float, default=0.2
        ``'pegasos'``: the paper's ``1/(λ t)``; a float ``eta0``: RMS-normalized
        steps of ``eta0 / sqrt(t)`` relative size, the default for the reason
        given in :class:`kernelmaps.CompactNonlinearMap`.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping.
    random_state : int, RandomState or None

    Attributes
    ----------
    signs_ : ndarray of shape (n_features,)
        The ±1 diagonal D.
    circulant_vectors_ : ndarray of shape (n_blocks, n_features)
        Learned ``r`` of each block.
    offset_ : ndarray of shape (n_components,)
    coef_, intercept_, classes_, classifier_, gamma_, n_iter_, best_iteration_, validation_scores_
        As in :class:`kernelmaps.CompactNonlinearMap`.

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, sections 4 and 8.3, eq. 17.

    Examples
    --------
    Learning the circulant vectors to approximate a Gaussian kernel:

    >>> import numpy as np
    >>> from kernelmaps import OptimizedCirculantMap
    >>> X = np.random.RandomState(0).standard_normal((200, 8))
    >>> ocm = OptimizedCirculantMap(16, objective="kernel", gamma=0.05, batch_size=50, max_iter=5,
    ...                             random_state=0).fit(X)
    >>> ocm.transform(X).shape, ocm.circulant_vectors_.shape  # ceil(16 / 8) blocks of d = 8
    ((200, 16), (2, 8))
    >>> mse = ocm.validation_scores_  # held-out kernel MSE, of the random initial map first
    >>> bool(mse[ocm.best_iteration_] < mse[0] / 2)
    True
    """

    name = "optimized_circulant"
    paper = ("Yu, Kumar, Rowley & Chang, Compact nonlinear maps and circulant extensions, "
             "arXiv 2015, section 8.3")
    test_params = {"n_components": 16, "objective": "kernel", "gamma": 0.5, "batch_size": 50,
                   "n_steps_w": 5, "n_steps_theta": 5, "max_iter": 2}

    def _n_frequencies(self):
        return self.n_components_

    def _init_projection(self, n_features, k, gamma, rng):
        self.signs_, vectors = draw_circulant(n_features, k, np.sqrt(2.0 * gamma), rng)
        return [vectors]

    def _project(self, X, params):
        return np.ascontiguousarray(
            circulant_project(X * self.signs_, circulant_spectra(params[0]), self.n_components_)
        )

    def _project_backward(self, X, dP, params):
        n_blocks, d = params[0].shape
        full = np.zeros((X.shape[0], n_blocks * d))
        full[:, : self.n_components_] = dP
        # eq. 17: d/dr_j sum_i dP_ij . (r_j ⊛ D x_i) = sum_i circ(D x_i)^T dP_ij
        grad = circular_correlate(full.reshape(X.shape[0], n_blocks, d), (X * self.signs_)[:, None, :])
        return [grad.sum(axis=0)]

    def _store(self, params):
        self.circulant_vectors_, self.offset_ = params
