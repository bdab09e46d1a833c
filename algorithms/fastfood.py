"""Fastfood: Gaussian random features in O(D log d) time (Le, Sarlós & Smola, 2013)."""

import math

import numpy as np
from numba import njit

from ._maps.hadamard import HadamardGaussianMap
from ._numba.fastmath import FASTMATH
from ._numba.fwht import fwht_row, load_signed

__all__ = ["Fastfood"]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _fastfood_project(X, B, perm, G, S, P):
    """``P[i] <- [V_1 x_i, V_2 x_i, ...]`` truncated to ``P.shape[1]``, with Fastfood blocks.

    Block ``b`` is ``V_b = S_b H G_b Pi_b H B_b`` applied to ``x`` zero-padded to
    ``p``; every scale factor is folded into ``S_b``. Serial and ``nogil``: one
    row at a time, so that the row and its two ``p``-length buffers stay in cache.

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64
    B : ndarray of shape (n_blocks, p), same dtype
        Random signs.
    perm : ndarray of shape (n_blocks, p), int32
        ``(Pi v)[k] = v[perm[k]]``.
    G : ndarray of shape (n_blocks, p), same dtype
        Gaussian diagonal.
    S : ndarray of shape (n_blocks, p), same dtype
        Scaling diagonal (with the bandwidth and normalization folded in).
    P : ndarray of shape (m, D), same dtype, ``D <= n_blocks * p``
        Output.

    References
    ----------
    Le, Q., Sarlós, T. and Smola, A. Fastfood: approximating kernel expansions in
    loglinear time. ICML 2013, section 3.
    """
    m = X.shape[0]
    n_blocks, p = B.shape
    D = P.shape[1]
    a = np.empty(p, dtype=X.dtype)
    c = np.empty(p, dtype=X.dtype)
    for i in range(m):
        for b in range(n_blocks):
            lo = b * p
            width = min(p, D - lo)
            load_signed(X[i], B[b], a)
            fwht_row(a)
            gb = G[b]
            pb = perm[b]
            for k in range(p):
                c[k] = a[pb[k]] * gb[k]
            fwht_row(c)
            sb = S[b]
            row = P[i]
            for k in range(width):
                row[lo + k] = c[k] * sb[k]


class Fastfood(HadamardGaussianMap):
    """Fastfood features of the Gaussian kernel ``exp(-gamma ||x - y||^2)``.

    The dense Gaussian frequency matrix of random Fourier features is replaced by
    stacked ``p x p`` blocks (``p`` = ``n_features`` padded to a power of two)

        ``V = (1 / (sigma sqrt(p))) S H G Pi H B``,

    with ``H`` the Walsh-Hadamard matrix (applied by the FWHT), ``B`` random signs,
    ``Pi`` a random permutation, ``G`` a Gaussian diagonal and
    ``S_ii = s_i / ||G||_F``, ``s_i ~ chi(p)``. Each row of ``H G Pi H B`` has
    norm ``sqrt(p) ||G||_F``, so the rows of ``V`` have the norms of rows of a
    Gaussian matrix with entries ``N(0, 1/sigma^2)``; here ``1/sigma^2 = 2 gamma``,
    the spectral density of the kernel. The frequencies go through the same
    ``cos`` / ``[cos, sin]`` epilogues as :class:`RandomFourierFeatures`.
    Cost: ``O(n_components log p)`` time per row and ``O(n_components)`` memory
    for the map.

    Parameters
    ----------
    n_components : int, default=100
        Output width D; must be even for ``output='cossin'``.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth, with the semantics of ``RandomFourierFeatures(kernel='gaussian')``.
    output : {'cos', 'cossin'}, default='cos'
    random_state : int, RandomState or None

    Attributes
    ----------
    gamma_ : float
    padded_features_ : int
        ``p``.
    n_blocks_ : int
    blocks_ : tuple of ndarray of shape (n_blocks_, p)
        ``(B, perm, G, S)``, the bandwidth folded into ``S``.
    random_offset_ : ndarray or None

    References
    ----------
    Le, Q., Sarlós, T. and Smola, A. Fastfood: approximating kernel expansions in
    loglinear time. ICML 2013.

    Examples
    --------
    Five inputs are zero-padded to ``p = 8``; 100 outputs take 13 blocks of 8
    frequencies, the last one cut to 4. Each block is four ``p``-vectors, not a
    ``p x p`` matrix:

    >>> import numpy as np
    >>> from kernelmaps import Fastfood, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((20, 5))
    >>> fastfood = Fastfood(n_components=100, gamma=0.1, random_state=0).fit(X)
    >>> fastfood.padded_features_, fastfood.n_blocks_, fastfood.n_components_
    (8, 13, 100)
    >>> [diagonal.shape for diagonal in fastfood.blocks_]  # B, Pi, G, S
    [(13, 8), (13, 8), (13, 8), (13, 8)]
    >>> K = fastfood.kernel(X)  # the exact exp(-0.1 |x - y|^2)
    >>> print(round(relative_frobenius_error(K, Z=fastfood.transform(X)), 2))
    0.15
    """

    name = "fastfood"
    unbiased = True
    paper = "Le, Sarlós & Smola, Fastfood: approximating kernel expansions in loglinear time, ICML 2013"
    test_params = {"n_components": 64, "gamma": 0.5}
    benchmark = {"n_components": [256, 1024, 4096], "params": {}}

    def _draw_blocks(self, p, n_blocks, rng):
        B = rng.choice(np.array([-1.0, 1.0]), size=(n_blocks, p))
        perm = np.array([rng.permutation(p) for _ in range(n_blocks)], dtype=np.int32)
        G = rng.standard_normal((n_blocks, p))
        s = np.sqrt(rng.chisquare(p, size=(n_blocks, p)))
        frob = np.linalg.norm(G, axis=1, keepdims=True)
        S = s / frob * (math.sqrt(2.0 * self.gamma_) / math.sqrt(p))
        return B, perm, G, S

    def _project_blocks(self, X, P, blocks):
        _fastfood_project(X, *blocks, P)
