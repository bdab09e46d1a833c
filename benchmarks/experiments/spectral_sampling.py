"""How random Fourier frequencies are sampled: quasi-Monte Carlo (Yang et al., ICML 2014) and Matérn."""

from benchmarks.experiments._framework import experiment, figure, width_axis
from benchmarks.experiments._sizes import Size

#: The sampling schemes of qmc-error, by their labels in the CSV and the figure.
_SCHEMES = ("MC", "QMC", "ORF")
#: A slope counts as steeper when it is below the other by at least this much.
_STEEPER_BY = 0.05


def _rows_and_gamma(name, n_rows, rule="knn50"):
    """``n_rows`` standardized training rows of a bundled set (seed 0) and the gamma of ``rule``
    ('knn50' on the training set, or scikit-learn's 'scale', ``1 / d`` on standardized data)."""
    import numpy as np

    from benchmarks.experiments._data import standardized_split
    from kernelmaps import resolve_gamma

    X, _, _, _, gamma = standardized_split(name)
    if n_rows < X.shape[0]:
        X = X[np.sort(np.random.default_rng(0).choice(X.shape[0], n_rows, replace=False))]
    if rule != "knn50":
        gamma = resolve_gamma(rule, X, "gaussian", np.random.RandomState(0))
    return X, gamma


def _slope(widths, errors):
    from benchmarks.experiments._common import loglog_slope

    return loglog_slope(widths, errors)


