"""MurmurHash3's 64-bit finalizer, the mixing step of every hash of random binning and min-hash."""

import numpy as np
from numba import njit

_SHIFT = np.uint64(33)
_MIX1 = np.uint64(0xFF51AFD7ED558CCD)
_MIX2 = np.uint64(0xC4CEB9FE1A85EC53)


@njit(cache=True, nogil=True, inline="always")
def fmix64(h):
    """MurmurHash3's ``fmix64`` of a uint64: a bijection of 64-bit words that spreads every input bit.

    Inlined into the hashing loops (a call would keep them from vectorizing).

    References
    ----------
    Appleby, A. MurmurHash3 (2011), the finalization mix ``fmix64``.
    """
    h ^= h >> _SHIFT
    h *= _MIX1
    h ^= h >> _SHIFT
    h *= _MIX2
    h ^= h >> _SHIFT
    return h
