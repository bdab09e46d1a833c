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
``-b "time_transform\\('rff'"`` selects one map's transforms.

The design, and why (see :mod:`benchmarks._compare_stats` for the test):

* One untimed warm-up process per commit compiles and caches its Numba code.
* Then R rounds; in each, one fresh worker process per commit runs every
  selected benchmark (K samples of each), BASE first in odd rounds and HEAD
  first in even ones. Rounds, not samples, are the unit of the test: a new
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
interval and the verdict, then the accuracy tracks that changed. Exits 1 when
any benchmark is slower, 0 otherwise (2 for a usage error).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import _compare_stats as stats

ROOT = Path(__file__).resolve().parent.parent
MIN_ROUNDS = 3


def _git(*args, cwd=ROOT):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def resolve(revision, repo=ROOT):
    """The full SHA of a commit, branch or tag; a ``ValueError`` naming it when unknown."""
    try:
        return _git("rev-parse", "--verify", f"{revision}^{{commit}}", cwd=repo)
    except subprocess.CalledProcessError:
        raise ValueError(f"{revision!r} is not a commit, branch or tag of {repo}") from None


class Side:
    """One commit checked out in a temporary worktree, with an import path for its package."""

    def __init__(self, label, sha, scratch, repo=ROOT):
        self.label, self.sha, self.repo = label, sha, repo
        self.tree = Path(scratch) / f"{label}-{sha[:8]}"
        _git("worktree", "add", "--detach", "--force", str(self.tree), sha, cwd=repo)
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
        """Run the worker on ``spec`` against this commit's package; returns its results."""
        spec_path = Path(scratch) / f"{self.label}-spec.json"
        out_path = Path(scratch) / f"{self.label}-out.json"
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(self.site), str(bench_root)]))
        completed = subprocess.run([sys.executable, "-m", "benchmarks._compare_worker", str(spec_path),
                                    str(out_path)], cwd=bench_root, env=env, capture_output=True, text=True)
        if completed.returncode != 0:
            raise RuntimeError(f"the benchmark worker of {self.label} ({self.sha[:8]}) failed:\n"
                               f"{completed.stderr[-2000:]}")
        return json.loads(out_path.read_text())

    def remove(self):
        subprocess.run(["git", "worktree", "remove", "--force", str(self.tree)], cwd=self.repo, capture_output=True)


def _median(samples):
    ordered = sorted(samples)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


