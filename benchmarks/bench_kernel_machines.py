"""Nyström kernel machines (Falkon): fit time, test error and solver iterations, beside scikit-learn.

The learners ``NystroemKernelRidgeClassifier``, ``NystroemKernelRidge`` and, when
this kernelmaps has it, ``NystroemLogisticRegression`` (labels: their registry
names), each beside scikit-learn's ``Nystroem`` followed by the linear model
that solves the same problem on its features (``RidgeClassifier``, ``Ridge``,
``LogisticRegression``; scikit-learn adds an unpenalized intercept), at the
same centres (one seed), gamma, width m and regularization (``alpha``; ``C =
1 / alpha``):

* ``KernelMachineClassifiers``: ``time_fit`` and ``track_test_error`` on the
  suite's prepared ``magic04`` (standardized, the knn50 gamma; 2000 training
  and 2000 test rows in the quick profile, the full split in the full one).
  It has two classes: on ``letter``'s 26 the logistic model solves 26 Newton
  systems, each with its own preconditioner, and one fit took 2.4 s at
  m = 256 on 2000 rows, too long for the quick profile;
* ``KernelMachineRegressors``: ``time_fit`` and ``track_test_rmse`` on the smooth
  d = 16 regression of :func:`benchmarks.common.smooth_regression` (5000
  training rows quick, 20000 full; 2000 and 5000 test rows), gamma 1/d;
* ``KernelMachineIterations``: ``track_solver_iterations``, the conjugate
  gradient iterations of our fits (summed over the Newton steps of the
  logistic one), computed once in ``setup_cache``.

m is 256 in the quick profile, 256 and 1024 in the full one.
``python -m benchmarks.experiments run falkon-sklearn`` and ``falkon-speed``
measure the same machines at 50 000 to 200 000 rows.
"""

from functools import lru_cache

from . import common

WIDTHS = {"quick": [256], "full": [256, 1024]}[common.PROFILE]
DATASET = "magic04"
REGRESSION_ROWS = {"quick": (5000, 2000), "full": (20_000, 5000)}[common.PROFILE]
REGRESSION_FEATURES = 16
#: the ridge of the classifiers and of the logistic models (C = 1 / alpha), and of the regressors
ALPHA = 1.0
REGRESSION_ALPHA = 0.1


def _sk_features(m, gamma):
    from sklearn.kernel_approximation import Nystroem

    return Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=common.SEED)


def _machines():
    """label -> (task, factory(m, gamma)): ours under their registry names, then scikit-learn's pipelines."""
    import kernelmaps

    table = {
        kernelmaps.NystroemKernelRidgeClassifier.name: ("classification", lambda m, gamma: (
            kernelmaps.NystroemKernelRidgeClassifier(m, alpha=ALPHA, gamma=gamma, random_state=common.SEED))),
        kernelmaps.NystroemKernelRidge.name: ("regression", lambda m, gamma: kernelmaps.NystroemKernelRidge(
            m, alpha=REGRESSION_ALPHA, gamma=gamma, random_state=common.SEED)),
        "sklearn.Nystroem+RidgeClassifier": ("classification", lambda m, gamma: _pipeline(m, gamma, "ridge_clf")),
        "sklearn.Nystroem+Ridge": ("regression", lambda m, gamma: _pipeline(m, gamma, "ridge")),
    }
    if hasattr(kernelmaps, "NystroemLogisticRegression"):
        table[kernelmaps.NystroemLogisticRegression.name] = ("classification", lambda m, gamma: (
            kernelmaps.NystroemLogisticRegression(m, alpha=ALPHA, gamma=gamma, random_state=common.SEED)))
        table["sklearn.Nystroem+LogisticRegression"] = ("classification",
                                                        lambda m, gamma: _pipeline(m, gamma, "logistic"))
    return table


def _pipeline(m, gamma, model):
    from sklearn.linear_model import LogisticRegression, Ridge, RidgeClassifier
    from sklearn.pipeline import make_pipeline

    final = {"ridge_clf": lambda: RidgeClassifier(alpha=ALPHA), "ridge": lambda: Ridge(alpha=REGRESSION_ALPHA),
             # lbfgs gets the iterations to converge on m features (its default 100 may stop short)
             "logistic": lambda: LogisticRegression(C=1.0 / ALPHA, max_iter=1000)}[model]()
    return make_pipeline(_sk_features(m, gamma), final)


_MACHINES = _machines()
CLASSIFIERS = sorted(label for label, (task, _) in _MACHINES.items() if task == "classification")
REGRESSORS = sorted(label for label, (task, _) in _MACHINES.items() if task == "regression")
OURS = sorted(label for label in _MACHINES if not label.startswith("sklearn."))


@lru_cache(maxsize=None)
def data(task):
    """``(X, y, X_test, y_test, gamma)`` of a task."""
    if task == "classification":
        prepared = common.prepared(DATASET)
        return (prepared["X_train"], prepared["y_train"], prepared["X_test"], prepared["y_test"],
                prepared["gamma"])
    n_train, n_test = REGRESSION_ROWS
    X, y = common.smooth_regression(n_train + n_test, REGRESSION_FEATURES, seed=common.SEED)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:], 1.0 / REGRESSION_FEATURES


def fitted(label, m):
    """``label`` at width ``m`` fitted on its task's training rows, once per process."""
    task, factory = _MACHINES[label]
    X, y, _, _, gamma = data(task)
    return common.warm((label, m), lambda: factory(m, gamma).fit(X, y))


class _Fits(common.Timing):
    timeout = 600

    def setup(self, label, m):
        task, self.factory = _MACHINES[label]
        self.X, self.y, self.X_test, self.y_test, self.gamma = data(task)
        self.model = fitted(label, m)  # compiled, warm: what time_fit runs, once

    def time_fit(self, label, m):
        self.factory(m, self.gamma).fit(self.X, self.y)


class KernelMachineClassifiers(_Fits):
    """Fit time and test error of the classifiers on ``magic04``."""

    params = [CLASSIFIERS, WIDTHS]
    param_names = ["algorithm", "n_components"]

    def track_test_error(self, label, m):
        return 1.0 - self.model.score(self.X_test, self.y_test)

    track_test_error.unit = "test error"


class KernelMachineRegressors(_Fits):
    """Fit time and test RMSE of the regressors on the smooth d = 16 regression."""

    params = [REGRESSORS, WIDTHS]
    param_names = ["algorithm", "n_components"]

    def track_test_rmse(self, label, m):
        import numpy as np

        return float(np.sqrt(np.mean((self.model.predict(self.X_test) - self.y_test) ** 2)))

    track_test_rmse.unit = "test RMSE"


class KernelMachineIterations:
    """Conjugate gradient iterations of our fits (over every Newton step for the logistic model)."""

    params = [OURS, WIDTHS]
    param_names = ["algorithm", "n_components"]
    timeout = 900

    def setup_cache(self):
        table = {}
        for label in OURS:
            for m in WIDTHS:
                model = fitted(label, m)
                table[label, m] = float(sum(model.cg_iterations_) if hasattr(model, "cg_iterations_")
                                        else model.n_iter_)
        return table

    def track_solver_iterations(self, table, label, m):
        return table[label, m]

    track_solver_iterations.unit = "CG iterations"


# inherited by the forked child of every parameter combination (see common.prepare_all)

common.prepare_all()
