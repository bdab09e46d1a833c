"""Predictive uncertainty of the ridge machines read as Gaussian processes: exactness, calibration, samples, scale.

Experiment
----------
``uncertainty`` (timed, in its scale part)
    Four parts, each written to the CSV as it finishes:

    * exactness: :class:`kernelmaps.NystroemKernelRidge` with every training row a
      centre (``variance='dtc'``, amplitude fixed) and :class:`kernelmaps.KernelRidge`
      against scikit-learn's ``GaussianProcessRegressor`` (``optimizer=None``):
      the largest relative difference of the std, of the covariance, and of the
      evidence (the DTC likelihood and Titsias's bound for the Nyström machine);
    * calibration: targets drawn from a GP prior (Gaussian and Matérn 3/2
      kernels, amplitude ``AMPLITUDE``, noise variance ``alpha * AMPLITUDE``) in
      ``d = 2``; the share of held-out points inside the 95 % intervals of the
      noise-free values and of the noisy targets, for NystroemKernelRidge (DTC and
      SoR, ``amplitude='auto'``), exact kernel ridge and least squares on random
      Fourier features, and the coverage curve (nominal against empirical) of each;
    * samples: the largest |z| of 2000 ``sample_y`` draws' empirical mean and
      covariance at 5 points against ``predict(return_cov=True)``;
    * scale: the fit time with and without the posterior, and the time of
      ``return_std`` for ``std_rows`` rows and of 64 DTC samples at
      ``sample_rows`` rows, as multiples of the fit time (without the posterior).
"""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: The prior's signal variance of the calibration data (not 1, so that a lost amplitude shows).
AMPLITUDE = 2.5
#: The calibration data's bandwidth: a length scale of 1 (``gamma = 1 / (2 l^2)``) on the square [-3, 3]^2.
GAMMA = 0.5
#: The coverage of the 95 % intervals must fall in this range.
COVERAGE_BAR = (0.93, 0.97)
#: Exactness against scikit-learn, relative.
EXACT_BAR = 1e-6
#: The largest |z| of the samples' moments the claim allows.
Z_BAR = 5.0
NOMINAL = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


def _relative(ours, theirs):
    import numpy as np

    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    return float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-300)))


def _exactness(s):
    import numpy as np
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from kernelmaps import KernelRidge, NystroemKernelRidge

    rng = np.random.default_rng(s["seed"])
    n, gamma, alpha, amplitude = s["exact_rows"], 0.5, 0.05, AMPLITUDE
    X, X_test = rng.uniform(-2, 2, (n, 2)), rng.uniform(-3, 3, (50, 2))
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, 1]) + 0.2 * rng.standard_normal(n)
    kernel = ConstantKernel(amplitude, "fixed") * RBF(1.0 / np.sqrt(2 * gamma), "fixed")
    reference = GaussianProcessRegressor(kernel, alpha=alpha * amplitude, optimizer=None).fit(X, y)
    std, cov = reference.predict(X_test, return_std=True)[1], reference.predict(X_test, return_cov=True)[1]
    evidence = reference.log_marginal_likelihood()
    models = {"NystroemKernelRidge, landmarks = X, DTC": NystroemKernelRidge(
                  n, alpha=alpha, gamma=gamma, landmarks=X, variance="dtc", amplitude=amplitude, tol=1e-10,
                  max_iter=1000).fit(X, y),
              "KernelRidge": KernelRidge(alpha, gamma=gamma, amplitude=amplitude).fit(X, y)}
    rows = []
    for name, model in models.items():
        row = {"part": "exactness", "model": name, "rows": n,
               "std_relative": _relative(model.predict(X_test, return_std=True)[1], std),
               "cov_relative": float(np.max(np.abs(model.predict(X_test, return_cov=True)[1] - cov))
                                     / np.max(np.abs(cov))),
               "evidence_relative": _relative(model.log_marginal_likelihood(), evidence)}
        if hasattr(model, "dtc_log_marginal_likelihood_"):
            row["dtc_evidence_relative"] = _relative(model.dtc_log_marginal_likelihood_, evidence)
        rows.append(row)
    return rows


def _prior_draw(kernel, n_rows, alpha, rng):
    """Rows, their GP prior values ``f`` and noisy targets ``y = f + e`` (of variance ``alpha * AMPLITUDE``)."""
    import numpy as np

    from kernelmaps import exact_kernel
    from kernelmaps._solvers.cholesky import lower_cholesky

    X = rng.uniform(-1, 1, (n_rows, 2)) * 3.0
    K = AMPLITUDE * exact_kernel(X, None, kernel=kernel, gamma=GAMMA, nu=1.5)
    K[np.diag_indices_from(K)] += 1e-8 * AMPLITUDE
    f = lower_cholesky(K, overwrite_a=True) @ rng.standard_normal(n_rows)
    return X, f, f + np.sqrt(alpha * AMPLITUDE) * rng.standard_normal(n_rows)


