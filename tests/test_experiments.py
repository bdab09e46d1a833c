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
