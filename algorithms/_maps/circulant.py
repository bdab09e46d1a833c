"""The circulant projection ``R D x`` that the randomized and the optimized circulant maps share.

The FFT pieces are functions so that the optimized circulant map (learning ``r``
by the gradient of eq. 17, itself a circular correlation) uses them too.
Convention, the paper's eq. 12 and ``scipy.linalg.circulant``'s: ``circ(r)`` has
first column ``r``, ``circ(r)[i, j] = r[(i - j) mod d]``, so
``circ(r) x = r ⊛ x = irfft(rfft(r) * rfft(x))``.

References
----------
Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
circulant extensions. arXiv:1503.03893, 2015, section 8.
"""

import numpy as np
import scipy.fft

from .cosine import DenseFormProjection


def _circular_product(a, b, conjugate):
    """``irfft(F(a) F(b))``, or ``irfft(F(a) conj(F(b)))``, along the last axis (broadcasting).

    ``a`` and ``b`` are real, of shape ``(..., d)``; so is the result.
    """
    d = np.shape(a)[-1]
    fa = scipy.fft.rfft(a, axis=-1, workers=1)
    fb = scipy.fft.rfft(b, axis=-1, workers=1)
    return scipy.fft.irfft(fa * (np.conj(fb) if conjugate else fb), n=d, axis=-1, workers=1)


def _circular_convolve(a, b):
    """``a ⊛ b = circ(a) b`` along the last axis, by real FFT (see :func:`_circular_product`).

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eqs. 14-15.
    """
    return _circular_product(a, b, conjugate=False)


def circular_correlate(u, x):
    """``circ(x)^T u``, i.e. ``c[k] = sum_i u[i] x[(i - k) mod d]``, along the last axis.

    This is the gradient of ``u . (r ⊛ x)`` with respect to ``r``: with
    ``u = -w ∘ sin(r ⊛ x)`` it is the paper's eq. 17, in O(d log d), for real
    ``u`` and ``x`` of shape ``(..., d)`` (broadcasting).

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, eq. 17.
    """
    return _circular_product(u, x, conjugate=True)


def circulant_spectra(r):
    """The real FFTs ``F(r_b)`` of the circulant vectors, computed once per transform.

    Parameters
    ----------
    r : ndarray of shape (n_blocks, d), float32 or float64

    Returns
    -------
    ndarray of shape (n_blocks, d // 2 + 1), complex64 or complex128
    """
    return scipy.fft.rfft(r, axis=-1, workers=1)


def circulant_project(X, spectra, n_outputs):
    """``[circ(r_0) x, circ(r_1) x, ...][:n_outputs]`` for every row ``x`` of ``X``.

    One real FFT per row, ``F(x)``, shared by all blocks; then per block one
    complex product and one inverse real FFT. The circulant matrices are never
    formed: O(n_blocks d log d) time per row.

    Parameters
    ----------
    X : ndarray of shape (n, d), float32 or float64
    spectra : ndarray of shape (n_blocks, d // 2 + 1)
        From :func:`circulant_spectra`.
    n_outputs : int
        At most ``n_blocks * d``; the first outputs are kept.

    Returns
    -------
    P : ndarray of shape (n, n_outputs), ``X.dtype``
        A view of a C-contiguous ``(n, n_blocks * d)`` array.

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, section 8.1.
    """
    n, d = X.shape
    fx = scipy.fft.rfft(X, axis=1, workers=1)
    P = scipy.fft.irfft(fx[:, None, :] * spectra[None], n=d, axis=-1, workers=1)
    return P.reshape(n, -1)[:, :n_outputs]


#: Inputs up to this width are projected by the dense ``d x D`` matrix that the
#: circulant blocks equal, in one BLAS product: FFTs of a few points cost more
#: than d multiply-adds per output. At d = 2 to 16 the FFT path ran at 0.19-0.89x
#: RBFSampler in float32 on the quick profile's datasets (D = 256, 1024; AMD EPYC
#: znver3), and at d = 64 it was slower than RFF's product in float64 as well.
DENSE_MAX_FEATURES = 64


def draw_circulant(n_features, n_outputs, scale, rng):
    """The random ±1 diagonal ``D`` and the ``N(0, scale^2)`` vectors ``r`` of the blocks.

    Parameters
    ----------
    n_features : int
        d, the length of each circulant vector.
    n_outputs : int
        Projected outputs wanted: ``ceil(n_outputs / d)`` blocks are drawn.
    scale : float
        ``sqrt(2 gamma)`` for the Gaussian kernel.
    rng : numpy.random.RandomState

    Returns
    -------
    signs : ndarray of shape (n_features,)
    vectors : ndarray of shape (n_blocks, n_features)
    """
    n_blocks = -(-n_outputs // n_features)
    signs = rng.choice(np.array([-1.0, 1.0]), size=n_features)
    return signs, rng.normal(0.0, scale, size=(n_blocks, n_features))


class CirculantProjection(DenseFormProjection):
    """The transform of a map ``cos(R D x + b)`` whose ``R`` stacks circulant blocks.

    Shared by the randomized circulant map and the optimized one, which differ
    only in how they obtain their fitted ``signs_`` (the ±1 diagonal ``D``) and
    ``circulant_vectors_`` (``r`` of each block). The host class provides
    ``_n_frequencies()``, the number of projected outputs. Inputs of at most
    :data:`DENSE_MAX_FEATURES` are projected by the equal dense matrix
    (:class:`kernelmaps._maps.cosine.DenseFormProjection`), wider ones by FFTs.
    """

    def _dense_is_cheaper(self):
        return self.circulant_vectors_.shape[1] <= DENSE_MAX_FEATURES

    def _structured_projection(self, dtype):
        return self.signs_.astype(dtype), circulant_spectra(self.circulant_vectors_.astype(dtype))

    def _project_structured(self, X, P, structured):
        signs, spectra = structured
        P[...] = circulant_project(X * signs, spectra, P.shape[1])

    def _project_block(self, X, P, projection):
        self._apply_projection(X, P, projection)

    def _planned_bytes(self, n_features):
        n_blocks = -(-self._n_frequencies() // n_features)
        # circulant vectors, signs and their spectra; a row's spectra and output
        per_row = (n_features + 2) + 2 * n_blocks * (n_features // 2 + 1) + n_blocks * n_features
        return 8 * 5 * n_blocks * (n_features + 2), 8 * (per_row + self.n_components_)

    def _block_elements_per_row(self):
        # F(x), the per-block products (complex) and the stacked inverse FFTs
        n_blocks, d = self.circulant_vectors_.shape
        return (d + 2) + 2 * n_blocks * (d // 2 + 1) + n_blocks * d + self.n_components_
