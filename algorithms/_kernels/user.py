"""User-supplied kernels: ``kernel='precomputed'`` (Gram matrices) and callables.

Shared by :class:`kernelmaps.Nystroem` and the exact machines
(:class:`kernelmaps.KernelSVC`, :class:`kernelmaps.KernelRidge`,
:class:`kernelmaps.KernelRidgeClassifier`).

A callable ``kernel(X_block, Y)`` returns the Gram block ``K(X_block, Y)``; it is
called on row blocks of ``X`` (the rows of :func:`kernelmaps._core.parallel.block_rows`),
one block at a time on the calling thread. A Python callable holds the GIL for
whatever it does outside NumPy and need not be thread-safe, so its blocks are
never run on the thread pool; each block's result is checked for shape and
finiteness.
"""

import numpy as np
import scipy.sparse as sp

from .._core.parallel import block_rows
from .exact import exact_kernel
from .frames import SHIFT_INVARIANT
from .names import KERNELS, canonical_kernel, check_kernel_params

#: Largest ``max |K - K^T|`` a precomputed float64 Gram matrix may have, relative to ``max |K|``.
SYMMETRY_RTOL = 1e-8
#: A narrower float Gram matrix may have 64 units of its own round-off: a float32 one
#: computed as ``K(X, X)`` is symmetric only to an ulp or so of each entry.
SYMMETRY_ULPS = 64
#: Rows of the Gram blocks whose diagonals :func:`gram_diagonal` reads: each
#: costs this many kernel values per row, against the one it keeps.
DIAGONAL_BLOCK_ROWS = 64


def user_kernel_kind(kernel):
    """``'precomputed'``, ``'callable'`` or ``None`` (a name of the vocabulary)."""
    if isinstance(kernel, str):  # before callable(): a KernelName is a callable str
        return "precomputed" if kernel == "precomputed" else None
    return "callable" if callable(kernel) else None


def check_kernel_params_or_user(kernel, degree, coef0):
    """:func:`kernelmaps._kernels.names.check_kernel_params` for an estimator that also takes user kernels.

    For a name outside the vocabulary, the ``ValueError`` lists every choice of
    such an estimator: the names, ``'precomputed'`` and a callable.
    """
    try:
        canonical_kernel(kernel, KERNELS)
    except ValueError:
        raise ValueError(f"kernel must be one of {list(KERNELS) + ['precomputed']} or a callable kernel(X, Y) "
                         f"returning the Gram block, got {kernel!r}") from None
    return check_kernel_params(kernel, degree, coef0)


def kernel_label(kernel):
    """How an error names a user's kernel."""
    return f"kernel={getattr(kernel, '__name__', None) or kernel!r}"


def as_dense(K):
    """A Gram matrix as a float64 ndarray (a sparse one densified)."""
    return np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)


def symmetry_rtol(dtype):
    """The asymmetry, relative to ``max |K|``, a precomputed Gram matrix of ``dtype`` may have."""
    if not np.issubdtype(dtype, np.floating):
        return SYMMETRY_RTOL
    return max(SYMMETRY_RTOL, SYMMETRY_ULPS * float(np.finfo(dtype).eps))


def check_square_gram(K, what="X"):
    """The fit matrix of ``kernel='precomputed'``: square, finite and symmetric (to :func:`symmetry_rtol`)."""
    rtol = symmetry_rtol(K.dtype if sp.issparse(K) else np.asarray(K).dtype)
    K = as_dense(K)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"kernel='precomputed' fits on a square Gram matrix; {what} has shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError(f"kernel='precomputed': the Gram matrix {what} contains NaN or infinity")
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    asymmetry = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    if asymmetry > rtol * scale:
        raise ValueError(f"kernel='precomputed': the Gram matrix {what} is not symmetric: max |K - K^T| = "
                         f"{asymmetry:.3g} exceeds {rtol:.3g} * max |K| = {rtol * scale:.3g}")
    return K


