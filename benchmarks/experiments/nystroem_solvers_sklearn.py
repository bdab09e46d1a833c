"""Nyström kernel machines against scikit-learn's Nyström pipelines (``falkon-sklearn``, timed).

``NystroemKernelRidge`` and ``NystroemLogisticRegression`` against scikit-learn's
``Nystroem`` followed by ``Ridge`` or ``LogisticRegression``, at the same centres,
gamma and regularization, at two widths m: scikit-learn's pipeline costs
``O(n m^2)`` (the features' product with the m x m normalization and the solver's
Gram), ours ``O(n m t)`` for t iterations, so the ratio depends on m.
"""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

_PAPERS = ("Rudi, Carratino & Rosasco, NIPS 2017 (FALKON); Meanti, Carratino, Rosasco & Rudi, "
           "NeurIPS 2020 (logistic Falkon)")
TASKS = ("regression", "classification")


@experiment(
    "falkon-sklearn",
    paper=_PAPERS,
    source="the project's speed bar: against scikit-learn's Nyström pipelines on the same problems",
    claim="NystroemKernelRidge and NystroemLogisticRegression fit 50 000 rows at least 3× faster than "
          "make_pipeline(Nystroem(m), Ridge) and make_pipeline(Nystroem(m), LogisticRegression) at the same "
          "centres, γ and regularization (α = 1/C), to the same test RMSE within 1 % and the same accuracy "
          "within 0.2 points.",
    paper_value="no scikit-learn timing in the papers; the bars here: fit ≥ 3× faster, RMSE within 1 %, "
                "accuracy within 0.2 points, at each width m",
    quick={"n_train": 3000, "test_rows": 1000, "d": 16, "widths": [100, 200], "ridge_alpha": 0.1, "C": 1.0,
           "noise": 0.1, "repeats": 3, "seed": 0},
    full={"n_train": 50_000, "test_rows": 10_000, "d": 16, "widths": [2000, 4096], "ridge_alpha": 0.1, "C": 1.0,
          "noise": 0.1, "repeats": 3, "seed": 0},
    timed=True,
    size=(Size("n_train", "{} rows", claim=50_000), Size("widths", "m = {}")),
)
def falkon_sklearn(run):
    import numpy as np

    from benchmarks.common import smooth_regression
    from benchmarks.machine import machine_info
    from kernelmaps import resolve_gamma
    from kernelmaps.datasets import make_gaussian

    s = run.settings
    target = machine_info()["numba_target"]
    n, seed = s["n_train"], s["seed"]
    X_reg, y_reg = smooth_regression(n + s["test_rows"], s["d"], noise=s["noise"], seed=seed)
    X_clf, y_clf = make_gaussian(n + s["test_rows"], s["d"], random_state=seed)
    data = {"regression": (X_reg[:n], y_reg[:n], X_reg[n:], y_reg[n:]),
            "classification": (X_clf[:n], y_clf[:n], X_clf[n:], y_clf[n:])}
    # one numeric gamma for both sides, resolved once on each task's training rows
    gamma = {task: resolve_gamma("scale", arrays[0], "gaussian", np.random.RandomState(seed))
             for task, arrays in data.items()}
    rows, results = [], {}
    for m in s["widths"]:
        results[m] = _compare_at(run, m, data, gamma, s, target, rows)
    run.write_csv(rows)
    widths = s["widths"]

    fig, ax = figure(2, 1, width=5.0)
    x = np.arange(len(widths))
    for offset, task, colour in ((-0.2, "regression", "tab:blue"), (0.2, "classification", "tab:green")):
        ax[0, 0].bar(x + offset, [results[m]["ratio"][task] for m in widths], 0.4, color=colour,
                     label="ridge" if task == "regression" else "logistic")
    ax[0, 0].axhline(3, color="k", ls="--", lw=0.8, label="3× bar")
    ax[0, 0].set(xticks=x, ylabel=f"scikit-learn fit / ours (median of {s['repeats']})",
                 title=f"n = {n:,}, d = {s['d']}, target {target}")
    ax[0, 0].set_xticklabels([f"m = {m}" for m in widths])
    ax[0, 0].legend(fontsize=8)
    for offset, side, colour in ((-0.2, "sklearn", "tab:orange"), (0.2, "ours", "tab:blue")):
        ax[0, 1].bar(x + offset, [results[m]["median"]["regression", side] + results[m]["median"][
            "classification", side] for m in widths], 0.4, color=colour,
            label="scikit-learn pipelines" if side == "sklearn" else "ours")
    ax[0, 1].set(xticks=x, ylabel="fit seconds, ridge + logistic (medians)")
    ax[0, 1].set_xticklabels([f"m = {m}" for m in widths])
    ax[0, 1].legend(fontsize=8)
    fig.tight_layout()
    run.save_figure(fig)

    held = {m: all(results[m]["checks"].values()) for m in widths}
    status = "holds" if all(held.values()) else ("partly holds" if any(
        any(results[m]["checks"].values()) for m in widths) else "does not hold")
    note = [f"m = {m}, not met: {what}" for m in widths for what, good in results[m]["checks"].items() if not good]
    note += [f"m = {m}: a ConvergenceWarning from {side} ({task})" for m in widths
             for (task, side), flag in results[m]["stalled"].items() if flag]
    note += [f"m = {m}, {task}: the two sides drew different centres" for m in widths for task in TASKS
             if not results[m]["same_centres"][task]]
    note.append(
        "the same problems: Ridge(alpha) on scikit-learn's Nyström features minimizes ||Z w + b − y||² + α||w||² "
        "with Z = K_nm K_mm^-1/2, ours ||K_nm a − y||² + α aᵀK_mm a (w = K_mm^1/2 a), without the intercept "
        f"(α = {s['ridge_alpha']:g}; the target has mean ≈ 0); LogisticRegression(C) minimizes C Σ log-loss + "
        "||w||²/2 + an unpenalized intercept, ours Σ log-loss + (α/2) aᵀK_mm a + an unpenalized intercept, "
        f"α = 1/C = {1 / s['C']:g}. The objective gap of ours against scikit-learn's optimum of that problem "
        "(its solver at tol 1e-10, untimed): " + "; ".join(
            f"m = {m}: ridge (no intercept) {results[m]['gap']['regression']:+.1e}, logistic "
            f"{results[m]['gap']['classification']:+.1e}" for m in widths)
        + f". Same seed, same centres, γ = 'scale' resolved once per task; regression: y = Σ sin of 3 random "
        f"projections + {s['noise']:g} noise; classification: make_gaussian (two classes), d = {s['d']}; "
        "medians of per-pair ratios, the four fits interleaved in each repeat; both sides use the process's cores")
    run.verdict(
        status,
        ours=f"target {target}: " + "; ".join(
            f"m = {m}: ridge {r['median']['regression', 'ours']:.2f} s vs {r['median']['regression', 'sklearn']:.2f} s "
            f"({r['ratio']['regression']:.2f}×, RMSE {r['score']['regression', 'ours']:.4f} vs "
            f"{r['score']['regression', 'sklearn']:.4f}), logistic {r['median']['classification', 'ours']:.2f} s vs "
            f"{r['median']['classification', 'sklearn']:.2f} s ({r['ratio']['classification']:.2f}×, accuracy "
            f"{r['score']['classification', 'ours']:.2f} % vs {r['score']['classification', 'sklearn']:.2f} %)"
            for m, r in results.items()),
        measured=[(f"fit vs scikit-learn's Nystroem pipeline, n = {n:,}, d = {s['d']}, same centres (median of "
                   f"{s['repeats']}): `NystroemKernelRidge` vs + `Ridge`; `NystroemLogisticRegression` vs + "
                   f"`LogisticRegression`, at m = " + ", ".join(str(m) for m in widths),
                   "; ".join(f"m = {m}: {r['ratio']['regression']:.2f}×, {r['ratio']['classification']:.2f}×"
                             for m, r in results.items())),
                  ("same, test RMSE and accuracy, ours vs scikit-learn",
                   "; ".join(f"m = {m}: {r['score']['regression', 'ours']:.4f} vs "
                             f"{r['score']['regression', 'sklearn']:.4f}, {r['score']['classification', 'ours']:.2f} %"
                             f" vs {r['score']['classification', 'sklearn']:.2f} %" for m, r in results.items()))],
        note="; ".join(note),
    )


