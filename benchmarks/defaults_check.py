"""Every classifier, fitted with its defaults, on every bundled dataset.

``python -m benchmarks.defaults_check [--learners kernel_svc,ecoc] [--datasets banana,letter]
[--rows 5000]`` fits each registered classifier with its default parameters (only
``random_state=0`` set) on the first ``--rows`` training rows of each bundled
dataset, standardized on those rows, as a new user would. Learners that work on
features rather than inputs (no kernel of their own) are fitted behind a default
``RandomFourierFeatures``. It prints, per fit, the test accuracy against the majority
class's, the seconds taken, and every warning raised (of any kind): the defaults
should give a useful model, on few rows as on many, without one. The bundled sets
are all classification problems; the regressors are checked on a synthetic problem
by ``tests/test_defaults.py``.
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.base import is_classifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import kernelmaps
from benchmarks.machine import describe
from kernelmaps import datasets

#: The parameters by which a learner brings its own kernel.
OWN_KERNEL = ("gamma", "kernel", "n_components", "per_dimension")


def default_model(name):
    """``ALGORITHMS[name]`` with its defaults, seeded, behind default RFF if it takes features."""
    est = kernelmaps.ALGORITHMS[name]()
    params = est.get_params()
    if "random_state" in params:
        est.set_params(random_state=0)
    if not any(p in params for p in OWN_KERNEL):
        return make_pipeline(kernelmaps.RandomFourierFeatures(random_state=0), est)
    return est


def classifiers():
    return sorted(name for name, cls in kernelmaps.ALGORITHMS.items()
                  if cls.kind != "feature_map" and is_classifier(cls()))


def bundled():
    return sorted(name for name in datasets.names() if datasets.info(name).kind == "bundled")


def check(name, dataset, rows):
    """One default fit: ``(accuracy, majority, seconds, warnings as 'Category: message')``."""
    data = datasets.load(dataset)
    scaler = StandardScaler().fit(data.X_train[:rows])
    X, y = scaler.transform(data.X_train[:rows]), data.y_train[:rows]
    X_test, y_test = scaler.transform(data.X_test), data.y_test
    model = default_model(name)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
        seconds = time.perf_counter() - start
        accuracy = model.score(X_test, y_test)
    majority = np.unique(y_test, return_counts=True)[1].max() / len(y_test)
    messages = [f"{w.category.__name__}: {w.message}" for w in caught]
    return accuracy, majority, seconds, messages


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default=",".join(classifiers()))
    parser.add_argument("--datasets", default=",".join(bundled()))
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args(argv)
    print(describe())
    print(f"{'learner':34s} {'dataset':10s} {'accuracy':>8s} {'majority':>8s} {'seconds':>8s}  warnings")
    failures = 0
    for dataset in args.datasets.split(","):
        for name in args.learners.split(","):
            try:
                accuracy, majority, seconds, messages = check(name, dataset, args.rows)
            except ValueError as error:  # an exact baseline that refuses the size, say
                print(f"{name:34s} {dataset:10s} refused: {error}")
                continue
            failures += bool(messages) or accuracy <= majority
            print(f"{name:34s} {dataset:10s} {accuracy:8.4f} {majority:8.4f} {seconds:8.1f}  "
                  f"{len(messages)}" + "".join(f"\n    {m}" for m in messages), flush=True)
    print(f"{failures} fits with a warning or no better than the majority class")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
