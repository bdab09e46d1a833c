"""Tensor Sketch for polynomial kernels (Pham & Pagh, 2013)."""

import math

import numpy as np
import scipy.fft
import scipy.sparse as sp
from numba import njit

from ._core.base import FeatureMap
from ._core.parallel import ThreadScratch
from ._core.validation import check_positive
from ._kernels.names import check_degree
from ._numba.fastmath import FASTMATH

__all__ = ["TensorSketch"]

#: Output elements per FFT call (rows x D): few enough that a chunk's sketches and
#: spectra stay in cache, enough that the per-call costs of scipy.fft and the
#: kernels (tens of microseconds) do not show. At D = 4096, N = 20000, degree 3
#: (AMD EPYC znver3, 2 threads), chunks of 4, 8, 16, 32 and 64 rows took 880,
#: 766, 701, 752 and 849 ms (float64) and 546, 452, 407, 374 and 409 ms (float32).
CHUNK_ELEMENTS = 16 * 4096


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _clear_bins(sketch, bins):
    # only the bins a sketch writes are non-zero: clearing them alone is a full reset
    for k in range(bins.shape[0]):
        sketch[bins[k]] = 0


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _count_sketches(X, hashes, signs, C):
    """``C[i, j] <- CountSketch_j([x_i, 1])`` for every row and sketch (serial, ``nogil``).

    ``C[i, j, hashes[j, k]] += signs[j, k] * x_ik``; the column ``k = d`` (present
    when ``hashes`` has ``d + 1`` columns) is the appended constant 1, whose sign
    carries ``sqrt(coef0)``. ``signs`` may carry a common scale (``sqrt(gamma)``).

    ``C`` must be zero outside the bins ``hashes[j]`` of each sketch ``j`` (as it
    is when it was zeroed once and only ever written by these kernels with the
    same ``hashes``): only those bins are cleared. Clearing every bin of a
    4096-wide sketch cost 3.6 us of a float64 row's 54 us; its at most ``d + 1``
    bins cost 0.8 us.

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64
    hashes : ndarray of shape (p, d) or (p, d + 1), int64 in ``[0, D)``
    signs : ndarray of the same shape as ``hashes``, X's dtype
    C : ndarray of shape (m, p, D), X's dtype, overwritten

    References
    ----------
    Pham, N. and Pagh, R. Fast and scalable polynomial kernels via explicit
    feature maps. KDD 2013.
    """
    m, d = X.shape
    p, width = hashes.shape
    for i in range(m):
        x = X[i]
        for j in range(p):
            c = C[i, j]
            h = hashes[j]
            s = signs[j]
            _clear_bins(c, h)
            for k in range(d):
                c[h[k]] += s[k] * x[k]
            if width > d:
                c[h[d]] += s[d]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _count_sketches_csr(indptr, indices, data, first_row, n_features, hashes, signs, C):
    """:func:`_count_sketches` of ``len(C)`` CSR rows from ``first_row``, from their nonzeros
    (``C`` as there: zero outside the hashed bins, which are cleared first).

    A zero entry adds nothing to a sketch, so visiting the nonzeros in column
    order (canonical CSR) makes the same additions in the same order as the
    dense kernel: the sketches are bit-identical. Cost ``O(p nnz)`` per row
    block instead of ``O(p m d)``.

    Parameters
    ----------
    indptr, indices : ndarray of int64
        The CSR structure (sorted indices, no duplicates).
    data : ndarray, float32 or float64
    first_row : int
    n_features : int
        ``d``; ``hashes`` has a column ``d`` for the appended constant when it
        is ``d + 1`` wide.
    hashes, signs, C : as in :func:`_count_sketches`
    """
    p, width = hashes.shape
    for i in range(C.shape[0]):
        start, stop = indptr[first_row + i], indptr[first_row + i + 1]
        for j in range(p):
            c = C[i, j]
            h = hashes[j]
            s = signs[j]
            _clear_bins(c, h)
            for t in range(start, stop):
                k = indices[t]
                c[h[k]] += s[k] * data[t]
            if width > n_features:
                c[h[n_features]] += s[n_features]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _spectral_product(F, out):
    # out[i] <- prod_j F[i, j]: the convolution of the sketches, in the frequency domain
    m, p, n = F.shape
    for i in range(m):
        o = out[i]
        f0 = F[i, 0]
        for k in range(n):
            o[k] = f0[k]
        for j in range(1, p):
            f = F[i, j]
            for k in range(n):
                o[k] *= f[k]


def polynomial_count_sketch_peer():
    """scikit-learn's ``PolynomialCountSketch`` as the benchmark peer of the
    polynomial-kernel maps (same ``degree``, ``gamma`` and ``coef0``)."""
    from sklearn.kernel_approximation import PolynomialCountSketch

    def polynomial_count_sketch(n_components, random_state, degree=2, gamma=1.0, coef0=0.0,
                                kernel="polynomial", **_):
        if kernel != "polynomial":
            raise ValueError(f"PolynomialCountSketch approximates the polynomial kernel, not {kernel!r}")
        return PolynomialCountSketch(n_components=n_components, degree=degree, gamma=gamma, coef0=coef0,
                                     random_state=random_state)

    return {"sklearn.PolynomialCountSketch": polynomial_count_sketch}


