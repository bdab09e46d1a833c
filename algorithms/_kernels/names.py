"""The kernel vocabulary's names and the validation of kernel parameters and input pairs.

The vocabulary is described in :mod:`kernelmaps._kernels.exact`.
"""

import numbers

import numpy as np

KERNELS = ("gaussian", "laplacian", "cauchy", "matern", "polynomial", "exponential")
#: Kernels of ``log(x + skewedness)`` (Li, Ionescu & Sminchisescu, DAGM 2010).
SKEWED_KERNELS = ("skewed_chi2", "skewed_intersection")
#: Chi-squared kernels of non-negative histograms.
CHI2_KERNELS = ("chi2", "additive_chi2")
#: The kernel of :mod:`kernelmaps._kernels.formulas` each skewed kernel is on ``log(x + c)``.
SKEWED_INNER = {"skewed_chi2": "sech", "skewed_intersection": "laplacian"}
#: Kernels of the maps that approximate one kernel each: the linear kernel (SRHT), the
#: arc-cosine kernels (``degree`` is the order), the set kernels of min-hash and a
#: Maclaurin series ``sum_n a_n <x, y>^n`` (Random Maclaurin, ``coefficients``).
MAP_KERNELS = ("linear", "arc_cosine", "tanimoto", "min_max", "maclaurin")
#: Every name :func:`exact_kernel` evaluates.
ALL_KERNELS = KERNELS + SKEWED_KERNELS + CHI2_KERNELS + MAP_KERNELS
_ALIASES = {"rbf": "gaussian"}


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


def as_pair(X, Y):
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


def check_degree(degree):
    if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, numbers.Integral) or degree < 0:
        raise ValueError(f"degree must be a non-negative integer, got {degree!r}")
    return int(degree)


def check_kernel_params(kernel, degree, coef0):
    """Validated ``(canonical kernel name, degree, coef0)`` of a kernel estimator.

    Shared by the Nyström map and the exact baselines; raises ``ValueError`` naming
    the bad parameter.
    """
    kernel = canonical_kernel(kernel, KERNELS)
    degree = check_degree(degree)
    if isinstance(coef0, (bool, np.bool_)) or not isinstance(coef0, numbers.Real) \
            or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite real number, got {coef0!r}")
    return kernel, degree, float(coef0)
