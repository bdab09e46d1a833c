"""The fused pass of a kernel of the vocabulary: its epilogue, prepared rows and packed centres.

:mod:`kernelmaps._numba.fused_pass` computes ``K V``, ``K^T U`` and ``K^T (D K V + W)``
of a row block without writing the block to memory. :class:`FusedBlocks` maps
the record of a :class:`kernelmaps._kernels.blocks.KernelBlocks` (same frame,
same bandwidth in the frame) to the epilogue, the accumulation's rows and
centres, and checks the products' finiteness:

========================  ==============  ======================================
kernel (record)           accumulation    rows, centres
========================  ==============  ======================================
Gaussian                  ``dot``         ``x``, ``2 c`` and ``-|c|^2`` (exact
                                          scalings), the row term ``-|x|^2``
Matérn, ``nu = p + 1/2``  ``sqdist``      ``x``, ``c`` (exact squared distances)
Laplacian                 ``l1``          ``x``, ``c``
Cauchy                    ``cauchy``      ``sqrt(gamma) x``, ``sqrt(gamma) c``
polynomial, exponential   ``dot``         ``x``, ``c``
========================  ==============  ======================================

The other kernels (the Matérn of a ``nu`` without closed form, whose Bessel
function runs in SciPy, the chi2 kernels and the skewed kernels' ``sech``) keep
the path of :class:`KernelBlocks`: BLAS or a Numba formula into a block, then
the products.
"""

import numpy as np

from .._core.parallel import ThreadScratch
from .._core.validation import FeatureOverflowError
from .._numba.fastmath_arrays import all_finite
from .._numba.fused_kept import kept_blocks_sum
from .._numba.fused_pass import (ClampedExp, ExpOfDot, ExpOfL1, MaternOfSquares, PowerOfDot, Reciprocal,
                                 fused_rows)
from .._numba.fwht import AVX512_TARGET
from .._numba.tiles import lanes, pack_columns, product_vectors, tile_width
from .formulas import Cauchy, Exponential, Gaussian, Laplacian, MaternHalfInteger, Polynomial, matern_polynomial

