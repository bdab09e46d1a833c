"""Subsampled randomized Hadamard transform (SRHT), a fast Johnson-Lindenstrauss map."""

import math

import numpy as np

from ._core.base import FeatureMap
from ._maps.hadamard import srht_apply, srht_draw
from ._numba.fwht import next_power_of_two

__all__ = ["SRHT"]


class SRHT(FeatureMap):
    """Subsampled randomized Hadamard transform: a fast linear (JL) projection.

    ``f(x) = (1 / sqrt(D)) [H B_1 x, H B_2 x, ...]_S`` with ``x`` zero-padded to a
    power of two ``p``, ``B_b`` random sign diagonals, ``H`` the Walsh-Hadamard
    matrix and ``S`` a random set of ``D = n_components`` of the
    ``ceil(D/p) p`` coordinates. Inner products are preserved in expectation,
    ``E[f(x) . f(y)] = x . y``: the map approximates the linear kernel. Cost:
    ``O(ceil(D/p) p log p)`` time per row, ``O(D)`` memory for the map.

    Parameters
    ----------
    n_components : int, default=100
    random_state : int, RandomState or None

    Attributes
    ----------
    signs_ : ndarray of shape (n_blocks, p)
    index_ : ndarray of shape (n_components,)

    References
    ----------
    Tropp, J. A. Improved analysis of the subsampled randomized Hadamard
    transform. Advances in Adaptive Data Analysis, 2011.
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
    ICML 2014 (as the CRAFTMaps down-projection).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import SRHT, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((10, 1000))
    >>> srht = SRHT(n_components=256, random_state=0).fit(X)
    >>> Z = srht.transform(X)
    >>> Z.shape
    (10, 256)
    >>> print(round(relative_frobenius_error(X @ X.T, Z=Z), 2))  # Z Z^T against the linear kernel
    0.17
    """

    name = "srht"
    unbiased = True
    paper = "Tropp, Improved analysis of the subsampled randomized Hadamard transform, 2011"
    kernel_family = "linear"
    test_params = {"n_components": 64}
    benchmark = None

    def __init__(self, n_components=100, random_state=None):
        self.n_components = n_components
        self.random_state = random_state

    def _fit(self, X, rng):
        self.signs_, self.index_ = srht_draw(X.shape[1], self.n_components_, rng)

    def _prepare_transform(self, dtype):
        return (np.ascontiguousarray(self.signs_, dtype=dtype), self.index_,
                dtype.type(1.0 / math.sqrt(self.n_components_)))

    def _block_elements_per_row(self):
        return self.n_components_

    def _planned_bytes(self, n_features):
        p = next_power_of_two(n_features)
        padded = -(-self.n_components_ // p) * p
        # state: the signs, and the permutation of every padded coordinate that
        # drawing the kept ones without replacement makes; per row: its padded
        # blocks and its output
        return 8 * 2 * padded, 8 * (padded + self.n_components_)

    def _transform_block(self, X, out, context):
        srht_apply(X, *context, out)

    def _kernel_params(self):
        return {"kernel": "linear"}
