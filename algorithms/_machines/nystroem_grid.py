"""The passes of the cross-validated Nyström kernel ridge learners over the rows.

For ``m`` centres ``C``, bandwidth ``gamma`` and ``T`` the upper Cholesky factor
of ``K_mm + jitter I`` (jittered as :func:`kernelmaps._solvers.falkon.cholesky_with_jitter`
does for the fitted machine), the Nyström machine's objective
``||K a - y||^2 + alpha a^T (K_mm + jitter I) a`` is ridge regression on the
features ``Phi = K T^{-1}`` with ``a = T^{-1} b``: ``||Phi b - y||^2 + alpha ||b||^2``.
One pass over the rows computes every bandwidth's kernel block from one shared
product (:class:`kernelmaps._kernels.blocks.BandwidthBlocks`), turns it into
``Phi`` by one triangular solve (:mod:`kernelmaps._solvers.gil_free_lapack`)
and adds it to the normal equations of its test fold
(:class:`kernelmaps._solvers.ridge_path.FoldMoments`): a fold's training system
is all rows' minus its own, and one eigendecomposition of it gives every
``alpha``'s solution (:class:`kernelmaps._solvers.ridge_path.RidgePath`), or, for a
short grid, one Cholesky factorization per ``alpha`` (:func:`ridge_solutions`).

Why features and not ``K^T K`` itself: the generalized problem
``(K^T K + alpha K_mm) a = K^T y`` would be reduced by ``T^{-T} (K^T K) T^{-1}``,
which multiplies the rounding of ``K^T K`` (about ``eps n``) by ``1 / jitter``
(``1e12`` and more): the eigenvalues near ``alpha`` would be noise. ``Phi``'s
entries are bounded by the kernel's diagonal, so its normal equations carry
only their own rounding, as the fitted machine's preconditioned iterations do.
The triangular solve costs ``n m^2`` per bandwidth, as much as the normal
equations' product, both BLAS-3.
"""

import numpy as np
import scipy.linalg

from .._core.parallel import run_row_blocks
from .._kernels.blocks import BandwidthBlocks
from .._solvers.gil_free_lapack import RightUpperSolve, upper_cholesky_in_place
from .._solvers.kernel_operator import KernelOperator
from .._solvers.ridge_path import FoldMoments, RidgePath, centred_system
from .cv_passes import EvaluationPart

#: An ``m x m`` eigendecomposition with its vectors costs about as much as this many
#: Cholesky factorizations of the same order (at m = 1000 with OpenBLAS on 2 cores:
#: 3.5 s for LAPACK's QR driver, 7 s for divide and conquer and 20 s for the default
#: MRRR one, against 0.3 s for a factorization, on a loaded machine): a grid of fewer
#: penalties is solved by a factorization each.
EIGEN_CHOLESKY_RATIO = 10
#: Bytes of the kernel blocks of every bandwidth that one chunk of rows holds at once
#: (when the blocks are not kept).
CHUNK_BYTES = 64 * 2**20


