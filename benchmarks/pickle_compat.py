"""Do estimators pickled by one version of kernelmaps load, and predict the same, in another?

Usage::

    python -m benchmarks.pickle_compat write DIR [--only rff,pegasos]   # the old code first on PYTHONPATH
    python -m benchmarks.pickle_compat check DIR                       # with the new code

``write`` fits every registered estimator with its ``test_params`` (seeded with
``random_state=0`` where it takes one) on small fixed data, as the tests do
(``tests/registry.py``): a feature map unsupervised unless it learns from labels,
a classifier on three classes, a regressor on a smooth target, non-negative
input for the maps that need it. It pickles each fitted estimator, with what it
gives on fixed test rows (``transform`` for a map; ``predict`` and, where the
estimator has one, ``decision_function`` for a learner), to ``DIR/<name>.pkl``,
and lists in ``DIR/globals.json`` the classes and functions each pickle names by
module path.

``check`` loads each pickle, recomputes the outputs and requires them equal bit
for bit. It prints one line per estimator, then a summary, and exits 1 when an
estimator fails to load or gives other output. A private module path that the
old pickles name and the new code lacks shows up here as a load failure naming
that path.

This is a compatibility check to run by hand across a change of module layout,
not a benchmark: it defines none, so asv times nothing here.
"""

import argparse
import io
import json
import pickle
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils import get_tags

import kernelmaps

#: Rows of the fitting data and of the test rows whose outputs are compared.
N_TRAIN, N_TEST, N_FEATURES = 80, 20, 6


def fixed_data():
    """``(X_train, X_test, labels, targets)``: standard normal rows, three classes and a smooth target."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_TRAIN + N_TEST, N_FEATURES))
    labels = np.digitize(X[:N_TRAIN, 0] + 0.5 * X[:N_TRAIN, 1], [-0.5, 0.5])
    targets = np.sin(X[:N_TRAIN, 0]) + 0.5 * X[:N_TRAIN, 1]
    return X[:N_TRAIN], X[N_TRAIN:], labels, targets


def build(name):
    """``ALGORITHMS[name]`` with its ``test_params``, seeded when it takes a ``random_state``."""
    cls = kernelmaps.ALGORITHMS[name]
    params = dict(cls.test_params)
    if "random_state" in cls().get_params():
        params.setdefault("random_state", 0)
    return cls(**params)


def fit(est, X, labels, targets):
    """Fit as the tests do: a map without labels unless it learns from them."""
    if est.kind == "feature_map" and getattr(est, "objective", None) != "classification":
        return est.fit(X)
    return est.fit(X, labels if is_classifier(est) or est.kind == "feature_map" else targets)


def outputs(est, X):
    """What a fitted estimator gives for ``X``: ``{method: output}``."""
    if est.kind == "feature_map":
        return {"transform": est.transform(X)}
    found = {"predict": est.predict(X)}
    if hasattr(est, "decision_function"):
        found["decision_function"] = est.decision_function(X)
    return found


def identical(a, b):
    """Same type of container, shape, dtype and bits (a sparse output also its structure)."""
    if sp.issparse(a) or sp.issparse(b):
        if not (sp.issparse(a) and sp.issparse(b)) or a.shape != b.shape:
            return False
        a, b = a.tocsr(), b.tocsr()
        return all(identical(x, y) for x, y in ((a.indptr, b.indptr), (a.indices, b.indices), (a.data, b.data)))
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


class RecordingUnpickler(pickle.Unpickler):
    """An unpickler that notes every ``(module, name)`` the pickle looks up."""

    def __init__(self, file):
        super().__init__(file)
        self.looked_up = []

    def find_class(self, module, name):
        self.looked_up.append(f"{module}.{name}")
        return super().find_class(module, name)


def load(data):
    """``(object, the module paths it named)`` from pickled bytes."""
    unpickler = RecordingUnpickler(io.BytesIO(data))
    return unpickler.load(), unpickler.looked_up


def input_domain(est, X):
    """``|X|`` for a map of non-negative input (scikit-learn's ``positive_only`` tag), else ``X``."""
    return np.abs(X) if get_tags(est).input_tags.positive_only else X


def write(directory, names=None):
    """Fit and pickle ``names`` (every registered estimator by default) into ``directory``."""
    unknown = sorted(set(names or ()) - set(kernelmaps.ALGORITHMS))
    if unknown:
        raise SystemExit(f"not registered: {', '.join(unknown)}")
    directory.mkdir(parents=True, exist_ok=True)
    X, X_test, labels, targets = fixed_data()
    named = {}
    for name in sorted(names or kernelmaps.ALGORITHMS):
        est = build(name)
        X_fit, X_out = input_domain(est, X), input_domain(est, X_test)
        fit(est, X_fit, labels, targets)
        data = pickle.dumps({"estimator": est, "X": X_out, "outputs": outputs(est, X_out)},
                            protocol=pickle.HIGHEST_PROTOCOL)
        (directory / f"{name}.pkl").write_bytes(data)
        named[name] = sorted({path for path in load(data)[1] if path.startswith("kernelmaps")})
        print(f"{name:32s} written ({len(data)} bytes)")
    (directory / "globals.json").write_text(json.dumps(named, indent=1, sort_keys=True))
    print(f"{len(named)} estimators pickled to {directory} by kernelmaps at {Path(kernelmaps.__file__).parent}")


def check(directory):
    """Load every pickle of ``directory`` and compare its outputs; 1 if any fails, else 0."""
    paths = sorted(directory.glob("*.pkl"))
    if not paths:
        raise SystemExit(f"no pickles in {directory}: run `python -m benchmarks.pickle_compat write {directory}` first")
    named = json.loads((directory / "globals.json").read_text()) if (directory / "globals.json").is_file() else {}
    failed = []
    for path in paths:
        name = path.stem
        try:
            saved, _ = load(path.read_bytes())
        except Exception as error:  # the point of the check: report whatever stops a load
            failed.append(name)
            print(f"{name:32s} FAILED to load: {type(error).__name__}: {error}")
            continue
        now = outputs(saved["estimator"], saved["X"])
        differ = [method for method, before in saved["outputs"].items() if not identical(before, now[method])]
        if differ:
            failed.append(name)
            print(f"{name:32s} FAILED: different {', '.join(differ)}")
        else:
            private = [p for p in named.get(name, ()) if "._" in p]
            print(f"{name:32s} ok ({', '.join(saved['outputs'])} identical"
                  + (f"; names {', '.join(private)}" if private else "") + ")")
    print(f"{len(paths) - len(failed)} of {len(paths)} estimators load and give identical output"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    missing = sorted(set(kernelmaps.ALGORITHMS) - {p.stem for p in paths})
    if missing:
        print(f"registered but not pickled: {', '.join(missing)}")
    return 1 if failed else 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pickle_compat", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("write", "check"))
    parser.add_argument("directory", type=Path)
    parser.add_argument("--only", type=lambda text: text.split(","), default=None,
                        help="write: comma-separated registry names (default: every estimator)")
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.directory, args.only)
        return 0
    return check(args.directory)


if __name__ == "__main__":
    sys.exit(main())
