"""Every learner, fitted with its defaults on an ordinary problem, gives a useful model.

A new user's first fit uses the defaults. Each registered learner is fitted with
them (only ``random_state`` is set) on 300 and on 5000 standardized training rows
of 20 features, a classification and a regression problem, and must beat the
trivial model (the majority class, the mean) on the same 1000 held-out rows by a
clear margin, without an error or a warning of any kind: a default that only
suits large problems (a number of centres above the rows) fails here. Learners
that work on features rather than on inputs (no kernel of their own) are fitted
behind a default :class:`RandomFourierFeatures`, as the README's pipelines use
them (``benchmarks.defaults_check.default_model``, which runs the same fits on
the bundled datasets).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import is_classifier
from sklearn.datasets import make_classification, make_friedman1
from sklearn.preprocessing import StandardScaler

from benchmarks.defaults_check import default_model
from kernelmaps import ExactMKLClassifier, ExactMKLRegressor
from registry import REGISTRY

N_TRAIN, N_TEST, N_FEATURES = 5000, 1000, 20
#: Per number of training rows: the accuracy above the majority class's, and the R²
#: (the mean predictor's is 0), that a useful model reaches on these problems; a
#: constant model scores at or below zero on both. The defaults gave margins of
#: 0.17 (Pegasos) to 0.39 and R² of 0.39 (least squares on default random Fourier
#: features) to 0.92 on 300 rows; margins of 0.28 to 0.44 and R² of 0.51 to 0.99
#: on 5000.
THRESHOLDS = {300: (0.10, 0.25), N_TRAIN: (0.15, 0.4)}

LEARNERS = sorted(name for name, cls in REGISTRY.items() if cls.kind != "feature_map")


def _split(X, y):
    X = StandardScaler().fit_transform(X)
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


@pytest.fixture(scope="module")
def problems():
    X, y = make_classification(n_samples=N_TRAIN + N_TEST, n_features=N_FEATURES, n_informative=10,
                               random_state=0)
    Xr, yr = make_friedman1(n_samples=N_TRAIN + N_TEST, n_features=N_FEATURES, noise=0.5, random_state=0)
    return {"classification": _split(X, y), "regression": _split(Xr, yr)}


@pytest.mark.parametrize("n_train", sorted(THRESHOLDS))
@pytest.mark.parametrize("name", LEARNERS)
def test_defaults_beat_the_trivial_model_without_warnings(name, n_train, problems):
    model = default_model(name)
    classifier = is_classifier(REGISTRY[name]())
    X, y, X_test, y_test = problems["classification" if classifier else "regression"]
    margin, min_r2 = THRESHOLDS[n_train]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(X[:n_train], y[:n_train])
        score = model.score(X_test, y_test)
    if classifier:
        majority = np.bincount(y_test).max() / len(y_test)
        assert score > majority + margin, f"{name}: accuracy {score:.3f}, majority {majority:.3f}"
    else:
        assert score > min_r2, f"{name}: R² {score:.3f} on defaults"


@pytest.mark.parametrize("cls", [ExactMKLRegressor, ExactMKLClassifier])
def test_an_alpha_that_zeroes_every_kernel_warns_of_a_constant_model(cls, problems):
    X, y, _, _ = problems["classification" if cls is ExactMKLClassifier else "regression"]
    X, y = X[:400], y[:400]
    with pytest.warns(UserWarning, match="alpha_max"):
        model = cls(alpha=100.0).fit(X, y)
    assert not np.any(model.kernel_weights_)
