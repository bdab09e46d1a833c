"""How the cross-validated least-squares learners score a penalty: the scorer, the
scores that follow from sums of squared errors, and ``cv_results_``."""

import inspect
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import get_scorer

from .._core.base import classes_from_scores
from .._solvers.logistic_passes import logistic_probabilities

#: Scores that follow from weighted sums of squared errors: ``scoring`` names whose
#: K-fold scores need no second pass over the rows.
SQUARED_ERROR_SCORES = ("r2", "neg_mean_squared_error", "neg_root_mean_squared_error")
#: The response methods a least-squares learner has.
RESPONSES = ("predict", "decision_function")


@dataclass
class Scoring:
    """What a ``scoring`` parameter asks for.

    Attributes
    ----------
    kind : {'squared', 'accuracy', 'scorer', 'evidence'}
        'squared': one of :data:`SQUARED_ERROR_SCORES` (``name``), from sums of
        squared errors; 'accuracy': the share of rows whose class is right,
        counted as the rows come; 'scorer': ``scorer`` applied to the
        predictions of every row; 'evidence': the Bayesian linear regression
        evidence of all rows (a regressor's, without folds).
    name : str
    scorer : callable or None
    """

    kind: str
    name: str
    scorer: object = None


def check_scoring(scoring, classifier, weighted):
    """The :class:`Scoring` of a ``scoring`` parameter, or an error before any work.

    ``None`` is R² for a regressor and accuracy for a classifier; ``'evidence'``
    (a regressor's) is the Bayesian evidence of all rows. A name goes
    through ``sklearn.metrics.get_scorer`` (an unknown name is its
    ``ValueError``); a scorer that needs ``predict_proba`` is refused, as is a
    callable that takes no ``sample_weight`` when there are weights to give it.
    """
    if scoring is None:
        scoring = "accuracy" if classifier else "r2"
    if isinstance(scoring, str) and scoring == "evidence":
        if classifier:
            raise ValueError("scoring='evidence' is the marginal likelihood of a regressor's Gaussian model; a "
                             "classifier has none: choose a scorer of its predictions")
        return Scoring("evidence", scoring)
    if isinstance(scoring, str):
        scorer = get_scorer(scoring)
        if scoring == "accuracy" and classifier:
            return Scoring("accuracy", scoring)
        if scoring in SQUARED_ERROR_SCORES and not classifier:
            return Scoring("squared", scoring)
        methods = getattr(scorer, "_response_method", "predict")
        methods = (methods,) if isinstance(methods, str) else tuple(methods)
        if not any(method in RESPONSES for method in methods):
            raise ValueError(f"scoring={scoring!r} needs {' or '.join(methods)}, which least squares does not "
                             f"give: choose a scorer of {' or '.join(RESPONSES)}")
        return Scoring("scorer", scoring, scorer)
    if not callable(scoring):
        raise ValueError(f"scoring must be None, a scikit-learn scorer name or a callable "
                         f"scorer(estimator, X, y), got {scoring!r}")
    if weighted and not isinstance(scoring, type(get_scorer("r2"))):
        parameters = inspect.signature(scoring).parameters
        if "sample_weight" not in parameters and not any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
            raise ValueError("scoring is a callable without a sample_weight argument, and fit was given "
                             "sample_weight: the scores are weighted, so the scorer must take them")
    return Scoring("scorer", getattr(scoring, "__name__", type(scoring).__name__), scoring)


def squared_error_score(name, sse, sst, weight):
    """The score ``name`` (:data:`SQUARED_ERROR_SCORES`) of every penalty, from weighted sums.

    Averaged over the targets as scikit-learn's metrics do by default
    (``multioutput='uniform_average'``); R² of a constant target is 1 for an
    exact fit and 0 otherwise, as ``r2_score``.

    Parameters
    ----------
    name : str
    sse : ndarray of shape (n_alphas, n_targets)
        Weighted sums of squared errors.
    sst : ndarray of shape (n_targets,)
        Weighted sums of squares about the targets' weighted means.
    weight : float
        The rows' total weight.

    Returns
    -------
    ndarray of shape (n_alphas,)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._machines.cv_scoring import squared_error_score
    >>> squared_error_score("r2", np.array([[1.0], [4.0]]), np.array([8.0]), 4.0)
    array([0.875, 0.5  ])
    >>> squared_error_score("neg_mean_squared_error", np.array([[1.0], [4.0]]), np.array([8.0]), 4.0)
    array([-0.25, -1.  ])
    """
    if name == "r2":
        with np.errstate(divide="ignore", invalid="ignore"):
            r2 = 1.0 - sse / sst
        r2 = np.where(sst > 0, r2, np.where(sse == 0, 1.0, 0.0))
        return r2.mean(axis=1)
    mse = sse / weight
    return -(np.sqrt(mse) if name == "neg_root_mean_squared_error" else mse).mean(axis=1)


class _Predictions(RegressorMixin, BaseEstimator):
    """A fitted regressor whose prediction of ``X`` is ``X``: scores precomputed predictions."""

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        return X


