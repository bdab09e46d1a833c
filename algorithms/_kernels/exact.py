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

The kernels of the maps that approximate one kernel each:

==========  ===========================================================
name        k(x, y)
==========  ===========================================================
linear      ``<x, y>`` (:class:`kernelmaps.SRHT`)
arc_cosine  ``(1/pi) |x|^n |y|^n J_n(theta)`` of order ``n = degree``
            (:class:`kernelmaps.ArcCosineFeatures`, Cho & Saul 2009)
tanimoto    ``<x, y> / (|x|^2 + |y|^2 - <x, y>)`` on non-negative data
min_max     ``sum_j min(x_j, y_j) / sum_j max(x_j, y_j)`` on non-negative
            data (both :class:`kernelmaps.MinHash`; dense or sparse input)
maclaurin   ``sum_n a_n <x, y>^n`` with ``a = coefficients``
            (:class:`kernelmaps.RandomMaclaurin`)
==========  ===========================================================

``kernel`` may also be a callable ``kernel(X_block, Y)`` returning the Gram block,
evaluated on row blocks with its shape and finiteness checked, and ``scales`` (one
positive multiplier per input dimension, applied in the kernel's space: after
``log(x + c)`` for the skewed kernels) gives the per-dimension kernels of
:class:`kernelmaps.QuantileFourierFeatures`.

The Matérn kernel (smoothness ``nu > 0``, default 1.5) has the length-scale
``l = 1 / sqrt(2 gamma)``: it is scikit-learn's ``Matern(length_scale=l, nu=nu)``
at ``gamma = 1 / (2 l^2)``, tends to the Gaussian of the same ``gamma`` as
``nu -> inf``, and is ``exp(-sqrt(2 gamma) ||x - y||_2)`` at ``nu = 1/2`` (in one
dimension the Laplacian of ``gamma' = sqrt(2 gamma)``). Half-integer ``nu`` (1/2,
3/2, 5/2, ... up to 17/2) are closed forms in Numba
(:class:`kernelmaps._kernels.formulas.MaternHalfInteger`); any other
``nu`` goes through ``scipy.special.kve`` on each row block
(:mod:`kernelmaps._kernels.matern`).

The Cauchy kernel is normalized to ``k(0) = 1``; the table of Rahimi & Recht (2007)
prints ``prod 2/(1+d^2)``, whose value at 0 is ``2^d`` and which is not what their
spectral density ``prod e^{-|w_j|}/2`` transforms to.

Each kernel's formula is one Numba function in :mod:`kernelmaps._kernels.formulas`,
and every Gram block, Nyström block and operator pass goes through the one
pipeline of :mod:`kernelmaps._kernels.blocks` (a BLAS product per row block for
the squared distances or inner products, then the vectorized formula; the L1,
Cauchy and histogram kernels, which have no BLAS form, are computed directly).
The frames the kernels are evaluated in are in :mod:`kernelmaps._kernels.frames`,
the bandwidth heuristics in :mod:`kernelmaps._kernels.bandwidth`.

