"""The Nyström method: kernel features from the Gram matrix of a few landmarks."""


import threading
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._core.base import FeatureMap, KernelParameter
from ._kernels.blocks import KernelBlocks
from ._kernels.exact import exact_kernel
from ._kernels.frames import SHIFT_INVARIANT, shift_invariant_frame
from ._kernels.matern import NU_DOC, check_nu
from ._numba.fastmath import FASTMATH
from ._kernels.landmarks import EIG_FLOOR, set_up_landmarks
from ._kernels.params import FittedKernelMixin
from ._kernels.user import (as_dense, callable_block, callable_gram, check_kernel_params_or_user,
                            check_square_gram, kernel_label, user_kernel_kind)

__all__ = ["Nystroem"]


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _flush_subnormals(G, tiny):
    """In place, set the entries of ``G`` below ``tiny`` (the dtype's smallest
    normal number) in magnitude to zero; NaN stays NaN.

    A Gaussian kernel block of distant points is full of subnormal values
    (3 % of banana's float32 block at m = 1024), and each one fed to the next
    GEMM costs a microcode assist: the float32 transform ran 5x slower than on
    the other datasets, for scikit-learn's ``Nystroem`` too. Values below
    ``1.2e-38`` (float32) or ``2.2e-308`` (float64) add nothing a feature of
    that dtype can hold.
    """
    zero = tiny - tiny
    for i in range(G.shape[0]):
        row = G[i]
        for j in range(row.shape[0]):
            v = row[j]
            row[j] = zero if abs(v) < tiny else v


class _LandmarkKernelFeatures(NamedTuple):
    """Nyström's transform with a kernel of the vocabulary: ``K(X, landmarks) (W^+)^(1/2)``."""

    blocks: KernelBlocks
    normalization: np.ndarray

    def features(self, X, out):
        # the kernel block in per-thread scratch: a new n x m array per block was
        # served by mmap and paid a page fault per 4 KiB on first touch
        G = self.blocks.block(X)
        _flush_subnormals(G, np.finfo(G.dtype).tiny)
        np.matmul(G, self.normalization, out=out)


class _UserKernelFeatures(NamedTuple):
    """Nyström's transform with a user's kernel: a callable on the landmarks, or
    ``K(X, landmarks)`` itself (``kernel='precomputed'``, no landmark rows)."""

    kernel: object
    landmarks: object
    normalization: np.ndarray
    lock: object

    def features(self, X, out):
        if self.landmarks is None:
            G = X.toarray() if sp.issparse(X) else X
        else:
            # a Python callable need not be thread-safe, and holds the GIL anyway
            with self.lock:
                G = callable_block(self.kernel, as_dense(X), self.landmarks)
        np.matmul(np.asarray(G, dtype=out.dtype), self.normalization, out=out)


