"""Compact Nonlinear Maps (Yu, Kumar, Rowley & Chang, arXiv:1503.03893, 2015): training time.

Experiment
----------
``cnm-training-speed`` (timed)
    CNM (k = 64) fit time against RFF (k = 512) + Pegasos trained until it
    reaches CNM's test accuracy (the paper gives no timing; its claim is the
    abstract's, that compact maps avoid the cost of high-dimensional ones).

It follows the protocol of :mod:`benchmarks.experiments.cnm` (CNM's settings
are that module's :data:`~benchmarks.experiments.cnm.CNM`), BLAS single-threaded
for both methods.
"""

from benchmarks.experiments._common import one_blas_thread
from benchmarks.experiments._data import standardized_split
from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size
from benchmarks.experiments.cnm import CNM


@experiment(
    "cnm-training-speed",
    paper="Yu et al., 2015 (CNM)",
    source="abstract, section 8 (compact maps cut the cost of learning)",
    claim="Training the compact CNM (k = 64) takes less time than training RFF (k = 512) + Pegasos "
          "until it reaches CNM's test accuracy, at each regularization λ tried.",
    paper_value="no timing in the paper: 'high-dimensional maps ... lead to high computational cost "
                "in ... the subsequent learning'; CNM 'leads to much more compact maps without hurting "
                "the performance'",
    quick={"dataset": "letter", "k_cnm": 64, "k_rff": 512, "seeds": 3, "lambdas": [1e-4, 1e-5, 1e-6],
           "steps": [100, 200, 400, 800, 1600, 3200, 6400], "give_up_ratio": 1.0},
    full={"dataset": "letter", "k_cnm": 64, "k_rff": 512, "seeds": 3, "lambdas": [1e-4, 1e-5, 1e-6],
          "steps": list(range(100, 2001, 100)) + [3000, 4000, 8000], "give_up_ratio": None},
    timed=True,
    size=Size("steps", "up to {} Pegasos steps", measure=max),
)
def cnm_training_speed(run):
    import os

    from kernelmaps import CompactNonlinearMap, PegasosSVC

    s = run.settings
    X, y, Xt, yt, gamma = standardized_split(s["dataset"])
    seeds = range(s["seeds"])

    def cnm(seed):
        model = CompactNonlinearMap(s["k_cnm"], gamma=gamma, random_state=seed, **CNM).fit(X, y)
        return model.predict

    load_start = os.getloadavg()[0]
    with one_blas_thread():
        CompactNonlinearMap(4, gamma=gamma, max_iter=1).fit(X[:300], y[:300])  # compile outside the clock
        PegasosSVC(max_iter=2).fit(X[:300], y[:300])
        t_cnm, target, accs = _median_fits(cnm, seeds, Xt, yt)
        rows = [{"method": f"CNM k={s['k_cnm']}", "lambda": CNM["alpha"], "steps": "",
                 "median_seconds": t_cnm, "median_accuracy": target,
                 "seed_accuracies": " ".join(f"{a:.4f}" for a in accs)}]
        outcome = {lam: _steps_to_reach(run, (X, y, Xt, yt, gamma), lam, t_cnm, target, rows)
                   for lam in run.progress(s["lambdas"], desc="λ")}
    load_end = os.getloadavg()[0]
    run.write_csv(rows)
    _draw_training_speed(run, rows, t_cnm, target)
    _judge_training_speed(run, outcome, t_cnm, target, (load_start, load_end))


def _median_fits(make, seeds, Xt, yt):
    """Median fit time and median test accuracy of ``make(seed)`` over the seeds: training
    is chaotic (one ulp of the data moves CNM's accuracy by ~0.01), so one seed is no target."""
    import time

    import numpy as np

    times, accuracies = [], []
    for seed in seeds:
        start = time.perf_counter()
        predict = make(seed)
        times.append(time.perf_counter() - start)
        accuracies.append(float(np.mean(predict(Xt) == yt)))
    return float(np.median(times)), float(np.median(accuracies)), accuracies