References
----------
Rahimi, A. and Recht, B. Random features for large-scale kernel machines. NIPS 2007.
"""

import numpy as np
import scipy.sparse as sp

from .._core.parallel import block_rows, run_row_blocks
from .._core.validation import FeatureOverflowError, check_non_negative
from .._numba.fastmath_arrays import all_finite
from .arc_cosine import arc_cosine_gram, check_order
from .blocks import KernelBlocks
from .frames import SHIFT_INVARIANT, check_skewedness, skewed_log
from .matern import check_nu
from .minhash import SETS, min_max_kernel, tanimoto_kernel
from .user import callable_gram
from .names import (ALL_KERNELS, CHI2_KERNELS, MAP_KERNELS, SKEWED_INNER, SKEWED_KERNELS, as_pair, canonical_kernel,
                    check_degree)


def exact_kernel(X, Y=None, *, kernel="gaussian", gamma=1.0, degree=2, coef0=1.0, skewedness=1.0, nu=1.5,
                 scales=None, coefficients=None):
    """Exact Gram matrix ``K[i, j] = k(X[i], Y[j])``.

    The shift-invariant kernels (and the skewed kernels, shift-invariant in
    ``log(x + c)``) are evaluated on data centred and scaled by a power of two
    (:func:`shift_invariant_frame`), so that neither the cancellation of
    ``|x|^2 + |y|^2 - 2 x.y`` far from the origin nor the overflow of ``|x|^2``
    at magnitudes beyond ~1e154 spoils the result.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Sparse input is taken by ``'tanimoto'`` and ``'min_max'`` as it is and
        densified for the other kernels.
    Y : ndarray of shape (m, d) or None
        ``None`` means ``Y = X``.
    kernel : str or callable
        A name from :data:`ALL_KERNELS` (``'rbf'`` is accepted for ``'gaussian'``);
        see the module's tables. A callable ``kernel(X_block, Y)`` is evaluated
        on row blocks (float64).
    gamma : float
        Numeric bandwidth or scale (> 0): the ``g`` of the tables. Not used by
        ``'additive_chi2'`` and the kernels of the maps, which have none.
    degree : int
        Polynomial degree; the order (0, 1 or 2) of ``'arc_cosine'``.
    coef0 : float
        Polynomial offset.
    skewedness : float
        The ``c`` of the skewed kernels, which read ``log(x + c)``; every entry of
        ``X`` and ``Y`` must exceed ``-c``.
    nu : float, default=1.5
        The Matérn smoothness (> 0); used only when ``kernel='matern'``, whose
        length-scale is ``l = 1 / sqrt(2 gamma)``.
    scales : ndarray of shape (d,) or None
        Positive per-dimension multipliers of the inputs, in the kernel's space.
    coefficients : array-like or None
        The Maclaurin coefficients ``a_0, a_1, ...`` of ``'maclaurin'``.

    Returns
    -------
    K : ndarray of shape (n, m)
        float32 when both inputs are float32, float64 otherwise (always float64 for
        callables, ``'tanimoto'`` and ``'min_max'``).

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
    if callable(kernel):
        return callable_gram(kernel, X, Y)
    if isinstance(kernel, str) and kernel.lower() == "precomputed":
        raise ValueError("kernel='precomputed' has no kernel to evaluate: the Gram matrices are the input")
    kernel = canonical_kernel(kernel, ALL_KERNELS)
    if kernel in ("tanimoto", "min_max"):
        return _set_kernel(X, Y, kernel)
    gamma = float(gamma)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma}")
    if kernel == "polynomial":
        degree = check_degree(degree)
    if kernel == "matern":
        nu = check_nu(nu)
    X, Y, dtype = as_pair(_dense(X), None if Y is None else _dense(Y))
    same = Y is X
    if kernel in MAP_KERNELS:
        return _map_kernel(X, None if same else Y, kernel, degree, coefficients)
    X, Y, kernel = _in_kernel_space(X, Y, kernel, skewedness, scales)
    return gram_matrix(X, None if same else Y, kernel, gamma, degree, coef0, nu)


def _set_kernel(X, Y, kernel):
    """The Tanimoto or min-max Gram matrix of non-negative (dense or sparse) rows."""
    for A in (X, Y):
        if A is not None:
            check_non_negative(A, f"the {kernel} kernel", SETS)
    return tanimoto_kernel(X, Y) if kernel == "tanimoto" else min_max_kernel(X, Y)


def _in_kernel_space(X, Y, kernel, skewedness, scales):
    """The rows the kernel's formula reads, and that formula's name: ``log(x + c)``
    for the skewed kernels (which are shift-invariant kernels of it), each
    feature multiplied by its scale; the chi2 kernels' domain is checked."""
    same, dtype = Y is X, X.dtype
    if kernel in SKEWED_KERNELS:
        c = check_skewedness(skewedness)
        X = skewed_log(X, c, "X", dtype=np.float64 if scales is not None else None)
        Y = X if same else skewed_log(Y, c, "Y", dtype=np.float64 if scales is not None else None)
        kernel = SKEWED_INNER[kernel]
    elif kernel in CHI2_KERNELS:
        for name, A in (("X", X), ("Y", Y)):
            check_non_negative(A, f"the {kernel} kernel, defined on non-negative data (histograms)",
                               name=name)
    if scales is not None:
        scales = _check_scales(scales, X.shape[1])
        X = (np.asarray(X, dtype=np.float64) * scales).astype(dtype)
        Y = X if same else (np.asarray(Y, dtype=np.float64) * scales).astype(dtype)
    return X, Y, kernel


#: Rows of each block whose Gram matrix gives :func:`kernel_diagonal` its entries.
DIAGONAL_BLOCK_ROWS = 64


