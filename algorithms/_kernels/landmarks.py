"""Landmarks (Nyström centres) drawn from the training rows: uniform, k-means, ridge leverage.

Shared by :class:`kernelmaps.Nystroem`, whose features are built on them, and the
Nyström kernel machines (:mod:`kernelmaps.nystroem_kernel_ridge`), whose
coefficients live on them.
"""

import numbers
import warnings
from typing import NamedTuple, Optional

import numpy as np

from .bandwidth import resolve_gamma
from .exact import exact_kernel
from .._core.rows import bandwidth_input, dense_rows
from .._core.validation import check_choice, check_integer, user_stacklevel

#: Eigenvalues of the landmark Gram below ``EIG_FLOOR * max eigenvalue`` are dropped.
EIG_FLOOR = 1e-12
#: Candidate pool of leverage sampling: ``LEVERAGE_POOL * n_components`` rows.
LEVERAGE_POOL = 3
LANDMARK_RULES = ("uniform", "kmeans", "leverage")


def ridge_leverage_scores(K, n_components):
    """Ridge leverage scores ``diag(K (K + lam I)^-1)`` with a rank-``n_components`` ridge.

    ``lam = (1/k) sum_{i > k} sigma_i(K)``, the tail mean of the eigenvalues beyond
    ``k = n_components``: with this ridge, sampling ``O(k log k)`` columns by the
    scores gives a Nyström approximation within a constant of the best rank-k one
    (Musco & Musco 2017, Theorem 3). The scores sum to the effective dimension
    ``d_eff(lam)``.

    Parameters
    ----------
    K : ndarray of shape (p, p), symmetric positive semi-definite
    n_components : int

    Returns
    -------
    scores : ndarray of shape (p,), in [0, 1]
    lam : float

    References
    ----------
    Alaoui, A. E. and Mahoney, M. W. Fast randomized kernel ridge regression with
    statistical guarantees. NIPS 2015 (lambda-ridge leverage scores, Def. 1).
    Musco, C. and Musco, C. Recursive sampling for the Nyström method. NIPS 2017.
    """
    s, U = np.linalg.eigh(K)
    s = np.clip(s[::-1], 0.0, None)
    U = U[:, ::-1]
    k = min(n_components, len(s))
    lam = s[k:].sum() / k
    # a matrix of rank <= k has no tail: any tiny ridge gives the exact projections
    lam = max(lam, s[0] * EIG_FLOOR if s[0] > 0 else 1.0)
    scores = (U * U) @ (s / (s + lam))
    return np.clip(scores, 0.0, 1.0), float(lam)


def check_landmarks(landmarks, m, n_features):
    """``landmarks`` as a rule name, or as a validated ``(m, n_features)`` array."""
    if isinstance(landmarks, str):
        check_choice(landmarks, "landmarks", LANDMARK_RULES)
        return landmarks
    V = np.asarray(landmarks)
    if V.ndim != 2 or V.shape != (m, n_features):
        raise ValueError(
            f"landmarks must be 'uniform', 'kmeans', 'leverage' or an array of shape "
            f"(n_components, n_features) = ({m}, {n_features}), got shape {V.shape}")
    if not np.issubdtype(V.dtype, np.number) or not np.isfinite(V).all():
        raise ValueError("landmarks contains NaN or infinity, or is not numeric")
    return V


def check_landmark_count(n_components, auto=None):
    """``n_components`` of a Nyström estimator: an int >= 1, or ``'auto'`` where ``auto`` is given.

    Parameters
    ----------
    n_components : int or 'auto'
    auto : int or None
        What ``'auto'`` asks for at most (``None``: ``'auto'`` is refused).

    Returns
    -------
    int or 'auto'
    """
    if auto is not None and isinstance(n_components, str) and n_components == "auto":
        return "auto"
    if auto is not None and not isinstance(n_components, numbers.Integral):
        raise ValueError(f"n_components must be an integer or 'auto', got {n_components!r}")
    return check_integer(n_components, "n_components")


def landmark_count(n_components, n_rows, landmarks, auto=None):
    """The number of landmarks (Nyström centres) a fit on ``n_rows`` rows uses.

    A rule that draws landmarks from the rows (``landmarks`` a string) takes at
    most one landmark per row: ``n_components > n_rows`` uses every row once,
    with a ``UserWarning`` pointing at the user's call, and ``'auto'`` is
    ``min(auto, n_rows)`` without one, since the user asked for no number.
    Given landmarks (an array) are not rows and are not capped; ``'auto'`` then
    takes as many as are given. The one rule of :class:`kernelmaps.Nystroem` and
    the Nyström kernel machines.

    Parameters
    ----------
    n_components : int or 'auto'
    n_rows : int
        The rows the landmarks are drawn from (after any validation split).
    landmarks : str or array-like
    auto : int or None
        What ``'auto'`` asks for at most (``None``: ``'auto'`` is refused).

    Returns
    -------
    int

    Examples
    --------
    >>> from kernelmaps._kernels.landmarks import landmark_count
    >>> landmark_count("auto", 300, "uniform", auto=1000)
    300
    >>> landmark_count(50, 300, "uniform")
    50
    """
    requested = check_landmark_count(n_components, auto)
    if not isinstance(landmarks, str):
        if requested == "auto":
            return np.shape(landmarks)[0] if np.ndim(landmarks) == 2 else auto
        return requested
    if requested == "auto":
        return min(auto, n_rows)
    if requested > n_rows:
        warnings.warn(f"n_components={requested} is larger than the {n_rows} rows fitted: using every row as a "
                      f"landmark, n_components_={n_rows}", UserWarning, stacklevel=user_stacklevel())
        return n_rows
    return requested


