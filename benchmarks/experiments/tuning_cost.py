"""Choosing γ and λ: the cross-validated Nyström learners against a grid search that refits everything.

Experiment
----------
``tuning-cost`` (timed)
    On letter (26 classes), magic04 (2 classes) and a synthetic regression
    (d = 16), with a grid of 6 bandwidths (multiples of the set's knn50 γ) by 8
    ridges (λ = α/n from 1e-9 to 1e-2) and 5 folds, times

    * ``NystroemKernelRidgeCV`` / ``NystroemKernelRidgeClassifierCV`` (m centres):
      the whole search and the refit at the chosen point;
    * ``GridSearchCV`` over ``NystroemKernelRidge`` / ``NystroemKernelRidgeClassifier``
      on the same centres, grid and folds (240 fits and a refit);
    * ``GridSearchCV`` over scikit-learn's ``make_pipeline(Nystroem(m), Ridge)``
      (``RidgeClassifier`` for the classes; on magic04 also ``LogisticRegression``
      with ``C = 1 / α``), same grid and folds;
    * one fit of the plain machine at the chosen point on every row, the unit the
      search's time is counted in;
    * on magic04, the same for the logistic machine: ``NystroemLogisticRegressionCV``
      against ``GridSearchCV`` over ``NystroemLogisticRegression`` on the same centres,
      and against the scikit-learn ``LogisticRegression`` search above;

    and records each search's chosen point, cross-validated score and test score.
    The figure shows, per set, the cross-validated score over the grid with the
    chosen point marked; it is rewritten as each set finishes.
"""

from benchmarks.experiments._common import timed
from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: Our search must be at least this many times faster than each grid search.
SPEEDUP_BAR = 20.0
#: The whole search (refit included) in units of one fit at the chosen point.
FIT_MULTIPLE_BAR = 10.0
#: Selection agreement when the chosen points differ: accuracy points, relative RMSE.
ACCURACY_TOLERANCE, RMSE_TOLERANCE = 0.001, 0.005
#: The grid: multiples of the set's knn50 bandwidth (the best points of a first run lay at and below
#: its 1/8), and the ridges λ = α/n.
GAMMA_FACTORS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
LAMBDAS = tuple(10.0**k for k in range(-9, -1))


def _cores_text():
    from benchmarks.machine import machine_info

    cores = int(machine_info()["cores"])
    return f"{cores} core{'' if cores == 1 else 's'}"


def _sets(s):
    """``[(name, task, X, y, X_test, y_test, gamma)]``: standardized rows, the knn50 bandwidth."""
    import numpy as np

    from benchmarks.common import smooth_regression
    from benchmarks.experiments._data import standardized_split
    from kernelmaps import resolve_gamma

    sets = []
    for name in ("letter", "magic04"):
        X, y, Xt, yt, gamma = standardized_split(name, s["seed"])
        rows = s["train_rows"]
        sets.append((name, "classification", X[:rows], y[:rows], Xt, yt, gamma))
    X, y = smooth_regression(s["regression_rows"], s["d"], noise=0.1, seed=s["seed"])
    Xt, yt = smooth_regression(s["test_rows"], s["d"], noise=0.1, seed=s["seed"] + 1)
    gamma = resolve_gamma("knn50", X, "gaussian", np.random.RandomState(s["seed"]))
    sets.append((f"synthetic d={s['d']}", "regression", X, y, Xt, yt, gamma))
    return sets


