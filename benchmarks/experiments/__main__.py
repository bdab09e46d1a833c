"""Paper claims in one runner.

Usage (from the root of a clone)::

    python -m benchmarks.experiments list
    python -m benchmarks.experiments run NAME [NAME ...] [--quick] [--out DIR | --record]
    python -m benchmarks.experiments all [--quick] [--out DIR | --record]
    python -m benchmarks.experiments table [--write] [--out DIR]
    python -m benchmarks.experiments rerender [--out DIR]

``run`` and ``all`` write ``DIR/NAME/{NAME.csv, NAME.png, verdict.md, result.json}``
and print each verdict. ``DIR`` is ``.asv/experiments`` by default, which git
ignores, so trying an experiment leaves the checkout clean; ``--record`` writes
into ``benchmarks/experiments/results`` instead, the tracked results the README's
table is built from. ``--quick`` runs each experiment at reduced sizes (its
declared quick settings); without it, the paper's sizes. ``list`` names each
experiment's recorded run time. ``table`` prints the "Measured" table built from the
``result.json`` files; ``--write`` puts it into docs/measured.md, and the rows of the
headline experiments into README.md, between their markers. ``rerender`` rewrites
each ``verdict.md`` and the size entries of its ``result.json`` from that
``result.json`` and the experiment's declared sizes, without running anything.
Every verdict shows its mode and size: "holds (full)", "holds (quick: 300 rows)",
or "holds at 20 000 rows (quick); claim at 10⁶ rows not tested" for a run below a
size its claim names.
Experiments marked "timed" measure speed: run them on an otherwise idle machine.
"""

import argparse
import sys
import time
from pathlib import Path


def _recorded_times(folder):
    """``{name: 'quick 12 s; full 2.1 min (haswell: full 2.3 min)'}`` from the recorded results.

    A results folder keeps the last recorded mode of each experiment and target, so
    the mode not recorded there is named as such.
    """
    import json
    from pathlib import Path

    def duration(seconds):
        return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"

    found = {}
    for path in sorted(Path(folder).glob("*/result.json")):
        result = json.loads(path.read_text())
        target = result.get("target", "host")
        found.setdefault(result["name"], {})[target] = (result["mode"], result["seconds"])
    times = {}
    for name, by_target in found.items():
        parts = []
        for target, (mode, seconds) in sorted(by_target.items(), key=lambda kv: kv[0] != "host"):
            other = "full" if mode == "quick" else "quick"
            text = f"{mode} {duration(seconds)} ({other} not recorded)"
            parts.append(text if target == "host" else f"{target} target: {text}")
        times[name] = "; ".join(parts)
    return times


def _folder_problem(path, must_exist):
    """Why ``path`` cannot serve as a folder (None if it can): a file, under a file, or
    (with ``must_exist``) missing."""
    from pathlib import Path

    path = Path(path)
    if path.exists():
        return None if path.is_dir() else f"{path} is a file, not a folder"
    if must_exist:
        return f"{path} does not exist"
    parent = next(p for p in path.parents if p.exists())
    return None if parent.is_dir() else f"{path} cannot be created: {parent} is a file"


def main(argv=None):
    from benchmarks.experiments import _framework as fw
    from benchmarks.experiments._sizes import shown_status

    parser = argparse.ArgumentParser(prog="python -m benchmarks.experiments",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    sub.add_parser("list", help="the experiments, their claims and sources")
    run = sub.add_parser("run", help="run the named experiments")
    run.add_argument("names", nargs="+")
    every = sub.add_parser("all", help="run every experiment")
    for p in (run, every):
        p.add_argument("--quick", action="store_true", help="reduced sizes (the declared quick settings)")
        where = p.add_mutually_exclusive_group()
        where.add_argument("--out", default=str(fw.DEFAULT_OUTPUT),
                           help="output folder (default: %(default)s, untracked)")
        where.add_argument("--record", action="store_true",
                           help=f"write into the tracked results, {fw.RECORDED}, that the README's table is built from")
    table = sub.add_parser("table", help="the Measured table from the results")
    table.add_argument("--write", action="store_true",
                       help="write it into docs/measured.md, and its headline rows into README.md")
    table.add_argument("--out", default=str(fw.RECORDED), help="results folder (default: %(default)s)")
    rerender = sub.add_parser("rerender", help="rewrite each verdict.md and its size entries from result.json")
    rerender.add_argument("--out", default=str(fw.RECORDED), help="results folder (default: %(default)s)")
    args = parser.parse_args(argv)

    experiments = fw.registry()
    if args.verb == "list":
        recorded = _recorded_times(fw.RECORDED)
        for name, spec in experiments.items():
            print(f"{name}{' (timed)' if spec.timed else ''}\n    {spec.paper}, {spec.source}: {spec.claim}\n"
                  f"    paper: {spec.paper_value}\n    recorded run time: {recorded.get(name, 'none recorded')}")
        return 0
    if getattr(args, "record", False):
        args.out = str(fw.RECORDED)
    problem = _folder_problem(args.out, must_exist=args.verb in ("table", "rerender"))
    if problem:  # before any experiment runs, so that a bad path costs nothing
        parser.error(f"--out: {problem}")
    if args.verb == "rerender":
        try:
            folders = fw.rerender(args.out, experiments)
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
        print(f"{len(folders)} verdict(s) rewritten in {args.out}", file=sys.stderr)
        return 0
    if args.verb == "table":
        from benchmarks.experiments import measured

        try:
            if args.write:
                measured.write_all(args.out)
            else:
                print(measured.table(args.out))
        except (OSError, ValueError) as exc:
            parser.error(str(exc))
        if args.write:
            print("docs/measured.md (every figure) and README.md (the headline experiments) updated",
                  file=sys.stderr)
        return 0
    names = list(experiments) if args.verb == "all" else args.names
    unknown = [n for n in names if n not in experiments]
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; `list` shows the {len(experiments)} there are")
    from tqdm.auto import tqdm

    started = time.perf_counter()
    verdicts, skipped, failed = [], [], []
    for name in tqdm(names, desc="experiments", unit="exp", disable=len(names) < 2, dynamic_ncols=True):
        try:
            result = fw.execute(experiments[name], args.quick, args.out)
        except fw.MissingRequirement as exc:
            if args.verb == "run":
                raise SystemExit(str(exc)) from None
            skipped.append((name, str(exc)))
            tqdm.write(f"{name}: not run: {exc}")
            continue
        except Exception as exc:  # one broken experiment must not hide the others' verdicts
            import traceback

            failed.append((name, f"{type(exc).__name__}: {exc}"))
            tqdm.write(f"{name}: FAILED\n{traceback.format_exc()}")
            parts = Path(args.out) / f"{fw.result_folder(name)}.parts.jsonl"
            if parts.exists():
                tqdm.write(f"{name}: what its finished parts measured is in {parts}")
            continue
        verdicts.append(result)
        tqdm.write(f"{name}: {shown_status(result)} ({result['seconds']:.0f} s): {result['ours']}")
    print(f"\n{len(verdicts)} experiment(s) in {time.perf_counter() - started:.0f} s "
          f"({'quick' if args.quick else 'full'}); outputs in {args.out}")
    for result in verdicts:
        print(f"  {result['name']}: {shown_status(result)} ({result['paper']}, {result['source']})")
    for name, why in skipped:
        print(f"  {name}: not run: {why}")
    for name, why in failed:
        print(f"  {name}: FAILED: {why}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
