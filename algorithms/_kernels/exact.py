"""Exact kernels and the kernel vocabulary.

One vocabulary across the library:

============  ==========================================  =================
name          k(x, y)                                     family
============  ==========================================  =================
gaussian      ``exp(-gamma ||x - y||_2^2)`` (alias rbf)    shift-invariant
laplacian     ``exp(-gamma ||x - y||_1)``                  shift-invariant
cauchy        ``prod_j 1 / (1 + gamma (x_j - y_j)^2)``     shift-invariant
matern        ``2^(1-nu)/Gamma(nu) s^nu K_nu(s)``,         shift-invariant
              ``s = 2 sqrt(nu gamma) ||x - y||_2``
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

The Matérn kernel (smoothness ``nu > 0``, default 1.5) has the length-scale
``l = 1 / sqrt(2 gamma)``: it is scikit-learn's ``Matern(length_scale=l, nu=nu)``
at ``gamma = 1 / (2 l^2)``, tends to the Gaussian of the same ``gamma`` as
``nu -> inf``, and is ``exp(-sqrt(2 gamma) ||x - y||_2)`` at ``nu = 1/2`` (in one
dimension the Laplacian of ``gamma' = sqrt(2 gamma)``). Half-integer ``nu`` (1/2,
3/2, 5/2, ... up to 17/2) are closed forms in :func:`kernel_block`; any other
``nu`` goes through ``scipy.special.kve`` on each row block
(:mod:`kernelmaps._kernels.matern`).

The Cauchy kernel is normalized to ``k(0) = 1``; the table of Rahimi & Recht (2007)
prints ``prod 2/(1+d^2)``, whose value at 0 is ``2^d`` and which is not what their
spectral density ``prod e^{-|w_j|}/2`` transforms to.

Gram matrices are one BLAS product (for the squared distances or inner products)
plus the vectorized Numba epilogue :func:`kernel_block` over row blocks; the L1
and Cauchy kernels, which have no BLAS form, are computed in it directly. The same
serial kernel serves Nystroem's transform and the exact SVM's kernel columns. The
frames the kernels are evaluated in are in :mod:`kernelmaps._kernels.frames`, the
bandwidth heuristics in :mod:`kernelmaps._kernels.bandwidth`.

References
----------
Rahimi, A. and Recht, B. Random features for large-scale kernel machines. NIPS 2007.
"""

import numpy as np
from numba import njit

from .._core.parallel import block_rows, run_row_blocks
from .._core.validation import FeatureOverflowError
from .._numba.fastmath import FASTMATH, vexp
from .._numba.fastmath_arrays import all_finite
from .frames import (SHIFT_INVARIANT, check_non_negative, check_skewedness, frame_gamma, shift_invariant_frame,
                     skewed_log, to_frame)
from .matern import MATERN_DISTANCE_CODE, check_nu, matern_code, matern_distances, matern_from_distance
from .names import ALL_KERNELS, CHI2_KERNELS, SKEWED_INNER, SKEWED_KERNELS, as_pair, canonical_kernel, check_degree


# ------------------------------------------------------------------ kernels
#: Block codes of the kernels with one code; Matérn's (3 or 4) depends on ``nu``
#: (:func:`kernelmaps._kernels.matern.matern_code`, :func:`block_scalars`).
KERNEL_CODES = {"gaussian": 0, "exponential": 1, "polynomial": 2, "laplacian": 5, "cauchy": 6,
                "sech": 7, "chi2": 8, "additive_chi2": 9}
