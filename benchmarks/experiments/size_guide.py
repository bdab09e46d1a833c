"""Which learner for which size: the README's size guide, measured.

Experiment
----------
``size-guide`` (timed)
    Fits the learner that each row of the guide recommends, with the settings the
    guide names, at two sizes (10^5 and 10^6 rows of d = 16 synthetic data, float32),
    and records its fit time, test score and peak memory. The exact learner also
    fits at the largest size it is for (2·10^4 rows), and must refuse the two sizes,
    before any work, with the memory it would need. The Nyström machines also
    record their passes over the rows, which is what limits their number of centres.

The README's table is built from the recorded result by
:mod:`benchmarks.experiments._size_guide_table`.
"""

import re
import time
from dataclasses import dataclass

from benchmarks.common import peak_resident_bytes, reset_peak_resident, smooth_regression, synthetic_labels
from benchmarks.experiments._data import lazy_smooth_regression
from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: A fit of 10^6 rows in memory must finish within this many minutes on the machine.
MINUTES_BAR = 10.0
#: Test scores a fit must reach to count as learning (R² for regression, accuracy for classification).
SCORE_FLOOR = {"regression": 0.5, "classification": 0.6}


@dataclass(frozen=True)
class GuideRow:
    key: str
    rows: str        # the sizes the guide recommends the learner for
    learner: str     # what the guide recommends, with the settings (``{name}`` from the settings)
    memory: str      # what the solver holds besides the data
    task: str        # 'regression' or 'classification'


GUIDE = (
    GuideRow("exact", "up to ~2·10⁴", "`KernelRidge` (exact; also `KernelRidgeClassifier`, `KernelSVC`)",
             "O(n²): the Gram matrix and its factor, 16 n² bytes", "regression"),
    GuideRow("rff", "up to ~10⁶, small d, D ≤ ~4096 enough",
             "`RandomFourierFeatures` (D = {rff_components}) + `LeastSquaresRegressor`, one pass",
             "O(D²): the normal equations, 16 D² bytes", "regression"),
    GuideRow("binning", "up to ~10⁷, low d, a fine decision boundary",
             "`RandomBinning` (P = {bin_grids}, γ = {bin_gamma}) + `LeastSquaresClassifier`, sparse CG",
             "O(n P) for the sparse features, O(bins · C) for CG", "classification"),
    GuideRow("nystroem", "10⁵–10⁷ in memory, more centres than features allow",
             "`NystroemKernelRidge` (m = {nystroem_m}), Falkon's CG",
             "O(m²): 4 m² float64, plus a row block per thread", "regression"),
    GuideRow("logistic", "10⁵–10⁶ in memory, probabilities",
             "`NystroemLogisticRegression` (m = {logistic_m}, default max_iter = 20 × cg_max_iter = 20)",
             "O(m²): one factor for every class; O(n C) weights", "classification"),
    GuideRow("dask", "beyond memory",
             "`NystroemKernelRidge` (m = {nystroem_m}) on a Dask array, {workers} single-threaded workers",
             "O(m²) on the client, one chunk per worker task", "regression"),
)
ROWS = {row.key: row for row in GUIDE}


