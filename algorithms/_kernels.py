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
serial kernel serves Nystroem's transform and the exact SVM's kernel columns.

References
----------
Rahimi, A. and Recht, B. Random features for large-scale kernel machines. NIPS 2007.
"""

import math
import numbers

import numpy as np
from numba import njit
from scipy.spatial.distance import cdist

from ._fastmath import FASTMATH, all_finite, vexp
from ._parallel import block_rows, run_row_blocks
from ._validation import FeatureOverflowError

KERNELS = ("gaussian", "laplacian", "cauchy", "polynomial", "exponential")
SHIFT_INVARIANT = ("gaussian", "laplacian", "cauchy")
#: Kernels of ``log(x + skewedness)`` (Li, Ionescu & Sminchisescu, DAGM 2010).
SKEWED_KERNELS = ("skewed_chi2", "skewed_intersection")
#: Chi-squared kernels of non-negative histograms.
CHI2_KERNELS = ("chi2", "additive_chi2")
#: The :data:`KERNEL_CODES` kernel each skewed kernel is on ``log(x + c)``.
_SKEWED_INNER = {"skewed_chi2": "sech", "skewed_intersection": "laplacian"}
#: Every name :func:`exact_kernel` evaluates.
ALL_KERNELS = KERNELS + SKEWED_KERNELS + CHI2_KERNELS
_ALIASES = {"rbf": "gaussian"}
GAMMA_HEURISTICS = ("scale", "median", "knn50")
#: Rows the distance heuristics ('median', 'knn50') sample: their pairwise
#: distances, a 1000 x 1000 float64 matrix (8 MB), then cost the same at any
#: ``n_samples``.
GAMMA_SAMPLE_ROWS = 1000
#: The neighbour whose mean distance sets the 'knn50' bandwidth (Yu et al.'s rule).
KNN_NEIGHBOUR = 50
#: Seed of the heuristics' row sample in the estimators that have no
#: ``random_state`` parameter (the exact kernel baselines): a fixed seed keeps
#: their ``fit`` deterministic.
GAMMA_SAMPLE_SEED = 0


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


def check_skewedness(skewedness):
    """A finite real ``c`` of ``log(x + c)``, as a float."""
    if isinstance(skewedness, (bool, np.bool_)) or not isinstance(skewedness, numbers.Real) \
            or not np.isfinite(skewedness):
        raise ValueError(f"skewedness must be a finite real number, got {skewedness!r}")
    return float(skewedness)


def skewed_log(A, c, name, dtype=None):
    """``log(A + c)`` (computed in float64, returned in ``A``'s dtype or ``dtype``).

    Raises ``ValueError`` naming the first entry with ``A <= -c``, where the
    skewed kernels are not defined.
    """
    A = np.asarray(A)
    shifted = A.astype(np.float64) + c
    if A.size and not (shifted > 0).all():
        row, col = np.argwhere(~(shifted > 0))[0]
        raise ValueError(
            f"the skewed kernels read log({name} + skewedness) and need every entry of {name} above "
            f"-skewedness = {-c:g}; {name}[{row}, {col}] = {float(A[row, col])!r}"
        )
    return np.log(shifted).astype(dtype or A.dtype, copy=False)


def check_non_negative(A, name, kernel):
    """Raise ``ValueError`` naming the first negative entry of ``A`` (chi2 kernels)."""
    if A.size and not (A >= 0).all():
        row, col = np.argwhere(~(A >= 0))[0]
        raise ValueError(
            f"the {kernel} kernel is defined on non-negative data (histograms); "
            f"{name}[{row}, {col}] = {float(A[row, col])!r}"
        )


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


def shift_invariant_frame(A):
    """A centre and a power-of-two scale that bring the rows of ``A`` near the unit ball.

    A shift-invariant kernel only sees differences, so ``k(x, y)`` can be
    evaluated on ``(x - c) / s``: centring removes the cancellation of
    ``|x|^2 + |y|^2 - 2 x.y`` for data far from the origin (it costs float32 all
    its digits at an offset of 1e4), and a power-of-two ``s`` (exact to divide
    by) keeps ``|x|^2`` finite at any magnitude. :func:`frame_gamma` carries
    ``s`` into the bandwidth.

    Returns
    -------
    center : ndarray of shape (d,), float64
    scale : float
        ``2^k`` with ``max |A - center|`` in ``[2^k, 2^(k+1))``, or 1.0.
    """
    A = np.asarray(A, dtype=np.float64)
    # the mean of A / 2^k: a plain sum of rows near 1e308 would overflow
    coarse = _power_of_two_below(float(np.max(np.abs(A))) if A.size else 0.0)
    center = (A * (1.0 / coarse)).mean(axis=0) * coarse
    return center, _power_of_two_below(float(np.max(np.abs(A - center))) if A.size else 0.0)


def _power_of_two_below(value):
    """``2^floor(log2(value))`` for a finite ``value > 0``, else 1.0."""
    if not (0.0 < value < np.inf):
        return 1.0
    return 2.0 ** math.floor(math.log2(value))


def to_frame(A, center, scale, dtype):
    """``(A - center) / scale`` in ``dtype`` (computed in float64)."""
    return np.ascontiguousarray((np.asarray(A, dtype=np.float64) - center) * (1.0 / scale), dtype=dtype)


def frame_gamma(kernel, gamma, scale, dtype):
    """The bandwidth that gives ``k`` on data divided by ``scale``.

    ``gamma s^2`` for the Gaussian and Cauchy kernels (squared differences),
    ``gamma s`` for the Laplacian and the hyperbolic secant (absolute ones). Clamped to the dtype's largest number: an
    infinite bandwidth would turn ``gamma * 0`` on the diagonal into NaN, while
    the clamped one still gives ``exp(-huge * t) = 0`` for ``t > 0``
    (:func:`dtype_gamma`).
    """
    value = gamma * scale if kernel in ("laplacian", "sech") else gamma * scale * scale
    return dtype_gamma(value, dtype)


def dtype_gamma(value, dtype):
    """A positive bandwidth as a finite, nonzero number of ``dtype``.

    Clamped to ``[tiny, max]`` of the dtype: 0 would make ``gamma / gamma`` in
    :func:`kernel_block` a division by zero, and infinity would make
    ``gamma * 0`` NaN; at either end the kernel values are the same to the
    dtype's precision (1 at distance 0, 0 at any other).
    """
    info = np.finfo(dtype)
    return dtype(min(max(value, float(info.tiny)), float(info.max)))


# ----------------------------------------------------------------- bandwidths
def _sample_rows(X, rng, n_max):
    if X.shape[0] <= n_max:
        return np.asarray(X, dtype=np.float64)
    idx = rng.choice(X.shape[0], size=n_max, replace=False)
    return np.asarray(X[np.sort(idx)], dtype=np.float64)


def _pairwise_distances(S, kernel):
    return cdist(S, S, metric="cityblock" if kernel == "laplacian" else "euclidean")


def resolve_gamma(gamma, X, kernel, rng, n_sample=GAMMA_SAMPLE_ROWS):
    """Turn a numeric gamma or a heuristic name into a positive float.

    Heuristics (``kernel`` selects the distance: L1 for ``'laplacian'``, Euclidean
    otherwise):

    * ``'scale'``: ``1 / (n_features * X.var())``, scikit-learn's rule (1.0 if the
      variance is 0, i.e. every entry of ``X`` is the same number).
    * ``'median'``: ``s`` = the median pairwise distance of up to ``n_sample``
      sampled rows; ``gamma = 1/(2 s^2)`` (Euclidean), ``1/s`` (L1).
    * ``'knn50'``: Yu et al.'s rule: ``s`` = the mean distance to the 50th nearest
      neighbour among ``n_sample`` sampled rows; ``gamma = 2/s^2`` (Euclidean),
      ``2/s`` (L1).

    The statistics are computed on the data centred and divided by a power of
    two, and ``gamma`` is assembled in log space, so no square overflows or
    underflows at any magnitude. A ``gamma`` that float64 cannot represent
    (data of magnitude beyond ~1e154 or below ~1e-154) raises ``ValueError``, as
    do sampled rows that really all coincide.

    Parameters
    ----------
    gamma : float or {'scale', 'median', 'knn50'}
    X : ndarray of shape (n_samples, n_features)
    kernel : str
        A name from :data:`KERNELS`; the distance heuristics need a
        shift-invariant one.
    rng : numpy.random.RandomState
        Draws the row sample of ``'median'`` and ``'knn50'`` (unused otherwise).
    n_sample : int, default=GAMMA_SAMPLE_ROWS
        Rows sampled by the distance heuristics.

    Returns
    -------
    gamma : float

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, section 7.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import resolve_gamma
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> resolve_gamma(0.5, X, "gaussian", None)
    0.5
    >>> resolve_gamma("scale", X, "gaussian", None)  # 1 / (2 features * variance 1)
    0.5
    >>> print(round(resolve_gamma("median", X, "gaussian", np.random.RandomState(0)), 4))
    0.125
    """
    if isinstance(gamma, str):
        if gamma not in GAMMA_HEURISTICS:
            raise ValueError(
                f"gamma must be a positive number or one of {list(GAMMA_HEURISTICS)}, got {gamma!r}"
            )
        if gamma == "scale":
            # scikit-learn's X.var() is over all entries (not per column): scale only
            scale = _power_of_two_below(float(np.max(np.abs(X))))
            var = float((np.asarray(X, dtype=np.float64) * (1.0 / scale)).var())
            if var == 0.0:
                return 1.0
            # 1 / (d var(X)) with var(X) = scale^2 var(X / scale)
            return _gamma_from_logs(gamma, -(math.log(X.shape[1]) + math.log(var) + 2 * math.log(scale)), X)
        if kernel not in SHIFT_INVARIANT:
            raise ValueError(f"gamma={gamma!r} is defined for shift-invariant kernels, not {kernel!r}")
        S = _sample_rows(X, rng, n_sample)
        if S.shape[0] < 2:
            raise ValueError(f"gamma={gamma!r} needs at least 2 samples, got {S.shape[0]}")
        center, scale = shift_invariant_frame(S)
        D = _pairwise_distances(to_frame(S, center, scale, np.float64), kernel)
        if gamma == "median":
            s = float(np.median(D[np.triu_indices(S.shape[0], k=1)]))
            power, numerator = (1, 1.0) if kernel == "laplacian" else (2, 0.5)
        else:
            k = min(KNN_NEIGHBOUR, S.shape[0] - 1)
            # column 0 of each sorted row is the point itself
            s = float(np.partition(D, k, axis=1)[:, k].mean())
            power, numerator = (1, 2.0) if kernel == "laplacian" else (2, 2.0)
        if not s > 0:
            raise ValueError(f"gamma={gamma!r} is undefined: the {S.shape[0]} sampled rows all coincide")
        return _gamma_from_logs(gamma, math.log(numerator) - power * (math.log(s) + math.log(scale)), X)
    if isinstance(gamma, (bool, np.bool_)) or not isinstance(gamma, numbers.Real):
        raise ValueError(f"gamma must be a positive number or one of {list(GAMMA_HEURISTICS)}, got {gamma!r}")
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    return gamma


def _gamma_from_logs(heuristic, log_gamma, X):
    """``exp(log_gamma)``, or a ``ValueError`` when float64 cannot hold it."""
    info = np.finfo(np.float64)
    if not math.log(info.tiny) < log_gamma < math.log(info.max):
        raise ValueError(
            f"gamma={heuristic!r} gives 1e{log_gamma / math.log(10):.0f} for data of magnitude up to "
            f"{float(np.max(np.abs(X))):.3g}, outside the float64 range: rescale X (e.g. with "
            "StandardScaler)"
        )
    return math.exp(log_gamma)