def _steps_to_reach(run, split, lam, t_cnm, target, rows):
    """Train RFF + Pegasos at ``lam`` over the step grid until it reaches CNM's accuracy ``target``.

    Appends a CSV row per step count and returns ``(kind, steps, low, high)``: "reached"
    with the bracket of times around the target, "gave up" past ``give_up_ratio`` × CNM's
    time, or "never" within the grid.
    """
    from kernelmaps import PegasosSVC, RandomFourierFeatures

    s = run.settings
    X, y, Xt, yt, gamma = split

    def rff_pegasos(steps):
        def make(seed):
            # the RFF draw and the transform of the training set are part of its training time,
            # as CNM's features are part of CNM's
            rff = RandomFourierFeatures(s["k_rff"], gamma=gamma, random_state=seed).fit(X)
            clf = PegasosSVC(alpha=lam, batch_size=CNM["batch_size"], max_iter=steps,
                             random_state=seed).fit(rff.transform(X), y)
            return lambda X_: clf.predict(rff.transform(X_))
        return make

    previous = 0.0
    for steps in s["steps"]:
        t, accuracy, accs = _median_fits(rff_pegasos(steps), range(s["seeds"]), Xt, yt)
        rows.append({"method": f"RFF k={s['k_rff']} + Pegasos", "lambda": lam, "steps": steps,
                     "median_seconds": t, "median_accuracy": accuracy,
                     "seed_accuracies": " ".join(f"{a:.4f}" for a in accs)})
        if accuracy >= target:
            # between the last count short of the target and this one: a bracket
            return ("reached", steps, previous, t)
        previous = t
        # past this multiple of CNM's time without the target, RFF is the slower side
        # whatever the later counts give: the quick mode stops searching there
        if s["give_up_ratio"] and t > s["give_up_ratio"] * t_cnm:
            return ("gave up", steps, t, None)
    return ("never", s["steps"][-1], previous, None)


def _draw_training_speed(run, rows, t_cnm, target):
    """RFF + Pegasos's accuracy against its fit time, and its fit time against the steps; CNM's point in red."""
    s = run.settings
    fig, axes = figure(2, 1, width=4.6)
    for lam in s["lambdas"]:
        pts = [(r["steps"], r["median_seconds"], r["median_accuracy"]) for r in rows if r["lambda"] == lam
               and r["steps"] != ""]
        steps, secs, accs = zip(*pts)
        axes[0][0].plot(secs, accs, "o-", markersize=3, label=f"RFF+Pegasos λ={lam:g}")
        axes[0][1].plot(steps, secs, "o-", markersize=3, label=f"λ={lam:g}")
    axes[0][0].plot([t_cnm], [target], "r*", markersize=12, label=f"CNM k={s['k_cnm']}")
    axes[0][0].axhline(target, color="r", linestyle=":")
    axes[0][0].axvline(t_cnm, color="r", linestyle=":")
    axes[0][0].set(xlabel="median fit seconds", ylabel="median test accuracy", title=s["dataset"].upper())
    axes[0][1].axhline(t_cnm, color="r", linestyle=":", label="CNM's fit time")
    axes[0][1].set(xlabel="Pegasos steps", ylabel="median fit seconds", xscale="log")
    for ax in axes[0]:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    run.save_figure(fig)


def _judge_training_speed(run, outcome, t_cnm, target, loads):
    """The verdict: CNM is faster at a λ if even the lower end of RFF's bracket is slower; RFF is
    faster if the upper end (the time at the count that reached the target) is below CNM's."""
    import os

    s = run.settings
    parts, cnm_faster, rff_faster = [], [], []
    for lam, (kind, steps, low, high) in outcome.items():
        if kind == "reached":
            parts.append(f"λ={lam:g}: reaches it by {steps} steps in {high:.2f} s "
                         f"({low / t_cnm:.2f}–{high / t_cnm:.2f}× CNM's time)")
            if low > t_cnm:
                cnm_faster.append(lam)
            elif high < t_cnm:
                rff_faster.append(lam)
        elif kind == "gave up":
            parts.append(f"λ={lam:g}: not reached after {steps} steps, {low:.2f} s "
                         f"(> {s['give_up_ratio']:g}× CNM's time: search stopped)")
            cnm_faster.append(lam)
        else:
            parts.append(f"λ={lam:g}: never within {steps} steps ({low:.2f} s)")
            if low > t_cnm:
                cnm_faster.append(lam)
    if len(cnm_faster) == len(outcome):
        status = "holds"
    elif rff_faster:
        status = "does not hold"
    else:
        status = "partly holds"
    ours = (f"CNM k={s['k_cnm']}: {t_cnm:.2f} s, test accuracy {target:.4f}; RFF k={s['k_rff']} + Pegasos to "
            f"that accuracy: " + "; ".join(parts))
    load_start, load_end = loads
    run.verdict(
        status,
        ours=ours,
        measured=[(f"CNM (k = {s['k_cnm']}) training vs RFF (k = {s['k_rff']}) + Pegasos to CNM's test accuracy "
                   f"on `{s['dataset']}` (medians over {s['seeds']} seeds; CNM {t_cnm:.2f} s, "
                   f"accuracy {target:.4f})", "; ".join(parts))],
        note=f"Threshold: at each λ, RFF's time to CNM's accuracy (the lower end of its bracket on the "
             f"step grid) above CNM's fit time. CNM faster at λ = "
             f"{', '.join(f'{v:g}' for v in cnm_faster) or 'none'}; RFF faster at λ = "
             f"{', '.join(f'{v:g}' for v in rff_faster) or 'none'}. Single-threaded BLAS for both; "
             f"load average {load_start:.2f} at start, {load_end:.2f} at end ({os.cpu_count()} cores).",
    )