#: Codes up to this one start from the BLAS product ``X V^T`` (see
#: :func:`kernel_block`); the L1 and Cauchy kernels after it have no BLAS form.
LAST_BLAS_KERNEL_CODE = 4
#: Code of a user's Gram matrix read through :func:`kernel_block` (see there).
PRECOMPUTED_CODE = 10


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def kernel_block(G, X, V, sq_v, code, gamma, coef0, degree):
    """In place, turn ``G`` into the kernel block ``K(X, V)``.

    For the dot-product-based kernels (``code`` 0-2) ``G`` holds the BLAS product
    ``X V^T`` on entry and this is its element-wise epilogue; the L1 and Cauchy
    kernels (``code`` 5-6) have no BLAS form and are computed here from ``X`` and
    ``V``. Serial and ``nogil``: it runs on one row block of a thread pool.

    Parameters
    ----------
    G : ndarray of shape (n, m), float32 or float64
    X : ndarray of shape (n, d), same dtype
    V : ndarray of shape (m, d), same dtype (landmarks)
    sq_v : ndarray of shape (m,), same dtype, ``|v_j|^2``
    code : int
        0 gaussian ``exp(-g |x-v|^2)``, 1 exponential ``exp(g <x,v>)``,
        2 polynomial ``(g <x,v> + c)^p``, 3 Matérn of half-integer order
        ``nu = p + 1/2``: ``exp(-s) sum_k a_k s^k`` with ``s = sqrt(g |x-v|^2)``
        (``g = 4 nu gamma``; Rasmussen & Williams eq. 4.16), 4 the Matérn
        distance ``s`` alone (finished by
        :func:`kernelmaps._kernels.matern.matern_from_distance`); both take ``s`` from
        :func:`kernelmaps._kernels.matern.matern_distances`, which recomputes the distances lost to
        round-off at the kernel's cusp, 5 laplacian
        ``exp(-g |x-v|_1)``, 6 cauchy ``prod 1/(1 + g (x_k-v_k)^2)``, 7 hyperbolic
        secant ``prod sech(g (x_k - v_k))`` (the skewed chi2 kernel on
        ``log(x + c)``), 8 chi2 ``exp(-g sum (x_k-v_k)^2/(x_k+v_k))``, 9 additive
        chi2 ``sum 2 x_k v_k/(x_k+v_k)`` (8 and 9 on non-negative data), 10 a
        precomputed Gram matrix: ``V``'s rows are rows of the Gram matrix and the
        last entry of each row of ``X`` is the column it reads, ``G[i, j] =
        V[j, int(X[i, -1])]`` (the exact SVM's columns of a user's kernel).
    gamma, coef0 : scalars of the dtype
    degree : int
        The polynomial degree (code 2), or ``p`` (code 3).

    References
    ----------
    Williams, C. K. I. and Seeger, M. Using the Nyström method to speed up kernel
    machines. NIPS 2001.
    """
    n, m = G.shape
    d = X.shape[1]
    zero = gamma - gamma
    one = gamma / gamma
    # the Matérn polynomial's coefficients: a_0 = 1, a_(k+1) = a_k 2 (p - k) / ((2p - k)(k + 1))
    coefs = np.full(degree + 1 if code == 3 else 1, one)
    if code == 3:
        for k in range(degree):
            coefs[k + 1] = coefs[k] * ((2.0 * (degree - k)) / ((2.0 * degree - k) * (k + 1.0)))
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
        elif code == 3 or code == 4:
            matern_distances(row, x, V, sq_v, gamma)
            if code == 3:
                for j in range(m):
                    s = row[j]
                    acc = coefs[degree]
                    for k in range(degree - 1, -1, -1):
                        acc = acc * s + coefs[k]
                    row[j] = acc * vexp(-s)
        elif code == 5:
            for j in range(m):
                v = V[j]
                s = zero
                for k in range(d):
                    s += abs(x[k] - v[k])
                row[j] = s
            for j in range(m):
                row[j] = vexp(-gamma * row[j])
        elif code == 6:
            for j in range(m):
                v = V[j]
                p = one
                for k in range(d):
                    t = x[k] - v[k]
                    p *= one + gamma * t * t
                row[j] = one / p
        elif code == 7:
            two = one + one
            for j in range(m):
                v = V[j]
                p = one
                for k in range(d):
                    # sech(t) = 2 e / (1 + e^2) with e = exp(-|t|) <= 1: no overflow
                    e = vexp(-gamma * abs(x[k] - v[k]))
                    p *= two * e / (one + e * e)
                row[j] = p
        elif code == 8:
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
        elif code == 9:
            half = one / (one + one)
            for j in range(m):
                v = V[j]
                s = zero
                for k in range(d):
                    mean = half * x[k] + half * v[k]
                    # 2 x y / (x + y) = x (y / mean), without the product x y
                    s += x[k] * (v[k] / mean) if mean > zero else zero
                row[j] = s
        else:
            col = int(x[d - 1])
            for j in range(m):
                row[j] = V[j, col]


