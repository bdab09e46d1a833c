"""The logistic Nyström machine on many classes, against the ridge classifier on the same centres.

Experiment
----------
``logistic-classes`` (timed)
    Fits :class:`kernelmaps.NystroemLogisticRegression` and
    :class:`kernelmaps.NystroemKernelRidgeClassifier` on letter (26 classes, one
    one-vs-rest column each) with the same centres, bandwidth and ridge, and
    records each fit's CPU time (the process's, all threads), wall time, test
    accuracy, and the logistic machine's Newton steps and CG iterations. Each
    Newton step of the logistic machine is one pass per CG iteration for all 26
    columns, preconditioned by one factor shared by the columns.
"""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: The logistic fit may take at most this many times the ridge classifier's.
TIME_BAR = 2.0


def _timed_fit(model, X, y, repeats):
    import time

    import numpy as np

    cpu, wall = [], []
    for _ in range(repeats):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        model.fit(X, y)
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    return float(np.median(cpu)), float(np.median(wall))


@experiment(
    "logistic-classes",
    paper="Meanti, Carratino, Rosasco & Rudi, Kernel methods through the roof, NeurIPS 2020 (logistic Falkon)",
    source="the project's bar for many-class problems",
    claim=f"On letter (26 classes, m = 2000 centres), NystroemLogisticRegression fits in at most {TIME_BAR:g}x "
          "the CPU time of NystroemKernelRidgeClassifier with the same centres.",
    paper_value=f"no many-class timing in the paper; the bar: logistic / ridge CPU time ≤ {TIME_BAR:g}",
    quick={"train_rows": 4000, "m": 500, "lam": 1e-5, "repeats": 1, "seed": 0},
    full={"train_rows": None, "m": 2000, "lam": 1e-5, "repeats": 3, "seed": 0},
    timed=True,
    size=(Size("m", "m = {}", claim=2000),),
)
def logistic_classes(run):
    import warnings

    import numpy as np

    from benchmarks.experiments._data import standardized_split
    from benchmarks.machine import machine_info
    from kernelmaps import NystroemKernelRidgeClassifier, NystroemLogisticRegression

    s = run.settings
    X, y, Xt, yt, gamma = standardized_split("letter", s["seed"])
    if s["train_rows"] is not None:
        X, y = X[:s["train_rows"]], y[:s["train_rows"]]
    n = X.shape[0]
    params = dict(alpha=s["lam"] * n, gamma=gamma, random_state=s["seed"])
    models = {"ridge classifier": NystroemKernelRidgeClassifier(s["m"], **params),
              "logistic": NystroemLogisticRegression(s["m"], max_iter=40, **params)}
    rows, cells = [], {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, model in models.items():
            cpu, wall = _timed_fit(model, X, y, s["repeats"])
            cells[name] = {"cpu": cpu, "wall": wall, "accuracy": float(model.score(Xt, yt))}
            rows.append({"model": name, "rows": n, "m": s["m"], "cpu_s": cpu, "wall_s": wall,
                         "accuracy": cells[name]["accuracy"], "numba_target": machine_info()["numba_target"]})
    logistic = models["logistic"]
    same_centres = np.array_equal(models["ridge classifier"].components_, logistic.components_)
    run.write_csv(rows)
    _plot(run, cells, s["m"])
    ratio = cells["logistic"]["cpu"] / cells["ridge classifier"]["cpu"]
    status = "holds" if ratio <= TIME_BAR and same_centres else "does not hold"
    steps = f"{logistic.n_iter_} Newton steps, {sum(logistic.cg_iterations_)} CG iterations"
    run.verdict(
        status,
        ours=f"{n} rows, m = {s['m']}: logistic / ridge CPU time {ratio:.2f} ({steps}); same centres: "
             f"{same_centres}",
        measured=[(f"letter, m = {s['m']}, {name}: CPU s · wall s · accuracy",
                   f"{c['cpu']:.1f} · {c['wall']:.1f} · {c['accuracy']:.4f}") for name, c in cells.items()],
        note="; ".join(sorted({str(w.message) for w in caught})),
    )


def _plot(run, cells, m):
    fig, ax = figure(2, 1, width=4.0)
    names = list(cells)
    ax[0, 0].bar(names, [cells[name]["cpu"] for name in names])
    ax[0, 0].set(ylabel="fit CPU time (s)", title=f"letter, 26 classes, m = {m}")
    ax[0, 1].bar(names, [cells[name]["accuracy"] for name in names])
    ax[0, 1].set(ylabel="test accuracy", ylim=(0, 1))
    fig.tight_layout()
    run.save_figure(fig)
