r"""Report of the asv results of one run: tables in the terminal and one HTML page.

Usage::

    python benchmarks/report.py [--results .asv/results] [--machine NAME]
                                [--commit HASH] [--html PATH]

Which run
    ``--machine`` or the machine whose results were written last; on it,
    ``--commit`` (a prefix of the hash) or the newest commit (by commit date)
    whose results are *complete*: every benchmark that ``benchmarks.json`` lists
    has a value for every parameter combination it does not skip. asv writes a
    skipped combination (``NotImplementedError`` in ``setup``) as NaN and a failed
    one as ``null``; a missing or failed combination makes a run incomplete. All
    result files of that commit and machine are merged (partial re-runs and other
    environments write files of their own); where two files hold the same
    benchmark and parameters, the later measurement wins. Without any complete
    run, the newest is shown with a warning (stderr and a banner on the page)
    listing what is missing or failed.

Terminal
    per family of benchmarks, a table with each method beside its peer. A ratio
    cell names the peer (``1.85× RBFSampler``) and is ``peer time / our time``:
    above 1 we are faster. A map slower than its peer gets a footnote with the
    registry's ``benchmark["slower_because"]``, or "no stated reason". Memory is
    ``track_transform_memory`` (MiB the transform allocates beyond the process's
    baseline, output included) and ``track_output_memory`` (the output alone).
    The count of failed benchmark values closes the output (``asv run`` exits 0
    even when benchmarks fail).

HTML (default: ``report.html`` beside the results directory, i.e. ``.asv/report.html``)
    one self-contained file: inline CSS, inline SVG figures (matplotlib), no
    external reference. Header with commit, dates, machine, CPU, cores, Numba
    target and SIMD width, profile; per dataset the kernel error, test error and
    transform time against the width; the speed workloads as bars of the ratio
    to the peer; Random Maclaurin against GEMM; FWHT against FFHT; learned maps;
    multiple kernel learning; the terminal's tables. Without matplotlib the
    page has the tables only.

Check the page in a real browser (Debian's Chromium, as root)::

    apt-get install -y chromium
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run \
        --user-data-dir=$(mktemp -d) --screenshot=/tmp/report.png \
        --window-size=1400,3000 file://$PWD/.asv/report.html

then look at ``/tmp/report.png``.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

import argparse
import ast
import datetime
import itertools
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_REPO = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------- reading results


def _decode(value_repr):
    """A parameter value from asv's ``repr`` string: ``"'rff'"`` -> ``'rff'``, ``"256"`` -> 256."""
    try:
        return ast.literal_eval(value_repr)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return value_repr


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_skipped(value):
    return isinstance(value, float) and math.isnan(value)


@dataclass
class ResultFile:
    """One ``<commit8>-<env>.json`` of asv (format version 2), read without asv.

    ``values`` maps a benchmark key to ``{decoded parameter tuple: value}`` where a
    value is a number, NaN (skipped) or None (failed); ``stamps`` gives each key's
    ``started_at`` (ms since the epoch), the file's mtime where asv wrote none.
    """

    path: Path
    commit: str
    date: float | None
    env_name: str
    python: str
    params: dict
    values: dict
    stamps: dict
    mtime_ms: float

    @property
    def stamp(self):
        """When this file's newest measurement started (ms since the epoch)."""
        return max(self.stamps.values(), default=self.mtime_ms)


def read_result_file(path):
    """Parse one asv result file as :meth:`asv.results.Results.load` does.

    A row of ``results`` holds the columns named by ``result_columns``, trailing
    ``None`` columns dropped; ``result`` is the list of values in the order of
    ``itertools.product(*params)``, or ``None`` when every combination failed.
    """
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        data = json.load(f)  # Python's json reads asv's NaN and Infinity
    if data.get("version") != 2:
        raise ValueError(f"{path}: asv result format version {data.get('version')!r}, expected 2")
    columns = data["result_columns"]
    mtime_ms = path.stat().st_mtime * 1000.0
    values, stamps = {}, {}
    for key, row in data["results"].items():
        row = dict(zip(columns, row))
        params = row.get("params") or []
        combos = [tuple(_decode(p) for p in combo) for combo in itertools.product(*params)]
        result = row.get("result")
        if result is None:
            result = [None] * len(combos)
        values[key] = dict(zip(combos, result))
        started = row.get("started_at")
        stamps[key] = float(started) if _is_number(started) else mtime_ms
    return ResultFile(path=path, commit=str(data["commit_hash"]), date=data.get("date"),
                      env_name=str(data.get("env_name", "")), python=str(data.get("python", "")),
                      params=data.get("params") or {}, values=values, stamps=stamps, mtime_ms=mtime_ms)