def exact_kernel(X, Y=None, *, kernel="gaussian", gamma=1.0, degree=2, coef0=1.0, skewedness=1.0, nu=1.5):
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
    nu : float, default=1.5
        The Matérn smoothness (> 0); used only when ``kernel='matern'``, whose
        length-scale is ``l = 1 / sqrt(2 gamma)``.

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
    >>> np.round(exact_kernel(X, kernel="matern", gamma=0.5, nu=1.5), 4)  # (1 + s) exp(-s), s = sqrt(3)
    array([[1.    , 0.4834],
           [0.4834, 1.    ]])
    """
    kernel = canonical_kernel(kernel, ALL_KERNELS)
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    if kernel == "polynomial":
        degree = check_degree(degree)
    if kernel == "matern":
        nu = check_nu(nu)
    X, Y, dtype = as_pair(X, Y)
    same = Y is X
    if kernel in SKEWED_KERNELS:
        c = check_skewedness(skewedness)
        X = skewed_log(X, c, "X")
        Y = X if same else skewed_log(Y, c, "Y")
        kernel = SKEWED_INNER[kernel]
    elif kernel in CHI2_KERNELS:
        for name, A in (("X", X), ("Y", Y)):
            check_non_negative(A, name, kernel)
    return gram_matrix(X, None if same else Y, kernel, gamma, degree, coef0, nu)


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
    X, Y, dtype = as_pair(X, Y)
    same = Y is X

    def rescale(A, name):
        A = np.asarray(A, dtype=np.float64) if kernel == "gaussian" else \
            skewed_log(A, skewedness, name, dtype=np.float64)
        return (A * scales).astype(dtype)

    # exp(-sum sigma^2 d^2 / 2) is gamma = 1/2 on sigma x; the skewed kernels gamma = 1 on sigma log(x + c)
    inner, gamma = ("gaussian", 0.5) if kernel == "gaussian" else (SKEWED_INNER[kernel], 1.0)
    X = rescale(X, "X")
    Y = X if same else rescale(Y, "Y")
    return gram_matrix(X, None if same else Y, inner, gamma, 2, 1.0)


#: Kernels :func:`gram_matrix` evaluates in the centred, power-of-two frame.
_FRAMED = SHIFT_INVARIANT + ("sech",)


def block_scalars(kernel, gamma, degree, coef0, nu, scale, dtype):
    """``(code, gamma, coef0, degree)`` of :func:`kernel_block` for a kernel evaluated on data divided by ``scale``.

    ``kernel`` is a :data:`KERNEL_CODES` name or ``'matern'``, whose code and
    ``degree`` follow from ``nu`` and whose ``gamma`` becomes ``4 nu gamma``
    (``s^2 = 4 nu gamma |x - y|^2``). ``scale`` is 1.0 outside a frame.
    """
    if kernel == "matern":
        code, p = matern_code(nu)
        return code, frame_gamma(kernel, 4.0 * nu * gamma, scale, dtype), dtype(coef0), p
    p = int(degree) if kernel == "polynomial" else 0
    return KERNEL_CODES[kernel], frame_gamma(kernel, gamma, scale, dtype), dtype(coef0), p


def finish_block(G, code, nu):
    """The Python step after :func:`kernel_block` (Matérn of a ``nu`` without closed form); in place."""
    if code == MATERN_DISTANCE_CODE:
        matern_from_distance(G, nu)
    return G


def gram_matrix(X, Y, kernel, gamma, degree, coef0, nu=1.5):
    """The Gram matrix of validated, same-dtype arrays for a :data:`KERNEL_CODES` name or ``'matern'``.

    The body of :func:`exact_kernel` once the input is in the kernel's space
    (``log(x + c)`` for the skewed kernels). ``Y=None`` means ``Y = X``.
    """
    same = Y is None
    Y = X if same else Y
    dtype = X.dtype.type
    scale = 1.0
    if kernel in _FRAMED:
        center, scale = shift_invariant_frame(Y)
        X = to_frame(X, center, scale, dtype)
        Y = X if same else to_frame(Y, center, scale, dtype)
    code, g, c0, p = block_scalars(kernel, gamma, degree, coef0, nu, scale, dtype)
    # the dot-product based kernels start from one (threaded) BLAS product
    G = X @ Y.T if code <= LAST_BLAS_KERNEL_CODE else np.empty((X.shape[0], Y.shape[0]), dtype=dtype)
    sq_y = np.einsum("ij,ij->i", Y, Y)
    step = block_rows(Y.shape[0] * G.itemsize)
    overflowed = []

    def work(start, stop):
        kernel_block(G[start:stop], X[start:stop], Y, sq_y, code, g, c0, p)
        finish_block(G[start:stop], code, nu)
        # checked while the block is in cache, without an n x m mask of the whole Gram
        if not all_finite(G[start:stop]):
            overflowed.append(start)

    run_row_blocks(X.shape[0], step, work)
    if kernel in ("gaussian", "matern") and same:
        # exact 1 on the diagonal, whatever the cancellation in |x|^2 - 2<x,x> + |x|^2
        np.fill_diagonal(G, 1.0)
    if overflowed:
        raise FeatureOverflowError(
            f"the {kernel} kernel (gamma={gamma}, degree={degree}, coef0={coef0}) overflows "
            f"{np.dtype(dtype).name} on inputs of magnitude up to "
            f"{max(float(np.max(np.abs(X))), float(np.max(np.abs(Y)))):.3g}"
        )
    return G