def _learners(s, gamma, n):
    """``{key: fit(X, y) -> (predict, extras)}`` for the in-memory rows of the guide, at ``n`` rows."""
    from kernelmaps import (KernelRidge, LeastSquaresClassifier, LeastSquaresRegressor, NystroemKernelRidge,
                            NystroemLogisticRegression, RandomBinning, RandomFourierFeatures)

    alpha = s["lam"] * n  # the same ridge λ = alpha / n for every learner

    def exact(X, y):
        model = KernelRidge(alpha=alpha, gamma=gamma).fit(X, y)
        return model.predict, {}

    def rff(X, y):
        features = RandomFourierFeatures(s["rff_components"], gamma=gamma, random_state=s["seed"]).fit(X)
        model = LeastSquaresRegressor(alpha=alpha).fit(X, y, feature_map=features)
        return lambda X_test: model.predict(features.transform(X_test)), {}

    def binning(X, y):
        features = RandomBinning(s["bin_grids"], gamma=s["bin_gamma"], random_state=s["seed"]).fit(X)
        model = LeastSquaresClassifier(alpha=alpha).fit(X, y, feature_map=features)
        return lambda X_test: model.predict(features.transform(X_test)), {"cg_iterations": model.n_iter_}

    def nystroem(X, y):
        model = NystroemKernelRidge(s["nystroem_m"], alpha=alpha, gamma=gamma, random_state=s["seed"]).fit(X, y)
        return model.predict, {"cg_iterations": model.n_iter_, "passes": model.n_iter_ + 1}

    def logistic(X, y):
        model = NystroemLogisticRegression(s["logistic_m"], alpha=alpha, gamma=gamma,
                                           random_state=s["seed"]).fit(X, y)
        cg = int(sum(model.cg_iterations_))
        # the first pass, one per CG iteration, and per step two: the direction's product and the update's
        return model.predict, {"newton_steps": model.n_iter_, "cg_iterations": cg,
                               "passes": 1 + 2 * model.n_iter_ + cg}

    return {"exact": exact, "rff": rff, "binning": binning, "nystroem": nystroem, "logistic": logistic}


def _score(task, y_true, y_pred):
    from sklearn.metrics import accuracy_score, r2_score

    return ("R²", float(r2_score(y_true, y_pred))) if task == "regression" else \
        ("accuracy", float(accuracy_score(y_true, y_pred)))


def _data(s, n, seed):
    """``(X float32, regression targets, class labels)``: d standard normal features per row."""
    import numpy as np

    X, y = smooth_regression(n, s["d"], noise=s["noise"], seed=seed)
    return X.astype(np.float32), y, synthetic_labels(X)


