"""Sample and class weights of the learners: their validation and the weight of each row.

The learners that take ``sample_weight`` minimize a weighted loss in which an
integer weight counts as that many copies of its row, and a zero weight as no
row at all. Rows of zero weight are dropped before the fit, so that they decide
nothing (not the classes, nor a bandwidth heuristic), exactly as if they had not
been given.
"""

import numbers
from collections.abc import Mapping

import numpy as np
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import _check_sample_weight

__all__ = ["CLASS_WEIGHT_DOC", "box_constraints", "check_class_weight", "check_sample_weight", "class_row_weights",
           "drop_zero_weights", "refuse_balanced", "svm_row_weights"]

#: The ``class_weight`` parameter's text in the docstrings of the classifiers that
#: weigh their rows by :func:`class_row_weights`.
CLASS_WEIGHT_DOC = """    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weight of each row by its class's: a dict maps classes to
        weights (1 for the classes it omits; a class it names that ``y`` lacks is
        an error); 'balanced' weighs class ``k`` by ``n / (n_classes * n_k)``
        (``sklearn.utils.class_weight.compute_sample_weight``; with
        ``sample_weight``, ``n`` and ``n_k`` are the weighted counts).
"""


def check_sample_weight(sample_weight, X):
    """``None``, or the weights as a float64 array of one finite, non-negative entry per row.

    ``None`` stays ``None``, so that an unweighted fit takes the unweighted code
    path. A scalar gives every row that weight, as in scikit-learn. Negative,
    NaN or infinite weights (a scalar's too, which scikit-learn's
    ``_check_sample_weight`` lets through), a length other than ``X``'s row
    count and weights that are all zero raise a ``ValueError`` naming
    ``sample_weight``. The caller's array is never modified: it may be
    returned as it is.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._core.sample_weights import check_sample_weight
    >>> check_sample_weight([1, 2, 0], np.zeros((3, 2)))
    array([1., 2., 0.])
    >>> print(check_sample_weight(None, np.zeros((3, 2))))
    None
    >>> check_sample_weight(2, np.zeros((3, 2)))
    array([2., 2., 2.])
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number) and not (
            isinstance(sample_weight, numbers.Real) and np.isfinite(sample_weight)):
        # NaN would weigh every row out of the fit, and infinity past any finite sum
        raise ValueError(f"sample_weight must be a finite, non-negative number or an array of them, "
                         f"got {sample_weight!r}")
    return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)


def drop_zero_weights(X, y, sample_weight):
    """``(X, y, sample_weight)`` without the rows of zero weight.

    Nothing is copied when no weight is zero (or there are none).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._core.sample_weights import drop_zero_weights
    >>> X, y, w = drop_zero_weights(np.arange(6.0).reshape(3, 2), np.array([0, 1, 2]), np.array([1.0, 0.0, 3.0]))
    >>> X.tolist(), y.tolist(), w.tolist()
    ([[0.0, 1.0], [4.0, 5.0]], [0, 2], [1.0, 3.0])
    """
    if sample_weight is None or np.all(sample_weight > 0):
        return X, y, sample_weight
    keep = np.flatnonzero(sample_weight > 0)
    return X[keep], y[keep], sample_weight[keep]


def refuse_balanced(class_weight):
    """Raise for ``class_weight='balanced'`` where the rows come in blocks (``partial_fit``,
    Dask chunks): the class frequencies of one block are not those of all rows.

    Examples
    --------
    >>> from kernelmaps._core.sample_weights import refuse_balanced
    >>> refuse_balanced({0: 2.0})  # a dict weighs every block alike
    >>> refuse_balanced("balanced")
    Traceback (most recent call last):
    ...
    ValueError: class_weight='balanced' needs the class frequencies of all rows, ...
    """
    if isinstance(class_weight, str) and class_weight == "balanced":
        raise ValueError("class_weight='balanced' needs the class frequencies of all rows, which one "
                         "block of rows does not give: with partial_fit or Dask input, pass a dict, "
                         "e.g. dict(zip(classes, compute_class_weight('balanced', classes=classes, y=y)))")


def _per_class_weights(class_weight, classes, labels, sample_weight, partial):
    """The weight of each class (ndarray of shape (n_classes,)), or ``None``."""
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}")
        if partial:
            refuse_balanced(class_weight)
        # the weighted class counts, so that integer weights count as repeated rows
        return compute_class_weight("balanced", classes=np.arange(len(classes)), y=labels,
                                    sample_weight=sample_weight)
    if not isinstance(class_weight, Mapping):
        raise TypeError(f"class_weight must be None, 'balanced' or a dict, got {type(class_weight).__name__}")
    known = set(classes.tolist())
    unknown = [key for key in class_weight if key not in known]
    if unknown:
        raise ValueError(f"class_weight names classes {unknown} that are not among the classes "
                         f"{classes.tolist()}")
    weights = np.array([class_weight.get(c, 1.0) for c in classes.tolist()], dtype=np.float64)
    if not (np.isfinite(weights).all() and np.all(weights >= 0)):
        raise ValueError(f"class_weight values must be finite and non-negative, got {dict(class_weight)}")
    return weights


def class_row_weights(class_weight, classes, labels, sample_weight, *, partial=False):
    """Each row's weight: its sample weight times its class's weight.

    ``None`` when neither is given. ``'balanced'`` weighs class ``k`` by
    ``n / (n_classes * n_k)`` (scikit-learn's ``compute_sample_weight``), with
    ``n`` and ``n_k`` the weighted row counts; it needs all rows, so a block of
    ``partial_fit`` (``partial=True``) refuses it. A dict maps classes to
    weights (1 for the classes it omits) and must name no other class.

    Parameters
    ----------
    class_weight : None, 'balanced' or dict
    classes : ndarray of shape (n_classes,)
    labels : ndarray of int of shape (n_samples,)
        Each row's index in ``classes``.
    sample_weight : ndarray of shape (n_samples,) or None
    partial : bool, default=False

    Returns
    -------
    ndarray of shape (n_samples,), float64, or None

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._core.sample_weights import class_row_weights
    >>> class_row_weights("balanced", np.array(["a", "b"]), np.array([0, 0, 0, 1]), None)
    array([0.66666667, 0.66666667, 0.66666667, 2.        ])
    >>> class_row_weights({"b": 3.0}, np.array(["a", "b"]), np.array([0, 1]), np.array([2.0, 2.0]))
    array([2., 6.])
    """
    per_class = _per_class_weights(class_weight, np.asarray(classes), labels, sample_weight, partial)
    if per_class is None:
        return sample_weight
    weights = per_class[labels]
    if sample_weight is not None:
        weights = weights * sample_weight
    # one block of many may well hold only rows of zero weight
    if not partial and not np.any(weights > 0):
        raise ValueError("class_weight leaves every row with zero weight: at least one row needs a "
                         "positive weight")
    return weights


def check_class_weight(class_weight):
    """Refuse, before any fitting, a ``class_weight`` that is not None, ``'balanced'`` or a dict
    (its keys are checked against the classes at fit)."""
    if class_weight is None or isinstance(class_weight, Mapping) or (
            isinstance(class_weight, str) and class_weight == "balanced"):
        return
    raise ValueError(f"class_weight must be None, 'balanced' or a dict of class label: weight, "
                     f"got {class_weight!r}")


def svm_row_weights(class_weight, classes, labels, X, sample_weight):
    """``(class_weight_, w)`` of an SVM: the weight of each class, and
    ``w_i = class_weight[y_i] * sample_weight_i`` (None when neither is given).

    As :func:`class_row_weights`, and every class must keep a row of positive
    weight: an SVM cannot learn a class without one, so it is an error rather
    than a class that is never predicted.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._core.sample_weights import svm_row_weights
    >>> classes, labels = np.array(["a", "b"]), np.array([0, 0, 0, 1])
    >>> per_class, w = svm_row_weights("balanced", classes, labels, np.zeros((4, 1)), [1, 1, 2, 1])
    >>> per_class.tolist(), w.tolist()
    ([0.625, 2.5], [0.625, 0.625, 1.25, 2.5])
    """
    classes = np.asarray(classes)
    sample_weight = check_sample_weight(sample_weight, X)
    per_class = _per_class_weights(class_weight, classes, labels, sample_weight, False)
    if per_class is None:
        per_class = np.ones(len(classes))
        if sample_weight is None:
            return per_class, None
    w = per_class[labels] if sample_weight is None else per_class[labels] * sample_weight
    remaining = np.bincount(labels[w > 0], minlength=len(classes))
    if remaining.min() == 0:
        empty = classes[np.argmin(remaining)]
        empty = empty.item() if isinstance(empty, np.generic) else empty
        raise ValueError(f"sample_weight and class_weight leave class {empty!r} without a row of positive "
                         "weight; every class of y needs one (or leave the class out of y)")
    return per_class, w


def box_constraints(C, weights):
    """The bounds ``C_i = C w_i`` of an SVM dual, on the rows of positive weight.

    Returns ``(box, kept)``: ``box`` is one float when every kept row has the
    same bound (then the solver runs as in an unweighted fit), else an array
    over the kept rows; ``kept`` indexes the rows of positive weight, None when
    that is every row (and for ``weights=None``, where ``box`` is ``C``).
    """
    if weights is None:
        return C, None
    kept = np.flatnonzero(weights > 0)
    box = C * weights[kept]
    if not np.isfinite(box).all():
        raise ValueError(f"C * class_weight * sample_weight overflows float64 (C={C}): scale the weights down")
    box = float(box[0]) if np.all(box == box[0]) else box
    return box, (None if len(kept) == len(weights) else kept)
