"""Random Fourier features (Rahimi & Recht, 2007)."""

import math

import numpy as np
from numba import njit

from ._base import FeatureMap, KernelParameter, check_choice
from ._fastmath import FASTMATH, row_needs_libm, trig_limit, vcos, vsincos
from ._kernels import SHIFT_INVARIANT, canonical_kernel, exact_kernel, resolve_gamma

__all__ = ["RandomFourierFeatures", "draw_spectral", "cos_features", "cossin_features"]


def draw_spectral(kernel, gamma, shape, rng):
    """Sample frequencies from the spectral density of a shift-invariant kernel.

    ====================================  =====================================
    kernel                                density of each entry
    ====================================  =====================================
    gaussian ``exp(-g ||d||^2)``          ``N(0, 2 g)``
    laplacian ``exp(-g ||d||_1)``         ``Cauchy(0, g)``
    cauchy ``prod 1/(1 + g d_j^2)``       ``Laplace(0, sqrt(g))``
    ====================================  =====================================

    Parameters
    ----------
    kernel : {'gaussian', 'laplacian', 'cauchy'}
    gamma : float
    shape : tuple of int
    rng : numpy.random.RandomState

    Returns
    -------
    ndarray of float64
    """
    if kernel == "gaussian":
        return rng.normal(0.0, math.sqrt(2.0 * gamma), size=shape)
    if kernel == "laplacian":
        return gamma * rng.standard_cauchy(size=shape)
    if kernel == "cauchy":
        return rng.laplace(0.0, math.sqrt(gamma), size=shape)
    raise ValueError(f"no spectral density for kernel {kernel!r}")


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def cos_features(P, offset, scale):
    """In place, ``P[i, j] <- scale * cos(P[i, j] + offset[j])``.

    The RFF epilogue after the BLAS product ``P = X W``, run serially on one row
    block (blocks run in parallel, see :func:`kernelmaps._base.run_row_blocks`).
    Each row is one vectorized pass, or a libm pass for a row whose arguments
    exceed the range of the polynomial cosine.

    Parameters
    ----------
    P : ndarray of shape (n, D), float32 or float64, C-contiguous
    offset : ndarray of shape (D,), same dtype
    scale : scalar of the same dtype

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007, Algorithm 1.
    """
    n, m = P.shape
    limit = trig_limit(scale)
    for i in range(n):
        row = P[i]
        for j in range(m):
            row[j] += offset[j]
        if row_needs_libm(row, limit):
            for j in range(m):
                a = row[j]
                row[j] = scale * (math.cos(a) if abs(a) > limit else vcos(a))
        else:
            for j in range(m):
                row[j] = scale * vcos(row[j])


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def cossin_features(P, out, scale):
    """``out[i] <- scale * [cos(P[i]), sin(P[i])]``, sharing one range reduction.

    Parameters
    ----------
    P : ndarray of shape (n, m), float32 or float64
    out : ndarray of shape (n, 2 m), same dtype
    scale : scalar of the same dtype

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (the ``[cos, sin]`` form of the complex feature).
    """
    n, m = P.shape
    limit = trig_limit(scale)
    for i in range(n):
        row = P[i]
        dst = out[i]
        if row_needs_libm(row, limit):
            for j in range(m):
                a = row[j]
                if abs(a) > limit:
                    dst[j] = scale * math.cos(a)
                    dst[m + j] = scale * math.sin(a)
                else:
                    s, c = vsincos(a)
                    dst[j] = scale * c
                    dst[m + j] = scale * s
        else:
            for j in range(m):
                s, c = vsincos(row[j])
                dst[j] = scale * c
                dst[m + j] = scale * s


class RandomFourierFeatures(FeatureMap):
    """Random Fourier features for shift-invariant kernels.

    ``z(x) = sqrt(2/D) cos(W^T x + b)`` with the columns of ``W`` drawn from the
    kernel's spectral density and ``b ~ U[0, 2 pi)`` (``output='cos'``), or the
    lower-variance pair ``[cos(W^T x), sin(W^T x)] / sqrt(D/2)``
    (``output='cossin'``, ``D/2`` frequencies). Then ``z(x) . z(y)`` is an
    unbiased estimate of ``k(x, y)``.

    The product ``X W`` is one BLAS call per row block; the cosine is a vectorized
    Numba epilogue on the block while it is still in cache.

    Parameters
    ----------
    n_components : int, default=100
        Output width D. Must be even for ``output='cossin'``.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy'}, default='gaussian'
        ``exp(-gamma ||x-y||^2)``, ``exp(-gamma ||x-y||_1)`` or
        ``prod_j 1/(1 + gamma (x_j-y_j)^2)``. Once fitted, ``self.kernel(X, Y)``
        also evaluates that exact kernel's Gram matrix (see
        :class:`kernelmaps.KernelName`).
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth, or a heuristic resolved at fit time (see
        :func:`kernelmaps._kernels.resolve_gamma`). The Gaussian kernel has
        scikit-learn's ``RBFSampler`` semantics.
    output : {'cos', 'cossin'}, default='cos'
    random_state : int, RandomState or None

    Attributes
    ----------
    gamma_ : float
        The numeric bandwidth used.
    kernel_ : str
        Canonical kernel name.
    random_weights_ : ndarray of shape (n_features, n_frequencies)
    random_offset_ : ndarray of shape (n_frequencies,) or None

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007.
    """

    name = "rff"
    paper = "Rahimi & Recht, Random features for large-scale kernel machines, NIPS 2007"
    kernel_family = "shift_invariant"
    test_params = {"n_components": 64, "gamma": 0.5}
    benchmark = {"n_components": [256, 1024, 2048, 4096], "params": {"kernel": "gaussian"}}

    kernel = KernelParameter()

    def __init__(self, n_components=100, *, kernel="gaussian", gamma="scale", output="cos",
                 random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.output = output
        self.random_state = random_state

    @classmethod
    def peers(cls):
        from sklearn.kernel_approximation import RBFSampler

        def rbf_sampler(n_components, random_state, gamma, **_):
            return RBFSampler(gamma=gamma, n_components=n_components, random_state=random_state)

        return {"sklearn.RBFSampler": rbf_sampler}

    def _fit(self, X, rng):
        kernel = canonical_kernel(self.kernel, SHIFT_INVARIANT)
        check_choice(self.output, "output", ("cos", "cossin"))
        if self.output == "cossin" and self.n_components % 2:
            raise ValueError(
                f"output='cossin' needs an even n_components (cos and sin halves), got {self.n_components}"
            )
        self.kernel_ = kernel
        self.gamma_ = resolve_gamma(self.gamma, X, kernel, rng)
        n_freq = self.n_components if self.output == "cos" else self.n_components // 2
        self.random_weights_ = draw_spectral(kernel, self.gamma_, (X.shape[1], n_freq), rng)
        self.random_offset_ = (
            rng.uniform(0.0, 2.0 * np.pi, size=n_freq) if self.output == "cos" else None
        )

    def _prepare_transform(self, dtype):
        W = np.ascontiguousarray(self.random_weights_, dtype=dtype)
        offset = None if self.random_offset_ is None else self.random_offset_.astype(dtype)
        return W, offset, dtype.type(np.sqrt(2.0 / self.n_components))

    def _transform_block(self, X, out, context):
        W, offset, scale = context
        if offset is not None:
            np.matmul(X, W, out=out)
            cos_features(out, offset, scale)
        else:
            cossin_features(X @ W, out, scale)

    def _kernel_params(self):
        return {"kernel": self.kernel_, "gamma": self.gamma_}
