"""The Numba loops of min-hash: b-bit minwise hashing, 0-bit consistent weighted sampling, min-max Gram.

Every loop reads CSR arrays (``indptr``, ``indices``, ``data``) and skips stored
zeros, so a set is the columns of a row's non-zero entries. Each is serial and
``nogil``: :class:`kernelmaps.MinHash` runs them on row blocks on the worker
threads.

**Permutations.** Hash ``j`` stands for a random permutation of the features
through ``h_j(i) = fmix64(key_j + i G)``: a Weyl step (``G`` odd, SplitMix64's
golden-ratio increment) and MurmurHash3's 64-bit finalizer, both bijections of
64-bit words, so ``h_j`` never maps two features to one value, and the state is
one random 64-bit key per hash. The 2-universal ``(a i + c) mod p`` of Li et al.
(NIPS 2011) was measured biased here on sets of consecutive columns (every
dense row is one): for two sets of 40 columns overlapping in 20 it gave
``R = 0.28`` against the true ``1/3``, with 20000 hashes; the mixed hash gives
``1/3`` within its standard error. Two rows' minima agree only through shared
columns, and the hashed space is ``D = 2^64``.

**Weighted sampling.** Ioffe's improved consistent weighted sampling (ICDM
2010) draws, per hash ``j`` and feature ``i``, ``r, c ~ Gamma(2, 1)`` and
``beta ~ U(0, 1)``. They are not stored: they are computed where they are needed
from ``h_j(i)``, five more finalizer steps of a Weyl sequence (a counter-based
generator, as in SplitMix64), so the map's state is ``O(k)`` whatever the
number of input features, and a feature's draws do not depend on the rows or
blocks it appears in. ``Gamma(2, 1)`` is ``-log(u1 u2)``, the sum of two
standard exponentials.
"""

import math

import numpy as np
from numba import njit

from .fastmath import POLY_FLAGS
from .fastmath_log import log64
from .murmur import fmix64

# The float64 log of fastmath_log, inlined into the sampling loop: called, it keeps the
# loop over the hashes from vectorizing (three logs per hash and feature dominate it).
_log = njit(cache=True, fastmath=POLY_FLAGS, inline="always", error_model="numpy")(log64.py_func)

#: The size of the hashed space: hash values are 64-bit words.
HASH_SPACE = 1 << 64
_S11 = np.uint64(11)
#: SplitMix64's Weyl increment: feature ``i``'s counter is ``key + i * _GOLDEN``.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: The increment between the five streams (u1, u2 of r; v1, v2 of c; beta) of one counter.
_STREAM = np.uint64(0xD1B54A32D192ED03)
_TWO_M53 = 2.0 ** -53
#: What a row with no non-zero reports (its features are dropped whatever the value).
_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True, inline="always")
def _unit(h):
    # the top 53 bits as a uniform in the open interval (0, 1): never 0, never 1
    return (np.float64(np.int64(h >> _S11)) + 0.5) * _TWO_M53


@njit(cache=True, nogil=True, inline="always")
def _floor(v):
    # floor through a truncating conversion, which vectorizes (np.floor is a libm call here);
    # |v| <= 710 / r with r >= -log((1 - 2^-54)^2) ~ 1.1e-16, so |v| < 6.5e18 fits in int64
    t = np.float64(np.int64(v))
    return t - 1.0 if t > v else t


@njit(cache=True, nogil=True)
def binary_min_hashes(indptr, indices, data, keys, out):
    """The minimum of each hash over each row's set (the columns of its non-zeros).

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the rows (int32 or int64; float32 or float64)
    keys : ndarray of shape (k,), uint64
        ``key_j`` of ``h_j(i) = fmix64(key_j + i G)``.
    out : ndarray of shape (n_rows, k), uint64, written
        ``min_{i in S} h_j(i)``; ``2^64 - 1`` for a row with no non-zero.
    """
    n, k = out.shape
    for row in range(n):
        mins = out[row]
        for j in range(k):
            mins[j] = _EMPTY
        for pos in range(indptr[row], indptr[row + 1]):
            if data[pos] == 0:
                continue
            weyl = np.uint64(indices[pos]) * _GOLDEN
            for j in range(k):
                h = fmix64(keys[j] + weyl)
                mins[j] = h if h < mins[j] else mins[j]