def _test_score(task, model, X, y):
    """Accuracy, or RMSE (lower is better) for regression."""
    import numpy as np

    if task == "classification":
        return float(model.score(X, y))
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def _peers(task, name, m, seed):
    """``{label: (pipeline, param_grid from (alphas, gammas))}``: scikit-learn's Nystroem pipelines."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
    from sklearn.pipeline import make_pipeline

    last = RidgeClassifier() if task == "classification" else Ridge()
    peers = {f"sklearn Nystroem + {type(last).__name__}": (
        make_pipeline(Nystroem(n_components=m, random_state=seed), last),
        lambda alphas, gammas: {"nystroem__gamma": gammas, f"{type(last).__name__.lower()}__alpha": alphas})}
    if name == "magic04":
        peers["sklearn Nystroem + LogisticRegression"] = (
            make_pipeline(Nystroem(n_components=m, random_state=seed), LogisticRegression(max_iter=500)),
            lambda alphas, gammas: {"nystroem__gamma": gammas, "logisticregression__C": [1 / a for a in alphas]})
    return peers


def _one_set(s, name, task, X, y, Xt, yt, gamma0):
    """The rows of one set's searches, and what the figure needs."""
    import warnings

    import numpy as np
    from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

    from kernelmaps import (NystroemKernelRidge, NystroemKernelRidgeClassifier, NystroemKernelRidgeClassifierCV,
                            NystroemKernelRidgeCV)

    classes = task == "classification"
    n, m = X.shape[0], s["m"]
    gammas, alphas = [gamma0 * f for f in GAMMA_FACTORS], [lam * n for lam in LAMBDAS]
    folds = (StratifiedKFold if classes else KFold)(5, shuffle=True, random_state=s["seed"])
    scoring = None if classes else "neg_root_mean_squared_error"
    ours_class, plain_class = ((NystroemKernelRidgeClassifierCV, NystroemKernelRidgeClassifier) if classes
                               else (NystroemKernelRidgeCV, NystroemKernelRidge))
    ours, seconds = timed(lambda: ours_class(m, alphas=alphas, gammas=gammas, cv=folds, scoring=scoring,
                                              random_state=s["seed"]).fit(X, y))
    centres = ours.components_
    _, one_fit = timed(lambda: plain_class(m, alpha=ours.alpha_, gamma=ours.gamma_, landmarks=centres).fit(X, y))
    rows = [_row(name, task, "ours: " + ours_class.__name__, seconds, one_fit, ours, ours, Xt, yt, n, m)]
    searches = {"GridSearchCV over " + plain_class.__name__: (plain_class(m, landmarks=centres),
                                                             {"alpha": alphas, "gamma": gammas})}
    for label, (pipeline, grid) in _peers(task, name, m, s["seed"]).items():
        searches[label] = (pipeline, grid(alphas, gammas))
    for label, (model, grid) in searches.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the peers' convergence at the grid's corners is not what is measured
            search, seconds = timed(lambda: GridSearchCV(model, grid, cv=folds, scoring=scoring).fit(X, y))
        rows.append(_row(name, task, label, seconds, one_fit, search, ours, Xt, yt, n, m))
    if name == "magic04":
        peer = next(row for row in rows if row["method"] == "sklearn Nystroem + LogisticRegression")
        rows += _logistic_searches(f"{name} (logistic)", X, y, Xt, yt, centres, alphas, gammas, folds, peer)
    scores = np.asarray(ours.cv_results_["mean_test_score"]).reshape(len(alphas), len(gammas))
    return rows, {"name": name, "task": task, "scores": scores, "best": divmod(ours.best_index_, len(gammas))}


def _logistic_searches(name, X, y, Xt, yt, centres, alphas, gammas, folds, peer):
    """The logistic machine's search on the same centres, grid and folds: ``NystroemLogisticRegressionCV``
    against ``GridSearchCV`` over ``NystroemLogisticRegression``, and against scikit-learn's Nystroem +
    LogisticRegression search (``peer``, the row the ridge classifier's search was compared with: run once)."""
    import warnings

    from sklearn.model_selection import GridSearchCV

    from kernelmaps import NystroemLogisticRegression, NystroemLogisticRegressionCV

    n, m = X.shape[0], len(centres)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the smallest ridges of the grid stop at max_iter on both sides
        ours, seconds = timed(lambda: NystroemLogisticRegressionCV(m, alphas=alphas, gammas=gammas, landmarks=centres,
                                                                    cv=folds).fit(X, y))
        _, one_fit = timed(lambda: NystroemLogisticRegression(m, alpha=ours.alpha_, gamma=ours.gamma_,
                                                               landmarks=centres).fit(X, y))
        rows = [_row(name, "classification", "ours: NystroemLogisticRegressionCV", seconds, one_fit, ours, ours, Xt,
                     yt, n, m)]
        search, seconds = timed(lambda: GridSearchCV(NystroemLogisticRegression(m, landmarks=centres),
                                                      {"alpha": alphas, "gamma": gammas}, cv=folds).fit(X, y))
    rows.append(_row(name, "classification", "GridSearchCV over NystroemLogisticRegression", seconds, one_fit,
                     search, ours, Xt, yt, n, m))
    return rows + [{**peer, "set": name, "fit_multiple": peer["seconds"] / one_fit, "one_fit_seconds": one_fit}]


