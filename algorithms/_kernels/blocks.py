"""The one pipeline of kernel blocks ``K(rows, C)``: frame, product, formula, finish, check.

Every evaluation of a kernel of the vocabulary on rows against fixed columns goes
through :class:`KernelBlocks`: the exact Gram matrix
(:func:`kernelmaps.exact_kernel`), Nyström's transform, and the kernel operator
of the Nyström machines. Per block of rows it

1. moves the rows into the columns' frame (shift-invariant kernels: centred and
   divided by a power of two, :mod:`kernelmaps._kernels.frames`), densifying a
   sparse block on the way;
2. takes the product ``X C^T`` in one single-threaded BLAS call when the kernel
   starts from it (a sparse block without a frame keeps its sparse product);
3. applies the kernel's formula in Numba (:func:`kernelmaps._kernels.formulas.kernel_block`);
4. finishes the Matérn kernels of a ``nu`` without closed form (``scipy.special.kve``);

and :meth:`KernelBlocks.check` names an overflow. The exact SVM's column cache
applies the same formulas inside its Numba solver (:mod:`kernelmaps._solvers.kernel_cache`).
"""

import numpy as np
import scipy.sparse as sp

from .._core.parallel import ThreadScratch
from .._core.rows import densify_rows, product_into
from .._core.validation import FeatureOverflowError
from .._numba.fastmath_arrays import all_finite
from .formulas import MaternDistance, evaluate_block, kernel_record
from .frames import SHIFT_INVARIANT, shift_invariant_frame, to_frame
from .matern import matern_from_distance

#: Kernels evaluated in the columns' centred, power-of-two frame.
FRAMED = SHIFT_INVARIANT + ("sech",)


class KernelBlocks:
    """``K(rows, columns)`` of one kernel, block by block, with the columns prepared once.

    Parameters
    ----------
    columns : ndarray of shape (m, d)
        The fixed second argument (Nyström's landmarks, the machines' centres,
        ``Y`` of a Gram matrix), any float dtype; read in ``dtype``.
    kernel : str
        A name of :func:`kernelmaps._kernels.formulas.kernel_record` (the skewed
        kernels arrive as ``'sech'`` or ``'laplacian'`` on ``log(x + c)``).
    gamma, degree, coef0, nu : the kernel's parameters, resolved
    dtype : float32 or float64
        The dtype of the blocks: float32 rows give float32 blocks.
    frame : (center, scale) or None
        The columns' frame, where the caller keeps it (Nyström's ``center_`` and
        ``frame_scale_``); computed from the columns otherwise.

    Attributes
    ----------
    record : the kernel's record (its scalars in ``dtype``, in the frame)
    columns : ndarray of shape (m, d), ``dtype``
        The columns in the frame.
    center, scale : the frame (``None`` and 1.0 without one)
    """

    def __init__(self, columns, kernel, gamma, degree=2, coef0=1.0, nu=1.5, dtype=np.float64, frame=None):
        self.dtype = np.dtype(dtype)
        self.kernel, self.gamma, self.degree, self.coef0, self.nu = kernel, gamma, degree, coef0, nu
        if kernel not in FRAMED:
            frame = (None, 1.0)
        self.center, self.scale = shift_invariant_frame(columns) if frame is None else frame
        if self.center is None:
            self.columns = np.ascontiguousarray(columns, dtype=self.dtype)
        else:
            self.columns = to_frame(columns, self.center, self.scale, self.dtype)
            self._center = self.center.astype(self.dtype)
            self._inverse_scale = self.dtype.type(1.0 / self.scale)
        self.record = kernel_record(kernel, gamma, degree, coef0, nu, self.scale, self.dtype)
        self.columns_t = np.ascontiguousarray(self.columns.T) if self.record.product else None
        self.sq_columns = np.einsum("ij,ij->i", self.columns, self.columns)
        self._scratch = ThreadScratch()

    @property
    def n_columns(self):
        return self.columns.shape[0]

    def rows_in_frame(self, rows):
        """The block's rows as the formula reads them: in the frame, densified where it needs them."""
        if self.center is None:
            return rows
        framed = self._scratch.get("framed", rows.shape, self.dtype)
        if sp.issparse(rows):
            # x - center is dense: densify the block in the scratch it is framed in
            np.subtract(densify_rows(rows, framed), self._center, out=framed)
        else:
            np.subtract(rows, self._center, out=framed)
        framed *= self._inverse_scale
        return framed

    def fill(self, rows, G):
        """Write ``K(rows, columns)`` into ``G`` (shape ``(len(rows), m)``, ``dtype``) and return it.

        ``rows`` is a block of rows in ``dtype``, dense or sparse (CSR).
        """
        X = self.rows_in_frame(rows)
        if self.record.product:
            if sp.issparse(X):
                # only the dot-product kernels have no frame, and their formula reads
                # G alone: it gets a row count and no features
                product_into(X, self.columns_t, G)
                X = np.empty((X.shape[0], 0), dtype=self.dtype)
            else:
                np.matmul(X, self.columns_t, out=G)
        elif sp.issparse(X):
            X = X.toarray()
        return self.apply_formula(X, G)

    def apply_formula(self, X, G):
        """The kernel's formula on the block ``G`` of framed rows ``X`` (``G`` holds their
        product when the kernel starts from one), then the Matérn finishing step; returns ``G``."""
        evaluate_block(self.record, G, X, self.columns, self.sq_columns)
        if isinstance(self.record, MaternDistance):
            matern_from_distance(G, self.nu)
        return G

    def framed(self, X):
        """All of ``X`` (dense, ``dtype``) in the frame, as a new array (``X`` itself without a frame)."""
        return X if self.center is None else to_frame(X, self.center, self.scale, self.dtype)

    def product(self, X):
        """The product ``X C^T`` of framed rows in one threaded BLAS call (for ``X`` the
        columns themselves, ``syrk``: exactly symmetric), or an empty array of the same
        shape for a kernel that does not start from one."""
        if not self.record.product:
            return np.empty((X.shape[0], self.n_columns), dtype=self.dtype)
        return X @ X.T if X is self.columns else X @ self.columns.T

    def block(self, rows, name="kernel_block"):
        """``K(rows, columns)`` in per-thread scratch (valid until the thread's next block of that name)."""
        return self.fill(rows, self._scratch.get(name, (rows.shape[0], self.n_columns), self.dtype))

    def check(self, G, where):
        """Raise :class:`FeatureOverflowError` naming the kernel and ``where`` if ``G`` is not finite."""
        if not all_finite(G):
            raise FeatureOverflowError(self.overflow_message(where))

    def overflow_message(self, where):
        return (f"the {self.kernel} kernel (gamma={self.gamma}, degree={self.degree}, coef0={self.coef0}) "
                f"overflows {self.dtype.name} {where}")


