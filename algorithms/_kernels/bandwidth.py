"""Bandwidth heuristics: a numeric ``gamma`` from the data (:func:`resolve_gamma`)."""

import math
import numbers

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.utils import check_random_state

from .frames import SHIFT_INVARIANT, power_of_two_below, shift_invariant_frame, to_frame

GAMMA_HEURISTICS = ("scale", "median", "knn50")
#: Rows the distance heuristics ('median', 'knn50') sample: their pairwise
#: distances, a 1000 x 1000 float64 matrix (8 MB), then cost the same at any
#: ``n_samples``.
GAMMA_SAMPLE_ROWS = 1000
#: The neighbour whose mean distance sets the 'knn50' bandwidth (Yu et al.'s rule).
KNN_NEIGHBOUR = 50
#: Seed of the heuristics' row sample in the estimators that have no
#: ``random_state`` parameter (the exact kernel baselines): a fixed seed keeps
#: their ``fit`` deterministic.
GAMMA_SAMPLE_SEED = 0


def _sample_rows(X, rng, n_max):
    if X.shape[0] <= n_max:
        return np.asarray(X, dtype=np.float64)
    idx = rng.choice(X.shape[0], size=n_max, replace=False)
    return np.asarray(X[np.sort(idx)], dtype=np.float64)


def _pairwise_distances(S, kernel):
    return cdist(S, S, metric="cityblock" if kernel == "laplacian" else "euclidean")


def resolve_gamma(gamma, X, kernel, rng, n_sample=GAMMA_SAMPLE_ROWS):
    """Turn a numeric gamma or a heuristic name into a positive float.

    Heuristics (``kernel`` selects the distance: L1 for ``'laplacian'``, Euclidean
    otherwise):

    * ``'scale'``: ``1 / (n_features * X.var())``, scikit-learn's rule (1.0 if the
      variance is 0, i.e. every entry of ``X`` is the same number).
    * ``'median'``: ``s`` = the median pairwise distance of up to ``n_sample``
      sampled rows; ``gamma = 1/(2 s^2)`` (Euclidean), ``1/s`` (L1). For
      ``'matern'``, whose length-scale is ``1 / sqrt(2 gamma)``, that is ``l = s``.
    * ``'knn50'``: Yu et al.'s rule: ``s`` = the mean distance to the 50th nearest
      neighbour among ``n_sample`` sampled rows; ``gamma = 2/s^2`` (Euclidean),
      ``2/s`` (L1).

    The statistics are computed on the data centred and divided by a power of
    two, and ``gamma`` is assembled in log space, so no square overflows or
    underflows at any magnitude. A ``gamma`` that float64 cannot represent
    (data of magnitude beyond ~1e154 or below ~1e-154) raises ``ValueError``, as
    do sampled rows that really all coincide.

    Parameters
    ----------
    gamma : float or {'scale', 'median', 'knn50'}
    X : ndarray of shape (n_samples, n_features)
    kernel : str
        A name from :data:`kernelmaps._kernels.names.KERNELS`; the distance heuristics need a
        shift-invariant one.
    rng : None, int, numpy.random.RandomState or numpy.random.Generator
        Draws the row sample of ``'median'`` and ``'knn50'`` when ``X`` has more
        than ``n_sample`` rows (unused by the other gammas): anything scikit-learn takes
        for a ``random_state`` (``None``: numpy's global ``RandomState``; an
        int: a ``RandomState`` seeded with it), or a ``Generator``.
    n_sample : int, default=GAMMA_SAMPLE_ROWS
        Rows sampled by the distance heuristics.

    Returns
    -------
    gamma : float

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, section 7.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import resolve_gamma
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> resolve_gamma(0.5, X, "gaussian", None)
    0.5
    >>> resolve_gamma("scale", X, "gaussian", None)  # 1 / (2 features * variance 1)
    0.5
    >>> print(round(resolve_gamma("median", X, "gaussian", 0), 4))  # rng: as a random_state
    0.125
    """
    if isinstance(gamma, str):
        if gamma not in GAMMA_HEURISTICS:
            raise ValueError(
                f"gamma must be a positive number or one of {list(GAMMA_HEURISTICS)}, got {gamma!r}"
            )
        if gamma == "scale":
            # scikit-learn's X.var() is over all entries (not per column): scale only
            scale = power_of_two_below(float(np.max(np.abs(X))))
            var = float((np.asarray(X, dtype=np.float64) * (1.0 / scale)).var())
            if var == 0.0:
                return 1.0
            # 1 / (d var(X)) with var(X) = scale^2 var(X / scale)
            return _gamma_from_logs(gamma, -(math.log(X.shape[1]) + math.log(var) + 2 * math.log(scale)), X)
        if kernel not in SHIFT_INVARIANT:
            raise ValueError(f"gamma={gamma!r} is defined for shift-invariant kernels, not {kernel!r}")
        if not isinstance(rng, np.random.Generator):
            rng = check_random_state(rng)
        S = _sample_rows(X, rng, n_sample)
        if S.shape[0] < 2:
            raise ValueError(f"gamma={gamma!r} needs at least 2 samples, got {S.shape[0]}")
        center, scale = shift_invariant_frame(S)
        D = _pairwise_distances(to_frame(S, center, scale, np.float64), kernel)
        if gamma == "median":
            s = float(np.median(D[np.triu_indices(S.shape[0], k=1)]))
            power, numerator = (1, 1.0) if kernel == "laplacian" else (2, 0.5)
        else:
            k = min(KNN_NEIGHBOUR, S.shape[0] - 1)
            # column 0 of each sorted row is the point itself
            s = float(np.partition(D, k, axis=1)[:, k].mean())
            power, numerator = (1, 2.0) if kernel == "laplacian" else (2, 2.0)
        if not s > 0:
            raise ValueError(f"gamma={gamma!r} is undefined: the {S.shape[0]} sampled rows all coincide")
        return _gamma_from_logs(gamma, math.log(numerator) - power * (math.log(s) + math.log(scale)), X)
    if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, numbers.Real):
        raise ValueError(f"gamma must be a positive number or one of {list(GAMMA_HEURISTICS)}, got {gamma!r}")
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    return gamma


def _gamma_from_logs(heuristic, log_gamma, X):
    """``exp(log_gamma)``, or a ``ValueError`` when float64 cannot hold it."""
    info = np.finfo(np.float64)
    if not math.log(info.tiny) < log_gamma < math.log(info.max):
        raise ValueError(
            f"gamma={heuristic!r} gives 1e{log_gamma / math.log(10):.0f} for data of magnitude up to "
            f"{float(np.max(np.abs(X))):.3g}, outside the float64 range: rescale X (e.g. with "
            "StandardScaler)"
        )
    return math.exp(log_gamma)