def _row(name, task, method, seconds, one_fit, search, ours, Xt, yt, n, m):
    params = search.best_params_ if hasattr(search, "best_params_") else {"alpha": ours.alpha_,
                                                                          "gamma": ours.gamma_}
    alpha = next((v for k, v in params.items() if k.endswith("alpha")), None)
    C = next((v for k, v in params.items() if k.endswith("__C")), None)
    return {"set": name, "task": task, "method": method, "n": n, "m": m, "seconds": seconds,
            "fit_multiple": seconds / one_fit, "one_fit_seconds": one_fit,
            "gamma": next(v for k, v in params.items() if k.endswith("gamma")),
            "lambda": (alpha if alpha is not None else 1 / C) / n,
            "cv_score": float(search.best_score_), "test_score": _test_score(task, search, Xt, yt)}


def _judge(rows):
    """Sentences of what fails, per set: speed-ups, fit multiple, selection and test score."""
    failures = []
    ours = {row["set"]: row for row in rows if row["method"].startswith("ours")}
    for row in rows:
        mine = ours[row["set"]]
        if row is mine:
            if mine["fit_multiple"] > FIT_MULTIPLE_BAR:
                failures.append(f"{row['set']}: the search took {mine['fit_multiple']:.1f} fits")
            continue
        speedup = row["seconds"] / mine["seconds"]
        if speedup < SPEEDUP_BAR:
            failures.append(f"{row['set']}: {speedup:.1f}x faster than {row['method']}")
        classes = row["task"] == "classification"
        if row["method"].startswith("GridSearchCV over") and (row["gamma"], row["lambda"]) != (mine["gamma"],
                                                                                               mine["lambda"]):
            gap = (row["cv_score"] - mine["cv_score"]) / (1.0 if classes else -row["cv_score"])
            if gap > (ACCURACY_TOLERANCE if classes else RMSE_TOLERANCE):
                failures.append(f"{row['set']}: another point, cross-validated score {gap:.4f} better")
        worse = (row["test_score"] - mine["test_score"]) if classes else \
            (mine["test_score"] - row["test_score"]) / row["test_score"]
        if worse > (ACCURACY_TOLERANCE if classes else RMSE_TOLERANCE):
            failures.append(f"{row['set']}: test score {worse:.4f} worse than {row['method']}'s")
    return failures


def _measured(rows, mine):
    """One set's row of the table: every search's seconds and test score, ours first; ours in fits."""
    searches = [row for row in rows if row["set"] == mine["set"]]
    metric = "accuracy" if mine["task"] == "classification" else "RMSE"
    same = all((row["gamma"], row["lambda"]) == (mine["gamma"], mine["lambda"]) for row in searches
               if row["method"].startswith("GridSearchCV over"))
    return (f"{mine['set']}, search seconds and test {metric}: ours (in fits at the chosen point), then "
            + ", ".join(row["method"] for row in searches[1:]),
            " · ".join(f"{row['seconds']:.1f} s, {row['test_score']:.4f}" for row in searches)
            + f" ({mine['fit_multiple']:.1f} fits; {'same' if same else 'another'} point as over the plain machine)")


