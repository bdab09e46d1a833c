"""Compare two commits' benchmarks on this machine: ratios, confidence intervals, verdicts.

Usage (from the root of a clone, in the environment the README's first command
makes)::

    python -m benchmarks.compare BASE HEAD [-b REGEX] [--budget MINUTES] [--rounds R] [--samples K] [--repo PATH]

BASE and HEAD are commits, branches or tags of ``--repo`` (by default this
clone). Each is checked out in a temporary ``git worktree`` and imported from
there (its ``kernelmaps`` first on ``PYTHONPATH``; the dependencies are this
environment's, so a change of dependency versions between the commits is not
measured). The benchmark definitions are this tree's, the one running the
command, for both sides, as asv runs the current suite against old commits;
``--repo`` lets a bisection run them from a fixed copy of the tool while the
repository's checkout moves. ``REGEX`` is searched in keys such as
``bench_feature_maps.FeatureMaps.time_transform('rff', 'letter', 1024)``, so
``-b "time_transform\\('rff'"`` selects one map's transforms. Only the benchmark
modules the pattern can select are imported (:mod:`benchmarks._compare_selection`).

The design, and why (see :mod:`benchmarks._compare_stats` for the test):

* One untimed warm-up process per commit compiles and caches its Numba code,
  runs the tracks and finds what each commit can set up. A benchmark (module,
  class or parameter set) that one commit cannot import, list or set up, and
  the other runs, is "absent at BASE" (or HEAD): it is reported with the reason
  and not timed, and the false-discovery control counts only the benchmarks
  compared on both sides. So a BASE older than an algorithm compares everything
  else. A benchmark that fails after it was set up, or that neither commit can
  set up, is reported as failed; neither changes the exit status.
* Then R rounds; in each, one fresh worker process per commit runs every
  benchmark that ran at both (K samples of each), BASE first in odd rounds and
  HEAD first in even ones. Rounds, not samples, are the unit of the test: a new
  process per round samples what differs between processes (memory layout,
  caches), which samples within one process do not, and alternating the
  order puts drift in the machine's load on both sides. asv's
  ``--interleave-rounds`` interleaves too, but installs every commit into its
  own environment (minutes per commit) and tests on samples pooled across
  rounds; pyperf's ``compare_to`` tests one benchmark at a time, with no
  correction for the hundreds in one run.
* ``--budget`` sets R from the time the first round took (at least 3, at most
  ``--rounds``).

Prints one line per benchmark and parameter set: HEAD/BASE with its 95 %
interval and the verdict, then the accuracy tracks that changed, the
benchmarks absent at one side and the failures. Exits 1 when any benchmark is
slower, 0 otherwise; 2 for a usage error (an unknown revision, a ``--repo``
that is not a git repository, an invalid or unmatched pattern), found before
any worktree is made; 3 when a worker process crashed (the message names the
side and its last line of error output).
"""

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from benchmarks import _compare_selection as selection
from benchmarks import _compare_stats as stats

ROOT = Path(__file__).resolve().parent.parent
#: Where the verdicts of each compare, and the error output of a crashed worker, are kept.
LOG_DIR = ROOT / ".asv" / "compare"
MIN_ROUNDS = 3
SIDES = ("base", "head")


class UsageError(ValueError):
    """Input the compare cannot start from (exit status 2); raised before any worktree exists."""


class CompareError(RuntimeError):
    """A compare that could not finish: a worker process crashed or git failed (exit status 3)."""


class Comparison(NamedTuple):
    """What :func:`compare` found; rows are dicts with a ``key`` and a ``verdict``."""

    base: str  #: full SHA of BASE
    head: str  #: full SHA of HEAD
    time_rows: list  #: the benchmarks timed on both sides: ratio, interval, p, verdict
    track_rows: list  #: the tracks run on both sides: base, head, verdict
    absent: list  #: ``{key, side, reason}``: set up at one side only, left out of the test
    failures: list  #: ``{key, verdict, reasons: {side: text}}``: failed, or absent at both sides
    rounds: int
    seconds: float


def _git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def check_repo(repo):
    """``repo`` as an absolute path; a :class:`UsageError` when it is not a folder in a git repository."""
    path = Path(repo).expanduser().absolute()
    if not path.exists():
        raise UsageError(f"--repo {repo}: no such folder")
    if not path.is_dir():
        raise UsageError(f"--repo {repo}: not a folder")
    found = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=path, capture_output=True, text=True)
    if found.returncode != 0:
        raise UsageError(f"--repo {repo}: not a git repository ({_last_line(found.stderr)})")
    return path


