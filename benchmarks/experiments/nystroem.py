"""Nyström features (lecture, "Nystrom Approximation"): landmark choice, and speed against scikit-learn."""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

_LANDMARKS = ("uniform", "kmeans", "leverage")
#: The (part, implementation) pairs timed by nystroem-speed, in the order of its figure.
_TIMED = [("fit + transform", "kernelmaps"), ("fit + transform", "sklearn"), ("fit", "kernelmaps"),
          ("fit", "sklearn"), ("transform", "kernelmaps"), ("transform", "two GEMMs"), ("transform", "sklearn")]


@experiment(
    "nystroem-landmarks",
    paper="Hsieh, ECS289 lecture (Zhang et al., ICML 2008)",
    source="\"Nystrom Approximation\": landmark choice",
    claim="Taking the k-means centres as Nyström landmarks \"performs extremely well\": a lower kernel "
          "error than uniform sampling and than leverage-score sampling at the same m.",
    paper_value="no numbers in the lecture; the bar here: k-means has the lowest relative Frobenius "
                "error of the three in every setting",
    quick={"datasets": ["letter", "magic04"], "gammas": ["knn50"], "widths": [64, 256], "seeds": 2,
           "fit_rows": None, "eval_rows": 1000},
    full={"datasets": ["letter", "magic04"], "gammas": ["knn50", "scale"], "widths": [64, 256], "seeds": 3,
          "fit_rows": None, "eval_rows": 2000},
    size=Size("eval_rows", "{} evaluation rows"),
)
def nystroem_landmarks(run):
    import time

    import numpy as np
    from sklearn.preprocessing import StandardScaler

    from kernelmaps import Nystroem, datasets, relative_frobenius_error, resolve_gamma

    s = run.settings
    rows = []
    error = {}
    prepared = {}
    for name in s["datasets"]:
        X = StandardScaler().fit_transform(datasets.load(name).X_train)
        # the evaluation rows: the first eval_rows of a permutation with its own seed, so that
        # they do not depend on the draw of the fitting rows (seed 0)
        ev = X[np.random.RandomState(1).permutation(len(X))[:s["eval_rows"]]]
        if s["fit_rows"] is not None and X.shape[0] > s["fit_rows"]:
            X = X[np.sort(np.random.RandomState(0).choice(X.shape[0], s["fit_rows"], replace=False))]
        prepared[name] = X, ev
    jobs = [(name, g, m, lm) for name in s["datasets"] for g in s["gammas"] for m in s["widths"] for lm in _LANDMARKS]
    kernels = {}
    for name, g, m, lm in run.progress(jobs, desc="landmarks"):
        X, ev = prepared[name]
        gamma = resolve_gamma(g, X, "gaussian", np.random.RandomState(0))
        if (name, g) not in kernels:
            kernels[name, g] = Nystroem(1, gamma=gamma).fit(ev).kernel(ev)
        errs = []
        for seed in range(s["seeds"]):
            start = time.perf_counter()
            ny = Nystroem(m, gamma=gamma, landmarks=lm, random_state=seed).fit(X)
            fit = time.perf_counter() - start
            errs.append(relative_frobenius_error(kernels[name, g], Z=ny.transform(ev)))
            rows.append({"dataset": name, "n_fit": X.shape[0], "n_eval": ev.shape[0], "gamma_rule": g,
                         "gamma": gamma, "m": m, "landmarks": lm, "seed": seed,
                         "relative_error": errs[-1], "fit_seconds": fit})
        error[name, g, m, lm] = float(np.mean(errs))
    run.write_csv(rows)

    settings = [(name, g) for name in s["datasets"] for g in s["gammas"]]
    fig, ax = figure(len(settings), 1, width=4.8)
    x = np.arange(len(s["widths"]))
    for col, (name, g) in enumerate(settings):
        a = ax[0, col]
        for i, lm in enumerate(_LANDMARKS):
            a.bar(x + (i - 1) * 0.27, [error[name, g, m, lm] for m in s["widths"]], 0.27, label=lm)
        a.set(xticks=x, xlabel="m (landmarks)", ylabel="‖K − ZZᵀ‖_F / ‖K‖_F", title=f"{name}, γ = {g}")
        a.set_xticklabels(s["widths"])
        a.legend(fontsize=8)
    fig.tight_layout()
    run.save_figure(fig)

    best = {(name, g, m): min(_LANDMARKS, key=lambda lm: error[name, g, m, lm])
            for name, g in settings for m in s["widths"]}
    beats_uniform = {k: error[(*k, "kmeans")] < error[(*k, "uniform")] for k in best}
    wins = [k for k, lm in best.items() if lm == "kmeans"]
    status = ("holds" if len(wins) == len(best)
              else "partly holds" if any(beats_uniform.values()) else "does not hold")
    widths = " and ".join(map(str, s["widths"]))

    def ratios(name, g, other):
        return ", ".join(f"{error[name, g, m, 'kmeans'] / error[name, g, m, other]:.2f}" for m in s["widths"])

    note = [f"{best[k]} beats k-means at {k[0]}, γ={k[1]}, m={k[2]}" for k in best if best[k] != "kmeans"]
    run.verdict(
        status,
        ours="k-means error / uniform's, m = " + widths + ": "
             + "; ".join(f"{name} (γ={g}) {ratios(name, g, 'uniform')}" for name, g in settings)
             + f"; k-means lowest of the three in {len(wins)} of {len(best)} settings",
        measured=[
            (f"Nyström kernel error, k-means / uniform landmarks, m = {widths}: "
             + "; ".join(f"{name} (γ = {g})" for name, g in settings),
             "; ".join(ratios(name, g, "uniform") for name, g in settings)),
            ("same, k-means / leverage-score landmarks", "; ".join(ratios(name, g, "leverage") for name, g in settings)),
        ],
        note="; ".join(note),
    )