def callable_gram(kernel, X, Y=None):
    """``K[i, j] = kernel(X[i], Y[j])`` from ``kernel(X_block, Y)`` on row blocks (float64).

    Raises ``ValueError`` naming the callable when a block has the wrong shape or
    a non-finite entry.
    """
    X = as_dense(X)
    Y = X if Y is None else as_dense(Y)
    n, m = X.shape[0], Y.shape[0]
    out = np.empty((n, m))
    step = block_rows(8 * max(m, 1))
    for start in range(0, n, step):
        stop = min(n, start + step)
        out[start:stop] = callable_block(kernel, X[start:stop], Y)
    return out


def callable_block(kernel, X_block, Y):
    """One checked block ``kernel(X_block, Y)`` as float64 of shape ``(len(X_block), len(Y))``."""
    try:
        block = as_dense(kernel(X_block, Y))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{kernel_label(kernel)} failed on a block of {X_block.shape[0]} rows: {error}") from error
    expected = (X_block.shape[0], Y.shape[0])
    if block.shape != expected:
        raise ValueError(f"{kernel_label(kernel)} returned shape {block.shape} for a block of {expected[0]} rows "
                         f"against {expected[1]} rows; a kernel callable(X, Y) must return K(X, Y) of "
                         f"shape {expected}")
    if not np.isfinite(block).all():
        raise ValueError(f"{kernel_label(kernel)} returned NaN or infinity")
    return block


def gram(X, Y, kernel_params):
    """The Gram matrix for :func:`kernelmaps.exact_kernel`'s keywords or a callable ``kernel``."""
    kernel = kernel_params["kernel"]
    if user_kernel_kind(kernel) == "callable":
        return callable_gram(kernel, X, Y)
    return exact_kernel(X, Y, **kernel_params)


def gram_diagonal(X, kernel_params):
    """``k(x_i, x_i)`` of each row, for :func:`kernelmaps.exact_kernel`'s keywords or a callable ``kernel``.

    1 for the shift-invariant kernels; otherwise the diagonal of the Gram block of
    each small block of rows with itself, so that an overflow or a callable's bad
    output is reported as by :func:`gram`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._kernels.user import gram_diagonal
    >>> X = np.array([[1.0, 2.0], [0.0, 0.0]])
    >>> gram_diagonal(X, {"kernel": "polynomial", "gamma": 1.0, "degree": 2, "coef0": 1.0})
    array([36.,  1.])
    >>> gram_diagonal(X, {"kernel": lambda A, B: A @ B.T})
    array([5., 0.])
    """
    kernel = kernel_params["kernel"]
    X = as_dense(X)
    if user_kernel_kind(kernel) is None and canonical_kernel(kernel, KERNELS) in SHIFT_INVARIANT:
        return np.ones(X.shape[0])
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], DIAGONAL_BLOCK_ROWS):
        rows = X[start:start + DIAGONAL_BLOCK_ROWS]
        out[start:start + rows.shape[0]] = np.diagonal(gram(rows, None, kernel_params))
    return out


def check_precomputed_columns(K, n_columns, what):
    """``K(X, fit rows)`` at predict or transform: ``n_columns`` columns, finite."""
    K = as_dense(K)
    if K.ndim != 2 or K.shape[1] != n_columns:
        raise ValueError(f"kernel='precomputed': {what} takes K(X, fit rows) with {n_columns} columns, got "
                         f"shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError(f"kernel='precomputed': the Gram matrix given to {what} contains NaN or infinity")
    return K


def drop_zero_weight_gram(K, y, sample_weight):
    """``drop_zero_weights`` for a precomputed Gram matrix: rows and columns; also the kept indices (or None)."""
    if sample_weight is None or np.all(sample_weight > 0):
        return K, y, sample_weight, None
    keep = np.flatnonzero(sample_weight > 0)
    return K[np.ix_(keep, keep)], y[keep], sample_weight[keep], keep
