"""Exact kernels and the kernel vocabulary.

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

Histogram kernels, on non-negative data (``c`` is ``skewedness``):

====================  =====================================================
name                  k(x, y)
====================  =====================================================
skewed_chi2           ``prod_j 2 a_j^g b_j^g / (a_j^2g + b_j^2g)``,
                      ``a = x + c``, ``b = y + c``
                      (``= prod_j sech(g (log a_j - log b_j))``)
skewed_intersection   ``prod_j min((a_j / b_j)^g, (b_j / a_j)^g)``
                      (``= exp(-g sum_j |log a_j - log b_j|)``)
chi2                  ``exp(-g sum_j (x_j - y_j)^2 / (x_j + y_j))``
additive_chi2         ``sum_j 2 x_j y_j / (x_j + y_j)`` (no bandwidth)
====================  =====================================================

The skewed kernels are those of Li, Ionescu & Sminchisescu (DAGM 2010) in the
parametrization of Table 1 of Băzăvan, Li & Sminchisescu (NIPS 2012): ``g`` is
the ``sigma`` that multiplies the frequencies, so scikit-learn's
``SkewedChi2Sampler`` approximates ``skewed_chi2`` with ``g = 1/2``. They need
``x > -c``; they are shift-invariant in ``log(x + c)``. ``chi2`` is
scikit-learn's ``chi2_kernel``; ``additive_chi2`` is the kernel the homogeneous
additive map of Vedaldi & Zisserman approximates (scikit-learn's
``additive_chi2_kernel`` is a different, negative-definite function,
``-sum (x - y)^2 / (x + y)``). Both need ``x >= 0``; a coordinate with
``x_j + y_j = 0`` contributes 0.

The Cauchy kernel is normalized to ``k(0) = 1``; the table of Rahimi & Recht (2007)
prints ``prod 2/(1+d^2)``, whose value at 0 is ``2^d`` and which is not what their
spectral density ``prod e^{-|w_j|}/2`` transforms to.

Gram matrices are one BLAS product (for the squared distances or inner products)
plus the vectorized Numba epilogue :func:`kernel_block` over row blocks; the L1
and Cauchy kernels, which have no BLAS form, are computed in it directly. The same
serial kernel serves Nystroem's transform and the exact SVM's kernel columns. The
frames the kernels are evaluated in are in :mod:`kernelmaps._frames`, the
bandwidth heuristics in :mod:`kernelmaps._bandwidth`.

References
----------
Rahimi, A. and Recht, B. Random features for large-scale kernel machines. NIPS 2007.
"""

import numbers

import numpy as np
from numba import njit

from ._bandwidth import GAMMA_SAMPLE_SEED, resolve_gamma  # noqa: F401  (the estimators import them from here)
from ._fastmath import FASTMATH, vexp
from ._fastmath_arrays import all_finite
from ._frames import (SHIFT_INVARIANT, check_non_negative, check_skewedness, dtype_gamma, frame_gamma,
                      shift_invariant_frame, skewed_log, to_frame)
from ._parallel import block_rows, run_row_blocks
from ._validation import FeatureOverflowError

KERNELS = ("gaussian", "laplacian", "cauchy", "polynomial", "exponential")
#: Kernels of ``log(x + skewedness)`` (Li, Ionescu & Sminchisescu, DAGM 2010).
SKEWED_KERNELS = ("skewed_chi2", "skewed_intersection")
#: Chi-squared kernels of non-negative histograms.
CHI2_KERNELS = ("chi2", "additive_chi2")
#: The :data:`KERNEL_CODES` kernel each skewed kernel is on ``log(x + c)``.
_SKEWED_INNER = {"skewed_chi2": "sech", "skewed_intersection": "laplacian"}
#: Every name :func:`exact_kernel` evaluates.
ALL_KERNELS = KERNELS + SKEWED_KERNELS + CHI2_KERNELS
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


# ------------------------------------------------------------------ kernels
KERNEL_CODES = {"gaussian": 0, "exponential": 1, "polynomial": 2, "laplacian": 3, "cauchy": 4,
                "sech": 5, "chi2": 6, "additive_chi2": 7}
