"""The report's HTML page: a header on the run and machine, then each family's figures and tables.

The pieces (styles, tables, inline SVG charts) come from
:mod:`benchmarks.report_html`; this module lays them out.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

from benchmarks.report_cells import _num, _when
from benchmarks.report_results import _is_number, describe_combo, summarize


def build_page(run, report, parts, warnings, notes=()):
    """The HTML document of the report (``parts``: what :func:`benchmarks.report.collect` gathered;
    ``notes``: the newer incomplete runs passed over)."""
    from benchmarks import report_html as H

    styles = H.styles_for(report.our_labels, sorted(report.peer_labels))
    figures = H.have_matplotlib()
    failures = run.failures()
    header = _header(run, parts["environment"], len(failures))
    body = _banners(run, report, warnings, notes, figures)
    page = _Sections()
    legend_order = report.our_labels + sorted(report.peer_labels)
    for dataset, tables, series, widths in parts["feature_maps"]:
        svg = _feature_map_panels(series, widths, styles, legend_order) if figures else ""
        page.add(f"Feature maps · {dataset}",
                 "Every map and every peer at the same widths, same data, same gamma. Peers are the dashed "
                 "black and grey lines with hollow markers. Lower is better everywhere.",
                 [_figure(svg)] + [H.table_html(t) for t in tables])
    if parts["derived"] is not None:
        page.add("Derived-width maps", "Maps whose width the data sets, beside their peers.",
                 [H.table_html(parts["derived"])])
    if parts["baselines"] is not None:
        page.add("Exact baselines", "Exact kernel machines beside scikit-learn's, at the suite's gamma.",
                 [H.table_html(parts["baselines"])])
    speed_table, speed_bars = parts["speed"]
    if speed_table is not None:
        svg = H.ratio_bars(speed_bars, "peer time / our time (log scale; right of 1× we are faster)",
                           styles=styles) if figures else ""
        page.add("Speed workload", "Every map and peer on its family's data (64 features), float64 and "
                 "float32, each map at its speed width (D = 4096 unless its registry entry sets another) and "
                 "its peer at the same width. Green: faster than the peer; red: slower, with the reason the "
                 "registry states.", [_figure(svg), H.table_html(speed_table)])
    floors = _floor_blocks(parts, figures)
    if floors:
        page.add("Kernels against their floors", "", ['<div class="grid2">' + "".join(floors) + "</div>"])
    learned_tables, learned_series = parts["learned"]
    if learned_tables:
        svg = _learned_panels(learned_series, styles, legend_order) if figures else ""
        page.add("Learned maps", "Compact nonlinear maps and the optimized circulant map against the "
                 "RFF + Pegasos pipeline they replace (dashed), at small k.",
                 [_figure(svg)] + [H.table_html(t) for t in learned_tables])
    mkl = parts["mkl"]
    if mkl:
        svg = _mkl_scaling_panel(mkl["scaling_series"], styles) if figures and mkl.get("scaling_series") else ""
        scaling = H.table_html(mkl["scaling"]) if "scaling" in mkl else ""
        top = (f'<div class="grid2"><div>{_figure(svg, narrow=True)}</div><div>{scaling}</div></div>'
               if svg else scaling)
        page.add("Multiple kernel learning", "RFF group lasso (rff_gl) against exact MKL and the equal-weight "
                 "concatenation of the views' features; our FISTA solver against skglm.",
                 [top] + [H.table_html(mkl[k]) for k in ("mfeat", "solver") if k in mkl])
    if parts.get("dask"):
        page.add("Scaling out (Dask)", "RFF + least squares fitted in one pass over the same rows, in memory and "
                 "on a local Dask cluster of 2 single-threaded worker processes (the rows persisted on the workers).",
                 [H.table_html(parts["dask"]["table"])])
    history = _history_figure(run, report)
    if history:
        page.add("History across commits and machines", "Each map's speed-up over its peer in the speed "
                 "workload (peer time / ours, geometric mean over the dtypes) at every commit measured, one line "
                 "per machine and Numba target; a red × marks a commit where <code>python -m "
                 "benchmarks.compare</code> found the map slower.", [f"<figure>{history}</figure>"])
    if failures:
        page.add("Failed benchmarks", f"{len(failures)} value(s) are null in the results: the benchmark raised "
                 "or timed out (asv run exits 0 all the same).",
                 ["<ul>" + "".join(f"<li><code>{H.esc(describe_combo(k, c))}</code></li>" for k, c in failures)
                  + "</ul>"])
    footer = ("Generated by <code>benchmarks/report.py</code> from "
              + ", ".join(f"<code>{H.esc(f.path.name)}</code>" for f in run.files) + ".")
    title = f"kernelmaps benchmarks · {run.commit[:8]} · {run.machine}"
    return H.page(title, header, "".join(body) + page.html(), footer)


class _Sections:
    """The page's sections in order, and the table of contents that links to them."""

    def __init__(self):
        self.toc, self.sections = [], []

    def add(self, title, lead, blocks):
        """A section of the non-empty ``blocks`` under ``title``, or nothing if every block is empty."""
        from benchmarks import report_html as H

        blocks = [b for b in blocks if b]
        if not blocks:
            return
        anchor = H.slug(title)
        self.toc.append(f'<a href="#{anchor}">{H.esc(title)}</a>')
        lead_html = f'<p class="lead">{lead}</p>' if lead else ""
        self.sections.append(f'<section class="card" id="{anchor}"><h2>{H.esc(title)}</h2>{lead_html}'
                             + "".join(blocks) + "</section>")

    def html(self):
        """The table of contents, then the sections (a notice in their place if there are none)."""
        nav = f'<nav class="toc">{"".join(self.toc)}</nav>' if self.toc else ""
        sections = self.sections or ['<section class="card"><h2>No known benchmarks</h2><p class="lead">The run '
                                     "has none of the benchmarks this report knows.</p></section>"]
        return nav + "".join(sections)


