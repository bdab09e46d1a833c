"""Kernel approximation error metrics.

All take the exact Gram matrix ``K`` and either an approximation ``K_hat`` or the
features ``Z`` (then ``K_hat = Z Z^T``; ``Z_y`` gives the cross-Gram ``Z Z_y^T``).

References
----------
Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
ICML 2014 (NRMSE, Figs. 5-7).
Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
circulant extensions. 2015 (kernel MSE, Figs. 2-3).
"""

import numpy as np


def _approximation(K, K_hat=None, Z=None, Z_y=None):
    K = np.asarray(K, dtype=np.float64)
    if (K_hat is None) == (Z is None):
        raise ValueError("give exactly one of K_hat and Z")
    if K_hat is None:
        Z = np.asarray(Z, dtype=np.float64)
        Z_y = Z if Z_y is None else np.asarray(Z_y, dtype=np.float64)
        K_hat = Z @ Z_y.T
    K_hat = np.asarray(K_hat, dtype=np.float64)
    if K.shape != K_hat.shape:
        raise ValueError(f"K has shape {K.shape} but the approximation has {K_hat.shape}")
    if K.size == 0:
        raise ValueError("K is empty")
    return K, K_hat


def relative_frobenius_error(K, K_hat=None, *, Z=None, Z_y=None):
    """``||K - K_hat||_F / ||K||_F``.

    Parameters
    ----------
    K : array-like of shape (n, m)
        The exact Gram matrix.
    K_hat : array-like of shape (n, m), optional
        The approximation; give it or ``Z``.
    Z : array-like of shape (n, D), optional
        Features, giving ``K_hat = Z Z_y^T``.
    Z_y : array-like of shape (m, D), optional
        Features of the second argument of the kernel; ``None`` means ``Z``.

    Returns
    -------
    error : float

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import relative_frobenius_error
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> print(round(relative_frobenius_error(K, np.array([[1.0, 0.4], [0.4, 1.0]])), 4))
    0.0894
    >>> Z = np.array([[1.0, 0.0], [0.6, 0.8]])  # Z Z^T is the same approximation
    >>> print(round(relative_frobenius_error(K, Z=Z), 4))
    0.0894
    """
    K, K_hat = _approximation(K, K_hat, Z, Z_y)
    return float(np.linalg.norm(K - K_hat) / np.linalg.norm(K))


def nrmse(K, K_hat=None, *, Z=None, Z_y=None):
    """Normalized root-mean-square error, ``RMSE(K, K_hat) / (max K - min K)``.

    Hamid et al. (2014) report NRMSE without printing its normalization; this is
    the textbook one (by the range of the target). Orderings between maps, which
    is what their figures show, do not depend on the choice.

    Parameters
    ----------
    K, K_hat, Z, Z_y
        As in :func:`relative_frobenius_error`.

    Returns
    -------
    nrmse : float

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import nrmse
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> print(round(nrmse(K, np.array([[1.0, 0.4], [0.4, 1.0]])), 4))
    0.1414
    """
    K, K_hat = _approximation(K, K_hat, Z, Z_y)
    spread = float(K.max() - K.min())
    if spread == 0:
        raise ValueError("K is constant: NRMSE by its range is undefined")
    return float(np.sqrt(np.mean((K - K_hat) ** 2)) / spread)


def kernel_mse(K, K_hat=None, *, Z=None, Z_y=None):
    """Mean squared error ``mean((K - K_hat)^2)``, as in Yu et al. (2015).

    Parameters
    ----------
    K, K_hat, Z, Z_y
        The Gram matrix and its approximation, as in :func:`relative_frobenius_error`.

    Returns
    -------
    mse : float

    Examples
    --------
    A cross-Gram matrix, between one point and two others:

    >>> import numpy as np
    >>> from kernelmaps import kernel_mse
    >>> K = np.array([[0.8, 0.5]])
    >>> Z, Z_y = np.array([[1.0, 0.0]]), np.array([[0.8, 0.6], [0.6, 0.8]])
    >>> print(round(kernel_mse(K, Z=Z, Z_y=Z_y), 4))  # Z Z_y^T = [[0.8, 0.6]]
    0.005
    """
    K, K_hat = _approximation(K, K_hat, Z, Z_y)
    return float(np.mean((K - K_hat) ** 2))
