"""Random binning features (Rahimi & Recht, NIPS 2007, Algorithm 2)."""

import math

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._core.base import KernelParameter
from ._core.parallel import block_rows, n_worker_threads, run_row_blocks
from ._core.rows import bandwidth_input, densify_rows
from ._core.sparse_map import SparseFeatureMap
from ._core.validation import (FeatureOverflowError, check_fits_in_memory, check_float_array, check_integer,
                               clear_fitted_state, dask_support, is_dask_array)
from ._kernels.bandwidth import resolve_gamma
from ._kernels.frames import check_skewedness
from ._kernels.names import SKEWED_KERNELS, canonical_kernel
from ._numba import bin_tables

__all__ = ["RandomBinning"]

#: Kernels whose one-dimensional factor ``k(|d|)`` has ``delta k''(delta)`` as a
#: density: the Laplacian, and the skewed intersection kernel, which is the
#: Laplacian of ``log(x + c)``. The Gaussian and Cauchy factors are concave near 0
#: (``k''(0) < 0``), so no pitch density gives them.
BINNING_KERNELS = ("laplacian", "skewed_intersection")
#: Product kernels refused with the reason (their factors are concave near 0),
#: and the Fourier map that takes each.
_CONCAVE_KERNELS = {"gaussian": "RandomFourierFeatures", "cauchy": "RandomFourierFeatures",
                    "skewed_chi2": "QuantileFourierFeatures"}
#: A grid's vocabulary starts this small and doubles as bins arrive.
_FIRST_TABLE_SLOTS = 1024


def _table_slots(n_bins):
    """Slots of a table holding ``n_bins`` bins at a load of at most one half."""
    return 1 << max(4, int(2 * n_bins - 1).bit_length())


