"""The cost of the Nyström posterior at 10^6 float32 rows.

Experiment
----------
``uncertainty-scale`` (timed)
    ``NystroemKernelRidge`` (m = 4096) on 10^6 float32 rows of d = 16 (the law of
    the ``uncertainty`` experiment's scale part, at ten times its rows): the plain
    fit, the fit with ``variance='dtc'`` (which adds the pass for ``Z^T Z`` of the
    Nyström features), ``return_std`` of 10^4 rows and 64 posterior samples of 10^3
    rows, each as a multiple of the plain fit. Each figure is recorded as it ends.
"""

from benchmarks.experiments._common import timed
from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size


def _timed(run, seconds, what, call):
    """``call()``, its wall time kept in ``seconds[what]`` and recorded as a part at once."""
    result, seconds[what] = timed(call)
    run.record_part(what, {"seconds": seconds[what]})
    return result


@experiment(
    "uncertainty-scale",
    paper="Quiñonero-Candela & Rasmussen, JMLR 2005 (DTC); Wilson et al., ICML 2020 (pathwise sampling)",
    source="the project's claim for the posterior at scale: n = 10^6 in float32 where it fits in memory",
    claim="At n = 10^6 float32 rows (d = 16, m = 4096), NystroemKernelRidge's return_std of 10^4 rows and 64 "
          "posterior samples of 10^3 rows each cost a fraction of the plain fit.",
    paper_value="no figures at this size; the bar: return_std and the samples each < 1 plain fit",
    quick={"n": 50_000, "m": 1024, "std_rows": 2000, "sample_rows": 500, "seed": 0},
    full={"n": 1_000_000, "m": 4096, "std_rows": 10_000, "sample_rows": 1000, "seed": 0},
    timed=True,
    size=(Size("n", "{} rows", claim=10**6), Size("m", "m = {}", claim=4096)),
)
def uncertainty_scale(run):
    import numpy as np

    from benchmarks.machine import machine_info
    from kernelmaps import NystroemKernelRidge

    s = run.settings
    rng = np.random.default_rng(s["seed"])
    n, d = s["n"], 16
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    X_test = rng.standard_normal((s["std_rows"], d)).astype(np.float32)
    X = X.astype(np.float32)
    params = dict(alpha=1e-3 * n, gamma=0.5 / d, random_state=s["seed"])
    NystroemKernelRidge(64, variance="dtc", **params).fit(X[:2000], y[:2000])  # compilation, outside the clock
    seconds = {}
    plain = _timed(run, seconds, "fit, variance=None", lambda: NystroemKernelRidge(s["m"], **params).fit(X, y))
    model = _timed(run, seconds, "fit, variance=dtc",
                   lambda: NystroemKernelRidge(s["m"], variance="dtc", **params).fit(X, y))
    _timed(run, seconds, f"return_std, {s['std_rows']} rows", lambda: model.predict(X_test, return_std=True))
    _timed(run, seconds, f"64 DTC samples, {s['sample_rows']} rows",
           lambda: model.sample_y(X_test[:s["sample_rows"]], 64, random_state=0))
    fit = seconds["fit, variance=None"]
    target = machine_info()["numba_target"]
    run.write_csv([{"rows": n, "d": d, "m": s["m"], "dtype": "float32", "what": what, "seconds": value,
                    "multiple_of_fit": value / fit, "cg_iterations": plain.n_iter_, "numba_target": target}
                   for what, value in seconds.items()])
    _plot(run, seconds, s, n)
    std_multiple = seconds[f"return_std, {s['std_rows']} rows"] / fit
    sample_multiple = seconds[f"64 DTC samples, {s['sample_rows']} rows"] / fit
    status = "holds" if std_multiple < 1 and sample_multiple < 1 else "does not hold"
    run.verdict(
        status,
        ours=f"{n:,} float32 rows, m = {s['m']}: plain fit {fit:.0f} s; the DTC fit "
             f"{seconds['fit, variance=dtc'] / fit:.2f} fits, return_std of {s['std_rows']} rows "
             f"{std_multiple:.3f}, 64 samples of {s['sample_rows']} rows {sample_multiple:.3f}",
        measured=[(f"NystroemKernelRidge posterior, {n:.0e} float32 rows, m = {s['m']}: {what}, s · multiple of fit",
                   f"{value:.1f} · {value / fit:.3f}") for what, value in seconds.items()],
    )


def _plot(run, seconds, s, n):
    fig, ax = figure(1, 1, width=5.0)
    axis = ax[0, 0]
    axis.barh(list(seconds), list(seconds.values()))
    axis.set(xlabel="wall seconds", title=f"NystroemKernelRidge, {n:,} float32 rows, m = {s['m']}")
    fig.tight_layout()
    run.save_figure(fig)
