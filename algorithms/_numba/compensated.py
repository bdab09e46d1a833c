"""Knuth's TwoSum, in place over whole arrays: the step of the order-independent sums of the passes.

NumPy spells one step of a compensated sum as seven array operations, each a
temporary as large as the sum: on an ``m x 2k`` sum of a many-class pass
(``2000 x 52``, 832 KB) they cost a quarter of the block's fused kernel. Here it
is one loop over the entries, with the same floating-point operations in the
same order, so the sums are bit for bit NumPy's. Compiled without ``fastmath``:
reassociation would cancel the error term to zero. :class:`CompensatedSum` carries
such a sum over the blocks of a pass.
"""

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def two_sum_flat(value, error, term):
    """``value += term`` with its rounding error added to ``error``, entry by entry over 1-D arrays
    (``term`` float32 or float64); callable from compiled code."""
    for i in range(value.shape[0]):
        before = value[i]
        addend = np.float64(term[i])
        total = before + addend
        virtual = total - before
        error[i] += (before - (total - virtual)) + (addend - virtual)
        value[i] = total


@njit(cache=True, nogil=True)
def _add(error, term):
    for i in range(error.shape[0]):
        error[i] += np.float64(term[i])


def two_sum_into(value, error, term, term_error=None):
    """``value + term`` into ``value`` and its rounding error into ``error`` (then ``term_error`` too).

    Parameters
    ----------
    value, error : ndarray of float64, C-contiguous, of one shape
        The compensated sum, updated in place.
    term, term_error : array-like of float32 or float64, of ``value``'s shape

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.compensated import two_sum_into
    >>> value, error = np.array([1.0]), np.zeros(1)
    >>> two_sum_into(value, error, np.array([1e-17]))
    >>> value, error
    (array([1.]), array([1.e-17]))
    """
    if value.dtype != np.float64 or error.dtype != np.float64 or not (value.flags.c_contiguous
                                                                     and error.flags.c_contiguous):
        raise TypeError("a compensated sum is held in C-contiguous float64 arrays")
    flat_value, flat_error = value.reshape(-1), error.reshape(-1)
    two_sum_flat(flat_value, flat_error, _flat_like(term, value))
    if term_error is not None:
        _add(flat_error, _flat_like(term_error, value))


def _flat_like(term, value):
    term = np.asarray(term)
    if term.shape != value.shape:
        term = np.broadcast_to(term, value.shape)
    if term.dtype not in (np.float32, np.float64):
        term = term.astype(np.float64)
    return np.ascontiguousarray(term).reshape(-1)


class CompensatedSum:
    """A sum of arrays carried as ``value + error`` (Knuth's TwoSum): order-independent.

    Conjugate gradient amplifies the round-off of its products along the
    ill-conditioned directions of the coefficients: summing the same block
    products in another order (another thread count, other Dask chunks) moved
    the coefficients by 1e-7 relative after a hundred iterations. Carried with
    its exact rounding error, the sum is correctly rounded whatever the order,
    except in the rare case of a tie, so every decomposition of the rows into
    blocks, groups, threads or chunks gives the same result. It costs a few
    additions per entry of each block's ``m x k`` product, against the block's
    ``m (d + 2k)`` multiply-adds per row.
    """

    def __init__(self, shape):
        self.value = np.zeros(shape)
        self.error = np.zeros(shape)

    def add(self, term, error=None):
        """Add ``term`` (and an error term carried with it), in place (one compiled loop)."""
        two_sum_into(self.value, self.error, term, error)
        return self

    def merge(self, other):
        """Add another compensated sum."""
        return self.add(other.value, other.error)

    def result(self):
        return self.value + self.error