def _figure(svg, caption="", narrow=False):
    """``svg`` in a ``<figure>`` (with its caption), or '' when there is no figure."""
    if not svg:
        return ""
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure class="{"narrow" if narrow else ""}">{svg}{cap}</figure>'


def _header(run, env, n_failures):
    """The page's header: the commit, the machine, and what the run measured on it."""
    from benchmarks import report_html as H

    info = run.machine_info
    cores = info.get("num_cpu", "?")
    ram = info.get("ram")
    ram_text = f"{int(ram) / 2**30:.0f} GiB" if str(ram or "").isdigit() else (ram or "?")
    meta = [
        ("commit", f"{run.commit[:12]}"),
        ("commit date", _when(run.date)),
        ("measured", _when(run.run_at)),
        ("machine", run.machine),
        ("CPU", info.get("cpu") or "unknown"),
        ("cores · RAM", f"{cores} · {ram_text}"),
        ("Numba target", _target_text(env)),
        ("profile", env.get("profile") or "unknown"),
        ("OS · arch", f"{info.get('os', '?')} · {info.get('arch', '?')}"),
        ("environment", ", ".join(sorted({f.env_name for f in run.files}))),
    ]
    meta_html = "".join(f"<div><dt>{H.esc(k)}</dt><dd>{H.esc(v)}</dd></div>" for k, v in meta)
    return (f'<header class="top"><div class="inner"><h1>kernelmaps benchmarks</h1>'
            f'<div class="sub">asv results of commit <code>{H.esc(run.commit)}</code> on '
            f'<b>{H.esc(run.machine)}</b> · {len(run.files)} result file(s) merged · '
            f'{n_failures} failed value(s)</div><dl class="meta">{meta_html}</dl></div></header>')


def _target_text(env):
    """The Numba target with its SIMD level and vector width, as bench_machine.Environment recorded them."""
    target = env.get("numba_target")
    if not target:
        return "unknown (no bench_machine.Environment result)"
    simd = env.get("simd")
    bits = env.get("vector_bits")
    # "AVX-512, 256-bit loops" names its loop width already
    detail = ", ".join(x for x in (simd, f"{bits}-bit vectors" if bits and "-bit" not in (simd or "") else "")
                       if x)
    return f"{target} ({detail})" if detail else target


def _banners(run, report, warnings, notes, figures):
    """The banners above the sections: a partial run or the run's warnings, passed-over runs,
    the registry's warnings, and tables without figures."""
    from benchmarks import report_html as H

    body = []
    if not run.complete:
        items = ([f"missing  {line}" for line in summarize(run.missing, run.benchmarks)]
                 + [f"failed   {line}" for line in summarize(run.failed, run.benchmarks)])
        body.append(H.banner("bad", f"Partial run: {len(run.missing)} benchmark values missing, "
                                    f"{len(run.failed)} failed. The figures and tables below lack them.",
                             items, more=" ".join(w for w in warnings if not w.startswith("PARTIAL"))))
    elif warnings:
        body.append(H.banner("warn", "Note", warnings))
    if notes:
        body.append(H.banner("warn", "Newer runs that are incomplete were passed over "
                                     "(pass --commit to see one)", notes))
    for w in report.registry.warnings:
        body.append(H.banner("warn", "Registry", [w]))
    if not figures:
        body.append(H.banner("warn", "matplotlib is not installed: tables only",
                             ["pip install -e '.[bench]' for the figures"]))
    return body