#: Codes up to this one start from the BLAS product ``X V^T`` (see
#: :func:`kernel_block`); the L1 and Cauchy kernels after it have no BLAS form.
LAST_BLAS_KERNEL_CODE = 2


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
        4 cauchy ``prod 1/(1 + g (x_k-v_k)^2)``, 5 hyperbolic secant
        ``prod sech(g (x_k - v_k))`` (the skewed chi2 kernel on ``log(x + c)``),
        6 chi2 ``exp(-g sum (x_k-v_k)^2/(x_k+v_k))``, 7 additive chi2
        ``sum 2 x_k v_k/(x_k+v_k)`` (6 and 7 on non-negative data).
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
                # row + row, not 2 * row: an integer times a float32 is a float64
                # in Numba, and the float64 exp ran at a quarter of the speed
                t = sq_x + sq_v[j] - (row[j] + row[j])
                # clamps round-off below 0 but keeps NaN (from inf - inf), which the
                # callers' finiteness checks turn into an error instead of k = 1
                t = zero if t < zero else t
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
        elif code == 4:
            for j in range(m):
                v = V[j]
                p = one
                for k in range(d):
                    t = x[k] - v[k]
                    p *= one + gamma * t * t
                row[j] = one / p
        elif code == 5:
            two = one + one
            for j in range(m):
                v = V[j]
                p = one
                for k in range(d):
                    # sech(t) = 2 e / (1 + e^2) with e = exp(-|t|) <= 1: no overflow
                    e = vexp(-gamma * abs(x[k] - v[k]))
                    p *= two * e / (one + e * e)
                row[j] = p
        elif code == 6:
            half = one / (one + one)
            for j in range(m):
                v = V[j]
                s = zero
                for k in range(d):
                    t = x[k] - v[k]
                    mean = half * x[k] + half * v[k]
                    # half * t * (t / mean): neither t * t nor x + y can overflow
                    s += half * t * (t / mean) if mean > zero else zero
                row[j] = vexp(-gamma * s)
        else:
            half = one / (one + one)
            for j in range(m):
                v = V[j]
                s = zero
                for k in range(d):
                    mean = half * x[k] + half * v[k]
                    # 2 x y / (x + y) = x (y / mean), without the product x y
                    s += x[k] * (v[k] / mean) if mean > zero else zero
                row[j] = s


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


def exact_kernel(X, Y=None, *, kernel="gaussian", gamma=1.0, degree=2, coef0=1.0, skewedness=1.0):
    """Exact Gram matrix ``K[i, j] = k(X[i], Y[j])``.

    The shift-invariant kernels (and the skewed kernels, shift-invariant in
    ``log(x + c)``) are evaluated on data centred and scaled by a power of two
    (:func:`shift_invariant_frame`), so that neither the cancellation of
    ``|x|^2 + |y|^2 - 2 x.y`` far from the origin nor the overflow of ``|x|^2``
    at magnitudes beyond ~1e154 spoils the result.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (m, d) or None
        ``None`` means ``Y = X``.
    kernel : str
        A name from :data:`ALL_KERNELS` (``'rbf'`` is accepted for ``'gaussian'``);
        see the module's tables.
    gamma : float
        Numeric bandwidth or scale (> 0): the ``g`` of the tables. Not used by
        ``'additive_chi2'``, which has none.
    degree : int
        Polynomial degree.
    coef0 : float
        Polynomial offset.
    skewedness : float
        The ``c`` of the skewed kernels, which read ``log(x + c)``; every entry of
        ``X`` and ``Y`` must exceed ``-c``.

    Returns
    -------
    K : ndarray of shape (n, m)
        float32 when both inputs are float32, float64 otherwise.

    Raises
    ------
    FeatureOverflowError
        If a kernel value is not finite (a dot-product kernel on inputs whose
        inner products overflow the dtype).
    ValueError
        For input outside a kernel's domain: ``x <= -skewedness`` for the skewed
        kernels, a negative entry for the chi2 kernels.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import exact_kernel
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> np.round(exact_kernel(X, kernel="gaussian", gamma=1.0), 4)
    array([[1.    , 0.3679],
           [0.3679, 1.    ]])
    >>> exact_kernel(X, np.array([[1.0, 1.0]]), kernel="polynomial", gamma=1.0, degree=2, coef0=1.0)
    array([[1.],
           [4.]])
    >>> H = np.array([[0.5, 0.5], [1.0, 0.0]])  # two histograms
    >>> exact_kernel(H, kernel="additive_chi2")
    array([[1.        , 0.66666667],
           [0.66666667, 1.        ]])
    >>> np.round(exact_kernel(H, kernel="skewed_chi2", gamma=0.5, skewedness=1.0), 4)
    array([[1.    , 0.9697],
           [0.9697, 1.    ]])
    """
    kernel = canonical_kernel(kernel, ALL_KERNELS)
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    if kernel == "polynomial":
        degree = _check_degree(degree)
    X, Y, dtype = _as_pair(X, Y)
    same = Y is X
    if kernel in SKEWED_KERNELS:
        c = check_skewedness(skewedness)
        X = skewed_log(X, c, "X")
        Y = X if same else skewed_log(Y, c, "Y")
        kernel = _SKEWED_INNER[kernel]
    elif kernel in CHI2_KERNELS:
        for name, A in (("X", X), ("Y", Y)):
            check_non_negative(A, name, kernel)
    return gram_matrix(X, None if same else Y, kernel, gamma, degree, coef0)


