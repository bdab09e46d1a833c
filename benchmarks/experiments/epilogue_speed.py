"""The element-wise epilogues against numpy's own vectorized ``cos`` and ``exp``.

Every map's transform is a BLAS product followed by an element-wise epilogue on the
block while it is in cache. numpy's ``np.cos`` and ``np.exp`` use SIMD code of their
own (AVX-512 where the CPU has it, whatever the Numba target), and they are what
scikit-learn's samplers and Nyström run after their products. The experiment times,
on one thread and the same block:

* the RFF epilogue ``scale * cos(p + b)`` (:func:`kernelmaps._maps.cosine.cos_features`)
  against ``np.cos`` alone on the same array;
* the Gaussian epilogue of the Nyström and exact kernels
  ``exp(-g (|x|^2 + |v|^2 - 2 p))`` (:class:`kernelmaps._kernels.formulas.Gaussian`)
  against ``np.exp`` alone.

Ours does more per element (the offset and scale, or the distance), numpy only
the function.
"""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: Each epilogue's two labels: ours (what it fuses) and numpy's function alone.
LABELS = {"cos": ("cos: ours (phase, cos, scale)", "cos: np.cos alone"),
          "exp": ("exp: ours (distance, exp)", "exp: np.exp alone")}


def _ns_per_element(function, restore, n_elements, repeats):
    """Median ns per element of ``function()``, less the time of ``restore()`` it needs first."""
    import time

    import numpy as np

    def timed(step):
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            step()
            samples.append(time.perf_counter() - start)
        return float(np.median(samples))

    both = timed(lambda: (restore(), function()))
    return max(0.0, both - timed(restore)) / n_elements * 1e9


@experiment(
    "epilogue-speed",
    paper="Rahimi & Recht, NIPS 2007 (the cosine of Algorithm 1); Williams & Seeger, NIPS 2001 (the Gaussian "
          "kernel block of Nyström)",
    source="the O(N D) element-wise part of each transform; the project's speed bar on every CPU target",
    claim="kernelmaps' fused epilogues cost no more per element than numpy's SIMD np.cos and np.exp alone "
          "on the same block, one thread, in float32 and float64, on every Numba target.",
    paper_value="no timing in the papers; the bar: ours / numpy ≤ 1.0 per element",
    quick={"rows": [32, 256], "columns": 4096, "repeats": 41},
    full={"rows": [32, 256, 1024], "columns": 4096, "repeats": 101},
    timed=True,
    size=Size("rows", "blocks of up to {} rows", measure=max),
)
def epilogue_speed(run):
    import numpy as np

    from benchmarks.experiments._common import one_blas_thread
    from benchmarks.machine import machine_info
    from kernelmaps._maps.cosine import cos_features
    from kernelmaps._kernels.formulas import Gaussian, evaluate_block

    s = run.settings
    target = machine_info()["numba_target"]
    rng = np.random.default_rng(0)
    rows, cells = [], {}
    with one_blas_thread():
        for dtype in ("float32", "float64"):
            for n in s["rows"]:
                m = s["columns"]
                products = (3.0 * rng.standard_normal((n, m))).astype(dtype)
                work, spare = products.copy(), products.copy()
                offset = rng.uniform(0.0, 2.0 * np.pi, m).astype(dtype)
                scale = np.dtype(dtype).type(np.sqrt(2.0 / m))
                X = rng.standard_normal((n, 16)).astype(dtype)
                V = rng.standard_normal((m, 16)).astype(dtype)
                sq_v = (V * V).sum(axis=1)
                gram = (X @ V.T).astype(dtype)
                gaussian = Gaussian(np.dtype(dtype).type(0.05))

                def restore_products():
                    work[...] = products

                def restore_gram():
                    work[...] = gram

                cos_features(work, offset, scale)  # compile outside the clock
                evaluate_block(gaussian, work, X, V, sq_v)
                timings = {
                    LABELS["cos"][0]: _ns_per_element(
                        lambda: cos_features(work, offset, scale), restore_products, n * m, s["repeats"]),
                    LABELS["cos"][1]: _ns_per_element(
                        lambda: np.cos(products, out=spare), lambda: None, n * m, s["repeats"]),
                    LABELS["exp"][0]: _ns_per_element(
                        lambda: evaluate_block(gaussian, work, X, V, sq_v), restore_gram, n * m,
                        s["repeats"]),
                    LABELS["exp"][1]: _ns_per_element(
                        lambda: np.exp(gram, out=spare), lambda: None, n * m, s["repeats"]),
                }
                cells[dtype, n] = timings
                rows += [{"dtype": dtype, "rows": n, "columns": m, "epilogue": k, "ns_per_element": v,
                          "numba_target": target} for k, v in timings.items()]
    run.write_csv(rows)

    ratio = {(f, t, n): cells[t, n][ours] / cells[t, n][numpy]
             for f, (ours, numpy) in LABELS.items() for (t, n) in cells}
    _plot(run, cells, target)
    misses = [f"{f} {t} {n} rows: {r:.2f}" for (f, t, n), r in ratio.items() if r > 1.0]
    status = "holds" if not misses else ("does not hold" if len(misses) == len(ratio) else "partly holds")

    def cell(f, t):
        ours, numpy = LABELS[f]
        return ", ".join(f"{cells[t, n][ours]:.3f} vs {cells[t, n][numpy]:.3f}" for n in s["rows"])

    run.verdict(
        status,
        ours=f"target {target}: " + "; ".join(f"{f} {t} ours / numpy {', '.join(f'{ratio[f, t, n]:.2f}' for n in s['rows'])}"
                                              for f in ("cos", "exp") for t in ("float32", "float64")),
        measured=[(f"{f} epilogue ns per element, ours vs np.{f} alone, one thread, {s['columns']} columns, "
                   f"blocks of {', '.join(map(str, s['rows']))} rows: {t}", cell(f, t))
                  for f in ("cos", "exp") for t in ("float32", "float64")],
        note=("Ours slower than numpy: " + "; ".join(misses) + ".") if misses else "",
    )


def _plot(run, cells, target):
    import numpy as np

    fig, ax = figure(2, 1, width=5.0)
    keys = sorted(cells)
    x = np.arange(len(keys))
    for panel, (f, labels) in enumerate(LABELS.items()):
        for j, label in enumerate(labels):
            ax[0, panel].bar(x + (j - 0.5) * 0.4, [cells[k][label] for k in keys], 0.4, label=label[len(f) + 2:])
        ax[0, panel].set_xticks(x, [f"{t}\n{n} rows" for t, n in keys], fontsize=8)
        ax[0, panel].set(ylabel="ns per element (one thread)", title=f"{f} epilogue, target {target}")
        ax[0, panel].legend(fontsize=8)
    fig.tight_layout()
    run.save_figure(fig)