class Nystroem(FittedKernelMixin, FeatureMap):
    __doc__ = """Nyström features ``u(x) = (W^+)^(1/2) [k(x, v_1), ..., k(x, v_m)]``.

    With landmarks ``v_j`` and their Gram matrix ``W``, ``u(x) . u(y)`` is the
    Nyström approximation ``C W^+ C^T`` of the kernel; it is exact on the landmarks.
    ``W^+`` is taken from the eigen-decomposition ``W = U S U^T`` keeping the
    eigenvalues above ``1e-12 * max(S)``, so duplicate landmarks (a singular ``W``)
    only lower the rank; the normalization ``U S^(-1/2) U^T`` is stored at fit.
    A ``W`` that is not positive semi-definite beyond round-off (an eigenvalue
    below ``-m 2^-24 max |S|``) is no kernel's Gram matrix and raises ``ValueError``.

    Transform of a row block: one BLAS product ``X V^T``, a serial vectorized
    Numba epilogue turning it into ``K(X, V)`` (Laplacian and Cauchy: a Numba loop),
    and one BLAS product with the m x m normalization.

    Sparse input: the landmarks are densified (``m`` rows); with the dot-product
    kernels a row block stays sparse (a sparse-dense product ``X V^T``); with the
    shift-invariant ones a row block is densified as it is moved to the centred
    frame (see ``center_``), which needs dense rows anyway. The output is dense.

    Parameters
    ----------
    n_components : int, default=100
        Number of landmarks m, the output width. A landmark rule asked for more
        landmarks than the rows fitted uses every row once, with a warning, and
        ``n_components_`` says how many it used.
    kernel : {'gaussian', 'rbf', 'laplacian', 'cauchy', 'matern', 'polynomial', 'exponential', \
'precomputed'} or callable
        See :mod:`kernelmaps._kernels.exact`. Once fitted, ``self.kernel(X, Y)`` evaluates
        the exact kernel.

        * ``'precomputed'``: ``fit`` takes the landmarks' Gram matrix
          ``K(landmarks, landmarks)`` (square, m x m, symmetric to 1e-8 relative,
          64 units of round-off for float32, positive semi-definite):
          every row of it is a landmark, so the output width ``n_components_`` is
          ``m`` (``n_components`` is not used) and ``landmarks`` must stay
          ``'uniform'``. The landmarks are named by their
          rows: ``component_indices_ = arange(m)``, there is no ``components_``
          array of rows, and ``n_features_in_ = m``. ``transform`` takes
          ``K(X, landmarks)``, of shape (n_samples, m). ``gamma``, ``degree``,
          ``coef0`` and ``nu`` are not used.
        * a callable ``kernel(X_block, Y)`` returning the Gram block
          ``K(X_block, Y)`` of shape ``(len(X_block), len(Y))``: the landmarks
          are chosen from the rows of ``X`` as for a named kernel (``'leverage'``
          evaluates it on its pool of rows). It is called on row blocks, one call at a
          time (transform holds a lock around it: a Python callable need not be
          thread-safe and holds the GIL anyway), and each block is checked for
          shape and finiteness. ``gamma``, ``degree``, ``coef0`` and ``nu`` are
          not used.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth or scale (see :func:`kernelmaps.resolve_gamma`).
    degree : int, default=2
        Polynomial degree.
    coef0 : float, default=1.0
        Polynomial offset.
""" + NU_DOC + """    landmarks : {'uniform', 'kmeans', 'leverage'} or array of shape (m, n_features)
        * ``'uniform'``: ``m`` distinct training rows, ``rng.permutation(n)[:m]``
          with a ``RandomState``: the same seed picks the same landmarks as
          scikit-learn's ``Nystroem``.
        * ``'kmeans'``: the centres of scikit-learn's ``KMeans`` with ``m``
          clusters (one k-means++ initialization, seeded from ``random_state``),
          Zhang, Tsang & Kwok (2008).
        * ``'leverage'``: ridge leverage-score sampling. The scores
          ``diag(K (K + lam I)^-1)`` are computed exactly on a uniform pool of
          ``min(n, 3 m)`` rows, with ``lam`` the rank-m ridge of Musco & Musco
          (2017), and ``m`` landmarks are drawn from the pool without replacement
          with probabilities proportional to the scores (Alaoui & Mahoney 2015).
          Cost ``O((3m)^2 d + (3m)^3)``.
        * an array of landmark rows: these landmarks (``m`` must equal
          ``n_components``), as the Nyström kernel machines take given centres.
    random_state : int, RandomState or None

    Attributes
    ----------
    n_components_ : int
        The number of landmarks used: ``n_components``, or the number of rows
        fitted when that is smaller (see ``n_components``).
    components_ : ndarray of shape (n_components_, n_features), float64
        The landmarks.
    component_indices_ : ndarray of int or None
        Training rows used as landmarks (``None`` for k-means or given landmarks).
    normalization_ : ndarray of shape (n_components, n_components)
        ``(W^+)^(1/2)``, symmetric.
    center_ : ndarray of shape (n_features,) or None
        Shift-invariant kernels: the landmarks' mean. Transform evaluates the
        kernel on ``(x - center_) / frame_scale_``, which avoids the float32
        cancellation of ``|x|^2 + |v|^2 - 2 x.v`` for data far from the origin and
        the overflow of ``|x|^2`` at large magnitudes. ``None`` for dot-product
        kernels.
    frame_scale_ : float
        A power of two near the landmarks' spread around ``center_`` (1.0 for
        dot-product kernels).
    rank_ : int
        Eigenvalues of ``W`` kept.
    gamma_ : float
    kernel_ : str

    References
    ----------
    Williams, C. K. I. and Seeger, M. Using the Nyström method to speed up kernel
    machines. NIPS 2001.
    Zhang, K., Tsang, I. W. and Kwok, J. T. Improved Nyström low-rank approximation
    and error analysis. ICML 2008 (k-means landmarks).
    Alaoui, A. E. and Mahoney, M. W. Fast randomized kernel ridge regression with
    statistical guarantees. NIPS 2015 (ridge leverage scores).
    Musco, C. and Musco, C. Recursive sampling for the Nyström method. NIPS 2017.

    Examples
    --------
    Uniform landmarks are training rows; k-means landmarks are cluster centres,
    which cover the data better at the same width (a lower kernel error):

    >>> import numpy as np
    >>> from kernelmaps import Nystroem, relative_frobenius_error
    >>> X = np.random.default_rng(0).standard_normal((200, 4))
    >>> ny = Nystroem(n_components=50, gamma=0.1, random_state=0).fit(X)
    >>> bool(np.array_equal(ny.components_, X[ny.component_indices_]))
    True
    >>> centres = Nystroem(n_components=50, gamma=0.1, landmarks="kmeans", random_state=0).fit(X)
    >>> print(centres.component_indices_, centres.components_.shape)
    None (50, 4)
    >>> K = ny.kernel(X)
    >>> errors = [relative_frobenius_error(K, Z=fitted.transform(X)) for fitted in (centres, ny)]
    >>> bool(errors[0] < errors[1] < 0.05)
    True

    A landmark rule cannot draw more distinct rows than it is given: fitted on
    10 rows, 50 landmarks become all 10, with a warning.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     small = Nystroem(n_components=50, gamma=0.1, random_state=0).fit(X[:10])
    >>> small.n_components_, small.transform(X).shape, len(caught)
    (10, (200, 10), 1)
    >>> ny.set_output(transform="pandas").transform(X[:2]).columns[:2].tolist()
    ['nystroem0', 'nystroem1']
    """

    name = "nystroem"
    paper = "Williams & Seeger, Using the Nystrom method to speed up kernel machines, NIPS 2001"
    kernel_family = "any"
    test_params = {"n_components": 20, "gamma": 0.5}
    benchmark = {"n_components": [256, 1024], "params": {"kernel": "gaussian"},
                 # the transform is O(m^2) per row: m = 1024 is the Nystroem workload
                 "speed": {"n_components": 1024}}
    accepts_sparse_blocks = True  # X V^T is a sparse-dense product; the frame densifies per block

    kernel = KernelParameter()

    def __init__(self, n_components=100, *, kernel="gaussian", gamma="scale", degree=2, coef0=1.0,
                 nu=1.5, landmarks="uniform", random_state=None):
        self.n_components = n_components
        self._keep_kernel_parameters(kernel, gamma, degree, coef0, nu)
        self.landmarks = landmarks
        self.random_state = random_state

    @classmethod
    def peers(cls):
        from sklearn.kernel_approximation import Nystroem as SkNystroem

        names = {"gaussian": "rbf", "rbf": "rbf", "laplacian": "laplacian", "polynomial": "poly"}

        def sklearn_nystroem(n_components, random_state, gamma, kernel="gaussian", degree=2,
                             coef0=1.0, **_):
            if kernel not in names:
                raise ValueError(f"scikit-learn's Nystroem has no {kernel!r} kernel")
            return SkNystroem(kernel=names[kernel], gamma=gamma, degree=degree, coef0=coef0,
                              n_components=n_components, random_state=random_state)

        return {"sklearn.Nystroem": sklearn_nystroem}

    # ------------------------------------------------------------------ fit
    def _fit(self, X, rng):
        if user_kernel_kind(self.kernel) is not None:
            return self._fit_user_kernel(X, rng)
        kernel, degree, coef0 = check_kernel_params_or_user(self.kernel, self.degree, self.coef0)

        def set_kernel(_):
            self.kernel_, self.degree_, self.coef0_ = kernel, degree, coef0
            self.nu_ = check_nu(self.nu)

        # more landmarks than rows would repeat rows: m columns of rank at most n
        set_up_landmarks(X, self.n_components_, self.landmarks, rng, gamma=self.gamma, kernel=kernel,
                         kernel_params=self._kernel_params_for, before_draw=set_kernel).set_on(self)
        if kernel in SHIFT_INVARIANT:
            # transform evaluates k on (x - center_) / frame_scale_ (see shift_invariant_frame)
            self.center_, self.frame_scale_ = shift_invariant_frame(self.components_)
        else:
            self.center_, self.frame_scale_ = None, 1.0
        self._set_normalization(exact_kernel(self.components_, None, **self._kernel_params()))

    def _fit_user_kernel(self, X, rng):
        """``fit`` with ``kernel='precomputed'`` or a callable (see ``kernel``)."""
        kind = user_kernel_kind(self.kernel)
        self.kernel_, self.degree_, self.coef0_, self.nu_, self.gamma_ = kind, None, None, None, None
        self.center_, self.frame_scale_ = None, 1.0
        if kind == "callable":
            set_up_landmarks(X, self.n_components_, self.landmarks, rng, gamma=None, kernel=None,
                             kernel_params=lambda _: {"kernel": self.kernel}).set_on(self)
            return self._set_normalization(callable_gram(self.kernel, self.components_))
        if not (isinstance(self.landmarks, str) and self.landmarks == "uniform"):
            raise ValueError("kernel='precomputed' takes every row of the fit matrix K(landmarks, landmarks) as a "
                             f"landmark: landmarks must be 'uniform', got {self.landmarks!r}")
        W = check_square_gram(X, "K(landmarks, landmarks)")
        # every row is a landmark: the width is the fit matrix's, whatever n_components says
        self.n_components_ = W.shape[0]
        self.component_indices_ = np.arange(W.shape[0])
        self._set_normalization(W)

    def _set_normalization(self, W):
        """``normalization_ = (W^+)^(1/2)`` and ``rank_`` from the landmarks' Gram matrix ``W``.

        ``W`` must be positive semi-definite, as every kernel's Gram matrix is.
        Negative eigenvalues down to ``-m 2^-24 max |eigenvalue|`` are taken
        for round-off and dropped with the other small ones: entries computed in
        float32 (a callable's or a precomputed matrix) are off by up to
        ``2^-24 max |W|``, which moves an eigenvalue by up to ``m`` times that,
        and ``max |W| <= max |eigenvalue|``. Anything more negative raises
        ``ValueError`` naming the most negative eigenvalue.
        """
        s, U = np.linalg.eigh((W + W.T) / 2)
        largest = float(np.max(np.abs(s))) if s.size else 0.0
        allowed = W.shape[0] * 2.0 ** -24 * largest
        if s.size and s[0] < -allowed:
            raise ValueError(
                f"{self._gram_label()} is not positive semi-definite, as a kernel's Gram matrix must be: its most "
                f"negative eigenvalue is {s[0]:.4g} (largest |eigenvalue| {largest:.4g}), below the "
                f"{-allowed:.3g} that round-off can explain (m 2^-24 max |eigenvalue|, m = {W.shape[0]})")
        keep = s > max(s[-1], 0.0) * EIG_FLOOR
        if not keep.any():
            raise ValueError(f"{self._gram_label()} is zero: the kernel vanishes on the landmarks")
        Uk = U[:, keep]
        self.normalization_ = (Uk / np.sqrt(s[keep])) @ Uk.T
        self.rank_ = int(keep.sum())

    def _gram_label(self):
        """How an error names the landmarks' Gram matrix."""
        if self.kernel_ == "precomputed":
            return "kernel='precomputed': the fit matrix K(landmarks, landmarks)"
        if self.kernel_ == "callable":
            return f"the Gram matrix of {kernel_label(self.kernel)} on the landmarks"
        return f"the landmark Gram matrix of the {self.kernel_} kernel"

    # ------------------------------------------------------------ transform
    def _prepare_transform(self, dtype):
        normalization = np.ascontiguousarray(self.normalization_, dtype=dtype)
        if self.kernel_ in ("precomputed", "callable"):
            # the user's blocks are float64: cast to the input's dtype after the kernel
            return _UserKernelFeatures(self.kernel, getattr(self, "components_", None), normalization,
                                       threading.Lock())
        blocks = KernelBlocks(self.components_, self.kernel_, self.gamma_, self.degree_, self.coef0_, self.nu_,
                              dtype=dtype, frame=(self.center_, self.frame_scale_))
        return _LandmarkKernelFeatures(blocks, normalization)

    def _transform_block(self, X, out, context):
        context.features(X, out)

    def _planned_bytes(self, n_features):
        m = self.n_components_
        # landmarks, their Gram matrix, its eigenvectors and the normalization
        return 8 * (m * n_features + 4 * m * m), 8 * (3 * m + n_features)

    def _block_elements_per_row(self):
        # the kernel block and the product with the normalization; plus, with a
        # centred frame, the framed (for sparse input: densified) copy of the rows
        framed = 0 if self.center_ is None else self.n_features_in_
        return 2 * self.n_components_ + framed

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # as scikit-learn's SVC: with 'precomputed' the fit matrix is K(X, X)
        tags.input_tags.pairwise = user_kernel_kind(self.kernel) == "precomputed"
        return tags

    def _kernel_params(self):
        if self.kernel_ == "precomputed":
            raise ValueError("kernel='precomputed' has no kernel to evaluate: the Gram matrices are the input")
        if self.kernel_ == "callable":
            return {"kernel": self.kernel}
        return super()._kernel_params()