def scaled_gram(X, Y, kernel, scales, skewedness):
    """Gram matrix of a kernel with one scale ``sigma_j`` per input dimension.

    The kernels of :class:`kernelmaps.QuantileFourierFeatures`, whose frequencies
    are ``sigma * h(omega)``: ``exp(-sum_j sigma_j^2 d_j^2 / 2)`` (``'gaussian'``),
    ``prod_j sech(sigma_j d_j)`` (``'skewed_chi2'``) and
    ``exp(-sum_j sigma_j |d_j|)`` (``'skewed_intersection'``), with ``d`` the
    difference of ``x`` or of ``log(x + c)``. Each is a kernel of
    :func:`gram_matrix` on the rescaled inputs.

    Parameters
    ----------
    X, Y : ndarray of shape (n, d), (m, d) (``Y`` may be None)
    kernel : {'gaussian', 'skewed_chi2', 'skewed_intersection'}
    scales : ndarray of shape (d,), positive
    skewedness : float
    """
    X, Y, dtype = _as_pair(X, Y)
    same = Y is X

    def rescale(A, name):
        A = np.asarray(A, dtype=np.float64) if kernel == "gaussian" else \
            skewed_log(A, skewedness, name, dtype=np.float64)
        return (A * scales).astype(dtype)

    # exp(-sum sigma^2 d^2 / 2) is gamma = 1/2 on sigma x; the skewed kernels gamma = 1 on sigma log(x + c)
    inner, gamma = ("gaussian", 0.5) if kernel == "gaussian" else (_SKEWED_INNER[kernel], 1.0)
    X = rescale(X, "X")
    Y = X if same else rescale(Y, "Y")
    return gram_matrix(X, None if same else Y, inner, gamma, 2, 1.0)


#: Kernels :func:`gram_matrix` evaluates in the centred, power-of-two frame.
_FRAMED = SHIFT_INVARIANT + ("sech",)


def gram_matrix(X, Y, kernel, gamma, degree, coef0):
    """The Gram matrix of validated, same-dtype arrays for a :data:`KERNEL_CODES` name.

    The body of :func:`exact_kernel` once the input is in the kernel's space
    (``log(x + c)`` for the skewed kernels). ``Y=None`` means ``Y = X``.
    """
    same = Y is None
    Y = X if same else Y
    dtype = X.dtype.type
    code = KERNEL_CODES[kernel]
    g = dtype_gamma(gamma, dtype)
    if kernel in _FRAMED:
        center, scale = shift_invariant_frame(Y)
        X = to_frame(X, center, scale, dtype)
        Y = X if same else to_frame(Y, center, scale, dtype)
        g = frame_gamma(kernel, gamma, scale, dtype)
    # the dot-product based kernels start from one (threaded) BLAS product
    G = X @ Y.T if code <= LAST_BLAS_KERNEL_CODE else np.empty((X.shape[0], Y.shape[0]), dtype=dtype)
    sq_y = np.einsum("ij,ij->i", Y, Y)
    c0, p = dtype(coef0), int(degree) if kernel == "polynomial" else 0
    step = block_rows(Y.shape[0] * G.itemsize)
    overflowed = []

    def work(start, stop):
        kernel_block(G[start:stop], X[start:stop], Y, sq_y, code, g, c0, p)
        # checked while the block is in cache, without an n x m mask of the whole Gram
        if not all_finite(G[start:stop]):
            overflowed.append(start)

    run_row_blocks(X.shape[0], step, work)
    if kernel == "gaussian" and same:
        # exact 1 on the diagonal, whatever the cancellation in |x|^2 - 2<x,x> + |x|^2
        np.fill_diagonal(G, 1.0)
    if overflowed:
        raise FeatureOverflowError(
            f"the {kernel} kernel (gamma={gamma}, degree={degree}, coef0={coef0}) overflows "
            f"{np.dtype(dtype).name} on inputs of magnitude up to "
            f"{max(float(np.max(np.abs(X))), float(np.max(np.abs(Y)))):.3g}"
        )
    return G
