"""``benchmarks/report.py`` on a small fake asv results tree (no asv run).

The tree is written in asv's on-disk format (``machine.json``, ``benchmarks.json``,
``<commit8>-<env>.json`` with ``result_columns``): commit A is complete and split
over two files (one benchmark in both, measured at different times), commit B is
newer, partial (a benchmark never ran) and has one failed (null) value. Skipped
combinations (NaN, here FFHT) must not count as missing.
"""

import itertools
import json
import math
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report  # noqa: E402

COMMIT_A = "a1" + "0" * 38
COMMIT_B = "b2" + "0" * 38
DAY = 86_400_000
COLUMNS = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a", "stats_ci_99_b",
           "stats_q_25", "stats_q_75", "stats_number", "stats_repeat", "samples", "profile"]

#: the fake suite: key -> (params, param_names)
SUITE = {
    "bench_feature_maps.FeatureMaps.time_transform": (
        [["craftmaps", "rff", "sklearn.PolynomialCountSketch", "sklearn.RBFSampler"], ["banana"], [256, 1024]],
        ["algorithm", "dataset", "n_components"]),
    "bench_feature_maps.FeatureMapAccuracy.track_kernel_error": (
        [["craftmaps", "rff", "sklearn.PolynomialCountSketch", "sklearn.RBFSampler"], ["banana"], [256, 1024]],
        ["algorithm", "dataset", "n_components"]),
    "bench_feature_maps.TransformSpeed.time_transform": (
        [["rff", "sklearn.RBFSampler"], ["float64", "float32"]], ["algorithm", "dtype"]),
    "bench_fwht.FWHT.time_fwht": (
        [["kernelmaps", "ffht"], [10], ["float64"]], ["implementation", "log2_n", "dtype"]),
}

#: transform times: rff 2 ms against RBFSampler 5 ms (2.50x), craftmaps 8 ms
#: against PolynomialCountSketch 4 ms (0.50x, a loss that needs its footnote)
TRANSFORM = {"craftmaps": 8e-3, "rff": 2e-3, "sklearn.PolynomialCountSketch": 4e-3, "sklearn.RBFSampler": 5e-3}


def value(key, combo):
    """The fake measurement of ``key`` at ``combo``."""
    if key.endswith("FeatureMaps.time_transform"):
        return TRANSFORM[combo[0]] * combo[2] / 256
    if key.endswith("track_kernel_error"):
        return 1.0 / math.sqrt(combo[2])
    if key.endswith("TransformSpeed.time_transform"):
        return {"rff": 0.1, "sklearn.RBFSampler": 0.3}[combo[0]]
    if key.endswith("time_fwht"):
        return math.nan if combo[0] == "ffht" else 7e-4  # FFHT not installed: skipped
    raise KeyError(key)


def write_result_file(machine_dir, commit, env, date, started, keys, override=None, suite=SUITE):
    """One asv result file holding ``keys``, every combination measured unless
    ``override`` (``{(key, combo): value}``) says otherwise."""
    override = override or {}
    results = {}
    for i, key in enumerate(keys):
        params, _ = suite[key]
        values = [override[key, combo] if (key, combo) in override else value(key, combo)
                  for combo in itertools.product(*params)]
        results[key] = [values, [[repr(v) for v in p] for p in params], "f" * 64, started + i, 1.5]
    data = {"commit_hash": commit, "env_name": env, "date": date,
            "params": {"arch": "x86_64", "cpu": "Fake CPU 9000", "machine": "vm", "num_cpu": "2",
                       "os": "Linux", "ram": "8000000000", "python": "3.11"},
            "python": "3.11", "requirements": {}, "env_vars": {}, "result_columns": COLUMNS,
            "results": results, "durations": {}, "version": 2}
    path = machine_dir / f"{commit[:8]}-{env}.json"
    path.write_text(json.dumps(data))  # json writes NaN as asv does
    return path


def start_tree(root, suite=SUITE):
    """``results/`` with ``machine.json`` and ``benchmarks.json``; returns the machine's folder."""
    results = root / "results"
    machine_dir = results / "vm"
    machine_dir.mkdir(parents=True)
    (machine_dir / "machine.json").write_text(json.dumps(
        {"arch": "x86_64", "cpu": "Fake CPU 9000", "machine": "vm", "num_cpu": "2", "os": "Linux",
         "ram": "8000000000", "version": 1}))
    listing = {"version": 2}
    for key, (params, names) in suite.items():
        listing[key] = {"name": key, "params": [[repr(v) for v in p] for p in params], "param_names": names,
                        "type": "time" if ".time_" in key else "track", "unit": "seconds",
                        "version": "f" * 64, "timeout": 60}
    (results / "benchmarks.json").write_text(json.dumps(listing))
    return machine_dir