def _measure(row, fit, X, y, X_test, y_test):
    """One timed fit: a dict of its time, test score and peak memory, or of its refusal for lack of memory."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    before = reset_peak_resident()
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            predict, extras = fit(X, y)
    except MemoryError as exc:  # refused before any work: the message names what it would take
        needed = re.search(r"would take ([\d.]+ \w+)", str(exc))
        return {"status": "refused", "needs": needed.group(1) if needed else "", "message": str(exc)}
    seconds = time.perf_counter() - start
    peak = (peak_resident_bytes() - before) / 2**30
    metric, score = _score(row.task, y_test, predict(X_test))
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return {"status": "fit", "fit_seconds": seconds, "metric": metric, "score": score, "peak_gib": peak,
            "converged": converged, **extras}


def _dask_fits(s, gamma, X_test, y_test):
    """``{n: measurement}`` of the Dask row on a LocalCluster, the rows generated lazily on the workers."""
    from distributed import Client, LocalCluster

    from kernelmaps import NystroemKernelRidge

    cluster = LocalCluster(n_workers=s["workers"], threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, memory_limit="8GiB", silence_logs=40)
    client = Client(cluster)
    found = {}
    try:
        small_X, small_y = lazy_smooth_regression(4 * 1024, s["d"], 1024, s["seed"] + 7, s["noise"])
        NystroemKernelRidge(32, alpha=1.0, gamma=gamma, random_state=0).fit(small_X.astype("float32"), small_y)
        for n in s["sizes"]:
            X, y = lazy_smooth_regression(n, s["d"], s["chunk_rows"], s["seed"], s["noise"])
            # the row stands for data beyond memory, whose kernel blocks do not fit on the workers either: at
            # these stand-in sizes they would, so the row keeps none, as it was recorded (before the workers
            # could keep them)
            model = NystroemKernelRidge(s["nystroem_m"], alpha=s["lam"] * n, gamma=gamma, random_state=s["seed"],
                                        kernel_cache=None)
            before = client.run(reset_peak_resident)
            result = _measure(ROWS["dask"], lambda X, y: (model.fit(X, y).predict, {}), X.astype("float32"), y,
                              X_test, y_test)
            workers = client.run(peak_resident_bytes)
            if result["status"] == "fit":
                result.update(cg_iterations=model.n_iter_, passes=model.n_iter_ + 1,
                              worker_peak_gib=max(workers[w] - before[w] for w in workers) / 2**30)
            found[n] = result
    finally:
        client.close()
        cluster.close()
    return found


@experiment(
    "size-guide",
    paper="Rahimi & Recht, NIPS 2007; Rudi, Carratino & Rosasco, NIPS 2017; Meanti et al., NeurIPS 2020: the "
          "costs that the README's size guide quotes",
    source="README, \"Which learner for which size\"",
    claim=f"Each learner that the README's size guide recommends fits 10^5 and 10^6 rows (d = 16) on this 2-core "
          f"machine, each fit within {MINUTES_BAR:g} minutes, and learns. The exact learner fits 2·10^4 rows and "
          "refuses 10^5 and 10^6 before any work, saying how much memory they would need.",
    paper_value="one pass over the rows for features + least squares (O(n D²)); 20–60 passes of O(n m d) for "
                "Nyström ridge; O(n²) memory for exact kernel ridge",
    quick={"sizes": [2_000, 10_000], "exact_rows": 1_000, "d": 16, "test_rows": 2_000, "rff_components": 512,
           "bin_grids": 16, "bin_gamma": 0.1, "nystroem_m": 256, "logistic_m": 128, "workers": 2,
           "chunk_rows": 2_500, "lam": 1e-6, "noise": 0.1, "seed": 0},
    full={"sizes": [100_000, 1_000_000], "exact_rows": 20_000, "d": 16, "test_rows": 10_000, "rff_components": 4096,
          "bin_grids": 50, "bin_gamma": 0.2, "nystroem_m": 4096, "logistic_m": 1024, "workers": 2,
          "chunk_rows": 100_000, "lam": 1e-6, "noise": 0.1, "seed": 0},
    timed=True,
    requires=(("distributed", "pip install 'kernelmaps[dask]'"),),
    size=Size("sizes", "{} rows", claim=10**6, measure=max),
)
def size_guide(run):
    import gc
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from kernelmaps import resolve_gamma

    s = run.settings
    X_test, y_test, labels_test = _data(s, s["test_rows"], s["seed"] + 1)
    gamma = resolve_gamma("scale", X_test, "gaussian", np.random.RandomState(s["seed"]))  # the law of every X
    warm_X, warm_y, warm_labels = _data(s, 1000, s["seed"] + 2)
    with warnings.catch_warnings():  # a warm-up fit's convergence, and its centres capped at its 1000 rows,
        warnings.simplefilter("ignore", ConvergenceWarning)  # are not what is measured
        warnings.filterwarnings("ignore", "n_components=.* is larger than the 1000 rows", UserWarning)
        for key, fit in _learners(s, gamma, 1000).items():  # compilation and imports, outside the clock
            fit(warm_X, warm_labels if ROWS[key].task == "classification" else warm_y)
    found = {row.key: {} for row in GUIDE}
    sizes = {row.key: list(s["sizes"]) for row in GUIDE}
    sizes["exact"] = [s["exact_rows"], *s["sizes"]]
    for n in run.progress(sorted({n for ns in sizes.values() for n in ns}), desc="sizes"):
        X, y, labels = _data(s, n, s["seed"])
        for row in GUIDE[:-1]:
            if n in sizes[row.key]:
                classes = row.task == "classification"
                found[row.key][n] = _measure(row, _learners(s, gamma, n)[row.key], X, labels if classes else y,
                                             X_test, labels_test if classes else y_test)
        del X, y, labels
        gc.collect()
    found["dask"] = _dask_fits(s, gamma, X_test, y_test)
    _record(run, s, gamma, found)


def _shortfalls(row, by_n, s):
    """What keeps ``row``'s measurements from meeting the claim, as sentences."""
    found = []
    for n, result in sorted(by_n.items()):
        if result["status"] == "refused":
            if n <= s["exact_rows"] or row.key != "exact" or not result["needs"]:
                found.append(f"{row.key} refused {n:,} rows ({result['message']})")
        elif result["score"] < SCORE_FLOOR[row.task]:
            found.append(f"{row.key} at {n:,} rows: {result['metric']} {result['score']:.3f}, below "
                         f"{SCORE_FLOOR[row.task]}")
        elif n == max(s["sizes"]) and result["fit_seconds"] > 60 * MINUTES_BAR:
            found.append(f"{row.key} at {n:,} rows took {result['fit_seconds'] / 60:.1f} min")
    if row.key == "exact":
        import os

        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        found += [f"exact did not refuse {n:,} rows, whose Gram matrix and factor (16 n² bytes) exceed this "
                  "machine's memory" for n, result in sorted(by_n.items())
                  if 16 * n * n > memory and result["status"] != "refused"]
    return found


