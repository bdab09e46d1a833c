"""The paper-claim runner: declarations, outputs, and the README's generated table."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")


@pytest.fixture(scope="module")
def registry():
    sys.path.insert(0, str(ROOT))
    from benchmarks.experiments import _framework

    return _framework.registry()


def test_every_experiment_declares_its_claim_source_and_settings(registry):
    assert len(registry) >= 15
    for name, spec in registry.items():
        for field in ("paper", "source", "claim", "paper_value"):
            assert isinstance(getattr(spec, field), str) and getattr(spec, field).strip(), (name, field)
        assert isinstance(spec.quick, dict) and isinstance(spec.full, dict), name
        assert set(spec.quick) == set(spec.full), f"{name}: quick and full settings name different knobs"


def test_claims_of_every_paper_are_covered(registry):
    papers = " ".join(spec.paper for spec in registry.values())
    for author in ("Rahimi & Recht", "Yu et al., 2015", "Yu et al., NIPS 2016", "Hamid et al.", "Le, Sarlós", "Băzăvan",
                   "Rudi, Carratino & Rosasco"):
        assert author in papers, f"no experiment checks a claim of {author}'s paper"


def test_an_experiment_writes_csv_png_verdict_and_result(registry, tmp_path):
    from benchmarks.experiments import _framework

    result = _framework.execute(registry["rff-error"], quick=True, output=tmp_path)
    folder = tmp_path / "rff-error"
    assert {p.name for p in folder.iterdir()} >= {"rff-error.csv", "rff-error.png", "verdict.md", "result.json"}
    assert result["status"] in _framework.STATUSES
    assert json.loads((folder / "result.json").read_text())["ours"] == result["ours"]
    assert (folder / "rff-error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len((folder / "rff-error.csv").read_text().splitlines()) > 1
    verdict = (folder / "verdict.md").read_text()
    assert result["claim"] in verdict and result["paper_value"] in verdict and result["status"] in verdict


def test_an_experiment_without_a_verdict_is_an_error(tmp_path):
    from benchmarks.experiments import _framework

    spec = _framework.Experiment("no-verdict", lambda run: None, "p", "s", "c", "v", {}, {})
    with pytest.raises(RuntimeError, match="without a verdict"):
        _framework.execute(spec, quick=True, output=tmp_path)


def test_a_stopped_run_leaves_what_its_finished_parts_measured(tmp_path):
    from benchmarks.experiments import _framework

    def stops_after_one_part(run):
        run.record_part("first fit", {"wall": 1.5, "iterations": 12})
        raise KeyboardInterrupt  # a run stopped by hand, or by its time limit

    spec = _framework.Experiment("stopped", stops_after_one_part, "p", "s", "c", "v", {}, {})
    with pytest.raises(KeyboardInterrupt):
        _framework.execute(spec, quick=True, output=tmp_path)
    lines = (tmp_path / "stopped.parts.jsonl").read_text().splitlines()
    assert len(lines) == 1
    part = json.loads(lines[0])
    assert (part["part"], part["wall"], part["iterations"]) == ("first fit", 1.5, 12)
    assert not (tmp_path / "stopped").exists()  # no verdict without the whole run


def test_a_finished_run_removes_its_parts_file(registry, tmp_path):
    from benchmarks.experiments import _framework

    (tmp_path / "rff-error.parts.jsonl").write_text('{"part": "from an earlier, stopped run"}\n')
    _framework.execute(registry["rff-error"], quick=True, output=tmp_path)
    assert not (tmp_path / "rff-error.parts.jsonl").exists()
    assert (tmp_path / "rff-error" / "result.json").exists()

@pytest.mark.parametrize("where", ["docs", "readme"])
def test_measured_tables_are_the_generated_ones(registry, where):
    from benchmarks.experiments import measured

    folder = measured.ROOT / "benchmarks" / "experiments" / "results"
    path, names = (measured.DOCS, None) if where == "docs" else (measured.README, measured.HEADLINES)
    block = measured.readme_block(path)
    assert block == measured.table(folder, names), (
        f"{path.name}'s Measured table differs from the results: run "
        "`python -m benchmarks.experiments table --write`")
    rows = [line for line in block.splitlines() if line.startswith("| `")]
    assert rows, "the Measured table has no rows"
    for row in rows:
        name = row.split("`")[1]
        assert name in registry, f"{path.name} row names {name!r}, which is no experiment"
    assert set(measured.HEADLINES) <= set(registry), "a headline experiment is not registered"


def test_every_experiment_has_committed_results(registry):
    results = ROOT / "benchmarks" / "experiments" / "results"
    missing = [name for name in registry if not (results / name / "result.json").exists()]
    assert not missing, f"no results for {missing}: run `python -m benchmarks.experiments run NAME`"


def test_cli_lists_the_experiments(registry):
    done = subprocess.run([sys.executable, "-m", "benchmarks.experiments", "list"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in registry:
        assert name in done.stdout


def test_asv_does_not_discover_the_experiments():
    """asv imports packages only; the experiments folder must stay a plain folder."""
    import pkgutil

    import benchmarks

    assert not (ROOT / "benchmarks" / "experiments" / "__init__.py").exists()
    assert "experiments" not in {m.name for m in pkgutil.iter_modules(benchmarks.__path__)}


FALKON_EXPERIMENTS = ["falkon-convergence", "falkon-accuracy", "falkon-speed", "falkon-sklearn", "falkon-scale"]


@pytest.mark.slow
@pytest.mark.parametrize("name", FALKON_EXPERIMENTS)
def test_nystroem_solver_experiments_run_in_quick_mode(registry, name, tmp_path):
    """Each Nyström-solver experiment measures, judges and writes in its quick mode (seconds each)."""
    from benchmarks.experiments import _framework

    spec = registry[name]
    if spec.missing():
        pytest.skip(f"{name} needs {spec.missing()}")
    result = _framework.execute(spec, quick=True, output=tmp_path)
    assert result["status"] in _framework.STATUSES
    assert result["measured"] and result["mode"] == "quick"
    assert len((tmp_path / name / f"{name}.csv").read_text().splitlines()) > 1


def _sized_experiment(name, size, quick_rows, full_rows, status="holds"):
    """A registered-like experiment that writes its outputs at once, with one size knob ``rows``."""
    from benchmarks.experiments import _framework

    def function(run):
        run.write_csv([{"rows": run.settings["rows"]}])
        fig, _ = _framework.figure()
        run.save_figure(fig)
        run.verdict(status, ours="ours", measured=[("what", "figure")])

    return _framework.Experiment(name, function, "p", "s", "c", "v", {"rows": quick_rows}, {"rows": full_rows},
                                 sizes=(size,))


def _heading_and_cell(folder, name):
    from benchmarks.experiments import measured

    heading = (folder / name / "verdict.md").read_text().splitlines()[0]
    cells = [line.split(" | ")[4] for line in measured.table(folder).splitlines() if line.startswith(f"| `{name}`")]
    assert len(cells) == 1
    return heading, cells[0]


def test_verdict_heading_and_table_cell_give_the_mode_and_the_size(registry, tmp_path):
    from benchmarks.experiments import _framework
    from benchmarks.experiments._sizes import Size

    spec = _sized_experiment("sized", Size("rows", "{} rows"), 20_000, 10**6)
    _framework.execute(spec, quick=True, output=tmp_path / "quick")
    assert _heading_and_cell(tmp_path / "quick", "sized") == ("# sized: holds (quick: 20 000 rows)",
                                                              "holds (quick: 20 000 rows)")
    assert "**Size**: ran at 20 000 rows; the claim names no size" in (tmp_path / "quick/sized/verdict.md").read_text()
    _framework.execute(spec, quick=False, output=tmp_path / "full")
    assert _heading_and_cell(tmp_path / "full", "sized") == ("# sized: holds (full)", "holds (full)")


def test_a_run_below_the_claimed_size_is_never_shown_as_a_bare_holds(registry, tmp_path):
    from benchmarks.experiments import _framework
    from benchmarks.experiments._sizes import Size

    spec = _sized_experiment("claimed", Size("rows", "{} rows", claim=10**6), 20_000, 10**6)
    result = _framework.execute(spec, quick=True, output=tmp_path / "quick")
    shown = "holds at 20 000 rows (quick); claim at 10⁶ rows not tested"
    assert _heading_and_cell(tmp_path / "quick", "claimed") == (f"# claimed: {shown}", shown)
    assert result["size"] == [{"setting": "rows", "ran": 20_000, "ran_text": "20 000 rows", "claim": 10**6,
                               "claim_text": "10⁶ rows", "reached": False}]
    assert "ran at 20 000 rows; the claim is at 10⁶ rows: this run is below it" in (
        tmp_path / "quick/claimed/verdict.md").read_text()
    _framework.execute(spec, quick=False, output=tmp_path / "full")
    assert _heading_and_cell(tmp_path / "full", "claimed")[1] == "holds (full)"


def test_committed_verdicts_and_tables_show_mode_and_size(registry):
    from benchmarks.experiments import _framework, measured
    from benchmarks.experiments._sizes import shown_status

    for result in measured.results(_framework.RECORDED):
        folder = _framework.RECORDED / (result["name"] + ("" if result["target"] == "host" else f"@{result['target']}"))
        heading = (folder / "verdict.md").read_text().splitlines()[0]
        shown = shown_status(result)
        assert heading.endswith(f": {shown}") and shown not in _framework.STATUSES, heading
        assert f"({result['mode']}" in shown, heading
        if any(size["reached"] is False for size in result["size"]):
            assert "not tested" in shown, heading
    falkon = json.loads((_framework.RECORDED / "falkon-scale" / "result.json").read_text())
    # recorded at the sizes its claim names, so its verdict shows the mode alone
    assert shown_status(falkon).endswith("(full)") and all(size["reached"] for size in falkon["size"])
    for path in (measured.DOCS, measured.README):
        cells = {line.split(" | ")[4] for line in measured.readme_block(path).splitlines() if line.startswith("| `")}
        assert not cells & set(_framework.STATUSES), f"{path.name} shows a verdict without its mode"


def test_rerender_reproduces_the_committed_results(registry, tmp_path):
    """From a result.json without its size entries and a stale verdict.md, ``rerender``
    writes back exactly the committed files."""
    from benchmarks.experiments import _framework
    from benchmarks.experiments.__main__ import main

    folders = sorted(p.parent for p in _framework.RECORDED.glob("*/result.json"))
    for folder in folders:
        result = json.loads((folder / "result.json").read_text())
        del result["size"]
        (tmp_path / folder.name).mkdir()
        (tmp_path / folder.name / "result.json").write_text(json.dumps(result, indent=1, ensure_ascii=False))
        (tmp_path / folder.name / "verdict.md").write_text("stale\n")
    assert main(["rerender", "--out", str(tmp_path)]) == 0
    for folder in folders:
        for name in ("result.json", "verdict.md"):
            assert (tmp_path / folder.name / name).read_bytes() == (folder / name).read_bytes(), (folder.name, name)


def test_every_experiment_declares_its_sizes_and_the_sizes_its_claim_names(registry):
    from benchmarks.experiments import _framework
    from benchmarks.experiments._sizes import Size

    claimed = {"falkon-scale": {"rows": 10**6, "m": 16384, "dask_rows": 10**7, "dask_m": 4096},
               "falkon-speed": {"sizes": [10**5, 2 * 10**5], "m": 8192}, "falkon-sklearn": {"n_train": 50_000},
               "dask-out-of-core": {"rows": 10**7}, "dask-overhead": {"rows": 10**6},
               "rff-table1": {"forest.n_train": 500_000}}
    for name, spec in registry.items():
        assert spec.sizes, f"{name} declares no size"
    for name, sizes in claimed.items():
        assert {s.setting: s.claim for s in registry[name].sizes if s.claim is not None} == sizes, name
    with pytest.raises(ValueError, match="'rows' is not in its quick settings"):
        _framework.experiment("bad-size", paper="p", source="s", claim="c", paper_value="v", quick={}, full={},
                              size=Size("rows", "{} rows"))


@pytest.mark.parametrize("value, text", [(300, "300"), (4096, "4096"), (20_000, "20 000"), (16_384, "16 384"),
                                         (10**6, "10⁶"), (2 * 10**5, "2·10⁵"), (1_048_576, "1 048 576"),
                                         ("letter", "letter")])
def test_sizes_read_as_the_claims_write_them(value, text):
    from benchmarks.experiments._sizes import count

    assert count(value) == text


@pytest.mark.parametrize("args, message", [
    (["table", "--out", "{missing}"], "does not exist"),
    (["table", "--out", "{file}"], "is a file, not a folder"),
    (["table", "--write", "--out", "{file}"], "is a file, not a folder"),
    (["table", "--out", "{empty}"], "holds no NAME/result.json"),
    (["rerender", "--out", "{missing}"], "does not exist"),
    (["run", "rff-error", "--quick", "--out", "{file}"], "is a file, not a folder"),
    (["run", "rff-error", "--quick", "--out", "{file}/under"], "cannot be created"),
    (["all", "--quick", "--out", "{file}"], "is a file, not a folder"),
    (["run", "no-such-experiment"], "unknown experiment"),
])
def test_cli_bad_paths_and_names_are_errors(registry, tmp_path, capsys, args, message):
    """Each exits 2 with the problem named, before any experiment runs or any file is written."""
    from benchmarks.experiments import measured
    from benchmarks.experiments.__main__ import main

    (tmp_path / "file").write_text("not a folder\n")
    (tmp_path / "empty").mkdir()
    paths = {key: str(tmp_path / key) for key in ("missing", "file", "empty")}
    readme, docs = measured.README.read_bytes(), measured.DOCS.read_bytes()
    with pytest.raises(SystemExit) as exit_:
        main([arg.format(**paths) for arg in args])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "not a folder\n"
    assert measured.README.read_bytes() == readme and measured.DOCS.read_bytes() == docs


def test_the_readme_shows_at_most_ten_headline_rows():
    from benchmarks.experiments import measured

    rows = [line for line in measured.readme_block(measured.README).splitlines() if line.startswith("| `")]
    assert 0 < len(rows) <= 10, f"the README's Measured block has {len(rows)} rows; docs/measured.md holds them all"


def test_the_readme_size_guide_is_the_generated_one():
    from benchmarks.experiments import _size_guide_table as guide
    from benchmarks.experiments import measured

    block = measured.readme_block(measured.README, guide.BEGIN, guide.END)
    assert block == guide.table(measured.ROOT / "benchmarks" / "experiments" / "results"), (
        "the README's size guide differs from the recorded size-guide result: run "
        "`python -m benchmarks.experiments table --write`")


def test_the_size_guide_names_its_mode_and_every_refusal(tmp_path):
    """A quick run says which sizes stand in for 10^5 and 10^6; a refused fit shows the memory it needed."""
    import csv

    from benchmarks.experiments import _size_guide_table as guide
    from benchmarks.experiments import size_guide

    settings = {"sizes": [2000, 10000], "exact_rows": 1000, "d": 16, "rff_components": 512, "bin_grids": 16,
                "bin_gamma": 0.1, "nystroem_m": 256, "logistic_m": 128, "workers": 2}
    folder = tmp_path / "size-guide"
    folder.mkdir()
    (folder / "result.json").write_text(json.dumps({
        "settings": settings, "mode": "quick", "command": "python -m benchmarks.experiments run size-guide --quick",
        "date": "2026-01-01", "machine_line": "a machine", "csv": "size-guide.csv"}))
    fitted = {"status": "fit", "fit_seconds": 1.5, "metric": "R²", "score": 0.9, "peak_gib": 0.5, "converged": True}
    rows = [{"guide_row": "exact", "n": 1000, **fitted},
            {"guide_row": "exact", "n": 2000, "status": "refused", "needs": "149.0 GiB"},
            {"guide_row": "logistic", "n": 10000, **fitted, "newton_steps": 20, "cg_iterations": 380, "passes": 401,
             "converged": False}]
    with open(folder / "size-guide.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=sorted({key for row in rows for key in row}))
        writer.writeheader()
        writer.writerows(rows)
    table = guide.table(tmp_path)
    assert "**Quick run**: 2·10³ and 10⁴ rows stand in for 10⁵ and 10⁶" in table
    assert "| n = 2·10³ | n = 10⁴ |" in table
    assert "refused before any work: needs 149.0 GiB" in table
    assert "20 Newton steps, 380 CG iterations: 401 passes · stopped at max_iter" in table
    assert table.count("not measured") == 2 * len(size_guide.GUIDE) - 2  # exact at 2000, logistic at 10000


def test_the_size_guide_reads_the_memory_of_an_exact_learners_refusal():
    """The refusal that kernelmaps raises before any work, read into the guide's cell."""
    import numpy as np

    from benchmarks.experiments import size_guide

    n = 1_000_000
    fit = size_guide._learners({"lam": 1e-6, "seed": 0}, 0.1, n)["exact"]
    result = size_guide._measure(size_guide.ROWS["exact"], fit, np.zeros((n, 2), np.float32), np.zeros(n), None, None)
    assert result["status"] == "refused", result
    assert result["needs"].endswith(("TiB", "PiB")), result  # 16 n² bytes = 14.6 TiB
