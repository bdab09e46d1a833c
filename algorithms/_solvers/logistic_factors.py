"""The preconditioner factors of the Nyström logistic machine's Newton steps.

Each Newton step of :func:`kernelmaps._solvers.logistic_newton.nystroem_logistic_newton`
is preconditioned by ``B = T^{-1} A^{-1}``, ``A = chol(T D T^T / m + lam I)`` for the
centres' weights ``D`` at the step (their geometric mean over the columns,
:func:`shared_weights`). :class:`StepFactors` computes ``A``: in float32 where the
ridge stands well above float32's rounding of ``T D T^T / m``
(:func:`factors_in_single`), otherwise in float64; and where a factorization costs many
passes, the steps at one ridge keep one (:func:`reuses_factors`).
"""

import numpy as np

from .cholesky import BLOCK_ORDER
from .falkon import ridge_cholesky
from .logistic_passes import stable_sigmoid

#: A step at the ridge of the step before keeps that step's factor ``A`` when factoring costs
#: more than this many times a pass's products, in floating-point operations (see
#: :func:`reuses_factors`).
FACTOR_REUSE_RATIO = 10.0

#: A step's factor is computed in float32 when the ridge is at least this many times float32's rounding
#: of ``T D T^T / m`` (see :func:`factors_in_single`).
SINGLE_FACTOR_MARGIN = 10.0


def reuses_factors(n, m, k):
    """Whether the Newton steps at one ridge share one preconditioner factor ``A``.

    A factor (``T D T^T`` by ``syrk``, then Cholesky) takes about ``4 m^3 / 3``
    operations, a pass's two products ``4 n m k``. A stale factor, from the
    centres' weights at the ridge's first step, costs later steps a few CG passes.
    On 50 000 binary rows and 2000 centres (Zen 3 EPYC, 2 cores; ratio 27) a
    factorization took 0.13 s and a kept-block pass 0.04 s: keeping the factor
    cost 5 passes over 4 steps and took the fit from 5.03 s to 4.50 s (medians of
    6, alternating processes). On letter (12 000 rows, 26 classes, the same centres; ratio 4) a pass took
    about 0.1 s, and keeping the factor cost 5 passes over 3 steps for no gain.
    """
    return 4.0 * m ** 3 / 3.0 >= FACTOR_REUSE_RATIO * 4.0 * n * m * k


def factors_in_single(penalty, weights, column_squares):
    """Whether a step's factor ``A`` may be computed in float32: when ``penalty`` is at least
    :data:`SINGLE_FACTOR_MARGIN` times ``sqrt(m) eps32 trace(T D T^T / m)`` (``column_squares`` are the
    squared norms of ``T``'s columns, the diagonal of ``T^T T``), and ``m`` is at most
    :data:`~kernelmaps._solvers.cholesky.BLOCK_ORDER` (the blocked factorization is float64 only).

    ``A`` only preconditions: upcast to float64 it is an exact triangular factor of a nearby matrix, so
    CG stays exact and only its pace can change. Float32's Cholesky factors ``T D T^T / m + lam I`` up to
    a perturbation of about ``sqrt(m) eps32`` times its norm (at most its trace); against a ridge ten
    times larger, the preconditioned spectrum moves by at most a tenth, and CG's iterations by about
    half that. At 2000 centres the float32 factor took 90 ms of CPU time against 159 (scratch
    ``f32factor2.py`` on the Zen 4, medians of 7).
    """
    m = column_squares.shape[0]
    if m > BLOCK_ORDER:
        return False
    rounding = np.sqrt(m) * np.finfo(np.float32).eps * float(weights @ column_squares) / m
    return SINGLE_FACTOR_MARGIN * rounding <= penalty


class StepFactors:
    """The factor ``A`` of each Newton step, for centres with Gram matrix ``K_mm`` and its factor ``T``.

    ``centres_are_rows``: the centres are training rows, so their weights come from their logits
    ``K_mm a + b``; otherwise every centre takes the mean weight.
    """

    def __init__(self, K_mm, T, centres_are_rows):
        self.K_mm, self.T, self.centres_are_rows = K_mm, T, centres_are_rows
        self.column_squares = np.einsum("ij,ij->j", T, T)
        self._single_T = None

    def factor(self, point, penalty, image):
        """The upper factor ``A`` (float64) of the step's preconditioner at ``point`` (``image = K_mm a``)."""
        m = self.K_mm.shape[0]
        weights = self.centre_weights(point, penalty, image)
        if not factors_in_single(penalty, weights, self.column_squares):
            return ridge_cholesky(self.T, weights, m, penalty)
        if self._single_T is None:
            self._single_T = self.T.astype(np.float32)
        return ridge_cholesky(self._single_T, weights, m, penalty).astype(np.float64)

    def centre_weights(self, point, penalty, image):
        """The centres' weights ``D`` at ``point``, shared by the columns (:func:`shared_weights`)."""
        floor = penalty / max(float(np.mean(np.diag(self.K_mm))), 1e-300)
        # one factor for every column: k factors of O(m^3) each cost more than the passes of a
        # many-class problem, and the CG of each column stays exact (only its preconditioner is shared)
        if self.centres_are_rows:
            # a centre's weight is that of its row: W = sigmoid(f) sigmoid(-f) whatever
            # the label, at the logits f = K_mm a + b, known without a pass (and so the
            # same in memory and on Dask)
            s = stable_sigmoid(image + point.b)
            return shared_weights(s * (1.0 - s), floor)
        return np.full(self.K_mm.shape[0], shared_weights(point.weight_mean[None, :], floor)[0])


def shared_weights(weights, floor):
    """The weights of the centres in the factor shared by the columns: per centre (a row of
    ``weights``), the geometric mean over the columns of its weights, each raised to at least ``floor``.

    A column's CG converges at a pace set by the spread of the ratios between its weights and the
    shared ones. In a one-vs-rest problem a centre's weight is large in the columns of the classes
    near it and orders of magnitude smaller in the rest, and an arithmetic mean follows the few
    large ones; the geometric mean balances the ratios above and below it. At the end of a fit on
    letter (26 classes, 2000 centres, a ridge of 1e-5), CG to a relative residual of 1e-3 took up
    to 27 iterations over the columns from the arithmetic mean, 19 from the geometric, and 14 from
    each column's own factor (26 factorizations). A cross-validated fit's columns (folds) gain too.
    The floor, the ridge over the mean diagonal of ``K_mm``, is where weights stop mattering: all the
    weights below it together add at most the ridge to any direction of ``T D T^T / m + lam I``
    (``T T^T / m`` has eigenvalues at most that mean diagonal). It also keeps one underflowed (zero)
    weight from zeroing the product.
    """
    return np.exp(np.log(np.maximum(weights, floor)).mean(axis=1))
