"""The kernel matrix between rows and centres as an operator, never formed.

``K(X, C)`` of an ``n x m`` problem takes ``8 n m`` bytes: 131 GB at a million
rows and 16384 centres. Iterative solvers only need its products, so
:class:`KernelOperator` computes the kernel block of a few hundred rows at a time,
applies it and lets it go: ``O(n m d)`` time per pass, ``O(m)`` memory per block
row. One pass (:meth:`KernelOperator.sweep`) gives ``K^T g(K V)`` for any
row-wise ``g``: the product conjugate gradient on the normal equations needs
(``K^T (K V + W)``, Falkon's ``KnM_times_vector``), the Newton system of a
weighted loss (``K^T D K V``) and a loss's gradient (``K^T l'(K a)``).
"""

import contextlib
import math
from typing import NamedTuple, Optional

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator

from .._core.parallel import block_rows, n_worker_threads, run_row_blocks
from .._core.validation import FeatureOverflowError
from .._kernels.blocks import KernelBlocks
from .._kernels.fused import FusedBlocks, fused_columns, fuses
from .._numba.compensated import CompensatedSum
from .._numba.fastmath_arrays import all_finite
from .cholesky import mirror_upper

#: Partial sums of ``K^T U`` kept at once: the rows are cut into at most this many
#: groups, each summed by one thread.
MAX_PARTIAL_SUMS = 16


class Gram(NamedTuple):
    """What :meth:`KernelOperator.gram` returns: ``F^T F``, ``F^T W``, ``F^T D F``, ``F^T D W``."""

    FtF: np.ndarray
    FtW: Optional[np.ndarray]
    FtDF: Optional[np.ndarray]
    FtDW: Optional[np.ndarray]


