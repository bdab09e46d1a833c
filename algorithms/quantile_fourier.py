"""Random Fourier features parametrized by quantiles (Băzăvan, Li & Sminchisescu, 2012).

The frequencies of random Fourier features are usually drawn from the kernel's
spectral density for one fixed bandwidth. For the kernels of Table 1 of Băzăvan
et al. a frequency is instead ``gamma = sigma * h(omega)`` (their eq. 6), with
``omega`` uniform and drawn once, ``h`` the quantile function of the unit spectral
density and ``sigma`` the kernel's scale, one per input dimension. The map is then
a smooth function of ``sigma``: :class:`kernelmaps.FourierKernelRidge` learns
``sigma`` by gradient descent without ever redrawing.
"""

import math

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtri
from sklearn.utils.validation import check_is_fitted

from ._core.base import KernelParameter
from ._core.rows import product_into
from ._core.validation import check_choice
from ._kernels.frames import check_skewedness
from ._kernels.names import SKEWED_KERNELS, canonical_kernel
from ._maps.cosine import CosineFeatureMap, cos_features
from ._maps.qmc import SAMPLINGS, sobol_uniforms

__all__ = ["QuantileFourierFeatures"]

#: Kernels whose frequencies are ``sigma * h(omega)`` (Table 1 of Băzăvan et al.).
QUANTILE_KERNELS = ("gaussian", "skewed_chi2", "skewed_intersection")
#: Lower end of the uniform samples: ``h(0)`` is infinite for every kernel, and
#: ``U[2^-53, 1)`` keeps the quantiles finite while consuming the random state as
#: ``U[0, 1)`` does (scikit-learn's ``SkewedChi2Sampler`` draws the latter).
_SMALLEST_UNIFORM = 2.0 ** -53


def unit_quantiles(kernel, u):
    """The quantile function ``h(u)`` of the kernel's spectral density at ``sigma = 1``.

    ======================  ==================================  =====================
    kernel                  unit spectral density               ``h(u)``
    ======================  ==================================  =====================
    gaussian                ``N(0, 1)``                         ``sqrt(2) erfinv(2u - 1)``
    skewed_chi2             ``sech(pi w / 2) / 2``              ``(2/pi) log tan(pi u / 2)``
    skewed_intersection     Cauchy ``1 / (pi (1 + w^2))``       ``tan(pi (u - 1/2))``
    ======================  ==================================  =====================

    Parameters
    ----------
    kernel : {'gaussian', 'skewed_chi2', 'skewed_intersection'}
    u : ndarray of floats in (0, 1)

    Returns
    -------
    ndarray of float64, the shape of ``u``

    References
    ----------
    Băzăvan, Li & Sminchisescu, NIPS 2012, Table 1 (the module's reference).

    Examples
    --------
    Every density is symmetric, so ``h(1 - u) = -h(u)``; the quartiles show the
    tails, heaviest for the Cauchy density:

    >>> import numpy as np
    >>> from kernelmaps.quantile_fourier import unit_quantiles
    >>> np.round(unit_quantiles("gaussian", np.array([0.5, 0.8413447460685429])), 6)
    array([0., 1.])
    >>> for kernel in ("gaussian", "skewed_chi2", "skewed_intersection"):
    ...     print(kernel, np.round(unit_quantiles(kernel, np.array([0.25, 0.75])), 4))
    gaussian [-0.6745  0.6745]
    skewed_chi2 [-0.5611  0.5611]
    skewed_intersection [-1.  1.]
    """
    u = np.asarray(u, dtype=np.float64)
    if kernel == "gaussian":
        return ndtri(u)
    if kernel == "skewed_chi2":
        return (2.0 / np.pi) * np.log(np.tan(0.5 * np.pi * u))
    if kernel == "skewed_intersection":
        return np.tan(np.pi * (u - 0.5))
    raise ValueError(f"no quantile function for kernel {kernel!r}")


