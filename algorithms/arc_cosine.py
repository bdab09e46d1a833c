"""Random features of the arc-cosine kernels (Cho & Saul, NIPS 2009)."""

import math

import numpy as np
import scipy.sparse as sp

from ._core.base import FeatureMap
from ._core.validation import check_choice, check_numeric_dtype
from ._kernels.arc_cosine import arc_cosine_features, arc_cosine_gram, check_order
from ._maps import hadamard as hadamard_map
from ._maps.cosine import DenseFormProjection
from ._numba.fwht import next_power_of_two

__all__ = ["ArcCosineFeatures"]

#: Smallest Hadamard block of the structured projection: inputs are zero-padded
#: to it, as for structured orthogonal features (with tiny blocks the products
#: ``H D1 H D2 H D3`` take only a handful of directions).
MIN_BLOCK = 32


def arc_cosine_kernel(X, Y=None, order=1):
    """Exact arc-cosine kernel of order 0, 1 or 2 (Cho & Saul 2009).

    ``k_n(x, y) = 2 E_w[Theta(w.x) Theta(w.y) (w.x)^n (w.y)^n]`` for
    ``w ~ N(0, I)``, evaluated through its closed form
    ``(1/pi) ||x||^n ||y||^n J_n(theta)`` with ``theta`` the angle between ``x``
    and ``y``:

    * ``J_0 = pi - theta`` (so ``k_0 = 1 - theta/pi``);
    * ``J_1 = sin(theta) + (pi - theta) cos(theta)``;
    * ``J_2 = 3 sin(theta) cos(theta) + (pi - theta) (1 + 2 cos^2(theta))``.

    ``Theta(z) = (1 + sign z)/2`` is the paper's step, so ``Theta(0) = 1/2``: a zero
    row gives ``k_0 = 1/2`` against every row (itself included) and
    ``k_n = 0`` for ``n >= 1`` (the closed form with ``cos(theta) = 0``).
    On the diagonal ``k_n(x, x) = ||x||^(2n)`` times 1, 1 and 3.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
    Y : array-like or sparse matrix of shape (m, d), default=None
        ``None`` means ``Y = X``. Sparse input is densified.
    order : {0, 1, 2}, default=1
        The ``n`` above: 0 is the step (sign) network, 1 the ReLU network,
        2 the ramp-squared one.

    Returns
    -------
    K : ndarray of shape (n, m)
        float32 when both inputs are float32, float64 otherwise (computed in
        float64: one BLAS product of the unit rows, then the closed form).

    Raises
    ------
    ValueError
        For an order other than 0, 1 or 2, or input that is not finite.
    FeatureOverflowError
        If a value overflows float64 (order 2 with norms beyond ~1e77).

    References
    ----------
    Cho, Y. and Saul, L. K. Kernel methods for deep learning. NIPS 2009, section 2.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import arc_cosine_kernel
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> np.round(arc_cosine_kernel(X, order=0), 4)  # 1 - theta/pi; 1/2 for the zero row
    array([[1. , 0.5, 0.5],
           [0.5, 1. , 0.5],
           [0.5, 0.5, 0.5]])
    >>> np.round(arc_cosine_kernel(X, order=1), 4)  # |x| |y| sin(pi/2) / pi off the diagonal
    array([[1.    , 0.6366, 0.    ],
           [0.6366, 4.    , 0.    ],
           [0.    , 0.    , 0.    ]])
    """
    order = check_order(order)
    X = _checked(X, "X")
    Y = None if Y is None else _checked(Y, "Y")
    if Y is not None and Y.shape[1] != X.shape[1]:
        raise ValueError(f"X and Y must have the same number of features, got {X.shape[1]} and {Y.shape[1]}")
    return arc_cosine_gram(X, Y, order)


def _checked(A, name):
    """``A`` as a finite, non-empty 2-D float32 or float64 array (sparse input densified)."""
    from sklearn.utils import check_array

    A = A.toarray() if sp.issparse(A) else A
    check_numeric_dtype(A, name)
    return check_array(A, dtype=(np.float64, np.float32), ensure_all_finite=True, input_name=name)