def check_pattern(pattern, kinds=("time", "track")):
    """A :class:`UsageError` when ``pattern`` is not a regular expression, or no benchmark module
    of this tree can have a key it matches."""
    try:
        re.compile(pattern)
    except re.error as error:
        raise UsageError(f"-b {pattern!r} is not a regular expression: {error}") from None
    if not selection.selected_modules(pattern, kinds):
        raise UsageError(f"no benchmark matches {pattern!r}")


def resolve(revision, repo=ROOT):
    """The full SHA of a commit, branch or tag; a :class:`UsageError` naming it when unknown, or
    when it has no ``algorithms/`` folder (the package the compare imports)."""
    try:
        sha = _git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cwd=repo)
    except subprocess.CalledProcessError:
        raise UsageError(f"{revision!r} is not a commit, branch or tag of {repo}") from None
    if subprocess.run(["git", "cat-file", "-e", f"{sha}:algorithms"], cwd=repo, capture_output=True).returncode:
        raise UsageError(f"{revision!r} has no algorithms/ folder: not a commit of kernelmaps")
    return sha


def _last_line(text):
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no error output"


class Side:
    """One commit checked out in a temporary worktree, with an import path for its package."""

    def __init__(self, label, sha, scratch, repo=ROOT):
        self.label, self.sha, self.repo = label, sha, repo
        self.tree = Path(scratch) / f"{label}-{sha[:8]}"
        try:
            _git("worktree", "add", "--detach", "--force", str(self.tree), sha, cwd=repo)
        except subprocess.CalledProcessError as error:
            raise CompareError(f"git worktree add of {label.upper()} ({sha[:8]}) failed: "
                               f"{_last_line(error.stderr)}") from None
        # the package as pyproject maps it: algorithms/ is kernelmaps, datasets/ is kernelmaps.datasets
        self.site = Path(scratch) / f"{label}-site"
        package = self.site / "kernelmaps"
        package.mkdir(parents=True)
        for entry in (self.tree / "algorithms").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        if (self.tree / "datasets").is_dir():
            (package / "datasets").symlink_to(self.tree / "datasets", target_is_directory=True)

    def run(self, bench_root, spec, scratch):
        """Run the worker on ``spec`` against this commit's package; returns its ``OUT``.

        A worker that does not finish (it crashed, or was killed) raises a
        :class:`CompareError` naming the side, how it ended and its last line of
        error output; the whole output is kept in ``.asv/compare/``.
        """
        spec_path = Path(scratch) / f"{self.label}-spec.json"
        out_path = Path(scratch) / f"{self.label}-out.json"
        spec_path.write_text(json.dumps(spec))
        out_path.unlink(missing_ok=True)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(self.site), str(bench_root)]))
        completed = subprocess.run([sys.executable, "-m", "benchmarks._compare_worker", str(spec_path),
                                    str(out_path)], cwd=bench_root, env=env, capture_output=True, text=True)
        if completed.returncode == 0 and out_path.is_file():
            return json.loads(out_path.read_text())
        code = completed.returncode
        how = (f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with status {code}")
        kept = LOG_DIR / f"worker-{self.label}-{self.sha[:8]}.log"
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(completed.stderr)
        raise CompareError(f"the benchmark worker of {self.label.upper()} ({self.sha[:8]}) {how}: "
                           f"{_last_line(completed.stderr)} (its whole error output: {kept})")

    def remove(self):
        subprocess.run(["git", "worktree", "remove", "--force", str(self.tree)], cwd=self.repo, capture_output=True)


def _median(samples):
    ordered = sorted(samples)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


def _state(outcome, key, unlisted):
    """``(kind, reason)`` of one key at one side: ``ok``, ``error``, ``absent`` (it could not be
    set up), or ``none`` (asv's skip, or no such parameter set there)."""
    if outcome is None:
        units = [unit for unit in unlisted if key.startswith(unit + ".")]
        return ("absent", unlisted[units[0]]) if units else ("none", "no such parameter set")
    if "error" in outcome:
        return "error", outcome["error"]
    if "absent" in outcome:
        return "absent", outcome["absent"]
    if "skipped" in outcome:
        return "none", outcome["skipped"]
    return "ok", None


def sort_out(warm):
    """From each side's warm-up ``OUT``: ``(keys that ran at both, absent rows, failure rows)``.

    A key that ran at one side and was not set up (or skipped, or not generated) at the
    other is absent there. A key that failed after it was set up, or that could not be
    set up at either side (a mere skip or a missing parameter set at both is no
    failure), is a failure; so is a module or class whose keys could be listed at
    neither side.
    """
    unlisted = {side: warm[side]["unlisted"] for side in SIDES}
    results = {side: warm[side]["results"] for side in SIDES}
    ran, absent, failures = [], [], []
    for key in sorted(set(results["base"]) | set(results["head"])):
        states = {side: _state(results[side].get(key), key, unlisted[side]) for side in SIDES}
        kinds = {state[0] for state in states.values()}
        reasons = {side.upper(): reason for side, (kind, reason) in states.items() if kind != "ok"}
        if kinds == {"ok"}:
            ran.append(key)
        elif "error" in kinds:
            failures.append({"key": key, "verdict": "failed", "reasons": reasons})
        elif "ok" in kinds:
            (side, reason), = reasons.items()
            absent.append({"key": key, "side": side, "reason": reason})
        elif "absent" in kinds:
            failures.append({"key": key, "verdict": "absent at both sides", "reasons": reasons})
    for unit in sorted(set(unlisted["base"]) & set(unlisted["head"])):
        failures.append({"key": unit, "verdict": "absent at both sides",
                         "reasons": {side.upper(): unlisted[side][unit] for side in SIDES}})
    return ran, absent, failures


def _time_rounds(sides, bench_root, scratch, spec, started, budget_minutes, max_rounds, bar):
    """Run the timed rounds; returns ``(per-key per-side medians, first failure per key, rounds)``."""
    medians, failed, rounds, planned = {}, {}, 0, MIN_ROUNDS
    while rounds < planned:
        round_started = time.perf_counter()
        for side in (sides if rounds % 2 == 0 else sides[::-1]):
            results = side.run(bench_root, spec, scratch)["results"]
            for key in spec["keys"]:
                outcome = results.get(key, {"absent": "not listed"})
                if "samples" in outcome:
                    medians.setdefault(key, {"base": [], "head": []})[side.label].append(_median(outcome["samples"]))
                else:
                    reason = next(iter(outcome.values()))
                    failed.setdefault(key, {})[side.label.upper()] = f"round {rounds + 1}: {reason}"
            bar.update()
        rounds += 1
        if rounds == 1:
            per_round = time.perf_counter() - round_started
            left = budget_minutes * 60 - (time.perf_counter() - started)
            planned = max(MIN_ROUNDS, min(max_rounds, 1 + int(left // per_round)))
            bar.total = 2 + 2 * planned
            bar.refresh()
    return medians, failed, rounds


def compare(base, head, pattern="", budget_minutes=5.0, max_rounds=7, samples=5, progress=True, repo=ROOT):
    """Benchmark ``base`` and ``head``; returns a :class:`Comparison`.

    Raises :class:`UsageError` for an unknown revision, a repository that is not one or a
    pattern that selects nothing (before any worktree exists), :class:`CompareError` when
    a worker process crashes.
    """
    from tqdm.auto import tqdm

    started = time.perf_counter()
    repo = check_repo(repo)
    check_pattern(pattern)
    base_sha, head_sha = resolve(base, repo), resolve(head, repo)
    bench_root = ROOT
    with tempfile.TemporaryDirectory(prefix="kernelmaps-compare-") as scratch:
        sides = []
        try:
            for label, sha in zip(SIDES, (base_sha, head_sha)):
                sides.append(Side(label, sha, scratch, repo))
            bar = tqdm(total=2 + 2 * MIN_ROUNDS, desc="compare", unit="run", disable=not progress,
                       dynamic_ncols=True)
            # compiles and caches Numba code, finds what each side can set up; the tracks are deterministic
            warm = {}
            for side in sides:
                warm[side.label] = side.run(bench_root, {"pattern": pattern, "samples": 1,
                                                         "kinds": ["time", "track"]}, scratch)
                bar.update()
            ran, absent, failures = sort_out(warm)
            if not (ran or absent or failures):
                raise UsageError(f"no benchmark matching {pattern!r} runs at either commit")
            timed = {"pattern": pattern, "samples": samples, "kinds": ["time"],
                     "keys": [key for key in ran if "samples" in warm["base"]["results"][key]]}
            medians, failed, rounds = {}, {}, 0
            if timed["keys"]:
                medians, failed, rounds = _time_rounds(sides, bench_root, scratch, timed, started,
                                                       budget_minutes, max_rounds, bar)
            bar.close()
        finally:
            for side in sides:
                side.remove()
    failures += [{"key": key, "verdict": "failed", "reasons": reasons} for key, reasons in sorted(failed.items())]
    time_rows = stats.timing_verdicts({key: (m["base"], m["head"]) for key, m in medians.items() if key not in failed})
    values = {side: {key: outcome["value"] for key, outcome in warm[side]["results"].items() if "value" in outcome}
              for side in SIDES}
    track_rows = stats.accuracy_verdicts({key: (values["base"][key], values["head"][key]) for key in ran
                                          if key in values["base"] and key in values["head"]})
    return Comparison(base_sha, head_sha, time_rows, track_rows, absent, failures, rounds,
                      time.perf_counter() - started)


def report(result, out=sys.stdout):
    """Print the verdicts; return the exit status (1 when anything is slower)."""
    time_rows, track_rows, absent, failures = result.time_rows, result.track_rows, result.absent, result.failures
    width = max([len(row["key"]) for row in time_rows + track_rows + absent + failures] + [20])
    print(f"{'benchmark':<{width}}  HEAD/BASE  95% interval      verdict", file=out)
    for row in time_rows:
        print(f"{row['key']:<{width}}  {row['ratio']:8.3f}×  [{row['low']:.3f}, {row['high']:.3f}]  "
              f"{row['verdict']}", file=out)
    for row in track_rows:
        if row["verdict"] != "not compared":
            print(f"{row['key']:<{width}}  {row['base']:.6g} -> {row['head']:.6g}  {row['verdict']}", file=out)
    for row in absent:
        print(f"{row['key']:<{width}}  absent at {row['side']} ({row['reason']})", file=out)
    for row in failures:
        reasons = "; ".join(f"{side}: {text}" for side, text in sorted(row["reasons"].items()))
        print(f"{row['key']:<{width}}  {row['verdict']}: {reasons}", file=out)
    slower = [row for row in time_rows if row["verdict"] == "slower"]
    changed = [row for row in track_rows if row["verdict"] == "accuracy changed"]
    absent_at = {side: sum(row["side"] == side for row in absent) for side in ("BASE", "HEAD")}
    print(f"\n{len(time_rows)} timed benchmarks over {result.rounds} rounds in {result.seconds / 60:.1f} min: "
          f"{len(slower)} slower, {sum(r['verdict'] == 'faster' for r in time_rows)} faster; "
          f"{len(changed)} accuracy tracks changed; {absent_at['BASE']} absent at BASE, {absent_at['HEAD']} "
          f"absent at HEAD (not compared); {len(failures)} failed", file=out)
    return 1 if slower else 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the commit, branch or tag to compare against")
    parser.add_argument("head", help="the commit, branch or tag under test")
    parser.add_argument("-b", "--bench", default="", help="regular expression searched in the benchmark keys")
    parser.add_argument("--budget", type=float, default=5.0, help="minutes to spend (sets the rounds; default 5)")
    parser.add_argument("--rounds", type=int, default=7, help="most rounds to run (default 7, at least 3 run)")
    parser.add_argument("--samples", type=int, default=5, help="samples per benchmark per round (default 5)")
    parser.add_argument("--repo", default=str(ROOT), help="the git repository of BASE and HEAD (default: this clone)")
    args = parser.parse_args(argv)

    def stop(message, status):
        parser.exit(status, f"{parser.prog}: error: {message}\n")

    if not (args.budget > 0 and math.isfinite(args.budget)) or args.rounds < MIN_ROUNDS or args.samples < 1:
        stop(f"--budget must be positive, --rounds at least {MIN_ROUNDS}, --samples at least 1", 2)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a timeout's kill removes the worktrees too
    try:
        result = compare(args.base, args.head, args.bench, args.budget, args.rounds, args.samples, repo=args.repo)
    except UsageError as error:
        stop(str(error), 2)
    except CompareError as error:
        stop(str(error), 3)
    except KeyboardInterrupt:
        stop("interrupted (the temporary worktrees are removed)", 130)
    log(result)
    return report(result)


def log(result, folder=LOG_DIR):
    """Keep the verdicts in ``.asv/compare/BASE-HEAD.json``, where the report marks the regressions."""
    time_rows, track_rows, absent = result.time_rows, result.track_rows, result.absent
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{result.base[:8]}-{result.head[:8]}.json"
    path.write_text(json.dumps({
        "base": result.base, "head": result.head, "rounds": result.rounds, "seconds": result.seconds,
        "slower": [row["key"] for row in time_rows if row["verdict"] == "slower"],
        "faster": [row["key"] for row in time_rows if row["verdict"] == "faster"],
        "accuracy_changed": [row["key"] for row in track_rows if row["verdict"] == "accuracy changed"],
        "absent_at_base": [row["key"] for row in absent if row["side"] == "BASE"],
        "absent_at_head": [row["key"] for row in absent if row["side"] == "HEAD"],
        "rows": time_rows, "absent": absent, "failures": result.failures}, indent=1))
    return path


if __name__ == "__main__":
    sys.exit(main())