def _plot(run, parts):
    import numpy as np

    fig, ax = figure(len(parts), 1, width=4.2, height=3.6)
    for axes, part in zip(ax[0], parts):
        # the worst corners would take the whole colour scale: it starts at the lower quartile
        image = axes.imshow(part["scores"], origin="lower", aspect="auto", cmap="viridis",
                            vmin=np.percentile(part["scores"], 25))
        row, column = part["best"]
        axes.plot(column, row, marker="x", color="red", markersize=12, mew=3)
        axes.set_xticks(range(len(GAMMA_FACTORS)), [f"{f:g}" for f in GAMMA_FACTORS])
        axes.set_yticks(range(len(LAMBDAS)), [f"{np.log10(lam):.0f}" for lam in LAMBDAS])
        metric = "accuracy" if part["task"] == "classification" else "-RMSE"
        axes.set(xlabel="γ / knn50 γ", ylabel="log10 λ", title=f"{part['name']}: 5-fold {metric}")
        fig.colorbar(image, ax=axes)
    fig.tight_layout()
    run.save_figure(fig)


@experiment(
    "tuning-cost",
    paper="Rudi, Carratino & Rosasco, FALKON, NIPS 2017; Golub, Heath & Wahba, Technometrics 1979: choosing the "
          "bandwidth and the ridge of a Nyström machine by cross-validation",
    source="README, \"Choosing γ and λ\"",
    claim=f"On letter, magic04 and 10^5 synthetic rows (d = 16), with m = 1000 centres, a 6 γ x 8 λ grid and 5 "
          f"folds, NystroemKernelRidgeCV / NystroemKernelRidgeClassifierCV choose the point GridSearchCV over the "
          f"plain machine chooses on the same centres (or one within {ACCURACY_TOLERANCE * 100:g} accuracy points "
          f"or {RMSE_TOLERANCE:.1%} RMSE), at least {SPEEDUP_BAR:g}x faster than it and than GridSearchCV over "
          f"scikit-learn's Nystroem pipelines (with a test score no worse), and the whole search takes at most "
          f"{FIT_MULTIPLE_BAR:g} times one fit at the chosen point; on magic04 NystroemLogisticRegressionCV meets the "
          f"same bars against GridSearchCV over NystroemLogisticRegression and over scikit-learn's Nystroem + "
          f"LogisticRegression.",
    paper_value="GridSearchCV: 240 fits and a refit; the shared search: one pass per bandwidth, one "
                "eigendecomposition per bandwidth and fold, one refit",
    quick={"train_rows": 2000, "regression_rows": 3000, "test_rows": 2000, "d": 16, "m": 200, "seed": 0},
    full={"train_rows": None, "regression_rows": 100_000, "test_rows": 10_000, "d": 16, "m": 1000, "seed": 0},
    timed=True,
    size=(Size("m", "m = {}", claim=1000), Size("regression_rows", "{} synthetic rows", claim=10**5)),
)
def tuning_cost(run):
    from kernelmaps import NystroemKernelRidgeClassifierCV

    s = run.settings
    sets = _sets(s)
    # compilation and imports, outside the clocks
    NystroemKernelRidgeClassifierCV(20, alphas=[1.0], gammas=[0.1], cv=2).fit(sets[1][2][:200], sets[1][3][:200])
    rows, parts = [], []
    for data in run.progress(sets, desc="sets"):
        found, part = _one_set(s, *data)
        for row in found:
            run.record_part(row["set"], row)
        rows += found
        parts.append(part)
        run.write_csv(rows)
        _plot(run, parts)
    failures = _judge(rows)
    ours = [row for row in rows if row["method"].startswith("ours")]
    failing = {row["set"] for row in ours if any(text.startswith(row["set"] + ":") for text in failures)}
    status = "holds" if not failing else ("does not hold" if len(failing) == len(ours) else "partly holds")
    run.verdict(
        status,
        ours="; ".join(f"{row['set']} (n = {row['n']:,}, m = {row['m']}): search {row['seconds']:.1f} s = "
                       f"{row['fit_multiple']:.1f} fits" for row in ours),
        measured=[_measured(rows, mine) for mine in ours],
        note="; ".join(failures + ["test score: accuracy, or RMSE for the regression (lower is better); seconds "
                                   f"of one run each, on the {_cores_text()} the run could use"]),
    )
