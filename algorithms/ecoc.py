"""Multi-class least squares with error-correcting output codes (ECOC)."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

from ._core.validation import check_choice, dask_support, is_dask_array
from .least_squares import LeastSquaresClassifier

__all__ = ["ECOCClassifier"]

#: Attempts at a valid code, and within one at replacing its constant columns,
#: before the fit gives up with an error rather than loop for ever.
MAX_DRAWS = 1000
#: Codes up to this length draw their codewords without replacement from all
#: ``2**code_size`` words, which permutes every word (8 MB of int64 at 20 bits).
#: Longer codes draw independent bits: their words collide with probability
#: below ``n_classes**2 / 2**22``, and a collision just means a redraw.
MAX_ENUMERATED_CODE_BITS = 20
#: From this length on, ``2**code_size`` exceeds any class count an int64 holds,
#: so the check for enough distinct codewords is skipped (it would otherwise
#: build a huge integer for a very long code).
ALWAYS_ENOUGH_CODE_BITS = 63
#: Shrinks the Euclidean tie-break of Hamming decoding strictly inside
#: ``(-1/2, 1/2)`` despite rounding: a difference in Hamming distance moves the
#: score by 2, which the tie-break must never match.
TIE_BREAK_SHRINK = 1 - 1e-9


def _random_code(n_classes, code_size, rng):
    """Random ``n_classes x code_size`` matrix of ±1 codewords.

    The codewords (rows) are distinct, so that decoding can tell every class
    apart, and no column is constant, so that every bit's regressor separates
    the classes into two non-empty groups. Codes of up to
    ``MAX_ENUMERATED_CODE_BITS`` bits draw their words without replacement;
    constant columns are then redrawn on their own, and a code with repeated
    codewords is redrawn whole.

    Parameters
    ----------
    n_classes : int, >= 2
    code_size : int, with ``2^code_size >= n_classes``
    rng : numpy.random.RandomState

    Returns
    -------
    code : ndarray of shape (n_classes, code_size), float64 of ±1

    References
    ----------
    Dietterich, T. G. and Bakiri, G. Solving multiclass learning problems via
    error-correcting output codes. JAIR 2, 1994.
    """
    if code_size < ALWAYS_ENOUGH_CODE_BITS and 2**code_size < n_classes:
        raise ValueError(f"code_size={code_size} is too short for {n_classes} distinct codewords "
                         f"(needs 2**code_size >= n_classes)")
    signs = np.array([-1.0, 1.0])
    for _ in range(MAX_DRAWS):
        if code_size <= MAX_ENUMERATED_CODE_BITS:
            # short codes: k distinct words drawn without replacement from all 2^c
            words = rng.choice(2**code_size, size=n_classes, replace=False)
            code = signs[(words[:, None] >> np.arange(code_size)) & 1]
        else:
            code = rng.choice(signs, size=(n_classes, code_size))
        for _ in range(MAX_DRAWS):
            # a constant column is redrawn on its own: with few classes a whole
            # code without one is rare (two classes need complementary codewords)
            constant = np.all(code == code[:1], axis=0)
            if not constant.any():
                break
            code[:, constant] = rng.choice(signs, size=(n_classes, int(constant.sum())))
        if not np.all(code == code[:1], axis=0).any() and len(np.unique(code, axis=0)) == n_classes:
            return code
    raise ValueError(f"could not draw {n_classes} distinct codewords of length {code_size} "
                     "without a constant column: increase code_size")


class ECOCClassifier(LeastSquaresClassifier):
    """Least squares on features with random error-correcting output codes.

    Each class gets a random ±1 codeword of length ``c = code_size`` (distinct
    codewords, no constant column, see :func:`_random_code`). The ``c`` bit
    regressors are ridge least squares that share one Hessian
    ``Z^T Z + alpha I``; it is accumulated together with the right-hand sides
    ``Z^T Y_code`` in a single pass over row blocks without forming the target
    matrix (:class:`kernelmaps.NormalEquations`), so the fit also
    runs out of core through :meth:`partial_fit`. A point goes to the class of the
    nearest codeword: by Hamming distance between the codewords and the signs of
    the ``c`` outputs (the paper's Figure 4; ties broken by the Euclidean
    distance), or by Euclidean distance on the outputs themselves.

    One-vs-rest least squares (:class:`kernelmaps.LeastSquaresClassifier`) is the
    special case of the code ``2 I - 1``.

    ``fit`` and ``partial_fit`` take ``sample_weight`` (and the estimator
    ``class_weight``) as :class:`~kernelmaps.LeastSquaresClassifier` does: every
    bit's regression minimizes ``sum_i w_i (z_i w + b - code[y_i])^2 + alpha ||w||^2``,
    so an integer weight counts as that many copies of its row, and rows of
    weight 0 are dropped (they add no class to the code).

    Parameters
    ----------
    code_size : int, default=64
        Codeword length ``c``.
    alpha : float, default=1.0
        Ridge penalty (>= 0).
    decoding : {'hamming', 'euclidean'}, default='hamming'
    fit_intercept : bool, default=True
        An unpenalized intercept per bit.
    solver : {'auto', 'normal', 'cg'}, default='auto'
    tol : float, default=1e-4
    max_iter : int, default=1000
        The least-squares solver and conjugate gradient's stopping rule, as in
        :class:`~kernelmaps.LeastSquaresClassifier`.
    random_state : int, RandomState or None
        Draws the code.
    class_weight : dict, 'balanced' or None, default=None
        Multiplies the weight of each row by its class's, in every bit's
        regression (see :class:`~kernelmaps.LeastSquaresClassifier`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The classes of the rows of positive weight.
    code_ : ndarray of shape (n_classes, code_size)
    coef_ : ndarray of shape (n_features, code_size)
    intercept_ : ndarray of shape (code_size,)
    solver_ : {'normal', 'cg'}
    n_iter_ : int
        Conjugate gradient iterations (1 for the one solve of the normal equations).
    n_features_in_ : int
    normal_equations_ : NormalEquations
        The accumulated (weighted) moments (solver 'normal' only).

    References
    ----------
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
    ICML 2014, section 4.
    Dietterich, T. G. and Bakiri, G. Solving multiclass learning problems via
    error-correcting output codes. JAIR 2, 1994.

    Examples
    --------
    A linear learner on kernel features:

    >>> from sklearn.datasets import load_iris
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from kernelmaps import ECOCClassifier, Fastfood
    >>> X, y = load_iris(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), Fastfood(n_components=128, random_state=0),
    ...                       ECOCClassifier(code_size=8, random_state=0)).fit(X, y)
    >>> model[-1].code_.shape  # a codeword of 8 bits per class
    (3, 8)
    >>> print(round(model.score(X, y), 2))
    0.96
    """

    name = "ecoc"
    kind = "learner"
    paper = "Hamid et al., Compact random feature maps, ICML 2014 (section 4, ECOC least squares)"
    kernel_family = "linear"
    test_params = {"code_size": 16, "alpha": 1.0}

    def __init__(self, code_size=64, alpha=1.0, *, decoding="hamming", fit_intercept=True, solver="auto",
                 tol=1e-4, max_iter=1000, random_state=None, class_weight=None):
        self.code_size = code_size
        self.alpha = alpha
        self.decoding = decoding
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.class_weight = class_weight

    def _code(self):
        return self.code_

    def _begin(self, classes):
        check_choice(self.decoding, "decoding", ("hamming", "euclidean"))
        c = self.code_size
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral) or c < 1:
            raise ValueError(f"code_size must be an integer >= 1, got {c!r}")
        n_classes = len(np.unique(classes))
        if n_classes < 2:
            raise ValueError(f"need at least 2 classes, got {n_classes} class")
        # drawn before the equations are sized: their width is the code's length
        self.code_ = _random_code(n_classes, int(c), check_random_state(self.random_state))
        super()._begin(classes)

    def predict_code(self, Z):
        """The ``code_size`` bit regressors' outputs, ``Z @ coef_ + intercept_``
        (lazily for a Dask array)."""
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "predict_code")
        return np.atleast_2d(self._scores(Z).T).T

    def decision_function(self, Z):
        """Closeness of each class's codeword to the outputs (larger is closer).

        ``'euclidean'``: ``outputs . codeword``, which orders the classes as the
        negative squared distance does (every codeword has norm ``sqrt(c)``).
        ``'hamming'``: ``c - 2 Hamming(sign(outputs), codeword)`` plus the
        Euclidean closeness scaled into ``(-1/2, 1/2)``, which only breaks ties.
        Binary problems get one column, positive for ``classes_[1]``.
        """
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "decision_function")
        S = self.predict_code(Z).astype(np.float64)
        scores = S @ self.code_.T
        if self.decoding == "hamming":
            norm = np.abs(S).sum(axis=1, keepdims=True) + np.finfo(np.float64).tiny
            scores = np.where(S >= 0, 1.0, -1.0) @ self.code_.T + 0.5 * scores / norm * TIE_BREAK_SHRINK
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores
