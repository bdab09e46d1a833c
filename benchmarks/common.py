"""Shared set-up of the asv suite: profiles, prepared data, cached ground truth.

The profile is chosen by the environment variable ``KERNELMAPS_BENCH_PROFILE``:

``quick`` (default; the README's main command)
    each bundled dataset with at most 2000 training and 2000 test rows, a 300-row
    evaluation subset, widths 256 and 1024, the speed workloads at 5000 rows,
    fewer repeats: every method and every peer, fewer points;
``full``
    the papers' splits in full, a 1000-row evaluation subset, every width of
    every registered grid (256, 1024, 2048, 4096), the speed workloads at 20000
    rows (and 10000 x 784).

Every map and every peer runs at the same widths (:data:`WIDTHS`), so that each
row of the report has its comparison.

Exact Gram matrices of the evaluation subsets are computed once and cached on
disk (``KERNELMAPS_BENCH_CACHE``, default ``~/.cache/kernelmaps/ground_truth``),
keyed by dataset, subset and kernel parameters.
"""

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np



def median_seconds(func, repeats=7, warmup=False, clock=None):
    """Median time of ``repeats`` calls of ``func`` (after one untimed call if
    ``warmup``), by ``clock`` (default: wall time, ``time.perf_counter``; e.g.
    ``time.process_time`` for the CPU time of all threads). The result of a call is
    released after its clock stops, so that freeing a large output is not timed."""
    import time

    clock = time.perf_counter if clock is None else clock
    if warmup:
        func()
    samples = []
    for _ in range(repeats):
        start = clock()
        result = func()
        samples.append(clock() - start)
        del result
    return float(np.median(samples))


PROFILE = os.environ.get("KERNELMAPS_BENCH_PROFILE", "quick")
if PROFILE not in ("quick", "full"):
    raise ValueError(f"KERNELMAPS_BENCH_PROFILE must be 'quick' or 'full', got {PROFILE!r}")

DATASETS = ["banana", "magic04", "letter", "pendigits"]
MAX_TRAIN = {"quick": 2000, "full": None}[PROFILE]
N_EVAL = {"quick": 300, "full": 1000}[PROFILE]
SEED = 0
#: Rows of the speed workloads (X ~ N(0, 1) or U[0, 1), d = 64, D = 4096).
SPEED_ROWS = {"quick": 5000, "full": 20000}[PROFILE]
#: Test rows each map transforms (a seeded subset in the quick profile).
MAX_TEST = {"quick": 2000, "full": None}[PROFILE]
#: Timed samples per benchmark: (min, max, seconds), asv's ``repeat``.
REPEAT = {"quick": (1, 2, 0.5), "full": (3, 7, 20.0)}[PROFILE]


def _registered_widths():
    from kernelmaps import ALGORITHMS

    return sorted({w for cls in ALGORITHMS.values() if cls.kind == "feature_map" and cls.benchmark
                   for w in cls.benchmark.get("n_components", ())})


#: The widths every map and every peer runs at: quick 256 and 1024; full the union
#: of the registered grids.
WIDTHS = [256, 1024] if PROFILE == "quick" else _registered_widths()


class Timing:
    """asv timing attributes of the suite: one call per sample, no warm-up rounds
    (each benchmark's ``setup`` runs what it times once, through :func:`warm`)."""

    number = 1
    rounds = 1
    repeat = REPEAT
    warmup_time = 0.0


_WARM = {}


def warm(key, build):
    """``build()`` once per process and key, then the cached result.

    asv re-runs ``setup`` before every timed sample after the first; the fitted
    state and the warm-up call (compilation, thread pool, page faults) are kept
    for the process, so the re-runs cost nothing and every sample is warm.
    """
    if key not in _WARM:
        _WARM[key] = build()
    return _WARM[key]


