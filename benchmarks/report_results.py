"""Reading asv's results without asv, and choosing the run the report shows.

:func:`select_run` picks the run (see :mod:`benchmarks.report` for the rules):
it scans a results directory (:func:`scan`, :func:`read_result_file`,
:func:`read_benchmarks`) and merges the files of one commit into a :class:`Run`
(:func:`merge`), which knows what is missing or failed.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

import ast
import itertools
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path


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