def read_benchmarks(results_dir):
    """``benchmarks.json``: ``key -> {"params": [[decoded, ...], ...], "param_names": [...]}``, or None."""
    path = Path(results_dir) / "benchmarks.json"
    if not path.exists():
        return None
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    table = {}
    for key, meta in data.items():
        if key == "version" or not isinstance(meta, dict):
            continue
        table[key] = {"params": [[_decode(v) for v in values] for values in meta.get("params") or []],
                      "param_names": list(meta.get("param_names") or [])}
    return table


def scan(results_dir):
    """``machine -> (machine.json contents, [ResultFile])`` of a results directory;
    unreadable files are reported on stderr and left out."""
    machines = {}
    root = Path(results_dir)
    if not root.is_dir():
        return machines
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        info_path = folder / "machine.json"
        if not info_path.exists():
            continue
        try:
            with open(info_path, encoding="utf-8") as f:
                info = json.load(f)
        except ValueError as exc:
            print(f"warning: skipping {folder}: unreadable machine.json ({exc})", file=sys.stderr)
            continue
        files = []
        for path in sorted(folder.glob("*.json")):
            if path.name == "machine.json":
                continue
            try:
                files.append(read_result_file(path))
            except (ValueError, KeyError, TypeError, OSError) as exc:
                print(f"warning: skipping unreadable result file {path}: {exc}", file=sys.stderr)
        if files:
            machines[folder.name] = (info, files)
    return machines


# --------------------------------------------------------------------------- one run


@dataclass
class Run:
    """The merged results of one commit on one machine."""

    machine: str
    machine_info: dict
    commit: str
    files: list
    values: dict
    sources: dict
    benchmarks: dict | None
    missing: list = field(default_factory=list)
    failed: list = field(default_factory=list)

    @property
    def complete(self):
        return not self.missing and not self.failed

    @property
    def date(self):
        """The commit's date (ms), as asv recorded it."""
        return max((f.date for f in self.files if _is_number(f.date)), default=None)

    @property
    def run_at(self):
        return max(f.stamp for f in self.files)

    def failures(self):
        """``(key, params)`` of every failed (``None``) value in the merged results."""
        return [(key, combo) for key, table in sorted(self.values.items())
                for combo, value in table.items() if value is None]

    def find(self, classes, method):
        """The result key of ``<module>.<Class>.<method>`` for the first of ``classes``
        that has it (the module is not part of the match, so moving a class between
        files does not lose it), or None."""
        for cls in classes:
            for key in sorted(self.values):
                parts = key.split(".")
                if len(parts) >= 2 and parts[-2] == cls and parts[-1] == method:
                    return key
        return None

    def keys_of(self, classes, method):
        """Every result key ``<module>.<Class>.<method>`` with ``Class`` in ``classes``."""
        return [key for key in sorted(self.values)
                if len(key.split(".")) >= 2 and key.split(".")[-2] in classes and key.split(".")[-1] == method]

    def series(self, classes, method, names, optional=()):
        """``{(value of each of names, then of optional): number}``, finite values only,
        over every class of ``classes`` that has ``method`` (e.g. the speed workloads
        of fixed-width and of derived-width maps together).

        The parameters are picked by name from ``benchmarks.json`` (so a reordered or
        extended parameter list still reads right); without it, by position when the
        count matches. A benchmark without one of ``names`` is left out; one without
        an ``optional`` parameter gets None in its place.
        """
        out = {}
        for key in self.keys_of(classes, method):
            table = self.values[key]
            known = (self.benchmarks or {}).get(key, {}).get("param_names")
            arity = len(next(iter(table), ()))
            if not known or len(known) != arity:
                wanted = list(names) + list(optional)
                known = wanted[:arity] if arity in (len(names), len(wanted)) else None
            if known is None or any(n not in known for n in names):
                continue
            index = [known.index(n) if n in known else None for n in list(names) + list(optional)]
            for combo, value in table.items():
                if _is_number(value):
                    out.setdefault(tuple(None if i is None else combo[i] for i in index), float(value))
        return out


def merge(machine, machine_info, files, benchmarks):
    """Merge the result files of one commit: per benchmark and parameters, the value
    whose ``started_at`` is latest wins (a re-run supersedes what it re-measured and
    leaves the rest)."""
    files = sorted(files, key=lambda f: f.stamp)
    values, sources, stamps = {}, {}, {}
    for f in files:
        for key, table in f.values.items():
            for combo, value in table.items():
                if f.stamps[key] >= stamps.get((key, combo), -math.inf):
                    values.setdefault(key, {})[combo] = value
                    sources[(key, combo)] = f.path
                    stamps[(key, combo)] = f.stamps[key]
    run = Run(machine=machine, machine_info=machine_info, commit=files[-1].commit, files=files,
              values=values, sources=sources, benchmarks=benchmarks)
    if benchmarks is not None:
        for key, meta in sorted(benchmarks.items()):
            have = values.get(key, {})
            for combo in itertools.product(*meta["params"]):
                if combo not in have:
                    run.missing.append((key, combo))
                elif have[combo] is None:
                    run.failed.append((key, combo))
    else:
        run.failed = run.failures()
    return run