def _feature_map_panels(series, widths, styles, legend_order):
    """One dataset's kernel error, test error and transform time against D."""
    from benchmarks import report_html as H

    ticks = [_num(w) for w in widths if _is_number(_num(w))]
    return H.line_panels([
        {"title": "kernel error", "xlabel": "D (features)", "ylabel": "relative Frobenius error",
         "logx": True, "logy": True, "series": series["kernel"], "xticks": ticks},
        {"title": "test error", "xlabel": "D (features)", "ylabel": "test error (least squares)",
         "logx": True, "series": series["test"], "xticks": ticks},
        {"title": "transform time", "xlabel": "D (features)", "ylabel": "transform of the test rows",
         "logx": True, "logy": True, "seconds": True, "series": series["time"], "xticks": ticks},
    ], styles, legend_order)


def _floor_blocks(parts, figures):
    """Random Maclaurin against GEMM and our FWHT against FFHT, each a figure and its table, where measured."""
    from benchmarks import report_html as H

    rm_table, rm_bars = parts["maclaurin"]
    fw_table, fw_bars = parts["fwht"]
    blocks = []
    if rm_table is not None:
        svg = H.ratio_bars(rm_bars, "transform time / GEMM time (1× = the projections alone)",
                           lower_is_better=True, width=6.2) if figures else ""
        blocks.append(f"<div><h3>Random Maclaurin against GEMM</h3>{_figure(svg, narrow=True)}"
                      f"{H.table_html(rm_table)}</div>")
    if fw_table is not None:
        svg = H.ratio_bars(fw_bars, "FFHT time / our time", width=6.2) if figures else ""
        blocks.append(f"<div><h3>FWHT against FFHT</h3>{_figure(svg, narrow=True)}{H.table_html(fw_table)}</div>")
    return blocks


def _learned_panels(learned_series, styles, legend_order):
    """Test error, then fit time, against k: one column per dataset."""
    from benchmarks import report_html as H

    datasets = list(learned_series)
    panels = [{"title": f"{d}: test error", "xlabel": "k", "ylabel": "test error", "logx": True,
               "series": learned_series[d]["test"],
               "xticks": sorted({x for pts in learned_series[d]["test"].values() for x, _ in pts})}
              for d in datasets]
    panels += [{"title": f"{d}: fit time", "xlabel": "k", "ylabel": "fit time", "logx": True,
                "logy": True, "seconds": True, "series": learned_series[d]["fit"],
                "xticks": sorted({x for pts in learned_series[d]["fit"].values() for x, _ in pts})}
               for d in datasets]
    learned_order = [x for x in legend_order if any(x in learned_series[d]["test"] for d in datasets)]
    return H.line_panels(panels, styles, learned_order, ncols=max(1, len(datasets)), panel_size=(3.3, 2.7))


def _mkl_scaling_panel(series, styles):
    """RFF group lasso's and exact MKL's fit time against N (styled here when the registry styles neither)."""
    from benchmarks import report_html as H

    ticks = sorted({x for pts in series.values() for x, _ in pts})
    mkl_styles = dict(styles)
    mkl_styles.setdefault("rff_gl", {"color": H.OURS_COLORS[0], "marker": "o", "linestyle": "-",
                                     "linewidth": 2})
    mkl_styles.setdefault("exact_mkl", {"color": "#000000", "marker": "s", "linestyle": (0, (5, 2.5)),
                                        "linewidth": 2, "markerfacecolor": "white"})
    return H.line_panels([{"title": "fit time over N", "xlabel": "N (rows)", "ylabel": "fit time",
                           "logx": True, "logy": True, "seconds": True, "series": series, "xticks": ticks}],
                         mkl_styles, ["rff_gl", "exact_mkl"], panel_size=(5.5, 3.3))


def _history_figure(run, report):
    """The history chart of every results folder beside this run's, or ''."""
    from benchmarks import report_history
    from benchmarks.common import peers_of

    if not run.files:
        return ""
    results_dir = run.files[0].path.parent.parent
    pairs = {name: peers_of(name)[0] for name in report.our_labels if peers_of(name)}
    lines = report_history.speedups(results_dir, pairs)
    return report_history.figure(lines, report_history.flagged(results_dir.parent / "compare"))
