"""KRR-GD: exact kernel ridge with Gaussian scales learned by gradient descent.

The baseline of Băzăvan et al. (2012), after Chapelle et al. (2002): the same
validation objective as :class:`kernelmaps.FourierKernelRidge`, computed through
the exact Gram matrix of ``k(x, y) = exp(-sum_i sigma_i^2 (x_i - y_i)^2 / 2)``.

With ``A = K + lambda I``, ``alpha = A^-1 y``, ``f = K_val alpha - v`` and
``R = A^-1 K_val^T f``, the gradient is

    dJ/dsigma_i = (2 / |f|) sum_kl dK_val[k, l] (f alpha^T)[k, l]
                  - (2 / |f|) sum_kl dK[k, l] (R alpha^T)[k, l],
    dK[k, l] / dsigma_i = -sigma_i (x_ki - x_li)^2 K[k, l],

and for ``W = K o G`` every dimension's ``sum_kl (a_ki - b_li)^2 W[k, l]`` comes out
of ``a^2 . W 1 + b^2 . W^T 1 - 2 colsum(a o (W b))``: one GEMM ``W b``. Each
evaluation costs ``O(N^2 d)`` for the Gram matrices and the GEMM and ``O(N^3)``
for the Cholesky factorization, in ``O(N^2)`` memory. It stays exact, so it is
refused beyond :data:`KRR_GD_MAX_SAMPLES` samples.
"""

import numpy as np

from ._core.validation import check_fits_in_memory
from ._kernels.exact import gram_matrix
from ._machines.scale_learning import ScaleLearningClassifier, ScaleLearningRegressor, cholesky_solver

__all__ = ["KernelRidgeGD", "KernelRidgeGDClassifier"]

#: The most samples KRR-GD fits: three N x N float64 matrices (the Gram matrix,
#: its Cholesky factor and the gradient's weights) are 6 GiB here, and each
#: objective evaluation an N^3 / 3 factorization.
KRR_GD_MAX_SAMPLES = 16000
#: Rows per block of the weights ``K o (R alpha^T)``, to avoid an extra N x N array.
_BLOCK_ROWS = 1024


def _weighted_square_distances(a, b, W):
    """``s[i] = sum_kl (a[k, i] - b[l, i])^2 W[k, l]`` for every dimension ``i``."""
    return (a * a).T @ W.sum(axis=1) + (b * b).T @ W.sum(axis=0) - 2.0 * np.einsum("ki,ki->i", a, W @ b)


class ExactValidationObjective:
    """``sigma -> (validation loss, gradient)`` of exact Gaussian kernel ridge.

    Parameters
    ----------
    X_train, X_val : ndarray of shape (n, d), (n_val, d), float64
    T_train, T_val : ndarray of shape (n, t), (n_val, t)
        Centred targets.
    alpha : float
    """

    def __init__(self, X_train, T_train, X_val, T_val, alpha):
        # a shift-invariant kernel: centring costs nothing and keeps the expanded
        # squared distances of the gradient free of cancellation
        center = X_train.mean(axis=0)
        self.X = np.ascontiguousarray(X_train - center)
        self.U = np.ascontiguousarray(X_val - center)
        self.train_inputs = self.X
        self.T_train, self.T_val, self.alpha = T_train, T_val, alpha

    def __call__(self, sigma, gradient=True):
        Xs, Us = self.X * sigma, self.U * sigma
        K = gram_matrix(Xs, None, "gaussian", 0.5, 2, 1.0)
        K_val = gram_matrix(Us, Xs, "gaussian", 0.5, 2, 1.0)
        A = K.copy()
        A[np.diag_indices_from(A)] += self.alpha
        solve = cholesky_solver(A)
        dual = solve(self.T_train)
        f = K_val @ dual - self.T_val
        scale = 1.0 / f.size
        loss = scale * float(np.einsum("ij,ij->", f, f))
        if not gradient:
            return loss, None
        R = solve(K_val.T @ f)
        K_val *= f @ dual.T  # W_val = K_val o (f alpha^T)
        for start in range(0, len(K), _BLOCK_ROWS):  # W_train = -K o (R alpha^T)
            K[start:start + _BLOCK_ROWS] *= -(R[start:start + _BLOCK_ROWS] @ dual.T)
        s = _weighted_square_distances(self.U, self.X, K_val) + _weighted_square_distances(self.X, self.X, K)
        return loss, 2.0 * scale * (-sigma * s)