def draw_quantile_frequencies(kernel, n_features, n_frequencies, rng, sampling="mc"):
    """``(h(omega), b)``: the fixed unit frequencies and the offsets of eq. 1.

    ``sampling='mc'``: ``omega ~ U(0, 1)`` of shape ``(n_features, n_frequencies)``,
    drawn first, then ``b ~ U[0, 2 pi)``: the order and the calls of
    ``SkewedChi2Sampler``, so that the same seed gives the same map (see
    :class:`QuantileFourierFeatures`). ``sampling='qmc'``: ``(omega_j, b_j / 2 pi)``
    is the ``j``-th point of a scrambled Sobol' set in ``n_features + 1``
    dimensions (Yang et al., ICML 2014; :func:`kernelmaps._maps.qmc.sobol_uniforms`).

    Parameters
    ----------
    kernel : {'gaussian', 'skewed_chi2', 'skewed_intersection'}
    n_features, n_frequencies : int
    rng : numpy.random.RandomState
    sampling : {'mc', 'qmc'}, default='mc'

    Returns
    -------
    quantiles : ndarray of shape (n_features, n_frequencies), float64
    offsets : ndarray of shape (n_frequencies,), float64
    """
    if sampling == "qmc":
        U = sobol_uniforms(n_frequencies, n_features + 1, rng)
        return np.ascontiguousarray(unit_quantiles(kernel, U[:, :n_features]).T), 2.0 * np.pi * U[:, n_features]
    omega = rng.uniform(_SMALLEST_UNIFORM, 1.0, size=(n_features, n_frequencies))
    offsets = rng.uniform(0.0, 2.0 * np.pi, size=n_frequencies)
    return unit_quantiles(kernel, omega), offsets


def check_scales(scale, n_features, name="scale"):
    """``scale`` as a float64 array of shape ``(n_features,)`` of finite values >= 0.

    A scalar is broadcast to every dimension. A zero scale switches its dimension
    off (the kernel is constant along it), as a learner may. Raises ``ValueError`` naming the
    parameter, the expected shape or the offending entry.
    """
    try:
        values = np.asarray(scale, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive float or an array of shape ({n_features},), "
                         f"got {scale!r}") from None
    if values.ndim == 0:
        values = np.full(n_features, float(values))
    if values.shape != (n_features,):
        raise ValueError(f"{name} must be a positive float or an array of shape ({n_features},) "
                         f"(one per input feature), got shape {values.shape}")
    bad = ~(np.isfinite(values) & (values >= 0))
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and >= 0 in every dimension, got {values[j]!r} at index {j}")
    return values


def check_domain(X, kernel, skewedness, name="X"):
    """Refuse input outside the skewed kernels' domain ``x > -c`` (dense or sparse)."""
    if kernel == "gaussian":
        return
    values = X.data if sp.issparse(X) else X
    has_implicit_zeros = sp.issparse(X) and X.nnz < X.shape[0] * X.shape[1]
    low = min(float(values.min()) if values.size else np.inf, 0.0 if has_implicit_zeros else np.inf)
    if not low > -skewedness:
        raise ValueError(
            f"the {kernel} kernel reads log({name} + skewedness) and needs every entry of {name} above "
            f"-skewedness = {-skewedness:g}; the smallest entry is {low!r}"
        )


