"""The README's main command: the asv suite on the working tree, with progress, then the report.

Usage (from the root of a clone, in the environment the README's first command
makes)::

    python -m benchmarks.run [--profile quick|full] [--bench REGEX] [--no-report]

1. Records this machine for asv (``asv machine --yes``) under a name that
   carries the Numba target when ``NUMBA_CPU_NAME`` is set (``vm-haswell``), so
   that AVX2 and native results of one host are kept apart.
2. Runs ``asv run --python=same`` for the current commit with the chosen profile
   (``KERNELMAPS_BENCH_PROFILE``), showing a progress bar of benchmarks done and
   left instead of asv's per-parameter tables; asv's full output goes to
   ``.asv/last-run.log``.
3. Counts the benchmarks that failed (``asv run`` exits 0 even then) from the
   results file, prints the report (``benchmarks/report.py``, which also writes the
   HTML page) and exits 1 if any benchmark failed.
"""

import argparse
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / ".asv" / "last-run.log"
_PROGRESS = re.compile(r"^\[\s*([\d.]+)%\]\s+·+\s+(.*?)\s*$")


def machine_name():
    """The asv machine name: the host name, plus the Numba target when one is forced."""
    from benchmarks.machine import forced_target

    host = socket.gethostname().split(".")[0] or "machine"
    target = forced_target()
    return f"{host}-{target}" if target else host


def _asv(*args, **kwargs):
    return [sys.executable, "-m", "asv", *args]


def record_machine(name):
    """``asv machine --yes`` under ``name`` (asv's defaults for everything else)."""
    subprocess.run(_asv("machine", "--yes", "--machine", name), cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def _n_benchmarks(pattern):
    """Number of benchmarks asv will run, from the discovery it writes before running."""
    path = ROOT / ".asv" / "results" / "benchmarks.json"
    try:
        names = [k for k in json.loads(path.read_text()) if k != "version"]
    except (OSError, ValueError):
        return None
    return len([n for n in names if not pattern or re.search(pattern, n)])


def run_suite(name, commit, bench=None):
    """Run asv with a progress bar; returns asv's exit code and the wall time."""
    from tqdm import tqdm

    cmd = _asv("run", "--python=same", f"--set-commit-hash={commit}", "--machine", name,
               "--show-stderr")
    if bench:
        cmd += ["--bench", bench]
    LOG.parent.mkdir(exist_ok=True)
    started = time.perf_counter()
    bar = None
    with open(LOG, "w") as log, subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                  text=True, bufsize=1) as proc:
        for line in proc.stdout:
            log.write(line)
            log.flush()
            match = _PROGRESS.match(line)
            if not match:
                continue
            if bar is None:
                total = _n_benchmarks(bench)
                bar = tqdm(total=total, unit="benchmark", dynamic_ncols=True,
                           bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} done [{elapsed}<{remaining}] {postfix}")
            words = match.group(2).split()
            if not words:
                continue
            if words[0] == "Running" and len(words) > 1:  # a benchmark (or its setup_cache) starts
                bar.set_postfix_str(words[1].strip("().-")[-56:], refresh=True)
            elif words[0] == "Setting" and len(words) > 2:  # a class's setup_cache
                bar.set_postfix_str(f"setting up {words[2].rstrip(':')}"[-56:], refresh=True)
            elif words[-1] in ("ok", "failed", "skipped") and re.match(r"^[\w.]+$", words[0].lstrip(".")):
                bar.update(1)  # one line per benchmark once all its parameters are done
        code = proc.wait()
    if bar is not None:
        bar.close()
    return code, time.perf_counter() - started


def results_files(name, commit):
    return sorted((ROOT / ".asv" / "results" / name).glob(f"{commit[:8]}-*.json"))


def count_outcomes(files):
    """``(benchmarks, parameter combinations measured, failed names)`` over the results
    files of one commit. A failed combination is stored as null (a skipped one as NaN)."""
    from asv.results import Results

    measured, failed, names = 0, set(), set()
    for path in files:
        results = Results.load(str(path))
        for key in results.get_all_result_keys():
            names.add(key)
            values = results.get_result_value(key, results.get_result_params(key))
            for value in values:
                if value is None:
                    failed.add(key)
                elif not (isinstance(value, float) and math.isnan(value)):
                    measured += 1
    return len(names), measured, sorted(failed)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=["quick", "full"],
                        default=os.environ.get("KERNELMAPS_BENCH_PROFILE", "quick"))
    parser.add_argument("--bench", help="only benchmarks matching this regular expression (asv's -b)")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args(argv)
    os.environ["KERNELMAPS_BENCH_PROFILE"] = args.profile

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, text=True, capture_output=True,
                            check=True).stdout.strip()
    name = machine_name()
    record_machine(name)
    sys.path.insert(0, str(ROOT))
    from benchmarks.machine import describe

    print(f"kernelmaps benchmark suite, {args.profile} profile, commit {commit[:8]}, asv machine {name!r}\n"
          f"{describe()}\nasv output: {LOG.relative_to(ROOT)}", flush=True)
    code, seconds = run_suite(name, commit, args.bench)
    files = results_files(name, commit)
    n_benchmarks, measured, failed = count_outcomes(files) if files else (0, 0, [])
    print(f"\n{n_benchmarks} benchmarks ({measured} parameter combinations measured) in "
          f"{seconds / 60:.1f} min; " + (f"{len(failed)} FAILED: {', '.join(failed)}" if failed else "every one succeeded"),
          flush=True)
    if code != 0:
        print(f"asv exited with status {code}; see {LOG}", file=sys.stderr)
    if not args.no_report:
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "report.py"), "--machine", name,
                        "--commit", commit], cwd=ROOT, check=False)
    return 1 if (code != 0 or failed or not files) else 0


if __name__ == "__main__":
    sys.exit(main())