def describe_combo(key, combo):
    """``bench.Class.method(rff, banana, 256)``."""
    return f"{key}({', '.join(str(v) for v in combo)})" if combo else key


def summarize(entries, benchmarks, limit=6):
    """``(key, params)`` pairs grouped by benchmark: one line per benchmark, naming its
    combinations unless all of them are concerned."""
    grouped = {}
    for key, combo in entries:
        grouped.setdefault(key, []).append(combo)
    lines = []
    for key, combos in grouped.items():
        total = math.prod(len(p) for p in (benchmarks or {}).get(key, {}).get("params", [])) or None
        if total is not None and len(combos) == total:
            lines.append(f"{key}: all {total} parameter combination(s)" if combos != [()] else key)
            continue
        shown = ", ".join("(" + ", ".join(str(v) for v in c) + ")" for c in combos[:limit])
        more = f", ... {len(combos) - limit} more" if len(combos) > limit else ""
        lines.append(f"{key}: {len(combos)}{f' of {total}' if total else ''}: {shown}{more}")
    return lines


def select_run(results_dir, machine=None, commit=None):
    """The run to report and a list of warnings (empty for a complete run).

    Raises ``SystemExit`` with a message when nothing matches.
    """
    machines = scan(results_dir)
    if not machines:
        raise SystemExit(f"no asv results under {results_dir}: run "
                         "`asv run --python=same --quick --set-commit-hash=$(git rev-parse HEAD)` first")
    if machine is None:
        machine = max(machines, key=lambda m: max(f.stamp for f in machines[m][1]))
    elif machine not in machines:
        raise SystemExit(f"no results for machine {machine!r} under {results_dir}; "
                         f"machines: {', '.join(sorted(machines))}")
    info, files = machines[machine]
    benchmarks = read_benchmarks(results_dir)
    by_commit = {}
    for f in files:
        by_commit.setdefault(f.commit, []).append(f)
    # newest first: by commit date, then by when it was measured
    order = sorted(by_commit, key=lambda c: (max((f.date or 0) for f in by_commit[c]),
                                             max(f.stamp for f in by_commit[c])), reverse=True)
    warnings, notes = [], []
    if benchmarks is None:
        warnings.append(f"{Path(results_dir) / 'benchmarks.json'} is missing: completeness can only "
                        "be judged by failed values")
    if commit is not None:
        matches = [c for c in order if c.startswith(commit)]
        if not matches:
            raise SystemExit(f"no results of a commit {commit!r}... on machine {machine!r}; "
                             f"commits: {', '.join(c[:8] for c in order)}")
        if len(matches) > 1:
            raise SystemExit(f"commit prefix {commit!r} is ambiguous: {', '.join(m[:12] for m in matches)}")
        run = merge(machine, info, by_commit[matches[0]], benchmarks)
    else:
        runs = (merge(machine, info, by_commit[c], benchmarks) for c in order)
        run = None
        for candidate in runs:
            if candidate.complete:
                run = candidate
                break
            notes.append(f"skipped the newer incomplete run of {candidate.commit[:8]} "
                         f"({len(candidate.missing)} missing, {len(candidate.failed)} failed)")
        if run is None:
            run = merge(machine, info, by_commit[order[0]], benchmarks)
            notes = []
            warnings.append(f"no complete run on machine {machine!r}: showing the newest, "
                            f"commit {run.commit[:8]}")
    if not run.complete:
        warnings.append(f"PARTIAL RUN: commit {run.commit[:8]} on {machine!r} has "
                        f"{len(run.missing)} missing and {len(run.failed)} failed benchmark values")
    return run, warnings, notes


# --------------------------------------------------------------------------- the registry


