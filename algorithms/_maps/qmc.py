"""Quasi-Monte Carlo frequencies: scrambled Sobol' points mapped by inverse CDFs.

Random Fourier features estimate ``k(x - y) = E_w[cos(w^T (x - y))]`` by a Monte
Carlo average over frequencies ``w`` drawn from the spectral density. When the
density is the image of the uniform law on a cube under a map ``Phi^{-1}``
(coordinate-wise inverse CDFs for product densities), the same integral is
``int_[0,1]^s cos(Phi^{-1}(t)^T (x - y)) dt`` and may be estimated on a
low-discrepancy point set ``t_1, ..., t_n`` instead of i.i.d. uniforms (Yang,
Sindhwani, Avron & Mahoney, ICML 2014, their Algorithm 1 with ``w_i =
Phi^{-1}(t_i)``). We use scipy's scrambled Sobol' sequence, so the points are
random (each one uniform on the cube: the estimate stays unbiased) and seeded
from the estimator's ``random_state``.

=============  ==========================================  ===============================
kernel         spectral law of a frequency ``w``           ``Phi^{-1}`` of ``t``
=============  ==========================================  ===============================
gaussian       ``N(0, 2 gamma I)``                         ``sqrt(2 gamma) ndtri(t_j)``
laplacian      ``prod_j Cauchy(0, gamma)``                 ``gamma tan(pi (t_j - 1/2))``
cauchy         ``prod_j Laplace(0, sqrt(gamma))``          Laplace quantile, scale ``sqrt(gamma)``
matern         multivariate Student-t, ``2 nu`` d.o.f.,    ``sqrt(2 gamma) ndtri(t_j)``
               scale ``sqrt(2 gamma)``                     ``* sqrt(2 nu / q)``, ``q`` the
                                                           ``chi^2(2 nu)`` quantile of ``t_{d+1}``
=============  ==========================================  ===============================

The offsets ``b`` of ``cos(w^T x + b)`` take one more coordinate, ``b = 2 pi t``.

References
----------
Yang, J., Sindhwani, V., Avron, H. and Mahoney, M. W. Quasi-Monte Carlo feature
maps for shift-invariant kernels. ICML 2014, section 3 and Algorithm 1.

Owen, A. B. Scrambling Sobol' and Niederreiter-Xing points. Journal of
Complexity 14 (1998) (the scrambling that keeps each point uniform).
"""

import math

import numpy as np
from scipy import stats
from scipy.special import ndtri

#: How the frequencies of a random Fourier map are drawn: i.i.d. (Monte Carlo) or
#: on a scrambled Sobol' point set (quasi-Monte Carlo).
SAMPLINGS = ("mc", "qmc")
#: Uniforms are clipped to ``[U_MIN, 1 - U_MIN]``: every inverse CDF here is
#: infinite at 0 or 1, and a scrambled point may land on 0 exactly.
U_MIN = 2.0 ** -53
#: Smallest chi-square value a Matérn frequency divides by (the smallest normal
#: float64): a very small ``nu`` puts real mass below it, which would give an
#: infinite frequency.
CHI2_FLOOR = np.finfo(np.float64).tiny


def student_t_scale(chi2, nu):
    """``sqrt(2 nu / u)``: the factor turning ``N(0, I)`` into a Student-t frequency.

    ``z sqrt(2 nu / u)`` with ``z ~ N(0, I_d)`` and one ``u ~ chi^2(2 nu)`` shared by
    the ``d`` entries of ``z`` is the multivariate Student-t with ``2 nu`` degrees
    of freedom, the spectral density of the Matérn kernel (Rasmussen & Williams
    2006, eq. 4.15). ``u`` is floored at :data:`CHI2_FLOOR` so no factor is infinite.

    Parameters
    ----------
    chi2 : ndarray
        The draws ``u``.
    nu : float

    Returns
    -------
    ndarray of float64, the shape of ``chi2``
    """
    return np.sqrt((2.0 * nu) / np.maximum(chi2, CHI2_FLOOR))


def _sobol_engine(n_dims, seed):
    from scipy.stats import qmc

    try:
        return qmc.Sobol(n_dims, scramble=True, rng=seed)
    except TypeError:  # scipy < 1.15 names the generator `seed`
        return qmc.Sobol(n_dims, scramble=True, seed=seed)