class _KernelRidgeGDBase:
    """Parameters and hooks shared by the KRR-GD regressor and classifier."""

    paper = ("Chapelle, Vapnik, Bousquet & Mukherjee, Choosing multiple parameters for support vector "
             "machines, Machine Learning 2002 (KRR-GD, the baseline of Băzăvan et al., NIPS 2012)")
    kernel_family = "shift_invariant"
    kind = "baseline"

    def __init__(self, *, alpha=1.0, per_dimension=True, validation_fraction=0.25, max_iter=100, tol=1e-6,
                 scale_penalty=0.0, random_state=None):
        super().__init__(alpha=alpha, per_dimension=per_dimension, validation_fraction=validation_fraction,
                         max_iter=max_iter, tol=tol, scale_penalty=scale_penalty, random_state=random_state)

    def _check_params(self, X):
        n = len(X)
        if n > KRR_GD_MAX_SAMPLES:
            raise ValueError(
                f"{type(self).__name__} is exact: it fits at most KRR_GD_MAX_SAMPLES={KRR_GD_MAX_SAMPLES} "
                f"samples (N x N Gram matrices, N^3 per step), got n_samples={n}; use FourierKernelRidge "
                "for more"
            )
        # K, its Cholesky factor and the validation block, at the final refit size
        check_fits_in_memory(3 * 8 * n * n, f"n_samples={n}", "the exact Gram matrix, its factor and weights")

    def _objective(self, X_train, T_train, X_val, T_val, rng):
        return ExactValidationObjective(X_train, T_train, X_val, T_val, self.alpha_)

    def _refit(self, X, T, sigma, rng):
        self.center_ = X.mean(axis=0)
        self.X_fit_ = np.ascontiguousarray((X - self.center_) * sigma)
        A = gram_matrix(self.X_fit_, None, "gaussian", 0.5, 2, 1.0)
        A[np.diag_indices_from(A)] += self.alpha_
        self.dual_coef_ = cholesky_solver(A)(T)

    def _predict_centred(self, X):
        Xs = np.ascontiguousarray((X - self.center_) * self.scales_)
        return gram_matrix(Xs, self.X_fit_, "gaussian", 0.5, 2, 1.0) @ self.dual_coef_


class KernelRidgeGD(_KernelRidgeGDBase, ScaleLearningRegressor):
    """KRR-GD regression: exact Gaussian kernel ridge with learned scales.

    Exact kernel ridge regression ``c = (K + alpha I)^-1 y`` on the Gaussian kernel
    ``exp(-sum_i sigma_i^2 (x_i - y_i)^2 / 2)``, with ``sigma`` learned as in
    :class:`kernelmaps.FourierKernelRidge`: L-BFGS-B over ``log sigma`` on the
    validation mean squared error plus ``scale_penalty ||sigma||^2``, from the best
    of a few multiples of the heuristic scales, then a refit on all rows. The gradient goes through the
    exact Gram matrix (see the module docstring): ``O(N^2)`` memory and ``O(N^3)``
    per step, so at most ``KRR_GD_MAX_SAMPLES = 16000`` samples are accepted.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge penalty (> 0).
    per_dimension : bool, default=True
        One scale per input dimension, or one for all.
    validation_fraction : float in (0, 1), default=0.25
    max_iter : int, default=100
    tol : float, default=1e-6
        L-BFGS-B's ``ftol`` and ``gtol``.
    scale_penalty : float, default=0.0
    random_state : int, RandomState or None
        Draws the split.

    Attributes
    ----------
    scales_ : ndarray of shape (n_features,)
    objective_history_ : ndarray
    initial_scales_ : ndarray of shape (n_features,)
    n_iter_ : int
    X_fit_ : ndarray of shape (n_samples, n_features)
        Centred training inputs times ``scales_``.
    center_ : ndarray of shape (n_features,)
    dual_coef_ : ndarray of shape (n_samples, n_targets)
    intercept_ : ndarray of shape (n_targets,)

    References
    ----------
    Chapelle, O., Vapnik, V., Bousquet, O. and Mukherjee, S. Choosing multiple
    parameters for support vector machines. Machine Learning 46, 2002.

    Băzăvan, E. G., Li, F. and Sminchisescu, C. Learning random kernel
    approximations for object recognition. NIPS 2012 (KRR-GD, Table 2).

    Examples
    --------
    The descent starts from equal scales and records the validation objective
    after every L-BFGS step; it only goes down:

    >>> import numpy as np
    >>> from kernelmaps import KernelRidgeGD
    >>> X = np.random.default_rng(0).standard_normal((300, 4))
    >>> y = np.sin(2 * X[:, 0])
    >>> reg = KernelRidgeGD(alpha=1e-2, max_iter=30, random_state=0).fit(X, y)
    >>> path = reg.objective_history_
    >>> len(path) == reg.n_iter_ + 1, bool(np.all(np.diff(path) <= 0))
    (True, True)
    >>> bool(np.ptp(reg.initial_scales_) < 0.1), bool(reg.scales_[0] > 3 * reg.scales_[1:].max())
    (True, True)
    """

    name = "kernel_ridge_gd"
    test_params = {"max_iter": 20}


class KernelRidgeGDClassifier(_KernelRidgeGDBase, ScaleLearningClassifier):
    """KRR-GD classification: one-vs-rest exact kernel ridge with learned scales.

    Parameters and attributes are those of :class:`KernelRidgeGD`; the
    targets are the ±1 one-vs-rest codes of ``classes_`` (one problem for two
    classes), so ``intercept_`` has one entry per problem.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)

    References
    ----------
    Chapelle et al., Machine Learning 46, 2002; Băzăvan, Li & Sminchisescu, NIPS 2012
    (KRR-GD, Table 2).

    Examples
    --------
    Two classes make one ±1 problem; the model keeps the training rows, centred
    and multiplied by the learned scales:

    >>> from numpy import allclose, random, where
    >>> from kernelmaps import KernelRidgeGDClassifier
    >>> X = random.default_rng(0).standard_normal((300, 3))
    >>> y = where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4, "out", "in")
    >>> clf = KernelRidgeGDClassifier(alpha=1e-2, max_iter=30, random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), clf.dual_coef_.shape
    (['in', 'out'], (300, 1))
    >>> allclose(clf.X_fit_, (X - clf.center_) * clf.scales_), bool(clf.score(X, y) > 0.9)
    (True, True)
    """

    name = "kernel_ridge_gd_classifier"
    test_params = {"max_iter": 20}
