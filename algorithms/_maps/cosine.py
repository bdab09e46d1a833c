"""Random cosine feature maps ``z(x) = sqrt(2/D) cos(W x + b)``: epilogues and skeleton.

Random Fourier features and every structured variant (orthogonal, circulant,
Fastfood, SORF) differ only in how they draw ``W`` and how they compute ``X W``;
:class:`CosineFeatureMap` holds the rest once: the ``output`` and width checks,
the bandwidth, the offsets, the ``cos`` / ``[cos, sin]`` epilogues, the exact
kernel and the scikit-learn peer.
"""

import math

import numpy as np
from numba import njit

from .._core.base import FeatureMap
from .._core.rows import bandwidth_input, product_into
from .._core.validation import check_choice
from .._kernels.bandwidth import resolve_gamma
from .._numba.fastmath import FASTMATH, row_needs_libm, trig_limit, vcos, vscaled_cos, vsincos


#: Columns of one pass of the epilogue. The arguments of a chunk are kept in a
#: small buffer that stays in L1, so the rare chunk holding an argument beyond
#: the polynomial's range is redone with libm without a second pass over the row.
EPILOGUE_CHUNK = 256


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def cos_features(P, offset, scale):
    """In place, ``P[i, j] <- scale * cos(P[i, j] + offset[j])``.

    The RFF epilogue after the BLAS product ``P = X W``, run serially on one row
    block (blocks run in parallel, see :func:`kernelmaps._core.parallel.run_row_blocks`).
    One vectorized pass per row: add the offset, evaluate the polynomial cosine
    with the scale folded in, and note whether any argument exceeds its range;
    such a chunk of the row is then recomputed with libm from its saved arguments.
    A finite argument gives a finite feature, so the arguments' finiteness,
    read on that rare path only, is the output's: the caller needs no second
    pass to check it.

    Parameters
    ----------
    P : ndarray of shape (n, D), float32 or float64, C-contiguous
    offset : ndarray of shape (D,), same dtype
    scale : scalar of the same dtype

    Returns
    -------
    bool
        Whether every output is finite.

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007, Algorithm 1.
    """
    n, m = P.shape
    limit = trig_limit(scale)
    zero = scale - scale
    finite = True
    saved = np.empty(EPILOGUE_CHUNK, dtype=P.dtype)
    for i in range(n):
        for start in range(0, m, EPILOGUE_CHUNK):
            # slices, not range(start, stop) indices: Numba cannot prove such
            # indices non-negative, and the wraparound selects stop vectorization
            chunk = P[i, start:start + EPILOGUE_CHUNK]
            chunk_offset = offset[start:start + EPILOGUE_CHUNK]
            # a sum of squares bounds max |a|^2 and vectorizes (a max or a count
            # of the out-of-range arguments kept the float32 loop scalar)
            sum_squares = zero
            for j in range(chunk.shape[0]):
                a = chunk[j] + chunk_offset[j]
                saved[j] = a
                sum_squares += a * a
                chunk[j] = vscaled_cos(a, scale)
            if not (sum_squares <= limit * limit):
                for j in range(chunk.shape[0]):
                    a = saved[j]
                    chunk[j] = scale * (math.cos(a) if abs(a) > limit else vcos(a))
                    finite = finite and a - a == zero
    return finite


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _cossin_features(P, out, scale):
    """``out[i] <- scale * [cos(P[i]), sin(P[i])]``, sharing one range reduction.

    Parameters
    ----------
    P : ndarray of shape (n, m), float32 or float64
    out : ndarray of shape (n, 2 m), same dtype
    scale : scalar of the same dtype

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (the ``[cos, sin]`` form of the complex feature).
    """
    n, m = P.shape
    limit = trig_limit(scale)
    for i in range(n):
        row = P[i]
        # two slices, not dst[j] and dst[m + j]: LLVM then sees two streams it
        # can vectorize (with one row and offsets it kept the loop scalar)
        cos_part = out[i, :m]
        sin_part = out[i, m:]
        if row_needs_libm(row, limit):
            for j in range(m):
                a = row[j]
                if abs(a) > limit:
                    cos_part[j] = scale * math.cos(a)
                    sin_part[j] = scale * math.sin(a)
                else:
                    s, c = vsincos(a)
                    cos_part[j] = scale * c
                    sin_part[j] = scale * s
        else:
            for j in range(m):
                s, c = vsincos(row[j])
                cos_part[j] = scale * c
                sin_part[j] = scale * s