class BandwidthBlocks:
    """``K(rows, columns)`` of one kernel at several bandwidths, what they share computed once a block.

    The frame of a shift-invariant kernel is the columns' (not the
    bandwidth's), so the framed rows are shared; a kernel that starts from the
    product ``X C^T`` (Gaussian, Matérn, polynomial, exponential) takes it in
    one GEMM for every bandwidth, and each bandwidth costs only its formula's
    epilogue on a copy. The L1 and Cauchy kernels have no shared product: each
    bandwidth evaluates its block from the framed rows.

    Parameters
    ----------
    columns : ndarray of shape (m, d)
    kernel : str
    gammas : sequence of float
        The bandwidths, resolved.
    degree, coef0, nu : the kernel's other parameters, resolved
    dtype : float32 or float64

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import exact_kernel
    >>> from kernelmaps._kernels.blocks import BandwidthBlocks
    >>> rng = np.random.default_rng(0)
    >>> X, C = rng.standard_normal((50, 3)), rng.standard_normal((10, 3))
    >>> blocks = BandwidthBlocks(C, "gaussian", [0.1, 1.0])
    >>> out = blocks.fill(X, np.empty((2, 50, 10)))
    >>> bool(np.allclose(out[1], exact_kernel(X, C, gamma=1.0)))
    True
    """

    def __init__(self, columns, kernel, gammas, degree=2, coef0=1.0, nu=1.5, dtype=np.float64):
        first = KernelBlocks(columns, kernel, gammas[0], degree, coef0, nu, dtype=dtype)
        frame = (first.center, first.scale)
        self.per_gamma = [first] + [KernelBlocks(columns, kernel, gamma, degree, coef0, nu, dtype=dtype,
                                                 frame=frame) for gamma in gammas[1:]]

    def fill(self, rows, out):
        """Write every bandwidth's block ``K_g(rows, columns)`` into ``out[g]`` (shape
        ``(n_gammas, len(rows), m)``, the blocks' dtype) and return ``out``."""
        first = self.per_gamma[0]
        X = first.rows_in_frame(rows)
        if first.record.product:
            np.matmul(X, first.columns_t, out=out[0])
            out[1:] = out[0]
        for blocks, G in zip(self.per_gamma, out):
            blocks.apply_formula(X, G)
            blocks.check(G, f"at gamma={blocks.gamma:.6g}")
        return out
