"""The base class of the feature maps whose output is a sparse matrix.

Random binning features and min-hash set a few of a very wide output's features
in each row; stored dense, their output would be almost all zeros.
:class:`SparseFeatureMap` gives them the contract of every map (validation,
dtypes, row blocks on the worker threads, the registry, feature names) with a
``scipy.sparse.csr_matrix`` as the result of ``transform``.
"""

import numpy as np
import scipy.sparse as sp

from .._numba.fastmath_arrays import all_finite
from .base import RowBlockMap
from .validation import is_dask_array

#: Beyond this many stored entries or columns, the output's indices are int64
#: (the rule scipy applies to the matrices it builds).
_INT32_MAX = np.iinfo(np.int32).max


class SparseFeatureMap(RowBlockMap):
    """Base class of the explicit feature maps with sparse output ``Z: R^d -> R^D``.

    For maps that set the same number ``k`` of the ``D = n_components`` features
    in every row, with ``k`` much smaller than ``D`` (random binning: one bin
    per grid; min-hash: one bucket per hash function). ``transform`` returns a
    ``scipy.sparse.csr_matrix`` in the input's float dtype with exactly ``k``
    stored entries per row, its columns in increasing order.

    Subclasses store their constructor parameters unchanged and implement

    * ``_fit(X, rng)``: as for :class:`~kernelmaps.FeatureMap`, draw or learn
      the map from validated ``X`` (float32 or float64, CSR when sparse) and a
      ``numpy.random.RandomState``; set fitted attributes ending in ``_``,
      independently of the thread count.
    * ``_nnz_per_row(n_features)``: ``k``, from the parameters and the input
      width. ``fit`` calls it before ``_fit``, to plan memory, so it validates
      the parameters it reads.
    * ``_transform_block(X, indices, data, context)``: for each row of the
      block ``X``, write the columns of its ``k`` entries into the row of the
      preallocated ``indices`` (shape ``(len(X), k)``, int32 or int64) and their
      values into ``data`` (``X.dtype``, the same shape). A row's columns must
      be distinct and in ``[0, n_components)``, in any order (the base class
      sorts them). A class that sets ``drops_entries = True`` may give an
      entry the value 0 to drop it (a row then stores fewer than ``k``); its
      column must still be distinct in the row. It runs on worker threads like ``FeatureMap``'s hook, so it
      must be thread-safe; ``X`` is dense unless the class sets
      ``accepts_sparse_blocks = True``. It returns ``True`` only when it has
      established that every value is finite; otherwise the base class checks.
    * ``_prepare_transform(dtype)`` (optional): per-call set-up shared by the
      blocks, passed as ``context``; it must not modify the estimator.
    * ``_planned_bytes(n_features)`` and ``_block_elements_per_row()``
      (optional): the memory plan and the scratch a row needs. The defaults
      count no fitted state, and a row's entries plus the sort of them.
    * ``kernel(X, Y=None)`` or ``_kernel_params()``: the exact kernel the map
      approximates, if any.

    The output's values, column indices and row pointers are allocated once
    for all ``N k`` entries, filled block by block and handed to the
    ``csr_matrix`` without a copy: peak memory is the output plus the blocks'
    scratch. ``get_feature_names_out`` names the ``n_components_`` columns
    after the class. ``fit`` reads a Dask array through a sample of its rows;
    ``transform`` needs the rows in memory.

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007 (random binning features, section 4).

    Li, P. and König, A. C. Theory and applications of b-bit minwise hashing.
    Communications of the ACM 54(8), 2011.

    Examples
    --------
    A map with one entry per row, in the column of the row's largest feature:

    >>> import numpy as np
    >>> from kernelmaps import SparseFeatureMap
    >>> class ArgmaxMap(SparseFeatureMap):
    ...     def __init__(self, n_components=4):
    ...         self.n_components = n_components
    ...     def _fit(self, X, rng):
    ...         pass
    ...     def _nnz_per_row(self, n_features):
    ...         return 1
    ...     def _transform_block(self, X, indices, data, context):
    ...         indices[:, 0] = np.argmax(X, axis=1)
    ...         data[:, 0] = 1
    >>> X = np.array([[0, 2, 1], [3, 0, 1]], dtype=np.float32)
    >>> Z = ArgmaxMap().fit(X).transform(X)
    >>> type(Z).__name__, Z.dtype, Z.nnz
    ('csr_matrix', dtype('float32'), 2)
    >>> Z.toarray()
    array([[0., 1., 0., 0.],
           [1., 0., 0., 0.]], dtype=float32)
    """

    #: Whether ``_transform_block`` may write zeros, which ``transform`` removes.
    drops_entries = False

    def _nnz_per_row(self, n_features):
        raise NotImplementedError(f"{type(self).__name__} does not say how many entries a row stores")

    def _planned_bytes(self, n_features):
        # a row's values and indices (8 bytes each at most) and its row pointer,
        # plus as much scratch; the wide output is never dense
        return 0, 2 * 16 * self._nnz_per_row(n_features) + 8

    def _block_elements_per_row(self):
        # the hook's scratch of one value per entry, and the sort of the entries
        # (its order and the sorted copies of the indices and values)
        return 4 * self._nnz_per_row(self.n_features_in_)

    def transform(self, X):
        """Map ``X`` to the sparse feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        Z : scipy.sparse.csr_matrix of shape (n_samples, n_components)
            float32 if ``X`` is float32, float64 otherwise; ``k`` stored entries
            per row (``_nnz_per_row``; fewer where a map that ``drops_entries``
            dropped some), in increasing column order.

        Raises
        ------
        FeatureOverflowError
            If a feature is not finite in the working dtype.
        TypeError
            For a Dask array: compute the rows (a chunk at a time) first.
        """
        if is_dask_array(X):
            raise TypeError(f"{type(self).__name__}.transform builds a scipy sparse matrix in memory and "
                            "got a Dask array: compute its rows (a chunk at a time) first")
        X = self._validated_transform_input(X)
        n, k = X.shape[0], self._nnz_per_row(self.n_features_in_)
        index_dtype = np.int32 if max(n * k, self.n_components_) <= _INT32_MAX else np.int64
        indices = np.empty((n, k), dtype=index_dtype)
        data = np.empty((n, k), dtype=X.dtype)
        overflowed = []

        def store(start, stop, block, context):
            rows = slice(start, stop)
            known_finite = self._transform_block(block, indices[rows], data[rows], context)
            self._canonical_entries(indices[rows], data[rows], start)
            if known_finite is not True and not all_finite(data[rows]):
                overflowed.append(start)

        self._map_row_blocks(X, store)
        if overflowed:
            self._raise_overflow(X, data, min(overflowed))
        indptr = np.arange(n + 1, dtype=index_dtype) * index_dtype(k)
        Z = sp.csr_matrix((data.reshape(-1), indices.reshape(-1), indptr), shape=(n, self.n_components_))
        if self.drops_entries and Z.nnz and not Z.data.all():
            Z.eliminate_zeros()  # in place: the arrays shrink, no copy of the matrix
        return Z

    def _canonical_entries(self, indices, data, start):
        """Sort the entries of each row of a block by column, in place.

        Refuses a row whose columns repeat or fall outside the output: scipy
        reads the indices of a matrix it is handed without checking them.
        """
        if not (indices[:, 1:] > indices[:, :-1]).all():
            order = np.argsort(indices, axis=1, kind="stable")
            indices[...] = np.take_along_axis(indices, order, axis=1)
            data[...] = np.take_along_axis(data, order, axis=1)
        bad = ((indices[:, 1:] == indices[:, :-1]).any(axis=1) | (indices[:, :1] < 0).any(axis=1)
               | (indices[:, -1:] >= self.n_components_).any(axis=1))
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise RuntimeError(
                f"{type(self).__name__}._transform_block gave row {start + row} the columns "
                f"{indices[row].tolist()}: a row's columns must be distinct and in "
                f"[0, {self.n_components_})"
            )
