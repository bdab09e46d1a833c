"""Rows of dense or sparse input, so that one code path takes either.

A sparse ``X`` stays sparse where a map's first step is a product with it
(:func:`product_into`); elsewhere it is densified a block or a few rows at a
time (:func:`densify_rows`, :func:`dense_rows`), or once at fit time where a
bandwidth heuristic reads every entry (:func:`bandwidth_input`).
"""

import numpy as np
import scipy.sparse as sp

from .validation import check_fits_in_memory


def densify_rows(X, out):
    """``out <- X`` for a sparse row block ``X``, into a preallocated dense buffer.

    scipy zeroes ``out`` and scatters the entries: a block's densified copy
    reuses one scratch buffer instead of a fresh allocation per block.
    """
    return X.toarray(out=out)


def dense_rows(X, rows):
    """``X[rows]`` as a dense array: a few rows (landmarks, a candidate pool, a
    row to report), never all of a sparse ``X``."""
    selected = X[rows]
    return selected.toarray() if sp.issparse(selected) else selected


def product_into(X, W, out):
    """``out <- X @ W`` for a dense ``W`` and a dense or sparse row block ``X``.

    Dense ``X``: one BLAS product written in place. Sparse ``X``: scipy's
    sparse-dense product (``O(nnz(X) W.shape[1])``, as scikit-learn's
    ``RBFSampler`` does), which allocates its result, so one block-sized
    temporary: the working set stays bounded by the block.
    """
    if sp.issparse(X):
        out[...] = X @ W
    else:
        np.matmul(X, W, out=out)
    return out


def bandwidth_input(gamma, X):
    """``X`` as :func:`kernelmaps.resolve_gamma` can read it: a dense array.

    Only a heuristic name reads ``X`` (a number is used as it is), and the
    heuristics read a dense array (``'scale'`` the variance of every entry), so
    a sparse ``X`` is densified here, at fit time and only then, which gives the
    same bandwidth as the dense input bit for bit. A numeric ``gamma`` keeps
    sparse input sparse throughout.
    """
    if not (isinstance(gamma, str) and sp.issparse(X)):
        return X
    check_fits_in_memory(
        X.shape[0] * X.shape[1] * X.dtype.itemsize, f"gamma={gamma!r} with sparse X",
        "the dense copy of X its heuristic reads (pass a numeric gamma to keep X sparse)",
    )
    return X.toarray()
