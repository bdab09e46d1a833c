"""Who gives the lowest error for the time spent? Every map against its scikit-learn peer.

Experiment
----------
``error-per-second``
    For every registered feature map that declares a scikit-learn peer, on the
    asv suite's data (:func:`benchmarks.common.prepared`: standardized, the CNM
    knn50 gamma, non-negative for the skewed and additive maps) and with the
    suite's builders (same gamma, same seed, the map's ``benchmark`` parameters),
    at each width of a grid (``sample_steps`` for the additive chi2 map, whose
    width the data sets):

    * the median ``transform`` time of the test rows, ours and the peer
      interleaved in one process after an untimed call each (so no Numba
      compilation is timed), BLAS at its default threads;
    * the kernel error ``||K - Z Z^T||_F / ||K||_F`` on the first ``n_eval`` test
      rows, against our map's exact kernel (``map.kernel(X)``; the peer's kernel,
      computed from the peer's own parameters, is checked to be the same one);
    * the test error of ``LeastSquaresClassifier(alpha)`` on the features, a fixed
      alpha (the asv suite's 1.0) for every map and width, no tuning.

    A map *leads* its peer on a dataset and error kind when, at equal transform
    time, its error is lower (see :func:`benchmarks.experiments._error_per_second.lead`).
    CRAFTMaps (slower at equal width by design: an 8x wider Random Maclaurin
    intermediate) is also set against kernelmaps' own TensorSketch, drawn and
    tabled but not judged.

The full mode is sized for the suite's default data profile (``KERNELMAPS_BENCH_PROFILE``
unset or ``quick``: at most 2000 training and 2000 test rows per dataset); under the
``full`` profile the same grid fits least squares on every training row.

Outputs beside ``error-per-second.csv`` (the lead table) and ``error-per-second.png``
(the polynomial-kernel maps against PolynomialCountSketch): ``error-per-second-points.csv``
(every measured point) and ``error-per-second-<map>.png`` (per map: one row of two
panels per peer and dataset).
"""

from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

KINDS = (("kernel_error", "kernel error (rel. Frobenius)"), ("test_error", "test error (%)"))
OURS_STYLE = {"color": "tab:blue", "marker": "o", "linestyle": "-"}
PEER_STYLE = {"color": "tab:orange", "marker": "s", "linestyle": "--"}
POLY_PEER = "sklearn.PolynomialCountSketch"
POLY_STYLES = {"craftmaps": ("tab:red", "o"), "tensor_sketch": ("tab:green", "v"),
               "random_maclaurin": ("tab:blue", "^")}


def _maps_with_peers():
    from benchmarks import common
    from kernelmaps import ALGORITHMS

    return sorted(n for n, cls in ALGORITHMS.items()
                  if cls.kind == "feature_map" and cls.benchmark and common.peers_of(n))


def _widths(name, widths):
    """The grid up to the largest width of the map's registered ``benchmark`` grid.

    CRAFTMaps (up-projection 8E: a 32768 x 4096 down-projection at E = 4096) and
    Nystroem (O(m^2) per row) register 1024 as their largest width."""
    from kernelmaps import ALGORITHMS

    top = max(ALGORITHMS[name].benchmark.get("n_components", [max(widths)]))
    return [w for w in widths if w <= top]


def _same_kernel(owner, peer, X):
    """Relative Frobenius distance between our exact kernel and the peer's on ``X`` (None: unknown peer)."""
    import numpy as np

    from benchmarks.experiments._error_per_second import peer_kernel

    reference = peer_kernel(peer, X)
    if reference is None:
        return None
    return float(np.linalg.norm(owner.kernel(X) - reference) / np.linalg.norm(reference))


