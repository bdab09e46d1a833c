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

Where the parts live
    :mod:`benchmarks.report_results` reads the results and chooses the run;
    :mod:`benchmarks.report_registry` gives each method's peers and reasons;
    :mod:`benchmarks.report_cells` holds what tables are made of, and
    :mod:`benchmarks.report_tables` builds each family's tables and chart data;
    :mod:`benchmarks.report_page` lays out the page from the pieces in
    :mod:`benchmarks.report_html`. This module is the command.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

import argparse
import os
import sys
from pathlib import Path

if not __package__:
    # run as a script (``python benchmarks/report.py``, as benchmarks/run.py does):
    # its parts are imported through the ``benchmarks`` package
    _ROOT = str(Path(__file__).resolve().parent.parent)
    if _ROOT not in sys.path:
        sys.path.insert(0, _ROOT)

from benchmarks.report_cells import (Cell, Footnotes, Table, _when, compare, fmt, fmt_mib,  # noqa: E402
                                     fmt_time, order_labels, ratio_cell, short)
from benchmarks.report_page import build_page  # noqa: E402
from benchmarks.report_registry import _REPO, Registry  # noqa: E402
from benchmarks.report_results import (ResultFile, Run, _decode, describe_combo, merge,  # noqa: E402
                                       read_benchmarks, read_result_file, scan, select_run, summarize)
from benchmarks.report_tables import (BASELINES, DASK, DERIVED, ENVIRONMENT, FEATURE, FWHT,  # noqa: E402
                                      LEARNED, MACLAURIN, MKL, SCALING, SOLVER, SPEED, Report)

# The entry point re-exports its parts' names, so that one import reaches all of them
# (``_decode`` too, which the tests hold against asv's own reader).
__all__ = ["BASELINES", "DASK", "DERIVED", "ENVIRONMENT", "FEATURE", "FWHT", "LEARNED", "MACLAURIN", "MKL",
           "SCALING", "SOLVER", "SPEED", "Cell", "Footnotes", "Registry", "Report", "ResultFile", "Run", "Table",
           "_decode", "build_page", "collect", "compare", "describe_combo", "fmt", "fmt_mib", "fmt_time", "main",
           "merge", "order_labels", "ratio_cell", "read_benchmarks", "read_result_file", "scan", "select_run",
           "short", "summarize"]


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
    """Print the report of the chosen run and write its page; returns the run."""
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
    if failures:
        print(f"\n{len(failures)} failed benchmark value(s) (asv run exits 0 even so):")
    elif run.complete:
        print("\nEvery benchmark value was measured or deliberately skipped.")
    else:  # a run of selected benchmarks (--bench) or one cut short: say what it lacks
        print(f"\nNo benchmark value failed; {len(run.missing)} of this commit's values were not run "
              "(a partial run, e.g. --bench).")
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