class DenseFormProjection:
    """Structured projections that apply the dense matrix they equal when that is cheaper.

    A host defines ``_structured_projection(dtype)`` (the per-call form of its
    fitted structure), ``_project_structured(X, P, structured)`` (``P <- X W``
    through the structure) and ``_dense_is_cheaper()``, and provides
    ``n_features_in_`` and ``_n_frequencies()``. When the input is narrow, FFTs
    or Hadamard transforms of a few points cost more than ``d`` multiply-adds
    per output: the transform then builds ``W`` (``d x D``, the structure
    applied to the identity, in float64, once per call) and each row block is
    one BLAS product. The features equal the structured product's up to
    rounding.
    """

    def _prepare_projection(self, dtype):
        if self._dense_is_cheaper():
            W = np.empty((self.n_features_in_, self._n_frequencies()))
            self._project_structured(np.eye(self.n_features_in_), W,
                                     self._structured_projection(np.dtype(np.float64)))
            return "dense", W.astype(dtype, copy=False)
        return "structured", self._structured_projection(dtype)

    def _apply_projection(self, X, P, projection):
        form, value = projection
        if form == "dense":
            product_into(X, value, P)
        else:
            self._project_structured(X, P, value)


class CosineFeatureMap(FeatureMap):
    """Skeleton of the random maps ``cos(W x + b)`` (or ``[cos Wx, sin Wx]``).

    Subclasses implement three hooks:

    * ``_draw(n_features, n_frequencies, scale, rng)``: draw the projection and
      store it in fitted attributes; for the Gaussian kernel its rows imitate
      ``N(0, scale^2 I)`` with ``scale = sqrt(2 gamma)``. It returns the offsets
      ``b`` when it draws them jointly with the frequencies (one Sobol' point
      set), else ``None``, and the skeleton draws them i.i.d. ``U[0, 2 pi)``;
    * ``_prepare_projection(dtype)``: the projection cast for one ``transform``;
    * ``_project(X, P, projection)``: write ``X W^T`` (``n_frequencies`` columns)
      into the preallocated block ``P`` (``X`` is a CSR block if the subclass sets
      ``accepts_sparse_blocks``).

    ``_kernel_name()`` gives the kernel (Gaussian unless overridden). Fitting
    resolves ``gamma`` first, then draws the projection, then the offsets, so that
    random Fourier features consume the random state as scikit-learn's
    ``RBFSampler`` does.

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007.
    """

    kernel_family = "shift_invariant"

    def __init__(self, n_components=100, *, gamma="scale", output="cos", random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.output = output
        self.random_state = random_state

    @classmethod
    def peers(cls):
        from sklearn.kernel_approximation import RBFSampler

        def rbf_sampler(n_components, random_state, gamma, kernel="gaussian", **_):
            if kernel not in ("gaussian", "rbf"):
                raise ValueError(f"RBFSampler approximates only the Gaussian kernel, not {kernel!r}")
            return RBFSampler(gamma=gamma, n_components=n_components, random_state=random_state)

        return {"sklearn.RBFSampler": rbf_sampler}

    def _kernel_name(self):
        return "gaussian"

    def _n_frequencies(self):
        return self.n_components_ if self.output == "cos" else self.n_components_ // 2

    def _fit(self, X, rng):
        kernel = self._kernel_name()
        check_choice(self.output, "output", ("cos", "cossin"))
        if self.output == "cossin" and self.n_components_ % 2:
            raise ValueError(
                f"output='cossin' needs an even n_components (cos and sin halves), got {self.n_components_}"
            )
        self.kernel_ = kernel
        self.gamma_ = resolve_gamma(self.gamma, bandwidth_input(self.gamma, X), kernel, rng)
        n_freq = self._n_frequencies()
        joint_offsets = self._draw(X.shape[1], n_freq, math.sqrt(2.0 * self.gamma_), rng)
        if joint_offsets is not None:
            self.random_offset_ = joint_offsets
        else:
            self.random_offset_ = rng.uniform(0.0, 2.0 * np.pi, size=n_freq) if self.output == "cos" else None

    def _prepare_transform(self, dtype):
        offset = None if self.random_offset_ is None else self.random_offset_.astype(dtype)
        return self._prepare_projection(dtype), offset, dtype.type(np.sqrt(2.0 / self.n_components_))

    def _transform_block(self, X, out, context):
        projection, offset, scale = context
        if offset is not None:
            self._project(X, out, projection)
            return cos_features(out, offset, scale)
        else:
            P = np.empty((X.shape[0], self.n_components_ // 2), dtype=X.dtype)
            self._project(X, P, projection)
            _cossin_features(P, out, scale)

    def _kernel_params(self):
        params = {"kernel": self.kernel_, "gamma": self.gamma_}
        if self.kernel_ == "matern":
            # the maps of the Matérn kernel (RFF, ORF) set its smoothness nu_ in their fit
            params["nu"] = self.nu_
        return params
