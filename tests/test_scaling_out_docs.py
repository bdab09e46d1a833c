"""docs/scaling-out.md's examples of data on disk run as printed, on a LocalCluster bound to
127.0.0.1, and none of them sends its data inside the task graph.

The "files" block (``<!-- disk-example: files -->``) writes small files; then one
interpreter, with one cluster, runs each other marked block from an empty namespace,
followed by the fit the page describes (Gaussian random features, then one-pass least
squares, out of core), and reports its accuracy and every "Sending large graph"
warning. Dask gives that warning when a graph it sends to the scheduler is larger than
``distributed.admin.large-graph-warning-threshold``; here the threshold is 2 MB, below
the 6.4 MB of the features, so an example that embedded its array would warn. The
naive load, ``da.from_array(np.load(path, mmap_mode="r"))``, runs beside the examples
to show that it does.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the 'dask' extra is absent: pip install 'kernelmaps[dask]'")

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "scaling-out.md"
EXAMPLES = ("npy", "parquet", "zarr")
#: Above the graphs of the fit itself (its sample of rows is under 1 MB), below the features' 6.4 MB.
GRAPH_LIMIT = "2MB"

NAIVE = """\
import dask.array as da
import numpy as np

X = da.from_array(np.load("rows.npy", mmap_mode="r"), chunks=(25_000, 16))
y = da.from_array(np.load("labels.npy", mmap_mode="r"), chunks=25_000)
"""

HARNESS = """\
import json, sys, warnings

from distributed import Client, LocalCluster

from kernelmaps import LeastSquaresClassifier, RandomFourierFeatures

def fit(namespace):
    X, y = namespace["X"], namespace["y"]
    assert X.shape == (100_000, 16) and X.dtype == "float32" and y.shape == (100_000,), (X, y)
    rff = RandomFourierFeatures(n_components=256, gamma="scale", random_state=0).fit(X)
    clf = LeastSquaresClassifier(alpha=1.0).fit(X, y, feature_map=rff)
    return float((clf.predict(rff.transform(X)) == y).mean().compute())

with Client(LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                         silence_logs=40)):
    report = {}
    for name, code in json.loads(sys.stdin.read()).items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            namespace = {}
            try:
                exec(code, namespace)
                report[name] = {"accuracy": fit(namespace)}
            except Exception as exc:
                report[name] = {"error": f"{type(exc).__name__}: {exc}"}
        report[name]["large_graphs"] = [str(w.message).split(chr(10))[0] for w in caught
                                        if "large graph" in str(w.message)]
print(json.dumps(report))
"""


def example(name):
    """The code of the block marked ``<!-- disk-example: name -->`` in docs/scaling-out.md."""
    text = PAGE.read_text()
    marker = f"<!-- disk-example: {name} -->"
    assert marker in text, f"docs/scaling-out.md has no {marker} block"
    return re.search(r"```python\n(.*?)```", text.split(marker, 1)[1], re.S).group(1)


def run_python(code, folder, stdin=""):
    environment = dict(os.environ, DASK_DISTRIBUTED__ADMIN__LARGE_GRAPH_WARNING_THRESHOLD=GRAPH_LIMIT)
    return subprocess.run([sys.executable, "-c", code], cwd=folder, input=stdin, capture_output=True, text=True,
                          timeout=600, env=environment)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """``{name: {"accuracy" or "error", "large_graphs"}}`` of every example and of the naive load."""
    for module in ("pyarrow", "zarr"):  # the files block writes every format
        pytest.importorskip(module, reason=f"the docs' disk examples need {module}: pip install {module}")
    folder = tmp_path_factory.mktemp("disk")
    done = run_python(example("files"), folder)
    assert done.returncode == 0, f"the files example failed:\n{done.stderr[-3000:]}"
    blocks = {name: example(name) for name in EXAMPLES} | {"naive": NAIVE}
    done = run_python(HARNESS, folder, stdin=json.dumps(blocks))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_a_disk_example_fits_without_sending_its_data_in_the_graph(report, name):
    result = report[name]
    assert "error" not in result, f"the {name} example failed: {result['error']}"
    assert not result["large_graphs"], f"the {name} example sent its data in the graph: {result['large_graphs']}"
    assert 0.65 < result["accuracy"] <= 1.0, result  # two nearly balanced classes: chance is about 0.5


@pytest.mark.slow
def test_the_check_catches_an_array_embedded_in_the_graph(report):
    """The naive load, a memory-mapped array given to from_array, draws the warning the examples avoid."""
    assert report["naive"]["large_graphs"], report["naive"]
