"""The report's tables, one family of benchmarks at a time, and the data of its charts.

:class:`Report` reads a :class:`benchmarks.report_results.Run` and builds each
family's :class:`benchmarks.report_cells.Table` (each method beside its peer) and
the series its figures draw.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

import re
from typing import NamedTuple

from benchmarks.report_cells import (Cell, Footnotes, Table, _dataset_rank, _num, compare, fmt, fmt_mib, fmt_time,
                                     order_labels, ratio_cell, short)
from benchmarks.report_results import _is_number

FEATURE = ("FeatureMaps", "FeatureMapAccuracy")
DERIVED = ("DerivedWidthMaps", "DerivedWidthAccuracy")
BASELINES = ("ExactBaselines",)
SPEED = ("TransformSpeed", "DerivedWidthSpeed", "HistogramTransformSpeed")
MACLAURIN = ("RandomMaclaurinSpeed",)
FWHT = ("FWHT",)
LEARNED = ("LearnedMaps", "LearnedMapAccuracy")
MKL = ("MultipleKernelMfeat", "MultipleKernelMfeatAccuracy")
SOLVER = ("GroupLassoSolver",)
SCALING = ("MultipleKernelScaling",)
ENVIRONMENT = ("Environment",)
DASK = ("DaskOnePass",)
#: what the tables of the maps at given widths and of the derived-width maps show
_MAP_METRICS = ("time_fit", "time_transform", "track_kernel_error", "track_test_error", "track_transform_memory",
                "track_output_memory")


class _Row(NamedTuple):
    """A row of a table of methods against their peers (see :meth:`Report._rows`)."""

    label: str
    key: tuple
    ratio: float | None     # peer time / our time, against the fastest peer
    peer: str | None        # that peer
    peers: list             # the label's peers among the labels measured
    css: str                # the row's class on the page


def _datasets(keys):
    """The datasets of ``keys`` (their second items), in the suite's order."""
    return sorted({k[1] for k in keys}, key=lambda d: (_dataset_rank(d), str(d)))