@lru_cache(maxsize=None)
def prepared(dataset, non_negative=False):
    """Standardized train/test arrays, the evaluation subset and the bandwidth.

    The bandwidth is the CNM paper's rule (``gamma = 2 / sigma^2``, sigma the mean
    distance to the 50th neighbour among 1000 sampled training rows), so that
    every shift-invariant map and its peer share one numeric gamma.

    ``non_negative=True`` gives the input of the maps of non-negative data
    (:func:`positive_only`): each standardized feature shifted by its training
    minimum, the test rows clipped at 0.
    """
    from sklearn.preprocessing import StandardScaler

    import kernelmaps.datasets as kd
    from kernelmaps import resolve_gamma

    data = kd.load(dataset)
    scaler = StandardScaler().fit(data.X_train)
    X_train, X_test = scaler.transform(data.X_train), scaler.transform(data.X_test)
    y_train, y_test = data.y_train, data.y_test
    rng = np.random.RandomState(SEED)
    if MAX_TRAIN is not None and X_train.shape[0] > MAX_TRAIN:
        keep = np.sort(rng.choice(X_train.shape[0], MAX_TRAIN, replace=False))
        X_train, y_train = X_train[keep], y_train[keep]
    if MAX_TEST is not None and X_test.shape[0] > MAX_TEST:
        keep = np.sort(rng.choice(X_test.shape[0], MAX_TEST, replace=False))
        X_test, y_test = X_test[keep], y_test[keep]
    gamma = resolve_gamma("knn50", X_train, "gaussian", np.random.RandomState(SEED))
    if non_negative:
        low = X_train.min(axis=0)
        X_train, X_test = X_train - low, np.maximum(X_test - low, 0.0)
    X_eval = X_test[:N_EVAL]
    return {
        "X_train": np.ascontiguousarray(X_train), "y_train": y_train,
        "X_test": np.ascontiguousarray(X_test), "y_test": y_test,
        "X_eval": np.ascontiguousarray(X_eval), "gamma": gamma,
    }


def prepare_all():
    """Prepare every dataset (both inputs) once, in the process that imports the suite.

    asv's forkserver imports the benchmark modules once and forks a child per
    parameter combination, some 900 of them in the quick profile: prepared at
    import, the arrays are inherited by every child instead of being loaded,
    standardized and given their bandwidth again in each (0.03-0.2 s a dataset).
    """
    for dataset in DATASETS:
        for non_negative in (False, True):
            prepared(dataset, non_negative)


def cache_dir():
    root = os.environ.get("KERNELMAPS_BENCH_CACHE")
    path = Path(root) if root else Path.home() / ".cache" / "kernelmaps" / "ground_truth"
    path.mkdir(parents=True, exist_ok=True)
    return path


def positive_only(estimator):
    """Whether an estimator (or a class at its ``benchmark`` parameters) reads
    non-negative input only (scikit-learn's tag; e.g. the skewed kernels)."""
    from sklearn.utils import get_tags

    if isinstance(estimator, type):
        estimator = estimator(**(estimator.benchmark or {}).get("params", {}))
    return get_tags(estimator).input_tags.positive_only


def ground_truth(dataset, estimator):
    """Exact Gram matrix of the evaluation subset for a fitted map, cached on disk."""
    non_negative = positive_only(estimator)
    data = prepared(dataset, non_negative)
    # the kernel is named by the map's class, its parameters and its fitted bandwidth
    named = {k: v for k, v in estimator.get_params().items() if k not in ("n_components", "random_state")}
    named["class"] = type(estimator).__name__
    named["gamma_"] = getattr(estimator, "gamma_", None)
    if non_negative:
        named["input"] = "non_negative"
    params = {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in sorted(named.items())}
    # keyed by the evaluation rows themselves: a profile or subsampling change that
    # picks other rows must never be answered with another subset's Gram matrix
    rows = hashlib.sha256(np.ascontiguousarray(data["X_eval"]).tobytes()).hexdigest()[:24]
    key = json.dumps({"dataset": dataset, "rows": rows, "kernel": params}, sort_keys=True, default=str)
    path = cache_dir() / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".npy")
    if path.exists():
        return np.load(path)
    K = estimator.kernel(data["X_eval"])
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, K)
    os.replace(tmp, path)
    return K


#: The shift-invariant kernels of the library's vocabulary, with the alias ``rbf``.
SHIFT_INVARIANT_NAMES = ("gaussian", "rbf", "laplacian", "cauchy")