# error_model="numpy": Python's check for a zero divisor (r > 0 always) would be a branch
# that keeps the loop over the hashes from vectorizing
@njit(cache=True, nogil=True, error_model="numpy")
def weighted_samples(indptr, indices, data, keys, best, out):
    """0-bit consistent weighted sampling: ``h_j(i*)`` of each row and hash.

    For each stored weight ``S_i > 0`` and hash ``j`` (Ioffe 2010, Algorithm 1):
    ``t = floor(log S_i / r + beta)``, ``log y = r (t - beta)``,
    ``log a = log c - log y - r``; ``i*`` minimizes ``log a``, and ``t*`` is
    dropped (Li 2015). The sample is reported as ``h_j(i*)``, whose low bits are
    the ``b`` bits kept: two different samples share them with chance ``2^-b``
    whatever the columns' structure.

    Parameters
    ----------
    indptr, indices, data : CSR arrays of the rows; ``data >= 0``
    keys : ndarray of shape (k,), uint64
        ``key_j``: the draws of feature ``i`` are seeded by ``h_j(i)``.
    best : ndarray of shape (k,), float64, scratch
    out : ndarray of shape (n_rows, k), uint64, written
        ``h_j(i*)``; ``2^64 - 1`` for a row with no non-zero.
    """
    n, k = out.shape
    for row in range(n):
        chosen = out[row]
        for j in range(k):
            best[j] = np.inf
            chosen[j] = _EMPTY
        for pos in range(indptr[row], indptr[row + 1]):
            w = np.float64(data[pos])
            if w == 0:
                continue
            log_w = _log(w)
            weyl = np.uint64(indices[pos]) * _GOLDEN
            for j in range(k):
                z = fmix64(keys[j] + weyl)
                u1 = _unit(fmix64(z + _STREAM))
                u2 = _unit(fmix64(z + np.uint64(2) * _STREAM))
                v1 = _unit(fmix64(z + np.uint64(3) * _STREAM))
                v2 = _unit(fmix64(z + np.uint64(4) * _STREAM))
                beta = _unit(fmix64(z + np.uint64(5) * _STREAM))
                r = -_log(u1 * u2)
                log_c = _log(-_log(v1 * v2))
                t = _floor(log_w / r + beta)
                log_a = log_c - r * (t - beta + 1.0)
                # selects, not a branch, so that the loop over the hashes vectorizes
                better = log_a < best[j]
                chosen[j] = z if better else chosen[j]
                best[j] = log_a if better else best[j]


@njit(cache=True, nogil=True)
def min_max_block(x_indptr, x_indices, x_data, y_indptr, y_indices, y_data, x_sums, y_sums, x_exponents,
                  y_exponents, out):
    """``out[a, b] = sum_i min(x_ai, y_bi) / sum_i max(x_ai, y_bi)`` (0 where both rows are empty).

    Rows are CSR with sorted column indices and non-negative float64 values,
    row ``a`` of ``x`` standing for ``2^x_exponents[a]`` times its stored values
    (and the same for ``y``); ``x_sums``, ``y_sums`` are the stored rows' sums.
    A pair is evaluated on the scale of its larger exponent, where no sum
    exceeds the number of entries: the sum of the minima is a merge of the two
    index lists, and the sum of the maxima is ``sum x + sum y - sum min``.
    """
    for a in range(out.shape[0]):
        p0, p1 = x_indptr[a], x_indptr[a + 1]
        for b in range(out.shape[1]):
            top = max(x_exponents[a], y_exponents[b])
            # powers of two: exact, or below 2^-1074 for a row negligible against the other
            x_scale = math.ldexp(1.0, x_exponents[a] - top)
            y_scale = math.ldexp(1.0, y_exponents[b] - top)
            p, q, q1 = p0, y_indptr[b], y_indptr[b + 1]
            m = 0.0
            while p < p1 and q < q1:
                ia, ib = x_indices[p], y_indices[q]
                if ia == ib:
                    m += min(x_data[p] * x_scale, y_data[q] * y_scale)
                    p += 1
                    q += 1
                elif ia < ib:
                    p += 1
                else:
                    q += 1
            denominator = x_sums[a] * x_scale + y_sums[b] * y_scale - m
            out[a, b] = m / denominator if denominator > 0 else 0.0


@njit(cache=True, nogil=True)
def match_fractions(x_bits, y_bits, out):
    """``out[a, b]``: the fraction of hashes whose kept bits agree, ``mean_j x_bits[a, j] == y_bits[b, j]``.

    This is ``z(x).z(y)`` of the one-hot features, computed from the ``(n, k)``
    uint16 low bits without the output's ``k 2^b`` columns.
    """
    k = x_bits.shape[1]
    for a in range(out.shape[0]):
        for b in range(out.shape[1]):
            count = 0
            for j in range(k):
                count += x_bits[a, j] == y_bits[b, j]
            out[a, b] = count / k
