"""Exact kernels, the kernel vocabulary and bandwidth heuristics.

One vocabulary across the library:

============  ==========================================  =================
name          k(x, y)                                     family
============  ==========================================  =================
gaussian      ``exp(-gamma ||x - y||_2^2)`` (alias rbf)    shift-invariant
laplacian     ``exp(-gamma ||x - y||_1)``                  shift-invariant
cauchy        ``prod_j 1 / (1 + gamma (x_j - y_j)^2)``     shift-invariant
polynomial    ``(gamma <x, y> + coef0)^degree``            dot-product
exponential   ``exp(gamma <x, y>)``                        dot-product
============  ==========================================  =================

The Cauchy kernel is normalized to ``k(0) = 1``; the table of Rahimi & Recht (2007)
prints ``prod 2/(1+d^2)``, whose value at 0 is ``2^d`` and which is not what their
spectral density ``prod e^{-|w_j|}/2`` transforms to.

Gram matrices are one BLAS product (for the squared distances or inner products)
plus the vectorized Numba epilogue :func:`kernel_block` over row blocks; the L1
and Cauchy kernels, which have no BLAS form, are computed in it directly. The same
serial kernel serves Nystroem's transform and the exact SVM's kernel columns.

References
----------
Rahimi, A. and Recht, B. Random features for large-scale kernel machines. NIPS 2007.
"""

import numbers

import numpy as np
from numba import njit
from scipy.spatial.distance import cdist

from ._fastmath import FASTMATH, vexp
from ._parallel import run_row_blocks

KERNELS = ("gaussian", "laplacian", "cauchy", "polynomial", "exponential")
SHIFT_INVARIANT = ("gaussian", "laplacian", "cauchy")
DOT_PRODUCT = ("polynomial", "exponential")
_ALIASES = {"rbf": "gaussian"}
GAMMA_HEURISTICS = ("scale", "median", "knn50")


def canonical_kernel(kernel, allowed=KERNELS):
    """Return the canonical name of ``kernel`` (``'rbf'`` -> ``'gaussian'``).

    Raises ``ValueError`` naming the allowed kernels for anything else.
    """
    if not isinstance(kernel, str):
        raise ValueError(f"kernel must be a string, one of {list(allowed)}, got {kernel!r}")
    name = _ALIASES.get(kernel.lower(), kernel.lower())
    if name not in allowed:
        raise ValueError(f"kernel must be one of {list(allowed)}, got {kernel!r}")
    return name


# ------------------------------------------------------------------ kernels
KERNEL_CODES = {"gaussian": 0, "exponential": 1, "polynomial": 2, "laplacian": 3, "cauchy": 4}


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def kernel_block(G, X, V, sq_v, code, gamma, coef0, degree):
    """In place, turn ``G`` into the kernel block ``K(X, V)``.

    For the dot-product-based kernels (``code`` 0-2) ``G`` holds the BLAS product
    ``X V^T`` on entry and this is its element-wise epilogue; the L1 and Cauchy
    kernels (``code`` 3-4) have no BLAS form and are computed here from ``X`` and
    ``V``. Serial and ``nogil``: it runs on one row block of a thread pool.

    Parameters
    ----------
    G : ndarray of shape (n, m), float32 or float64
    X : ndarray of shape (n, d), same dtype
    V : ndarray of shape (m, d), same dtype (landmarks)
    sq_v : ndarray of shape (m,), same dtype, ``|v_j|^2``
    code : int
        0 gaussian ``exp(-g |x-v|^2)``, 1 exponential ``exp(g <x,v>)``,
        2 polynomial ``(g <x,v> + c)^p``, 3 laplacian ``exp(-g |x-v|_1)``,
        4 cauchy ``prod 1/(1 + g (x_k-v_k)^2)``.
    gamma, coef0 : scalars of the dtype
    degree : int

    References
    ----------
    Williams, C. K. I. and Seeger, M. Using the Nyström method to speed up kernel
    machines. NIPS 2001.
    """
    n, m = G.shape
    d = X.shape[1]
    zero = gamma - gamma
    one = gamma / gamma
    for i in range(n):
        row = G[i]
        x = X[i]
        if code == 0:
            sq_x = zero
            for k in range(d):
                sq_x += x[k] * x[k]
            for j in range(m):
                t = sq_x + sq_v[j] - 2 * row[j]
                t = t if t > zero else zero
                row[j] = vexp(-gamma * t)
        elif code == 1:
            for j in range(m):
                row[j] = vexp(gamma * row[j])
        elif code == 2:
            for j in range(m):
                base = gamma * row[j] + coef0
                acc = one
                for _ in range(degree):
                    acc *= base
                row[j] = acc
        elif code == 3:
            for j in range(m):
                v = V[j]
                s = zero
                for k in range(d):
                    s += abs(x[k] - v[k])
                row[j] = s
            for j in range(m):
                row[j] = vexp(-gamma * row[j])
        else:
            for j in range(m):
                v = V[j]
                p = one
                for k in range(d):
                    t = x[k] - v[k]
                    p *= one + gamma * t * t
                row[j] = one / p


def _as_pair(X, Y):
    X = np.ascontiguousarray(X)
    Y = X if Y is None else np.ascontiguousarray(Y)
    if X.ndim != 2 or Y.ndim != 2:
        raise ValueError(f"X and Y must be 2-D, got shapes {X.shape} and {Y.shape}")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}"
        )
    dtype = np.float32 if (X.dtype == np.float32 and Y.dtype == np.float32) else np.float64
    X = X.astype(dtype, copy=False)
    Y = Y.astype(dtype, copy=False)
    for name, A in (("X", X), ("Y", Y)):
        if not np.isfinite(A).all():
            raise ValueError(f"{name} contains NaN or infinity")
    return X, Y, dtype