def _measure(run, maps):
    """Every point of every (map, peer, dataset): rows of the points CSV, and the kernel checks."""
    import warnings

    from benchmarks import common
    from benchmarks.experiments._error_per_second import measure, pair_plan
    from kernelmaps import ALGORITHMS

    s = run.settings
    jobs = [(name, peer, ds) for name in maps for peer in common.peers_of(name) for ds in s["datasets"]]
    points, checks = [], {}
    for name, peer, ds in run.progress(jobs, desc="map × peer × dataset"):
        derived = "n_components" not in ALGORITHMS[name]().get_params()
        data, plan = pair_plan(name, peer, ds, s["chi2_steps"] if derived else _widths(name, s["widths"]))
        X_eval = data["X_test"][:s["n_eval"]]
        first = plan[0][1]().fit(data["X_train"])
        K = first.kernel(X_eval)
        checks[name, peer, ds] = _same_kernel(first, plan[0][2](), X_eval[:200])
        key = {"map": name, "peer": peer, "dataset": ds}

        def add(side, grid, r, extension=False):
            points.append({**key, "side": side, "method": name if side == "ours" else peer, "grid": grid,
                           "width": r["width"], "extension": extension, "n_test": len(data["y_test"]),
                           "transform_ms": 1e3 * r["transform_s"], "fit_ms": 1e3 * r["fit_s"],
                           "kernel_error": r["kernel_error"], "test_error": r["test_error"]})

        def run_quietly(builders):
            with warnings.catch_warnings():
                # Nystroem at more landmarks than training rows caps (and warns): such points are dropped
                warnings.simplefilter("ignore", UserWarning)
                return measure(builders, data, K, s["n_eval"], s["repeats"], s["alpha"], s["min_seconds"])

        slowest = {"ours": 0.0, "peer": 0.0}
        for grid, build_ours, build_peer in plan:
            ours, theirs = run_quietly([build_ours, build_peer])
            if not derived and ours["width"] < grid:
                continue
            for side, r in (("ours", ours), ("peer", theirs)):
                add(side, grid, r)
                slowest[side] = max(slowest[side], r["transform_s"])
        # ours slower at its widest than the peer at its widest: the peer alone at doubled widths, until it
        # is as slow, so that ours is compared at equal time over its whole range (CRAFTMaps' case)
        width = plan[-1][0]
        if not derived and slowest["ours"] > 1.5 * slowest["peer"]:
            while slowest["peer"] < slowest["ours"] and 2 * width <= s["peer_max_width"]:
                width *= 2
                (theirs,) = run_quietly([pair_plan(name, peer, ds, [width])[1][0][2]])
                if theirs["width"] < width:
                    break
                add("peer", width, theirs, extension=True)
                slowest["peer"] = theirs["transform_s"]
    return points, checks


def _curve(points, name, peer, ds, side, kind):
    rows = sorted((r for r in points if (r["map"], r["peer"], r["dataset"], r["side"]) == (name, peer, ds, side)),
                  key=lambda r: r["width"])
    return [r["transform_ms"] for r in rows], [r[kind] for r in rows], [r["width"] for r in rows]


def _leads(run, points, checks, maps):
    from benchmarks import common
    from benchmarks.experiments._error_per_second import lead

    s = run.settings
    table = []
    pairs = [(name, peer, name, "peer") for name in maps for peer in common.peers_of(name)]
    if "craftmaps" in maps and "tensor_sketch" in maps and POLY_PEER in common.peers_of("tensor_sketch"):
        # not judged: kernelmaps' own TensorSketch, measured in its PolynomialCountSketch pair
        pairs.append(("craftmaps", POLY_PEER, "tensor_sketch", "ours"))
    for name, peer, other, other_side in pairs:
        versus = peer if other_side == "peer" else f"kernelmaps.{other}"
        judged = other_side == "peer"
        for ds in s["datasets"]:
            n_test = next(r["n_test"] for r in points if r["map"] == name and r["dataset"] == ds)
            distance = checks[name, peer, ds]
            for kind, _ in KINDS:
                t_o, e_o, _w = _curve(points, name, peer, ds, "ours", kind)
                t_p, e_p, _w = _curve(points, other, peer, ds, other_side, kind)
                abs_tol = s["test_tol_rows"] / n_test if kind == "test_error" else 0.0
                out = lead(t_o, e_o, t_p, e_p, rel_tol=s["rel_tol"], abs_tol=abs_tol)
                table.append({"map": name, "versus": versus, "dataset": ds, "error": kind, **out,
                              "ours_ms": f"{min(t_o):.3g}-{max(t_o):.3g}", "versus_ms": f"{min(t_p):.3g}-{max(t_p):.3g}",
                              "kernel_distance": "unchecked" if distance is None else f"{distance:.1e}",
                              "judged": judged})
    return table


