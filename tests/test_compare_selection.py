"""``python -m benchmarks.compare``'s selection: which benchmark modules a pattern can select, the
contract of the suite's keys it relies on, and a worker that imports only the modules it may need."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from benchmarks import _compare_selection as selection
from benchmarks import _compare_worker as worker
from benchmarks import compare as cmp


SELECTION_CASES = [
    r"time_transform\('rff'", "time_transform", r"\('rff'", r"rff', 'banana', 256\)$", r"s\.time_", r"fwht\(",
    r"(?i)featuremaps\.TIME_TRANSFORM\(", r"Maps\.time_transform\('r", r"\.track_\w+\(", ".", r"e\(|^bench_dask",
    r"FWHT\.time_fwht\('kernelmaps', 1[04]", r"time_transform\(.rff.|^bench_machine", r"(?<=\.)time_fit\(",
    r"Environment\.track_vector_bits\('\w+ \(", r"^bench_feature_maps\.FeatureMaps", r"bench_\w+\.FWHT",
    r"_(fit|solve)\('", r"(?:Mfeat|Solver)\.time_"]


@pytest.mark.parametrize("pattern, wanted, left_out", [
    (r"time_transform\('rff'", {"bench_feature_maps", "bench_minhash"}, {"bench_kernel_machines", "bench_fwht"}),
    ("time_transform", {"bench_feature_maps", "bench_dot_product"}, {"bench_kernel_machines", "bench_learned_maps"}),
    (r"FeatureMaps\.time_transform\('(rff|orf)', 'banana'", {"bench_feature_maps"}, {"bench_dot_product"}),
    (r"bench_fwht|MinHashTransform\.time_transform\('binary'", {"bench_fwht", "bench_minhash"}, {"bench_feature_maps"}),
    ("^bench_f", {"bench_fwht", "bench_feature_maps"}, {"bench_minhash"}),
    ("(?i)BENCH_DASK", {"bench_dask"}, {"bench_fwht"}),
    # a parameter can hold any text without a name's markers: every module
    ("tensor_sketch", set(selection.module_names()), set()),
    ("rff|time_fwht", set(selection.module_names()), set()),
])
def test_a_pattern_selects_modules_from_their_source(pattern, wanted, left_out):
    chosen = set(selection.selected_modules(pattern))
    assert wanted <= chosen and not (left_out & chosen), chosen


def test_the_suite_keeps_the_contract_the_selection_relies_on():
    """Every key of this suite: its name part is among those read from the source, and its
    parameter part holds no name marker and no word character before a parenthesis."""
    found, unlisted = worker.discover("")
    assert found and not unlisted
    for module in selection.module_names():
        names = set(selection.benchmark_names(module))
        listed = {name.split("(")[0] for name, *_ in found if name.startswith(module + ".")}
        assert listed and listed <= names, (module, listed - names)
    assert all(selection.parameters_follow_the_contract(name) for name, *_ in found)
    for pattern in SELECTION_CASES:  # no module whose keys match is left out
        matching = {name.split(".")[0] for name, *_ in found if re.search(pattern, name)}
        assert matching and matching <= set(selection.selected_modules(pattern)), pattern
    assert not selection.parameters_follow_the_contract("m.C.time_a('bench_x')")
    assert not selection.parameters_follow_the_contract("m.C.time_a('f(x)')")


def _fake_suite(tmp_path):
    """A ``benchmarks`` package with this worker, one module that imports and one that raises."""
    package = tmp_path / "benchmarks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("_compare_worker.py", "_compare_selection.py"):
        shutil.copy(cmp.ROOT / "benchmarks" / name, package / name)
    (package / "bench_good.py").write_text(textwrap.dedent("""
        class Good:
            params = [[10, 20]]

            def time_work(self, n):
                sum(range(n))
        """))
    (package / "bench_raises.py").write_text(textwrap.dedent("""
        import pathlib

        pathlib.Path(__file__).with_name("imported").write_text("yes")
        raise RuntimeError("this module cannot be imported here")


        class Raises:
            def time_other(self):
                pass
        """))
    return package


def _run_worker(root, pattern):
    spec, out = root / "spec.json", root / "out.json"
    spec.write_text(json.dumps({"pattern": pattern, "samples": 1, "kinds": ["time", "track"]}))
    completed = subprocess.run([sys.executable, "-m", "benchmarks._compare_worker", str(spec), str(out)], cwd=root,
                               env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    return json.loads(out.read_text())


def test_the_worker_imports_only_the_modules_a_pattern_can_select(tmp_path):
    package = _fake_suite(tmp_path)
    for pattern in ("bench_good", r"time_work\(", r"^bench_good\.Good\.time_work\(10"):
        out = _run_worker(tmp_path, pattern)
        assert set(out["results"]) >= {"bench_good.Good.time_work(10)"} and out["unlisted"] == {}
        assert not (package / "imported").exists(), pattern
    out = _run_worker(tmp_path, "")  # may select anything: the module is imported, and absent here
    assert (package / "imported").exists()
    assert out["unlisted"] == {"bench_raises": "import of bench_raises: RuntimeError: this module cannot be imported here"}
    assert set(out["results"]) == {"bench_good.Good.time_work(10)", "bench_good.Good.time_work(20)"}