def uniform_indices(n, m, rng):
    """``m`` distinct rows, ``rng.permutation(n)[:m]`` (scikit-learn's ``Nystroem`` draw),
    topped up with uniform repeats when ``m > n``."""
    indices = rng.permutation(n)[:m]
    if m > n:
        indices = np.concatenate([indices, rng.randint(0, n, size=m - n)])
    return indices


def kmeans_landmarks(X, m, rng):
    """The centres of scikit-learn's ``KMeans`` with ``m`` clusters (one k-means++ start)."""
    from sklearn.cluster import KMeans

    k = min(m, X.shape[0])
    seed = rng.randint(np.iinfo(np.int32).max)
    # scikit-learn's KMeans takes CSR input as it is
    centres = KMeans(n_clusters=k, n_init=1, random_state=seed).fit(
        X.astype(np.float64, copy=False)).cluster_centers_
    if k < m:
        centres = np.vstack([centres, centres[rng.randint(0, k, size=m - k)]])
    return centres


def leverage_indices(X, m, kernel_params, rng):
    """``m`` rows drawn by their ridge leverage scores within a uniform pool of ``3 m``."""
    n = X.shape[0]
    pool = np.sort(rng.permutation(n)[: min(n, LEVERAGE_POOL * m)])
    P = np.asarray(dense_rows(X, pool), dtype=np.float64)
    scores, _ = ridge_leverage_scores(exact_kernel(P, None, **kernel_params), m)
    positive = int((scores > 0).sum())
    if positive == 0:
        scores = np.ones_like(scores)
        positive = len(scores)
    take = min(m, positive)
    chosen = pool[rng.choice(len(pool), size=take, replace=False, p=scores / scores.sum())]
    if take < m:
        chosen = np.concatenate([chosen, chosen[rng.randint(0, take, size=m - take)]])
    return chosen


def choose_landmarks(X, m, rule, kernel_params, rng, indices=None):
    """The landmarks of a rule (or a given array) and the training rows they are.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    m : int
    rule : str or ndarray
        A :func:`check_landmarks` result.
    kernel_params : dict
        Of :func:`kernelmaps.exact_kernel`, or ``{"kernel": callable}`` (for ``'leverage'``).
    rng : RandomState
    indices : ndarray or None
        For ``'uniform'``, the rows drawn beforehand by :func:`uniform_indices`.

    Returns
    -------
    landmarks : ndarray of shape (m, d), float64
    indices : ndarray of int or None
    """
    if not isinstance(rule, str):
        return np.ascontiguousarray(rule, dtype=np.float64), None
    if rule == "uniform":
        indices = uniform_indices(X.shape[0], m, rng) if indices is None else indices
        V = dense_rows(X, indices)
    elif rule == "kmeans":
        V = kmeans_landmarks(X, m, rng)
    else:
        indices = leverage_indices(X, m, kernel_params, rng)
        V = dense_rows(X, indices)
    return np.ascontiguousarray(V, dtype=np.float64), indices


class LandmarkSetUp(NamedTuple):
    """What :func:`set_up_landmarks` chose: the estimator's ``n_components_``,
    ``component_indices_``, ``gamma_`` and ``components_``."""

    count: int
    indices: Optional[np.ndarray]
    gamma: Optional[float]
    components: np.ndarray

    def set_on(self, estimator):
        """Set the estimator's ``n_components_``, ``component_indices_``, ``gamma_`` and ``components_``."""
        estimator.n_components_, estimator.component_indices_ = self.count, self.indices
        estimator.gamma_, estimator.components_ = self.gamma, self.components


def set_up_landmarks(X, n_components, landmarks, rng, *, gamma, kernel, kernel_params, n_rows=None,
                     auto=None, before_draw=None):
    """The landmarks of a fit and the bandwidth of their kernel, drawn in the one order
    of :class:`kernelmaps.Nystroem` and the Nyström kernel machines.

    The count (:func:`landmark_count`) and the rule (:func:`check_landmarks`) are
    checked first; ``before_draw(count)`` then runs its own checks before any draw.
    A ``'uniform'`` rule draws its rows before the bandwidth, as scikit-learn's
    ``Nystroem`` does, so that one seed gives scikit-learn's landmarks.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        The rows the landmarks are drawn from (for Dask input, a sample of them).
    n_components : int or 'auto'
    landmarks : str or array-like
    rng : RandomState
    gamma : float or str
        The ``gamma`` parameter, resolved by :func:`kernelmaps.resolve_gamma`.
    kernel : str or None
        The kernel's name; ``None`` for a user's callable, which has no bandwidth
        (``gamma`` is then not resolved and the returned ``gamma`` is ``None``).
    kernel_params : callable
        ``kernel_params(gamma)``: keywords of :func:`kernelmaps.exact_kernel` (or
        ``{"kernel": callable}``), for the ``'leverage'`` rule.
    n_rows : int or None
        The rows in all when ``X`` is a sample of them (``None``: ``X.shape[0]``).
    auto : int or None
        What ``'auto'`` asks for at most (``None``: ``'auto'`` is refused).
    before_draw : callable or None
        ``before_draw(count)``, run after the count and rule checks.

    Returns
    -------
    LandmarkSetUp
    """
    count = landmark_count(n_components, X.shape[0] if n_rows is None else n_rows, landmarks, auto=auto)
    rule = check_landmarks(landmarks, count, X.shape[1])
    if before_draw is not None:
        before_draw(count)
    indices = uniform_indices(X.shape[0], count, rng) if isinstance(rule, str) and rule == "uniform" else None
    # a user's callable has no bandwidth
    gamma = None if kernel is None else resolve_gamma(gamma, bandwidth_input(gamma, X), kernel, rng)
    components, indices = choose_landmarks(X, count, rule, kernel_params(gamma), rng, indices)
    return LandmarkSetUp(count, indices, gamma, components)