def uses_data_gamma(cls, fixed):
    """True if ``cls`` takes a ``gamma`` and benchmarks a shift-invariant kernel.

    Such maps (and their peers) all receive the dataset's numeric gamma, so that
    they approximate one and the same kernel.
    """
    defaults = cls().get_params()
    if "gamma" not in defaults:
        return False
    if cls.kernel_family == "shift_invariant":
        return True
    kernel = fixed.get("kernel", defaults.get("kernel"))
    return isinstance(kernel, str) and kernel.lower() in SHIFT_INVARIANT_NAMES


def _benchmarked(kind):
    """``(name, cls, fixed params, shared gamma)`` of each registered ``kind`` with a
    ``benchmark`` entry."""
    from kernelmaps import ALGORITHMS

    for name, cls in sorted(ALGORITHMS.items()):
        if cls.kind == kind and cls.benchmark:
            fixed = dict(cls.benchmark.get("params", {}))
            yield name, cls, fixed, uses_data_gamma(cls, fixed)


def _params(fixed, shared_gamma, gamma):
    """The constructor parameters: the fixed ones, plus the dataset's gamma if shared."""
    return dict(fixed, gamma=gamma) if shared_gamma else dict(fixed)


def entries():
    """Benchmark entries from the registry: label -> (owner class, factory).

    Each feature map with a ``benchmark`` grid contributes itself and the peers
    it declares; a peer is evaluated against its owner's exact kernel.
    """
    table = {}
    for name, cls, fixed, shared_gamma in _benchmarked("feature_map"):
        if "n_components" not in cls().get_params():
            continue  # a width derived from the data: derived_width_entries()
        def ours(n_components, random_state, gamma, cls=cls, fixed=fixed, shared_gamma=shared_gamma):
            return cls(n_components=n_components, random_state=random_state,
                       **_params(fixed, shared_gamma, gamma))

        table[name] = (cls, ours)
        for label, factory in cls.peers().items():
            def peer(n_components, random_state, gamma, factory=factory, fixed=fixed, shared_gamma=shared_gamma):
                return factory(n_components, random_state, **_params(fixed, shared_gamma, gamma))

            table.setdefault(label, (cls, peer))
    return table


def derived_width_entries():
    """Maps whose width the data sets (no ``n_components`` parameter) and their
    peers: label -> (owner class, factory()), at the map's ``benchmark["params"]``.

    ``AdditiveChi2Map``'s width is ``n_features (2 sample_steps - 1)``: it runs
    once per dataset, beside its peer at the same parameters, which receives
    ``n_components=None`` and the suite's seed.
    """
    table = {}
    for name, cls, fixed, _ in _benchmarked("feature_map"):
        if "n_components" in cls().get_params():
            continue
        table[name] = (cls, lambda cls=cls, fixed=fixed: cls(**fixed))
        for label, factory in cls.peers().items():
            table.setdefault(label, (cls, lambda factory=factory, fixed=fixed: factory(None, SEED, **fixed)))
    return table


def peers_of(name):
    """Labels of the peers the registered class ``name`` declares."""
    from kernelmaps import ALGORITHMS

    cls = ALGORITHMS.get(name)
    return sorted(cls.peers()) if cls is not None else []


def baseline_entries():
    """Exact baselines with a ``benchmark`` entry and their peers: label -> factory(gamma)."""
    table = {}
    for name, cls, fixed, shared_gamma in _benchmarked("baseline"):
        table[name] = lambda gamma, cls=cls, fixed=fixed, g=shared_gamma: cls(**_params(fixed, g, gamma))
        for label, factory in cls.peers().items():
            table.setdefault(label, lambda gamma, f=factory, fixed=fixed, g=shared_gamma: f(**_params(fixed, g, gamma)))
    return table


def fit_pair(label, dataset, n_components):
    """Fit the entry ``label`` and its owner class on ``dataset`` (same seed, same gamma)."""
    table = entries()
    owner, factory = table[label]
    data = prepared(dataset, positive_only(owner))
    est = factory(n_components, SEED, data["gamma"]).fit(data["X_train"])
    reference = table[owner.name][1](n_components, SEED, data["gamma"]).fit(data["X_train"][:50])
    return est, reference