class QuantileFourierFeatures(CosineFeatureMap):
    """Random Fourier features with frequencies ``sigma * h(omega)`` (RFF-SKL's map).

    ``z(x) = sqrt(2/D) cos(phi(x)^T (sigma * h(omega_j)) + b_j)`` with ``omega_j``
    uniform on ``(0, 1)^d`` and ``b_j`` uniform on ``[0, 2 pi)``, both drawn once
    at fit, and ``h`` the quantile function of the kernel's unit spectral
    density (:func:`unit_quantiles`). ``phi(x) = x`` for the Gaussian kernel and
    ``log(x + c)`` for the skewed ones (Li, Ionescu & Sminchisescu, 2010). The scale
    ``sigma`` (one per input dimension) can be changed after fit with
    :meth:`set_scales` without redrawing, which makes the map a smooth function of
    ``sigma``.

    The kernels, with ``d_j = phi(x)_j - phi(y)_j``:

    ======================  =============================================
    ``kernel``              ``k(x, y)``
    ======================  =============================================
    gaussian                ``exp(-sum_j sigma_j^2 d_j^2 / 2)``
    skewed_chi2             ``prod_j sech(sigma_j d_j)``
                            ``= prod_j 2 a^s b^s / (a^2s + b^2s)``
    skewed_intersection     ``exp(-sum_j sigma_j |d_j|)``
                            ``= prod_j min((a/b)^s, (b/a)^s)``
    ======================  =============================================

    (``a = x_j + c``, ``b = y_j + c``, ``s = sigma_j``.) **Convention**: ``sigma``
    multiplies the frequencies, as in eq. 6 and Table 1's quantile column of the
    paper. Table 1's Gaussian row prints the kernel with ``sigma`` as a bandwidth,
    ``exp(-|x - y|^2 / (2 sigma^2))``, which is the kernel of frequencies
    ``h(omega) / sigma``; we follow eq. 6 throughout, so ``sigma`` is an inverse
    length and the Gaussian kernel has ``gamma = sigma^2 / 2`` in scikit-learn's
    ``exp(-gamma |x - y|^2)``. The skewed rows of Table 1 already follow eq. 6:
    scikit-learn's ``SkewedChi2Sampler(skewedness=c)`` is this map with
    ``kernel='skewed_chi2', scale=0.5, skewedness=c`` and the same seed.

    Transform is one BLAS product ``phi(X) W`` per row block, ``W = sigma * h(omega)``,
    and the vectorized cosine epilogue of random Fourier features.

    Parameters
    ----------
    n_components : int, default=100
        Output width D (the number of frequencies).
    kernel : {'gaussian', 'skewed_chi2', 'skewed_intersection'}, default='gaussian'
        Once fitted, ``self.kernel(X, Y)`` also evaluates the exact kernel with the
        current scales.
    scale : float or array-like of shape (n_features,), default=1.0
        ``sigma``: one scale for all dimensions, or one per dimension (>= 0; 0
        switches a dimension off).
    skewedness : float, default=1.0
        The ``c`` of ``log(x + c)`` (skewed kernels only; named as in
        ``SkewedChi2Sampler``). Input must satisfy ``x > -c``.
    sampling : {'mc', 'qmc'}, default='mc'
        ``'mc'``: ``omega`` and ``b`` i.i.d. uniform (``SkewedChi2Sampler``'s draws
        for the same seed). ``'qmc'``: one scrambled Sobol' point per frequency
        (Yang et al., 2014), seeded from ``random_state``; a lower kernel error at
        the same width on low-dimensional input.
    random_state : int, RandomState or None

    Attributes
    ----------
    kernel_ : str
    scales_ : ndarray of shape (n_features,)
        The current ``sigma`` (set by fit and :meth:`set_scales`).
    skewedness_ : float
    quantiles_ : ndarray of shape (n_features, n_components)
        The fixed unit frequencies ``h(omega)``.
    random_weights_ : ndarray of shape (n_features, n_components)
        The frequencies ``scales_[:, None] * quantiles_``.
    random_offset_ : ndarray of shape (n_components,)

    References
    ----------
    Băzăvan, E. G., Li, F. and Sminchisescu, C. Learning random kernel
    approximations for object recognition. NIPS 2012, eq. 1, eq. 6 and Table 1.

    Li, F., Ionescu, C. and Sminchisescu, C. Random Fourier approximations for
    skewed multiplicative histogram kernels. DAGM 2010.

    Yang, J., Sindhwani, V., Avron, H. and Mahoney, M. W. Quasi-Monte Carlo
    feature maps for shift-invariant kernels. ICML 2014 (``sampling='qmc'``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import QuantileFourierFeatures, relative_frobenius_error
    >>> H = np.random.default_rng(0).dirichlet(np.ones(8), size=200)  # histograms
    >>> qff = QuantileFourierFeatures(4000, kernel="skewed_chi2", scale=0.5, random_state=0).fit(H)
    >>> Z = qff.transform(H)
    >>> bool(relative_frobenius_error(qff.kernel(H), Z=Z) < 0.05)
    True
    >>> sigma = np.linspace(0.5, 2.0, 8)
    >>> Z2 = qff.set_scales(sigma).transform(H)  # same omega, new sigma
    >>> bool(relative_frobenius_error(qff.kernel(H), Z=Z2) < 0.05)
    True
    """

    name = "quantile_fourier"
    paper = ("Băzăvan, Li & Sminchisescu, Learning random kernel approximations for object "
             "recognition, NIPS 2012 (eq. 6, Table 1)")
    kernel_family = "skewed"
    unbiased = True
    # generic tests feed Gaussian noise; the skewed kernels are tested on histograms
    test_params = {"n_components": 64, "kernel": "gaussian", "scale": 0.7}
    # the asv suite feeds maps tagged positive_only non-negative data (benchmarks/common.py)
    benchmark = {"n_components": [256, 1024, 4096], "params": {"kernel": "skewed_chi2", "scale": 0.5}}
    output = "cos"  # eq. 1 has no [cos, sin] form here

    kernel = KernelParameter()

    def __init__(self, n_components=100, *, kernel="gaussian", scale=1.0, skewedness=1.0, sampling="mc",
                 random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.scale = scale
        self.skewedness = skewedness
        self.sampling = sampling
        self.random_state = random_state

    @classmethod
    def peers(cls):
        from sklearn.kernel_approximation import SkewedChi2Sampler

        def skewed_chi2_sampler(n_components, random_state, kernel="skewed_chi2", scale=0.5,
                                skewedness=1.0, **_):
            if kernel != "skewed_chi2" or np.ndim(scale) or scale != 0.5:
                raise ValueError("SkewedChi2Sampler approximates only kernel='skewed_chi2' at scale=0.5")
            return SkewedChi2Sampler(skewedness=skewedness, n_components=n_components,
                                     random_state=random_state)

        return {"sklearn.SkewedChi2Sampler": skewed_chi2_sampler}

    def _kernel_name(self):
        return canonical_kernel(self.kernel, QUANTILE_KERNELS)

    def _n_frequencies(self):
        return self.n_components_

    def _planned_bytes(self, n_features):
        D = self.n_components_
        # quantiles and frequencies, offsets; an output row and its log(x + c) scratch
        return 8 * (2 * n_features * D + D), 8 * (2 * D + n_features)

    def _fit(self, X, rng):
        self.kernel_ = self._kernel_name()
        self.skewedness_ = check_skewedness(self.skewedness)
        check_domain(X, self.kernel_, self.skewedness_)
        scales = check_scales(self.scale, X.shape[1])
        check_choice(self.sampling, "sampling", SAMPLINGS)
        self.quantiles_, self.random_offset_ = draw_quantile_frequencies(
            self.kernel_, X.shape[1], self.n_components_, rng, self.sampling)
        self._set_scales(scales)

    def set_scales(self, scale):
        """Set ``sigma`` of the fitted map, keeping ``omega`` and the offsets.

        Parameters
        ----------
        scale : float or array-like of shape (n_features,)
            Finite and >= 0.

        Returns
        -------
        self
        """
        check_is_fitted(self)
        self._set_scales(check_scales(scale, self.n_features_in_))
        self._check_fitted_state_finite()
        return self

    def _set_scales(self, scales):
        self.scales_ = scales
        self.random_weights_ = scales[:, None] * self.quantiles_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # non-negative input is always inside the skewed kernels' domain x > -c for c > 0
        tags.input_tags.positive_only = isinstance(self.kernel, str) and self.kernel.lower() in SKEWED_KERNELS
        return tags

    def _check_transform_input(self, X):
        check_domain(X, self.kernel_, self.skewedness_)

    def _prepare_transform(self, dtype):
        offset = self.random_offset_.astype(dtype)
        weights = np.ascontiguousarray(self.random_weights_, dtype=dtype)
        return weights, offset, dtype.type(math.sqrt(2.0 / self.n_components_)), dtype.type(self.skewedness_)

    def _block_elements_per_row(self):
        return self.n_components_ + (self.n_features_in_ if self.kernel_ != "gaussian" else 0)

    def _transform_block(self, X, out, context):
        weights, offset, amplitude, skewedness = context
        if self.kernel_ != "gaussian":
            # log(x + c) of one block, while it is in cache (the product dominates)
            X = np.log(X + skewedness)
        product_into(X, weights, out)
        cos_features(out, offset, amplitude)

    def _kernel_params(self):
        # exp(-sum sigma^2 d^2 / 2) is gamma = 1/2 on sigma x; the skewed kernels are gamma = 1
        # on sigma log(x + c)
        if self.kernel_ == "gaussian":
            return {"kernel": "gaussian", "gamma": 0.5, "scales": self.scales_}
        return {"kernel": self.kernel_, "gamma": 1.0, "scales": self.scales_, "skewedness": self.skewedness_}
