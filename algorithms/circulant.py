"""Randomized circulant nonlinear maps (Yu, Kumar, Rowley & Chang, 2015, section 8).

The projection ``R D x`` by circulant blocks, and its FFTs, are
:mod:`kernelmaps._maps.circulant`'s, shared with the optimized circulant map.
"""

from ._maps.circulant import CirculantProjection, draw_circulant
from ._maps.cosine import CosineFeatureMap

__all__ = ["CirculantRandomFeatures"]


class CirculantRandomFeatures(CirculantProjection, CosineFeatureMap):
    """Randomized circulant nonlinear map for the Gaussian kernel.

    ``z(x) = sqrt(2/D) cos(R D x + b)`` with ``R = circ(r)``, ``r ~ N(0, 2 gamma I)``,
    ``D`` a random ±1 diagonal and ``b ~ U[0, 2 pi)``. Every entry of ``R D x`` is
    then ``N(0, 2 gamma ||x||^2)``-distributed, as an RFF projection is, so
    ``z(x) . z(y)`` is an unbiased estimate of ``exp(-gamma ||x - y||^2)``; the
    outputs of one block are dependent, which the paper finds costs almost no
    accuracy (its Fig. 3). ``D < d`` keeps the first ``D`` outputs; ``D > d``
    concatenates ``ceil(D/d)`` blocks with independent ``r``. The sign flips are
    shared by the blocks, as in the paper, so that ``F(D x)`` is computed once
    per row (independent flips per block were measured to give the same MSE on
    LETTER). Cost: O(D log d) time per row, O(D) parameters.

    Parameters
    ----------
    n_components : int, default=100
        Output width D. Must be even for ``output='cossin'``.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth of ``exp(-gamma ||x - y||^2)``, or a heuristic resolved at fit
        time (see :func:`kernelmaps.resolve_gamma`); the semantics of
        :class:`kernelmaps.RandomFourierFeatures`.
    output : {'cos', 'cossin'}, default='cos'
        ``sqrt(2/D) cos(R D x + b)``, or ``[cos(R D x), sin(R D x)] / sqrt(D/2)``
        with ``D/2`` circulant outputs.
    random_state : int, RandomState or None
        Seeds the bandwidth heuristic's sample, the sign flips, the circulant vectors and
        the offsets.

    Attributes
    ----------
    gamma_ : float
        The numeric bandwidth used (``gamma``, or the heuristic's value).
    kernel_ : str
        Always ``'gaussian'``.
    signs_ : ndarray of shape (n_features,)
        The ±1 diagonal ``D``.
    circulant_vectors_ : ndarray of shape (n_blocks, n_features)
        ``r`` of each block (the first column of its circulant matrix).
    random_offset_ : ndarray of shape (n_frequencies,) or None

    References
    ----------
    Yu, F. X., Kumar, S., Rowley, H. and Chang, S.-F. Compact nonlinear maps and
    circulant extensions. arXiv:1503.03893, 2015, section 8, eqs. 12-15.

    Examples
    --------
    Inner products of the features approximate ``exp(-gamma ||x - y||^2)``:

    >>> import numpy as np
    >>> from kernelmaps import CirculantRandomFeatures
    >>> X = np.random.RandomState(0).standard_normal((10, 5))
    >>> crf = CirculantRandomFeatures(1024, gamma=0.1, random_state=0).fit(X)
    >>> Z = crf.transform(X)
    >>> Z.shape, crf.circulant_vectors_.shape  # ceil(1024 / 5) blocks of d = 5
    ((10, 1024), (205, 5))
    >>> bool(np.abs(Z @ Z.T - crf.kernel(X)).max() < 0.1)
    True
    """

    name = "circulant"
    unbiased = True
    paper = "Yu, Kumar, Rowley & Chang, Compact nonlinear maps and circulant extensions, arXiv 2015, section 8"
    test_params = {"n_components": 64, "gamma": 0.5}
    benchmark = {"n_components": [256, 1024, 4096], "params": {}}

    def _draw(self, n_features, n_frequencies, scale, rng):
        self.signs_, self.circulant_vectors_ = draw_circulant(n_features, n_frequencies, scale, rng)

    def _project(self, X, P, projection):
        # CosineFeatureMap's name for the transform hook
        self._project_block(X, P, projection)
