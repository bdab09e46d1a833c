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

And choosing ``gamma`` and ``alpha`` of a Nyström machine on the prepared
``magic04`` rows (m = 200 centres, 3 bandwidths x 4 penalties, the same 5
stratified folds), by

* ``nystroem_ridge_classifier_cv`` (``NystroemKernelRidgeClassifierCV``), which
  shares each kernel block across folds, bandwidths and penalties;
* ``grid_search.nystroem_kernel_ridge_classifier`` (``GridSearchCV`` over
  ``NystroemKernelRidgeClassifier``), 60 fits of the plain machine on the same centres;
* ``grid_search.sklearn.Nystroem+RidgeClassifier`` (``GridSearchCV`` over scikit-learn's
  ``Nystroem`` + ``RidgeClassifier``), what a scikit-learn user runs today (its own
  centres, drawn from each training fold);

and the same for the logistic machine, scored by log-loss:

* ``nystroem_logistic_cv`` (``NystroemLogisticRegressionCV``): per bandwidth one
  decreasing ridge path, the folds' rows zero-weighted in the same passes;
* ``grid_search.nystroem_logistic`` (``GridSearchCV`` over ``NystroemLogisticRegression``);
* ``grid_search.sklearn.Nystroem+LogisticRegression`` (``GridSearchCV`` over
  scikit-learn's ``Nystroem`` + ``LogisticRegression`` at ``C = 1 / alpha``, the same
  ridge).
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


NYSTROEM_CENTRES = 200
GAMMA_FACTORS = (0.5, 1.0, 2.0)
NYSTROEM_ALPHAS = (1e-2, 1.0, 1e2, 1e4)
GRID_LEARNERS = ["nystroem_ridge_classifier_cv", "grid_search.nystroem_kernel_ridge_classifier",
                 "grid_search.sklearn.Nystroem+RidgeClassifier", "nystroem_logistic_cv",
                 "grid_search.nystroem_logistic", "grid_search.sklearn.Nystroem+LogisticRegression"]


def _logistic_grid_learner(label, gammas, centres, folds):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    from kernelmaps import NystroemLogisticRegression, NystroemLogisticRegressionCV

    if label == "nystroem_logistic_cv":
        return NystroemLogisticRegressionCV(NYSTROEM_CENTRES, alphas=NYSTROEM_ALPHAS, gammas=gammas, cv=folds,
                                            landmarks=centres, scoring="neg_log_loss")
    if label == "grid_search.nystroem_logistic":
        return GridSearchCV(NystroemLogisticRegression(NYSTROEM_CENTRES, landmarks=centres),
                            {"alpha": list(NYSTROEM_ALPHAS), "gamma": gammas}, cv=folds, scoring="neg_log_loss")
    # the same objective: scikit-learn's C * (sum of losses) + |w|^2 / 2 is ours, sum + alpha |f|^2 / 2, over C
    return GridSearchCV(make_pipeline(Nystroem(n_components=NYSTROEM_CENTRES, random_state=common.SEED),
                                      LogisticRegression(max_iter=1000)),
                        {"logisticregression__C": [1.0 / alpha for alpha in NYSTROEM_ALPHAS],
                         "nystroem__gamma": gammas}, cv=folds, scoring="neg_log_loss")


def _grid_learner(label, gamma, centres):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeClassifier
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline

    from kernelmaps import NystroemKernelRidgeClassifier, NystroemKernelRidgeClassifierCV

    gammas = [gamma * factor for factor in GAMMA_FACTORS]
    folds = StratifiedKFold(5)
    if "logistic" in label.lower():
        return _logistic_grid_learner(label, gammas, centres, folds)
    if label == "nystroem_ridge_classifier_cv":
        return NystroemKernelRidgeClassifierCV(NYSTROEM_CENTRES, alphas=NYSTROEM_ALPHAS, gammas=gammas, cv=folds,
                                               landmarks=centres)
    if label == "grid_search.nystroem_kernel_ridge_classifier":
        return GridSearchCV(NystroemKernelRidgeClassifier(NYSTROEM_CENTRES, landmarks=centres),
                            {"alpha": list(NYSTROEM_ALPHAS), "gamma": gammas}, cv=folds)
    return GridSearchCV(make_pipeline(Nystroem(n_components=NYSTROEM_CENTRES, random_state=common.SEED),
                                      RidgeClassifier()),
                        {"ridgeclassifier__alpha": list(NYSTROEM_ALPHAS), "nystroem__gamma": gammas}, cv=folds)


class GammaAndAlphaByGridSearch(common.Timing):
    """Fit time and test error of choosing a Nyström machine's ``gamma`` and ``alpha`` by 5-fold
    cross-validation over a 3 x 4 grid: ours sharing the kernel blocks, and grid searches."""

    params = [GRID_LEARNERS]
    param_names = ["learner"]
    timeout = 600

    def setup(self, label):
        import numpy as np

        prepared = common.prepared(DATASET)
        self.X, self.y = prepared["X_train"], prepared["y_train"]
        self.X_test, self.y_test = prepared["X_test"], prepared["y_test"]
        self.gamma = prepared["gamma"]
        rng = np.random.RandomState(common.SEED)
        self.centres = self.X[rng.choice(self.X.shape[0], NYSTROEM_CENTRES, replace=False)]
        self.model = common.warm(("grid", label), lambda: self._learner(label).fit(self.X, self.y))

    def _learner(self, label):
        return _grid_learner(label, self.gamma, self.centres)

    def time_fit(self, label):
        self._learner(label).fit(self.X, self.y)

    def track_test_error(self, label):
        import numpy as np

        return float(np.mean(self.model.predict(self.X_test) != self.y_test))

    track_test_error.unit = "test error"
