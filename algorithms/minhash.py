"""Min-hash features of the Tanimoto (Jaccard) and min-max kernels: b-bit minwise
hashing (Li & König, WWW 2010; Li, Shrivastava, Moore & König, NIPS 2011) and
0-bit consistent weighted sampling (Ioffe, ICDM 2010; Li, KDD 2015)."""

import math

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ._core.parallel import block_rows, run_row_blocks
from ._core.sparse_map import SparseFeatureMap
from ._core.validation import check_choice, check_integer, check_non_negative
from ._kernels.minhash import SETS, bbit_constants, low_bits_collision
from ._numba import hashing as kernels

__all__ = ["MinHash"]

MODES = ("auto", "binary", "weighted")
#: b of at most 16 bits: 2^16 columns per hash already.
MAX_BITS = 16


def _values(X):
    return X.data if sp.issparse(X) else X


def _is_binary(X):
    values = _values(X)
    return bool(np.all((values == 0) | (values == 1)))


def _row_counts(X):
    """Non-zero entries per row (stored zeros of a sparse matrix are not counted)."""
    if sp.issparse(X):
        nonzero = sp.csr_matrix(((X.data != 0).astype(np.int64), X.indices, X.indptr), shape=X.shape)
        return np.asarray(nonzero.sum(axis=1)).ravel()
    return np.count_nonzero(X, axis=1)