def _describe(result):
    if result["status"] == "refused":
        return f"refused ({result['needs']})"
    return f"{result['fit_seconds']:.1f} s, {result['metric']} {result['score']:.3f}, {result['peak_gib']:.2f} GiB"


def _record(run, s, gamma, found):
    rows = [{"guide_row": key, "learner": ROWS[key].learner.format(**s), "n": n, "d": s["d"], "gamma": gamma,
             "lam": s["lam"], **result} for key, by_n in found.items() for n, result in sorted(by_n.items())]
    run.write_csv(rows)
    _plot(run, s, found)
    shortfalls = {row.key: _shortfalls(row, found[row.key], s) for row in GUIDE}
    failing = [key for key, texts in shortfalls.items() if texts]
    status = "holds" if not failing else ("partly holds" if len(failing) < len(GUIDE) else "does not hold")
    measured = [(f"{row.learner.format(**s)}, d = {s['d']}: fit time, test score, peak memory beyond the data",
                 "; ".join(f"n = {n:,}: {_describe(result)}" for n, result in sorted(found[row.key].items())))
                for row in GUIDE]
    largest = max(s["sizes"])
    ours = "; ".join(f"{row.key} at n = {largest:,}: {_describe(found[row.key][largest])}"
                     for row in GUIDE if largest in found[row.key])
    note = [f"{s['sizes'][0]:,} and {largest:,} rows stand in for 10^5 and 10^6 (quick run)"] if run.quick else []
    note += [text for key in failing for text in shortfalls[key]]
    note.append(f"float32 rows; γ = 'scale' = {gamma:.4g} (Gaussian), λ = α/n = {s['lam']:g} for every learner; "
                "one fit each, after a warm-up fit; peak memory is the resident set's high-water mark beyond the "
                "data (on Dask, the client's; the workers' is in the CSV)")
    run.verdict(status, ours=ours, measured=measured, note="; ".join(note))


def _plot(run, s, found):
    fig, ax = figure(1, 1, width=6.0, height=4.0)
    axes = ax[0, 0]
    for row in GUIDE:
        points = [(n, r["fit_seconds"]) for n, r in sorted(found[row.key].items()) if r["status"] == "fit"]
        refused = [n for n, r in sorted(found[row.key].items()) if r["status"] == "refused"]
        label = row.learner.format(**s).split(" (")[0].replace("`", "")
        if row.key == "dask":
            label += " on Dask"
        if refused:
            label += f" (refused {', '.join(f'{n:.0e}' for n in refused)})"
        if points:
            axes.loglog(*zip(*points), marker="o", label=label)
    axes.set(xlabel="training rows n", ylabel="fit seconds", title=f"d = {s['d']}, float32, 2 cores"
             + (" (quick run)" if run.quick else ""))
    axes.legend(fontsize=7)
    fig.tight_layout()
    run.save_figure(fig)
