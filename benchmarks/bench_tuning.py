"""Choosing ``alpha`` from one pass: the cross-validated least-squares learners beside scikit-learn's.

On the suite's prepared ``magic04`` and its RFF features (D = 512, knn50
bandwidth), each learner picks ``alpha`` from the same 13-value grid by exact
leave-one-out:

* ``least_squares_cv`` (``LeastSquaresClassifierCV``) beside
  ``sklearn.RidgeClassifierCV``;
* ``least_squares_regressor_cv`` (``LeastSquaresRegressorCV``, on the ±1 labels as
  targets) beside ``sklearn.RidgeCV``.

``time_fit`` is the fit on the materialized features; ``track_test_error`` the
test error rate of the chosen model (the regressors' sign as the class).
"""

from functools import lru_cache

from . import common

DATASET = "magic04"
WIDTH = 512
ALPHAS = tuple(10.0 ** k for k in range(-6, 7))
LEARNERS = ["least_squares_cv", "sklearn.RidgeClassifierCV", "least_squares_regressor_cv", "sklearn.RidgeCV"]


@lru_cache(maxsize=None)
def features():
    """``(Z, y, Z_test, y_test)``: RFF features of the prepared set, labels as ±1."""
    import numpy as np

    from kernelmaps import RandomFourierFeatures, resolve_gamma

    prepared = common.prepared(DATASET)
    X, X_test = prepared["X_train"], prepared["X_test"]
    gamma = resolve_gamma("knn50", X, "gaussian", np.random.RandomState(common.SEED))
    rff = RandomFourierFeatures(WIDTH, gamma=gamma, random_state=common.SEED).fit(X)
    classes = np.unique(prepared["y_train"])
    signs = [np.where(labels == classes[1], 1.0, -1.0) for labels in (prepared["y_train"], prepared["y_test"])]
    return rff.transform(X), signs[0], rff.transform(X_test), signs[1]


def _learner(label):
    from sklearn.linear_model import RidgeClassifierCV, RidgeCV

    from kernelmaps import LeastSquaresClassifierCV, LeastSquaresRegressorCV

    return {"least_squares_cv": lambda: LeastSquaresClassifierCV(alphas=ALPHAS),
            "sklearn.RidgeClassifierCV": lambda: RidgeClassifierCV(alphas=ALPHAS),
            "least_squares_regressor_cv": lambda: LeastSquaresRegressorCV(alphas=ALPHAS),
            "sklearn.RidgeCV": lambda: RidgeCV(alphas=ALPHAS)}[label]()


class AlphaByLeaveOneOut(common.Timing):
    """Fit time and test error of choosing ``alpha`` by exact leave-one-out, ours and scikit-learn's."""

    params = [LEARNERS]
    param_names = ["learner"]
    timeout = 300

    def setup(self, label):
        self.Z, self.y, self.Z_test, self.y_test = features()
        self.model = common.warm(("tuning", label), lambda: _learner(label).fit(self.Z, self.y))

    def time_fit(self, label):
        _learner(label).fit(self.Z, self.y)

    def track_test_error(self, label):
        import numpy as np

        predicted = self.model.predict(self.Z_test)
        return float(np.mean(np.where(predicted > 0, 1.0, -1.0) != self.y_test))

    track_test_error.unit = "test error"
