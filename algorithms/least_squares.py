"""Regularized least squares on features: normal equations accumulated in one pass over
row blocks, or conjugate gradient for very wide sparse features."""

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin

from ._core.base import classes_from_scores, one_vs_rest_code
from ._core.sample_weights import CLASS_WEIGHT_DOC, class_row_weights
from ._core.validation import check_positive, dask_support, is_dask_array
from ._machines.gaussian_process import PREDICT_COV_DOC, check_amplitude, with_doc
from ._machines.least_squares import FeaturePosteriorMixin, LeastSquaresBase, check_class_labels, class_indices
# Not for import (its public name is kernelmaps.NormalEquations): pickles of LeastSquares* written by
# the versions that defined the class in this module name it by this path, and unpickling looks it up here.
from ._solvers.normal_equations import NormalEquations  # noqa: F401

__all__ = ["LeastSquaresClassifier", "LeastSquaresRegressor"]

#: The attributes every least-squares fit sets, shared by the two docstrings.
_FIT_ATTRIBUTES_DOC = """    n_iter_ : int
        Conjugate gradient iterations (1 for the one solve of the normal equations).
    n_features_in_ : int
        Width of the features (of ``feature_map``'s output, if given).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names of a ``DataFrame`` ``Z``, if it had string names.
    normal_equations_ : NormalEquations
        The accumulated (weighted) moments (solver 'normal' only), which
        :meth:`partial_fit` and :meth:`merge` continue.
"""