def _draw_row_norms(p, size, rng):
    """``size`` independent ``chi(p)`` norms: those of ``N(0, I_p)`` rows."""
    return np.sqrt(rng.chisquare(p, size=size))


class ArcCosineFeatures(DenseFormProjection, FeatureMap):
    """Random features of the arc-cosine kernels: a one-hidden-layer random network.

    ``z(x) = sqrt(2/D) [Theta(w_i . x) (w_i . x)^n]_{i=1..D}``: a layer of ``D``
    random units with the step (``n = 0``), ReLU (``n = 1``) or squared-ReLU
    (``n = 2``) activation. Since Cho & Saul define
    ``k_n(x, y) = 2 E_w[Theta(w.x) Theta(w.y) (w.x)^n (w.y)^n]`` for
    ``w ~ N(0, I_d)``, ``z(x) . z(y)`` is an unbiased estimate of ``k_n(x, y)``
    (the factor 2 of the integral is the ``sqrt(2/D)`` squared times ``D``), whose
    closed form :meth:`kernel` and :func:`kernelmaps.arc_cosine_kernel` evaluate.
    ``Theta(0) = 1/2``, as in the paper.

    * ``projection='dense'``: ``w_i ~ N(0, I_d)`` i.i.d.; the transform is one BLAS
      product per row block (sparse input stays sparse through it), then a
      vectorized Numba epilogue. Cost ``O(d D)`` per row.
    * ``projection='structured'``: stacked ``p x p`` blocks ``H D1 H D2 H D3``
      (normalized Walsh-Hadamard ``H``, random sign diagonals, input zero-padded to
      ``p``, a power of two of at least 32) as in structured orthogonal random
      features, whose rows are orthonormal; row ``i`` is then scaled by an
      independent ``chi(p)`` norm ``s_i`` (folded into the epilogue), so that
      each row has the norm law of a Gaussian row as in orthogonal random
      features. The norms matter for ``n >= 1``: the estimate scales with
      ``E ||w||^(2n)``, and with the fixed norm ``sqrt(p)`` the order-2 estimate
      would be biased by ``p / (p + 2)``. The directions are only approximately
      uniform, so the estimate is nearly, not exactly, unbiased. Cost
      ``O(D log p)`` per row and ``O(D)`` memory; inputs of at most 32 features
      apply the equivalent dense matrix by BLAS instead. Sparse input is
      densified one row block at a time.

    Parameters
    ----------
    n_components : int, default=100
        Output width D (the number of hidden units).
    order : {0, 1, 2}, default=1
        The kernel's order ``n``.
    projection : {'dense', 'structured'}, default='dense'
    random_state : int, RandomState or None

    Attributes
    ----------
    order_ : int
    random_weights_ : ndarray of shape (n_features, n_components) or None
        The ``w_i`` as columns (``projection='dense'``).
    padded_features_ : int or None
        ``p`` (``projection='structured'``).
    n_blocks_ : int or None
    blocks_ : tuple of ndarray of shape (n_blocks_, p) or None
        ``(D3, D2, D1)``, the normalization of the three transforms folded into ``D1``.
    row_norms_ : ndarray of shape (n_components,) or None
        The ``chi(p)`` norms of the structured rows.

    References
    ----------
    Cho, Y. and Saul, L. K. Kernel methods for deep learning. NIPS 2009.

    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S.
    Orthogonal random features. NIPS 2016 (the structured and orthogonal projections).

    Examples
    --------
    The order sets how the kernel grows with the norms: order 0 sees only the
    angle (``1 - t/pi``: 1/2 at a right angle), order ``n`` scales as
    ``|x|^n |y|^n``.

    >>> import numpy as np
    >>> from kernelmaps import ArcCosineFeatures, relative_frobenius_error
    >>> pair = np.array([[1.0, 0.0], [0.0, 2.0]])  # orthogonal, norms 1 and 2
    >>> for order in (0, 1, 2):
    ...     exact = ArcCosineFeatures(16, order=order, random_state=0).fit(pair).kernel(pair)
    ...     print(order, np.round(exact[0], 3))
    0 [1.  0.5]
    1 [1.    0.637]
    2 [3. 2.]

    The features of the ReLU network (order 1) approximate it, with i.i.d.
    Gaussian rows or with Hadamard blocks:

    >>> X = np.random.default_rng(0).standard_normal((200, 8))
    >>> relu = ArcCosineFeatures(n_components=4000, order=1, random_state=0).fit(X)
    >>> K = relu.kernel(X)
    >>> bool(relative_frobenius_error(K, Z=relu.transform(X)) < 0.05)
    True
    >>> structured = ArcCosineFeatures(4000, order=1, projection="structured", random_state=0).fit(X)
    >>> bool(relative_frobenius_error(K, Z=structured.transform(X)) < 0.05)
    True
    """

    name = "arc_cosine"
    paper = "Cho & Saul, Kernel methods for deep learning, NIPS 2009"
    kernel_family = "arc_cosine"
    unbiased = True
    test_params = {"n_components": 64, "order": 1}
    benchmark = {"n_components": [256, 1024, 4096], "params": {"order": 1}}

    def __init__(self, n_components=100, *, order=1, projection="dense", random_state=None):
        self.n_components = n_components
        self.order = order
        self.projection = projection
        self.random_state = random_state

    @property
    def accepts_sparse_blocks(self):
        # X W is a sparse-dense product; the Hadamard blocks read dense rows
        return self._dense_projection()

    def _dense_projection(self):
        """Whether the fitted map has i.i.d. Gaussian rows (``projection='dense'``)."""
        return getattr(self, "random_weights_", None) is not None

    def _planned_bytes(self, n_features):
        D = self.n_components_
        if self.projection != "structured":
            return 8 * (n_features * D + D), 8 * 2 * D
        p = max(next_power_of_two(n_features), MIN_BLOCK)
        padded = -(-D // p) * p
        # three diagonals and the norms; the dense form's d x D matrix where it applies
        dense = n_features * D if p <= hadamard_map.DENSE_MAX_BLOCK else 0
        return 8 * (5 * padded + dense), 8 * (2 * padded + D)

    def _fit(self, X, rng):
        self.order_ = check_order(self.order)
        check_choice(self.projection, "projection", ("dense", "structured"))
        d, D = X.shape[1], self.n_components_
        self.random_weights_ = self.padded_features_ = self.n_blocks_ = self.blocks_ = self.row_norms_ = None
        if self.projection == "dense":
            self.random_weights_ = rng.standard_normal((d, D))
            return
        p = max(next_power_of_two(d), MIN_BLOCK)
        self.padded_features_, self.n_blocks_ = p, -(-D // p)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(3, self.n_blocks_, p))
        # three unnormalized transforms: p^(-3/2) makes each block orthogonal
        self.blocks_ = (signs[0], signs[1], signs[2] * p**-1.5)
        self.row_norms_ = _draw_row_norms(p, self.n_blocks_ * p, rng)[:D]

    # the hooks of DenseFormProjection (structured projection only)
    def _n_frequencies(self):
        return self.n_components_

    def _dense_is_cheaper(self):
        return self.padded_features_ <= hadamard_map.DENSE_MAX_BLOCK

    def _structured_projection(self, dtype):
        return tuple(np.ascontiguousarray(b, dtype=dtype) for b in self.blocks_)

    def _project_structured(self, X, P, blocks):
        hadamard_map.sorf_project(X, *blocks, P)

    def _prepare_transform(self, dtype):
        scale = math.sqrt(2.0 / self.n_components_)
        if self._dense_projection():
            projection = ("dense", np.ascontiguousarray(self.random_weights_, dtype=dtype))
            weight = np.full(self.n_components_, scale, dtype=dtype)
        else:
            projection = self._prepare_projection(dtype)
            weight = (scale * self.row_norms_**self.order_).astype(dtype)
        return projection, weight, self.order_

    def _transform_block(self, X, out, context):
        projection, weight, order = context
        self._apply_projection(X, out, projection)
        return arc_cosine_features(out, weight, order)

    def _kernel_params(self):
        return {"kernel": "arc_cosine", "degree": self.order_}