class TensorSketch(FeatureMap):
    """Tensor Sketch of the polynomial kernel ``(gamma <x, y> + coef0)^degree``.

    ``x' = [sqrt(gamma) x, sqrt(coef0)]`` is count-sketched ``degree`` times
    independently (hash ``h_j: [d+1] -> [D]``, sign ``s_j``), and the sketches are
    convolved circularly: ``TS(x) = irfft(prod_j rfft(C_j(x')))``, the count sketch
    of ``x'^{⊗degree}`` under the hash ``sum_j h_j mod D``. Then
    ``E[<TS(x), TS(y)>] = <x', y'>^degree``, the kernel, without bias.

    Count sketches are a serial Numba loop; the FFTs are real (``scipy.fft``,
    which keeps float32 in float32) and run per row block on the worker threads.
    Cost: ``O(degree (d + D log D))`` per row. Sparse input stays sparse: the
    count sketches read only the nonzeros (``O(degree nnz(x))``).

    Parameters
    ----------
    n_components : int, default=100
    degree : int, default=2
        ``>= 1``.
    gamma : float, default=1.0
    coef0 : float, default=0.0
    random_state : int, RandomState or None

    Attributes
    ----------
    hashes_ : ndarray of shape (degree, n_features [+ 1]), int64
    signs_ : ndarray of the same shape, float64
        ``±sqrt(gamma)`` for the features, ``±sqrt(coef0)`` for the appended 1.

    References
    ----------
    Pham, N. and Pagh, R. Fast and scalable polynomial kernels via explicit
    feature maps. KDD 2013.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kernelmaps import TensorSketch, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((200, 4)) / 2
    >>> ts = TensorSketch(n_components=2048, degree=2, gamma=1.0, coef0=1.0, random_state=0).fit(X)

    One hash and one sign per input and per factor of the degree; ``coef0 > 0``
    appends the constant coordinate ``sqrt(coef0)``, a fifth column here:

    >>> ts.hashes_.shape, ts.signs_.shape
    ((2, 5), (2, 5))
    >>> Z = ts.transform(X)
    >>> bool(relative_frobenius_error(ts.kernel(X), Z=Z) < 0.1)
    True
    >>> bool(np.array_equal(ts.transform(sp.csr_matrix(X)), Z))  # sketched from the nonzeros
    True
    """

    name = "tensor_sketch"
    paper = "Pham & Pagh, Fast and scalable polynomial kernels via explicit feature maps, KDD 2013"
    kernel_family = "dot_product"
    unbiased = True
    test_params = {"n_components": 64, "degree": 2, "gamma": 0.2, "coef0": 1.0}
    benchmark = {"n_components": [256, 1024, 4096], "params": {"degree": 3, "gamma": 0.1, "coef0": 1.0}}
    accepts_sparse_blocks = True  # the count sketches are computed from the nonzeros

    def __init__(self, n_components=100, *, degree=2, gamma=1.0, coef0=0.0, random_state=None):
        self.n_components = n_components
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.random_state = random_state

    @classmethod
    def peers(cls):
        return polynomial_count_sketch_peer()

    def _fit(self, X, rng):
        degree = check_degree(self.degree)
        if degree < 1:
            raise ValueError(f"degree must be >= 1 for a tensor sketch, got {degree}")
        gamma = check_positive(self.gamma, "gamma")
        coef0 = check_positive(self.coef0, "coef0", allow_zero=True)
        width = X.shape[1] + (coef0 > 0)
        self.hashes_ = rng.randint(0, self.n_components_, size=(degree, width)).astype(np.int64)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(degree, width))
        signs[:, :X.shape[1]] *= math.sqrt(gamma)
        signs[:, X.shape[1]:] *= math.sqrt(coef0)
        self.signs_ = signs

    def _prepare_transform(self, dtype):
        return np.ascontiguousarray(self.signs_, dtype=dtype), ThreadScratch()

    def _block_elements_per_row(self):
        # sketches, their spectra (complex: 2 reals per bin) and the product's spectrum
        D, p = self.n_components_, self.hashes_.shape[0]
        return p * D + (p + 1) * 2 * (D // 2 + 1)

    def _planned_bytes(self, n_features):
        D, p = self.n_components_, max(1, check_degree(self.degree))
        return 8 * 2 * p * (n_features + 1), 8 * (p * D + (p + 1) * 2 * (D // 2 + 1) + D)

    def _transform_block(self, X, out, context):
        signs, scratch = context
        D, p = self.n_components_, self.hashes_.shape[0]
        complex_dtype = np.result_type(X.dtype, np.complex64)
        sparse = sp.issparse(X)
        if sparse:  # one index type for the kernel, whatever scipy chose
            indptr, indices = X.indptr.astype(np.int64, copy=False), X.indices.astype(np.int64, copy=False)
        chunk_rows = max(1, CHUNK_ELEMENTS // D)
        for start in range(0, X.shape[0], chunk_rows):
            m = min(chunk_rows, X.shape[0] - start)
            # zero when allocated; the kernels then clear only the bins they write
            C = scratch.get("sketches", (m, p, D), X.dtype, zeroed=True)
            if sparse:
                _count_sketches_csr(indptr, indices, X.data, start, X.shape[1], self.hashes_, signs, C)
            else:
                _count_sketches(X[start:start + m], self.hashes_, signs, C)
            if p == 1:
                out[start:start + m] = C[:, 0]
                continue
            F = scipy.fft.rfft(C, axis=2, workers=1)
            G = scratch.get("spectrum", (m, D // 2 + 1), complex_dtype)
            _spectral_product(F, G)
            out[start:start + m] = scipy.fft.irfft(G, n=D, axis=1, overwrite_x=True, workers=1)

    def _kernel_params(self):
        return {"kernel": "polynomial", "gamma": self.gamma, "degree": self.degree, "coef0": self.coef0}