class LeastSquaresClassifier(ClassifierMixin, LeastSquaresBase):
    __doc__ = """One-vs-rest ridge classification on features ("Fourier + LS").

    Each class gets a least-squares regressor onto ``+1`` (the class) / ``-1`` (the
    rest); a binary problem uses one. All share the Hessian ``Z^T W Z + alpha I``,
    accumulated together with ``Z^T W Y`` in one pass over row blocks, so the fit
    runs out of core through :meth:`partial_fit`. Prediction is the arg-max score.
    Sparse features are never densified; very wide ones (random binning's) go to
    conjugate gradient (:func:`kernelmaps._solvers.sparse_ridge.ridge_cg`).

    With sample weights ``w_i`` (``sample_weight`` times the class weights) the
    loss is ``sum_i w_i ||z_i W + b - y_i||^2 + alpha ||W||^2``, the intercept
    centring the features at their weighted mean, as scikit-learn's ``Ridge``:
    an integer weight counts as that many copies of its row, and a zero weight
    as no row at all.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty (>= 0), on the scale of the summed (not averaged) squared
        errors: ``alpha`` of ``sklearn.linear_model.Ridge``. Where the normal
        equations are singular to working precision (``alpha=0`` with more
        features than independent rows, or an ``alpha`` below the rounding of
        ``Z^T Z``), 'normal' gives their minimum-norm least-squares solution
        by a pivoted Cholesky factorization, with a ``LinAlgWarning``.
    fit_intercept : bool, default=True
        Unpenalized intercept per class.
    solver : {'auto', 'normal', 'cg'}, default='auto'
        'normal': the normal equations (the only solver of ``partial_fit``,
        ``merge`` and Dask input). 'cg': Jacobi-preconditioned conjugate gradient
        on implicitly centred features. 'auto' (:func:`select_solver`): 'cg' for
        sparse features wider than 4096 columns or when two ``D x D`` float64
        matrices would not fit in memory, 'normal' otherwise.
    tol : float, default=1e-4
        'cg' stops at this relative residual of the preconditioned system;
        classifiers' predictions rarely change below it, and each tenfold
        smaller ``tol`` costs more iterations.
    max_iter : int, default=1000
        'cg' iterations at most; a ``ConvergenceWarning`` if ``tol`` is not met.
""" + CLASS_WEIGHT_DOC + """        ``partial_fit`` and Dask input take a dict only: one block of rows
        does not give the class frequencies 'balanced' needs.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The classes of the rows of positive weight.
    coef_ : ndarray of shape (n_features, n_outputs)
        One column per class (one in all for two classes).
    intercept_ : ndarray of shape (n_outputs,)
    solver_ : {'normal', 'cg'}
""" + _FIT_ATTRIBUTES_DOC + """
    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (Table 1, "Fourier + LS", eq. 4).

    Hestenes, M. R. and Stiefel, E. Methods of conjugate gradients for solving
    linear systems. J. Res. Natl. Bur. Stand. 49(6), 1952.

    Examples
    --------
    Gaussian kernel features of the digits, then least squares ("Fourier + LS"),
    scored on the rows it was not trained on:

    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import Fastfood, LeastSquaresClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> Z = Fastfood(n_components=512, random_state=0).fit_transform(X / 16)
    >>> clf = LeastSquaresClassifier(alpha=0.1).fit(Z[:1000], y[:1000])
    >>> print(round(clf.score(Z[1000:], y[1000:]), 2))
    0.95

    A sample weight of 2 counts a row twice:

    >>> import numpy as np
    >>> w = np.r_[np.full(100, 2.0), np.ones(200)]
    >>> twice = LeastSquaresClassifier(alpha=0.1).fit(Z[:300], y[:300], sample_weight=w)
    >>> rows = np.r_[np.arange(100), np.arange(300)]
    >>> repeated = LeastSquaresClassifier(alpha=0.1).fit(Z[rows], y[rows])
    >>> bool(np.allclose(twice.coef_, repeated.coef_, rtol=1e-8, atol=1e-10))
    True
    """

    name = "least_squares"

    def __init__(self, alpha=1.0, *, fit_intercept=True, solver="auto", tol=1e-4, max_iter=1000,
                 class_weight=None):
        super().__init__(alpha, fit_intercept=fit_intercept, solver=solver, tol=tol, max_iter=max_iter)
        self.class_weight = class_weight

    def _code(self):
        return one_vs_rest_code(len(self.classes_))

    def _n_targets(self):
        return self._code().shape[1]

    def fit(self, Z, y, sample_weight=None, *, feature_map=None):
        """Fit on features ``Z`` and labels ``y`` in one pass over row blocks.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
            The features; with ``feature_map``, its inputs. A row-chunked Dask
            array is accumulated chunk by chunk on the workers and solved here
            (:func:`kernelmaps.dask.fit_learner`).
        y : array-like of shape (n_samples,), or a Dask array
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Non-negative weight of each row's squared error (``None``: all 1).
            Rows of weight 0 are dropped first, so that they neither add a class
            nor cost memory in the fit. Not with Dask input.
        feature_map : fitted kernelmaps feature map, optional
            Maps ``Z`` block by block while accumulating, so that the features
            never exist in full (then ``predict`` takes ``feature_map.transform(X)``).
            Conjugate gradient maps all rows once (sparse output is compact).

        Returns
        -------
        self
        """
        return self._fit(Z, y, feature_map, sample_weight)

    def partial_fit(self, Z, y, classes=None, sample_weight=None, *, feature_map=None):
        """Accumulate a block of rows and re-solve.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
        y : array-like of shape (n_samples,), or a Dask array
        classes : array-like, required on the first call
        sample_weight : array-like of shape (n_samples,) or float, default=None
            As in :meth:`fit`: the blocks' weighted sums add up to the weighted
            fit of all their rows. ``class_weight='balanced'`` is refused (a
            block does not give the class frequencies); a dict is applied to
            every block. Not with Dask input.
        feature_map : fitted kernelmaps feature map, optional
            As in :meth:`fit`.

        Returns
        -------
        self
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            raise ValueError("classes must be given on the first call to partial_fit")
        return self._partial_fit(Z, y, first, feature_map, classes=classes, sample_weight=sample_weight)

    def _begin(self, classes):
        """First call: check the parameters, learn the classes, start the equations."""
        check_positive(self.alpha, "alpha", allow_zero=True)
        # the distinct classes, not rows: every value is distinct, which is no sign of regression
        check_class_labels(classes, "classes")
        self.classes_ = np.unique(classes)
        if len(self.classes_) < 2:
            raise ValueError(f"need at least 2 classes, got {len(self.classes_)} class")
        self._start_equations()

    def _labels(self, y):
        """Indices of ``y`` in ``classes_``; an error for labels outside them."""
        return class_indices(self.classes_, y)

    def _row_weights(self, labels, sample_weight, partial=False):
        return class_row_weights(self.class_weight, self.classes_, labels, sample_weight, partial=partial)

    def _target_arguments(self, labels):
        return {"labels": labels, "code": self._code()}

    def _block_targets(self, y):
        return self._labels(y)

    def decision_function(self, Z):
        """``Z @ coef_ + intercept_``: one score per class (one column if binary).

        A Dask array gives a lazy Dask array.
        """
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "decision_function")
        return self._scores(Z)

    def predict(self, Z):
        """Class with the largest score (lazily for a Dask array)."""
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "predict")
        scores = self.decision_function(Z)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)


class LeastSquaresRegressor(RegressorMixin, FeaturePosteriorMixin, LeastSquaresBase):
    __doc__ = """Ridge regression on features, accumulated in one pass over row blocks.

    Minimizes ``sum_i w_i ||z_i W + b - y_i||^2 + alpha ||W||^2`` (``w_i = 1``
    without ``sample_weight``), the intercept centring at the weighted means:
    ``sklearn.linear_model.Ridge`` with the same ``alpha`` and ``sample_weight``.
    Sparse features are never densified; very wide ones go to conjugate gradient.

    **Bayesian linear regression.** The fit is the posterior mean of
    ``y_i = z_i w + b + e_i`` with the prior ``w ~ N(0, s I)`` (``s`` the
    amplitude: on features ``z`` approximating a kernel ``k``, ``f ~ GP(0, s k)``
    as in :class:`KernelRidge`), the intercept ``b`` under a flat prior and
    the noise ``e_i ~ N(0, alpha s / w_i)`` (Bishop 2006, §3.3). With ``mu``
    the weighted feature means, ``N = sum_i w_i``, ``sigma^2 = alpha s``
    (``noise_variance_``) and ``A = Z_c^T W Z_c + alpha I`` the centred system
    the normal equations solve, the posterior covariance of the latent
    ``f(x) = z(x) w + b`` is ``sigma^2 ((z - mu)^T A^-1 (z' - mu) + 1/N)``: the
    ``1/N`` is the intercept's own variance (without an intercept, ``mu = 0``
    and no ``1/N``). The evidence, with ``b`` integrated out (a density on
    ``n - 1`` degrees of freedom: compare fits of the same ``y`` and
    ``fit_intercept``), is ``-R / (2 sigma^2) - ((n-1)/2) log(2 pi s) -
    ((n-D-1)/2) log alpha - (1/2) log |A| - (1/2) log N + (1/2) sum_i log w_i``,
    ``R`` the minimized objective; ``amplitude='auto'`` maximizes it at
    ``s = R / (alpha (n - 1))`` (``n`` for ``n - 1`` without an intercept). Each
    target has its own amplitude. The fit keeps the Cholesky factor of ``A``:
    ``8 D^2`` bytes beside the ``D x D`` normal equations. Conjugate gradient
    (``solver_='cg'``) forms no ``A``: ``amplitude_`` is then computed from the
    residuals, and the posterior and the evidence are refused.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty (>= 0), on the scale of the summed squared errors; a
        singular system is solved as in :class:`LeastSquaresClassifier`. The
        noise-to-signal variance ratio; 0 (a flat prior on ``w``) has no posterior.
    fit_intercept : bool, default=True
    solver : {'auto', 'normal', 'cg'}, default='auto'
        As in :class:`LeastSquaresClassifier`; 'auto' (:func:`select_solver`) is
        'cg' for sparse features wider than 4096 columns or when two ``D x D``
        float64 matrices would not fit in memory, 'normal' otherwise.
    tol, max_iter : float, default=1e-4, and int, default=1000
        Conjugate gradient's stopping rule, as in :class:`LeastSquaresClassifier`.
    amplitude : 'auto' or float, default='auto'
        The prior's signal variance ``s`` (> 0); 'auto': each target's maximum
        likelihood value. It changes only the uncertainty, never the fit.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_targets)
        One column per target (one for 1-D ``y``).
    amplitude_ : float or ndarray of shape (n_targets,)
        The signal variance of each target (a float for a 1-D ``y``); NaN for
        ``alpha=0``, or 'auto' on one row with an intercept.
    noise_variance_ : float or ndarray of shape (n_targets,)
        ``alpha * amplitude_``: the noise variance of a row of weight 1.
    posterior_factor_ : ndarray of shape (n_features, n_features) or None
        Lower Cholesky factor of ``A``; None after conjugate gradient, for
        ``alpha=0`` or a system singular to working precision.
    log_marginal_likelihood_value_ : float or None
        The evidence of the fit (:meth:`log_marginal_likelihood`).
    intercept_ : ndarray of shape (n_targets,)
        Zeros without ``fit_intercept``.
    n_targets_ : int
        Columns of ``y`` (1 for 1-D ``y``).
    solver_ : {'normal', 'cg'}
        The solver the fit used ('auto' resolved).