def make_tree(root, with_a=True, with_b=True):
    """The fake ``.asv/results``; returns its path."""
    machine_dir = start_tree(root)
    results = machine_dir.parent
    t0 = 1_790_000_000_000
    if with_a:
        transform_key = "bench_feature_maps.FeatureMaps.time_transform"
        # first file: measured first; its rff@256 is superseded by the second file's
        write_result_file(machine_dir, COMMIT_A, "env-one", t0, t0 + DAY,
                          [transform_key, "bench_feature_maps.FeatureMapAccuracy.track_kernel_error"],
                          override={(transform_key, ("rff", "banana", 256)): 0.5})
        write_result_file(machine_dir, COMMIT_A, "env-two", t0, t0 + 2 * DAY,
                          [transform_key, "bench_feature_maps.TransformSpeed.time_transform",
                           "bench_fwht.FWHT.time_fwht"])
    if with_b:
        write_result_file(machine_dir, COMMIT_B, "env-one", t0 + DAY, t0 + 3 * DAY,
                          ["bench_feature_maps.FeatureMaps.time_transform",
                           "bench_feature_maps.FeatureMapAccuracy.track_kernel_error",
                           "bench_fwht.FWHT.time_fwht"],
                          override={("bench_fwht.FWHT.time_fwht", ("kernelmaps", 10, "float64")): None})
    return results


def run_main(results, tmp_path, capsys, *extra):
    html = tmp_path / "page.html"
    report.main(["--results", str(results), "--html", str(html), *extra])
    out, err = capsys.readouterr()
    return out, err, html.read_text(encoding="utf-8")


def test_newest_complete_commit_is_chosen(tmp_path):
    results = make_tree(tmp_path)
    run, warnings, notes = report.select_run(results)
    assert run.commit == COMMIT_A
    assert run.complete and warnings == []
    assert any(COMMIT_B[:8] in note for note in notes)  # the newer partial run was passed over


def test_files_of_one_commit_merge_and_the_later_measurement_wins(tmp_path, capsys):
    results = make_tree(tmp_path, with_b=False)
    run, _, _ = report.select_run(results)
    assert sorted(f.path.name for f in run.files) == [f"{COMMIT_A[:8]}-env-one.json", f"{COMMIT_A[:8]}-env-two.json"]
    assert run.find(report.SPEED, "time_transform") is not None       # only in the second file
    assert run.find(report.FEATURE, "track_kernel_error") is not None  # only in the first file
    transform = run.series(report.FEATURE, "time_transform", ["algorithm", "dataset", "n_components"])
    assert transform[("rff", "banana", 256)] == pytest.approx(2e-3)    # not the first file's 0.5
    out, _, _ = run_main(results, tmp_path, capsys)
    assert "merged 2 result file(s)" in out
    assert f"{COMMIT_A[:8]}-env-one.json" in out and f"{COMMIT_A[:8]}-env-two.json" in out


def test_skipped_values_do_not_make_a_run_incomplete(tmp_path):
    run, _, _ = report.select_run(make_tree(tmp_path, with_b=False))
    key = run.find(report.FWHT, "time_fwht")
    assert math.isnan(run.values[key][("ffht", 10, "float64")])
    assert run.missing == [] and run.failed == []


def test_partial_run_is_used_only_without_a_complete_one_and_warns(tmp_path, capsys):
    results = make_tree(tmp_path, with_a=False)
    run, warnings, _ = report.select_run(results)
    assert run.commit == COMMIT_B and not run.complete
    assert ("bench_feature_maps.TransformSpeed.time_transform", ("rff", "float64")) in run.missing
    assert run.failed == [("bench_fwht.FWHT.time_fwht", ("kernelmaps", 10, "float64"))]
    assert any("PARTIAL" in w for w in warnings)
    _, err, page = run_main(results, tmp_path, capsys)
    assert "WARNING" in err and "TransformSpeed.time_transform" in err and "FWHT.time_fwht" in err
    assert 'class="banner bad"' in page and "Partial run" in page
    assert "TransformSpeed.time_transform" in page


