"""Pegasos: a minibatch primal sub-gradient solver for the linear SVM."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._core.base import RegisteredEstimator, classes_from_scores, encode_classes, one_vs_rest_code
from ._core.validation import (FeatureOverflowError, check_fits_in_memory, check_input, check_n_components,
                               check_positive, clear_fitted_state)
from ._core.parallel import blas_single_thread
from ._core.sample_weights import CLASS_WEIGHT_DOC, check_sample_weight, class_row_weights, drop_zero_weights
from ._solvers.pegasos_dense import draw_minibatches, pegasos_steps

__all__ = ["PegasosSVC"]


class PegasosSVC(ClassifierMixin, RegisteredEstimator, BaseEstimator):
    __doc__ = """Linear SVM trained by minibatch Pegasos, one-vs-rest for multi-class.

    Minimizes ``lam/2 (||w||^2 + b^2) + mean_i max(0, 1 - y_i (w . z_i + b))`` per
    class by minibatch sub-gradient steps of size ``1/(lam t)``, each followed by
    the projection onto the ball of radius ``1/sqrt(lam)`` (the CNM paper's
    Algorithm 1). The intercept is the weight of a constant feature. The
    minibatches are drawn in Python from ``random_state``, so the result does not
    depend on the thread count.

    Sparse features (e.g. random binning's CSR output, millions of columns with a
    few hundred non-zeros per row) are never densified: their steps keep each
    class's weights as a scalar times a vector, so that a step costs time in the
    minibatch's non-zeros rather than in ``n_features``
    (:func:`~kernelmaps._solvers.pegasos_sparse.pegasos_sparse_steps`). The same
    data and seed give the same coefficients, up to round-off, dense or sparse.

    **Sample and class weights.** With row weights ``v_i`` (``sample_weight``
    times the class weights) the objective is
    ``lam/2 (||w||^2 + b^2) + sum_i v_i max(0, 1 - y_i (w . z_i + b)) / sum_i v_i``:
    the weighted mean of the hinge losses, which is the unweighted objective
    of the data with each row repeated ``v_i`` times (integer weights). Each
    row's hinge sub-gradient is scaled by ``v_i / mean(v)``, an unbiased
    estimate of its sub-gradient under the same uniform minibatches. Weights
    of 1 give the unweighted fit bit for bit; rows of weight 0 are dropped
    before the minibatches are drawn, so the fit equals the one without them
    for the same seed. Integer weights and repeated rows give the same
    objective but other random steps: equal fits in expectation, not bit for
    bit. Scaling all weights changes nothing: the loss is a weighted mean.

    Parameters
    ----------
    alpha : float, default=1e-4
        The regularization ``lam``.
    batch_size : int, default=500
        Minibatch size M (the CNM paper's setting).
    max_iter : int, default=2000
        Number of Pegasos steps.
    fit_intercept : bool, default=True
    random_state : int, RandomState or None
""" + CLASS_WEIGHT_DOC + """
    Attributes
    ----------
    classes_ : ndarray
        The classes of the rows of positive weight.
    coef_ : ndarray of shape (n_features, n_outputs)
    intercept_ : ndarray of shape (n_outputs,)
    n_iter_ : int

    References
    ----------
    Shalev-Shwartz, S., Singer, Y., Srebro, N. and Cotter, A. Pegasos: primal
    estimated sub-gradient solver for SVM. Mathematical Programming 127, 2011.
    Yu, F. X. et al. Compact nonlinear maps and circulant extensions. 2015,
    Algorithm 1.

    Examples
    --------
    Two classes split by the line ``x_0 + x_1 = 0``:

    >>> import numpy as np
    >>> from kernelmaps import PegasosSVC
    >>> X = np.random.default_rng(0).standard_normal((200, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> svm = PegasosSVC(alpha=1e-2, batch_size=32, max_iter=500, random_state=0).fit(X, y)
    >>> np.round(svm.coef_.ravel(), 1)  # one weight vector (binary), normal to the line
    array([2.4, 2.4])
    >>> print(round(svm.score(X, y), 2))
    0.97

    The same features as a sparse matrix give the same weights:

    >>> import scipy.sparse as sp
    >>> sparse = PegasosSVC(alpha=1e-2, batch_size=32, max_iter=500, random_state=0)
    >>> bool(np.allclose(sparse.fit(sp.csr_matrix(X), y).coef_, svm.coef_, rtol=1e-9))
    True
    """

    name = "pegasos"
    kind = "learner"
    paper = "Shalev-Shwartz et al., Pegasos, Math. Programming 2011; Yu et al. 2015, Alg. 1"
    kernel_family = "linear"
    test_params = {"alpha": 1e-3, "batch_size": 32, "max_iter": 200}

    def __init__(self, alpha=1e-4, *, batch_size=500, max_iter=2000, fit_intercept=True,
                 random_state=None, class_weight=None):
        self.alpha = alpha
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.class_weight = class_weight

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, Z, y, sample_weight=None):
        """Train on features ``Z`` (dense, or any scipy sparse format) and labels ``y``.

        Parameters
        ----------
        Z : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,) or float, default=None
            Non-negative weight of each row's hinge loss (``None``: all 1),
            multiplied by its class's ``class_weight``; see the class's notes on
            weights. Rows of weight 0 are dropped before the minibatches are
            drawn (and add no class).

        Returns
        -------
        self
        """
        clear_fitted_state(self)
        Z, y = check_input(self, Z, y, reset=True, accept_sparse=True)
        Z, y, sample_weight = drop_zero_weights(Z, y, check_sample_weight(sample_weight, Z))
        lam = check_positive(self.alpha, "alpha")
        batch = check_n_components(self.batch_size, "batch_size")
        n_steps = check_n_components(self.max_iter, "max_iter")
        check_fits_in_memory(8 * n_steps * min(batch, Z.shape[0]), f"max_iter={n_steps}",
                             f"the row indices of {n_steps} minibatches of {min(batch, Z.shape[0])} rows")
        labels = encode_classes(self, y)
        weights = class_row_weights(self.class_weight, self.classes_, labels, sample_weight)
        if weights is not None:
            # the weighted mean loss: its sub-gradient under uniform minibatches
            weights = np.ascontiguousarray(weights / weights.mean(), dtype=np.float64)
        signs = one_vs_rest_code(len(self.classes_))[labels].astype(np.int8)
        n_out = signs.shape[1]
        rng = check_random_state(self.random_state)
        batches = draw_minibatches(rng, Z.shape[0], n_steps, batch)
        W = np.zeros((Z.shape[1], n_out))
        b = np.zeros(n_out)
        signs = np.ascontiguousarray(signs)
        if sp.issparse(Z):
            # imported here: the sparse kernel reuses this module's margin kernels
            from ._solvers.pegasos_sparse import MIN_SCALE, pegasos_sparse_steps

            pegasos_sparse_steps(Z.data, Z.indices, Z.indptr, signs, W, b, batches, lam, 0,
                                 bool(self.fit_intercept), MIN_SCALE, weights)
            largest = float(np.max(np.abs(Z.data), initial=0.0))
        else:
            # The per-step products are small (M x D by D x C): threaded BLAS spends
            # more on hand-offs than on work (measured about 10x slower on 2 cores).
            with blas_single_thread():
                pegasos_steps(Z, signs, W, b, batches, lam, 0, bool(self.fit_intercept), weights)
            largest = float(np.max(np.abs(Z)))
        if not (np.isfinite(W).all() and np.isfinite(b).all()):
            raise FeatureOverflowError(
                f"PegasosSVC overflowed float64: the sub-gradients of features of magnitude up to "
                f"{largest:.3g} (alpha={lam}) are not finite. Rescale the features."
            )
        self.coef_, self.intercept_, self.n_iter_ = W, b, n_steps
        return self

    def decision_function(self, Z):
        """``Z @ coef_ + intercept_``."""
        check_is_fitted(self)
        Z = check_input(self, Z, reset=False, accept_sparse=True)
        scores = Z @ self.coef_ + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, Z):
        """Class with the largest score."""
        scores = self.decision_function(Z)  # checks the fit before classes_ is read
        return classes_from_scores(self.classes_, scores)
