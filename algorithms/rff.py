"""Random Fourier features (Rahimi & Recht, 2007)."""

import numpy as np

from ._core.base import KernelParameter
from ._core.rows import product_into
from ._core.validation import check_choice
from ._kernels.frames import SHIFT_INVARIANT
from ._kernels.matern import check_nu
from ._kernels.names import canonical_kernel
from ._maps.cosine import CosineFeatureMap
from ._maps.qmc import SAMPLINGS, draw_spectral_qmc
from ._maps.spectral import draw_spectral

__all__ = ["RandomFourierFeatures"]

#: The kernels whose spectral density :func:`kernelmaps._maps.spectral.draw_spectral` samples.
RFF_KERNELS = tuple(dict.fromkeys(SHIFT_INVARIANT + ("matern",)))


class RandomFourierFeatures(CosineFeatureMap):
    """Random Fourier features for shift-invariant kernels.

    ``z(x) = sqrt(2/D) cos(W^T x + b)`` with the columns of ``W`` drawn from the
    kernel's spectral density and ``b ~ U[0, 2 pi)`` (``output='cos'``), or the
    lower-variance pair ``[cos(W^T x), sin(W^T x)] / sqrt(D/2)``
    (``output='cossin'``, ``D/2`` frequencies). Then ``z(x) . z(y)`` is an
    unbiased estimate of ``k(x, y)``. With ``sampling='qmc'`` the frequencies
    (and offsets) are a scrambled Sobol' point set mapped by the spectral
    density's inverse CDF (Yang et al., 2014; see :mod:`kernelmaps._maps.qmc`): still
    unbiased, with a kernel error that falls faster with ``D`` on
    low-dimensional data.

    The product ``X W`` is one BLAS call per row block; the cosine is a vectorized
    Numba epilogue on the block while it is still in cache.

    Parameters
    ----------
    n_components : int, default=100
        Output width D. Must be even for ``output='cossin'``.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern'}, default='gaussian'
        ``exp(-gamma ||x-y||^2)``, ``exp(-gamma ||x-y||_1)``,
        ``prod_j 1/(1 + gamma (x_j-y_j)^2)`` or the Matérn kernel
        ``2^(1-nu)/Gamma(nu) s^nu K_nu(s)``, ``s = 2 sqrt(nu gamma) ||x-y||``
        (scikit-learn's ``Matern(length_scale=1/sqrt(2 gamma), nu=nu)``; the
        spectral densities are listed in :func:`kernelmaps._maps.spectral.draw_spectral`). Once fitted,
        ``self.kernel(X, Y)`` also evaluates that exact kernel's Gram matrix (see
        :class:`kernelmaps.KernelName`).
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth, or a heuristic resolved at fit time (see
        :func:`kernelmaps.resolve_gamma`). The Gaussian kernel has
        scikit-learn's ``RBFSampler`` semantics.
    nu : float, default=1.5
        Smoothness of the Matérn kernel (> 0; used only with ``kernel='matern'``).
        ``nu = 1/2`` is ``exp(-sqrt(2 gamma) ||x-y||)``; ``nu -> inf`` tends to
        the Gaussian kernel of the same ``gamma``.
    output : {'cos', 'cossin'}, default='cos'
    sampling : {'mc', 'qmc'}, default='mc'
        ``'mc'``: i.i.d. frequencies (and offsets ``b ~ U[0, 2 pi)``), drawn as
        scikit-learn's ``RBFSampler`` draws them. ``'qmc'``: one scrambled
        Sobol' point per frequency, of dimension ``n_features`` (plus one for the
        Matérn chi-square, plus one for the offset when ``output='cos'``), mapped
        by inverse CDFs; the scrambling is seeded from ``random_state``.
        Needs ``n_features`` below about 21000 (scipy's Sobol' dimensions).
    random_state : int, RandomState or None

    Attributes
    ----------
    gamma_ : float
        The numeric bandwidth used.
    kernel_ : str
        Canonical kernel name.
    nu_ : float or None
        The Matérn smoothness used (``None`` for the other kernels).
    random_weights_ : ndarray of shape (n_features, n_frequencies)
    random_offset_ : ndarray of shape (n_frequencies,) or None

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007.

    Yang, J., Sindhwani, V., Avron, H. and Mahoney, M. W. Quasi-Monte Carlo
    feature maps for shift-invariant kernels. ICML 2014 (``sampling='qmc'``).

    Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine
    Learning. MIT Press, 2006, eq. 4.15 (the Matérn spectral density).

    Examples
    --------
    The kernel picks the spectral density the frequencies are drawn from; ``nu``
    of the Matérn kernel sets its smoothness (``nu = 1/2``: the exponential kernel).

    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from kernelmaps import RandomFourierFeatures, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> for nu in (0.5, 2.5):
    ...     matern = RandomFourierFeatures(2000, kernel="matern", nu=nu, gamma=0.1, random_state=0).fit(X)
    ...     print(nu, bool(relative_frobenius_error(matern.kernel(X), Z=matern.transform(X)) < 0.1))
    0.5 True
    2.5 True

    The features keep the input's float type; sparse rows give the same dense features.

    >>> rff = RandomFourierFeatures(n_components=2000, gamma=0.1, sampling="qmc", random_state=0).fit(X)
    >>> Z = rff.transform(X)
    >>> rff.transform(X.astype(np.float32)).dtype, Z.dtype
    (dtype('float32'), dtype('float64'))
    >>> bool(np.allclose(rff.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-12))
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

    def __init__(self, n_components=100, *, kernel="gaussian", gamma="scale", nu=1.5, output="cos",
                 sampling="mc", random_state=None):
        super().__init__(n_components, gamma=gamma, output=output, random_state=random_state)
        self.kernel = kernel
        self.nu = nu
        self.sampling = sampling

    def _kernel_name(self):
        return canonical_kernel(self.kernel, RFF_KERNELS)

    def _fit(self, X, rng):
        check_choice(self.sampling, "sampling", SAMPLINGS)
        self.nu_ = check_nu(self.nu) if self._kernel_name() == "matern" else None
        super()._fit(X, rng)

    def _draw(self, n_features, n_frequencies, scale, rng):
        if self.sampling == "qmc":
            # the offsets are one more coordinate of the Sobol' points (output='cos'), else None
            self.random_weights_, sobol_offsets = draw_spectral_qmc(
                self.kernel_, self.gamma_, n_features, n_frequencies, rng, nu=self.nu_,
                offsets=self.output == "cos")
            return sobol_offsets
        self.random_weights_ = draw_spectral(self.kernel_, self.gamma_, (n_features, n_frequencies), rng,
                                             nu=self.nu_)
        return None

    def _prepare_projection(self, dtype):
        return np.ascontiguousarray(self.random_weights_, dtype=dtype)

    def _project(self, X, P, W):
        product_into(X, W, P)
