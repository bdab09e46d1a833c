"""The kernel matrix between rows and centres as an operator, never formed.

``K(X, C)`` of an ``n x m`` problem takes ``8 n m`` bytes: 131 GB at a million
rows and 16384 centres. Iterative solvers only need its products, so
:class:`KernelOperator` computes the kernel block of a few hundred rows at a time,
applies it and lets it go: ``O(n m d)`` time per pass, ``O(m)`` memory per block
row. Its :meth:`~KernelOperator.normal_matvec` gives ``K^T (K V + W)`` in one pass
over the rows, the product conjugate gradient on the normal equations needs
(Falkon's ``KnM_times_vector``).
"""

import math

import numpy as np
from scipy.sparse.linalg import LinearOperator

from .._kernels import gram_matrix
from .._parallel import block_rows, run_row_blocks

#: Partial sums of ``K^T U`` kept at once: the rows are cut into at most this many
#: groups, each summed by one thread, and the groups added in order. The cut
#: depends on ``n`` only, so the result is the same for any thread count.
MAX_PARTIAL_SUMS = 16


class KernelOperator(LinearOperator):
    """``K(X, C)``, shape ``(n, m)``, applied in row blocks on the thread pool.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
        The rows.
    centres : ndarray of shape (m, d), float64
    kernel : str
        A name of the kernel vocabulary (``kernelmaps._kernels.KERNEL_CODES``).
    gamma : float
        Numeric bandwidth (> 0).
    degree : int, default=2
    coef0 : float, default=1.0

    Notes
    -----
    Each block is computed as :func:`kernelmaps.exact_kernel` computes it (the
    shift-invariant kernels on data centred and scaled by the centres' frame),
    so ``K @ I`` equals ``exact_kernel(X, centres, ...)``. Blocks run on
    ``_parallel``'s pool with BLAS on one thread; the products with a block are
    single-threaded BLAS calls while it is in cache.

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

    def __init__(self, X, centres, *, kernel, gamma, degree=2, coef0=1.0):
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        self.centres = np.ascontiguousarray(centres, dtype=np.float64)
        if self.X.ndim != 2 or self.centres.ndim != 2 or self.X.shape[1] != self.centres.shape[1]:
            raise ValueError(f"X and centres must be 2-D with the same number of columns, got "
                             f"shapes {self.X.shape} and {self.centres.shape}")
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, float(gamma), int(degree), float(coef0)
        super().__init__(np.float64, (self.X.shape[0], self.centres.shape[0]))
        n, m = self.shape
        self.block = block_rows(8 * m)
        blocks = math.ceil(n / self.block) if n else 0
        self.group = self.block * max(1, math.ceil(blocks / MAX_PARTIAL_SUMS))

    def kernel_block(self, start, stop):
        """``K(X[start:stop], C)`` as a dense array."""
        return gram_matrix(self.X[start:stop], self.centres, self.kernel, self.gamma, self.degree,
                           self.coef0)

    def _blocks(self, start, stop):
        for lo in range(start, stop, self.block):
            hi = min(stop, lo + self.block)
            yield lo, hi, self.kernel_block(lo, hi)

    def _matmat(self, V):
        V = np.asarray(V, dtype=np.float64)
        out = np.empty((self.shape[0], V.shape[1]))

        def work(start, stop):
            for lo, hi, K in self._blocks(start, stop):
                np.dot(K, V, out=out[lo:hi])

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

    def normal_matvec(self, V, W=None):
        """``K^T (K V + W)`` in one pass over the rows (``V=None``: ``K^T W``).

        Parameters
        ----------
        V : ndarray of shape (m, k) or None
        W : ndarray of shape (n, k) or None

        Returns
        -------
        ndarray of shape (m, k)
        """
        if V is None and W is None:
            raise ValueError("normal_matvec needs V, W or both")
        k = (V if V is not None else W).shape[1]
        n, m = self.shape
        partial = {}

        def work(start, stop):
            total = np.zeros((m, k))
            for lo, hi, K in self._blocks(start, stop):
                image = K @ V if V is not None else np.zeros((hi - lo, k))
                if W is not None:
                    image += W[lo:hi]
                total += K.T @ image
            partial[start] = total

        run_row_blocks(n, self.group, work)
        out = np.zeros((m, k))
        for start in sorted(partial):
            out += partial[start]
        return out