""" + _FIT_ATTRIBUTES_DOC + """
    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (eq. 4).

    Hestenes, M. R. and Stiefel, E. Methods of conjugate gradients for solving
    linear systems. J. Res. Natl. Bur. Stand. 49(6), 1952.

    Bishop, C. M. Pattern Recognition and Machine Learning. Springer, 2006
    (§3.3, §3.5). Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for
    Machine Learning. MIT Press, 2006 (eq. 2.11-2.12).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import LeastSquaresRegressor
    >>> Z = np.random.default_rng(0).standard_normal((30, 2))
    >>> y = Z @ np.array([1.0, 2.0]) + 3.0
    >>> reg = LeastSquaresRegressor(alpha=0.0).fit(Z, y)
    >>> np.round(reg.coef_.ravel(), 3), np.round(reg.intercept_, 3)
    (array([1., 2.]), array([3.]))

    The same weighted fit as scikit-learn's ``Ridge``:

    >>> from sklearn.linear_model import Ridge
    >>> w, noisy = np.random.default_rng(1).uniform(0, 2, 30), y + np.sin(5 * Z[:, 0])
    >>> ours = LeastSquaresRegressor(alpha=2.0).fit(Z, noisy, sample_weight=w)
    >>> ridge = Ridge(alpha=2.0).fit(Z, noisy, sample_weight=w)
    >>> bool(np.allclose(ours.coef_.ravel(), ridge.coef_) and np.allclose(ours.intercept_, ridge.intercept_))
    True

    The posterior std of the latent function, and the variance of the noise
    (``sin(5 z_0)`` here, of variance about 1/2):

    >>> mean, std = ours.predict(Z[:3], return_std=True)
    >>> std.shape, bool(np.all(std > 0)), round(float(ours.noise_variance_), 3)
    ((3,), True, 0.561)
    """

    name = "least_squares_regressor"
    _y_validation = {"multi_output": True, "y_numeric": True}

    def __init__(self, alpha=1.0, *, fit_intercept=True, solver="auto", tol=1e-4, max_iter=1000, amplitude="auto"):
        super().__init__(alpha, fit_intercept=fit_intercept, solver=solver, tol=tol, max_iter=max_iter)
        self.amplitude = amplitude

    def _n_targets(self):
        return self.n_targets_

    def fit(self, Z, y, sample_weight=None, *, feature_map=None):
        """Fit on features ``Z`` and targets ``y`` (1-D or 2-D).

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
            The features; with ``feature_map``, its inputs (see
            :meth:`LeastSquaresClassifier.fit`).
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a Dask array
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Non-negative weight of each row's squared error (``None``: all 1);
            rows of weight 0 are dropped. Not with Dask input.
        feature_map : fitted kernelmaps feature map, optional

        Returns
        -------
        self
        """
        return self._fit(Z, y, feature_map, sample_weight)

    def partial_fit(self, Z, y, sample_weight=None, *, feature_map=None):
        """Accumulate a block of rows and re-solve.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features), or a Dask array
        y : array-like of shape (n_samples,) or (n_samples, n_targets), or a Dask array
        sample_weight : array-like of shape (n_samples,) or float, default=None
            As in :meth:`fit`. Not with Dask input.
        feature_map : fitted kernelmaps feature map, optional

        Returns
        -------
        self
        """
        return self._partial_fit(Z, y, not hasattr(self, "n_targets_"), feature_map,
                                 sample_weight=sample_weight)

    def _begin(self, y):
        check_positive(self.alpha, "alpha", allow_zero=True)
        check_amplitude(self.amplitude)
        self.n_targets_ = self._targets(y).shape[1]
        # scikit-learn's rule for multi-output regressors: predictions take y's shape,
        # so a column vector (n, 1) predicts (n, 1) and a 1-D y predicts 1-D
        self._column_target = np.ndim(y) == 2
        self._start_equations()

    @staticmethod
    def _targets(y):
        return np.asarray(y, dtype=np.float64).reshape(len(y), -1)

    def _target_arguments(self, T):
        return {"T": T}

    def _block_targets(self, y):
        T = self._targets(y)
        if T.shape[1] != self.n_targets_:
            raise ValueError(f"y has {T.shape[1]} targets, but the first call had {self.n_targets_}")
        return T

    @with_doc(PREDICT_COV_DOC)
    def predict(self, Z, return_std=False, return_cov=False):
        """Predicted targets (lazily for a Dask array), and their posterior std or covariance.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_rows, n_features), or a Dask array
            Features (``feature_map.transform(X)`` after a fit with ``feature_map``).
        return_std : bool, default=False
            Also return the posterior std of the latent ``f`` at each row (``y``'s
            adds ``noise_variance_`` to its square). Rows in memory only.
        """
        if return_std or return_cov:
            return self._posterior_predict(Z, return_std, return_cov)
        if is_dask_array(Z):
            return dask_support().predict_lazily(self, Z, "predict")
        scores = self._scores(Z)
        return scores.reshape(-1, 1) if scores.ndim == 1 and getattr(self, "_column_target", False) else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
