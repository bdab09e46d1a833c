"""Random Maclaurin features for dot-product kernels (Kar & Karnick, 2012)."""

import math
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._core.base import FeatureMap, KernelParameter
from ._core.parallel import ThreadScratch
from ._numba.fastmath import FASTMATH
from ._numba.fwht import fwht_row, next_power_of_two
from ._kernels.names import canonical_kernel, check_degree
from ._core.rows import densify_rows, product_into
from ._core.validation import check_positive, user_stacklevel

__all__ = ["RandomMaclaurin"]


#: The degree distribution's base: ``P[N = n] = 1 / p^(n+1)`` (Kar & Karnick's choice).
P_BASE = 2.0

_MACLAURIN_KERNELS = ("polynomial", "exponential", "maclaurin")


def _maclaurin_coefficients(kernel, degree, gamma, coef0, coefficients=None):
    """Coefficients ``a_n`` of ``f(t) = sum_n a_n t^n`` with ``K(x, y) = f(<x, y>)``.

    ===========  ===================================  ====================================
    kernel       K(x, y)                              a_n
    ===========  ===================================  ====================================
    polynomial   ``(gamma <x,y> + coef0)^degree``     ``C(degree, n) coef0^(degree-n) gamma^n``
    exponential  ``exp(gamma <x,y>)``                 ``gamma^n / n!``
    maclaurin    ``sum_n a_n <x,y>^n``                ``coefficients[n]``
    ===========  ===================================  ====================================

    Parameters
    ----------
    kernel : {'polynomial', 'exponential', 'maclaurin'}
    degree : int
    gamma, coef0 : float
    coefficients : array-like or None

    Returns
    -------
    coef : callable
        ``coef(n)`` gives ``a_n`` for any ``n >= 0``.
    max_degree : int or None
        Degree beyond which every ``a_n`` is 0, ``None`` for an infinite series.

    References
    ----------
    Kar, P. and Karnick, H. Random feature maps for dot product kernels.
    AISTATS 2012.
    """
    if kernel == "polynomial":
        def coef(n):
            return math.comb(degree, n) * coef0 ** (degree - n) * gamma ** n if n <= degree else 0.0
        return coef, degree
    if kernel == "exponential":
        def coef(n):
            return math.exp(n * math.log(gamma) - math.lgamma(n + 1))
        return coef, None
    a = np.asarray(coefficients, dtype=np.float64).ravel()
    return (lambda n: float(a[n]) if n < a.size else 0.0), a.size - 1


