"""The registry as the tests see it: names by kind, and small estimators to test."""

import scipy.sparse as sp
from sklearn.utils import get_tags

from kernelmaps import ALGORITHMS as REGISTRY

ALL = sorted(REGISTRY)
FEATURE_MAPS = sorted(name for name, cls in REGISTRY.items() if cls.kind == "feature_map")


def takes(name, parameter):
    """Whether the constructor of ``REGISTRY[name]`` has the parameter ``parameter``."""
    return parameter in REGISTRY[name]().get_params()


#: Maps whose width is their ``n_components`` parameter. The others derive it from
#: the input (``AdditiveChi2Map``: ``n_features * (2 sample_steps - 1)``) and test
#: their width in their own module.
SIZED_MAPS = [name for name in FEATURE_MAPS if takes(name, "n_components")]
#: Maps drawn from a ``random_state``; the others are deterministic.
RANDOM_MAPS = [name for name in FEATURE_MAPS if takes(name, "random_state")]


def make(name, **extra):
    """``REGISTRY[name]`` with its small ``test_params``, seeded, updated by ``extra``.

    A deterministic estimator has no seed: a ``random_state`` in ``extra`` is
    dropped for it.
    """
    cls = REGISTRY[name]
    params = dict(cls.test_params)
    if "n_components" in extra and takes(name, "n_grids") and not takes(name, "n_components"):
        # a binning map's width is its number of grids
        extra["n_grids"] = extra.pop("n_components")
    if takes(name, "random_state"):
        params.setdefault("random_state", 0)
    else:
        extra.pop("random_state", None)
    params.update(extra)
    return cls(**params)


def domain(name, X):
    """``X`` moved into the input domain of ``REGISTRY[name]``: ``|X|`` for an
    estimator of non-negative input (scikit-learn's ``positive_only`` tag: the
    histogram maps), ``X`` itself for the others. Dense or sparse."""
    return abs(X) if get_tags(REGISTRY[name]()).input_tags.positive_only else X


def dense(Z):
    """A map's output as a dense array: sparse-output maps (random binning) give CSR."""
    return Z.toarray() if sp.issparse(Z) else Z


def fit(est, X, y, **fit_params):
    """Fit a map unsupervised (supervised when it needs labels) or a learner on ``X, y``."""
    if est.kind == "feature_map" and getattr(est, "objective", None) != "classification":
        return est.fit(X, **fit_params)
    return est.fit(X, y, **fit_params)


def output(est, X):
    """What a fitted estimator gives for ``X``: a map's features, a learner's predictions."""
    return est.transform(X) if est.kind == "feature_map" else est.predict(X)


def stored(Z):
    """The values a map's output stores: the non-zeros of a sparse output, every entry of a dense one."""
    return Z.data if sp.issparse(Z) else Z