@experiment(
    "nystroem-speed",
    paper="Hsieh, ECS289 lecture",
    source="\"Nystrom Approximation\": cost O(n m d + m³); the project's speed bar on every CPU target",
    claim="kernelmaps' Nyström fit + transform is at least 1.5× faster than scikit-learn's at the same "
          "landmarks, in float64 and float32, gives the same Z Zᵀ, and its transform costs about the two "
          "matrix products it needs (X Vᵀ, then K_b W^-1/2).",
    paper_value="n m kernel evaluations + m³ (no timing in the lecture); the bars here: speed-up ≥ 1.5 "
                "(the project's bar), max |ZZᵀ − Z_sk Z_skᵀ| < 1e-10 (float64), transform ≤ 1.5 × its two GEMMs",
    quick={"N": 20000, "d": 64, "m": 1024, "dtypes": ["float64", "float32"], "repeats": 3,
           "agreement_rows": 1000},
    full={"N": 20000, "d": 64, "m": 1024, "dtypes": ["float64", "float32"], "repeats": 7,
          "agreement_rows": 2000},
    timed=True,
    size=Size("N", "{} rows"),
)
def nystroem_speed(run):
    import numpy as np

    from benchmarks.machine import machine_info

    s = run.settings
    target = machine_info()["numba_target"]
    X64 = np.random.default_rng(0).standard_normal((s["N"], s["d"]))
    gamma = 1.0 / (s["d"] * X64.var())
    rows, t, speedup, gemm_ratio, same_landmarks = [], {}, {}, {}, {}
    for dtype in s["dtypes"]:
        X = X64.astype(dtype)
        same_landmarks[dtype], agreement = _time_nystroem(run, X, gamma, target, rows)
        if agreement is not None:
            gap = agreement
        medians, speedup[dtype], gemm_ratio[dtype] = _medians_and_ratios(rows, dtype)
        t.update({(dtype, part, implementation): v for (part, implementation), v in medians.items()})
        del X
    run.write_csv(rows)
    _draw_nystroem_speed(run, t, speedup, gap, target)
    _judge_nystroem_speed(run, t, speedup, gemm_ratio, all(same_landmarks.values()), gap, target)


def _clock(func):
    """Seconds ``func()`` takes; its result is dropped before the next measurement."""
    import time

    start = time.perf_counter()
    result = func()
    seconds = time.perf_counter() - start
    del result
    return seconds