def test_complete_run_has_no_banner(tmp_path, capsys):
    _, err, page = run_main(make_tree(tmp_path), tmp_path, capsys)
    assert "WARNING" not in err
    assert "Partial run" not in page


def test_commit_prefix_selects_that_commit(tmp_path, capsys):
    results = make_tree(tmp_path)
    run, warnings, _ = report.select_run(results, commit="b2")
    assert run.commit == COMMIT_B
    assert any("PARTIAL" in w for w in warnings)  # chosen by hand, still flagged
    assert report.select_run(results, commit=COMMIT_A[:5])[0].commit == COMMIT_A
    with pytest.raises(SystemExit):
        report.select_run(results, commit="c3")
    out, _, _ = run_main(results, tmp_path, capsys, "--commit", "b2")
    assert f"commit {COMMIT_B[:12]}" in out


def test_ambiguous_prefix_and_unknown_machine_are_refused(tmp_path):
    results = make_tree(tmp_path)
    machine_dir = results / "vm"
    write_result_file(machine_dir, "a1" + "1" * 38, "env-one", 1, 1, ["bench_fwht.FWHT.time_fwht"])
    with pytest.raises(SystemExit, match="ambiguous"):
        report.select_run(results, commit="a1")
    with pytest.raises(SystemExit, match="no results for machine"):
        report.select_run(results, machine="other")


def test_ratio_column_names_the_peer_and_footnotes_a_loss(tmp_path, capsys):
    from kernelmaps import ALGORITHMS

    out, _, page = run_main(make_tree(tmp_path, with_b=False), tmp_path, capsys)
    # peer time / our time: 5 ms / 2 ms, 4 ms / 8 ms, 0.3 s / 0.1 s
    assert re.search(r"^rff\s.*2\.50× RBFSampler", out, re.MULTILINE)
    assert re.search(r"^craftmaps\s.*0\.50× PolynomialCountSketch \[1\]", out, re.MULTILINE)
    assert re.search(r"^rff\s+float64\s.*3\.00× RBFSampler", out, re.MULTILINE)
    reason = (ALGORITHMS["craftmaps"].benchmark or {}).get("slower_because") or "no stated reason"
    assert f"[1] craftmaps: {reason}" in out
    assert not re.search(r"^rff\s.*\[\d\]", out, re.MULTILINE)  # a win has no footnote
    assert "2.50× RBFSampler" in page


def test_speed_peer_is_met_at_the_same_width_and_the_target_is_named(tmp_path, capsys):
    """A workload with an ``n_components`` parameter (CRAFTMaps at its own speed width,
    its peer at that width and at 4096) and ``bench_machine.Environment``."""
    speed = "bench_feature_maps.TransformSpeed.time_transform"
    env = "bench_machine.Environment.track_vector_bits"
    suite = {speed: ([["craftmaps", "sklearn.PolynomialCountSketch"], ["float64"], [1024, 4096]],
                     ["algorithm", "dtype", "n_components"]),
             env: ([["znver4 (AVX-512)"], ["quick"]], ["numba_target", "profile"])}
    times = {("craftmaps", "float64", 1024): 0.4, ("craftmaps", "float64", 4096): math.nan,
             ("sklearn.PolynomialCountSketch", "float64", 1024): 0.2,
             ("sklearn.PolynomialCountSketch", "float64", 4096): 0.8}
    override = {(speed, combo): t for combo, t in times.items()}
    override[(env, ("znver4 (AVX-512)", "quick"))] = 512.0
    machine_dir = start_tree(tmp_path, suite)
    write_result_file(machine_dir, COMMIT_A, "env-one", 1, 1, [speed, env], override, suite)
    out, err, page = run_main(machine_dir.parent, tmp_path, capsys)
    assert "WARNING" not in err
    assert re.search(r"^craftmaps\s+float64\s+1024\s.*0\.50× PolynomialCountSketch \[1\]", out, re.MULTILINE)
    assert "2.00×" not in out  # not against the peer's 4096-wide run
    assert "Numba target znver4 (AVX-512), profile quick" in out
    assert "znver4 (AVX-512, 512-bit vectors)" in page