@experiment(
    "qmc-error",
    paper="Yang, Sindhwani, Avron & Mahoney, ICML 2014 (Quasi-Monte Carlo feature maps)",
    source="section 3, Algorithm 1 and the Gram-matrix error figure",
    claim="Frequencies on a scrambled Sobol' point set mapped by the inverse CDF (QMC) approximate the "
          "Gaussian kernel with an error that falls faster with D than i.i.d. frequencies' (MC). Here: the "
          "claim holds on a set when the log-log slope of QMC's mean relative Frobenius error against D is "
          f"steeper than MC's by at least {_STEEPER_BY}; we also report whether QMC's error is below MC's at "
          "every D, and how orthogonal random features (ORF) compare. Two bandwidths: knn50 (narrow: high "
          "frequencies) and scikit-learn's 'scale' (1/d on standardized data, wide).",
    paper_value="curves, no table in what we could read (the arXiv abstract and the authors' MATLAB code): "
                "QMC sequences (Halton, Sobol', lattice, digital nets) give a lower Gram-matrix error than MC "
                "at every number of features, the gap widening with D; MC's error falls as 1/√D "
                "(slope -0.5), QMC's up to 1/D (slope -1) in low dimension",
    quick={"datasets": ["banana", "magic04", "letter"], "rows": 300, "widths": [64, 128, 256, 512, 1024, 2048, 4096],
           "seeds": 3, "outputs": ["cossin", "cos"], "gammas": ["knn50", "scale"]},
    full={"datasets": ["banana", "magic04", "letter"], "rows": 500, "widths": [64, 128, 256, 512, 1024, 2048, 4096],
          "seeds": 10, "outputs": ["cossin", "cos"], "gammas": ["knn50", "scale"]},
    size=Size("rows", "{} rows"),
)
def qmc_error(run):
    import numpy as np

    from kernelmaps import OrthogonalRandomFeatures, RandomFourierFeatures, relative_frobenius_error

    s = run.settings
    makers = {
        "MC": lambda D, g, out, seed: RandomFourierFeatures(D, gamma=g, output=out, random_state=seed),
        "QMC": lambda D, g, out, seed: RandomFourierFeatures(D, gamma=g, output=out, sampling="qmc",
                                                             random_state=seed),
        "ORF": lambda D, g, out, seed: OrthogonalRandomFeatures(D, gamma=g, output=out, random_state=seed),
    }
    rows, mean, dims = [], {}, {}
    cases = [(name, rule, out) for name in s["datasets"] for rule in s["gammas"] for out in s["outputs"]]
    for name in s["datasets"]:
        for rule in s["gammas"]:
            X, gamma = _rows_and_gamma(name, s["rows"], rule)
            dims[name] = X.shape[1]
            K = RandomFourierFeatures(1, gamma=gamma).fit(X).kernel(X)
            jobs = [(out, D, label) for out in s["outputs"] for D in s["widths"] for label in _SCHEMES]
            for out, D, label in run.progress(jobs, desc=f"{name} γ={rule}"):
                errors = [relative_frobenius_error(K, Z=makers[label](D, gamma, out, seed).fit(X).transform(X))
                          for seed in range(s["seeds"])]
                mean[name, rule, out, D, label] = float(np.mean(errors))
                rows += [{"dataset": name, "d": X.shape[1], "rows": X.shape[0], "gamma_rule": rule, "gamma": gamma,
                          "output": out, "D": D, "scheme": label, "seed": seed, "relative_error": e}
                         for seed, e in enumerate(errors)]
    run.write_csv(rows)

    widths = s["widths"]
    slopes = {c + (label,): _slope(widths, [mean[c + (D, label)] for D in widths]) for c in cases for label in _SCHEMES}
    colors = {"MC": "tab:green", "QMC": "tab:blue", "ORF": "tab:orange"}
    panels = [(rule, out) for rule in s["gammas"] for out in s["outputs"]]
    fig, ax = figure(len(s["datasets"]), len(panels), width=4.4, height=3.4)
    for col, name in enumerate(s["datasets"]):
        for r, (rule, out) in enumerate(panels):
            a = ax[r, col]
            for label in _SCHEMES:
                a.loglog(widths, [mean[name, rule, out, D, label] for D in widths], "o-", color=colors[label],
                         label=f"{label} (slope {slopes[name, rule, out, label]:.2f})")
            a.set(xlabel="D (features)", ylabel="relative Frobenius error",
                  title=f"{name} (d={dims[name]}), γ={rule}, output={out}")
            width_axis(a, widths)
            a.legend(fontsize=7)
    fig.tight_layout()
    run.save_figure(fig)

    steeper = {c: slopes[c + ("QMC",)] <= slopes[c + ("MC",)] - _STEEPER_BY for c in cases}
    lower = {c: all(mean[c + (D, "QMC")] < mean[c + (D, "MC")] for D in widths) for c in cases}
    status = ("holds" if all(steeper.values())
              else "partly holds" if any(steeper.values()) or all(lower.values()) else "does not hold")
    last = widths[-1]

    def describe(c):
        return (f"{'/'.join(c)}: slope MC {slopes[c + ('MC',)]:.2f}, QMC {slopes[c + ('QMC',)]:.2f}, "
                f"ORF {slopes[c + ('ORF',)]:.2f}; at D={last} "
                f"QMC/MC {mean[c + (last, 'QMC')] / mean[c + (last, 'MC')]:.2f}, "
                f"ORF/MC {mean[c + (last, 'ORF')] / mean[c + (last, 'MC')]:.2f}"
                f"{'' if lower[c] else ' (QMC not below MC at every D)'}")

    shortfalls = [f"QMC's slope is not steeper on {'/'.join(c)}" for c, ok in steeper.items() if not ok]
    run.verdict(
        status,
        ours="; ".join(describe(c) for c in cases),
        measured=[(f"Gaussian-kernel error, {s['rows']} standardized `{c[0]}` rows (d={dims[c[0]]}), γ={c[1]}, "
                   f"output={c[2]}, D = {widths[0]}…{last} ({s['seeds']} seeds): log-log slope MC; QMC; ORF "
                   f"(QMC/MC at D={last})",
                   f"{slopes[c + ('MC',)]:.2f}; {slopes[c + ('QMC',)]:.2f}; {slopes[c + ('ORF',)]:.2f} "
                   f"({mean[c + (last, 'QMC')] / mean[c + (last, 'MC')]:.2f})")
                  for c in cases],
        note="; ".join(shortfalls),
    )


def _learner_error(kind, Z, y, Zt, yt, alphas):
    """Test error of the least-squares learner whose alpha did best on a holdout of the training rows."""
    import numpy as np

    from kernelmaps import LeastSquaresClassifier, LeastSquaresRegressor

    cls = LeastSquaresClassifier if kind == "classification" else LeastSquaresRegressor
    n_fit = int(0.8 * Z.shape[0])

    def score(model, A, b):
        pred = model.predict(A)
        return float(np.mean(pred != b)) if kind == "classification" else float(np.sqrt(np.mean((pred - b) ** 2)))

    best = min(alphas, key=lambda a: score(cls(alpha=a).fit(Z[:n_fit], y[:n_fit]), Z[n_fit:], y[n_fit:]))
    return score(cls(alpha=best).fit(Z, y), Zt, yt), best