def _time_nystroem(run, X, gamma, target, rows):
    """Time both Nyström implementations and the two GEMMs on ``X``, appending the CSV rows.

    Returns whether both drew the same landmarks, and in float64 the largest
    |ZZᵀ − Z_sk Z_skᵀ| on the first ``agreement_rows`` rows (else None).
    """
    import numpy as np
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    from kernelmaps import Nystroem

    s = run.settings
    N, d, m = s["N"], s["d"], s["m"]
    dtype = X.dtype.name

    def record(part, implementation, repeat, seconds):
        rows.append({"dtype": dtype, "part": part, "implementation": implementation, "N": N, "d": d, "m": m,
                     "repeat": repeat, "seconds": seconds, "numba_target": target})

    Nystroem(64, gamma=gamma, random_state=0).fit(X[:500]).transform(X[:500])  # Numba compilation
    ours = Nystroem(m, gamma=gamma, random_state=0).fit(X)
    sk = SkNystroem(gamma=gamma, n_components=m, random_state=0).fit(X)
    same_landmarks = bool(np.array_equal(ours.components_, np.asarray(sk.components_, dtype=np.float64)))
    V, W = ours.components_.astype(dtype), ours.normalization_.astype(dtype)
    Kb = X @ V.T
    # interleaved pairs, so that a load on the shared machine hits both sides alike
    for repeat in run.progress(range(s["repeats"]), desc=f"{dtype} fit + transform"):
        record("fit + transform", "kernelmaps", repeat,
               _clock(lambda: Nystroem(m, gamma=gamma, random_state=0).fit(X).transform(X)))
        record("fit + transform", "sklearn", repeat,
               _clock(lambda: SkNystroem(gamma=gamma, n_components=m, random_state=0).fit(X).transform(X)))
        record("fit", "kernelmaps", repeat, _clock(lambda: Nystroem(m, gamma=gamma, random_state=0).fit(X)))
        record("fit", "sklearn", repeat, _clock(lambda: SkNystroem(gamma=gamma, n_components=m, random_state=0).fit(X)))
    for repeat in run.progress(range(s["repeats"]), desc=f"{dtype} transform"):
        record("transform", "kernelmaps", repeat, _clock(lambda: ours.transform(X)))
        record("transform", "two GEMMs", repeat, _clock(lambda: (X @ V.T, Kb @ W)))
        record("transform", "sklearn", repeat, _clock(lambda: sk.transform(X)))
    if dtype != "float64":
        return same_landmarks, None
    A = X[:s["agreement_rows"]]
    Za, Zb = ours.transform(A), sk.transform(A)
    gap = float(np.abs(Za @ Za.T - Zb @ Zb.T).max())
    rows.append({"dtype": dtype, "part": "agreement", "implementation": "max |ZZᵀ − Z_sk Z_skᵀ|",
                 "N": A.shape[0], "d": d, "m": m, "value": gap, "same_landmarks": same_landmarks})
    return same_landmarks, gap


def _medians_and_ratios(rows, dtype):
    """At ``dtype``: the median seconds of each timed pair, the median speed-up over scikit-learn
    (fit + transform) and the median ratio of our transform to its two GEMMs."""
    import numpy as np

    def samples(part, implementation):
        return np.array([r["seconds"] for r in rows if r["dtype"] == dtype and r["part"] == part
                         and r["implementation"] == implementation])

    medians = {pair: float(np.median(samples(*pair))) for pair in _TIMED}
    speedup = float(np.median(samples("fit + transform", "sklearn") / samples("fit + transform", "kernelmaps")))
    gemm_ratio = float(np.median(samples("transform", "kernelmaps") / samples("transform", "two GEMMs")))
    return medians, speedup, gemm_ratio


def _draw_nystroem_speed(run, t, speedup, gap, target):
    """Every median time, and the speed-up over scikit-learn per dtype against the 1.5× bar."""
    import numpy as np

    s = run.settings
    fig, ax = figure(2, 1, width=5.5)
    labels = list(t)
    ax[0, 0].barh(range(len(labels)), [t[k] for k in labels],
                  color=["tab:blue" if k[2] == "kernelmaps" else "tab:gray" if k[2] == "two GEMMs" else "tab:orange"
                         for k in labels])
    ax[0, 0].set_yticks(range(len(labels)))
    ax[0, 0].set_yticklabels([f"{dt} {p}: {i}" for dt, p, i in labels], fontsize=7)
    ax[0, 0].invert_yaxis()
    ax[0, 0].set(xlabel="seconds (median)", title=f"N = {s['N']}, d = {s['d']}, m = {s['m']}, target {target}")
    x = np.arange(len(s["dtypes"]))
    ax[0, 1].bar(x, [speedup[dt] for dt in s["dtypes"]], color="tab:green")
    for xi, dt in zip(x, s["dtypes"]):
        ax[0, 1].text(xi, speedup[dt], f"{speedup[dt]:.2f}×", ha="center", va="bottom")
    ax[0, 1].axhline(1.5, color="k", ls=":")
    ax[0, 1].set(xticks=x, xticklabels=s["dtypes"], ylabel="sklearn / ours, fit + transform",
                 title=f"dotted: the 1.5× bar; max |ZZᵀ − Z_sk Z_skᵀ| = {gap:.1e}")
    fig.tight_layout()
    run.save_figure(fig)


def _judge_nystroem_speed(run, t, speedup, gemm_ratio, same_landmarks, gap, target):
    """The verdict: at least 1.5× scikit-learn, the same ZZᵀ, and a transform within 1.5× its two GEMMs."""
    s = run.settings
    N, d, m = s["N"], s["d"], s["m"]
    fast = all(speedup[dt] >= 1.5 for dt in s["dtypes"])
    agrees = same_landmarks and gap < 1e-10
    lean = all(gemm_ratio[dt] <= 1.5 for dt in s["dtypes"])
    met = [fast, agrees, lean]
    status = "holds" if all(met) else ("partly holds" if any(met) else "does not hold")
    note = [f"{dt}: {speedup[dt]:.2f}× scikit-learn, below the 1.5× bar" for dt in s["dtypes"] if speedup[dt] < 1.5]
    if not agrees:
        note.append("the landmarks differ from scikit-learn's" if not same_landmarks
                    else f"ZZᵀ differs from scikit-learn's by {gap:.1e}")
    note += [f"{dt}: the transform takes {gemm_ratio[dt]:.2f}× its two GEMMs (the bar: 1.5)"
             for dt in s["dtypes"] if gemm_ratio[dt] > 1.5]
    per = "; ".join(
        f"{dt}: fit + transform {t[dt, 'fit + transform', 'kernelmaps']:.3f} s vs sklearn "
        f"{t[dt, 'fit + transform', 'sklearn']:.3f} s ({speedup[dt]:.2f}×; fit {t[dt, 'fit', 'kernelmaps']:.3f} "
        f"vs {t[dt, 'fit', 'sklearn']:.3f} s, transform {t[dt, 'transform', 'kernelmaps']:.3f} vs "
        f"{t[dt, 'transform', 'sklearn']:.3f} s, {gemm_ratio[dt]:.2f}× its two GEMMs)" for dt in s["dtypes"])
    run.verdict(
        status,
        ours=f"target {target}: {per}; max |ZZᵀ − Z_sk Z_skᵀ| = {gap:.1e} (float64)",
        measured=[
            (f"Nyström fit + transform vs scikit-learn's, N = {N}, d = {d}, m = {m}, same landmarks "
             f"(medians of {s['repeats']} per-pair ratios, interleaved): " + "; ".join(s["dtypes"]),
             "; ".join(f"{speedup[dt]:.2f}× faster" for dt in s["dtypes"])),
            ("same, transform / its two GEMMs (X Vᵀ, K_b W^-1/2); fit ours vs sklearn's: " + "; ".join(s["dtypes"]),
             "; ".join(f"{gemm_ratio[dt]:.2f}; {t[dt, 'fit', 'kernelmaps']:.2f} vs {t[dt, 'fit', 'sklearn']:.2f} s"
                       for dt in s["dtypes"])),
        ],
        note="; ".join(note),
    )
