"""What ``error-per-second`` measures and how it judges: built on the asv suite's builders.

* :func:`pair_plan`: ours and one scikit-learn peer at each width, built exactly as
  :mod:`benchmarks.bench_feature_maps` and :mod:`benchmarks.peer_ratios` build them
  (:func:`benchmarks.common.entries` for ours, the class's ``peers()`` factory with
  the same fixed parameters, gamma and seed for the peer).
* :func:`peer_kernel`: the exact kernel a scikit-learn peer approximates, from its
  own parameters, to check that a pair approximates one and the same kernel.
* :func:`measure`: transform time (interleaved medians), kernel error and
  test error of a pair (or of the peer alone) at one width.
* :func:`lead`: whether our error is below the peer's at equal transform time.
"""

import time

import numpy as np

#: The outcomes of :func:`lead`.
OUTCOMES = ("leads", "ties", "trails", "no overlap")


def peer_kernel(peer, X):
    """The exact Gram matrix of ``X`` under the kernel the scikit-learn ``peer`` approximates.

    Read from the peer's own parameters, so that comparing it with our map's
    ``kernel(X)`` checks that both approximate the same kernel.

    Parameters
    ----------
    peer : estimator
        A fitted or unfitted ``RBFSampler``, ``Nystroem`` (string kernel),
        ``PolynomialCountSketch``, ``SkewedChi2Sampler`` or ``AdditiveChi2Sampler``.
    X : ndarray of shape (n, d)

    Returns
    -------
    ndarray of shape (n, n), or None for a peer of another class.

    References
    ----------
    scikit-learn's user guide, "Kernel Approximation" (the kernel each sampler approximates).
    """
    from sklearn.metrics.pairwise import pairwise_kernels, polynomial_kernel, rbf_kernel

    kind = type(peer).__name__
    X = np.asarray(X, dtype=np.float64)
    if kind == "RBFSampler":
        return rbf_kernel(X, gamma=peer.gamma)
    if kind == "Nystroem" and isinstance(peer.kernel, str):
        return pairwise_kernels(X, metric=peer.kernel, filter_params=True, gamma=peer.gamma,
                                degree=peer.degree, coef0=peer.coef0)
    if kind == "PolynomialCountSketch":
        return polynomial_kernel(X, degree=peer.degree, gamma=peer.gamma, coef0=peer.coef0)
    if kind == "SkewedChi2Sampler":
        # prod_i 2 sqrt((x_i + c)(y_i + c)) / (x_i + y_i + 2c), c = skewedness
        shifted = X + peer.skewedness
        ratio = 2.0 * np.sqrt(shifted[:, None, :] * shifted[None, :, :]) / (shifted[:, None, :] + shifted[None, :, :])
        return np.exp(np.log(ratio).sum(axis=2))
    if kind == "AdditiveChi2Sampler":
        # sum_i 2 x_i y_i / (x_i + y_i), a term 0 where x_i + y_i = 0
        num = 2.0 * X[:, None, :] * X[None, :, :]
        den = X[:, None, :] + X[None, :, :]
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0).sum(axis=2)
    return None


def pair_plan(name, peer_label, dataset, grid):
    """``(data, [(grid value, build_ours, build_peer), ...])`` of one map and one peer.

    Parameters
    ----------
    name : str
        Registry name of our map.
    peer_label : str
        One of ``benchmarks.common.peers_of(name)``.
    dataset : str
        One of ``benchmarks.common.DATASETS``; the data is ``common.prepared``'s
        (non-negative for maps tagged ``positive_only``).
    grid : sequence of int
        Output widths; for a map without ``n_components`` (its width set by the
        data, e.g. ``AdditiveChi2Map``), the values of ``sample_steps`` instead.

    Returns
    -------
    data : dict
        ``common.prepared``'s arrays and gamma.
    plan : list of (int, callable, callable)
        Each builder returns an unfitted estimator.
    """
    from kernelmaps import ALGORITHMS

    from benchmarks import common

    owner = ALGORITHMS[name]
    fixed = dict(owner.benchmark.get("params", {}))
    data = common.prepared(dataset, common.positive_only(owner))
    factory = owner.peers()[peer_label]
    if "n_components" not in owner().get_params():
        # the suite's DerivedWidthMaps at each sample_steps: the peer gets n_components=None and the seed
        plan = [(s, lambda s=s: owner(**dict(fixed, sample_steps=s)),
                 lambda s=s: factory(None, common.SEED, **dict(fixed, sample_steps=s))) for s in grid]
        return data, plan
    ours = common.entries()[name][1]
    # the peer at its owner's fixed parameters (common.entries keeps one owner per peer label)
    params = dict(fixed, gamma=data["gamma"]) if common.uses_data_gamma(owner, fixed) else fixed
    plan = [(w, lambda w=w: ours(w, common.SEED, data["gamma"]),
             lambda w=w: factory(w, common.SEED, **params)) for w in grid]
    return data, plan


