"""Multiple kernel learning by group lasso on random Fourier features (RFF-GL).

Băzăvan, Li & Sminchisescu, section 3.3: build the random features of each of r
kernels, concatenate them, and solve

    min_w  alpha * sum_t ||w_t||_2  +  (1/N) sum_i l(y_i, F_i w + b)       (eq. 10)

with one group of coefficients per kernel. By eqs. 11-17 this is l1 multiple
kernel learning (GMKL) on the kernels the features approximate, with kernel
weights ``d_t = ||w_t|| / sqrt(2)`` (eq. 16) and ``C = sqrt(2) / alpha``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._core.base import RegisteredEstimator, classes_from_scores
from ._core.targets import OneVsRestFitMixin, RegressionFitMixin
from ._core.validation import check_choice, check_fraction, check_input, check_integer, check_positive
from ._machines.group_lasso import GroupLassoFitMixin
from ._solvers.group_lasso_losses import Loss

__all__ = ["GroupLassoMKL", "GroupLassoMKLClassifier", "GroupLassoMKLRegressor"]

_PAPER = ("Băzăvan, Li & Sminchisescu, Learning random kernel approximations for object "
          "recognition, NIPS 2012, section 3.3 (RFF-GL)")


class GroupLassoMKL(GroupLassoFitMixin, RegisteredEstimator, BaseEstimator):
    """Base of the group-lasso multiple kernel learners on random features (RFF-GL).

    Use :class:`GroupLassoMKLClassifier` or :class:`GroupLassoMKLRegressor`; this
    class holds what they share: the kernels as feature groups, the FISTA solver
    and the regularization path, with the parameters and attributes below.

    Parameters
    ----------
    groups : None, array-like of int of shape (n_features,), list of lists, or dict, default=None
        The kernels' input columns, one kernel per group:

        * ``None``: all columns in one group (several kernels on them with a
          sequence ``gamma`` or several ``maps``);
        * a group index per column, as :func:`kernelmaps.datasets.make_planted_groups`
          returns and ``load("mfeat").extras["groups"]`` gives;
        * a list of column lists, one per group;
        * a dict ``{group_name: columns}`` (a single column may stand alone).

        Columns are integer positions, or column names when ``X`` is a pandas
        DataFrame with string column names (``feature_names_in_``); names are
        resolved to positions at fit, and a name ``X`` lacks is a ``ValueError``.
        Groups must be disjoint and non-empty; columns in no group are unused.
    n_components : int or sequence of int, default=256
        Random features per kernel (one value, or one per kernel).
    gamma : float, {'scale', 'median', 'knn50'} or sequence, default='scale'
        Bandwidth of each kernel's Gaussian ``exp(-gamma ||x - y||^2)``, resolved
        on that kernel's columns. A sequence gives one per group, or, with
        ``groups=None``, one kernel per bandwidth on all columns.
    loss : str, default='squared'
        The per-sample loss; each learner lists the ones it accepts.
    alpha : float >= 0 or None, default=None
        The group-lasso weight lambda of eq. 10. ``None`` computes the path and
        chooses alpha on a validation split by ``alpha_selection``.
    max_iter : int, default=1000
        FISTA iterations per alpha.
    tol : float, default=1e-4
        Stop when the gradient mapping's largest group norm is at most
        ``tol * alpha_max``. On 5000 standardized rows of pendigits and letter,
        1e-4 gives the test accuracy of 1e-6 (to 1e-4) in half the time, and
        1e-6 stops at ``max_iter`` at the path's smallest alphas.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the feature maps (one derived seed per kernel) and the validation split.
    maps : list of feature maps or None, default=None
        One map per group (or per kernel on all columns when ``groups=None``),
        replacing the Gaussian random Fourier features; ``n_components`` and
        ``gamma`` are then not used. Unfitted maps are cloned and fitted on their
        group's columns; fitted maps are used as they are.
    n_alphas : int, default=20
        Points on the geometric path from ``alpha_max`` down to
        ``alpha_min_ratio * alpha_max``. The path stops early once the validation
        loss has risen at three consecutive alphas past its minimum, so
        ``alphas_`` may be shorter.
    alpha_min_ratio : float in (0, 1), default=1e-3
        The path's last alpha over ``alpha_max``.
    alpha_selection : {'min', 'one_se'}, default='min'
        How ``alpha=None`` chooses alpha on the path (fitted on the training
        split) from ``validation_loss_``, the mean per-row loss on the held-out
        rows, and ``validation_loss_se_``, its standard error. ``'min'``: the
        alpha of the smallest validation loss. ``'one_se'``: the largest alpha
        whose validation loss is at most that minimum plus its standard error.
        What ``'one_se'`` promises, against ``'min'`` with the same
        ``random_state`` (same maps, same split): ``alpha_`` at least as large,
        hence a sum of group norms no larger (so at the exact optimum; up to
        ``tol`` here), usually with no more active groups (not guaranteed: group
        lasso paths need not be monotone). Neither rule promises that a group
        carrying no signal gets weight zero: at a validation-chosen alpha, noise
        groups often keep small weights. Give a larger ``alpha`` for a sparser
        model.
    validation_fraction : float in (0, 1), default=0.25
        Rows held out to choose alpha (stratified for classification).

    Attributes
    ----------
    group_names_ : ndarray of str (object) of shape (n_groups,)
        A name per kernel, in the order of every per-kernel attribute: the
        dict's keys for dict ``groups``; ``'group<g>'`` for a group index per
        column or a list of column lists (``g`` the group index); with
        ``groups=None``, ``'all'`` for one kernel, ``'gamma=<value>'`` for one
        kernel per bandwidth (``'kernel<t>'`` if two read the same), and
        ``'kernel<t>'`` for several ``maps``.
    n_groups_ : int
        Number of kernels.
    group_norms_ : ndarray of shape (n_groups,) or (n_classes, n_groups)
        ``||w_t||_2`` per kernel: one row per class for more than two classes;
        a single row, flattened, for a regressor or two classes (whose one
        problem scores ``classes_[1]`` positive).
    kernel_weights_ : ndarray like group_norms_
        ``group_norms_ / sqrt(2)``: the weight ``d_t`` of kernel ``t`` in the
        equivalent l1-MKL problem (eq. 16), not normalized; 0 for a kernel the
        group lasso dropped. See :meth:`kernel_weights_frame` for a labelled view.
    active_groups_ : ndarray of int
        Kernels with a non-zero weight (for any class).
    objective_history_ : ndarray
        The objective (summed over one-vs-rest problems) at the start and after
        every FISTA iteration of the final fit.
    n_iter_ : int
        FISTA iterations of the final fit.
    alpha_ : float
        The alpha of the final fit.
    alphas_ : ndarray of shape (n_alphas,)
        Descending path (only when ``alpha=None``).
    alpha_index_ : int
        Position of ``alpha_`` in ``alphas_`` (only when ``alpha=None``).
    group_norms_path_ : ndarray of shape (n_alphas, n_groups)
        Group norms along the path, summed over classes (only when ``alpha=None``).
    validation_loss_, validation_loss_se_ : ndarray of shape (n_alphas,)
        Mean validation loss along the path and its standard error (only when
        ``alpha=None``).
    coef_, intercept_ : ndarrays
        Weights on the concatenated features and the unpenalized intercept.
    feature_maps_ : list of fitted feature maps
    kernel_columns_ : list of ndarray of int
        The input column positions of each kernel.
    feature_bounds_ : ndarray of int64 of shape (n_groups + 1,)
        Kernel ``t``'s features are columns ``feature_bounds_[t]:feature_bounds_[t+1]``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str of shape (n_features_in_,)
        Only when ``X`` had string column names at fit.

    Notes
    -----
    The objective is ``alpha sum_t ||w_t||_2 + (1/N) sum_i l(y_i, F_i w + b)``
    with an unpenalized intercept ``b``. FISTA (Beck & Teboulle 2009) works on
    the implicitly centred features, so that the intercept decouples, and steps
    with ``1/L``: ``L`` from a power-iteration estimate of ``||F_c||^2 / N`` times
    the loss's curvature bound, doubled if a step ever fails the
    sufficient-decrease test; it restarts its momentum when it points uphill
    (O'Donoghue & Candès 2015). For the squared loss with no more features than
    rows, an iteration is one product with the centred ``P x P`` Gram matrix
    instead of two passes over the ``N x P`` features. ``alpha_max = max_t ||F_t^T l'(b_0)|| / N`` is
    the smallest alpha at which every group is zero. Along the path (fitted on
    the training split), each alpha starts from the previous solution; the final
    fit, on all rows at the chosen alpha, starts from the path's solution there.

    References
    ----------
    Băzăvan, E. G., Li, F. and Sminchisescu, C. Learning random kernel
    approximations for object recognition. NIPS 2012, section 3.3 (eqs. 10-17 and the
    epsilon-insensitive logistic loss).
    Beck, A. and Teboulle, M. A fast iterative shrinkage-thresholding algorithm for
    linear inverse problems. SIAM J. Imaging Sciences 2(1), 2009.
    O'Donoghue, B. and Candès, E. Adaptive restart for accelerated gradient schemes.
    Foundations of Computational Mathematics 15, 2015.

    Examples
    --------
    >>> from kernelmaps import GroupLassoMKL, GroupLassoMKLRegressor
    >>> issubclass(GroupLassoMKLRegressor, GroupLassoMKL)
    True
    """

    kind = "learner"
    kernel_family = "shift_invariant"
    paper = _PAPER

    _losses = ()

    def __init__(self, groups=None, *, n_components=256, gamma="scale", loss="squared",
                 alpha=None, max_iter=1000, tol=1e-4, random_state=None, maps=None,
                 n_alphas=20, alpha_min_ratio=1e-3, alpha_selection="min",
                 validation_fraction=0.25):
        self.groups = groups
        self.n_components = n_components
        self.gamma = gamma
        self.loss = loss
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.maps = maps
        self.n_alphas = n_alphas
        self.alpha_min_ratio = alpha_min_ratio
        self.alpha_selection = alpha_selection
        self.validation_fraction = validation_fraction

    # -- parameters -------------------------------------------------------------

    def _check_params(self):
        check_choice(self.loss, "loss", self._losses)
        if self.alpha is not None:
            check_positive(self.alpha, "alpha", allow_zero=True)
        self._max_iter = check_integer(self.max_iter, "max_iter", 1)
        check_positive(self.tol, "tol")
        self._n_alphas = check_integer(self.n_alphas, "n_alphas", 2)
        check_fraction(self.alpha_min_ratio, "alpha_min_ratio", allow_zero=False)
        check_choice(self.alpha_selection, "alpha_selection", ("min", "one_se"))
        check_fraction(self.validation_fraction, "validation_fraction", allow_zero=False)
        return self._make_loss()

    def _make_loss(self):
        return Loss(self.loss)

    # -- the kernel weights by name ------------------------------------------------

    def kernel_weights_frame(self):
        """The kernel weights ``kernel_weights_`` as a pandas DataFrame, labelled.

        Returns
        -------
        pandas.DataFrame of shape (n_rows, n_groups)
            One column per kernel, named by ``group_names_`` (columns index
            named ``'group'``). Rows: one per class of ``classes_`` for a
            classifier of more than two classes; a single row labelled
            ``classes_[1]`` for two classes (their one problem scores
            ``classes_[1]`` positive); a single row labelled ``'y'`` for a
            regressor. Row index named ``'class'`` or ``'target'``.

        Raises
        ------
        ImportError
            When pandas is not installed; ``kernel_weights_`` and
            ``group_names_`` hold the same numbers and labels.

        Examples
        --------
        >>> import numpy as np
        >>> import pandas as pd
        >>> from kernelmaps import GroupLassoMKLRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = pd.DataFrame(rng.standard_normal((300, 4)), columns=["a", "b", "c", "d"])
        >>> y = np.sin(2 * X["a"]) + np.cos(X["b"])
        >>> reg = GroupLassoMKLRegressor({"signal": ["a", "b"], "noise": ["c", "d"]},
        ...                              n_components=32, random_state=0).fit(X, y)
        >>> weights = reg.kernel_weights_frame()
        >>> weights.columns.tolist(), weights.index.tolist()
        (['signal', 'noise'], ['y'])
        >>> bool(weights.loc["y", "signal"] > weights.loc["y", "noise"])
        True
        """
        check_is_fitted(self)
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("kernel_weights_frame needs pandas, which is not installed: "
                              "install pandas, or read kernel_weights_ (columns in the order "
                              "of group_names_)") from None
        labels, name = self._weight_rows()
        return pd.DataFrame(np.atleast_2d(self.kernel_weights_), index=pd.Index(labels, name=name),
                            columns=pd.Index(list(self.group_names_), name="group"))

    def _weight_rows(self):
        """Row labels of :meth:`kernel_weights_frame` and the name of its index."""
        return ["y"], "target"

    # -- predict -----------------------------------------------------------------

    def _decision(self, X):
        check_is_fitted(self)
        X = np.asarray(check_input(self, X, reset=False), dtype=np.float64)
        coef = np.atleast_2d(self.coef_)
        scores = np.tile(np.atleast_1d(self.intercept_).astype(np.float64), (X.shape[0], 1))
        active = self.active_groups_
        if active.size:
            # zero groups cost nothing at predict time: their maps are not applied
            F = self._features(X, active)
            rows = np.concatenate([np.arange(*self.feature_bounds_[t:t + 2]) for t in active])
            scores += F @ coef[:, rows].T
        return scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


class GroupLassoMKLClassifier(ClassifierMixin, OneVsRestFitMixin, GroupLassoMKL):
    """Multiple kernel learning classifier: group lasso on random Fourier features.

    One-vs-rest on the +-1 code: one group-lasso problem per class (one for two
    classes), each learning its own kernel weights.

    Parameters
    ----------
    loss : {'squared', 'logistic'}, default='squared'
        The per-sample loss on the +-1 code; ``'logistic'`` gives ``predict_proba``.
    groups, n_components, gamma, alpha, max_iter, tol, random_state, maps
        As in :class:`GroupLassoMKL`, with its defaults, and so are ``n_alphas``,
        ``alpha_min_ratio``, ``alpha_selection`` and ``validation_fraction``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    group_norms_, kernel_weights_, coef_, intercept_
        As in :class:`GroupLassoMKL`: one row (or entry) per class for more
        than two classes; for two classes one problem, scoring ``classes_[1]``
        positive. The other attributes are those listed there.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import GroupLassoMKLClassifier
    >>> from kernelmaps.datasets import make_planted_groups
    >>> X, y, groups, informative = make_planted_groups(600, random_state=0)
    >>> clf = GroupLassoMKLClassifier(groups, n_components=64, random_state=0).fit(X, y)
    >>> clf.group_norms_.shape
    (10,)
    >>> clf.group_names_[:3].tolist()
    ['group0', 'group1', 'group2']
    >>> sorted(np.argsort(clf.group_norms_)[-3:].tolist()) == informative.tolist()
    True
    """

    name = "group_lasso_mkl_classifier"
    test_params = {"n_components": 64, "alpha": 0.001, "max_iter": 200, "random_state": 0}
    _losses = ("squared", "logistic")

    def _fit_targets(self, X, T, labels):
        self._fit(X, np.ascontiguousarray(T), labels, self._check_params())

    def _weight_rows(self):
        # two classes share one problem, which scores classes_[1] positive
        labels = self.classes_ if len(self.classes_) > 2 else self.classes_[1:]
        return list(labels), "class"

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class of the largest score (the sign of the score for two classes)."""
        scores = self.decision_function(X)
        return classes_from_scores(self.classes_, scores)

    @available_if(lambda self: self.loss == "logistic")
    def predict_proba(self, X):
        """Class probabilities of the logistic loss (one-vs-rest, normalized; ``loss='logistic'``)."""
        scores = self._decision(X)
        p = 1.0 / (1.0 + np.exp(-scores))
        if p.shape[1] == 1:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)