def _compare_at(run, m, data, gamma, s, target, rows):
    """Time and score both sides at width ``m``, interleaved; append the CSV rows."""
    import time
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline

    from kernelmaps import NystroemKernelRidge, NystroemLogisticRegression

    seed, alpha, C = s["seed"], s["ridge_alpha"], s["C"]

    def sk_features(task, width=m):
        return SkNystroem(kernel="rbf", gamma=gamma[task], n_components=width, random_state=seed)

    sides = {
        ("regression", "ours"): lambda width=m: NystroemKernelRidge(width, alpha=alpha, gamma=gamma["regression"],
                                                                    random_state=seed),
        ("regression", "sklearn"): lambda width=m: make_pipeline(sk_features("regression", width), Ridge(alpha=alpha)),
        ("classification", "ours"): lambda width=m: NystroemLogisticRegression(
            width, alpha=1.0 / C, gamma=gamma["classification"], random_state=seed),
        # lbfgs gets the iterations to converge on m features (its default 100 may stop short)
        ("classification", "sklearn"): lambda width=m: make_pipeline(sk_features("classification", width),
                                                                     LogisticRegression(C=C, max_iter=1000)),
    }
    for (task, _), make in sides.items():  # Numba compilation and the thread pool, outside the clock
        make(32).fit(data[task][0][:500], data[task][1][:500])
    seconds, score, stalled, models = {}, {}, {}, {}
    for repeat in run.progress(range(s["repeats"]), desc=f"m = {m}, interleaved fits"):
        for (task, side), make in sides.items():
            X, y, X_test, y_test = data[task]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                start = time.perf_counter()
                model = make().fit(X, y)
                elapsed = time.perf_counter() - start
            seconds.setdefault((task, side), []).append(elapsed)
            predicted = model.predict(X_test)
            score[task, side] = (float(np.sqrt(np.mean((predicted - y_test) ** 2))) if task == "regression"
                                 else 100 * float(np.mean(predicted == y_test)))
            stalled[task, side] = stalled.get((task, side), False) or any(
                issubclass(w.category, ConvergenceWarning) for w in caught)
            models[task, side] = model
            rows.append({"task": task, "implementation": "kernelmaps" if side == "ours" else "scikit-learn",
                         "estimator": type(model).__name__ if side == "ours" else " + ".join(
                             type(step).__name__ for _, step in model.steps),
                         "repeat": repeat, "n_train": X.shape[0], "d": X.shape[1], "m": m, "gamma": gamma[task],
                         "alpha": alpha if task == "regression" else 1.0 / C, "fit_seconds": elapsed,
                         "metric": "test RMSE" if task == "regression" else "test accuracy %",
                         "value": score[task, side], "convergence_warning": stalled[task, side],
                         "numba_target": target})
    ratio = {task: float(np.median(np.array(seconds[task, "sklearn"]) / np.array(seconds[task, "ours"])))
             for task in TASKS}
    rmse_ratio = score["regression", "ours"] / score["regression", "sklearn"]
    accuracy_gap = score["classification", "ours"] - score["classification", "sklearn"]
    return {"ratio": ratio, "score": score, "stalled": stalled,
            "median": {key: float(np.median(values)) for key, values in seconds.items()},
            "same_centres": {task: bool(np.array_equal(models[task, "ours"].components_,
                                                       models[task, "sklearn"].steps[0][1].components_))
                             for task in TASKS},
            "gap": _objective_gaps(data, models, gamma, alpha, C),
            "checks": {"ridge ≥ 3× faster": ratio["regression"] >= 3,
                       "logistic ≥ 3× faster": ratio["classification"] >= 3,
                       "RMSE within 1 %": abs(rmse_ratio - 1) <= 0.01,
                       "accuracy within 0.2 points": abs(accuracy_gap) <= 0.2}}