def _supervised_split(name, max_train, seed=0):
    """``(kind, X, y, X_test, y_test, gamma)``: a bundled set standardized on its training rows."""
    import numpy as np

    from kernelmaps import resolve_gamma

    if name == "diabetes":  # scikit-learn's bundled regression set, split 3:1 with a fixed seed
        from sklearn.datasets import load_diabetes
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import StandardScaler

        X, y = load_diabetes(return_X_y=True)
        X, Xt, y, yt = train_test_split(X, y, test_size=0.25, random_state=seed)
        scaler = StandardScaler().fit(X)
        X, Xt = scaler.transform(X), scaler.transform(Xt)
        mu, sd = y.mean(), y.std()
        y, yt = (y - mu) / sd, (yt - mu) / sd  # RMSE in units of the target's standard deviation
        return "regression", X, y, Xt, yt, resolve_gamma("knn50", X, "gaussian", np.random.RandomState(seed))
    from benchmarks.experiments._data import standardized_split

    X, y, Xt, yt, gamma = standardized_split(name, seed)
    if max_train < X.shape[0]:
        keep = np.random.default_rng(seed).permutation(X.shape[0])[:max_train]
        X, y = X[keep], y[keep]
    else:
        order = np.random.default_rng(seed).permutation(X.shape[0])  # the holdout is a random 20%
        X, y = X[order], y[order]
    return "classification", X, y, Xt, yt, gamma