def _label_points(ax, times, values, widths, above):
    for t, v, w in zip(times, values, widths):
        text = f"{w // 1024}k" if w >= 1024 and w % 1024 == 0 else str(w)
        ax.annotate(text, (t, v), textcoords="offset points", xytext=(0, 4 if above else -9), fontsize=6,
                    ha="center", color="0.3")


def _plain_log_ticks(axis):
    """Log-axis ticks at 1, 2 and 5 of each decade, labelled as plain numbers: matplotlib's
    default labels the minor ticks too when the range spans less than a decade, and they overlap."""
    from matplotlib.ticker import LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(lambda value, _: f"{value:g}")
    axis.set_minor_formatter(NullFormatter())


def _panel(ax, curves, kind, title):
    """``curves``: [(label, times, values, widths, style)] drawn on one log-x panel."""
    for i, (label, times, values, widths, style) in enumerate(curves):
        values = [100 * v for v in values] if kind == "test_error" else values
        ax.plot(times, values, label=label, markersize=4, **style)
        _label_points(ax, times, values, widths, above=i % 2 == 0)
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    if kind == "kernel_error":
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)
    ax.set(xlabel="transform time of the test rows (ms)", ylabel=dict(KINDS)[kind], title=title)
    ax.title.set_fontsize(8)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6)