def compare(base, head, pattern="", budget_minutes=5.0, max_rounds=7, samples=5, progress=True, repo=ROOT):
    """Benchmark ``base`` and ``head``; returns ``(time rows, track rows, failures, rounds run, seconds)``."""
    from tqdm.auto import tqdm

    started = time.perf_counter()
    base_sha, head_sha = resolve(base, repo), resolve(head, repo)
    bench_root = ROOT
    with tempfile.TemporaryDirectory(prefix="kernelmaps-compare-") as scratch:
        sides = []
        try:
            sides = [Side("base", base_sha, scratch, repo), Side("head", head_sha, scratch, repo)]
            warm = {"pattern": pattern, "samples": 1, "kinds": ["time", "track"]}
            bar = tqdm(total=2 + 2 * MIN_ROUNDS, desc="compare", unit="run", disable=not progress,
                       dynamic_ncols=True)
            tracks = {}
            for side in sides:  # compiles and caches Numba code; the tracks are deterministic
                tracks[side.label] = {k: v["value"] for k, v in side.run(bench_root, warm, scratch).items()
                                      if "value" in v}
                bar.update()
            timed = {"pattern": pattern, "samples": samples, "kinds": ["time"]}
            medians, failures, rounds = {}, {}, 0
            planned = MIN_ROUNDS
            while rounds < planned:
                round_started = time.perf_counter()
                order = sides if rounds % 2 == 0 else sides[::-1]
                for side in order:
                    for name, result in side.run(bench_root, timed, scratch).items():
                        if "samples" in result:
                            medians.setdefault(name, {"base": [], "head": []})[side.label].append(
                                _median(result["samples"]))
                        elif not result.get("error", "").startswith("skipped"):  # asv's skip of a combination
                            failures.setdefault(name, {})[side.label] = result.get("error", "no result")
                    bar.update()
                rounds += 1
                if rounds == 1:
                    per_round = time.perf_counter() - round_started
                    left = budget_minutes * 60 - (time.perf_counter() - started)
                    planned = max(MIN_ROUNDS, min(max_rounds, 1 + int(left // per_round)))
                    bar.total = 2 + 2 * planned
                    bar.refresh()
            bar.close()
        finally:
            for side in sides:
                side.remove()
    complete = {name: (m["base"], m["head"]) for name, m in medians.items()
                if len(m["base"]) == len(m["head"]) == rounds and name not in failures}
    time_rows = stats.timing_verdicts(complete)
    shared = set(tracks.get("base", {})) & set(tracks.get("head", {}))
    track_rows = stats.accuracy_verdicts({k: (tracks["base"][k], tracks["head"][k]) for k in shared})
    return time_rows, track_rows, failures, rounds, time.perf_counter() - started


def report(time_rows, track_rows, failures, rounds, seconds, out=sys.stdout):
    """Print the verdicts; return the exit status (1 when anything is slower)."""
    width = max([len(row["key"]) for row in time_rows + track_rows] + [20])
    print(f"{'benchmark':<{width}}  HEAD/BASE  95% interval      verdict", file=out)
    for row in time_rows:
        print(f"{row['key']:<{width}}  {row['ratio']:8.3f}×  [{row['low']:.3f}, {row['high']:.3f}]  "
              f"{row['verdict']}", file=out)
    for row in track_rows:
        if row["verdict"] != "not compared":
            print(f"{row['key']:<{width}}  {row['base']:.6g} -> {row['head']:.6g}  {row['verdict']}", file=out)
    for name, sides in sorted(failures.items()):
        print(f"{name:<{width}}  failed: {'; '.join(f'{k}: {v}' for k, v in sorted(sides.items()))}", file=out)
    slower = [row for row in time_rows if row["verdict"] == "slower"]
    changed = [row for row in track_rows if row["verdict"] == "accuracy changed"]
    print(f"\n{len(time_rows)} timed benchmarks over {rounds} rounds in {seconds / 60:.1f} min: "
          f"{len(slower)} slower, {sum(r['verdict'] == 'faster' for r in time_rows)} faster; "
          f"{len(changed)} accuracy tracks changed; {len(failures)} failed on a side", file=out)
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
    if not (args.budget > 0 and math.isfinite(args.budget)) or args.rounds < MIN_ROUNDS or args.samples < 1:
        parser.error(f"--budget must be positive, --rounds at least {MIN_ROUNDS}, --samples at least 1")
    try:
        results = compare(args.base, args.head, args.bench, args.budget, args.rounds, args.samples, repo=args.repo)
    except ValueError as error:
        parser.error(str(error))
    if not results[0] and not results[1]:
        parser.error(f"no benchmark matches {args.bench!r}")
    log(resolve(args.base, args.repo), resolve(args.head, args.repo), results)
    return report(*results)


def log(base_sha, head_sha, results, folder=ROOT / ".asv" / "compare"):
    """Keep the verdicts in ``.asv/compare/BASE-HEAD.json``, where the report marks the regressions."""
    time_rows, track_rows, failures, rounds, seconds = results
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{base_sha[:8]}-{head_sha[:8]}.json"
    path.write_text(json.dumps({
        "base": base_sha, "head": head_sha, "rounds": rounds, "seconds": seconds,
        "slower": [row["key"] for row in time_rows if row["verdict"] == "slower"],
        "faster": [row["key"] for row in time_rows if row["verdict"] == "faster"],
        "accuracy_changed": [row["key"] for row in track_rows if row["verdict"] == "accuracy changed"],
        "rows": time_rows}, indent=1))
    return path


if __name__ == "__main__":
    sys.exit(main())
