"""The report's history: each map's speed-up over its peer across commits, one line per machine.

Every asv results folder (a machine: a host, or a host with a forced Numba
target such as ``vm-haswell``) contributes one line per map: at each measured
commit, the geometric mean over dtypes of the peer's time over ours in the
speed workload (``bench_feature_maps.TransformSpeed.time_transform``, the
same rows, width and dtype for both). Regressions that
``python -m benchmarks.compare`` found (its logs in ``.asv/compare/``) are marked
on the line of the commit it tested.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

import json
import math
from pathlib import Path

from benchmarks.report_results import _is_number, scan

SPEED_KEY = "bench_feature_maps.TransformSpeed.time_transform"


def _machine_label(name, info, files):
    target = ""
    for f in files:
        for key, values in f.values.items():
            if key.startswith("bench_machine.Environment."):
                target = next((str(combo[0]) for combo in values), target)
    cpu = info.get("cpu") or "unknown CPU"
    return f"{name}: {cpu}" + (f", {target}" if target else "")


def speedups(results_dir, pairs):
    """``{map: {machine label: [(commit date ms, commit, speed-up), ...]}}`` in commit order.

    ``pairs`` maps each of our labels to its peer's label.
    """
    lines = {}
    for machine, (info, files) in scan(results_dir).items():
        label = _machine_label(machine, info, files)
        by_commit = {}
        for f in files:
            by_commit.setdefault(f.commit, []).append(f)
        for commit, group in by_commit.items():
            values = {}
            for f in group:
                values.update(f.values.get(SPEED_KEY, {}))
            date = max((f.date or f.stamp) for f in group)
            for ours, peer in pairs.items():
                ratios = [values[(peer,) + rest] / values[(ours,) + rest]
                          for (name, *tail) in values if name == ours
                          for rest in [tuple(tail)]
                          if _is_number(values.get((ours,) + rest)) and _is_number(values.get((peer,) + rest))
                          and values[(ours,) + rest] > 0]
                if ratios:
                    speedup = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
                    lines.setdefault(ours, {}).setdefault(label, []).append((date, commit, speedup))
    for machines in lines.values():
        for points in machines.values():
            points.sort()
    return lines


def flagged(compare_dir):
    """``{(commit, map label)}`` that a logged compare found slower (any benchmark naming the map)."""
    marks = set()
    for path in sorted(Path(compare_dir).glob("*.json")) if Path(compare_dir).is_dir() else []:
        try:
            log = json.loads(path.read_text())
        except ValueError:
            continue
        for key in log.get("slower", []):
            label = key.split("(", 1)[1].split(",")[0].strip("')\"") if "(" in key else ""
            marks.add((log.get("head", ""), label))
    return marks


def figure(lines, marks):
    """The history as one inline SVG (one panel per map), or '' when there is nothing to draw."""
    from benchmarks import report_html as H

    if not lines or not H.have_matplotlib():
        return ""
    plt = H._pyplot()
    names = sorted(lines)
    ncols = min(3, len(names))
    nrows = -(-len(names) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.3 * ncols, 3.0 * nrows), squeeze=False)
    for ax, name in zip(axes.ravel(), names):
        for machine, points in sorted(lines[name].items()):
            xs = list(range(len(points)))
            ax.plot(xs, [p[2] for p in points], "o-", ms=3, label=machine)
            hits = [(x, p[2]) for x, p in zip(xs, points) if any(p[1].startswith(c) or c.startswith(p[1])
                                                                  for c, label in marks if label == name and c)]
            if hits:
                ax.plot(*zip(*hits), "x", color="red", ms=9, mew=2, label="compare: slower")
        ax.axhline(1.0, color="k", lw=0.8, ls=":")
        ax.set(title=name, xlabel="commit (oldest to newest)", ylabel="peer time / ours")
        ax.legend(fontsize=6)
    for ax in axes.ravel()[len(names):]:
        ax.axis("off")
    return H.svg_of(fig)