class Registry:
    """Peers and ``slower_because`` reasons, read lazily from the benchmark suite and
    ``kernelmaps.ALGORITHMS``; a broken import leaves the report without them (with
    a warning) rather than without a report."""

    #: families outside the registry's ``peers()``: the pipelines the learned maps
    #: replace, the exact learners, the solver and transform peers
    FIXED_PEERS = {"cnm": ["rff+pegasos"], "cnm-kerapp": ["rff+pegasos"],
                   "optimized_circulant": ["rff+pegasos"], "kernel_svc": ["sklearn.SVC"]}
    #: benchmark labels that are not registry names
    ALIASES = {"cnm-kerapp": "cnm", "rff_gl": "group_lasso_mkl_classifier",
               "rff_concat": "rff", "exact_mkl": "exact_mkl_classifier"}

    def __init__(self):
        self._common = self._algorithms = None
        self._loaded = False
        self.warnings = []

    def _load(self):
        if self._loaded:
            return
        self._loaded = True
        if str(_REPO) not in sys.path:
            sys.path.insert(0, str(_REPO))
        try:
            from kernelmaps import ALGORITHMS

            self._algorithms = ALGORITHMS
        except Exception as exc:  # a report must not need a working package
            self.warnings.append(f"kernelmaps could not be imported ({exc}): no peers, no reasons")
        try:
            from benchmarks import common

            self._common = common
        except Exception as exc:
            self.warnings.append(f"benchmarks.common could not be imported ({exc}): peers from the registry")

    def peers(self, label):
        """The peer labels of ``label`` (none for a peer or an unknown label)."""
        if label in self.FIXED_PEERS:
            return list(self.FIXED_PEERS[label])
        self._load()
        try:
            if self._common is not None:
                return list(self._common.peers_of(label))
            cls = (self._algorithms or {}).get(label)
            return sorted(cls.peers()) if cls is not None else []
        except Exception as exc:
            self.warnings.append(f"peers of {label} unknown ({exc})")
            return []

    def reason(self, label):
        """``benchmark["slower_because"]`` of ``label``'s class, or None."""
        self._load()
        cls = (self._algorithms or {}).get(label) or (self._algorithms or {}).get(self.ALIASES.get(label, ""))
        bench = getattr(cls, "benchmark", None) or {}
        reason = bench.get("slower_because") if isinstance(bench, dict) else None
        if not reason:  # families outside the registry's suite state theirs in their module
            try:
                from benchmarks import bench_learned_maps

                reason = bench_learned_maps.SLOWER_BECAUSE.get(label)
            except Exception:
                reason = None
        return str(reason) if reason else None


# --------------------------------------------------------------------------- tables


@dataclass
class Cell:
    text: str
    css: str = ""
    title: str = ""


@dataclass
class Table:
    """A titled table, printed in the terminal and drawn on the page alike."""

    title: str
    columns: list
    align: str
    rows: list = field(default_factory=list)
    row_css: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def add(self, cells, css=""):
        self.rows.append([c if isinstance(c, Cell) else Cell(str(c)) for c in cells])
        self.row_css.append(css)

    def visible(self):
        """``(columns, align, rows)`` without the columns no row has a value in (e.g.
        output memory where the suite does not track it)."""
        keep = [i for i in range(len(self.columns))
                if i == 0 or any(row[i].text not in ("-", "") for row in self.rows)]
        return ([self.columns[i] for i in keep], "".join(self.align[i] for i in keep),
                [[row[i] for i in keep] for row in self.rows])

    def text(self):
        """The table as monospace text, numbers right-aligned, notes below."""
        columns, align, rows = self.visible()
        widths = [max([len(c)] + [len(r[i].text) for r in rows]) for i, c in enumerate(columns)]

        def line(cells):
            return "  ".join((c.ljust(w) if a == "l" else c.rjust(w))
                             for c, w, a in zip(cells, widths, align)).rstrip()

        out = [f"\n== {self.title}", line(columns)]
        out += [line([c.text for c in row]) for row in rows]
        out += [f"   [{i}] {note}" for i, note in enumerate(self.notes, 1)]
        return "\n".join(out)


class Footnotes:
    """Numbered reasons of one table, one per method."""

    def __init__(self, table, registry):
        self.table, self.registry, self.index = table, registry, {}

    def mark(self, label):
        """`` [n]``: the footnote of ``label``'s reason (added once per table)."""
        if label not in self.index:
            reason = self.registry.reason(label) or "no stated reason"
            self.table.notes.append(f"{label}: {reason}")
            self.index[label] = len(self.table.notes)
        return f" [{self.index[label]}]"


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_mib(value):
    """``12.3 MiB``; two decimals below 1 MiB, where one would round small transforms to 0."""
    return "-" if value is None else f"{value:.2f} MiB" if abs(value) < 1 else f"{value:.1f} MiB"


def fmt(value, spec, unit=""):
    return "-" if value is None else format(value, spec) + unit


def short(label):
    """A peer's name without its library prefix: ``sklearn.RBFSampler`` -> ``RBFSampler``."""
    return label.split(".", 1)[1] if label.startswith("sklearn.") else label


def compare(mine, theirs):
    """``(ratio, peer)`` for the fastest of ``theirs`` (``{peer: seconds}``), ratio =
    peer time / our time, or ``(None, None)``."""
    theirs = {p: t for p, t in theirs.items() if t}
    if not mine or not theirs:
        return None, None
    peer = min(theirs, key=theirs.get)
    return theirs[peer] / mine, peer


def ratio_cell(ratio, peer, notes=None, label=None, lower_is_better=False):
    """``1.85× RBFSampler``, green when we win, red with a footnote when we lose."""
    if ratio is None:
        return Cell("", "na")
    win = ratio <= 1.0 if lower_is_better else ratio >= 1.0
    mark = "" if win or notes is None else notes.mark(label)
    return Cell(f"{ratio:.2f}× {short(peer)}{mark}", "win" if win else "lose",
                title="peer time / our time" if not lower_is_better else "")