class _Decisions(ClassifierMixin, BaseEstimator):
    """A fitted classifier whose decision values of ``X`` are ``X``."""

    def __init__(self, classes=None):
        self.classes = classes

    def fit(self, X, y=None):
        return self

    @property
    def classes_(self):
        return self.classes

    def decision_function(self, X):
        return X

    def predict(self, X):
        return classes_from_scores(self.classes, X)


class LogisticOutputs(_Decisions):
    """A fitted logistic classifier whose logits of ``X`` are ``X``: its probabilities are
    :class:`kernelmaps.NystroemLogisticRegression`'s of those logits."""

    def predict_proba(self, X):
        return logistic_probabilities(X)


def check_logistic_scoring(scoring):
    """The :class:`Scoring` of a logistic classifier's ``scoring``: None is accuracy; a
    scikit-learn scorer name or a callable ``scorer(estimator, X, y)`` of ``predict``,
    ``decision_function`` or ``predict_proba`` (``'neg_log_loss'``, ``'roc_auc'``, ...)."""
    if scoring is None:
        scoring = "accuracy"
    if isinstance(scoring, str):
        if scoring == "evidence":
            raise ValueError("scoring='evidence' is the marginal likelihood of a regressor's Gaussian model; a "
                             "logistic classifier has none: choose a scorer of its predictions or probabilities")
        return Scoring("scorer", scoring, get_scorer(scoring))
    if not callable(scoring):
        raise ValueError(f"scoring must be None, a scikit-learn scorer name or a callable "
                         f"scorer(estimator, X, y), got {scoring!r}")
    return Scoring("scorer", getattr(scoring, "__name__", type(scoring).__name__), scoring)


def logistic_score(scoring, logits, truth, classes):
    """``scoring.scorer`` of one fold's logits (shape ``(n_rows, n_outputs)``) against its labels."""
    values = logits[:, 0] if logits.shape[1] == 1 else logits
    score = scoring.scorer(LogisticOutputs(classes), values, truth)
    if not isinstance(score, numbers.Real):
        raise ValueError(f"scoring returned {score!r}, not a number")
    return float(score)


def scorer_scores(scoring, outputs, truth, weights, classes=None):
    """``scoring.scorer`` of every penalty's outputs (predictions, or a classifier's decision values).

    Parameters
    ----------
    scoring : Scoring
    outputs : ndarray of shape (n_rows, n_alphas, n_outputs)
    truth : ndarray of shape (n_rows,) or (n_rows, n_outputs)
        The targets, or the class labels.
    weights : ndarray of shape (n_rows,) or None
    classes : ndarray, optional
        A classifier's classes.

    Returns
    -------
    ndarray of shape (n_alphas,)
    """
    estimator = _Predictions() if classes is None else _Decisions(classes)
    extra = {} if weights is None else {"sample_weight": weights}
    scores = []
    for a in range(outputs.shape[1]):
        values = outputs[:, a, :]
        if values.shape[1] == 1 and (classes is not None or np.ndim(truth) == 1):
            values = values[:, 0]
        score = scoring.scorer(estimator, values, truth, **extra)
        if not isinstance(score, numbers.Real):
            raise ValueError(f"scoring returned {score!r}, not a number")
        scores.append(float(score))
    return np.array(scores)


def best_index(mean_scores):
    """The penalty of the best mean score, the first of equals (NaN scores rank last)."""
    if np.isnan(mean_scores).all():
        return 0
    return int(np.argmax(np.where(np.isnan(mean_scores), -np.inf, mean_scores)))


def cv_results(alphas, split_scores):
    """``cv_results_`` as ``GridSearchCV`` names its columns.

    Parameters
    ----------
    alphas : ndarray of shape (n_alphas,)
    split_scores : ndarray of shape (n_splits, n_alphas), or (n_alphas,) for leave-one-out
        One score per test fold and penalty; for leave-one-out, the score of all
        rows' leave-one-out predictions (then no ``split{k}_test_score`` nor
        ``std_test_score``).

    Returns
    -------
    dict of str to ndarray or list
        ``param_alpha``, ``params``, ``split{k}_test_score`` (K-fold),
        ``mean_test_score``, ``std_test_score`` (K-fold), ``rank_test_score``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._machines.cv_scoring import cv_results
    >>> results = cv_results(np.array([0.1, 1.0]), np.array([[0.5, 0.7], [0.6, 0.7]]))
    >>> results["mean_test_score"], results["rank_test_score"]
    (array([0.55, 0.7 ]), array([2, 1], dtype=int32))
    """
    results = {"param_alpha": np.asarray(alphas, dtype=np.float64).copy(),
               "params": [{"alpha": float(alpha)} for alpha in alphas]}
    if split_scores.ndim == 1:
        means = split_scores.copy()
    else:
        for k, scores in enumerate(split_scores):
            results[f"split{k}_test_score"] = scores.copy()
        means = np.average(split_scores, axis=0)
    results["mean_test_score"] = means
    if split_scores.ndim == 2:
        results["std_test_score"] = np.sqrt(np.average((split_scores - means) ** 2, axis=0))
    # as GridSearchCV: NaN scores tie with the worst
    finite = np.nan_to_num(means, nan=np.nanmin(means) - 1 if not np.isnan(means).all() else 0.0)
    results["rank_test_score"] = rankdata(-finite, method="min").astype(np.int32)
    return results