def _save_extra(run, fig, suffix):
    import matplotlib.pyplot as plt

    fig.savefig(run.folder / f"{run.spec.name}-{suffix}.png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def _map_figures(run, points, maps):
    from benchmarks import common

    for name in maps:
        rows = [(peer, ds) for peer in common.peers_of(name) for ds in run.settings["datasets"]]
        fig, axes = figure(2, len(rows), width=4.6, height=3.2)
        for (peer, ds), pair in zip(rows, axes):
            for ax, (kind, _) in zip(pair, KINDS):
                curves = [(label, *_curve(points, name, peer, ds, side, kind), style)
                          for side, label, style in (("ours", f"{name} (ours)", OURS_STYLE),
                                                     ("peer", peer, PEER_STYLE))]
                _panel(ax, curves, kind, f"{ds}: {name} vs {peer}")
        fig.tight_layout()
        _save_extra(run, fig, name)


def _main_figure(run, points, maps):
    """The polynomial-kernel maps and PolynomialCountSketch on each dataset (the CRAFTMaps case)."""
    from benchmarks import common

    poly = [n for n in maps if POLY_PEER in common.peers_of(n)]
    datasets = run.settings["datasets"]
    fig, axes = figure(2, len(datasets), width=5.0, height=3.6)
    for ds, pair in zip(datasets, axes):
        for ax, (kind, _) in zip(pair, KINDS):
            curves = []
            for name in poly:
                color, marker = POLY_STYLES.get(name, ("tab:gray", "o"))
                curves.append((f"{name} (ours)", *_curve(points, name, POLY_PEER, ds, "ours", kind),
                               {"color": color, "marker": marker, "linestyle": "-"}))
            source = "craftmaps" if "craftmaps" in poly else poly[0] if poly else None
            if source:
                curves.append((POLY_PEER, *_curve(points, source, POLY_PEER, ds, "peer", kind), PEER_STYLE))
            _panel(ax, curves, kind, f"{ds}: polynomial (0.1<x,y> + 1)^3, points labelled by width")
    fig.tight_layout()
    run.save_figure(fig)


def _write_points(run, points):
    import csv

    with open(run.folder / f"{run.spec.name}-points.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(points[0]))
        writer.writeheader()
        writer.writerows(points)


def _how(r):
    """How a lead-table row was decided, in words."""
    if r["basis"] == "dominance":
        side = "faster" if r["outcome"] == "leads" else "slower"
        return f"{side} at every width, error ratio {r['median_ratio']:.2f}"
    count = r["n_below"] if r["outcome"] == "leads" else r["n_above"]
    where = "below" if r["outcome"] == "leads" else "above"
    return f"{count}/{r['n_overlap']} points {where}, median ratio {r['median_ratio']:.2f}"


def _cell_text(table, name, versus, ds):
    return "/".join(r["outcome"] for r in table if (r["map"], r["versus"], r["dataset"]) == (name, versus, ds))


@experiment(
    "error-per-second",
    paper="kernelmaps' speed-accuracy bar (no paper)",
    source="the asv suite's maps and scikit-learn peers",
    claim="At equal transform time, each kernelmaps feature map gives a kernel error and a test error no higher "
          "than its scikit-learn peer's (same kernel, gamma, seed and data), on every bundled dataset.",
    paper_value="no paper value: the papers compare at equal width; the bar is: no (map, peer, dataset, error) "
                "cell trails",
    quick={"datasets": ["magic04", "letter"], "widths": [64, 128, 256, 512], "chi2_steps": [1, 2, 3],
           "peer_max_width": 2048, "repeats": 3, "min_seconds": 0.1, "n_eval": 1000, "alpha": 1.0, "rel_tol": 0.05, "test_tol_rows": 2},
    full={"datasets": ["banana", "magic04", "letter", "pendigits"],
          "widths": [64, 128, 256, 512, 1024, 2048, 4096], "chi2_steps": [1, 2, 3],
          "peer_max_width": 8192, "repeats": 5, "min_seconds": 0.3, "n_eval": 1000, "alpha": 1.0, "rel_tol": 0.05, "test_tol_rows": 2},
    timed=True,
    # "every bundled dataset": banana, magic04, letter and pendigits
    size=Size("datasets", "{} datasets", claim=4, measure=len),
)
def error_per_second(run):
    from benchmarks import common
    from benchmarks.experiments._error_per_second import overall_status

    import os

    s = run.settings
    maps = _maps_with_peers()
    load_before = os.getloadavg()[0]
    points, checks = _measure(run, maps)
    load_after = os.getloadavg()[0]
    _write_points(run, points)
    table = _leads(run, points, checks, maps)
    run.write_csv(table)
    _map_figures(run, points, maps)
    _main_figure(run, points, maps)

    judged = [r for r in table if r["judged"]]
    reach = {}
    for r in points:
        if r["extension"]:
            key = (r["peer"], r["map"], r["dataset"])
            reach[key] = max(reach.get(key, 0), r["width"])
    extended = [f"{p} for {n} on {ds} to {w}" for (p, n, ds), w in sorted(reach.items())]
    mismatched = sorted({f"{n} vs {p} ({ds}: {d:.1e})" for (n, p, ds), d in checks.items()
                         if d is not None and d > 1e-6})
    unchecked = sorted({f"{n} vs {p}" for (n, p, ds), d in checks.items() if d is None})
    status = overall_status(r["outcome"] for r in judged)
    if mismatched and status == "holds":
        status = "partly holds"
    count = {o: sum(r["outcome"] == o for r in judged) for o in ("leads", "ties", "trails", "no overlap")}
    trailing = [f"{r['map']} vs {r['versus']} on {r['dataset']} ({r['error'].replace('_', ' ')}, {_how(r)})"
                for r in judged if r["outcome"] == "trails"]
    apart = [f"{r['map']} vs {r['versus']} on {r['dataset']} ({r['error'].replace('_', ' ')}: ours "
             f"{r['ours_ms']} ms, peer {r['versus_ms']} ms)" for r in judged if r["outcome"] == "no overlap"]
    craft = [r for r in table if r["map"] == "craftmaps"]
    craft_text = "; ".join(f"vs {r['versus']} on {r['dataset']}, {r['error'].replace('_', ' ')}: {r['outcome']}"
                           + (f" ({_how(r)})" if r["basis"] != "none" else "") for r in craft)
    datasets = ", ".join(s["datasets"])
    pairs = [(name, peer) for name in maps for peer in common.peers_of(name)]
    run.verdict(
        status,
        ours=f"{len(judged)} (map, peer, dataset, error) cells: {count['leads']} lead, {count['ties']} tie, "
             f"{count['trails']} trail, {count['no overlap']} cannot be compared at equal time "
             f"({sum(r['basis'] == 'dominance' for r in judged)} decided by dominance). CRAFTMaps: "
             + (craft_text or "not registered with a peer"),
        measured=[(f"{name} vs {peer} at equal transform time on {datasets}: kernel/test error outcome",
                   "; ".join(f"{ds} {_cell_text(table, name, peer, ds)}" for ds in s["datasets"]))
                  for name, peer in pairs],
        note=f"Profile {common.PROFILE} of the asv suite's data ("
             + ", ".join(f"{ds} {len(common.prepared(ds)['y_train'])}/{len(common.prepared(ds)['y_test'])}"
                         for ds in s["datasets"])
             + " train/test rows); each map at the widths of the grid up to the largest of its registered "
             f"benchmark grid (the additive chi2 map at sample_steps {s['chi2_steps']}); where ours at its widest "
             "is more than 1.5x slower than the peer at its widest, the peer alone (timed by itself) at doubled "
             f"widths up to {s['peer_max_width']} until it is as slow"
             + (f" ({', '.join(extended)})" if extended else " (no pair needed it)") + "; "
             f"kernel error on the first {s['n_eval']} test rows; test error of LeastSquaresClassifier"
             f"(alpha={s['alpha']:g}), the same fixed alpha for every map and width (no tuning). Lead rule: the "
             "peer's error is interpolated linearly against log(time) at each of our times inside the peer's "
             f"time range (no extrapolation); a point is below/above if it differs by more than {s['rel_tol']:.0%} "
             f"of the peer's error (test error: at least {s['test_tol_rows']} test rows); ours leads if below "
             "at more than half of the overlapping points, trails if above at more than half, else ties. "
             "Where no time of ours is in the peer's range (one side faster at every width), dominance decides: "
             "ours faster throughout leads if its lowest error is below the peer's error at the peer's fastest "
             "point; ours slower throughout trails if its error at its fastest point is above the peer's lowest "
             "error; otherwise the cell is not compared. Holds if no cell trails. "
             + (f"Trailing: {'; '.join(trailing)}. " if trailing else "No cell trails. ")
             + (f"No overlap in time: {'; '.join(apart)}. " if apart else "")
             + (f"Peer kernel differs from ours: {'; '.join(mismatched)}. " if mismatched
                else "Every peer's kernel (from its own parameters) equals ours to 1e-6. ")
             + (f"Kernel not checked (peer class unknown to the check): {', '.join(unchecked)}. " if unchecked else "")
             + "CRAFTMaps vs kernelmaps' TensorSketch is tabled and drawn, not judged. "
             f"1-minute load average {load_before:.1f} before the measurements, {load_after:.1f} after "
             f"(above {os.cpu_count()}, the number of cores, other processes shared the CPU and the times are noisier). "
             "Figures: "
             f"{run.spec.name}.png (polynomial maps vs PolynomialCountSketch), "
             + ", ".join(f"{run.spec.name}-{name}.png" for name in maps)
             + f"; every point in {run.spec.name}-points.csv.",
    )