@experiment(
    "matern-error",
    paper="Rahimi & Recht, NIPS 2007 (any shift-invariant kernel); Rasmussen & Williams, GPML 2006, eq. 4.15",
    source="Bochner's theorem with the Matérn spectral density (a multivariate Student-t with 2ν degrees of freedom)",
    claim="Random Fourier features with multivariate Student-t frequencies approximate the Matérn kernel "
          "(ν = 1/2, 3/2, 5/2) with an error falling as 1/√D (log-log slope within -0.5 ± 0.1), and "
          "orthogonal random features with Matérn row norms do no worse than them. Reported alongside, with "
          "no claim attached: the test error of a least-squares learner on Matérn features against Gaussian "
          "features at the same D and the same knn50 gamma.",
    paper_value="error = O(√(d/D) · log) for every shift-invariant kernel (Rahimi & Recht, Claim 1); no Matérn "
                "numbers in either source",
    quick={"kernel_dataset": "letter", "rows": 300, "widths": [64, 256, 1024, 4096], "seeds": 3,
           "nus": [0.5, 1.5, 2.5], "learn_datasets": ["magic04", "pendigits", "diabetes"], "learn_D": 1024,
           "max_train": 4000, "alphas": [0.01, 1.0, 100.0], "learn_seeds": 2},
    full={"kernel_dataset": "letter", "rows": 500, "widths": [64, 128, 256, 512, 1024, 2048, 4096], "seeds": 10,
          "nus": [0.5, 1.5, 2.5], "learn_datasets": ["magic04", "pendigits", "diabetes"], "learn_D": 4096,
          "max_train": 20000, "alphas": [0.01, 1.0, 100.0], "learn_seeds": 3},
    size=Size("rows", "{} rows"),
)
def matern_error(run):
    import numpy as np

    from kernelmaps import OrthogonalRandomFeatures, RandomFourierFeatures, relative_frobenius_error

    s = run.settings
    maps = {"RFF": RandomFourierFeatures, "ORF": OrthogonalRandomFeatures}
    X, gamma = _rows_and_gamma(s["kernel_dataset"], s["rows"])
    rows, mean = [], {}
    for nu in s["nus"]:
        K = RandomFourierFeatures(1, kernel="matern", nu=nu, gamma=gamma).fit(X).kernel(X)
        for label, cls in maps.items():
            for D in run.progress(s["widths"], desc=f"nu={nu} {label}"):
                errors = [relative_frobenius_error(
                    K, Z=cls(D, kernel="matern", nu=nu, gamma=gamma, random_state=seed).fit(X).transform(X))
                    for seed in range(s["seeds"])]
                mean[nu, label, D] = float(np.mean(errors))
                rows += [{"part": "kernel error", "dataset": s["kernel_dataset"], "kernel": f"matern nu={nu}",
                          "map": label, "D": D, "gamma": gamma, "seed": seed, "value": e}
                         for seed, e in enumerate(errors)]
    widths = s["widths"]
    slopes = {(nu, label): _slope(widths, [mean[nu, label, D] for D in widths]) for nu in s["nus"] for label in maps}

    kernels = [("gaussian", None)] + [("matern", nu) for nu in s["nus"]]
    test = {}
    for name in s["learn_datasets"]:
        kind, Xtr, ytr, Xte, yte, g = _supervised_split(name, s["max_train"])
        for kernel, nu in run.progress(kernels, desc=name):
            values = []
            for seed in range(s["learn_seeds"]):
                extra = {"nu": nu} if nu is not None else {}
                rff = RandomFourierFeatures(s["learn_D"], kernel=kernel, gamma=g, random_state=seed, **extra).fit(Xtr)
                err, alpha = _learner_error(kind, rff.transform(Xtr), ytr, rff.transform(Xte), yte, s["alphas"])
                values.append(err)
                rows.append({"part": "test error" if kind == "classification" else "test RMSE / sd(y)",
                             "dataset": name, "kernel": kernel if nu is None else f"matern nu={nu}", "map": "RFF",
                             "D": s["learn_D"], "gamma": g, "seed": seed, "value": err, "alpha": alpha})
            test[name, kernel if nu is None else nu] = float(np.mean(values))
    run.write_csv(rows)

    fig, ax = figure(2, 1, width=5.0, height=3.8)
    for i, nu in enumerate(s["nus"]):
        for label, style in (("RFF", "o-"), ("ORF", "s--")):
            ax[0, 0].loglog(widths, [mean[nu, label, D] for D in widths], style, color=f"C{i}",
                            label=f"{label} ν={nu:g} (slope {slopes[nu, label]:.2f})")
    ax[0, 0].set(xlabel="D (features)", ylabel="relative Frobenius error",
                 title=f"Matérn kernel, {s['rows']} `{s['kernel_dataset']}` rows")
    width_axis(ax[0, 0], widths)
    ax[0, 0].legend(fontsize=7)
    labels = ["gaussian"] + [f"ν={nu:g}" for nu in s["nus"]]
    for j, name in enumerate(s["learn_datasets"]):
        values = [test[name, "gaussian"]] + [test[name, nu] for nu in s["nus"]]
        base = values[0]
        ax[0, 1].bar(np.arange(len(labels)) + 0.25 * (j - 1), [v / base for v in values], width=0.25, label=name)
    ax[0, 1].axhline(1, color="k", ls=":")
    ax[0, 1].set(xticks=range(len(labels)), xticklabels=labels, ylabel="test error / Gaussian's",
                 title=f"RFF (D={s['learn_D']}) + least squares, knn50 γ")
    ax[0, 1].legend(fontsize=7)
    fig.tight_layout()
    run.save_figure(fig)

    rate_ok = {key: abs(v + 0.5) <= 0.1 for key, v in slopes.items()}
    orf_ok = {nu: all(mean[nu, "ORF", D] <= 1.05 * mean[nu, "RFF", D] for D in widths) for nu in s["nus"]}
    status = ("holds" if all(rate_ok.values()) and all(orf_ok.values())
              else "partly holds" if any(rate_ok.values()) else "does not hold")
    winners = []
    for name in s["learn_datasets"]:
        options = {"gaussian": test[name, "gaussian"], **{f"matern ν={nu:g}": test[name, nu] for nu in s["nus"]}}
        best = min(options, key=options.get)
        winners.append(f"{name}: " + ", ".join(f"{k} {v:.4f}" for k, v in options.items()) + f" (best: {best})")
    shortfalls = [f"{label} ν={nu:g} slope {slopes[nu, label]:.2f}" for (nu, label), ok in rate_ok.items() if not ok]
    shortfalls += [f"ORF above 1.05 × RFF's error at some D for ν={nu:g}" for nu, ok in orf_ok.items() if not ok]
    last = widths[-1]
    run.verdict(
        status,
        ours="log-log slopes " + ", ".join(f"ν={nu:g}: RFF {slopes[nu, 'RFF']:.2f}, ORF {slopes[nu, 'ORF']:.2f} "
                                          f"(ORF/RFF at D={last} {mean[nu, 'ORF', last] / mean[nu, 'RFF', last]:.2f})"
                                          for nu in s["nus"])
             + f". Test error at D={s['learn_D']} (RMSE/sd for diabetes): " + "; ".join(winners),
        measured=[(f"Matérn-kernel error, {s['rows']} `{s['kernel_dataset']}` rows, D = {widths[0]}…{last}: "
                   "log-log slope RFF; ORF, ν = " + ", ".join(f"{nu:g}" for nu in s["nus"]),
                   ", ".join(f"{slopes[nu, 'RFF']:.2f}; {slopes[nu, 'ORF']:.2f}" for nu in s["nus"]))]
                 + [(f"RFF (D={s['learn_D']}) + least squares on `{name}`, Gaussian vs Matérn: test error",
                     w.split(": ", 1)[1]) for name, w in zip(s["learn_datasets"], winners)],
        note="; ".join(shortfalls),
    )