class GroupLassoMKLRegressor(RegressorMixin, RegressionFitMixin, GroupLassoMKL):
    """Multiple kernel learning regressor: group lasso on random Fourier features.

    With ``loss='epsilon_logistic'``, the smooth epsilon-insensitive gamma-logistic
    loss of the paper (eq. after 17),
    ``(1/s) log(1 + e^{s(f-y-eps)}) + (1/s) log(1 + e^{s(y-f-eps)}) - (2/s) log(1 + e^{-s eps})``,
    where ``s`` is ``sharpness`` (the paper's gamma, renamed so that it cannot be
    mistaken for a kernel bandwidth). It tends to ``max(0, |f - y| - eps)`` as
    ``s`` grows.

    Parameters
    ----------
    loss : {'squared', 'epsilon_logistic'}, default='squared'
    tol : float, default=1e-6
        As in :class:`GroupLassoMKL`, with a smaller default.
    epsilon : float >= 0, default=0.1
        Half-width of the insensitive zone (``loss='epsilon_logistic'``).
    sharpness : float > 0, default=10.0
        The loss's gamma: larger is closer to the epsilon-insensitive loss, with a
        proportionally smaller FISTA step.
    groups, n_components, gamma, alpha, max_iter, random_state, maps
        As in :class:`GroupLassoMKL`, with its defaults, and so are ``n_alphas``,
        ``alpha_min_ratio``, ``alpha_selection`` and ``validation_fraction``.

    Attributes
    ----------
    group_norms_, kernel_weights_ : ndarray of shape (n_groups,)
        One entry per kernel, in the order of ``group_names_``.
    coef_ : ndarray of shape (n_random_features,)
    intercept_ : float
        The other attributes are those of :class:`GroupLassoMKL`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import GroupLassoMKLRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 6))
    >>> y = np.sin(2 * X[:, 0]) + np.cos(X[:, 1])      # only group 0 matters
    >>> reg = GroupLassoMKLRegressor([0, 0, 1, 1, 2, 2], n_components=64,
    ...                              random_state=0).fit(X, y)

    With ``alpha=None`` the fit follows a path of 20 penalties, largest first,
    and picks one on held-out rows; the kernel that matters enters the path first:

    >>> reg.alphas_.shape, reg.group_norms_path_.shape
    ((20,), (20, 3))
    >>> entry = np.argmax(reg.group_norms_path_ > 0, axis=0)
    >>> bool(entry[0] < entry[1:].min()), int(np.argmax(reg.kernel_weights_))
    (True, 0)
    """

    name = "group_lasso_mkl_regressor"
    _classifier_name = "GroupLassoMKLClassifier"
    test_params = {"n_components": 64, "alpha": 0.001, "max_iter": 200, "random_state": 0}
    _losses = ("squared", "epsilon_logistic")

    def __init__(self, groups=None, *, n_components=256, gamma="scale", loss="squared",
                 alpha=None, max_iter=1000, tol=1e-6, random_state=None, epsilon=0.1,
                 sharpness=10.0, maps=None, n_alphas=20, alpha_min_ratio=1e-3,
                 alpha_selection="min", validation_fraction=0.25):
        super().__init__(groups, n_components=n_components, gamma=gamma, loss=loss,
                         alpha=alpha, max_iter=max_iter, tol=tol, random_state=random_state,
                         maps=maps, n_alphas=n_alphas, alpha_min_ratio=alpha_min_ratio,
                         alpha_selection=alpha_selection,
                         validation_fraction=validation_fraction)
        self.epsilon = epsilon
        self.sharpness = sharpness

    def _make_loss(self):
        check_positive(self.epsilon, "epsilon", allow_zero=True)
        check_positive(self.sharpness, "sharpness")
        return Loss(self.loss, self.epsilon, self.sharpness)

    def _fit_targets(self, X, y, labels):
        self._fit(X, np.ascontiguousarray(y[:, None]), None, self._check_params())

    def predict(self, X):
        """``F(X) w + b``."""
        return self._decision(X)[:, 0]