def _objective_gaps(data, models, gamma, alpha, C):
    """Our objective against scikit-learn's optimum of the same problem on its own features.

    Ridge: without intercept (ours has none). Logistic: with the unpenalized
    intercept both fit. Returns the relative gap ``ours / optimum - 1`` per task.
    """
    import numpy as np
    from sklearn.linear_model import LogisticRegression, Ridge

    from kernelmaps import exact_kernel

    out = {}
    for task, (X, y, _, _) in data.items():
        ours, features = models[task, "ours"], models[task, "sklearn"].steps[0][1]
        Z = features.transform(X)
        a = ours.coef_.ravel()
        ours_penalty = a @ exact_kernel(ours.components_, gamma=gamma[task]) @ a
        if task == "regression":
            tight = Ridge(alpha=alpha, fit_intercept=False, solver="cholesky").fit(Z, y)
            w = tight.coef_.ravel()
            out[task] = float((np.sum((ours.predict(X) - y) ** 2) + alpha * ours_penalty)
                              / (np.sum((Z @ w - y) ** 2) + alpha * (w @ w)) - 1)
        else:
            tight = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(Z, y)
            w, signs = tight.coef_.ravel(), 2.0 * y - 1.0
            out[task] = float((np.sum(np.logaddexp(0, -signs * ours.decision_function(X))) + ours_penalty / (2 * C))
                              / (np.sum(np.logaddexp(0, -signs * tight.decision_function(Z))) + (w @ w) / (2 * C))
                              - 1)
    return out