def _calibration(s, rows, run):
    import numpy as np
    from scipy.stats import norm

    from kernelmaps import KernelRidge, LeastSquaresRegressor, NystroemKernelRidge, RandomFourierFeatures

    rng, alpha, n = np.random.default_rng(s["seed"]), 0.01, s["n"]
    curves = {}
    for kernel in ("gaussian", "matern"):
        X_all, f_all, y_all = _prior_draw(kernel, n + s["test_rows"], alpha, rng)
        X, y, X_test, f_test, y_test = X_all[:n], y_all[:n], X_all[n:], f_all[n:], y_all[n:]
        common = dict(alpha=alpha, kernel=kernel, gamma=GAMMA, nu=1.5, random_state=s["seed"])
        rff = RandomFourierFeatures(s["rff_D"], kernel=kernel, gamma=GAMMA, nu=1.5, random_state=s["seed"]).fit(X)
        fitted = {"exact": KernelRidge(alpha, kernel=kernel, gamma=GAMMA, nu=1.5).fit(X, y),
                  "SoR": NystroemKernelRidge(s["m"], variance="sor", **common).fit(X, y),
                  "DTC": NystroemKernelRidge(s["m"], variance="dtc", **common).fit(X, y),
                  f"RFF LS, D = {s['rff_D']}": LeastSquaresRegressor(alpha, fit_intercept=False).fit(
                      rff.transform(X), y)}
        for name, model in fitted.items():
            rows_test = rff.transform(X_test) if name.startswith("RFF") else X_test
            mean, std = model.predict(rows_test, return_std=True)
            noisy_std = np.sqrt(std**2 + model.noise_variance_)
            z_f, z_y = np.abs(f_test - mean) / std, np.abs(y_test - mean) / noisy_std
            coverage = {level: float(np.mean(z_f <= norm.ppf(0.5 + level / 2))) for level in NOMINAL}
            curves[(kernel, name)] = coverage
            rows.append({"part": "calibration", "kernel": kernel, "model": name, "rows": n, "m": s["m"],
                         "amplitude": float(model.amplitude_), "coverage_f_95": coverage[0.95],
                         "coverage_y_95": float(np.mean(z_y <= norm.ppf(0.975)))})
        run.write_csv(rows)
    return curves


def _samples(s):
    import numpy as np

    from kernelmaps import NystroemKernelRidge

    rng = np.random.default_rng(s["seed"] + 1)
    X, _, y = _prior_draw("gaussian", s["sample_train_rows"], 0.01, rng)
    model = NystroemKernelRidge(s["m"], alpha=0.01, gamma=GAMMA, variance="dtc", random_state=s["seed"]).fit(X, y)
    points = np.vstack([X[:3], [[2.9, -2.9], [4.0, 4.0]]])
    mean, cov = model.predict(points, return_cov=True)
    draws = model.sample_y(points, 2000, random_state=s["seed"])
    centred = draws - mean[:, None]
    empirical = centred @ centred.T / draws.shape[1]
    variance = np.diagonal(cov)
    z_cov = (empirical - cov) / np.sqrt((cov**2 + np.outer(variance, variance)) / draws.shape[1])
    z_mean = (draws.mean(axis=1) - mean) / np.sqrt(variance / draws.shape[1])
    return {"part": "samples", "model": "NystroemKernelRidge, DTC", "rows": len(X), "m": s["m"], "draws": 2000,
            "largest_z": float(np.abs(np.concatenate([z_cov.ravel(), z_mean])).max())}


def _scale(s):
    import time

    import numpy as np

    from kernelmaps import NystroemKernelRidge

    rng = np.random.default_rng(s["seed"])
    n, d = s["scale_n"], 16
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    X_test = rng.standard_normal((s["std_rows"], d))
    params = dict(alpha=1e-3 * n, gamma=0.5 / d, random_state=s["seed"])
    NystroemKernelRidge(64, **params).fit(X[:2000], y[:2000])  # compilation, outside the clock
    seconds = {}
    for variance in (None, "dtc"):
        start = time.perf_counter()
        model = NystroemKernelRidge(s["scale_m"], variance=variance, **params).fit(X, y)
        seconds[f"fit, variance={variance}"] = time.perf_counter() - start
    start = time.perf_counter()
    model.predict(X_test, return_std=True)
    seconds[f"return_std, {s['std_rows']} rows"] = time.perf_counter() - start
    start = time.perf_counter()
    model.sample_y(X_test[:s["sample_rows"]], 64, random_state=0)
    seconds[f"64 DTC samples, {s['sample_rows']} rows"] = time.perf_counter() - start
    fit = seconds["fit, variance=None"]
    return [{"part": "scale", "model": "NystroemKernelRidge", "rows": n, "d": d, "m": s["scale_m"], "what": what,
             "seconds": value, "multiple_of_fit": value / fit} for what, value in seconds.items()]


def _gpytorch_note():
    return ("GPyTorch's SGPR on the same inducing points is compared by the experiment uncertainty-gpytorch, "
            "which needs gpytorch (and torch) installed beside kernelmaps")


