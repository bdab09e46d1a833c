"""The README's size guide table, generated from the recorded ``size-guide`` result.

``python -m benchmarks.experiments table --write`` replaces the block between
:data:`BEGIN` and :data:`END` in the README with :func:`table` (through
:func:`benchmarks.experiments.measured.write_all`); ``tests/test_experiments.py``
checks that the README's block is the one the recorded result gives.
"""

import csv
import json
from pathlib import Path

from benchmarks.experiments.size_guide import GUIDE

BEGIN = "<!-- size-guide:begin -->"
END = "<!-- size-guide:end -->"
NAME = "size-guide"
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def power(n):
    """``100000`` as ``10⁵``, ``20000`` as ``2·10⁴``, ``2500`` as ``2.5·10³``."""
    exponent = len(str(int(n))) - 1
    mantissa = n / 10**exponent
    head = "" if mantissa == 1 else f"{mantissa:g}·"
    return f"{head}10{str(exponent).translate(_SUPERSCRIPTS)}"


def _duration(seconds):
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _memory(gib):
    return f"{gib:.1f} GiB" if gib >= 1 else f"{gib * 1024:.0f} MiB"


def cell(result):
    """A fit as ``time · score · memory`` and the passes it made, or its refusal."""
    if result["status"] == "refused":
        return f"refused before any work: needs {result['needs']}"
    parts = [_duration(float(result["fit_seconds"])), f"{result['metric']} {float(result['score']):.3f}"]
    if result.get("worker_peak_gib"):
        parts.append(f"{_memory(float(result['worker_peak_gib']))} a worker, {_memory(float(result['peak_gib']))} "
                     "the client")
    else:
        parts.append(_memory(float(result["peak_gib"])))
    if result.get("newton_steps"):
        parts.append(f"{result['newton_steps']} Newton steps, {result['cg_iterations']} CG iterations: "
                     f"{result['passes']} passes")
    elif result.get("passes"):
        parts.append(f"{result['passes']} passes")
    if result.get("converged") == "False":
        parts.append("stopped at max_iter")
    return " · ".join(parts)


def recorded(folder):
    """``(result.json dict, {guide row: {n: CSV row}})`` of the recorded run in ``folder``."""
    where = Path(folder) / NAME
    result = json.loads((where / "result.json").read_text())
    by_row = {}
    with open(where / result["csv"], newline="") as f:
        for row in csv.DictReader(f):
            by_row.setdefault(row["guide_row"], {})[int(row["n"])] = row
    return result, by_row


def table(folder):
    """The Markdown block: how it was measured, then one row of the guide per learner."""
    result, by_row = recorded(folder)
    s = result["settings"]
    small, large = s["sizes"]
    lines = [f"Measured by `{result['command']}` on {result['date']}:", f"{result['machine_line']}.",
             f"d = {s['d']} synthetic rows (a smooth regression target, or a nonlinear two-class rule), float32, "
             "one fit each.", "A cell gives the fit time · the test score (R² or accuracy) · the peak memory beyond "
             "the data."]
    if result["mode"] == "quick":
        lines += [f"**Quick run**: {power(small)} and {power(large)} rows stand in for 10⁵ and 10⁶, with fewer "
                  "random features and centres;", "`python -m benchmarks.experiments run size-guide` measures the "
                  "real sizes."]
    lines += ["", f"| rows | learner | n = {power(small)} | n = {power(large)} | memory besides the data |",
              "|---|---|---|---|---|"]
    for row in GUIDE:
        fits = by_row.get(row.key, {})
        rows = row.rows
        if row.key == "exact" and s["exact_rows"] in fits:
            rows += f" (at {power(s['exact_rows'])}: {cell(fits[s['exact_rows']])})"
        cells = [cell(fits[n]) if n in fits else "not measured" for n in (small, large)]
        lines.append(f"| {rows} | {row.learner.format(**s)} | {cells[0]} | {cells[1]} | {row.memory} |")
    return "\n".join(lines) + "\n"
