"""``python -m benchmarks.compare``: its statistics on simulated rounds, its worker, and one real compare.

The statistical tests draw seeded simulated rounds: the false-alarm bound
and the power are properties of the procedure, tested without timing anything.
The end-to-end test injects a 3x slowdown into a temporary clone and checks
that the real command finds it and names it.
"""

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks import _compare_stats as cs
from benchmarks import _compare_worker as worker


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
    found = worker.discover(r"FeatureMaps\.time_transform\('rff', 'letter'", kinds=("time",))
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


def test_a_compare_finds_an_injected_slowdown(tmp_path):
    """A throwaway commit of a temporary clone makes rff's transform 3x slower: the
    command flags rff's transforms and exits 1."""
    from benchmarks.compare import ROOT, compare, report
    from benchmarks._regression_injection import inject, transform_pattern

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    slow = inject(clone, "rff", 3.0)
    pattern = r"FeatureMaps\.time_transform\('(rff|orf)', 'banana'"
    results = compare("HEAD", slow, pattern, budget_minutes=0.5, max_rounds=5, samples=3, progress=False,
                      repo=clone)
    verdicts = {row["key"]: row["verdict"] for row in results[0]}
    assert set(verdicts) and all("banana" in key for key in verdicts)
    assert all(v == "slower" for k, v in verdicts.items() if "'rff'" in k), verdicts
    assert any("'orf'" in k for k in verdicts)  # the other map was compared too
    assert report(*results, out=sys.stderr) == 1
    assert transform_pattern("rff") in rf"time_transform\('rff'"


def test_the_verdicts_are_logged_where_the_report_reads_them(tmp_path):
    from benchmarks import report_history
    from benchmarks.compare import log

    rows = [{"key": "bench_feature_maps.FeatureMaps.time_transform('rff', 'letter', 256)", "ratio": 1.3,
             "low": 1.2, "high": 1.4, "p": 1e-4, "verdict": "slower"},
            {"key": "bench_feature_maps.FeatureMaps.time_transform('orf', 'letter', 256)", "ratio": 1.0,
             "low": 0.9, "high": 1.1, "p": 0.9, "verdict": "no change"}]
    path = log("a" * 40, "b" * 40, (rows, [], {}, 5, 60.0), folder=tmp_path)
    assert path.name == "aaaaaaaa-bbbbbbbb.json"
    assert report_history.flagged(tmp_path) == {("b" * 40, "rff")}