def test_failure_count(tmp_path, capsys):
    results = make_tree(tmp_path)
    out, _, page = run_main(results, tmp_path, capsys, "--commit", "b2")
    assert "1 failed benchmark value(s)" in out
    assert "FAILED bench_fwht.FWHT.time_fwht(kernelmaps, 10, float64)" in out
    assert "1 failed value(s)" in page
    out, _, _ = run_main(results, tmp_path, capsys)
    assert "Every benchmark value was measured or deliberately skipped." in out


_REMOTE = re.compile(r"""(?:\b(?:src|href|xlink:href)\s*=\s*["']?\s*(?:https?:)?//)|@import|url\(\s*["']?\s*(?:https?:)?//""",
                     re.IGNORECASE)


def test_page_has_no_remote_reference(tmp_path, capsys):
    _, _, page = run_main(make_tree(tmp_path), tmp_path, capsys)
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page
    assert not _REMOTE.search(page), _REMOTE.search(page).group(0)
    assert "http://" not in page and "https://" not in page
    assert not re.search(r"<(?:script|link|img|iframe)\b", page, re.IGNORECASE)


def test_remote_reference_pattern_catches_what_it_should():
    # the check above is only as good as its pattern
    for bad in ['<img src="https://x/y.png">', "<link href='http://x/s.css'>", "@import 'a.css';",
                "background: url(//cdn/x.woff)", '<use xlink:href="https://x#a"/>']:
        assert _REMOTE.search(bad), bad
    assert not _REMOTE.search('<a href="#speed-workload">speed</a>')


def test_page_draws_figures_inline(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    _, _, page = run_main(make_tree(tmp_path, with_b=False), tmp_path, capsys)
    assert page.count("<svg") >= 2  # the dataset's lines, the speed bars
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))  # figures inline in one document share no id


def test_reader_agrees_with_asv(tmp_path):
    results_mod = pytest.importorskip("asv.results")
    results = make_tree(tmp_path)
    for path in sorted((results / "vm").glob("*-*.json")):
        ours = report.read_result_file(path)
        theirs = results_mod.Results.load(str(path))
        assert ours.commit == theirs.commit_hash
        for key in theirs.get_all_result_keys():
            params = theirs.get_result_params(key)
            combos = [tuple(report._decode(v) for v in c) for c in itertools.product(*params)]
            for combo, expected in zip(combos, theirs.get_result_value(key, params)):
                got = ours.values[key][combo]
                assert (got is None and expected is None) or (math.isnan(got) and math.isnan(expected)) \
                    or got == expected


def test_history_draws_each_maps_speedup_per_machine_and_marks_compare_regressions(tmp_path, capsys):
    """Two machines, two commits each: the history's line of each machine is the peer's
    time over ours at each commit, and a logged compare's slower verdict marks its commit."""
    from benchmarks import report_history

    results = make_tree(tmp_path / "one", with_b=False)
    speed = "bench_feature_maps.TransformSpeed.time_transform"
    machine_dir = results / "vm"
    t0 = 1_790_000_000_000
    # commit B on the same machine: rff twice as slow (speed-up 3 -> 1.5)
    write_result_file(machine_dir, COMMIT_B, "env-one", t0 + DAY, t0 + 3 * DAY, [speed],
                      override={(speed, ("rff", "float64")): 0.2, (speed, ("rff", "float32")): 0.2})
    other = results / "vm-haswell"
    other.mkdir()
    (other / "machine.json").write_text((machine_dir / "machine.json").read_text())
    write_result_file(other, COMMIT_A, "env-one", t0, t0 + DAY, [speed])
    lines = report_history.speedups(results, {"rff": "sklearn.RBFSampler"})
    assert set(lines["rff"]) == {"vm: Fake CPU 9000", "vm-haswell: Fake CPU 9000"}
    assert [round(p[2], 6) for p in lines["rff"]["vm: Fake CPU 9000"]] == [3.0, 1.5]
    compare_dir = results.parent / "compare"
    compare_dir.mkdir()
    (compare_dir / "a1000000-b2000000.json").write_text(json.dumps(
        {"base": COMMIT_A, "head": COMMIT_B,
         "slower": ["bench_feature_maps.TransformSpeed.time_transform('rff', 'float64', 4096)"]}))
    assert report_history.flagged(compare_dir) == {(COMMIT_B, "rff")}
    _, _, page = run_main(results, tmp_path, capsys)
    assert "History across commits and machines" in page and page.count("<svg") >= 2