def _check_degree(degree):
    if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, numbers.Integral) or degree < 0:
        raise ValueError(f"degree must be a non-negative integer, got {degree!r}")
    return int(degree)


def check_kernel_params(kernel, degree, coef0):
    """Validated ``(canonical kernel name, degree, coef0)`` of a kernel estimator.

    Shared by the Nyström map and the exact baselines; raises ``ValueError`` naming
    the bad parameter.
    """
    kernel = canonical_kernel(kernel, KERNELS)
    degree = _check_degree(degree)
    if isinstance(coef0, (bool, np.bool_)) or not isinstance(coef0, numbers.Real) \
            or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite real number, got {coef0!r}")
    return kernel, degree, float(coef0)


def exact_kernel(X, Y=None, *, kernel="gaussian", gamma=1.0, degree=2, coef0=1.0):
    """Exact Gram matrix ``K[i, j] = k(X[i], Y[j])``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d) or None
        ``None`` means ``Y = X``.
    kernel : str
        A name from :data:`KERNELS` (``'rbf'`` is accepted for ``'gaussian'``).
    gamma : float
        Numeric bandwidth or scale (> 0).
    degree : int
        Polynomial degree.
    coef0 : float
        Polynomial offset.

    Returns
    -------
    K : ndarray of shape (n, m)
        float32 when both inputs are float32, float64 otherwise.
    """
    kernel = canonical_kernel(kernel)
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    if kernel == "polynomial":
        degree = _check_degree(degree)
    X, Y, dtype = _as_pair(X, Y)
    code = KERNEL_CODES[kernel]
    # the dot-product based kernels start from one (threaded) BLAS product
    G = X @ Y.T if code <= 2 else np.empty((X.shape[0], Y.shape[0]), dtype=dtype)
    sq_y = np.einsum("ij,ij->i", Y, Y)
    g, c0, p = dtype(gamma), dtype(coef0), int(degree) if kernel == "polynomial" else 0
    step = max(16, (4 * 2**20) // (max(1, Y.shape[0]) * G.itemsize))
    run_row_blocks(X.shape[0], step,
                   lambda start, stop: kernel_block(G[start:stop], X[start:stop], Y, sq_y, code, g, c0, p))
    if kernel == "gaussian" and Y is X:
        # exact 1 on the diagonal, whatever the cancellation in |x|^2 - 2<x,x> + |x|^2
        np.fill_diagonal(G, 1.0)
    return G


# ----------------------------------------------------------------- bandwidths
def _sample_rows(X, rng, n_max):
    if X.shape[0] <= n_max:
        return np.asarray(X, dtype=np.float64)
    idx = rng.choice(X.shape[0], size=n_max, replace=False)
    return np.asarray(X[np.sort(idx)], dtype=np.float64)


def _pairwise_distances(S, kernel):
    return cdist(S, S, metric="cityblock" if kernel == "laplacian" else "euclidean")


def resolve_gamma(gamma, X, kernel, rng, n_sample=1000):
    """Turn a numeric gamma or a heuristic name into a positive float.

    Heuristics (``kernel`` selects the distance: L1 for ``'laplacian'``, Euclidean
    otherwise):

    * ``'scale'``: ``1 / (n_features * X.var())``, scikit-learn's rule (1.0 if the
      variance is 0).
    * ``'median'``: ``s`` = the median pairwise distance of up to ``n_sample``
      sampled rows; ``gamma = 1/(2 s^2)`` (Euclidean), ``1/s`` (L1).
    * ``'knn50'``: Yu et al.'s rule: ``s`` = the mean distance to the 50th nearest
      neighbour among ``n_sample`` sampled rows; ``gamma = 2/s^2`` (Euclidean),
      ``2/s`` (L1).

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, section 7.
    """
    if isinstance(gamma, str):
        if gamma not in GAMMA_HEURISTICS:
            raise ValueError(
                f"gamma must be a positive number or one of {list(GAMMA_HEURISTICS)}, got {gamma!r}"
            )
        if gamma == "scale":
            var = float(np.asarray(X, dtype=np.float64).var())
            return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if kernel not in SHIFT_INVARIANT:
            raise ValueError(f"gamma={gamma!r} is defined for shift-invariant kernels, not {kernel!r}")
        S = _sample_rows(X, rng, n_sample)
        if S.shape[0] < 2:
            raise ValueError(f"gamma={gamma!r} needs at least 2 samples, got {S.shape[0]}")
        D = _pairwise_distances(S, kernel)
        if gamma == "median":
            s = float(np.median(D[np.triu_indices(S.shape[0], k=1)]))
            power, numerator = (1, 1.0) if kernel == "laplacian" else (2, 0.5)
        else:
            k = min(50, S.shape[0] - 1)
            # column 0 of each sorted row is the point itself
            s = float(np.partition(D, k, axis=1)[:, k].mean())
            power, numerator = (1, 2.0) if kernel == "laplacian" else (2, 2.0)
        if not s > 0:
            raise ValueError(f"gamma={gamma!r} is undefined: the sampled points coincide")
        return numerator / s**power
    if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, numbers.Real):
        raise ValueError(f"gamma must be a positive number or one of {list(GAMMA_HEURISTICS)}, got {gamma!r}")
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    return gamma
