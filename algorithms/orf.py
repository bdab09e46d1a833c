"""Orthogonal random features for the Gaussian and Matérn kernels (Yu et al., 2016)."""

import numpy as np

from ._core.base import KernelParameter
from ._core.parallel import n_worker_threads, run_row_blocks
from ._core.rows import product_into
from ._kernels.matern import check_nu
from ._kernels.names import canonical_kernel
from ._maps.cosine import CosineFeatureMap
from ._maps.qmc import student_t_scale

__all__ = ["OrthogonalRandomFeatures"]

#: The radial kernels ORF approximates: their spectral densities depend on ``||w||``
#: only, so a Haar direction times a norm from the radial law is a draw from them.
ORF_KERNELS = ("gaussian", "matern")


def _draw_orthogonal_gaussian(n_features, n_frequencies, scale, rng, nu=None):
    """Frequencies with radial row norms and orthogonal directions within blocks.

    Each block of ``d = n_features`` frequencies is ``S Q``: ``Q`` is a Haar
    orthogonal matrix (QR of a Gaussian matrix, each column multiplied by the sign
    of the matching diagonal entry of ``R``, without which ``Q`` is not Haar) and
    ``S`` is diagonal with ``chi(d)`` entries, so that each row has exactly the
    norm distribution of a row of an ``N(0, scale^2 I)`` matrix while the rows of a
    block are exactly orthogonal. ``ceil(n_frequencies / d)`` independent blocks
    are stacked and truncated.

    For the Matérn kernel (``nu`` given) each norm is further multiplied by its own
    ``sqrt(2 nu / u)``, ``u ~ chi^2(2 nu)``: ``scale chi(d) sqrt(2 nu / chi^2(2 nu))``
    is the norm of a multivariate Student-t frequency with ``2 nu`` degrees of
    freedom (the Matérn spectral density, Rasmussen & Williams 2006, eq. 4.15),
    and a uniform direction times that norm is such a frequency.

    Parameters
    ----------
    n_features : int
    n_frequencies : int
    scale : float
        Standard deviation of the Gaussian the rows imitate; ``sqrt(2 gamma)`` for
        ``exp(-gamma ||x - y||^2)`` and for the Matérn kernel of the same ``gamma``.
    rng : numpy.random.RandomState
    nu : float or None, default=None
        Matérn smoothness; ``None`` for the Gaussian kernel.

    Returns
    -------
    W : ndarray of shape (n_features, n_frequencies), float64
        One frequency per column, ready for ``X @ W``.

    References
    ----------
    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S.
    Orthogonal random features. NIPS 2016, section 3.
    """
    d = n_features
    n_blocks = -(-n_frequencies // d)
    G = rng.standard_normal((n_blocks, d, d))
    norms = np.sqrt(rng.chisquare(d, size=(n_blocks, d)))
    if nu is not None:
        norms *= student_t_scale(rng.chisquare(2.0 * nu, size=(n_blocks, d)), nu)
    frequencies = np.empty((n_blocks, d, d))

    def orthogonalize(start, stop):
        Q, R = np.linalg.qr(G[start:stop])
        Q *= np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]
        # the rows of S Q are the frequencies
        frequencies[start:stop] = norms[start:stop, :, None] * Q

    # Each QR is one LAPACK call per matrix whatever the grouping, run with BLAS
    # on one thread, so the draw is bit-identical for any thread count; blocks
    # run side by side (under load, a threaded QR was measured 4x slower).
    run_row_blocks(n_blocks, max(1, -(-n_blocks // n_worker_threads())), orthogonalize)
    W = frequencies.reshape(n_blocks * d, d).T[:, :n_frequencies]
    return np.ascontiguousarray(W * scale)


class OrthogonalRandomFeatures(CosineFeatureMap):
    """Orthogonal random features (ORF) for the Gaussian and Matérn kernels.

    Random Fourier features whose frequency matrix is ``W = S Q`` per ``d x d``
    block instead of i.i.d. Gaussian (see :func:`_draw_orthogonal_gaussian`): the
    rows keep the norm distribution of ``N(0, 2 gamma I)`` rows, and each row is
    marginally Gaussian, so ``z(x) . z(y)`` is an unbiased estimate of
    ``exp(-gamma ||x - y||^2)`` (each feature's expectation depends only on its
    own row) with a lower variance than RFF at the same width (Yu et al. 2016,
    Lemma 1 and Theorem 1). The transform is RFF's: one BLAS product per row block and the
    vectorized cosine epilogue. For the Matérn kernel the row norms follow its
    radial law ``sqrt(2 gamma) chi(d) sqrt(2 nu / chi^2(2 nu))``, so each row is
    marginally the multivariate Student-t of its spectral density and the
    estimate stays unbiased.

    ORF has no ``sampling='qmc'``: its randomness is a Haar rotation per block,
    not a product law mapped by inverse CDFs, and the orthogonal coupling of the
    rows is already its variance reduction.

    Parameters
    ----------
    n_components : int, default=100
        Output width D. Must be even for ``output='cossin'``.
    kernel : {'gaussian', 'rbf', 'matern'}, default='gaussian'
        ``exp(-gamma ||x - y||^2)`` or the Matérn kernel
        ``2^(1-nu)/Gamma(nu) s^nu K_nu(s)``, ``s = 2 sqrt(nu gamma) ||x - y||``
        (as in :class:`kernelmaps.RandomFourierFeatures`). Once fitted,
        ``self.kernel(X, Y)`` also evaluates that exact kernel's Gram matrix.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth, or a heuristic resolved at fit time (see
        :func:`kernelmaps.resolve_gamma`); the semantics of
        :class:`kernelmaps.RandomFourierFeatures` and scikit-learn's ``RBFSampler``.
    nu : float, default=1.5
        Smoothness of the Matérn kernel (> 0; used only with ``kernel='matern'``).
    output : {'cos', 'cossin'}, default='cos'
        ``sqrt(2/D) cos(W^T x + b)`` with ``b ~ U[0, 2 pi)``, or
        ``[cos(W^T x), sin(W^T x)] / sqrt(D/2)`` with ``D/2`` frequencies.
    random_state : int, RandomState or None

    Attributes
    ----------
    gamma_ : float
        The numeric bandwidth used (``gamma``, or the heuristic's value).
    kernel_ : str
        Canonical kernel name.
    nu_ : float or None
        The Matérn smoothness used (``None`` for the Gaussian kernel).
    random_weights_ : ndarray of shape (n_features, n_frequencies)
    random_offset_ : ndarray of shape (n_frequencies,) or None

    References
    ----------
    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S.
    Orthogonal random features. NIPS 2016.

    Rasmussen, C. E. and Williams, C. K. I. Gaussian Processes for Machine
    Learning. MIT Press, 2006, eq. 4.15 (the Matérn spectral density).

    Examples
    --------
    With four inputs the frequencies come in blocks of four: the columns of
    ``random_weights_`` within a block are orthogonal, across blocks they are not.

    >>> import numpy as np
    >>> from kernelmaps import OrthogonalRandomFeatures, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> orf = OrthogonalRandomFeatures(n_components=2000, gamma=0.1, random_state=0).fit(X)
    >>> block = orf.random_weights_[:, :4]
    >>> gram = block.T @ block
    >>> bool(np.allclose(gram, np.diag(np.diag(gram)), atol=1e-10))
    True
    >>> across = orf.random_weights_[:, :8].T @ orf.random_weights_[:, :8]
    >>> bool(np.allclose(across, np.diag(np.diag(across)), atol=1e-10))
    False
    >>> bool(relative_frobenius_error(orf.kernel(X), Z=orf.transform(X)) < 0.1)
    True

    The Matérn kernel keeps the orthogonal directions and draws heavier-tailed norms:

    >>> matern = OrthogonalRandomFeatures(2000, kernel="matern", nu=1.5, gamma=0.1, random_state=0).fit(X)
    >>> bool(relative_frobenius_error(matern.kernel(X), Z=matern.transform(X)) < 0.1)
    True
    """

    name = "orf"
    unbiased = True
    paper = "Yu, Suresh, Choromanski, Holtmann-Rice & Kumar, Orthogonal random features, NIPS 2016"
    test_params = {"n_components": 64, "gamma": 0.5}
    benchmark = {"n_components": [256, 1024, 4096], "params": {}}
    accepts_sparse_blocks = True  # X W is a sparse-dense product: sparse X stays sparse

    kernel = KernelParameter()

    def __init__(self, n_components=100, *, kernel="gaussian", gamma="scale", nu=1.5, output="cos",
                 random_state=None):
        super().__init__(n_components, gamma=gamma, output=output, random_state=random_state)
        self.kernel = kernel
        self.nu = nu

    def _kernel_name(self):
        return canonical_kernel(self.kernel, ORF_KERNELS)

    def _fit(self, X, rng):
        self.nu_ = check_nu(self.nu) if self._kernel_name() == "matern" else None
        super()._fit(X, rng)

    def _planned_bytes(self, n_features):
        D = self.n_components_
        n_blocks = -(-D // n_features)
        # the d x d Gaussian blocks and their orthogonalized copies (wide inputs:
        # one block alone is d^2), then the frequencies and an output row
        return 8 * (2 * n_blocks * n_features**2 + n_features * D + D), 8 * 2 * D

    def _draw(self, n_features, n_frequencies, scale, rng):
        self.random_weights_ = _draw_orthogonal_gaussian(n_features, n_frequencies, scale, rng, nu=self.nu_)

    def _prepare_projection(self, dtype):
        return np.ascontiguousarray(self.random_weights_, dtype=dtype)

    def _project(self, X, P, W):
        product_into(X, W, P)