#: The most timed calls per side, however fast the transform.
MAX_REPEATS = 50


def interleaved_times(estimators, X, repeats, min_seconds=0.0):
    """Median ``transform(X)`` seconds of fitted maps timed in turn, and their outputs.

    One untimed call each first (Numba compilation or cache loading, thread start,
    first-touch pages), whose output is returned; the timed calls go round the
    maps, the order reversed every other round so that no map always follows the
    same one. At least ``repeats`` rounds, and more (up to :data:`MAX_REPEATS`)
    until each map has been timed for ``min_seconds`` in all: a sub-millisecond
    transform on a shared machine needs many samples for a stable median.

    Parameters
    ----------
    estimators : list of fitted transformers
    X : ndarray
    repeats : int
    min_seconds : float, default=0.0

    Returns
    -------
    times : list of float
    outputs : list of ndarray
    """
    outputs = [est.transform(X) for est in estimators]
    samples = [[] for _ in estimators]
    order = list(range(len(estimators)))
    r = 0
    while r < repeats or (r < MAX_REPEATS and min(sum(t) for t in samples) < min_seconds):
        for i in (order if r % 2 == 0 else order[::-1]):
            start = time.perf_counter()
            result = estimators[i].transform(X)
            samples[i].append(time.perf_counter() - start)
            del result
        r += 1
    return [float(np.median(t)) for t in samples], outputs


def measure(builders, data, K, n_eval, repeats, alpha, min_seconds=0.0):
    """Maps at one width each, timed together: width, fit and transform time, kernel and test error.

    Parameters
    ----------
    builders : list of callable
        Each returns an unfitted estimator (ours and the peer, or the peer alone).
    data : dict
        ``common.prepared``'s arrays.
    K : ndarray of shape (n_eval, n_eval)
        Exact kernel of the first ``n_eval`` test rows.
    n_eval : int
    repeats : int
        Timed ``transform`` calls per map, at least.
    alpha : float
        Ridge of the ``LeastSquaresClassifier`` on the features.
    min_seconds : float, default=0.0
        Timed seconds per map to reach (see :func:`interleaved_times`).

    Returns
    -------
    list of dict
        Per builder: ``{"width", "fit_s", "transform_s", "kernel_error", "test_error"}``.
    """
    from kernelmaps import LeastSquaresClassifier, relative_frobenius_error

    fitted, fit_s = [], []
    for build in builders:
        start = time.perf_counter()
        fitted.append(build().fit(data["X_train"]))
        fit_s.append(time.perf_counter() - start)
    times, outputs = interleaved_times(fitted, data["X_test"], repeats, min_seconds)
    out = []
    for est, Z_test, t, f in zip(fitted, outputs, times, fit_s):
        Z_test = np.asarray(Z_test.todense() if hasattr(Z_test, "todense") else Z_test)
        clf = LeastSquaresClassifier(alpha=alpha).fit(est.transform(data["X_train"]), data["y_train"])
        out.append({"width": int(Z_test.shape[1]), "fit_s": f, "transform_s": t,
                    "kernel_error": relative_frobenius_error(K, Z=Z_test[:n_eval]),
                    "test_error": 1.0 - clf.score(Z_test, data["y_test"])})
    return out