class MinHash(SparseFeatureMap):
    """b-bit min-hash features: linear features of the Tanimoto (Jaccard) or min-max kernel.

    **Binary mode** (0/1 rows, read as the sets ``S`` of their non-zero
    columns). Each of ``k = n_hashes`` hashes ``h_j`` stands for a random
    permutation of the features; the minimum ``min_{i in S} h_j(i)`` of two sets
    agrees with probability equal to their resemblance
    ``R = |S1 & S2| / |S1 | S2|``. Only its lowest ``b = n_bits`` bits are kept,
    one-hot in ``2^b`` columns per hash, and scaled by ``1/sqrt(k)`` (Li et al.
    2011): a non-empty row has exactly ``k`` entries, its norm is 1, and
    ``z(x).z(y)`` is the fraction of hashes whose ``b`` bits agree. Its mean is
    not ``R`` but (Li & König 2010, Theorem 1)

        ``P_b = C1 + (1 - C2) R``,  ``C1, C2 -> 2^-b`` for sparse sets,

    where, with ``r_j = f_j / D`` (``f_j = |S_j|``, ``D`` the hashed space),
    ``A_j = r_j (1 - r_j)^(2^b - 1) / (1 - (1 - r_j)^(2^b))``,
    ``C1 = (A_1 r2 + A_2 r1) / (r1 + r2)`` and ``C2 = (A_1 r1 + A_2 r2) / (r1 + r2)``.
    :meth:`estimate_kernel` returns the unbiased ``(z(x).z(y) - C1) / (1 - C2)``,
    of variance ``P_b (1 - P_b) / (k (1 - C2)^2)``. A linear learner on ``z``
    itself needs no correction (the offset and the scale are absorbed by its
    weights; Li et al. 2011 feed the one-hot features as they are).

    The permutations are the hashes ``h_j(i) = fmix64(key_j + i G)`` (a Weyl
    step and MurmurHash3's finalizer: injective in ``i``; see
    ``kernelmaps._numba.hashing``), of hashed space ``D = 2^64``, so
    ``C1 = C2 = 2^-b`` to within ``2^-40`` for any set of fewer than ``2^24``
    columns. Li et al.'s 2-universal ``(a i + c) mod p`` was measured biased on
    sets of consecutive columns (every dense row is one).

    **Weighted mode** (non-negative rows). Ioffe's consistent weighted sampling
    draws per hash a sample ``(i*, t*)`` that two rows share with probability
    ``sum_i min(x_i, y_i) / sum_i max(x_i, y_i)``; the 0-bit scheme (Li 2015)
    keeps ``i*`` only. Its collision probability exceeds the min-max kernel by
    ``Pr[i* equal, t* not]``, which Li found negligible for learning; on
    synthetic pairs whose shared weights differ by factors of up to 2 it
    measured 0.001-0.011, up to 0.015 for factors of 5 (``tests/test_minhash.py``).
    The ``b`` bits kept are the lowest of ``h_j(i*)``, so that two different
    samples share a column with probability ``q_b = 2^-b`` (to within
    ``2^-64``) whatever the column structure, and the correction is
    ``(z(x).z(y) - q_b) / (1 - q_b)``. The draws ``r, c ~ Gamma(2, 1)``,
    ``beta ~ U(0, 1)`` of each (hash, feature) come from a counter-based hash
    of a per-hash seed and the feature's index, so the fitted state is
    ``O(k)`` for any number of features (a stored ``k x d`` table would be
    ``3 k d`` floats: 50 MB at ``k = 1024``, ``d = 2048``, and out of reach for
    hashed text features). They cost three logarithms per hash and stored
    entry: the weighted transform is about 15x slower than the binary one.

    A row with no non-zero entry is the empty set: it gets no features (an
    all-zero row of the output), and both the exact kernel and
    :meth:`estimate_kernel` give 0 for every pair it is in.

    Parameters
    ----------
    n_hashes : int, default=256
        ``k``, the number of hashes (Li et al. 2011 use ``k`` = 50-500).
    n_bits : int, default=8
        ``b`` in 1..16: each hash becomes ``2^b`` columns. Li et al. 2011
        recommend ``b >= 8`` for learning: smaller ``b`` needs many more hashes
        for the same accuracy.
    mode : {'auto', 'binary', 'weighted'}, default='auto'
        'auto' chooses 'binary' when every non-zero value seen by ``fit`` is 1,
        'weighted' otherwise. A map fitted in binary mode refuses rows with
        other values.
    random_state : int, RandomState or None

    Attributes
    ----------
    n_components_ : int
        ``k 2^b``, the output width.
    mode_ : {'binary', 'weighted'}
    keys_ : ndarray of shape (n_hashes,), uint64
        ``key_j`` of each hash (its permutation, and its weighted-sampling draws).

    References
    ----------
    Li, P. and König, A. C. b-Bit minwise hashing. WWW 2010 (Theorem 1 and the
    estimator's variance).

    Li, P., Shrivastava, A., Moore, J. and König, A. C. Hashing algorithms for
    large-scale learning. NIPS 2011 (the one-hot expansion).

    Ioffe, S. Improved consistent sampling, weighted minhash and L1 sketching.
    ICDM 2010.

    Li, P. 0-bit consistent weighted sampling. KDD 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import MinHash, tanimoto_kernel
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.uniform(size=(50, 400)) < 0.1).astype(float)
    >>> X[1::2] = np.maximum(X[::2], rng.uniform(size=(25, 400)) < 0.05)  # similar pairs
    >>> minhash = MinHash(n_hashes=512, n_bits=8, random_state=0).fit(X)
    >>> Z = minhash.transform(X)
    >>> minhash.mode_, Z.shape, np.unique(Z.getnnz(axis=1)).tolist()
    ('binary', (50, 131072), [512])
    >>> K = tanimoto_kernel(X)
    >>> bool(np.abs(minhash.estimate_kernel(X) - K).mean() < 0.03)
    True
    """

    name = "minhash"
    paper = ("Li & König, b-Bit minwise hashing, WWW 2010; Li, Shrivastava, Moore & König, Hashing algorithms "
             "for large-scale learning, NIPS 2011; Ioffe, ICDM 2010; Li, 0-bit consistent weighted sampling, "
             "KDD 2015")
    kernel_family = "jaccard"
    unbiased = False  # z.z estimates P_b = C1 + (1 - C2) R: see estimate_kernel
    test_params = {"n_hashes": 32, "n_bits": 4}
    benchmark = None
    accepts_sparse_blocks = True
    drops_entries = True  # an empty row has no features

    def __init__(self, n_hashes=256, *, n_bits=8, mode="auto", random_state=None):
        self.n_hashes = n_hashes
        self.n_bits = n_bits
        self.mode = mode
        self.random_state = random_state

    # ------------------------------------------------------------ parameters
    def _validate_params_common(self):
        k = check_integer(self.n_hashes, "n_hashes")
        b = check_integer(self.n_bits, "n_bits")
        if b > MAX_BITS:
            raise ValueError(f"n_bits must be in 1..{MAX_BITS}, got {b}")
        check_choice(self.mode, "mode", MODES)
        self.n_components_ = k << b

    def _nnz_per_row(self, n_features):
        return check_integer(self.n_hashes, "n_hashes")

    def _block_elements_per_row(self):
        # the base class's entries and sort, and one uint64 hash value per entry
        return 6 * int(self.n_hashes)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    # ------------------------------------------------------------ fit
    def _fit(self, X, rng):
        check_non_negative(X, type(self).__name__, SETS)
        binary = _is_binary(X)
        if self.mode == "binary" and not binary:
            raise ValueError("mode='binary' needs 0/1 input; X has other values: use mode='weighted' "
                             "(the min-max kernel) or binarize X")
        self.mode_ = "binary" if self.mode == "binary" or (self.mode == "auto" and binary) else "weighted"
        self.keys_ = rng.randint(0, np.iinfo(np.uint64).max, size=int(self.n_hashes), dtype=np.uint64)

    # ------------------------------------------------------------ transform
    def _check_transform_input(self, X):
        check_non_negative(X, type(self).__name__, SETS)
        if getattr(self, "mode_", None) == "binary" and not _is_binary(X):
            raise ValueError(f"{type(self).__name__} was fitted in binary mode (the Tanimoto kernel of 0/1 "
                             "rows) and X has values other than 0 and 1; refit with mode='weighted' for the "
                             "min-max kernel, or binarize X")

    def _prepare_transform(self, dtype):
        return dtype.type(1.0 / math.sqrt(int(self.n_hashes)))

    def _hash_values(self, X):
        """``(n, k)`` uint64: each row's minimum hash (binary) or ``h_j(i*)`` (weighted)."""
        X = X if sp.issparse(X) else sp.csr_matrix(X)
        out = np.empty((X.shape[0], int(self.n_hashes)), dtype=np.uint64)
        if self.mode_ == "binary":
            kernels.binary_min_hashes(X.indptr, X.indices, X.data, self.keys_, out)
        else:
            kernels.weighted_samples(X.indptr, X.indices, X.data, self.keys_, np.empty(out.shape[1]), out)
        return out

    def _transform_block(self, X, indices, data, context):
        values = self._hash_values(X)
        b = int(self.n_bits)
        columns = (values & np.uint64((1 << b) - 1)).astype(indices.dtype)
        columns += (np.arange(values.shape[1], dtype=indices.dtype) << b)[None, :]
        indices[...] = columns
        data[...] = context
        data[_row_counts(X) == 0] = 0  # the empty set: no features
        return True

    # ------------------------------------------------------------ kernels
    def _kernel_params(self):
        return {"kernel": "tanimoto" if self.mode_ == "binary" else "min_max"}

    def collision_constants(self, X, Y=None):
        """``(C1, C2)``: the mean of ``z(x).z(y)`` is ``C1 + (1 - C2) K(x, y)``.

        Binary mode: Li & König's Theorem 1 with ``r = |S| / 2^64`` for each pair
        of non-empty rows; weighted mode: ``C1 = C2 = q_b``, the chance that two
        different samples share their ``b`` bits. Pairs with an empty row get
        ``(0, 0)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, n_features)
        Y : {array-like, sparse matrix} of shape (m, n_features) or None

        Returns
        -------
        C1, C2 : ndarray of shape (n, m), float64

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps import MinHash
        >>> X = np.eye(3)
        >>> C1, C2 = MinHash(n_hashes=8, n_bits=1, random_state=0).fit(X).collision_constants(X)
        >>> C1.round(6)[0].tolist()  # 2^-b for sets this small against 2^64
        [0.5, 0.5, 0.5]
        """
        check_is_fitted(self)
        X = self._validated_transform_input(X)
        Y = X if Y is None else self._validated_transform_input(Y)
        fx, fy = _row_counts(X), _row_counts(Y)
        both = (fx[:, None] > 0) & (fy[None, :] > 0)
        if self.mode_ == "binary":
            F1, F2 = np.broadcast_arrays(np.maximum(fx, 1)[:, None], np.maximum(fy, 1)[None, :])
            C1, C2 = bbit_constants(int(self.n_bits), F1, F2)
        else:
            C1 = C2 = np.full(both.shape, low_bits_collision(int(self.n_bits)))
        return np.where(both, C1, 0.0), np.where(both, C2, 0.0)

    def estimate_kernel(self, X, Y=None):
        """The bias-corrected min-hash estimate of the kernel, ``(z(x).z(y) - C1) / (1 - C2)``.

        Unbiased for the resemblance ``R`` in binary mode (Li & König 2010,
        eq. of ``R_b``); in weighted mode, for the collision probability of the
        0-bit samples, which Li (2015) finds to match the min-max kernel.
        Not clipped to ``[0, 1]`` (clipping would bias it). 0 for pairs with
        an empty row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, n_features)
        Y : {array-like, sparse matrix} of shape (m, n_features) or None
            ``None``: the Gram matrix of ``X``, ``Y = X``.

        Returns
        -------
        K : ndarray of shape (n, m), float64

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps import MinHash
        >>> X = np.array([[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]])  # R = 2 / 6
        >>> K = MinHash(n_hashes=4096, n_bits=2, random_state=0).fit(X).estimate_kernel(X)
        >>> K.shape, bool(abs(K[0, 1] - 1 / 3) < 0.05), float(K[0, 0])
        ((2, 2), True, 1.0)
        """
        check_is_fitted(self)
        C1, C2 = self.collision_constants(X, Y)
        X = self._validated_transform_input(X)
        x_bits = self._kept_bits(X)
        y_bits = x_bits if Y is None else self._kept_bits(self._validated_transform_input(Y))
        P = np.empty((x_bits.shape[0], y_bits.shape[0]))

        def work(start, stop):
            kernels.match_fractions(x_bits[start:stop], y_bits, P[start:stop])

        run_row_blocks(P.shape[0], block_rows(8 * max(1, P.shape[1])), work)
        both = C2 > 0  # pairs of non-empty rows
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(both, (P - C1) / (1.0 - C2), 0.0)

    def _kept_bits(self, X):
        """The ``b`` low bits of every hash value of the rows of validated ``X``, ``(n, k)`` uint16."""
        bits = np.empty((X.shape[0], int(self.n_hashes)), dtype=np.uint16)
        mask = np.uint64((1 << int(self.n_bits)) - 1)

        def work(start, stop):
            bits[start:stop] = self._hash_values(X[start:stop]) & mask

        run_row_blocks(X.shape[0], self._block_step(X.dtype, X.shape[1]), work)
        return bits