class Report:
    """Everything shown for one run: tables (terminal and page) and chart data."""

    def __init__(self, run, registry):
        self.run, self.registry = run, registry
        self.sections = []          # (anchor, title, lead, [blocks]) for the page
        self.tables = []            # every Table, in print order
        self.peer_labels = set()
        self.our_labels = []

    # -- helpers

    def _peer_of(self, label, present):
        """The peers of ``label`` among the labels ``present``."""
        peers = [p for p in self.registry.peers(label) if p in present]
        self.peer_labels.update(peers)
        return peers

    def _note_labels(self, labels):
        for label in labels:
            if label not in self.our_labels and label not in self.peer_labels:
                self.our_labels.append(label)

    def _row_css(self, label, previous_group, group):
        css = "peer" if label in self.peer_labels else ""
        return css + (" group-start" if previous_group is not None and group != previous_group else "")

    def _group(self, label):
        peers = self.registry.peers(label)
        return peers[0] if peers else label

    def _methods(self, keys):
        """The labels of ``keys`` (their first items), each one's peers among them noted."""
        labels = {k[0] for k in keys}
        for label in labels:
            self._peer_of(label, labels)
        return labels

    def _rows(self, keys, labels, ordered, times, where, group):
        """The rows of a table of methods against their peers, in the table's order.

        Parameters
        ----------
        keys : set of tuple
            The measured ``(label, *parameters)``.
        labels : set of str
            Every label measured, peers included.
        ordered : list of str
            The labels in row order.
        times : dict
            ``{(label, *parameters): seconds}``: the time each row's ratio compares.
        where : iterable of tuple
            The parameters after the label, in row order; at each, the labels go
            in the order of ``ordered``.
        group : callable
            ``group(label, key)``, the group of a row: the first row of a group is
            ruled off from the group before it.

        Yields
        ------
        _Row
            Each measured label at each parameter tuple, its time against its peers'.
        """
        previous = None
        for at in where:
            for label in ordered:
                key = (label, *at)
                if key not in keys:
                    continue
                peers = self._peer_of(label, labels)
                ratio, peer = compare(times.get(key), {p: times.get((p, *at)) for p in peers})
                current = group(label, key)
                yield _Row(label, key, ratio, peer, peers, self._row_css(label, previous, current))
                previous = current

    # -- families

    def feature_maps(self):
        """Per dataset and width: fit, transform, ratio to the peer, memory, errors."""
        names = ["algorithm", "dataset", "n_components"]
        fit, transform, kerr, terr, memory, output = (self.run.series(FEATURE, m, names) for m in _MAP_METRICS)
        keys = set(fit) | set(transform) | set(kerr) | set(terr)
        if not keys:
            return []
        labels = self._methods(keys)
        ordered = order_labels(labels, self.registry)
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        widths = sorted({k[2] for k in keys}, key=_num)
        per_dataset = []
        for dataset in _datasets(keys):
            tables = []
            for width in widths:
                table = Table(f"{dataset}, D = {width}",
                              ["algorithm", "fit", "transform", "vs peer (transform)", "memory", "output",
                               "kernel err", "test err"], "lrrlrrrr")
                notes = Footnotes(table, self.registry)
                for row in self._rows(keys, labels, ordered, transform, [(dataset, width)],
                                      lambda label, _: self._group(label)):
                    k = row.key
                    table.add([row.label, fmt_time(fit.get(k)), fmt_time(transform.get(k)),
                               ratio_cell(row.ratio, row.peer, notes, row.label),
                               fmt_mib(memory.get(k)), fmt_mib(output.get(k)),
                               fmt(kerr.get(k), ".4f"), fmt(terr.get(k), ".4f")], row.css)
                if table.rows:
                    tables.append(table)
            series = {metric: {label: [(k[2], table[k]) for k in table if k[0] == label and k[1] == dataset]
                               for label in ordered}
                      for metric, table in (("kernel", kerr), ("test", terr), ("time", transform))}
            per_dataset.append((dataset, tables, series, widths))
        self.tables += [t for _, tables, _, _ in per_dataset for t in tables]
        return per_dataset

    def derived(self):
        """Maps whose width the data sets, per dataset: fit, transform, ratio to the peer, memory, errors."""
        names = ["algorithm", "dataset"]
        fit, transform, kerr, terr, memory, output = (self.run.series(DERIVED, m, names) for m in _MAP_METRICS)
        keys = set(fit) | set(transform) | set(kerr) | set(terr)
        if not keys:
            return None
        labels = self._methods(keys)
        ordered = order_labels(labels, self.registry)
        table = Table("maps whose width the data sets (non-negative data, benchmark parameters)",
                      ["algorithm", "dataset", "fit", "transform", "vs peer (transform)", "memory", "output",
                       "kernel err", "test err"], "llrrlrrrr")
        notes = Footnotes(table, self.registry)
        for row in self._rows(keys, labels, ordered, transform, [(d,) for d in _datasets(keys)],
                              lambda _, key: key[1]):
            k = row.key
            table.add([row.label, k[1], fmt_time(fit.get(k)), fmt_time(transform.get(k)),
                       ratio_cell(row.ratio, row.peer, notes, row.label), fmt_mib(memory.get(k)),
                       fmt_mib(output.get(k)), fmt(kerr.get(k), ".4f"), fmt(terr.get(k), ".4f")], row.css)
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        self.tables.append(table)
        return table

    def baselines(self):
        """The exact kernel machines against scikit-learn's, per dataset: fit time and test error."""
        names = ["algorithm", "dataset"]
        fit = self.run.series(BASELINES, "time_fit", names)
        err = self.run.series(BASELINES, "track_test_error", names)
        keys = set(fit) | set(err)
        if not keys:
            return None
        labels = self._methods(keys)
        ordered = order_labels(labels, self.registry)
        table = Table("exact kernel machines (the papers' RBF row), same gamma",
                      ["algorithm", "dataset", "fit", "vs peer (fit)", "test err"], "llrlr")
        notes = Footnotes(table, self.registry)
        for row in self._rows(keys, labels, ordered, fit, [(d,) for d in _datasets(keys)], lambda _, key: key[1]):
            k = row.key
            table.add([row.label, k[1], fmt_time(fit.get(k)), ratio_cell(row.ratio, row.peer, notes, row.label),
                       fmt(err.get(k), ".4f")], row.css)
        self.tables.append(table)
        return table

    def speed(self):
        """The speed workloads (fixed-width and derived-width maps): table and bars of
        the ratios. A map meets its peer at the same dtype and, where the workload
        has an ``n_components`` parameter, the same width."""
        names, optional = ["algorithm", "dtype"], ["n_components"]
        transform = self.run.series(SPEED, "time_transform", names, optional)
        memory = self.run.series(SPEED, "track_transform_memory", names, optional)
        output = self.run.series(SPEED, "track_output_memory", names, optional)
        keys = set(transform) | set(memory)
        if not keys:
            return None, []
        labels = self._methods(keys)
        ordered = order_labels(labels, self.registry)
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        with_width = any(k[2] is not None for k in keys)
        table = Table("speed workload: 64 features, each map at its speed width (ratio = peer time / our time)",
                      ["algorithm", "dtype"] + (["D"] if with_width else [])
                      + ["transform", "vs peer", "memory", "output"],
                      "ll" + ("r" if with_width else "") + "rlrr")
        notes = Footnotes(table, self.registry)
        bars = []
        previous = None
        for label in ordered:
            group = self._group(label)
            mine = sorted((k for k in keys if k[0] == label),
                          key=lambda k: (k[1] != "float64", str(k[1]), _num(k[2])))
            for k in mine:
                _, dtype, width = k
                peers = self._peer_of(label, labels)
                ratio, peer = compare(transform.get(k), {p: transform.get((p, dtype, width)) for p in peers})
                table.add([label, dtype] + ([str(width) if width is not None else ""] if with_width else [])
                          + [fmt_time(transform.get(k)), ratio_cell(ratio, peer, notes, label),
                             fmt_mib(memory.get(k)), fmt_mib(output.get(k))],
                          self._row_css(label, previous, group))
                previous = group
                if ratio is not None:
                    at = f" · D={width}" if width is not None else ""
                    bars.append({"label": f"{label} · {dtype}{at}  vs {short(peer)}", "value": ratio,
                                 "good": ratio >= 1.0, "method": label,
                                 "note": None if ratio >= 1.0 else
                                 (self.registry.reason(label) or "no stated reason")})
        self.tables.append(table)
        return table, bars

    def maclaurin(self):
        """Random Maclaurin's transform against its GEMM floor: table and bars of the ratios."""
        names = ["dtype", "structured"]
        transform = self.run.series(MACLAURIN, "time_transform", names)
        blas = self.run.series(MACLAURIN, "time_blas_products", names)
        ratio = self.run.series(MACLAURIN, "track_transform_over_blas", names)
        keys = set(transform) | set(blas) | set(ratio)
        if not keys:
            return None, []
        table = Table("Random Maclaurin (degree 3, D = 4096) against its GEMM floor X W (lower is better)",
                      ["dtype", "projections", "transform", "GEMM X W", "transform / GEMM"], "llrrr")
        bars = []
        for k in sorted(keys, key=lambda k: (k[0] != "float64", str(k[0]), bool(k[1]))):
            kind = "Hadamard" if k[1] else "dense"
            r = ratio.get(k)
            table.add([k[0], kind, fmt_time(transform.get(k)), fmt_time(blas.get(k)), fmt(r, ".2f", "×")])
            if r is not None:
                bars.append({"label": f"{kind} · {k[0]}", "value": r, "good": None})
        self.tables.append(table)
        return table, bars

    def fwht(self):
        """Our FWHT against FFHT: table and bars of the ratios."""
        names = ["implementation", "log2_n", "dtype"]
        times = self.run.series(FWHT, "time_fwht", names)
        if not times:
            return None, []
        table = Table("FWHT of 2^20 elements, one thread (ratio = FFHT time / our time)",
                      ["n", "dtype", "kernelmaps", "FFHT", "vs FFHT"], "rlrrl")
        notes = Footnotes(table, self.registry)
        bars = []
        combos = sorted({k[1:] for k in times if k[0] == "kernelmaps"},
                        key=lambda c: (_num(c[0]), c[1] != "float64"))
        for log_n, dtype in combos:
            mine, theirs = times.get(("kernelmaps", log_n, dtype)), times.get(("ffht", log_n, dtype))
            ratio, peer = compare(mine, {"FFHT": theirs})
            cell = ratio_cell(ratio, peer, notes, "fwht") if ratio is not None else Cell("(no FFHT)", "na")
            n = 2 ** int(log_n) if _is_number(_num(log_n)) else log_n
            table.add([str(n), dtype, fmt_time(mine), fmt_time(theirs), cell])
            if ratio is not None:
                bars.append({"label": f"n = {n} · {dtype}", "value": ratio, "good": ratio >= 1.0})
        self.tables.append(table)
        return table, bars

    def learned(self):
        """Learned maps against the pipeline they replace, per dataset and k: fit time and test error."""
        names = ["algorithm", "dataset", "n_components"]
        fit = self.run.series(LEARNED, "time_fit", names)
        err = self.run.series(LEARNED, "track_test_error", names)
        keys = set(fit) | set(err)
        if not keys:
            return [], {}
        labels = self._methods(keys)
        ordered = sorted(labels, key=lambda label: (label in self.peer_labels, label))
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        tables, series = [], {}
        for dataset in _datasets(keys):
            table = Table(f"learned maps on {dataset} (vs rff+pegasos at the same k)",
                          ["algorithm", "k", "fit", "vs peer (fit)", "test err", "Δ err vs peer"], "lrrlrr")
            notes = Footnotes(table, self.registry)
            widths = sorted({k[2] for k in keys if k[1] == dataset}, key=_num)
            for row in self._rows(keys, labels, ordered, fit, [(dataset, w) for w in widths],
                                  lambda _, key: key[2]):
                k = row.key
                theirs = err.get((row.peer or (row.peers[0] if row.peers else None), dataset, k[2]))
                delta = None if err.get(k) is None or theirs is None else err[k] - theirs
                delta_cell = Cell("") if delta is None else Cell(
                    f"{delta:+.4f}", "win" if delta < 0 else "lose" if delta > 0 else "")
                table.add([row.label, str(k[2]), fmt_time(fit.get(k)),
                           ratio_cell(row.ratio, row.peer, notes, row.label), fmt(err.get(k), ".4f"), delta_cell],
                          row.css)
            tables.append(table)
            series[dataset] = {
                "test": {label: [(k[2], err[k]) for k in err if k[0] == label and k[1] == dataset] for label in ordered},
                "fit": {label: [(k[2], fit[k]) for k in fit if k[0] == label and k[1] == dataset] for label in ordered},
            }
        self.tables += tables
        return tables, series

    def mkl(self):
        """mfeat, the group-lasso solver against skglm, the scaling over N."""
        out = {}
        names = ["algorithm", "n_components_per_kernel"]
        fit = self.run.series(MKL, "time_fit", names)
        err = self.run.series(MKL, "track_test_error", names)
        keys = set(fit) | set(err)
        if keys:
            table = Table("multiple kernel learning on mfeat's six views (vs exact MKL)",
                          ["algorithm", "D per kernel", "fit", "vs exact_mkl (fit)", "test err",
                           "Δ err vs exact_mkl"], "lrrlrr")
            notes = Footnotes(table, self.registry)
            exact_fit = next((fit[k] for k in sorted(fit, key=lambda k: _num(k[1])) if k[0] == "exact_mkl"), None)
            exact_err = next((err[k] for k in sorted(err, key=lambda k: _num(k[1])) if k[0] == "exact_mkl"), None)
            rank = {"rff_gl": 0, "rff_concat": 1, "exact_mkl": 2}
            for k in sorted(keys, key=lambda k: (rank.get(k[0], 1), _num(k[1]))):
                label, width = k
                if label == "exact_mkl":
                    table.add([label, "exact", fmt_time(fit.get(k)), "", fmt(err.get(k), ".4f"), ""], "peer")
                    continue
                ratio, peer = compare(fit.get(k), {"exact_mkl": exact_fit})
                delta = None if err.get(k) is None or exact_err is None else err[k] - exact_err
                table.add([label, str(width), fmt_time(fit.get(k)), ratio_cell(ratio, peer, notes, label),
                           fmt(err.get(k), ".4f"),
                           Cell("") if delta is None else Cell(f"{delta:+.4f}", "win" if delta <= 0 else "")])
            self.tables.append(table)
            out["mfeat"] = table
        names = ["solver", "n_samples"]
        solve = self.run.series(SOLVER, "time_solve", names)
        gap = self.run.series(SOLVER, "track_objective_gap", names)
        if solve or gap:
            table = Table("group lasso solver (FISTA) against skglm, to 1e-6 of the optimum "
                          "(ratio = skglm time / our time)",
                          ["N", "kernelmaps", "skglm", "vs skglm", "gap (ours)", "gap (skglm)"], "rrrlrr")
            notes = Footnotes(table, self.registry)
            for n in sorted({k[1] for k in set(solve) | set(gap)}, key=_num):
                mine, theirs = solve.get(("kernelmaps", n)), solve.get(("skglm", n))
                ratio, peer = compare(mine, {"skglm": theirs})
                table.add([str(n), fmt_time(mine), fmt_time(theirs),
                           ratio_cell(ratio, peer, notes, "group_lasso_mkl_classifier")
                           if ratio is not None else Cell("(no skglm)", "na"),
                           fmt(gap.get(("kernelmaps", n)), ".1e"), fmt(gap.get(("skglm", n)), ".1e")])
            self.tables.append(table)
            out["solver"] = table
        names = ["algorithm", "n_samples"]
        scaling = self.run.series(SCALING, "time_fit", names)
        if scaling:
            table = Table("multiple kernel fit time over N (the paper's Figure 4; ratio = exact time / RFF-GL time)",
                          ["N", "rff_gl", "exact_mkl", "vs exact_mkl"], "rrrl")
            notes = Footnotes(table, self.registry)
            for n in sorted({k[1] for k in scaling}, key=_num):
                mine, theirs = scaling.get(("rff_gl", n)), scaling.get(("exact_mkl", n))
                ratio, peer = compare(mine, {"exact_mkl": theirs})
                table.add([str(n), fmt_time(mine), fmt_time(theirs), ratio_cell(ratio, peer, notes, "rff_gl")])
            self.tables.append(table)
            out["scaling"] = table
            out["scaling_series"] = {label: [(k[1], v) for k, v in scaling.items() if k[0] == label]
                                     for label in ("rff_gl", "exact_mkl")}
        return out

    def dask(self):
        """The one-pass fit in memory and on 2 Dask workers (``bench_dask``)."""
        fit = self.run.series(DASK, "time_fit", ["path"])
        peak = self.run.series(DASK, "track_worker_peak_memory", ["path"])
        if not fit:
            return {}
        table = Table("one-pass RFF + least squares fit, in memory and on a 2-worker Dask LocalCluster "
                      "(ratio = in-memory time / Dask time: the Dask path's share of the in-memory "
                      "throughput, 0.7 or more asked)",
                      ["path", "fit", "vs in-memory", "peak resident (largest worker)"], "lrlr")
        in_memory = fit.get(("in-memory",))
        for key in sorted(fit, key=lambda k: k[0] != "in-memory"):
            if key == ("in-memory",):
                table.add([key[0], fmt_time(fit[key]), "", fmt_mib(peak.get(key))], "peer")
                continue
            ratio, peer = compare(fit[key], {"in-memory": in_memory})
            cell = Cell("", "na") if ratio is None else Cell(
                f"{ratio:.2f}× in-memory", "win" if ratio >= 0.7 else "lose", title="in-memory time / Dask time")
            table.add([key[0], fmt_time(fit[key]), cell, fmt_mib(peak.get(key))])
        self.tables.append(table)
        return {"table": table}

    def environment(self):
        """``(target, SIMD, vector bits, profile)`` from ``bench_machine.Environment``."""
        key = self.run.find(ENVIRONMENT, "track_vector_bits")
        if key is None:
            return {}
        table = self.run.values[key]
        combos = sorted(table, key=lambda c: not _is_number(table[c]))
        if not combos:
            return {}
        combo = combos[0]
        names = (self.run.benchmarks or {}).get(key, {}).get("param_names") or []
        by_name = {str(n): str(v) for n, v in zip(names, combo)}
        # the target is the parameter so named, else the first; the profile likewise, else the second
        target = by_name.get("numba_target") or by_name.get("target") or (str(combo[0]) if combo else "")
        profile = by_name.get("profile") or (str(combo[1]) if len(combo) > 1 else "")
        info = {"profile": profile} if profile else {}
        m = re.match(r"^\s*(.*?)\s*\((.*)\)\s*$", target)
        if m:
            info["numba_target"], info["simd"] = m.group(1), m.group(2)
        else:
            info["numba_target"] = target
        if _is_number(table[combo]):
            info["vector_bits"] = f"{table[combo]:g}"
        return info
