"""The fast Walsh–Hadamard transform (the core of Fastfood, SORF and the SRHT) against FFHT.

FFHT is Andoni et al.'s AVX implementation, not a dependency of kernelmaps: install it
into the environment that runs the experiment with ::

    pip install pybind11 setuptools wheel
    pip install --no-build-isolation ffht-unofficial

Without it this experiment stops with that message: a throughput of ours alone
would not say whether the claim holds.
"""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

INSTALL = ("pip install pybind11 setuptools wheel && "
           "pip install --no-build-isolation ffht-unofficial")


@experiment(
    "fwht-vs-ffht",
    paper="Andoni et al., NIPS 2015 (FFHT)",
    source="FFHT, the paper's AVX fast Hadamard transform",
    claim="kernelmaps' FWHT, single-threaded, is at least as fast as FFHT on the same batch of rows, "
          "in float64 and float32, at every row length.",
    paper_value="no throughput table to compare with; the bar here: our throughput / FFHT's ≥ 1 at every "
                "row length and dtype (2²⁰ elements per batch, one thread each)",
    quick={"log2_sizes": [4, 6, 8, 10, 12, 14, 16, 18, 20], "dtypes": ["float64", "float32"],
           "elements": 2**20, "repeats": 21},
    full={"log2_sizes": [4, 6, 8, 10, 12, 14, 16, 18, 20], "dtypes": ["float64", "float32"],
          "elements": 2**20, "repeats": 31},
    timed=True,
    requires=[("ffht", f"FFHT ({INSTALL})")],
    size=Size("elements", "{} elements per batch"),
)
def fwht_vs_ffht(run):
    import time

    import numba
    import numpy as np

    from benchmarks.machine import machine_info
    from kernelmaps import fwht

    try:
        import ffht
    except ImportError:
        raise RuntimeError(f"fwht-vs-ffht needs FFHT, which is not importable here. Install it with: {INSTALL}") from None

    s = run.settings
    target = machine_info()["numba_target"]
    rows, ratio, rate = [], {}, {}
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # one thread each, as FFHT's
    try:
        jobs = [(dtype, log_n) for dtype in s["dtypes"] for log_n in s["log2_sizes"]]
        for dtype, log_n in run.progress(jobs, desc="sizes"):
            n = 2**log_n
            X0 = np.random.default_rng(0).standard_normal((max(1, s["elements"] // n), n)).astype(dtype)
            tol = 1e-9 if dtype == "float64" else 1e-4
            check = X0[:1].copy()
            fwht(check)
            reference = ffht.fht(X0[0].copy())
            agree = bool(np.allclose(check[0], reference, rtol=tol, atol=tol * n))
            X = X0.copy()
            sides = {"kernelmaps": lambda: fwht(X), "FFHT": lambda: ffht.fht_(X, 1)}
            for run_side in sides.values():  # compilation, page faults
                run_side()
            samples = {label: [] for label in sides}
            for repeat in range(s["repeats"]):
                for label, run_side in sides.items():
                    # the unnormalized transform grows the rows by sqrt(n) a call: restore them, off the clock
                    X[...] = X0
                    start = time.perf_counter()
                    run_side()
                    samples[label].append(time.perf_counter() - start)
                    rows.append({"dtype": dtype, "n": n, "rows": X.shape[0], "implementation": label,
                                 "repeat": repeat, "seconds": samples[label][-1],
                                 "GB_per_s": X.nbytes / 1e9 / samples[label][-1], "agrees_with_ffht": agree,
                                 "numba_target": target})
            med = {label: float(np.median(v)) for label, v in samples.items()}
            ratio[dtype, log_n] = med["FFHT"] / med["kernelmaps"]
            rate[dtype, log_n] = {label: X.nbytes / 1e9 / med[label] for label in sides}
            if not agree:
                raise RuntimeError(f"kernelmaps' FWHT and FFHT disagree at n = {n}, {dtype}")
    finally:
        numba.set_num_threads(threads)
    run.write_csv(rows)

    fig, ax = figure(2, 1, width=5.0)
    sizes = s["log2_sizes"]
    for dtype, style in zip(s["dtypes"], ("-", "--")):
        for label, color in (("kernelmaps", "tab:blue"), ("FFHT", "tab:orange")):
            ax[0, 0].plot(sizes, [rate[dtype, k][label] for k in sizes], style, marker="o", color=color,
                          label=f"{label} {dtype}")
        ax[0, 1].plot(sizes, [ratio[dtype, k] for k in sizes], style, marker="o", label=dtype)
    ax[0, 0].set(xlabel="log₂ n (row length)", ylabel="GB/s (median)",
                 title=f"{s['elements']} elements a batch, one thread, target {target}")
    ax[0, 0].legend(fontsize=8)
    ax[0, 1].axhline(1, color="k", ls=":")
    ax[0, 1].set(xlabel="log₂ n (row length)", ylabel="FFHT time / ours", title="above 1: ours faster")
    ax[0, 1].legend(fontsize=8)
    fig.tight_layout()
    run.save_figure(fig)

    ok = {key: r >= 1 for key, r in ratio.items()}
    status = "holds" if all(ok.values()) else ("partly holds" if any(ok.values()) else "does not hold")

    def listing(dtype):
        return ", ".join(f"{ratio[dtype, k]:.2f}" for k in sizes)

    slower = [f"n = 2^{k} {dtype} ({ratio[dtype, k]:.2f}×)" for (dtype, k), good in ok.items() if not good]
    exponents = ", ".join(map(str, sizes))
    e = s["elements"]
    elements = f"2^{e.bit_length() - 1}" if e & (e - 1) == 0 else str(e)
    run.verdict(
        status,
        ours="; ".join(f"{dtype}: {listing(dtype)}" for dtype in s["dtypes"]) + f" (ours / FFHT at n = 2^{{{exponents}}})",
        measured=[(f"FWHT throughput / FFHT's, one thread, {elements} elements, n = 2^k for k = {exponents}: "
                   + "; ".join(s["dtypes"]) + f" (medians of {s['repeats']})",
                   "; ".join(f"{listing(dtype)}" for dtype in s["dtypes"]))],
        note="FFHT is faster at " + ", ".join(slower) if slower else "",
    )
