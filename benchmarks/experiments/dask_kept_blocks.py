"""The Nyström kernel ridge fit on Dask with and without the workers keeping their kernel blocks.

Experiment
----------
``dask-kept-blocks`` (timed)
    ``NystroemKernelRidge`` on 10^6 lazily generated float32 rows (d = 16, m = 1024)
    on a ``LocalCluster`` of one single-threaded worker per core this process may
    use: once with ``kernel_cache=None`` (every task evaluates its chunk's kernel
    blocks in every pass) and once with ``kernel_cache='auto'`` (each worker keeps
    its chunks' blocks after the first pass). The wall times, the passes, the
    workers' peak memory, and whether the coefficients are the same bit for bit.
"""

from benchmarks.common import peak_resident_bytes as _peak_resident_bytes
from benchmarks.experiments._data import lazy_smooth_regression
from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: the kept fit must be at least this many times faster than the evaluating one
SPEED_BAR = 1.5
#: the memory the workers share, split evenly among them
_CLUSTER_MEMORY_GIB = 16


def _cores():
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _fit(s, workers, kernel_cache):
    """One fit on a fresh cluster: wall time, passes, coefficients and each worker's peak memory."""
    import time

    import numpy as np
    from distributed import Client, LocalCluster

    from kernelmaps import NystroemKernelRidge

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, memory_limit=f"{_CLUSTER_MEMORY_GIB / workers:g}GiB",
                           silence_logs=40)
    client = Client(cluster)
    try:
        params = dict(alpha=s["lam"] * s["rows"], gamma=s["gamma"], random_state=s["seed"], tol=s["tol"],
                      kernel_cache=kernel_cache)
        # imports and Numba compilation on every worker, outside the clock
        small_X, small_y = lazy_smooth_regression(8 * 1024, s["d"], 1024, s["seed"] + 7)
        NystroemKernelRidge(32, **params).fit(small_X.astype(np.float32), small_y)
        X, y = lazy_smooth_regression(s["rows"], s["d"], s["chunk_rows"], s["seed"])
        start = time.perf_counter()
        model = NystroemKernelRidge(s["m"], **params).fit(X.astype(np.float32), y)
        wall = time.perf_counter() - start
        peaks = sorted(client.run(_peak_resident_bytes).values())
    finally:
        client.close()
        cluster.close()
    passes = model.n_iter_ + 1  # CG iterations and the right-hand side K^T y
    return {"wall": wall, "passes": passes, "kept_bytes": model.kernel_cache_, "coef": model.coef_,
            "converged": bool(model.residuals_[-1] <= model.tol), "peaks_gib": [p / 2**30 for p in peaks]}


@experiment(
    "dask-kept-blocks",
    paper="Meanti, Carratino, Rosasco & Rudi, Kernel methods through the roof, NeurIPS 2020 (K_nm kept when "
          "it fits)",
    source="the project's bar for keeping the kernel blocks on the Dask workers",
    claim=f"On 10^6 lazily generated float32 rows (d = 16, m = 1024) on a LocalCluster of one worker per core, "
          f"NystroemKernelRidge with the workers keeping their chunks' kernel blocks fits at least {SPEED_BAR:g}x "
          "faster than with every pass evaluating them, to the same coefficients bit for bit.",
    paper_value=f"the bar: evaluating / kept wall time ≥ {SPEED_BAR:g}, the same coefficients",
    quick={"rows": 100_000, "d": 16, "m": 512, "chunk_rows": 25_000, "lam": 1e-6, "gamma": 0.05, "tol": 1e-4,
           "seed": 0},
    full={"rows": 1_000_000, "d": 16, "m": 1024, "chunk_rows": 62_500, "lam": 1e-6, "gamma": 0.05, "tol": 1e-4,
          "seed": 0},
    timed=True,
    requires=(("distributed", "pip install 'kernelmaps[dask]'"),),
    size=(Size("rows", "{} rows", claim=10**6), Size("m", "m = {}", claim=1024)),
)
def dask_kept_blocks(run):
    import numpy as np

    from benchmarks.machine import machine_info

    s = run.settings
    workers = _cores()
    target = machine_info()["numba_target"]
    fits = {}
    for name, cache in (("evaluated in every pass", None), ("kept on the workers", "auto")):
        fits[name] = _fit(s, workers, cache)
        run.record_part(name, {key: value for key, value in fits[name].items() if key != "coef"})
    evaluated, kept = fits["evaluated in every pass"], fits["kept on the workers"]
    same = np.array_equal(evaluated["coef"], kept["coef"])
    ratio = evaluated["wall"] / kept["wall"]
    run.write_csv([{"blocks": name, "rows": s["rows"], "m": s["m"], "workers": workers, "fit_seconds": f["wall"],
                    "passes": f["passes"], "seconds_per_pass": f["wall"] / f["passes"],
                    "kept_bytes": f["kept_bytes"], "largest_worker_peak_gib": max(f["peaks_gib"]),
                    "converged": f["converged"], "numba_target": target} for name, f in fits.items()])
    _plot(run, fits, s, workers)
    held = kept["kept_bytes"] > 0 and evaluated["kept_bytes"] == 0
    status = "holds" if ratio >= SPEED_BAR and same and held and kept["converged"] else "does not hold"
    run.verdict(
        status,
        ours=f"{s['rows']:,} rows, m = {s['m']}, {workers} worker{'s' if workers > 1 else ''}: {evaluated['wall']:.1f} s evaluating, "
             f"{kept['wall']:.1f} s kept ({ratio:.2f}x), {kept['passes']} passes each; same coefficients: {same}",
        measured=[(f"Dask fit, {s['rows']:.0e} rows, m = {s['m']}, {workers} workers, {name}: s · s/pass · "
                   "largest worker peak GiB",
                   f"{f['wall']:.1f} · {f['wall'] / f['passes']:.2f} · {max(f['peaks_gib']):.2f}")
                  for name, f in fits.items()],
        note="" if held else "the blocks were not kept (kernel_cache_ = 0): the workers' budget is too small",
    )


def _plot(run, fits, s, workers):
    fig, ax = figure(2, 1, width=4.0)
    names = list(fits)
    ax[0, 0].bar(names, [fits[name]["wall"] / fits[name]["passes"] for name in names])
    ax[0, 0].set(ylabel="seconds per pass", title=f"{s['rows']:,} rows, m = {s['m']}, {workers} workers")
    ax[0, 1].bar(names, [max(fits[name]["peaks_gib"]) for name in names])
    ax[0, 1].set(ylabel="largest worker peak (GiB)")
    for axis in ax[0]:
        axis.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    run.save_figure(fig)
