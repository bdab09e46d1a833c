"""``K T^-1`` for an upper triangular ``T``, by GEMMs that release the GIL.

SciPy's ``solve_triangular`` (LAPACK ``trtrs``) and its BLAS ``trsm`` hold the GIL
for the whole solve, so two threads that each solve their own system run one
after the other: on this project's 2-core machine, two threads of 20 solves of a
1000 x 1000 triangle against 1000 columns took as long as 40 solves on one. The
cross-validated Nyström learners solve one such system per bandwidth and chunk of
rows on the thread pool, where that made their main pass serial. Here the solve is
cut into column blocks: each block is a GEMM against the blocks already solved
and a product with the inverse of its ``b x b`` diagonal block (inverted once per
``T``), all NumPy products, which release the GIL.

Multiplying by an inverted diagonal block in place of substitution keeps the
forward error of the solve within the block's condition number times the
rounding: against ``trtrs`` at ``cond(T) = 1e6`` (a Gaussian kernel's centres at a
small bandwidth) the residual ``|Phi T - K|`` was 1e-14 against 6e-16, both at
the rounding of the entries.
"""

import numpy as np
import scipy.linalg

#: Columns per block: 128 keeps the diagonal products a small share of the work
#: (``b / m``) while each GEMM stays large.
BLOCK_COLUMNS = 128


class RightUpperSolve:
    """``X -> X T^-1`` for an upper triangular ``T`` (``Phi T = X``), in column blocks.

    Parameters
    ----------
    T : ndarray of shape (m, m)
        Upper triangular with a non-zero diagonal (a Cholesky factor).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.triangular import RightUpperSolve
    >>> T = np.array([[2.0, 1.0], [0.0, 4.0]])
    >>> RightUpperSolve(T)(np.array([[2.0, 5.0]]))
    array([[1., 1.]])
    """

    def __init__(self, T):
        self.T = np.asarray(T, dtype=np.float64)
        m = self.T.shape[0]
        self.starts = list(range(0, m, BLOCK_COLUMNS))
        self.inverses = [scipy.linalg.solve_triangular(self.T[s:s + BLOCK_COLUMNS, s:s + BLOCK_COLUMNS],
                                                       np.eye(min(BLOCK_COLUMNS, m - s)), lower=False,
                                                       check_finite=False) for s in self.starts]

    def __call__(self, X):
        """``X T^-1`` in float64, shape of ``X`` (``X`` untouched)."""
        X = np.asarray(X)
        out = np.empty(X.shape, dtype=np.float64)
        for start, inverse in zip(self.starts, self.inverses):
            stop = start + inverse.shape[0]
            right = np.asarray(X[:, start:stop], dtype=np.float64)
            if start:
                right = right - out[:, :start] @ self.T[:start, start:stop]
            np.matmul(right, inverse, out=out[:, start:stop])
        return out