def _status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    raise OSError(f"/proc/self/status has no {field}")


def reset_peak_resident():
    """Reset this process's high-water mark (VmHWM) to its resident set, and return that, in bytes.

    Read :func:`peak_resident_bytes` after some work: the difference is what the
    work allocated beyond this baseline (numpy's, Numba's and BLAS's alike, which
    ``tracemalloc`` would miss). A worker's, through ``client.run``. Linux only:
    the reset goes through ``/proc/self/clear_refs``.
    """
    import ctypes
    import gc

    gc.collect()
    try:  # hand freed heap pages back, so that reusing them is counted as allocating
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current VmRSS
        return _status_bytes("VmRSS:")
    except OSError as exc:
        raise NotImplementedError(f"memory is measured on Linux only (/proc/self/clear_refs: {exc})") from None


def transform_memory(transform, X):
    """``(MiB allocated beyond the baseline, MiB of the output)`` of one ``transform(X)``.

    The baseline is the process's resident set just before the call; the peak is
    its high-water mark during the call (:func:`reset_peak_resident`), so the
    interpreter, the libraries and the data already loaded are not counted.
    """
    before = reset_peak_resident()
    Z = transform(X)
    peak = peak_resident_bytes()
    output = Z.nbytes if hasattr(Z, "nbytes") else Z.data.nbytes
    del Z
    return (peak - before) / 2.0**20, output / 2.0**20


def peak_resident_bytes():
    """This process's peak resident set (VmHWM), in bytes: a worker's, through ``client.run``."""
    return _status_bytes("VmHWM:")


def synthetic_labels(block):
    """The Dask workloads' labels: a noiseless nonlinear rule of three of the inputs."""
    return (block[:, 0] * block[:, 1] + np.sin(2.0 * block[:, 2]) > 0).astype(np.int8)


#: Seed of the smooth regression target's projections: one target function for every sample.
SMOOTH_TARGET_SEED = 20170


def smooth_target(block, noise=0.1):
    """Targets of a block of standard normal rows ``[x, e]`` (``d + 1`` columns).

    ``y = sin(x . p_1) + sin(x . p_2) + sin(x . p_3) + noise e``, the ``p_k`` drawn
    once from :data:`SMOOTH_TARGET_SEED` with variance ``1/d``, so that each
    ``x . p_k`` has unit variance for ``x ~ N(0, I)``: a smooth function that a
    Gaussian kernel of bandwidth ``1/d`` learns. The noise column comes with the
    rows, so that a Dask chunk gives its targets without a second random stream.

    Parameters
    ----------
    block : ndarray of shape (n, d + 1)
    noise : float, default=0.1

    Returns
    -------
    ndarray of shape (n,), float64
    """
    d = block.shape[1] - 1
    projections = np.random.default_rng(SMOOTH_TARGET_SEED).standard_normal((d, 3)) / np.sqrt(d)
    return np.sin(block[:, :d] @ projections).sum(axis=1) + noise * block[:, d]


def smooth_regression(n_rows, n_features=16, *, noise=0.1, seed=0, chunk_rows=100_000):
    """``(X, y)``: ``X ~ N(0, I)`` and :func:`smooth_target`, generated chunk by chunk.

    Chunk ``i`` comes from ``numpy.random.default_rng([seed, i])``, so only one
    chunk of the ``d + 1`` random columns exists besides ``X`` and ``y``.

    Parameters
    ----------
    n_rows, n_features : int
    noise : float, default=0.1
    seed : int, default=0
    chunk_rows : int, default=100000

    Returns
    -------
    X : ndarray of shape (n_rows, n_features), float64
    y : ndarray of shape (n_rows,), float64
    """
    X, y = np.empty((n_rows, n_features)), np.empty(n_rows)
    for i, start in enumerate(range(0, n_rows, chunk_rows)):
        stop = min(n_rows, start + chunk_rows)
        block = np.random.default_rng([seed, i]).standard_normal((stop - start, n_features + 1))
        X[start:stop], y[start:stop] = block[:, :n_features], smooth_target(block, noise)
    return X, y