def sobol_uniforms(n_points, n_dims, rng):
    """``n_points`` scrambled Sobol' points in ``(0, 1)^n_dims``, seeded from ``rng``.

    A Sobol' net is balanced (each elementary box holds its share of points) at
    powers of two; scipy warns when asked for another count. We draw the next
    power of two with ``random_base2`` and keep the first ``n_points``, a prefix of
    the sequence, which is what asking for ``n_points`` gives, without the warning.

    Parameters
    ----------
    n_points : int
    n_dims : int
    rng : numpy.random.RandomState
        One draw of four 32-bit words seeds the scrambling, so the same state
        gives the same points and another state another scramble.

    Returns
    -------
    ndarray of shape (n_points, n_dims), float64, clipped to ``[U_MIN, 1 - U_MIN]``
    """
    from scipy.stats import qmc

    if n_dims > qmc.Sobol.MAXDIM:
        raise ValueError(
            f"sampling='qmc' needs {n_dims} Sobol' dimensions (the input features plus the extra "
            f"coordinates of the draw), more than the {qmc.Sobol.MAXDIM} of scipy's Sobol' sequence; "
            "use sampling='mc'"
        )
    seed = np.random.default_rng(rng.randint(0, 2**32, size=4, dtype=np.uint64))
    engine = _sobol_engine(n_dims, seed)
    points = engine.random_base2((n_points - 1).bit_length())[:n_points]
    return np.clip(points, U_MIN, 1.0 - U_MIN)


def spectral_quantiles(kernel, gamma, U, nu=1.5):
    """Frequencies ``W`` (one per column) from uniforms, by the kernel's inverse CDF.

    Parameters
    ----------
    kernel : {'gaussian', 'laplacian', 'cauchy', 'matern'}
    gamma : float
    U : ndarray of shape (n_frequencies, n_features), or (n_frequencies, n_features + 1)
        for ``'matern'`` (the last column gives the chi-square), entries in (0, 1).
    nu : float, default=1.5
        Matérn smoothness (``'matern'`` only).

    Returns
    -------
    W : ndarray of shape (n_features, n_frequencies), float64, C-contiguous
    """
    if kernel == "gaussian":
        W = math.sqrt(2.0 * gamma) * ndtri(U)
    elif kernel == "laplacian":
        W = stats.cauchy.ppf(U, scale=gamma)
    elif kernel == "cauchy":
        W = stats.laplace.ppf(U, scale=math.sqrt(gamma))
    elif kernel == "matern":
        radial = math.sqrt(2.0 * gamma) * student_t_scale(stats.chi2.ppf(U[:, -1], 2.0 * nu), nu)
        W = ndtri(U[:, :-1]) * radial[:, None]
    else:
        raise ValueError(f"no spectral density for kernel {kernel!r}")
    return np.ascontiguousarray(W.T)


def draw_spectral_qmc(kernel, gamma, n_features, n_frequencies, rng, *, nu=1.5, offsets=True):
    """Quasi-Monte Carlo frequencies (and offsets) of a shift-invariant kernel.

    One scrambled Sobol' point per frequency, of dimension ``n_features`` (plus
    one for the Matérn chi-square, plus one for the offset), mapped by
    :func:`spectral_quantiles`; the offset is ``2 pi`` times its coordinate.

    Parameters
    ----------
    kernel : {'gaussian', 'laplacian', 'cauchy', 'matern'}
    gamma : float
    n_features, n_frequencies : int
    rng : numpy.random.RandomState
    nu : float, default=1.5
    offsets : bool, default=True
        Whether to draw the offsets ``b`` of ``cos(w^T x + b)``.

    Returns
    -------
    W : ndarray of shape (n_features, n_frequencies), float64
    b : ndarray of shape (n_frequencies,), float64, or None

    References
    ----------
    Yang, J., Sindhwani, V., Avron, H. and Mahoney, M. W. Quasi-Monte Carlo
    feature maps for shift-invariant kernels. ICML 2014, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._maps.qmc import draw_spectral_qmc
    >>> W, b = draw_spectral_qmc("gaussian", 0.5, 3, 8, np.random.RandomState(0))
    >>> W.shape, b.shape
    ((3, 8), (8,))
    >>> W2, _ = draw_spectral_qmc("gaussian", 0.5, 3, 8, np.random.RandomState(0))
    >>> bool(np.array_equal(W, W2))
    True
    """
    width = n_features + (kernel == "matern")
    U = sobol_uniforms(n_frequencies, width + bool(offsets), rng)
    W = spectral_quantiles(kernel, gamma, U[:, :width], nu)
    return W, (2.0 * np.pi * U[:, width] if offsets else None)