class RandomBinning(SparseFeatureMap):
    """Random binning features of the Laplacian kernel: sparse indicators of random grids.

    Each of ``P = n_grids`` grids has, per input dimension ``j``, a pitch
    ``delta_j`` drawn from ``p(delta) = delta k''(delta)`` (for
    ``k(d) = exp(-gamma |d|)``, a Gamma(2, 1/gamma)) and a shift
    ``u_j ~ U[0, delta_j)``. A point falls in the bin
    ``(floor((x_j - u_j) / delta_j))_j`` of each grid; its feature vector is the
    ``P`` bin indicators stacked and scaled by ``1/sqrt(P)``. Two points share a
    grid's bin with probability ``prod_j k(|x_j - y_j|)``, so ``z(x) . z(y)`` is
    an unbiased estimate of ``exp(-gamma ||x - y||_1)``.

    ``transform`` returns a ``scipy.sparse.csr_matrix`` in the dtype of ``X``
    with at most ``P`` entries per row, all ``1/sqrt(P)``: exactly ``P`` for
    every row whose bins the vocabulary holds (every training row).

    **Columns come from a vocabulary learned in fit, not from hashing.** ``fit``
    gives every (grid, bin) pair that a training row reaches its own column, so
    ``n_components_`` is the number of occupied bins and no two bins ever share a
    column. Hashing bins into a fixed number of columns would bias every kernel
    estimate upwards by the collision rate, and fine grids, where binning beats
    Fourier features, occupy up to one bin per training row per grid, so the
    collisions would not be rare. A test point in a bin no training point
    reached has no column there: that grid's indicator is dropped. This leaves
    the estimate of ``k(x_test, x_train)`` unbiased (the training points share
    no bin with it in that grid), and a learner trained on the training rows
    would give the missing column a zero weight anyway.

    Bins are reduced to 64-bit keys by hashing the bit patterns of their float64
    coordinates, and each grid's vocabulary is a hash table; keys, vocabulary
    and lookup are Numba loops over row blocks on the thread pool. Coordinates
    are computed in float64 for float32 input too, so both give the same bins.

    Parameters
    ----------
    n_grids : int, default=50
        ``P``, the number of grids (Rahimi & Recht use 10-350).
    kernel : {'laplacian', 'skewed_intersection'}, default='laplacian'
        ``exp(-gamma ||x - y||_1)``, or ``exp(-gamma sum_j |log(x_j + c) -
        log(y_j + c)|)`` on ``x > -c`` (``c = skewedness``), binned in
        ``log(x + c)``. Other kernels raise a ``ValueError`` that says why.
    gamma : float or {'scale', 'median', 'knn50'}, default='scale'
        Bandwidth, or a heuristic resolved at fit time on the (log) data (see
        :func:`kernelmaps.resolve_gamma`; the distance heuristics use the L1
        distance).
    skewedness : float, default=1.0
        ``c`` of the skewed intersection kernel (unused by the Laplacian).
    random_state : int, RandomState or None

    Attributes
    ----------
    n_components_ : int
        Columns of the output: the (grid, bin) pairs the training rows reach.
    grid_columns_ : ndarray of shape (n_grids + 1,)
        Grid ``p``'s bins are the columns ``grid_columns_[p]:grid_columns_[p + 1]``.
    pitches_, shifts_ : ndarray of shape (n_features, n_grids)
        ``delta`` and ``u``: grid ``p``'s are column ``p``.
    inverse_pitches_ : ndarray of shape (n_features, n_grids)
        ``1 / delta``, which the bins are computed with.
    gamma_ : float
    kernel_ : str

    References
    ----------
    Rahimi, A. and Recht, B. Random features for large-scale kernel machines.
    NIPS 2007, section 4 and Algorithm 2 (random binning features), and Table 1
    (Binning + LS).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomBinning, relative_frobenius_error
    >>> X = np.random.default_rng(0).uniform(size=(300, 3))
    >>> binning = RandomBinning(n_grids=400, gamma=2.0, random_state=0).fit(X)
    >>> Z = binning.transform(X)
    >>> type(Z).__name__, Z.shape[0], np.unique(Z.getnnz(axis=1)).tolist()
    ('csr_matrix', 300, [400])
    >>> bool(relative_frobenius_error(binning.kernel(X), Z=Z.toarray()) < 0.1)
    True
    """

    name = "random_binning"
    paper = "Rahimi & Recht, Random features for large-scale kernel machines, NIPS 2007, Algorithm 2"
    kernel_family = "shift_invariant"
    unbiased = True
    test_params = {"n_grids": 64, "gamma": 0.5}
    benchmark = None
    drops_entries = True  # a test point's bin no training point reached

    kernel = KernelParameter()

    def __init__(self, n_grids=50, *, kernel="laplacian", gamma="scale", skewedness=1.0, random_state=None):
        self.n_grids = n_grids
        self.kernel = kernel
        self.gamma = gamma
        self.skewedness = skewedness
        self.random_state = random_state

    # ------------------------------------------------------------ parameters
    def _validate_params_common(self):
        check_integer(self.n_grids, "n_grids")
        try:
            name = canonical_kernel(self.kernel, BINNING_KERNELS + tuple(_CONCAVE_KERNELS))
        except ValueError:
            raise ValueError(f"kernel must be one of {list(BINNING_KERNELS)}, got {self.kernel!r}") from None
        if name not in BINNING_KERNELS:
            raise ValueError(
                f"random binning needs a kernel whose one-dimensional factor k has delta k''(delta) as a "
                f"density of pitches; the {name} kernel's factor is concave near 0 (k''(0) < 0), so it has "
                f"none. Use one of {list(BINNING_KERNELS)}, or {_CONCAVE_KERNELS[name]}(kernel={name!r})."
            )
        self.kernel_ = name
        self.skewedness_ = check_skewedness(self.skewedness) if name in SKEWED_KERNELS else None

    def _check_memory_plan(self, n_features):
        check_fits_in_memory(
            (3 * 8 * n_features + 16 * _FIRST_TABLE_SLOTS) * int(self.n_grids), f"n_grids={self.n_grids}",
            f"the pitches and shifts of {self.n_grids} grids of {n_features} features and their empty vocabularies",
        )

    def _nnz_per_row(self, n_features):
        return check_integer(self.n_grids, "n_grids")

    def _block_elements_per_row(self):
        # the row's entries and their keys, besides the base class's own
        return 6 * int(self.n_grids)

    # ------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Draw the grids and learn the vocabulary of the bins the rows of ``X`` reach.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A Dask array is read chunk by chunk: every row's bins enter the
            vocabulary (a heuristic ``gamma`` reads a seeded sample of rows).
        y : ignored

        Returns
        -------
        self
        """
        if not is_dask_array(X):
            return super().fit(X, y)
        clear_fitted_state(self)
        dask = dask_support()
        rng = check_random_state(self.random_state)
        sample = dask.sample_rows(X, dask.FIT_SAMPLE_ROWS, self.random_state)
        first = check_float_array(self, sample, reset=True, accept_sparse=True)
        self._validate_params_common()
        self._check_memory_plan(first.shape[1])
        self._draw_grids(first, rng)
        chunks = (check_float_array(self, np.asarray(chunk.compute()), reset=False, accept_sparse=True)
                  for chunk in X.to_delayed().ravel())
        self._learn_vocabulary(chunks)
        return self

    def _fit(self, X, rng):
        self._draw_grids(X, rng)
        step = block_rows(8 * (X.shape[1] + 2 * int(self.n_grids)))
        self._learn_vocabulary(X[start:start + step] for start in range(0, X.shape[0], step))

    def _draw_grids(self, X, rng):
        self._check_transform_input(X)
        coordinates = self._coordinates(bandwidth_input(self.gamma, X))
        self.gamma_ = resolve_gamma(self.gamma, coordinates, "laplacian", rng)
        P, d = int(self.n_grids), X.shape[1]
        # drawn grid by grid, stored feature by feature: the loops over the grids are the inner ones
        pitches = rng.gamma(2.0, 1.0 / self.gamma_, size=(P, d))
        shifts = rng.uniform(0.0, 1.0, size=(P, d)) * pitches
        with np.errstate(divide="ignore", over="ignore"):
            inverse = 1.0 / pitches
        if not (pitches > 0).all() or not np.isfinite(inverse).all():
            raise ValueError(f"gamma={self.gamma_!r} draws pitches too fine for float64 (1/pitch overflows); "
                             "choose a smaller gamma or rescale the input")
        self.pitches_, self.shifts_, self.inverse_pitches_ = (np.ascontiguousarray(A.T)
                                                              for A in (pitches, shifts, inverse))

    def _coordinates(self, X):
        """What the grids cut: ``X``, or ``log(X + c)`` for the skewed kernel (float64)."""
        if self.skewedness_ is None:
            return X
        dense = X.toarray() if sp.issparse(X) else X
        return np.log(np.asarray(dense, dtype=np.float64) + self.skewedness_)

    def _learn_vocabulary(self, blocks):
        """Number every (grid, bin) pair the rows of ``blocks`` reach, in order of first reach.

        Blocks are read in order; within a block the keys are computed on the
        thread pool by rows, then each grid's table is filled by one thread, in
        row order, so the numbering does not depend on the thread count.
        """
        shifts, inverse_pitches = self.shifts_, self.inverse_pitches_
        P = shifts.shape[1]
        tables = [(np.zeros(_FIRST_TABLE_SLOTS, dtype=np.uint64), np.empty(_FIRST_TABLE_SLOTS, dtype=np.int64), 0)
                  for _ in range(P)]
        for block in blocks:
            coordinates = self._dense_coordinates(block)
            keys = np.empty((P, coordinates.shape[0]), dtype=np.uint64)
            step = block_rows(8 * (coordinates.shape[1] + P))

            def compute_keys(start, stop):
                self._check_bins(bin_tables.block_keys(coordinates[start:stop], shifts, inverse_pitches,
                                                        keys[:, start:stop]), coordinates, start)

            run_row_blocks(coordinates.shape[0], step, compute_keys)

            def insert(first_grid, last_grid):
                for p in range(first_grid, last_grid):
                    tables[p] = self._insert(p, tables[p], keys[p])

            run_row_blocks(P, max(1, -(-P // (4 * n_worker_threads()))), insert)
        self._freeze(tables)

    def _insert(self, grid, table, new_keys):
        table_keys, values, count = table
        start = 0
        while start < len(new_keys):
            count, start = bin_tables.insert_keys(new_keys, start, table_keys, values, count,
                                                   len(table_keys) // 2)
            if start < len(new_keys):
                slots = 2 * len(table_keys)
                check_fits_in_memory(16 * slots * int(self.n_grids), f"n_grids={self.n_grids}",
                                     f"the vocabularies of {self.n_grids} grids of {count} bins each "
                                     "(fewer grids or a smaller gamma give coarser grids)")
                grown_keys, grown_values = np.zeros(slots, dtype=np.uint64), np.empty(slots, dtype=np.int64)
                bin_tables.rehash(table_keys, values, grown_keys, grown_values, 0)
                table_keys, values = grown_keys, grown_values
        return table_keys, values, count

    def _freeze(self, tables):
        """Pack the tables, at most half full, into flat arrays whose values are columns."""
        counts = np.array([count for _, _, count in tables], dtype=np.int64)
        self.grid_columns_ = np.concatenate([[0], np.cumsum(counts)])
        slots = np.array([_table_slots(count) for count in counts], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(slots)])
        self.table_keys_ = np.zeros(starts[-1], dtype=np.uint64)
        self.table_columns_ = np.empty(starts[-1], dtype=np.int64)
        for p, (table_keys, values, _) in enumerate(tables):
            bin_tables.rehash(table_keys, values, self.table_keys_[starts[p]:starts[p + 1]],
                               self.table_columns_[starts[p]:starts[p + 1]], self.grid_columns_[p])
        self.table_starts_ = starts
        self.n_components_ = int(self.grid_columns_[-1])

    def _dense_coordinates(self, block):
        if sp.issparse(block):
            block = densify_rows(block, np.empty(block.shape, dtype=block.dtype))
        return self._coordinates(block)

    # ------------------------------------------------------------ transform
    def _check_transform_input(self, X):
        if self.skewedness_ is not None:
            from .quantile_fourier import check_domain

            check_domain(X, self.kernel_, self.skewedness_)

    def _prepare_transform(self, dtype):
        return dtype.type(1.0 / math.sqrt(int(self.n_grids)))

    def _transform_block(self, X, indices, data, context):
        coordinates = self._coordinates(X)
        _, first_overflow = bin_tables.lookup_columns(
            coordinates, self.shifts_, self.inverse_pitches_, self.table_keys_, self.table_columns_,
            self.table_starts_, self.grid_columns_[:-1], context, indices, data)
        self._check_bins(first_overflow, coordinates, 0)
        return True

    def _check_bins(self, first_overflow, coordinates, start):
        if first_overflow >= 0:
            row = coordinates[start + first_overflow]
            raise FeatureOverflowError(
                f"{type(self).__name__}: a row with max |x| = {float(np.max(np.abs(row))):.3g} lies beyond "
                f"float64's range of bins for the finest pitch {float(self.pitches_.min()):.3g} "
                f"(gamma={self.gamma_:.3g}); rescale the input or choose a smaller gamma")

    def _kernel_params(self):
        params = {"kernel": self.kernel_, "gamma": self.gamma_}
        if self.skewedness_ is not None:
            params["skewedness"] = self.skewedness_
        return params