def order_labels(labels, registry):
    """Methods grouped by the peer they face, each group's peer last."""
    def key(label):
        peers = registry.peers(label)
        group = peers[0] if peers else label
        return (group, label == group, label)

    return sorted(set(labels), key=key)


# --------------------------------------------------------------------------- the report

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

    # -- families

    def feature_maps(self):
        """Per dataset and width: fit, transform, ratio to the peer, memory, errors."""
        names = ["algorithm", "dataset", "n_components"]
        fit = self.run.series(FEATURE, "time_fit", names)
        transform = self.run.series(FEATURE, "time_transform", names)
        kerr = self.run.series(FEATURE, "track_kernel_error", names)
        terr = self.run.series(FEATURE, "track_test_error", names)
        memory = self.run.series(FEATURE, "track_transform_memory", names)
        output = self.run.series(FEATURE, "track_output_memory", names)
        keys = set(fit) | set(transform) | set(kerr) | set(terr)
        if not keys:
            return []
        labels = {k[0] for k in keys}
        for label in labels:
            self._peer_of(label, labels)
        ordered = order_labels(labels, self.registry)
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        datasets = sorted({k[1] for k in keys}, key=lambda d: (_dataset_rank(d), str(d)))
        widths = sorted({k[2] for k in keys}, key=_num)
        per_dataset = []
        for dataset in datasets:
            tables = []
            for width in widths:
                table = Table(f"{dataset}, D = {width}",
                              ["algorithm", "fit", "transform", "vs peer (transform)", "memory", "output",
                               "kernel err", "test err"], "lrrlrrrr")
                notes = Footnotes(table, self.registry)
                previous = None
                for label in ordered:
                    k = (label, dataset, width)
                    if k not in keys:
                        continue
                    peers = self._peer_of(label, labels)
                    ratio, peer = compare(transform.get(k), {p: transform.get((p, dataset, width)) for p in peers})
                    group = self._group(label)
                    table.add([label, fmt_time(fit.get(k)), fmt_time(transform.get(k)),
                               ratio_cell(ratio, peer, notes, label),
                               fmt_mib(memory.get(k)), fmt_mib(output.get(k)),
                               fmt(kerr.get(k), ".4f"), fmt(terr.get(k), ".4f")],
                              self._row_css(label, previous, group))
                    previous = group
                if table.rows:
                    tables.append(table)
            series = {metric: {label: [(k[2], table[k]) for k in table if k[0] == label and k[1] == dataset]
                               for label in ordered}
                      for metric, table in (("kernel", kerr), ("test", terr), ("time", transform))}
            per_dataset.append((dataset, tables, series, widths))
        self.tables += [t for _, tables, _, _ in per_dataset for t in tables]
        return per_dataset

    def derived(self):
        names = ["algorithm", "dataset"]
        fit = self.run.series(DERIVED, "time_fit", names)
        transform = self.run.series(DERIVED, "time_transform", names)
        kerr = self.run.series(DERIVED, "track_kernel_error", names)
        terr = self.run.series(DERIVED, "track_test_error", names)
        memory = self.run.series(DERIVED, "track_transform_memory", names)
        output = self.run.series(DERIVED, "track_output_memory", names)
        keys = set(fit) | set(transform) | set(kerr) | set(terr)
        if not keys:
            return None
        labels = {k[0] for k in keys}
        for label in labels:
            self._peer_of(label, labels)
        ordered = order_labels(labels, self.registry)
        table = Table("maps whose width the data sets (non-negative data, benchmark parameters)",
                      ["algorithm", "dataset", "fit", "transform", "vs peer (transform)", "memory", "output",
                       "kernel err", "test err"], "llrrlrrrr")
        notes = Footnotes(table, self.registry)
        previous = None
        for dataset in sorted({k[1] for k in keys}, key=lambda d: (_dataset_rank(d), str(d))):
            for label in ordered:
                k = (label, dataset)
                if k not in keys:
                    continue
                peers = self._peer_of(label, labels)
                ratio, peer = compare(transform.get(k), {p: transform.get((p, dataset)) for p in peers})
                table.add([label, dataset, fmt_time(fit.get(k)), fmt_time(transform.get(k)),
                           ratio_cell(ratio, peer, notes, label), fmt_mib(memory.get(k)),
                           fmt_mib(output.get(k)), fmt(kerr.get(k), ".4f"), fmt(terr.get(k), ".4f")],
                          self._row_css(label, previous, dataset))
                previous = dataset
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        self.tables.append(table)
        return table

    def baselines(self):
        names = ["algorithm", "dataset"]
        fit = self.run.series(BASELINES, "time_fit", names)
        err = self.run.series(BASELINES, "track_test_error", names)
        keys = set(fit) | set(err)
        if not keys:
            return None
        labels = {k[0] for k in keys}
        for label in labels:
            self._peer_of(label, labels)
        ordered = order_labels(labels, self.registry)
        table = Table("exact kernel machines (the papers' RBF row), same gamma",
                      ["algorithm", "dataset", "fit", "vs peer (fit)", "test err"], "llrlr")
        notes = Footnotes(table, self.registry)
        previous = None
        for dataset in sorted({k[1] for k in keys}, key=lambda d: (_dataset_rank(d), str(d))):
            for label in ordered:
                k = (label, dataset)
                if k not in keys:
                    continue
                peers = self._peer_of(label, labels)
                ratio, peer = compare(fit.get(k), {p: fit.get((p, dataset)) for p in peers})
                table.add([label, dataset, fmt_time(fit.get(k)), ratio_cell(ratio, peer, notes, label),
                           fmt(err.get(k), ".4f")], self._row_css(label, previous, dataset))
                previous = dataset
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
        labels = {k[0] for k in keys}
        for label in labels:
            self._peer_of(label, labels)
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
        names = ["algorithm", "dataset", "n_components"]
        fit = self.run.series(LEARNED, "time_fit", names)
        err = self.run.series(LEARNED, "track_test_error", names)
        keys = set(fit) | set(err)
        if not keys:
            return [], {}
        labels = {k[0] for k in keys}
        for label in labels:
            self._peer_of(label, labels)
        ordered = sorted(labels, key=lambda label: (label in self.peer_labels, label))
        self._note_labels([label for label in ordered if label not in self.peer_labels])
        tables, series = [], {}
        for dataset in sorted({k[1] for k in keys}, key=lambda d: (_dataset_rank(d), str(d))):
            table = Table(f"learned maps on {dataset} (vs rff+pegasos at the same k)",
                          ["algorithm", "k", "fit", "vs peer (fit)", "test err", "Δ err vs peer"], "lrrlrr")
            notes = Footnotes(table, self.registry)
            previous = None
            for width in sorted({k[2] for k in keys if k[1] == dataset}, key=_num):
                for label in ordered:
                    k = (label, dataset, width)
                    if k not in keys:
                        continue
                    peers = self._peer_of(label, labels)
                    ratio, peer = compare(fit.get(k), {p: fit.get((p, dataset, width)) for p in peers})
                    theirs = err.get((peer or (peers[0] if peers else None), dataset, width))
                    delta = None if err.get(k) is None or theirs is None else err[k] - theirs
                    delta_cell = Cell("") if delta is None else Cell(
                        f"{delta:+.4f}", "win" if delta < 0 else "lose" if delta > 0 else "")
                    table.add([label, str(width), fmt_time(fit.get(k)), ratio_cell(ratio, peer, notes, label),
                               fmt(err.get(k), ".4f"), delta_cell], self._row_css(label, previous, width))
                    previous = width
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