#: Largest number of features at which the fused pass runs instead of BLAS and the
#: formula (per dtype). Measured on a 2-core AMD EPYC (Zen 4, AVX-512, Numba
#: target znver4, OpenBLAS 0.3.30), shared with other jobs (load average 5):
#: Gaussian ``K^T (K V)``, 4096 rows, m = 4096, one thread, best of 3, core-ns
#: per entry, fused against BLAS + formula:
#:
#: ======  =====================  =====================  ====================  =====================
#: d       float64 k = 1          float64 k = 26         float32 k = 1         float32 k = 26
#: ======  =====================  =====================  ====================  =====================
#: 16      1.61 / 3.56            8.51 / 10.45           0.85 / 1.54           2.47 / 3.55
#: 256     10.83 / 13.30          14.08 / 17.08          5.25 / 6.56           6.86 / 8.35
#: 512                            24.52 / 26.36                                11.69 / 14.29
#: 1024    54.23 / 42.02          63.55 / 50.41          20.97 / 22.32         24.82 / 24.79
#: ======  =====================  =====================  ====================  =====================
#:
#: (``KernelOperator(..., fused=True)`` against ``fused=False``, ``normal_matvec`` by
#: ``time.process_time``, under one BLAS and one Numba thread.) The fused pass wins up to
#: 512 features; at 1024 BLAS wins in float64 and float32 ties.
FUSED_MAX_FEATURES = {np.dtype(np.float32): 512, np.dtype(np.float64): 512}
#: Most bytes of packed centres (``m x d`` in the block's dtype) at which the fused pass runs
#: instead of BLAS and the formula. Each tile of 4 rows sweeps all the centres; past the
#: caches that sweep streams from memory, where BLAS's blocked GEMM does not. Measured by
#: ``kernel-pass-speed`` (about 10^5 rows, 2 threads), fused time over BLAS + formula at m = 16384,
#: d = 256 (32 MiB of float64 centres, 16 MiB of float32), for k = 1 and 26 right-hand sides:
#:
#: - Zen 4, Numba target znver4 (AVX-512): float64 1.35 and 1.50, float32 0.83 and 0.80;
#: - the same Zen 4, target haswell (AVX2): float64 2.21 and 2.52, float32 1.24 and 1.09;
#: - a Zen 3 (AVX2), target znver3 before and after the tile was inlined, and haswell:
#:   float64 2.09-2.65 and 2.83-3.26, float32 1.48-2.32 and 2.09-2.24.
#:
#: With one right-hand side, every cell with at most 8 MiB of packed centres (up to d = 256
#: at m = 4096 and d = 64 at m = 16384) ran the fused pass at 0.31-1.19 of BLAS's time in
#: these five runs. Hence 16 MiB with AVX-512, 8 MiB with AVX2. With 26 right-hand sides,
#: some AVX2 cells under 8 MiB still ran fused at 1.1-2.2 of BLAS's time (m = 16384 with
#: d = 4 to 64, m = 4096 with d = 256): the sweep of the columns, which this rule leaves out.
FUSED_MAX_CENTRE_BYTES = (16 if AVX512_TARGET else 8) * 2 ** 20
#: Most right-hand sides of a fused pass, per dtype: eight SIMD vectors of columns. With
#: more, each block is written (the fused pass's values: kept or not, the same bits) and
#: BLAS multiplies it, faster once the columns of ``V`` and ``K^T U`` no longer stay in
#: cache beside the register tiles. Measured on a 2-core AMD EPYC (Zen 3, AVX2, Numba
#: target znver3, OpenBLAS 0.3.31 Haswell kernels): Gaussian ``normal_matvec(V,
#: weights=D)``, d = 16, 2 threads, median of 5, ms, fused / BLAS (``FUSED_MAX_COLUMNS``
#: set high, then to 0), on kept blocks, then on evaluated ones:
#:
#: ======================  ====================  ====================  ====================
#: n x m, dtype            k = 26                k = 40                k = 64
#: ======================  ====================  ====================  ====================
#: 12000 x 2000, float64   72 / 67, 101 / 111    97 / 83, 128 / 124    163 / 124, 205 / 167
#: 8000 x 4096, float64    129 / 114, 184 / 188  192 / 162, 238 / 248  500 / 270, 569 / 359
#: 12000 x 2000, float32   42 / 39, 65 / 65      64 / 53, 85 / 86      114 / 98, 132 / 114
#: 8000 x 4096, float32    80 / 85, 106 / 120    139 / 132, 164 / 175  200 / 168, 214 / 252
#: ======================  ====================  ====================  ====================
#:
#: At k = 130 BLAS took 0.62-0.9 of the fused time. Hence 32 float64 and 64 float32
#: columns with AVX2; with AVX-512's wider vectors the rule allows twice as many, a
#: width not measured here.
FUSED_MAX_COLUMNS = {np.dtype(dtype): 8 * lanes(dtype) for dtype in (np.float32, np.float64)}
#: Most bytes of right-hand sides and products (``2 m k`` in the block's dtype) that each tile's
#: sweep carries beside the centres, with AVX2 (``None``: no limit). Past it BLAS multiplies
#: the fused pass's values faster. Measured on the Zen 3 above (Gaussian ``normal_matvec``,
#: 20 000 rows, m = 16384, 26 float64 columns: 6.5 MiB; 2 threads, median of 3, core-ns per
#: entry; fused, then the fused values multiplied by BLAS, then BLAS + formula): d = 4 12.81,
#: 11.18, 11.95; d = 16 15.68, 11.57, 11.74; d = 64 21.79, 13.73, 13.66. In float32 (26 columns
#: padded to 32: 4 MiB) the fused pass still won, 5.06 against 5.80 and 5.83, and so did float64
#: with one column, 6.53 against 8.11 and 7.50. The Zen 4's record (AVX-512) ran the fused pass
#: at 0.38-0.56 of BLAS's time at m = 16384 with 26 float64 columns: no limit there.
FUSED_MAX_COLUMN_BYTES = None if AVX512_TARGET else 4 * 2 ** 20

_RECORDS = (Gaussian, Exponential, Polynomial, Laplacian, Cauchy, MaternHalfInteger)


def fuses(blocks, n_features):
    """Whether the pass of ``blocks`` (a :class:`KernelBlocks`) on rows of ``n_features`` is fused
    (``None``: whether the kernel has a fused pass at all)."""
    return isinstance(blocks.record, _RECORDS) \
        and (n_features is None or fused_by_default(blocks.dtype, n_features, blocks.columns.shape[0]))