def kernel_diagonal(X, **kernel_params):
    """``k(x_i, x_i)`` of each row of ``X``, for :func:`exact_kernel`'s keywords (a callable included).

    1 for the shift-invariant kernels; otherwise the diagonal of the Gram block of
    each small block of rows with itself, so that an overflow or a callable's bad
    output is reported as by :func:`exact_kernel`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._kernels.exact import kernel_diagonal
    >>> X = np.array([[1.0, 2.0], [0.0, 0.0]])
    >>> kernel_diagonal(X, kernel="polynomial", gamma=1.0, degree=2, coef0=1.0)
    array([36.,  1.])
    >>> kernel_diagonal(X, kernel=lambda A, B: A @ B.T)
    array([5., 0.])
    """
    kernel = kernel_params.get("kernel", "gaussian")
    X = _dense(X)
    if not callable(kernel) and canonical_kernel(kernel, ALL_KERNELS) in SHIFT_INVARIANT:
        return np.ones(X.shape[0])
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], DIAGONAL_BLOCK_ROWS):
        rows = X[start:start + DIAGONAL_BLOCK_ROWS]
        out[start:start + rows.shape[0]] = np.diagonal(exact_kernel(rows, None, **kernel_params))
    return out


def _dense(A):
    """``A``, densified if sparse (in its own dtype)."""
    return A.toarray() if sp.issparse(A) else A


def _check_scales(scales, d):
    scales = np.asarray(scales, dtype=np.float64)
    if scales.shape != (d,) or not (np.isfinite(scales).all() and (scales > 0).all()):
        raise ValueError(f"scales must be {d} finite positive numbers, one per feature, got {scales!r}")
    return scales


def _map_kernel(X, Y, kernel, degree, coefficients):
    """The Gram matrix of a name of :data:`MAP_KERNELS` other than the set kernels."""
    dtype = X.dtype
    if kernel == "arc_cosine":
        return arc_cosine_gram(X, Y, check_order(degree))
    X64 = np.asarray(X, dtype=np.float64)
    G = X64 @ (X64 if Y is None else np.asarray(Y, dtype=np.float64)).T
    if kernel == "maclaurin":
        if coefficients is None:
            raise ValueError("kernel='maclaurin' needs its coefficients a_0, a_1, ... (coefficients=)")
        K = np.zeros_like(G)
        for a in np.asarray(coefficients, dtype=np.float64)[::-1]:   # Horner in <x, y>
            K *= G
            K += a
        G = K
    if not np.isfinite(G).all():
        raise FeatureOverflowError(f"the {kernel} kernel overflows float64 on these inputs")
    return G.astype(dtype, copy=False)


def gram_matrix(X, Y, kernel, gamma, degree, coef0, nu=1.5):
    """The Gram matrix of validated, same-dtype arrays for a name of :func:`kernelmaps._kernels.formulas.kernel_record`.

    The body of :func:`exact_kernel` once the input is in the kernel's space
    (``log(x + c)`` for the skewed kernels). ``Y=None`` means ``Y = X``. The
    kernels that start from a product take it in one threaded BLAS call (for
    ``Y = X`` a symmetric ``syrk``, so the Gram matrix is exactly symmetric);
    their formula, and the kernels without a product, run on row blocks of the
    thread pool through :class:`kernelmaps._kernels.blocks.KernelBlocks`.
    """
    same = Y is None
    blocks = KernelBlocks(X if same else Y, kernel, gamma, degree, coef0, nu, dtype=X.dtype)
    framed = blocks.columns if same else blocks.framed(X)
    G = blocks.product(framed)
    overflowed = []

    def work(start, stop):
        blocks.apply_formula(framed[start:stop], G[start:stop])
        # checked while the block is in cache, without an n x m mask of the whole Gram
        if not all_finite(G[start:stop]):
            overflowed.append(start)

    run_row_blocks(G.shape[0], block_rows(G.shape[1] * G.itemsize), work)
    if kernel in ("gaussian", "matern") and same:
        # exact 1 on the diagonal, whatever the cancellation in |x|^2 - 2<x,x> + |x|^2
        np.fill_diagonal(G, 1.0)
    if overflowed:
        magnitude = max(float(np.max(np.abs(framed))), float(np.max(np.abs(blocks.columns))))
        raise FeatureOverflowError(blocks.overflow_message(f"on inputs of magnitude up to {magnitude:.3g}"))
    return G