def lead(ours_time, ours_error, peer_time, peer_error, *, rel_tol=0.05, abs_tol=0.0):
    """Whether our error is below the peer's at equal transform time.

    The peer's error is interpolated linearly in ``log(time)`` (its points sorted
    by time) at each of our times inside the peer's time range; no extrapolation.
    At each such point ours is *below* if ``e < p - tol``, *above* if
    ``e > p + tol``, with ``tol = max(rel_tol * p, abs_tol)``. Ours **leads** if it
    is below at more than half of the overlapping points, **trails** if above at
    more than half, and **ties** otherwise (``basis="interpolated"``).

    Where no time of ours lies in the peer's range, one side is faster at every
    width, and the comparison at equal time is made at the slower side's fastest
    point (``basis="dominance"``): if ours is faster throughout, it leads when its
    lowest error is below the peer's error at the peer's fastest point (in that
    time ours reaches a lower error); if ours is slower throughout, it trails when
    its error at its fastest point is above the peer's lowest error. Otherwise
    there is **no overlap** (``basis="none"``).

    Parameters
    ----------
    ours_time, ours_error, peer_time, peer_error : sequence of float
        Times in seconds (> 0) and errors of each side's points.
    rel_tol, abs_tol : float
        The tie band.

    Returns
    -------
    dict
        ``outcome`` (one of :data:`OUTCOMES`), ``basis``, ``n_overlap``,
        ``n_below``, ``n_above`` and ``median_ratio`` (median of our error over the
        peer's interpolated one at the overlapping points; under dominance, the
        ratio of the two errors compared; NaN without a comparison).

    Examples
    --------
    >>> from benchmarks.experiments._error_per_second import lead
    >>> lead([1.0, 2.0], [0.1, 0.05], [0.5, 4.0], [0.3, 0.1])["outcome"]
    'leads'
    """
    ours_time, ours_error = np.asarray(ours_time, float), np.asarray(ours_error, float)
    peer_time, peer_error = np.asarray(peer_time, float), np.asarray(peer_error, float)
    if ours_time.shape != ours_error.shape or peer_time.shape != peer_error.shape:
        raise ValueError("each side needs as many times as errors")
    if peer_time.size == 0 or ours_time.size == 0:
        raise ValueError("each side needs at least one point")
    if np.any(ours_time <= 0) or np.any(peer_time <= 0):
        raise ValueError("times must be positive (they are compared on a log scale)")
    order = np.argsort(peer_time, kind="stable")
    log_peer, peer_sorted = np.log(peer_time[order]), peer_error[order]
    log_ours = np.log(ours_time)
    inside = (log_ours >= log_peer[0]) & (log_ours <= log_peer[-1])
    n = int(inside.sum())
    if n == 0:
        return _dominance(ours_time, ours_error, peer_time, peer_sorted, rel_tol, abs_tol)
    p = np.interp(log_ours[inside], log_peer, peer_sorted)
    e = ours_error[inside]
    tol = np.maximum(rel_tol * p, abs_tol)
    below, above = int(np.sum(e < p - tol)), int(np.sum(e > p + tol))
    outcome = "leads" if below > n / 2 else "trails" if above > n / 2 else "ties"
    ratio = float(np.median(np.divide(e, p, out=np.full_like(e, np.nan), where=p > 0)))
    return {"outcome": outcome, "basis": "interpolated", "n_overlap": n, "n_below": below, "n_above": above,
            "median_ratio": ratio}


def _dominance(ours_time, ours_error, peer_time, peer_by_time, rel_tol, abs_tol):
    """:func:`lead` for time ranges that do not overlap (``peer_by_time``: errors sorted by time)."""
    result = {"outcome": "no overlap", "basis": "none", "n_overlap": 0, "n_below": 0, "n_above": 0,
              "median_ratio": float("nan")}
    if ours_time.max() < peer_time.min():
        e, p = ours_error.min(), peer_by_time[0]
        if e < p - max(rel_tol * p, abs_tol):
            result.update(outcome="leads", basis="dominance", n_below=1)
    else:
        e, p = ours_error[np.argmin(ours_time)], peer_by_time.min()
        if e > p + max(rel_tol * p, abs_tol):
            result.update(outcome="trails", basis="dominance", n_above=1)
    if result["basis"] == "dominance" and p > 0:
        result["median_ratio"] = float(e / p)
    return result


def overall_status(outcomes):
    """The verdict over the judged cells (outcomes of :func:`lead`).

    ``holds`` if at least one cell has an overlap and none trails; ``does not hold``
    if every cell with an overlap trails; ``partly holds`` otherwise (some trail,
    or no cell could be compared at equal time)."""
    judged = [o for o in outcomes if o != "no overlap"]
    if judged and "trails" not in judged:
        return "holds"
    return "does not hold" if judged and all(o == "trails" for o in judged) else "partly holds"