@experiment(
    "uncertainty",
    paper="Quiñonero-Candela & Rasmussen, JMLR 2005 (SoR, DTC); Titsias, AISTATS 2009 (SGPR); "
          "Wilson et al., ICML 2020 (pathwise sampling)",
    source="the project's claims for the Gaussian-process reading of the ridge machines",
    claim=f"With every row a centre, NystroemKernelRidge's DTC std and evidence equal scikit-learn's "
          f"GaussianProcessRegressor to {EXACT_BAR:g} relative; on GP-prior data (n = 5000, d = 2, Gaussian and "
          f"Matérn 3/2, m = 500, amplitude='auto') its 95 % intervals cover {COVERAGE_BAR[0]:.0%}-"
          f"{COVERAGE_BAR[1]:.0%} of the noise-free values and of the noisy targets; 2000 posterior samples "
          f"match return_cov (|z| < {Z_BAR:g}); at n = 10⁵, d = 16, m = 4096 the std and the samples cost a "
          "fraction of the fit.",
    paper_value="DTC equals the exact GP when every row is an inducing point (Quiñonero-Candela & Rasmussen, "
                "§6); no calibration figures",
    quick={"exact_rows": 150, "n": 1000, "test_rows": 500, "m": 200, "rff_D": 256, "sample_train_rows": 1000,
           "scale_n": 10000, "scale_m": 512, "std_rows": 2000, "sample_rows": 500, "seed": 0},
    full={"exact_rows": 400, "n": 5000, "test_rows": 1000, "m": 500, "rff_D": 1024, "sample_train_rows": 3000,
          "scale_n": 100000, "scale_m": 4096, "std_rows": 10000, "sample_rows": 1000, "seed": 0},
    timed=True,
    size=(Size("n", "{} rows", claim=5000), Size("m", "m = {}", claim=500),
          Size("scale_n", "{} rows at scale", claim=10**5)),
)
def uncertainty(run):
    s = run.settings
    rows = _exactness(s)
    run.write_csv(rows)
    curves = _calibration(s, rows, run)
    _plot(run, curves, s)
    rows.append(_samples(s))
    run.write_csv(rows)
    rows += _scale(s)
    run.write_csv(rows)
    _verdict(run, rows, s)


def _verdict(run, rows, s):
    exact = [r for r in rows if r["part"] == "exactness"]
    worst_exact = max(max(v for k, v in r.items() if k.endswith("relative")) for r in exact)
    dtc = [r for r in rows if r["part"] == "calibration" and r["model"] == "DTC"]
    covered = all(COVERAGE_BAR[0] <= r[key] <= COVERAGE_BAR[1] for r in dtc for key in ("coverage_f_95",
                                                                                        "coverage_y_95"))
    largest_z = next(r for r in rows if r["part"] == "samples")["largest_z"]
    scale = {r["what"]: r for r in rows if r["part"] == "scale"}
    cheap = all(r["multiple_of_fit"] < 1 for what, r in scale.items() if not what.startswith("fit"))
    checks = [worst_exact <= EXACT_BAR, covered, largest_z < Z_BAR, cheap]
    status = "holds" if all(checks) else ("partly holds" if any(checks) else "does not hold")
    coverage = "; ".join(f"{r['kernel']}: f {r['coverage_f_95']:.3f}, y {r['coverage_y_95']:.3f}" for r in dtc)
    timing = ", ".join(f"{what} {r['multiple_of_fit']:.2f}x" for what, r in scale.items() if "fit" not in what
                       or "dtc" in what)
    run.verdict(
        status,
        ours=f"exactness {worst_exact:.1e} relative at {s['exact_rows']} rows; DTC 95 % coverage at n = {s['n']}, "
             f"m = {s['m']}: {coverage}; samples' largest |z| {largest_z:.2f}; at n = {s['scale_n']}, "
             f"m = {s['scale_m']}, as multiples of the fit without the posterior: {timing}",
        measured=[(f"NystroemKernelRidge DTC, GP-prior data, n = {s['n']}, m = {s['m']}: 95 % coverage of f and y",
                   coverage),
                  (f"n = {s['scale_n']}, d = 16, m = {s['scale_m']}: time as multiples of the fit", timing)],
        note=_gpytorch_note() + "; n = 10⁶ in float32 is not part of this experiment",
    )


def _plot(run, curves, s):
    fig, ax = figure(2, 1, width=4.2)
    for column, kernel in enumerate(("gaussian", "matern")):
        axis = ax[0, column]
        axis.plot([0.4, 1.0], [0.4, 1.0], color="grey", linestyle=":", label="nominal")
        for (name_kernel, name), coverage in curves.items():
            if name_kernel == kernel:
                axis.plot(list(coverage), list(coverage.values()), marker="o", label=name)
        axis.set(xlabel="nominal coverage", ylabel="empirical coverage of f",
                 title=f"{'Gaussian' if kernel == 'gaussian' else 'Matérn 3/2'}, n = {s['n']}, m = {s['m']}")
        axis.legend(fontsize=7)
    fig.tight_layout()
    run.save_figure(fig)
