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
    """``||K - K_hat||_F / ||K||_F``."""
    K, K_hat = _approximation(K, K_hat, Z, Z_y)
    return float(np.linalg.norm(K - K_hat) / np.linalg.norm(K))


def nrmse(K, K_hat=None, *, Z=None, Z_y=None):
    """Normalized root-mean-square error, ``RMSE(K, K_hat) / (max K - min K)``.

    Hamid et al. (2014) report NRMSE without printing its normalization; this is
    the textbook one (by the range of the target). Orderings between maps, which
    is what their figures show, do not depend on the choice.
    """
    K, K_hat = _approximation(K, K_hat, Z, Z_y)
    spread = float(K.max() - K.min())
    if spread == 0:
        raise ValueError("K is constant: NRMSE by its range is undefined")
    return float(np.sqrt(np.mean((K - K_hat) ** 2)) / spread)


def kernel_mse(K, K_hat=None, *, Z=None, Z_y=None):
    """Mean squared error ``mean((K - K_hat)^2)``, as in Yu et al. (2015)."""
    K, K_hat = _approximation(K, K_hat, Z, Z_y)
    return float(np.mean((K - K_hat) ** 2))
