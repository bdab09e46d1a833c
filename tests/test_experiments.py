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
