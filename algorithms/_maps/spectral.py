"""Frequencies drawn from the spectral densities of the shift-invariant kernels.

Random Fourier features draw their projection here, and the compact nonlinear map
starts its learned projection from the same Gaussian draw. The quasi-Monte Carlo
draws are in :mod:`kernelmaps._maps.qmc`.
"""

import math

from .qmc import student_t_scale


def draw_spectral(kernel, gamma, shape, rng, nu=1.5):
    """Sample frequencies from the spectral density of a shift-invariant kernel.

    ====================================  =====================================
    kernel                                law of each column ``w`` of ``W``
    ====================================  =====================================
    gaussian ``exp(-g ||d||^2)``          ``N(0, 2 g I)``
    laplacian ``exp(-g ||d||_1)``         i.i.d. entries ``Cauchy(0, g)``
    cauchy ``prod 1/(1 + g d_j^2)``       i.i.d. entries ``Laplace(0, sqrt(g))``
    matern (``nu``, see below)            ``sqrt(2 g) z sqrt(2 nu / u)``,
                                          ``z ~ N(0, I)``, ``u ~ chi^2(2 nu)``
    ====================================  =====================================

    The Matérn kernel ``2^(1-nu)/Gamma(nu) s^nu K_nu(s)``, ``s = 2 sqrt(nu g) ||d||``
    (length-scale ``l = 1/sqrt(2 g)``), has the spectral density
    ``S(w) ~ (2 nu / l^2 + ||w||^2)^-(nu + d/2)`` (Rasmussen & Williams 2006,
    eq. 4.15, in angular frequency): the multivariate Student-t with ``2 nu``
    degrees of freedom and scale ``I / l^2``. Its ``d`` entries share one
    chi-square draw ``u``; independent draws per entry would sample a product of
    one-dimensional Student-t laws, whose kernel is a product of one-dimensional
    Matérn kernels, not the Matérn kernel of the Euclidean distance.

    Parameters
    ----------
    kernel : {'gaussian', 'laplacian', 'cauchy', 'matern'}
    gamma : float
    shape : tuple of int
        ``(n_features, n_frequencies)``: one frequency per column.
    rng : numpy.random.RandomState
    nu : float, default=1.5
        Matérn smoothness (``'matern'`` only).

    Returns
    -------
    ndarray of float64

    References
    ----------
    Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine
    Learning. MIT Press, 2006, eq. 4.15.
    """
    if kernel == "gaussian":
        return rng.normal(0.0, math.sqrt(2.0 * gamma), size=shape)
    if kernel == "laplacian":
        return gamma * rng.standard_cauchy(size=shape)
    if kernel == "cauchy":
        return rng.laplace(0.0, math.sqrt(gamma), size=shape)
    if kernel == "matern":
        Z = rng.normal(0.0, math.sqrt(2.0 * gamma), size=shape)
        return Z * student_t_scale(rng.chisquare(2.0 * nu, size=shape[1]), nu)
    raise ValueError(f"no spectral density for kernel {kernel!r}")
