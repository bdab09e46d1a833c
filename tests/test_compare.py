"""``python -m benchmarks.compare``: its statistics on simulated rounds, its worker, and real compares
(its selection: ``test_compare_selection.py``).

The statistical tests draw seeded simulated rounds: the false-alarm bound
and the power are properties of the procedure, tested without timing anything.
One end-to-end test injects a 3x slowdown into a temporary clone and checks
that the real command finds it and names it; another compares HEAD with a
commit older than ``MinHash`` and checks that MinHash is reported absent there.
"""

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks import _compare_stats as cs
from benchmarks import _compare_worker as worker
from benchmarks import compare as cmp


def test_the_paired_ratio_and_its_interval_are_those_of_a_t_test_on_log_ratios():
    rng = np.random.default_rng(0)
    base = np.exp(rng.normal(0, 0.05, 6))
    head = 1.3 * base * np.exp(rng.normal(0, 0.05, 6))
    ratio, low, high, p = cs.paired(base, head)
    d = np.log(head) - np.log(base)
    assert ratio == pytest.approx(np.exp(d.mean()))
    assert p == pytest.approx(scipy_stats.ttest_rel(np.log(head), np.log(base)).pvalue)
    assert low < ratio < high and low > 1.0
    assert cs.paired([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0, 0.0)
    assert cs.paired([1.0, 1.0], [1.0, 1.0])[3] == 1.0


def test_benjamini_hochberg_steps_up():
    p = [0.01, 0.04, 0.03, 0.2, 0.001]
    # sorted 0.001 0.01 0.03 0.04 0.2 against 0.01 0.02 0.03 0.04 0.05: the first four pass
    np.testing.assert_array_equal(cs.benjamini_hochberg(p, 0.05), [True, True, True, False, True])
    np.testing.assert_array_equal(cs.benjamini_hochberg([0.5, 0.9], 0.05), [False, False])


def _simulated_rounds(rng, n_benchmarks, n_rounds, noise, slowdown=None):
    """Per-round medians of BASE and HEAD with lognormal noise between processes; the
    benchmarks in ``slowdown`` (index -> factor) are slower on HEAD."""
    rounds = {}
    for j in range(n_benchmarks):
        level = np.exp(rng.normal(-4, 1))
        base = level * np.exp(rng.normal(0, noise, n_rounds))
        head = level * (slowdown or {}).get(j, 1.0) * np.exp(rng.normal(0, noise, n_rounds))
        rounds[f"b{j}"] = (base, head)
    return rounds


def test_aa_compares_of_hundreds_of_benchmarks_rarely_flag_anything():
    """Under the null (nothing changed) the procedure flags anything in at most ~FDR of runs."""
    rng = np.random.default_rng(1)
    flagged = sum(any(row["verdict"] != "no change" for row in
                      cs.timing_verdicts(_simulated_rounds(rng, 300, 5, noise=0.04)))
                  for _ in range(200))
    assert flagged / 200 <= 0.08, flagged


def test_a_slowdown_of_one_maps_benchmarks_is_found_among_hundreds():
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(50):
        rows = cs.timing_verdicts(_simulated_rounds(rng, 300, 5, noise=0.03, slowdown={j: 1.25 for j in range(8)}))
        verdicts = {row["key"]: row["verdict"] for row in rows}
        hits += any(verdicts[f"b{j}"] == "slower" for j in range(8))
        assert all(verdicts[f"b{j}"] != "faster" for j in range(8))
    assert hits >= 45, hits


def test_accuracy_tracks_are_compared_to_round_off_and_memory_is_not():
    rows = {row["key"]: row["verdict"] for row in cs.accuracy_verdicts({
        "m.C.track_kernel_error('rff', 256)": (0.1, 0.1 * (1 + 1e-9)),
        "m.C.track_test_error('rff', 256)": (0.1, 0.11),
        "m.C.track_transform_memory('rff', 256)": (3.0, 9.0),
    })}
    assert rows == {"m.C.track_kernel_error('rff', 256)": "same", "m.C.track_test_error('rff', 256)":
                    "accuracy changed", "m.C.track_transform_memory('rff', 256)": "not compared"}


class _Fake:
    params = [["a", "b"], [1, 2]]
    calls = []

    def setup_cache(self):
        _Fake.calls.append("cache")
        return {"offset": 10}

    def setup(self, cache, name, size):
        self.base = cache["offset"] + size

    def time_work(self, cache, name, size):
        sum(range(100))

    def track_value(self, cache, name, size):
        return self.base

    def time_broken(self, cache, name, size):
        raise RuntimeError("boom")


def test_the_worker_runs_as_asv_does():
    assert worker.parameter_sets(_Fake) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert worker.parameter_sets(type("Flat", (), {"params": [3, 4]})) == [(3,), (4,)]
    selection = [(worker.key(f"m._Fake.{m}", p), _Fake, m, p) for m in ("time_work", "track_value", "time_broken")
                 for p in worker.parameter_sets(_Fake)]
    _Fake.calls.clear()
    results = worker.run(selection, samples=3)
    assert _Fake.calls == ["cache"]  # setup_cache once per class and process
    assert len(results["m._Fake.time_work('a', 1)"]["samples"]) == 3
    assert results["m._Fake.track_value('b', 2)"] == {"value": 12.0}
    assert "boom" in results["m._Fake.time_broken('a', 2)"]["error"]


def test_discovery_selects_one_maps_transforms_by_its_key():
    found, unlisted = worker.discover(r"FeatureMaps\.time_transform\('rff', 'letter'", kinds=("time",))
    assert not unlisted
    assert found and all(name.startswith("bench_feature_maps.FeatureMaps.time_transform('rff', 'letter'")
                         for name, *_ in found)


def test_unknown_revisions_and_empty_selections_are_usage_errors():
    from benchmarks.compare import main

    with pytest.raises(SystemExit) as raised:
        main(["no-such-branch", "HEAD"])
    assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main(["HEAD", "HEAD", "--rounds", "1"])
    assert raised.value.code == 2


@pytest.fixture
def one_cpu():
    """Pin this process, and so the compare's worker processes, to one CPU.

    On a two-core machine a transform's two pool threads share the cores with whatever
    else runs, and its median moves by up to 1.7x from one process to the next; on one
    CPU it moves by a few percent. The compare's power against such noise is tested
    on simulated rounds above; this end-to-end test checks the command, not the machine.
    """
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def test_a_compare_finds_an_injected_slowdown(tmp_path, one_cpu):
    """A throwaway commit of a temporary clone makes rff's transform 3x slower: the
    command flags rff's transforms and exits 1."""
    from benchmarks.compare import ROOT, compare, report
    from benchmarks._regression_injection import inject, transform_pattern

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    slow = inject(clone, "rff", 3.0)
    pattern = r"FeatureMaps\.time_transform\('(rff|orf)', 'banana'"
    # six rounds, not the three of a small budget: a paired t-test on three rounds has two
    # degrees of freedom, too few against this machine's noise between processes
    results = compare("HEAD", slow, pattern, budget_minutes=5, max_rounds=6, samples=3, progress=False,
                      repo=clone)
    verdicts = {row["key"]: row["verdict"] for row in results.time_rows}
    assert set(verdicts) and all("banana" in key for key in verdicts)
    assert all(v == "slower" for k, v in verdicts.items() if "'rff'" in k), verdicts
    assert any("'orf'" in k for k in verdicts)  # the other map was compared too
    assert report(results, out=sys.stderr) == 1
    assert transform_pattern("rff") in rf"time_transform\('rff'"


def test_the_verdicts_are_logged_where_the_report_reads_them(tmp_path):
    from benchmarks import report_history
    from benchmarks.compare import log

    rows = [{"key": "bench_feature_maps.FeatureMaps.time_transform('rff', 'letter', 256)", "ratio": 1.3,
             "low": 1.2, "high": 1.4, "p": 1e-4, "verdict": "slower"},
            {"key": "bench_feature_maps.FeatureMaps.time_transform('orf', 'letter', 256)", "ratio": 1.0,
             "low": 0.9, "high": 1.1, "p": 0.9, "verdict": "no change"}]
    path = log(cmp.Comparison("a" * 40, "b" * 40, rows, [], [], [], 5, 60.0), folder=tmp_path)
    assert path.name == "aaaaaaaa-bbbbbbbb.json"
    assert report_history.flagged(tmp_path) == {("b" * 40, "rff")}


class _HalfSetUp:
    """Parameter 1 sets up, 2 does not; 3 is asv's skip; the benchmark itself fails for 4."""

    params = [1, 2, 3, 4]

    def setup(self, n):
        if n == 2:
            raise ImportError("cannot import name 'NewMap' from 'kernelmaps'")
        if n == 3:
            raise NotImplementedError("not for this parameter")

    def time_work(self, n):
        if n == 4:
            raise ValueError("broken after set-up")


class _NoCache:
    def setup_cache(self):
        raise AttributeError("module 'kernelmaps' has no attribute 'NewMap'")

    def track_error(self, cache):
        return 0.0


def test_what_cannot_be_set_up_is_absent_and_a_failure_after_set_up_is_an_error():
    selection_ = [(worker.key(f"m._HalfSetUp.time_work", (n,)), _HalfSetUp, "time_work", (n,)) for n in (1, 2, 3, 4)]
    selection_.append((worker.key("m._NoCache.track_error", ()), _NoCache, "track_error", ()))
    results = worker.run(selection_, samples=2)
    assert len(results["m._HalfSetUp.time_work(1)"]["samples"]) == 2
    assert results["m._HalfSetUp.time_work(2)"] == {
        "absent": "setup: ImportError: cannot import name 'NewMap' from 'kernelmaps'"}
    assert "skipped" in results["m._HalfSetUp.time_work(3)"]
    assert results["m._HalfSetUp.time_work(4)"] == {"error": "time_work: ValueError: broken after set-up"}
    assert results["m._NoCache.track_error()"]["absent"].startswith("setup_cache: AttributeError")


def _out(results, unlisted=None):
    return {"results": results, "unlisted": unlisted or {}}


def test_keys_set_up_at_one_side_are_absent_at_the_other_and_only_both_sided_failures_count():
    ok, value = {"samples": [1.0]}, {"value": 0.5}
    base = _out({"m.C.time_a(1)": ok, "m.C.time_a(2)": {"absent": "setup: ImportError: no NewMap"},
                 "m.C.time_a(4)": {"error": "time_a: ValueError: x"}, "m.C.time_a(5)": {"skipped": "skipped: n/a"},
                 "m.C.time_a(6)": {"absent": "setup: KeyError: 'z'"}, "m.C.track_e(1)": value},
                {"bench_new": "import of bench_new: AttributeError: no NewMachine", "bench_gone": "import: E"})
    head = _out({"m.C.time_a(1)": ok, "m.C.time_a(2)": ok, "m.C.time_a(3)": ok, "m.C.time_a(4)": ok,
                 "m.C.time_a(5)": {"skipped": "skipped: n/a"}, "m.C.track_e(1)": value,
                 "bench_new.K.time_fit('x')": ok, "m.C.time_a(7)": {"absent": "setup: OSError: no file"}},
                {"bench_gone": "import: E"})
    ran, absent, failures = cmp.sort_out({"base": base, "head": head})
    assert ran == ["m.C.time_a(1)", "m.C.track_e(1)"]
    assert absent == [
        {"key": "bench_new.K.time_fit('x')", "side": "BASE",
         "reason": "import of bench_new: AttributeError: no NewMachine"},
        {"key": "m.C.time_a(2)", "side": "BASE", "reason": "setup: ImportError: no NewMap"},
        {"key": "m.C.time_a(3)", "side": "BASE", "reason": "no such parameter set"}]
    verdicts = {row["key"]: (row["verdict"], row["reasons"]) for row in failures}
    assert verdicts == {  # time_a(5), skipped at both, is no failure
        "m.C.time_a(4)": ("failed", {"BASE": "time_a: ValueError: x"}),
        "m.C.time_a(6)": ("absent at both sides", {"BASE": "setup: KeyError: 'z'", "HEAD": "no such parameter set"}),
        "m.C.time_a(7)": ("absent at both sides", {"BASE": "no such parameter set", "HEAD": "setup: OSError: no file"}),
        "bench_gone": ("absent at both sides", {"BASE": "import: E", "HEAD": "import: E"})}


def _line(text, key):
    """The printed line of ``key``."""
    lines = [line for line in text.splitlines() if line.startswith(key + " ")]
    assert len(lines) == 1, text
    return lines[0]


def test_absent_benchmarks_and_failures_are_printed_and_logged(tmp_path):
    rows = cs.timing_verdicts({"m.C.time_a(1)": ([1.0, 1.1, 1.0], [1.0, 1.0, 1.1])})
    absent = [{"key": "m.C.time_a(2)", "side": "BASE", "reason": "setup: ImportError: no NewMap"}]
    failures = [{"key": "m.C.time_a(4)", "verdict": "failed", "reasons": {"HEAD": "time_a: ValueError: x"}}]
    result = cmp.Comparison("a" * 40, "b" * 40, rows, [], absent, failures, 3, 60.0)
    out = io.StringIO()
    assert cmp.report(result, out) == 0
    text = out.getvalue()
    assert _line(text, "m.C.time_a(2)").endswith("  absent at BASE (setup: ImportError: no NewMap)")
    assert _line(text, "m.C.time_a(4)").endswith("  failed: HEAD: time_a: ValueError: x")
    assert "1 timed benchmarks" in text and "1 absent at BASE, 0 absent at HEAD" in text and "1 failed" in text
    logged = json.loads(cmp.log(result, folder=tmp_path).read_text())
    assert logged["absent_at_base"] == ["m.C.time_a(2)"] and logged["absent_at_head"] == []
    assert logged["absent"] == absent and logged["failures"] == failures


def _compare_worktrees():
    listing = subprocess.run(["git", "worktree", "list"], cwd=cmp.ROOT, capture_output=True, text=True).stdout
    return {line for line in listing.splitlines() if "kernelmaps-compare-" in line}


def _usage_errors(tmp_path):
    (tmp_path / "a-file").write_text("")
    (tmp_path / "plain-folder").mkdir()
    return {"invalid pattern": ["HEAD", "HEAD", "-b", "("],
            "missing repo": ["HEAD", "HEAD", "--repo", str(tmp_path / "nonexistent")],
            "repo is a file": ["HEAD", "HEAD", "--repo", str(tmp_path / "a-file")],
            "repo is no git repository": ["HEAD", "HEAD", "--repo", str(tmp_path / "plain-folder")],
            "unknown revision": ["no-such-branch", "HEAD"],
            "pattern matches no module": ["HEAD", "HEAD", "-b", "^no_such_module"]}


def test_usage_errors_stop_before_any_worktree_with_one_line(tmp_path, monkeypatch, capsys):
    def no_worktree(*args, **kwargs):
        raise AssertionError("a worktree was made")

    monkeypatch.setattr(cmp, "Side", no_worktree)
    for case, argv in _usage_errors(tmp_path).items():
        with pytest.raises(SystemExit) as raised:
            cmp.main(argv)
        err = capsys.readouterr().err
        assert raised.value.code == 2, case
        assert err.count("\n") == 1 and err.startswith("python -m benchmarks.compare: error: "), (case, err)


def test_usage_errors_of_the_command_print_no_traceback(tmp_path):
    before = _compare_worktrees()
    for case, argv in _usage_errors(tmp_path).items():
        completed = subprocess.run([sys.executable, "-m", "benchmarks.compare", *argv], cwd=cmp.ROOT,
                                   capture_output=True, text=True)
        assert completed.returncode == 2, (case, completed.stderr)
        assert completed.stderr.count("\n") == 1 and "Traceback" not in completed.stderr, (case, completed.stderr)
    assert _compare_worktrees() == before


def test_a_crashed_worker_is_one_line_naming_the_side(tmp_path, monkeypatch, capsys):
    package = tmp_path / "benchmarks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_compare_worker.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    side = cmp.Side.__new__(cmp.Side)
    side.label, side.sha, side.site = "head", "c" * 40, tmp_path
    monkeypatch.setattr(cmp, "LOG_DIR", tmp_path / "logs")
    with pytest.raises(cmp.CompareError) as raised:
        side.run(tmp_path, {"pattern": ""}, tmp_path)
    message = str(raised.value)
    assert "\n" not in message and message.startswith("the benchmark worker of HEAD (cccccccc) was killed by SIGSEGV")
    assert (tmp_path / "logs" / "worker-head-cccccccc.log").is_file()

    def crashing(*args, **kwargs):
        raise raised.value

    monkeypatch.setattr(cmp, "compare", crashing)
    with pytest.raises(SystemExit) as stopped:
        cmp.main(["HEAD", "HEAD"])
    assert stopped.value.code == 3 and capsys.readouterr().err.count("\n") == 1


OLD_COMMIT = "5f319d6"  # main before MinHash and the Nystroem kernel machines


@pytest.mark.slow
def test_a_commit_older_than_an_algorithm_compares_the_rest_and_names_it_absent(tmp_path):
    """At 5f319d6 ``kernelmaps.MinHash`` does not exist: its benchmark cannot be set up at
    BASE and is reported absent there, while the FWHT benchmarks are compared."""
    known = subprocess.run(["git", "cat-file", "-e", f"{OLD_COMMIT}^{{commit}}"], cwd=cmp.ROOT, capture_output=True)
    if known.returncode != 0:
        pytest.skip(f"commit {OLD_COMMIT} is not in this repository (a shallow clone?)")
    pattern = r"time_fwht\('kernelmaps', 10|MinHashTransform\.time_transform\('binary'"
    result = cmp.compare(OLD_COMMIT, "HEAD", pattern, budget_minutes=0.1, max_rounds=3, samples=1, progress=False)
    out = io.StringIO()
    assert cmp.report(result, out) in (0, 1)
    minhash = "bench_minhash.MinHashTransform.time_transform('binary', 256)"
    assert [(row["key"], row["side"]) for row in result.absent] == [(minhash, "BASE")]
    assert "MinHash" in result.absent[0]["reason"] and not result.failures
    assert {row["key"] for row in result.time_rows} == {
        f"bench_fwht.FWHT.time_fwht('kernelmaps', 10, '{dtype}')" for dtype in ("float32", "float64")}
    assert "  absent at BASE (setup: ImportError: cannot import name 'MinHash'" in _line(out.getvalue(), minhash)
    assert json.loads(cmp.log(result, folder=tmp_path).read_text())["absent_at_base"] == [minhash]