def _check_coefficients(coefficients):
    if coefficients is None:
        raise ValueError("kernel='maclaurin' needs coefficients (the a_n of f(t) = sum a_n t^n)")
    a = np.asarray(coefficients, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(
            "coefficients must be a non-empty 1-D array of finite, non-negative numbers "
            f"(a dot-product kernel is positive definite only then), got {coefficients!r}")
    if not np.any(a > 0):
        raise ValueError("coefficients are all zero: the kernel is identically 0")
    return a


def sample_degrees(coef, max_degree, n_min, size, rng):
    """Draw ``size`` degrees from ``P[N = n] ∝ 2^-(n+1)`` on the support of ``a_n``.

    The support is ``{n >= n_min : a_n > 0}``, cut at ``max_degree``; the
    probabilities are renormalized on it, ``q_n = 2^-(n+1) / sum_{m in S} 2^-(m+1)``.
    A feature of degree ``n`` is then weighted by ``sqrt(a_n / q_n)``, so that
    ``E[Z_i(x) Z_i(y)] = sum_{n in S} q_n (a_n / q_n) <x,y>^n`` is exactly the sum
    of the kernel's terms of degree ``>= n_min``: truncating where the coefficients
    vanish loses nothing and keeps the estimate unbiased.

    Returns
    -------
    degrees : ndarray of int64, shape (size,)
    weight : callable, ``weight(n) = a_n / q_n``
        (empty support: ``degrees`` is empty)
    """
    if max_degree is None:
        # an infinite series: the geometric law itself, shifted to start at n_min
        degrees = n_min - 1 + rng.geometric(1.0 - 1.0 / P_BASE, size=size)
        return degrees.astype(np.int64), lambda n: coef(n) * P_BASE ** (n - n_min + 1) / (P_BASE - 1)
    support = np.array([n for n in range(n_min, max_degree + 1) if coef(n) > 0], dtype=np.int64)
    if support.size == 0:
        return np.zeros(0, dtype=np.int64), None
    q = P_BASE ** -(support + 1.0)
    q /= q.sum()
    degrees = rng.choice(support, size=size, p=q)
    q_of = dict(zip(support.tolist(), q.tolist()))
    return degrees.astype(np.int64), lambda n: coef(n) / q_of[n]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _maclaurin_products(P, degrees, counts, col_starts, scales, out, offset):
    """``out[i, offset + f] <- scale_g * prod_j P[i, col_g + j c_g + k]`` (serial, ``nogil``).

    The features are grouped by degree: group ``g`` holds ``c_g = counts[g]``
    features of degree ``n_g = degrees[g]``; factor ``j`` of its feature ``k`` is the
    projection in column ``col_starts[g] + j c_g + k`` of ``P``, so the loop over
    ``k`` runs over contiguous memory and vectorizes. The group's features are
    written in order from ``offset``.

    Parameters
    ----------
    P : ndarray of shape (m, n_projections), float32 or float64
    degrees, counts, col_starts : ndarray of int64, shape (n_groups,)
    scales : ndarray of shape (n_groups,), P's dtype
    out : ndarray of shape (m, >= offset + sum(counts)), P's dtype
    offset : int

    References
    ----------
    Kar, P. and Karnick, H. Random feature maps for dot product kernels.
    AISTATS 2012 (Algorithm 1).
    """
    m = P.shape[0]
    for i in range(m):
        p = P[i]
        o = out[i]
        f = offset
        for g in range(degrees.shape[0]):
            c = counts[g]
            sc = scales[g]
            # slice views indexed from 0 let LLVM vectorize (see kernelmaps._numba.fwht._radix8)
            dst = o[f:f + c]
            if degrees[g] == 0:
                for k in range(c):
                    dst[k] = sc
            else:
                first = p[col_starts[g]:col_starts[g] + c]
                for k in range(c):
                    dst[k] = sc * first[k]
            for j in range(1, degrees[g]):
                src = p[col_starts[g] + j * c:col_starts[g] + (j + 1) * c]
                for k in range(c):
                    dst[k] *= src[k]
            f += c


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _hadamard_projections(X, signs, slot_of, P):
    """``P[i, slot_of[t p + k]] <- (H M_t x_i)_k``: Hadamard rows as Rademacher projections.

    Each row, zero-padded to ``p``, is sign-flipped by ``M_t = diag(signs[t])`` and
    transformed by the ``p x p`` Walsh-Hadamard matrix ``H``; of the ``T p``
    coordinates, those with ``slot_of >= 0`` are scattered to their (randomly
    permuted) column of ``P``. Serial and ``nogil``.

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64, ``d <= p``
    signs : ndarray of shape (T, p), X's dtype
    slot_of : ndarray of shape (T p,), int64, a column of ``P`` or -1
    P : ndarray of shape (m, n_projections), X's dtype

    References
    ----------
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
    ICML 2014, section 3.5.
    """
    m, d = X.shape
    T, p = signs.shape
    buf = np.empty(p, dtype=X.dtype)
    for i in range(m):
        x = X[i]
        dst = P[i]
        for t in range(T):
            s = signs[t]
            for k in range(d):
                buf[k] = x[k] * s[k]
            for k in range(d, p):
                buf[k] = 0
            fwht_row(buf)
            base = t * p
            for k in range(p):
                slot = slot_of[base + k]
                if slot >= 0:
                    dst[slot] = buf[k]


class RandomMaclaurin(FeatureMap):
    """Random Maclaurin features for dot-product kernels ``K(x, y) = f(<x, y>)``.

    Each sampled feature draws a degree ``N`` with ``P[N = n] = 1/2^(n+1)`` (the
    support cut where the coefficients vanish, the probabilities renormalized on
    it, see :func:`sample_degrees`) and ``N`` Rademacher vectors ``w_j``, and is
    ``sqrt(a_N / q_N) prod_j w_j^T x``; the ``D'`` sampled features are scaled by
    ``1/sqrt(D')``. Their inner product is an unbiased estimate of the kernel.

    With ``h01=True`` (the H-0/1 heuristic, the default of Hamid et al.'s
    experiments) the constant and linear terms are exact: the output starts with
    ``sqrt(a_0)`` and ``sqrt(a_1) x`` (each only if its coefficient is non-zero;
    they count in ``n_components``), and only degrees ``>= 2`` are sampled.

    The projections of all features are one BLAS product per row block (the
    Rademacher vectors of the features of degree ``n`` are stacked per factor
    ``j``), and the products over ``j`` a vectorized Numba loop. With
    ``structured=True`` they are rows of randomized Hadamard transforms
    ``H M_t x`` instead (sign flips and a FWHT, concatenated and permuted), in
    ``O(log d)`` per projection instead of ``O(d)``.

    Sparse input stays sparse with the dense projections (a sparse-dense product
    per row block); the Hadamard transform reads dense rows, so
    ``structured=True`` densifies one row block at a time.

    Parameters
    ----------
    n_components : int, default=100
    kernel : {'polynomial', 'exponential', 'maclaurin'}, default='polynomial'
        ``(gamma <x,y> + coef0)^degree`` (scikit-learn's meaning),
        ``exp(gamma <x,y>)``, or ``sum_n coefficients[n] <x,y>^n``. Once fitted,
        ``self.kernel(X, Y)`` evaluates that kernel's exact Gram matrix.
    degree : int, default=2
    gamma : float, default=1.0
    coef0 : float, default=1.0
    coefficients : array-like of non-negative floats or None, default=None
        The Maclaurin coefficients ``a_n`` for ``kernel='maclaurin'`` (ignored
        otherwise; ``gamma``, ``degree`` and ``coef0`` are ignored for it).
    h01 : bool, default=True
        Exact constant and linear terms. Needs ``n_components`` larger than the
        number of exact features (``1 + n_features`` when both are non-zero);
        below that the map warns and falls back to sampling every degree, as
        Hamid et al. do for ``E < d`` (recorded in ``h01_``).
    structured : bool, default=False
        Hadamard projections instead of dense Rademacher ones.
    random_state : int, RandomState or None

    Attributes
    ----------
    h01_ : bool
        Whether the H-0/1 heuristic was applied.
    n_exact_ : int
        Leading exact features (``h01_``).
    degrees_ : ndarray of int64
        Degree of each sampled feature group (ascending).
    counts_ : ndarray of int64
        Features per group.
    scales_ : ndarray of float64
        ``sqrt(a_n / q_n) / sqrt(D')`` per group.
    random_weights_ : ndarray of shape (n_features, n_projections) or None
        The stacked Rademacher vectors (dense variant).
    signs_, slot_of_ : ndarray or None
        The Hadamard sign diagonals and the permutation (structured variant).

    References
    ----------
    Kar, P. and Karnick, H. Random feature maps for dot product kernels.
    AISTATS 2012.
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
    ICML 2014 (Algorithm 1; the H-0/1 heuristic; section 3.5).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomMaclaurin, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((200, 4)) / 2
    >>> rm = RandomMaclaurin(n_components=2000, degree=2, gamma=1.0, coef0=1.0, random_state=0).fit(X)

    With ``h01=True`` the constant and the 4 linear terms of ``(<x, y> + 1)^2``
    are exact features; the other 1995 all sample the one remaining degree, 2:

    >>> rm.n_exact_, rm.degrees_.tolist(), rm.counts_.tolist()
    (5, [2], [1995])
    >>> bool(relative_frobenius_error(rm.kernel(X), Z=rm.transform(X)) < 0.1)
    True
    """

    name = "random_maclaurin"
    paper = "Kar & Karnick, Random feature maps for dot product kernels, AISTATS 2012"
    kernel_family = "dot_product"
    unbiased = True
    test_params = {"n_components": 64, "degree": 2, "gamma": 0.2}
    benchmark = {"n_components": [256, 1024, 4096],
                 "params": {"kernel": "polynomial", "degree": 3, "gamma": 0.1, "coef0": 1.0}}
    accepts_sparse_blocks = True  # X W is a sparse-dense product (structured: densified per block)

    kernel = KernelParameter()

    @classmethod
    def peers(cls):
        from .tensor_sketch import polynomial_count_sketch_peer

        return polynomial_count_sketch_peer()

    def __init__(self, n_components=100, *, kernel="polynomial", degree=2, gamma=1.0, coef0=1.0,
                 coefficients=None, h01=True, structured=False, random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.coefficients = coefficients
        self.h01 = h01
        self.structured = structured
        self.random_state = random_state

    def _check_kernel(self):
        kernel = canonical_kernel(self.kernel, _MACLAURIN_KERNELS)
        if kernel == "maclaurin":
            a = _check_coefficients(self.coefficients)
            return kernel, _maclaurin_coefficients(kernel, 0, 1.0, 0.0, a)
        gamma = check_positive(self.gamma, "gamma")
        degree = check_degree(self.degree)
        coef0 = check_positive(self.coef0, "coef0", allow_zero=True) if kernel == "polynomial" else 0.0
        return kernel, _maclaurin_coefficients(kernel, degree, gamma, coef0)

    def _fit(self, X, rng):
        self.kernel_, (coef, max_degree) = self._check_kernel()
        d = X.shape[1]
        a0, a1 = coef(0), coef(1)
        n_exact = (a0 > 0) + d * (a1 > 0)
        higher = max_degree is None or any(coef(n) > 0 for n in range(2, max_degree + 1))
        self.h01_ = bool(self.h01) and (self.n_components_ > n_exact or (not higher and self.n_components_ == n_exact))
        if self.h01 and not self.h01_:
            # as in Hamid et al. (section 5.2): below d + 2 features the heuristic cannot be used
            warnings.warn(
                f"n_components={self.n_components_} leaves no sampled feature after the {n_exact} exact "
                f"constant and linear features of h01=True (n_features={d}): fitting with h01=False",
                UserWarning, stacklevel=user_stacklevel())
        if not self.h01_:
            n_exact = a0 = a1 = 0
        self.sqrt_a0_, self.sqrt_a1_ = math.sqrt(a0), math.sqrt(a1)
        n_sampled = self.n_components_ - n_exact
        degrees, weight = sample_degrees(coef, max_degree, 2 if self.h01_ else 0, n_sampled, rng)
        self.n_exact_ = int(n_exact)
        groups, counts = np.unique(degrees, return_counts=True)
        self.degrees_, self.counts_ = groups.astype(np.int64), counts.astype(np.int64)
        self.col_starts_ = np.concatenate([[0], np.cumsum(self.degrees_ * self.counts_)[:-1]]).astype(np.int64)
        self.scales_ = np.array([math.sqrt(weight(n) / n_sampled) for n in self.degrees_.tolist()])
        n_proj = int(np.sum(self.degrees_ * self.counts_))
        self.n_projections_ = n_proj
        self.random_weights_ = self.signs_ = self.slot_of_ = None
        if not self.structured:
            self.random_weights_ = rng.choice(np.array([-1.0, 1.0]), size=(d, n_proj))
        else:
            p = next_power_of_two(d)
            T = max(1, -(-n_proj // p))
            self.signs_ = rng.choice(np.array([-1.0, 1.0]), size=(T, p))
            slot_of = np.full(T * p, -1, dtype=np.int64)
            slot_of[rng.permutation(T * p)[:n_proj]] = np.arange(n_proj)
            self.slot_of_ = slot_of

    def _planned_bytes(self, n_features):
        # about (expected degree) projections per feature: bounded by the
        # polynomial degree, and by 8 for the exponential and Maclaurin series,
        # whose degree distribution decays geometrically
        degree = check_degree(self.degree) if self.kernel == "polynomial" else 8
        projections = max(1, degree) * self.n_components_
        per_row = 8 * (projections + 2 * self.n_components_ + n_features)
        if self.structured:
            return 8 * 2 * (projections + next_power_of_two(n_features)), per_row
        return 8 * n_features * projections, per_row

    def _prepare_transform(self, dtype):
        W = None if self.random_weights_ is None else np.ascontiguousarray(self.random_weights_, dtype=dtype)
        signs = None if self.signs_ is None else np.ascontiguousarray(self.signs_, dtype=dtype)
        return (W, signs, self.scales_.astype(dtype), dtype.type(self.sqrt_a0_), dtype.type(self.sqrt_a1_),
                ThreadScratch())

    def _block_elements_per_row(self):
        return self.n_projections_ + (self.signs_.shape[1] if self.signs_ is not None else 0)

    def _transform_block(self, X, out, context):
        W, signs, scales, sqrt_a0, sqrt_a1, scratch = context
        if sp.issparse(X) and W is None:
            X = densify_rows(X, scratch.get("rows", X.shape, X.dtype))
        col = 0
        if sqrt_a0 > 0:
            out[:, 0] = sqrt_a0
            col = 1
        if sqrt_a1 > 0:
            linear = out[:, col:col + X.shape[1]]
            if sp.issparse(X):
                # the same products x_k * sqrt(a_1) as the dense branch, at the nonzeros
                linear[...] = 0
                entries = X.tocoo()
                linear[entries.row, entries.col] = entries.data * sqrt_a1
            else:
                np.multiply(X, sqrt_a1, out=linear)
            col += X.shape[1]
        P = scratch.get("projections", (X.shape[0], self.n_projections_), X.dtype)
        if W is not None:
            product_into(X, W, P)
        else:
            _hadamard_projections(X, signs, self.slot_of_, P)
        _maclaurin_products(P, self.degrees_, self.counts_, self.col_starts_, scales, out, col)
        end = col + int(self.counts_.sum())
        if end < out.shape[1]:
            out[:, end:] = 0  # every term is exact (e.g. degree <= 1 with h01): nothing to sample

    def _kernel_params(self):
        if self.kernel_ == "maclaurin":
            return {"kernel": "maclaurin", "coefficients": self.coefficients}
        return {"kernel": self.kernel_, "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