def fused_columns(dtype, n_centres):
    """Most right-hand sides a fused pass against ``n_centres`` centres multiplies in its tiles, in ``dtype``
    (:data:`FUSED_MAX_COLUMNS`, fewer past :data:`FUSED_MAX_COLUMN_BYTES`)."""
    dtype = np.dtype(dtype)
    if FUSED_MAX_COLUMN_BYTES is None:
        return FUSED_MAX_COLUMNS[dtype]
    return min(FUSED_MAX_COLUMNS[dtype], FUSED_MAX_COLUMN_BYTES // (2 * n_centres * dtype.itemsize))


def fused_by_default(dtype, n_features, n_centres):
    """Whether a pass over rows of ``n_features`` against ``n_centres`` centres, in ``dtype``, is fused
    when the caller leaves the choice to the operator (``fused='auto'``)."""
    dtype = np.dtype(dtype)
    return n_features <= FUSED_MAX_FEATURES[dtype] \
        and n_centres * n_features * dtype.itemsize <= FUSED_MAX_CENTRE_BYTES


class FusedBlocks:
    """The fused pass of one kernel against fixed centres, row block by row block.

    Parameters
    ----------
    blocks : KernelBlocks
        The kernel, its centres in their frame, its record (one of the kernels
        :func:`fuses` accepts).
    """

    def __init__(self, blocks):
        self.blocks = blocks
        record, dtype = blocks.record, blocks.dtype
        self.dtype = dtype
        centres = blocks.columns.astype(np.float64)
        self.row_scale = None
        bias = np.zeros(centres.shape[0])
        self.coefs = np.zeros(1, dtype)
        if isinstance(record, Gaussian):
            self.epilogue = ClampedExp(record.gamma)
            bias = -np.einsum("ij,ij->i", centres, centres)
            centres = 2.0 * centres
        elif isinstance(record, Exponential):
            self.epilogue = ExpOfDot(record.gamma)
        elif isinstance(record, Polynomial):
            self.epilogue = PowerOfDot(record.gamma, record.coef0, record.degree)
        elif isinstance(record, Laplacian):
            self.epilogue = ExpOfL1(record.gamma)
        elif isinstance(record, Cauchy):
            self.epilogue = Reciprocal(dtype.type(1.0))
            self.row_scale = dtype.type(np.sqrt(float(record.gamma)))
            centres = centres * float(self.row_scale)
        elif isinstance(record, MaternHalfInteger):
            self.epilogue = MaternOfSquares(record.g, record.order)
            self.coefs = matern_polynomial(record.order, dtype.type(1.0))
        else:
            raise ValueError(f"the {blocks.kernel} kernel has no fused pass")
        width = tile_width(dtype)
        self.centres = pack_columns(centres, dtype, width)
        self.n_centres = centres.shape[0]
        self.padded = self.centres.shape[0] * width
        self.bias = np.zeros(self.padded, dtype)
        self.bias[:self.n_centres] = bias
        self._scratch = ThreadScratch()

    def right_hand_sides(self, V, n_columns):
        """``V`` (m, k) packed for :func:`fused_rows` (zeros of ``n_columns`` columns when ``None``).

        Returns ``(packed, vectors)``.
        """
        m, k = self.n_centres, n_columns
        if k == 1:
            packed = np.zeros((1, self.padded, 1), self.dtype)
            if V is not None:
                packed[0, :m, 0] = V[:, 0]
            return packed, 1
        vectors = product_vectors(k, self.dtype)
        padded = np.zeros((k, self.padded), self.dtype)
        if V is not None:
            padded[:, :m] = V.T
        return pack_columns(padded, self.dtype, vectors * lanes(self.dtype)), vectors

    def _rows(self, X):
        rows = self.blocks.rows_in_frame(X)
        if self.row_scale is not None:
            rows = rows * self.row_scale
        if isinstance(self.epilogue, ClampedExp):
            return rows, -np.einsum("ij,ij->i", rows, rows)
        return rows, np.zeros(rows.shape[0], self.dtype)

    def block(self, X):
        """``K(X, C)`` (rows ``X`` in ``dtype``) in per-thread scratch, valid until the thread's next
        block: the values the fused pass multiplies by."""
        G = self._scratch.get("kernel_block", (X.shape[0], self.n_centres), self.dtype)
        self.run(X, self.right_hand_sides(None, 1), 1, forward=False, backward=False, stored=G)
        return G

    def run(self, X, rhs, n_columns, *, weights=None, addend=None, forward=True, backward=True, stored=None,
            reads_stored=False, where=""):
        """One row block: ``(K V, K^T (D K V + W))`` of its rows ``X`` (``dtype``).

        Parameters
        ----------
        X : ndarray of shape (b, d), the block's rows
        rhs : the packed ``V`` of :meth:`right_hand_sides`
        n_columns : int, ``k``
        weights : ndarray of shape (b,), (b, 1) or (b, k), or None
        addend : ndarray of shape (b, k) or None
        forward, backward : bool
            Which products to compute (``K V``; ``K^T U``).
        stored : ndarray of shape (b, m), ``dtype``, or None
            The block's kernel values: read instead of evaluated (``reads_stored``),
            or written as the pass evaluates them. Either way the products are
            the same, bit for bit.
        reads_stored : bool
        where : str
            The rows, for the error message.

        Returns
        -------
        P : ndarray of shape (b, k) (``X``'s dtype) or None
        image : ndarray of shape (m, k), float64, or None

        Raises
        ------
        FeatureOverflowError
            If a product is not finite.
        """
        packed, vectors = rhs
        b, k = X.shape[0], n_columns
        width = packed.shape[0] * packed.shape[2]
        if reads_stored:
            rows, row_terms = X, np.zeros(X.shape[0], self.dtype)
        else:
            rows, row_terms = self._rows(X)
        w, a = self._row_operands(b, width, weights, addend, forward)
        P = np.zeros((b if forward else 0, width), self.dtype)
        out = np.zeros((self.n_centres, width), self.dtype)
        stored = np.zeros((0, 0), self.dtype) if stored is None else stored
        fused_rows(self.epilogue, np.ascontiguousarray(rows), row_terms, self.centres, self.bias, self.coefs,
                   packed, vectors, w, a, stored, reads_stored, P, out, forward, backward)
        P = P[:, :k] if forward else None
        image = out[:, :k].astype(np.float64) if backward else None
        for product in (P, image):
            if product is not None and not all_finite(product):
                raise FeatureOverflowError(self.blocks.overflow_message(f"(in its products) {where}"))
        return P, image

    def _row_operands(self, b, width, weights, addend, forward):
        """The ``weights`` and ``addend`` of ``b`` rows as :func:`fused_rows` takes them: in ``dtype``, zero
        columns when absent (the weights also without ``forward``), padded to ``width`` columns (one weight
        column stays one)."""
        w = np.zeros((b, 0), self.dtype)
        if weights is not None and forward:
            w = np.ascontiguousarray(np.asarray(weights, dtype=self.dtype).reshape(b, -1))
            if w.shape[1] > 1:
                w = _padded(w, width)
        a = np.zeros((b, 0), self.dtype) if addend is None else _padded(np.asarray(addend, self.dtype), width)
        return w, a

    def run_kept(self, X, stored, block, rhs, n_columns, total, *, weights=None, addend=None, forward=True,
                 first_row=0):
        """:meth:`run`'s ``K^T (D K V + W)`` of consecutive kept blocks of ``block`` rows, each added to the
        :class:`CompensatedSum` ``total`` as a call of :meth:`run` per block would add it, in one compiled
        call (:func:`kernelmaps._numba.fused_kept.kept_blocks_sum`).

        ``X``, ``stored``, ``weights`` and ``addend`` hold the run's rows, whose first
        is ``first_row`` of the pass (for the error message).

        Raises
        ------
        FeatureOverflowError
            If a block's product is not finite.
        """
        packed, vectors = rhs
        b = stored.shape[0]
        width = packed.shape[0] * packed.shape[2]
        w, a = self._row_operands(b, width, weights, addend, forward)
        failed = kept_blocks_sum(self.epilogue, X, self.centres, self.bias, self.coefs, packed, vectors, w, a,
                                 stored, block, n_columns, forward, total.value, total.error)
        if failed >= 0:
            lo = first_row + failed * block
            raise FeatureOverflowError(self.blocks.overflow_message(
                f"(in its products) on rows {lo}-{min(lo + block, first_row + b) - 1}"))


def _padded(A, width):
    """``A`` with zero columns up to ``width``, contiguous."""
    if A.shape[1] == width:
        return np.ascontiguousarray(A)
    out = np.zeros((A.shape[0], width), A.dtype)
    out[:, :A.shape[1]] = A
    return out