class KernelOperator(LinearOperator):
    """``K(X, C)``, shape ``(n, m)``, applied in row blocks on the thread pool.

    Parameters
    ----------
    X : ndarray of shape (n, d), float32 or float64
        The rows. float32 rows give float32 kernel blocks and products, summed
        across blocks in float64; anything else is computed in float64.
    centres : ndarray of shape (m, d)
    kernel : str
        A name of the kernel vocabulary (:func:`kernelmaps._kernels.formulas.kernel_record`).
    gamma : float
        Numeric bandwidth (> 0).
    degree : int, default=2
    coef0 : float, default=1.0
    nu : float, default=1.5
        The Matérn smoothness, used only when ``kernel='matern'``.
    keep_blocks : bool, default=False
        Keep every kernel block the first pass computes (the whole ``n x m``
        matrix, ``n m`` entries of ``X``'s dtype), so that later passes read them
        instead of evaluating the kernel again. The products are the same, bit for
        bit: a kept block is the block a pass would compute.
    fused : 'auto' or bool, default='auto'
        Whether the passes use the fused pass:
        ``'auto'`` for the kernels it covers while BLAS is slower (at most
        :data:`kernelmaps._kernels.fused.FUSED_MAX_FEATURES` features and ``FUSED_MAX_CENTRE_BYTES`` of centres),
        ``True`` for those kernels at any size, ``False`` never.

    Attributes
    ----------
    fused : FusedBlocks or None
        The fused pass (:mod:`kernelmaps._kernels.fused`), which never writes a kernel block except into the
        kept blocks, for the kernels and feature counts :func:`kernelmaps._kernels.fused.fuses` accepts: used
        by :meth:`normal_matvec`, ``@`` and its adjoint, and by :meth:`sweep` on each block in scratch or kept.
        Kept blocks are multiplied in the order they were evaluated, so the products are the same bit for
        bit, and a thread's run of kept blocks is one compiled call. A pass with more right-hand sides than
        :func:`kernelmaps._kernels.fused.fused_columns` allows writes each block of its values
        (:meth:`kernel_block`) and multiplies it by BLAS. ``None``: every pass writes each block (BLAS, the
        formula, the finiteness check) and applies it.

    Notes
    -----
    The shift-invariant kernels are evaluated on data centred and scaled by the
    centres' frame, as :func:`kernelmaps.exact_kernel` does, so ``K @ I`` equals
    ``exact_kernel(X, centres, ...)``. The frame, the framed centres and their
    squared norms are computed once (:class:`kernelmaps._kernels.blocks.KernelBlocks`);
    a block is one single-threaded GEMM into per-thread scratch, the kernel's
    Numba formula, and the products with it while it is in cache, or with the
    fused pass a few rows at a time in registers. :meth:`sweep` with any other
    ``rows_map`` than the normal equations' always writes the blocks.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import exact_kernel
    >>> from kernelmaps._solvers.kernel_operator import KernelOperator
    >>> rng = np.random.default_rng(0)
    >>> X, C, v = rng.standard_normal((500, 3)), rng.standard_normal((20, 3)), rng.standard_normal(20)
    >>> K = KernelOperator(X, C, kernel="gaussian", gamma=0.5)
    >>> bool(np.allclose(K @ v, exact_kernel(X, C, gamma=0.5) @ v))
    True

    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017 (Algorithm 1, ``KnM_times_vector``).
    """

    def __init__(self, X, centres, *, kernel, gamma, degree=2, coef0=1.0, nu=1.5, keep_blocks=False,
                 fused="auto"):
        X = np.asarray(X)
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        self.X = np.ascontiguousarray(X, dtype=dtype)
        self.centres = np.ascontiguousarray(centres, dtype=np.float64)
        if self.X.ndim != 2 or self.centres.ndim != 2 or self.X.shape[1] != self.centres.shape[1]:
            raise ValueError(f"X and centres must be 2-D with the same number of columns, got "
                             f"shapes {self.X.shape} and {self.centres.shape}")
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, float(gamma), int(degree), float(coef0)
        self.nu = float(nu)
        super().__init__(np.float64, (self.X.shape[0], self.centres.shape[0]))
        n, m = self.shape
        self.blocks = KernelBlocks(self.centres, kernel, self.gamma, self.degree, self.coef0, self.nu, dtype=dtype)
        self.itemsize = np.dtype(dtype).itemsize
        #: the dtype of the kernel blocks (float64 products are summed either way)
        self.block_dtype = np.dtype(dtype)
        # the kernel block and the framed rows
        self.block = self.rows_per_block(m, self.X.shape[1], self.itemsize)
        blocks = math.ceil(n / self.block) if n else 0
        self.group = self.block * max(1, math.ceil(blocks / MAX_PARTIAL_SUMS))
        # every pass cuts the rows at multiples of self.block, so a block's start indexes it
        self.kept = np.empty((n, m), dtype) if keep_blocks else None
        self._block_kept = np.zeros(blocks, dtype=bool)
        if not (isinstance(fused, bool) or (isinstance(fused, str) and fused == "auto")):
            raise ValueError(f"fused must be 'auto', True or False, got {fused!r}")
        uses_fused = fused is not False and fuses(self.blocks, None if fused is True else self.X.shape[1])
        self.fused = FusedBlocks(self.blocks) if uses_fused else None

    @staticmethod
    def kept_bytes(n, m, dtype):
        """Memory of the kept blocks of ``n`` rows and ``m`` centres (``keep_blocks=True``)."""
        return n * m * (4 if np.dtype(dtype) == np.float32 else 8)

    @staticmethod
    def rows_per_block(m, d, itemsize):
        """Rows of a block: its kernel block and framed rows are one row of scratch each."""
        return block_rows(itemsize * (m + d))

    def _keeps(self, start, stop):
        """Whether rows ``start:stop`` are a whole block of the pass's cut with ``keep_blocks``
        (kept once, under its index)."""
        return self.kept is not None and start % self.block == 0 and stop == min(start + self.block, self.shape[0])

    def kernel_block(self, start, stop):
        """``K(X[start:stop], C)``, in per-thread scratch (valid until the thread's next block),
        or read from the kept blocks. With the fused pass, the values it multiplies by."""
        keeps = self._keeps(start, stop)
        if keeps and self._block_kept[start // self.block]:
            return self.kept[start:stop]
        rows = self.X[start:stop]
        G = self.blocks.block(rows) if self.fused is None else self.fused.block(rows)
        self.blocks.check(G, f"on rows {start}-{stop - 1}")
        if keeps:
            self.kept[start:stop] = G
            self._block_kept[start // self.block] = True
        return G

    def _fuses(self, *n_columns):
        """Whether a pass with these numbers of right-hand sides runs fused: with more than
        :func:`kernelmaps._kernels.fused.fused_columns` allows, BLAS multiplies the (fused) blocks faster."""
        return self.fused is not None and max(n_columns) <= fused_columns(self.block_dtype, self.shape[1])

    def _check_operands(self, **operands):
        """Refuse non-finite operands of an operator with a fused pass, whichever products run: the fused
        pass checks only its products, where a NaN operand would be named as an overflow."""
        if self.fused is not None:
            for name, A in operands.items():
                if A is not None and not np.isfinite(A).all():
                    raise ValueError(f"{name} contains NaN or infinity: the kernel products would be meaningless")

    @contextlib.contextmanager
    def _products_checked(self, where):
        """``check(P)`` (returns ``P``) for the BLAS products of an operator with a fused pass: a non-finite
        product raises, as in the fused pass, where NumPy would warn and go on."""
        def check(P):
            if self.fused is not None and not all_finite(P):
                raise FeatureOverflowError(self.blocks.overflow_message(f"(in its products) {where}"))
            return P

        with np.errstate(**({} if self.fused is None else {"over": "ignore", "invalid": "ignore"})):
            yield check

    def _fused_run(self, lo, hi, rhs, n_columns, **products):
        """:meth:`FusedBlocks.run` on rows ``lo:hi``, reading or filling their kept block."""
        keeps = self._keeps(lo, hi)
        reads = keeps and bool(self._block_kept[lo // self.block])
        result = self.fused.run(self.X[lo:hi], rhs, n_columns, stored=self.kept[lo:hi] if keeps else None,
                                reads_stored=reads, where=f"on rows {lo}-{hi - 1}", **products)
        if keeps:
            self._block_kept[lo // self.block] = True
        return result

    def _as_block_dtype(self, A):
        return np.ascontiguousarray(A, dtype=self.X.dtype)

    def _matmat(self, V):
        V = self._as_block_dtype(np.asarray(V).reshape(self.shape[1], -1))
        out = np.empty((self.shape[0], V.shape[1]))
        self._check_operands(V=V)
        fused = self._fuses(V.shape[1])
        if fused:
            rhs = self.fused.right_hand_sides(V, V.shape[1])

        def work(start, stop):
            for lo in range(start, stop, self.block):
                hi = min(stop, lo + self.block)
                if not fused:
                    with self._products_checked(f"on rows {lo}-{hi - 1}") as check:
                        out[lo:hi] = check(self.kernel_block(lo, hi) @ V)
                else:
                    out[lo:hi] = self._fused_run(lo, hi, rhs, V.shape[1], backward=False)[0]

        run_row_blocks(self.shape[0], self.group, work)
        return out

    def _matvec(self, v):
        return self._matmat(np.reshape(v, (-1, 1)))[:, 0]

    def _rmatmat(self, U):
        return self.normal_matvec(None, np.asarray(U, dtype=np.float64))

    def _rmatvec(self, u):
        return self._rmatmat(np.reshape(u, (-1, 1)))[:, 0]

    def _adjoint(self):
        # LinearOperator's default adjoint wraps _rmatvec one column at a time
        return LinearOperator((self.shape[1], self.shape[0]), matvec=self._rmatvec,
                              rmatvec=self._matvec, matmat=self._rmatmat, dtype=np.float64)

    def sweep(self, V, rows_map, n_columns=None):
        """``K^T rows_map(lo, hi, K[lo:hi] V)`` summed over the row blocks, in one pass.

        Parameters
        ----------
        V : ndarray of shape (m, k) or None
            ``None``: no forward product; ``rows_map`` receives ``None``.
        rows_map : callable
            ``rows_map(lo, hi, KV)`` returns the ``(hi - lo, k')`` float64 rows
            ``U[lo:hi]`` to multiply by ``K[lo:hi]^T``. It runs on the pool's
            threads, on disjoint row ranges.
        n_columns : int or None
            ``k'`` (default: ``V``'s column count).

        Returns
        -------
        ndarray of shape (m, k'), float64
        """
        k = n_columns if n_columns is not None else np.asarray(V).reshape(self.shape[1], -1).shape[1]
        return self.sweep_sum(V, rows_map, k).result()

    def sweep_sum(self, V, rows_map, n_columns):
        """:meth:`sweep` as a :class:`CompensatedSum` (for merging with other row ranges)."""
        m = self.shape[1]
        if V is not None:
            V = self._as_block_dtype(np.asarray(V).reshape(m, -1))
        if self._fuses(n_columns, 0 if V is None else V.shape[1]):
            return self._sum_over_blocks(self._fused_sweep(V, rows_map, n_columns), n_columns)

        def block_sum(lo, hi):
            K = self.kernel_block(lo, hi)
            with self._products_checked(f"on rows {lo}-{hi - 1}") as check:
                image = None if V is None else check(K @ V).astype(np.float64, copy=False)
                U = rows_map(lo, hi, image)
                return check(K.T @ self._as_block_dtype(U))

        return self._sum_over_blocks(block_sum, n_columns)

    def _fused_sweep(self, V, rows_map, n_columns):
        """:meth:`sweep_sum`'s block sum by the fused pass's product tiles, on the block's values in place
        (kept, or evaluated into scratch): the same bits whether the blocks are kept or not."""
        forward = None if V is None else self.fused.right_hand_sides(V, V.shape[1])
        backward = self.fused.right_hand_sides(None, n_columns)

        def block_sum(lo, hi):
            K, rows, where = self.kernel_block(lo, hi), self.X[lo:hi], f"on rows {lo}-{hi - 1}"
            image = None
            if V is not None:
                image = self.fused.run(rows, forward, V.shape[1], backward=False, stored=K, reads_stored=True,
                                       where=where)[0].astype(np.float64, copy=False)
            U = np.reshape(rows_map(lo, hi, image), (hi - lo, n_columns))
            return self.fused.run(rows, backward, n_columns, addend=U, forward=False, stored=K, reads_stored=True,
                                  where=where)[1]

        return block_sum

    def _sum_over_blocks(self, block_sum, n_columns, kept_sum=None):
        """``sum block_sum(lo, hi)`` over the pass's row blocks, as a :class:`CompensatedSum` (each group of blocks
        summed by one thread, the groups merged in row order; ``kept_sum(start, stop, total)`` sums a kept group)."""
        n, m = self.shape
        partial = {}

        def work(start, stop):
            total = CompensatedSum((m, n_columns))
            if kept_sum is not None and self._block_kept[start // self.block:-(-stop // self.block)].all():
                kept_sum(start, stop, total)
            else:
                for lo in range(start, stop, self.block):
                    total.add(block_sum(lo, min(stop, lo + self.block)))
            partial[start] = total

        run_row_blocks(n, self.group, work)
        if not partial:
            return CompensatedSum((m, n_columns))
        # merged into the first group's sum (the same bits as into a zero sum): a new sum's np.zeros releases
        # the GIL to the winding-down pool (a kept sweep at n = 5000, m = 1000, k = 5: 5.31 ms, 4.98 ms without)
        first, *rest = sorted(partial)
        out = partial[first]
        for start in rest:
            out.merge(partial[start])
        return out

    def gram(self, W=None, features=None, row_weights=None):
        """``F^T F`` and ``F^T W`` in one pass, float64, for the features ``F = features(K)`` of the rows.

        ``features`` maps a block ``K[lo:hi]`` (``b x m``, the blocks' dtype) to its ``b x m`` features (a change
        of basis, such as the Nyström features ``K T^-1``); ``None`` takes ``K`` itself. Kept blocks are read,
        not evaluated. Per block one BLAS ``syrk`` (the upper triangle of ``F^T F``, ``b m^2 / 2``
        multiply-adds, half a GEMM's) and a ``gemm`` for ``F^T W``, accumulated in place: ``O(n m^2)`` time in
        all, against ``O(n m k)`` for a :meth:`sweep`. The rows are cut into one group per worker thread, each
        summed in float64 into its own ``m x m`` and ``m x k`` matrices (the memory of the pass), the groups
        added in row order: the same result for the same thread count, and to rounding (not bit for bit,
        unlike :meth:`sweep`) for another.

        Parameters
        ----------
        W : ndarray of shape (n, k) or None
        features : callable or None
        row_weights : callable or None
            ``row_weights(lo, hi, F)`` returns the ``(hi - lo,)`` non-negative
            weights ``D`` of rows ``lo:hi`` from their features: the pass then also
            sums ``F^T D F`` and ``F^T D W`` (a second ``syrk`` per block, and twice
            the partial sums' memory).

        Returns
        -------
        Gram
            ``(FtF, FtW, FtDF, FtDW)``, the last two None without ``row_weights``
            and ``FtW``, ``FtDW`` None without ``W``.
        """
        n, m = self.shape
        k = 0 if W is None else np.reshape(W, (n, -1)).shape[1]
        blocks = math.ceil(n / self.block) if n else 0
        group = self.block * max(1, math.ceil(blocks / min(MAX_PARTIAL_SUMS, n_worker_threads())))
        products = 1 if row_weights is None else 2
        syrk, gemm = scipy.linalg.blas.dsyrk, scipy.linalg.blas.dgemm
        partial = {}

        def work(start, stop):
            # per product the upper triangle of F^T F (syrk: half a GEMM's multiply-adds) and F^T W
            squares = [np.zeros((m, m), order="F") for _ in range(products)]
            crosses = [np.zeros((m, k), order="F") for _ in range(products if k else 0)]
            for lo in range(start, stop, self.block):
                hi = min(stop, lo + self.block)
                K = self.kernel_block(lo, hi)
                F = np.asarray(K if features is None else features(K), dtype=np.float64)
                targets = None if W is None else np.reshape(W[lo:hi], (hi - lo, k))
                weights = None if row_weights is None else row_weights(lo, hi, F)
                for index in range(products):
                    left, right = F, targets
                    if index:   # F^T D F = (D^1/2 F)^T (D^1/2 F), and F^T (D W)
                        left = F * np.sqrt(weights)[:, None]
                        right = None if targets is None else targets * weights[:, None]
                    # the C-ordered blocks are their transposes in Fortran order; sums in place
                    squares[index] = syrk(1.0, left.T, beta=1.0, c=squares[index], trans=0, lower=0,
                                          overwrite_c=True)
                    if right is not None:
                        crosses[index] = gemm(1.0, F.T, np.asfortranarray(right), beta=1.0, c=crosses[index],
                                              overwrite_c=True)
            partial[start] = squares, crosses

        run_row_blocks(n, group, work)
        results = []
        for index in range(products):
            square, cross = np.zeros((m, m)), (np.zeros((m, k)) if k else None)
            for start in sorted(partial):
                square += partial[start][0][index]
                partial[start][0][index] = None      # the memory plan counts one partial per thread
                if k:
                    cross += partial[start][1][index]
            results += [mirror_upper(square), cross]
        return Gram(*results, *([None, None] if row_weights is None else []))

    def _fused_normal_sum(self, V, W, weights, n_columns):
        """``K^T (D K V + W)`` by the fused pass, as a :class:`CompensatedSum`."""
        if V is not None:
            V = self._as_block_dtype(np.reshape(V, (self.shape[1], -1)))
        W = None if W is None else np.reshape(W, (self.shape[0], -1))
        rhs = self.fused.right_hand_sides(V, n_columns)

        def block_sum(lo, hi):
            return self._fused_run(lo, hi, rhs, n_columns, forward=V is not None, **_rows(lo, hi, weights, W))[1]

        def kept_sum(start, stop, total):
            self.fused.run_kept(self.X[start:stop], self.kept[start:stop], self.block, rhs, n_columns, total,
                                forward=V is not None, first_row=start, **_rows(start, stop, weights, W))

        return self._sum_over_blocks(block_sum, n_columns, kept_sum if self.kept is not None else None)

    def normal_matvec(self, V, W=None, weights=None, compensated=False):
        """``K^T (D K V + W)`` in one pass over the rows.

        Parameters
        ----------
        V : ndarray of shape (m, k) or None
            ``None``: ``K^T W``.
        W : ndarray of shape (n, k) or None
        weights : ndarray of shape (n,) or (n, k) or None
            The diagonal ``D`` (per column with shape (n, k)); ``None`` is ``I``.
        compensated : bool, default=False
            Return the :class:`CompensatedSum` instead of its result.

        Returns
        -------
        ndarray of shape (m, k)
        """
        if V is None and W is None:
            raise ValueError("normal_matvec needs V, W or both")
        k = (np.reshape(V, (self.shape[1], -1)) if V is not None else np.reshape(W, (self.shape[0], -1))).shape[1]
        if weights is not None:
            weights = np.asarray(weights, dtype=np.float64)
            weights = weights.reshape(-1, 1) if weights.ndim == 1 else weights
        self._check_operands(V=V, W=W, weights=weights)
        if self._fuses(k):
            total = self._fused_normal_sum(V, W, weights, k)
            return total if compensated else total.result()

        def rows_map(lo, hi, image):
            if image is None:
                return W[lo:hi]
            if weights is not None:
                image = image * weights[lo:hi]
            return image if W is None else image + W[lo:hi]

        return self.sweep_sum(V, rows_map, k) if compensated else self.sweep(V, rows_map, k)


def _rows(lo, hi, weights, addend):
    """The ``weights`` and ``addend`` keywords of a pass's rows ``lo:hi`` (None stays None)."""
    return {name: None if A is None else A[lo:hi] for name, A in (("weights", weights), ("addend", addend))}