def chunk_rows(n, n_gammas, m, d, itemsize):
    """``(block, chunk)``: the thread pool's rows per block, and the rows of a chunk (a
    multiple of the block, about :data:`CHUNK_BYTES` of kernel blocks, at most all ``n``)."""
    block = KernelOperator.rows_per_block(m, d, itemsize)
    blocks = min(max(1, CHUNK_BYTES // (n_gammas * m * itemsize * block)), -(-n // block))
    return block, block * max(1, blocks)


class GridBlocks:
    """Every bandwidth's kernel blocks ``K_g(X, C)``, chunk by chunk, computed on the thread pool or kept.

    Parameters
    ----------
    X : ndarray of shape (n, d), float32 or float64
    centres : ndarray of shape (m, d)
    kernel : dict
        ``kernel``, ``degree``, ``coef0``, ``nu`` of the kernel.
    gammas : ndarray of shape (n_gammas,)
    keep : bool
        Keep the blocks of the first pass (``n_gammas n m`` entries of ``X``'s dtype)
        for the next one.
    """

    def __init__(self, X, centres, kernel, gammas, keep):
        self.X = X
        n, m = X.shape[0], centres.shape[0]
        self.blocks = BandwidthBlocks(centres, kernel["kernel"], list(gammas), kernel["degree"], kernel["coef0"],
                                      kernel["nu"], dtype=X.dtype)
        self.block, self.chunk = chunk_rows(n, len(gammas), m, X.shape[1], X.dtype.itemsize)
        self.shape = (len(gammas), n, m)
        self.kept = np.empty(self.shape, X.dtype) if keep else None
        self.filled = False

    def n_chunks(self):
        return -(-self.shape[1] // self.chunk)

    def chunks(self):
        """``(lo, hi, K)`` for consecutive chunks of rows; ``K[g]`` is bandwidth ``g``'s block."""
        n_gammas, n, m = self.shape
        out = None if self.kept is not None else np.empty((n_gammas, min(n, self.chunk), m), self.X.dtype)
        for lo in range(0, n, self.chunk):
            hi = min(n, lo + self.chunk)
            K = self.kept[:, lo:hi] if self.kept is not None else out[:, :hi - lo]
            if not self.filled:
                self._fill(lo, hi, K)
            yield lo, hi, K
        self.filled = self.kept is not None

    def _fill(self, lo, hi, K):
        def work(start, stop):
            self.blocks.fill(self.X[lo + start:lo + stop], K[:, start:stop])

        run_row_blocks(hi - lo, self.block, work)


def fold_moments(grid, factors, membership, partition, n_outputs, targets, bar):
    """One pass: every bandwidth's :class:`FoldMoments` of the features ``Phi``.

    ``targets(lo, hi)`` gives the keywords of :meth:`FoldMoments.add` for rows ``lo:hi``
    (``n_outputs`` columns of targets, or labels and their code). Per chunk, the
    bandwidths run on the thread pool, one at a time per thread with BLAS
    single-threaded: each fills its own moments, so the sums are the same for any
    thread count, and small products do not pay a threaded BLAS's hand-overs.
    """
    moments = [FoldMoments(grid.shape[2], n_outputs, membership.shape[1], partition) for _ in factors]
    # Phi = K T^-1 by BLAS without the GIL (SciPy's solve_triangular holds it), so the bandwidths overlap
    features = [RightUpperSolve(T) for T in factors]
    for lo, hi, K in grid.chunks():
        def work(start, stop):
            for g in range(start, stop):
                moments[g].add(features[g](K[g]), membership[lo:hi], **targets(lo, hi))

        run_row_blocks(len(factors), 1, work)
        bar.update(1)
    for accumulated in moments:
        accumulated.all_rows()
    return moments


def ridge_solutions(gram, cross, alphas):
    """``(gram + alpha I)^{-1} cross`` for every ``alpha`` by one Cholesky factorization each,
    shape (m, n_alphas, n_outputs); ``None`` when one fails (a ridge below the rounding)."""
    solutions = np.empty((gram.shape[0], len(alphas), cross.shape[1]))
    diagonal = np.diag_indices(gram.shape[0])
    for a, alpha in enumerate(alphas):
        system = gram.copy()
        system[diagonal] += alpha
        # LAPACK without the GIL (SciPy's cho_factor holds it): the folds' systems on the
        # thread pool are factored side by side
        if upper_cholesky_in_place(system) != 0:
            return None
        solutions[:, a, :] = scipy.linalg.cho_solve((system, False), cross, check_finite=False)
    return solutions


def fold_solution(moments, k, alphas):
    """Every ``alpha``'s solution ``b`` of fold ``k``'s training system (of all rows when ``k`` is
    None), shape (m, n_alphas, n_outputs).

    Fewer penalties than :data:`EIGEN_CHOLESKY_RATIO` are solved by a Cholesky
    factorization each, more by one eigendecomposition for all of them.
    ``moments.all_rows()`` must have been formed (it is not formed here, where
    several folds may run at once).
    """
    system = centred_system(moments.all_rows(), None if k is None else moments.tests[k], fit_intercept=False)
    coef = ridge_solutions(*system[:2], alphas) if len(alphas) < EIGEN_CHOLESKY_RATIO else None
    if coef is None:
        coef, _ = RidgePath(*system, alphas, fit_intercept=False).solutions()
    return coef


def each_fold(n_gammas, n_folds, solve):
    """``solve(g, k)`` for every bandwidth ``g`` and fold ``k``, on the thread pool with BLAS
    single-threaded: independent ``m x m`` problems run side by side instead of sharing
    a threaded BLAS, whose hand-overs cost more than the work below a few thousand."""
    def work(start, stop):
        for task in range(start, stop):
            solve(*divmod(task, n_folds))

    run_row_blocks(n_gammas * n_folds, 1, work)


def fold_outputs(grid, coefficients, membership, targets, n_alphas, collect, classifier, bar):
    """The second pass: each test fold's rows' outputs for every bandwidth and ``alpha``.

    Parameters
    ----------
    coefficients : list of list of ndarray
        ``coefficients[g][k]``: the coefficients ``a`` of bandwidth ``g``'s and fold
        ``k``'s training system, shape (m, n_alphas, n_outputs).
    targets : ndarray of shape (n,) or (n, n_outputs)
        What :class:`EvaluationPart` scores: class indices, or target values.

    Returns
    -------
    list of EvaluationPart, one per bandwidth
    """
    n_outputs = coefficients[0][0].shape[2]
    parts = [EvaluationPart(membership.shape[1], n_alphas, n_outputs, collect) for _ in coefficients]
    for lo, hi, K in grid.chunks():
        member = membership[lo:hi]
        for g, per_fold in enumerate(coefficients):
            for k, coef in enumerate(per_fold):
                rows = np.flatnonzero(member[:, k])
                if len(rows):
                    outputs = np.asarray(K[g][rows], dtype=np.float64) @ coef.reshape(coef.shape[0], -1)
                    parts[g].add(k, outputs.reshape(len(rows), n_alphas, n_outputs), targets[lo:hi][rows], None,
                                 classifier)
        bar.update(1)
    return parts