def _num(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.inf


def _dataset_rank(name):
    order = ["banana", "magic04", "letter", "pendigits"]
    return order.index(name) if name in order else len(order)


def _when(ms):
    if not _is_number(ms):
        return "unknown"
    return datetime.datetime.fromtimestamp(ms / 1000.0, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# --------------------------------------------------------------------------- the page


def build_page(run, report, parts, warnings, notes=()):
    """The HTML document of the report (``parts``: what :func:`collect` gathered;
    ``notes``: the newer incomplete runs passed over)."""
    from benchmarks import report_html as H

    styles = H.styles_for(report.our_labels, sorted(report.peer_labels))
    figures = H.have_matplotlib()
    env = parts["environment"]
    info = run.machine_info
    cores = info.get("num_cpu", "?")
    ram = info.get("ram")
    ram_text = f"{int(ram) / 2**30:.0f} GiB" if str(ram or "").isdigit() else (ram or "?")
    target = env.get("numba_target")
    simd = env.get("simd")
    bits = env.get("vector_bits")
    if target:
        # "AVX-512, 256-bit loops" names its loop width already
        detail = ", ".join(x for x in (simd, f"{bits}-bit vectors" if bits and "-bit" not in (simd or "") else "")
                           if x)
        target_text = f"{target} ({detail})" if detail else target
    else:
        target_text = "unknown (no bench_machine.Environment result)"
    meta = [
        ("commit", f"{run.commit[:12]}"),
        ("commit date", _when(run.date)),
        ("measured", _when(run.run_at)),
        ("machine", run.machine),
        ("CPU", info.get("cpu") or "unknown"),
        ("cores · RAM", f"{cores} · {ram_text}"),
        ("Numba target", target_text),
        ("profile", env.get("profile") or "unknown"),
        ("OS · arch", f"{info.get('os', '?')} · {info.get('arch', '?')}"),
        ("environment", ", ".join(sorted({f.env_name for f in run.files}))),
    ]
    meta_html = "".join(f"<div><dt>{H.esc(k)}</dt><dd>{H.esc(v)}</dd></div>" for k, v in meta)
    failures = run.failures()
    header = (f'<header class="top"><div class="inner"><h1>kernelmaps benchmarks</h1>'
              f'<div class="sub">asv results of commit <code>{H.esc(run.commit)}</code> on '
              f'<b>{H.esc(run.machine)}</b> · {len(run.files)} result file(s) merged · '
              f'{len(failures)} failed value(s)</div><dl class="meta">{meta_html}</dl></div></header>')
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
    toc, sections = [], []

    def section(title, lead, blocks):
        blocks = [b for b in blocks if b]
        if not blocks:
            return
        anchor = H.slug(title)
        toc.append(f'<a href="#{anchor}">{H.esc(title)}</a>')
        lead_html = f'<p class="lead">{lead}</p>' if lead else ""
        sections.append(f'<section class="card" id="{anchor}"><h2>{H.esc(title)}</h2>{lead_html}'
                        + "".join(blocks) + "</section>")

    def fig(svg, caption="", narrow=False):
        if not svg:
            return ""
        cap = f"<figcaption>{caption}</figcaption>" if caption else ""
        return f'<figure class="{"narrow" if narrow else ""}">{svg}{cap}</figure>'

    legend_order = report.our_labels + sorted(report.peer_labels)
    for dataset, tables, series, widths in parts["feature_maps"]:
        svg = ""
        if figures:
            ticks = [_num(w) for w in widths if _is_number(_num(w))]
            svg = H.line_panels([
                {"title": "kernel error", "xlabel": "D (features)", "ylabel": "relative Frobenius error",
                 "logx": True, "logy": True, "series": series["kernel"], "xticks": ticks},
                {"title": "test error", "xlabel": "D (features)", "ylabel": "test error (least squares)",
                 "logx": True, "series": series["test"], "xticks": ticks},
                {"title": "transform time", "xlabel": "D (features)", "ylabel": "transform of the test rows",
                 "logx": True, "logy": True, "seconds": True, "series": series["time"], "xticks": ticks},
            ], styles, legend_order)
        section(f"Feature maps · {dataset}",
                "Every map and every peer at the same widths, same data, same gamma. Peers are the dashed "
                "black and grey lines with hollow markers. Lower is better everywhere.",
                [fig(svg)] + [H.table_html(t) for t in tables])
    if parts["derived"] is not None:
        section("Derived-width maps", "Maps whose width the data sets, beside their peers.",
                [H.table_html(parts["derived"])])
    if parts["baselines"] is not None:
        section("Exact baselines", "Exact kernel machines beside scikit-learn's, at the suite's gamma.",
                [H.table_html(parts["baselines"])])
    speed_table, speed_bars = parts["speed"]
    if speed_table is not None:
        svg = H.ratio_bars(speed_bars, "peer time / our time (log scale; right of 1× we are faster)",
                           styles=styles) if figures else ""
        section("Speed workload", "Every map and peer on its family's data (64 features), float64 and "
                "float32, each map at its speed width (D = 4096 unless its registry entry sets another) and "
                "its peer at the same width. Green: faster than the peer; red: slower, with the reason the "
                "registry states.", [fig(svg), H.table_html(speed_table)])
    rm_table, rm_bars = parts["maclaurin"]
    fw_table, fw_bars = parts["fwht"]
    blocks = []
    if rm_table is not None:
        svg = H.ratio_bars(rm_bars, "transform time / GEMM time (1× = the projections alone)",
                           lower_is_better=True, width=6.2) if figures else ""
        blocks.append(f"<div><h3>Random Maclaurin against GEMM</h3>{fig(svg, narrow=True)}"
                      f"{H.table_html(rm_table)}</div>")
    if fw_table is not None:
        svg = H.ratio_bars(fw_bars, "FFHT time / our time", width=6.2) if figures else ""
        blocks.append(f"<div><h3>FWHT against FFHT</h3>{fig(svg, narrow=True)}{H.table_html(fw_table)}</div>")
    if blocks:
        section("Kernels against their floors", "", ['<div class="grid2">' + "".join(blocks) + "</div>"])
    learned_tables, learned_series = parts["learned"]
    if learned_tables:
        svg = ""
        if figures:
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
            svg = H.line_panels(panels, styles, learned_order, ncols=max(1, len(datasets)),
                                panel_size=(3.3, 2.7))
        section("Learned maps", "Compact nonlinear maps and the optimized circulant map against the "
                "RFF + Pegasos pipeline they replace (dashed), at small k.",
                [fig(svg)] + [H.table_html(t) for t in learned_tables])
    mkl = parts["mkl"]
    if mkl:
        svg = ""
        if figures and mkl.get("scaling_series"):
            series = mkl["scaling_series"]
            ticks = sorted({x for pts in series.values() for x, _ in pts})
            mkl_styles = dict(styles)
            mkl_styles.setdefault("rff_gl", {"color": H.OURS_COLORS[0], "marker": "o", "linestyle": "-",
                                             "linewidth": 2})
            mkl_styles.setdefault("exact_mkl", {"color": "#000000", "marker": "s", "linestyle": (0, (5, 2.5)),
                                                "linewidth": 2, "markerfacecolor": "white"})
            svg = H.line_panels([{"title": "fit time over N", "xlabel": "N (rows)", "ylabel": "fit time",
                                  "logx": True, "logy": True, "seconds": True, "series": series, "xticks": ticks}],
                                mkl_styles, ["rff_gl", "exact_mkl"], panel_size=(5.5, 3.3))
        scaling = H.table_html(mkl["scaling"]) if "scaling" in mkl else ""
        top = (f'<div class="grid2"><div>{fig(svg, narrow=True)}</div><div>{scaling}</div></div>'
               if svg else scaling)
        section("Multiple kernel learning", "RFF group lasso (rff_gl) against exact MKL and the equal-weight "
                "concatenation of the views' features; our FISTA solver against skglm.",
                [top] + [H.table_html(mkl[k]) for k in ("mfeat", "solver") if k in mkl])
    if parts.get("dask"):
        section("Scaling out (Dask)", "RFF + least squares fitted in one pass over the same rows, in memory and "
                "on a local Dask cluster of 2 single-threaded worker processes (the rows persisted on the workers).",
                [H.table_html(parts["dask"]["table"])])
    if failures:
        section("Failed benchmarks", f"{len(failures)} value(s) are null in the results: the benchmark raised "
                "or timed out (asv run exits 0 all the same).",
                ["<ul>" + "".join(f"<li><code>{H.esc(describe_combo(k, c))}</code></li>" for k, c in failures)
                 + "</ul>"])
    nav = f'<nav class="toc">{"".join(toc)}</nav>' if toc else ""
    if not sections:
        sections.append('<section class="card"><h2>No known benchmarks</h2><p class="lead">The run has '
                        "none of the benchmarks this report knows.</p></section>")
    footer = ("Generated by <code>benchmarks/report.py</code> from "
              + ", ".join(f"<code>{H.esc(f.path.name)}</code>" for f in run.files) + ".")
    title = f"kernelmaps benchmarks · {run.commit[:8]} · {run.machine}"
    return H.page(title, header, "".join(body) + nav + "".join(sections), footer)


def collect(report):
    """Every family's tables and chart data, in the order printed."""
    return {
        "environment": report.environment(),
        "feature_maps": report.feature_maps(),
        "derived": report.derived(),
        "baselines": report.baselines(),
        "speed": report.speed(),
        "maclaurin": report.maclaurin(),
        "fwht": report.fwht(),
        "learned": report.learned(),
        "mkl": report.mkl(),
        "dask": report.dask(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=".asv/results", help="asv's results directory")
    parser.add_argument("--machine", help="machine name (default: the one measured last)")
    parser.add_argument("--commit", help="commit hash or prefix (default: the newest complete run)")
    parser.add_argument("--html", help="where to write the page (default: report.html beside the results)")
    args = parser.parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # "×" and "µ" on a non-UTF-8 terminal
    if str(_REPO) not in sys.path:
        sys.path.insert(0, str(_REPO))

    run, warnings, notes = select_run(args.results, args.machine, args.commit)
    registry = Registry()
    report = Report(run, registry)
    parts = collect(report)
    env = parts["environment"]

    print(f"machine {run.machine} ({run.machine_info.get('cpu', 'unknown CPU')}, "
          f"{run.machine_info.get('num_cpu', '?')} cores), commit {run.commit[:12]} "
          f"(committed {_when(run.date)}, measured {_when(run.run_at)})")
    if env:
        print(f"Numba target {env.get('numba_target', '?')} ({env.get('simd', '?')}), "
              f"profile {env.get('profile', '?')}")
    print(f"merged {len(run.files)} result file(s):")
    for f in run.files:
        print(f"  {f.path}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    for table in report.tables:
        print(table.text())

    failures = run.failures()
    print(f"\n{len(failures)} failed benchmark value(s) (asv run exits 0 even so):" if failures
          else "\nEvery benchmark value was measured or deliberately skipped.")
    for key, combo in failures:
        print(f"  FAILED {describe_combo(key, combo)}")
    for w in registry.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if warnings:
        bar = "!" * 78
        print(bar, file=sys.stderr)
        for w in warnings:
            print(f"WARNING: {w}", file=sys.stderr)
        for line in summarize(run.missing, run.benchmarks):
            print(f"  missing  {line}", file=sys.stderr)
        for line in summarize(run.failed, run.benchmarks):
            print(f"  failed   {line}", file=sys.stderr)
        print(bar, file=sys.stderr)

    html_path = Path(args.html) if args.html else Path(args.results).resolve().parent / "report.html"
    html_path.parent.mkdir(parents=True, exist_ok=True)
    text = build_page(run, report, parts, warnings, notes)
    tmp = html_path.with_name(html_path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, html_path)
    print(f"\nHTML report: {html_path}")
    return run


if __name__ == "__main__":
    main()
