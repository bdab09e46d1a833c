"""Subsampled randomized Hadamard transform (SRHT), a fast Johnson-Lindenstrauss map."""

import math

import numpy as np
from numba import njit
from sklearn.utils.validation import check_is_fitted

from ._core.base import FeatureMap
from ._core.validation import check_float_array, check_n_components
from ._numba.fastmath import FASTMATH
from ._numba.fwht import fwht_row, load_signed, next_power_of_two

__all__ = ["SRHT"]


def _srht_draw(n_features, n_components, rng):
    """Draw an SRHT from ``R^n_features`` to ``R^n_components``.

    ``p`` is ``n_features`` padded to a power of two. The map stacks
    ``n_blocks = ceil(n_components / p)`` randomized Hadamard transforms ``H B_b``
    and keeps ``n_components`` of their ``n_blocks p`` coordinates, drawn without
    replacement, scaled by ``1 / sqrt(n_components)``.

    Why this scale: with random signs, every coordinate ``(H B x)_j`` satisfies
    ``E[(H B x)_j (H B y)_j] = sum_k H_jk^2 x_k y_k = <x, y>``, so the average of
    any ``E`` kept coordinates' products is unbiased, and
    ``E[<f(x), f(y)>] = <x, y>``, in particular ``E ||f(x)||^2 = ||x||^2``. (For
    one block this is the textbook ``sqrt(p/E) P (H/sqrt(p)) B``.)

    Parameters
    ----------
    n_features, n_components : int
    rng : numpy.random.RandomState

    Returns
    -------
    signs : ndarray of shape (n_blocks, p), float64
    index : ndarray of shape (n_components,), int64
        Sorted coordinates kept, in ``[0, n_blocks p)``.

    References
    ----------
    Tropp, J. A. Improved analysis of the subsampled randomized Hadamard
    transform. Advances in Adaptive Data Analysis, 2011.
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
    ICML 2014, section 3.4 (SRHT down-projection).
    """
    n_components = check_n_components(n_components)
    p = next_power_of_two(n_features)
    n_blocks = -(-n_components // p)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_blocks, p))
    index = np.sort(rng.choice(n_blocks * p, size=n_components, replace=False)).astype(np.int64)
    return signs, index


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _srht_apply(X, signs, index, scale, out):
    """``out[i] <- scale * (H B_b x_i)[index]`` over the stacked blocks (serial, ``nogil``).

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64, ``d <= p``
    signs : ndarray of shape (n_blocks, p), same dtype
    index : ndarray of shape (E,), int64, sorted, in ``[0, n_blocks p)``
    scale : scalar of the same dtype, usually ``1 / sqrt(E)``
    out : ndarray of shape (m, E), same dtype

    References
    ----------
    Tropp, J. A. Improved analysis of the subsampled randomized Hadamard
    transform. Advances in Adaptive Data Analysis, 2011.
    """
    m = X.shape[0]
    n_blocks, p = signs.shape
    E = index.shape[0]
    a = np.empty(p, dtype=X.dtype)
    for i in range(m):
        j = 0
        for b in range(n_blocks):
            lo = b * p
            if j >= E or index[j] >= lo + p:
                continue  # no coordinate of this block is kept
            load_signed(X[i], signs[b], a)
            fwht_row(a)
            while j < E and index[j] < lo + p:
                out[i, j] = scale * a[index[j] - lo]
                j += 1


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
        self.signs_, self.index_ = _srht_draw(X.shape[1], self.n_components_, rng)

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
        _srht_apply(X, *context, out)

    def _kernel_gram(self, X, Y):
        check_is_fitted(self)
        X = check_float_array(self, X, reset=False)
        Y = X if Y is None else check_float_array(self, Y, reset=False)
        return np.asarray(X, dtype=np.float64) @ np.asarray(Y, dtype=np.float64).T
