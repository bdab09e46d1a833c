"""Random Fourier features (Rahimi & Recht, 2007)."""

import math

import numpy as np

from ._base import KernelParameter
from ._cosine_map import CosineFeatureMap
from ._kernels import SHIFT_INVARIANT, canonical_kernel
from ._rows import product_into

__all__ = ["RandomFourierFeatures"]


def _draw_spectral(kernel, gamma, shape, rng):
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


class RandomFourierFeatures(CosineFeatureMap):
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

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kernelmaps import RandomFourierFeatures, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> rff = RandomFourierFeatures(n_components=2000, gamma=0.1, random_state=0).fit(X)
    >>> Z = rff.transform(X)
    >>> Z.shape
    (200, 2000)
    >>> bool(relative_frobenius_error(rff.kernel(X), Z=Z) < 0.1)
    True
    >>> Zs = rff.transform(sp.csr_matrix(X))  # sparse in, dense out
    >>> bool(np.allclose(Zs, Z, rtol=1e-12, atol=1e-12))
    True
    """

    name = "rff"
    paper = "Rahimi & Recht, Random features for large-scale kernel machines, NIPS 2007"
    kernel_family = "shift_invariant"
    unbiased = True
    test_params = {"n_components": 64, "gamma": 0.5}
    benchmark = {"n_components": [256, 1024, 2048, 4096], "params": {"kernel": "gaussian"}}
    accepts_sparse_blocks = True  # X W is a sparse-dense product: sparse X stays sparse

    kernel = KernelParameter()

    def __init__(self, n_components=100, *, kernel="gaussian", gamma="scale", output="cos",
                 random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.output = output
        self.random_state = random_state

    def _kernel_name(self):
        return canonical_kernel(self.kernel, SHIFT_INVARIANT)

    def _draw(self, n_features, n_frequencies, scale, rng):
        self.random_weights_ = _draw_spectral(self.kernel_, self.gamma_, (n_features, n_frequencies), rng)

    def _prepare_projection(self, dtype):
        return np.ascontiguousarray(self.random_weights_, dtype=dtype)

    def _project(self, X, P, W):
        product_into(X, W, P)
