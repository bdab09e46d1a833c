"""Nyström kernel ridge regression by conjugate gradient with Falkon's preconditioner.

With ``m`` centres ``C``, ``K = K(X, C)`` (``n x m``) and ``K_mm = K(C, C)``, the
estimator ``f(x) = sum_j a_j k(x, c_j)`` minimizes
``(1/n) ||K a - y||^2 + lam a^T K_mm a``, whose normal equations are
``H a = K^T y / n`` with ``H = K^T K / n + lam K_mm``. ``H`` is as ill-conditioned
as the kernel; Falkon (Rudi, Carratino & Rosasco) preconditions it with
``B = T^{-1} A^{-1}``, ``T = chol(K_mm)`` and ``A = chol(T T^T / m + lam I)``, two
``m x m`` Cholesky factors that make ``B^T H B`` close to the identity when the
centres are a uniform sample of the rows (``B B^T`` is the inverse of the
Nyström estimate ``(n/m) K_mm^2 + lam n K_mm`` of ``n H``, up to the factor ``n``).
Conjugate gradient on ``B^T H B b = B^T K^T y / n`` then converges in a few tens
of iterations whatever ``lam``, each costing one pass over the rows
(:meth:`KernelOperator.normal_matvec`) and ``O(m^2)`` triangular solves.
"""

import itertools
from typing import NamedTuple

import numpy as np
import scipy.linalg

from .._core.parallel import blas_single_thread
from . import cholesky
from .cholesky import upper_cholesky
from .conjugate_gradient import CGResult, conjugate_gradient

#: Falkon's jitter ``eps m`` on the diagonal of ``K_mm`` (eps the machine epsilon of
#: the kernel blocks' dtype), raised tenfold while Cholesky fails (coinciding
#: centres make ``K_mm`` singular), up to this fraction of the mean diagonal, or a
#: hundred times the first jitter where that is larger (float32 blocks).
MAX_RELATIVE_JITTER = 1e-6


def _gram_of_rows(T, scale):
    """The upper triangle of ``scale * T T^T`` for an upper triangular ``T`` (the lower one is left undefined).

    LAPACK's ``lauum`` forms a triangle times its transpose in ``m^3 / 6``
    multiply-adds, a third of what ``syrk`` spends on the same ``T`` as a full
    matrix. Above :data:`~kernelmaps._solvers.cholesky.BLOCK_ORDER` it runs in
    blocks of that order, as the factorizations do: a diagonal block is ``lauum``
    of ``T``'s diagonal block plus ``syrk`` of the rest of its rows, a block above
    it one GEMM of the rows from its column on (BLAS's triangular ``trmm`` would
    skip the zeros of the diagonal block but ran at half GEMM's rate).

    The C-ordered ``T`` read in Fortran order is the lower ``L = T^T``, and
    ``L^T L = T T^T``: LAPACK's and BLAS's lower routines take ``T``'s memory as it
    is, where the upper ones need a transposed copy (at order 4096 that copy cost
    as much as the ``lauum`` itself). Their Fortran-ordered lower result is, read in
    C order, the upper triangle.
    """
    m, block = T.shape[0], cholesky.BLOCK_ORDER
    lauum = scipy.linalg.get_lapack_funcs("lauum", (T,))
    syrk = scipy.linalg.get_blas_funcs("syrk", (T,))

    def triangle_product(i, e):
        lower, info = lauum(T[i:e, i:e].T, lower=1)
        if info != 0:
            raise ValueError(f"LAPACK lauum failed with info={info}")
        if e < m:
            # (T[i:e, e:]^T)^T T[i:e, e:]^T = tail tail^T
            lower = syrk(1.0, T[i:e, e:].T, beta=1.0, c=lower, trans=1, lower=1, overwrite_c=1)
        return lower.T

    if m <= block:
        product = triangle_product(0, m)
    else:
        product = np.empty((m, m))
        for i in range(0, m, block):
            e = min(m, i + block)
            product[i:e, i:e] = triangle_product(i, e)
            for j in range(e, m, block):
                product[i:e, j:j + block] = T[i:e, j:] @ T[j:j + block, j:].T
    product *= scale
    return product


def _jittered_cholesky(shifted, jitters):
    """``(upper_cholesky(shifted(j)), j)`` for the first jitter ``j`` of ``jitters`` that
    factors, or ``(None, j)`` with the last one tried."""
    jitter = None
    for jitter in jitters:
        try:
            return upper_cholesky(shifted(jitter)), jitter
        except np.linalg.LinAlgError:
            continue
    return None, jitter


def _jitters(m, diagonal, eps=np.finfo(np.float64).eps):
    """Falkon's ``eps m`` times the mean diagonal, raised tenfold up to :data:`MAX_RELATIVE_JITTER` of it
    (or a hundred times the first jitter)."""
    jitter = eps * m * diagonal
    largest = max(MAX_RELATIVE_JITTER * diagonal, 100.0 * jitter)
    while jitter <= largest:
        yield jitter
        jitter *= 10.0


def cholesky_with_jitter(K_mm, eps=np.finfo(np.float64).eps):
    """Upper ``T`` with ``T^T T = K_mm + jitter I``, and the jitter it took.

    The jitter starts at Falkon's ``eps m`` times the mean diagonal and is raised
    tenfold while the factorization fails, up to :data:`MAX_RELATIVE_JITTER`.
    ``eps`` is the machine epsilon of the kernel blocks the solver multiplies by:
    directions in which ``K_mm`` is below the blocks' rounding carry only that
    rounding, and the preconditioner ``T^{-1}`` would amplify it into the
    system (float32 blocks of a nearly constant kernel met negative curvature).
    """
    m = K_mm.shape[0]
    diagonal = float(np.mean(np.diag(K_mm))) if m else 1.0
    if not diagonal > 0:
        raise ValueError("the centres' Gram matrix has no positive diagonal: the kernel "
                         "vanishes on the centres")
    diagonal_of = np.diag_indices(m)

    def shifted(jitter):
        copy = K_mm.copy()                    # not K_mm + jitter * eye: two m x m temporaries
        copy[diagonal_of] += jitter
        return copy

    T, jitter = _jittered_cholesky(shifted, _jitters(m, diagonal, eps))
    if T is None:
        raise ValueError("the centres' Gram matrix is not positive definite even with a jitter of "
                         f"{jitter / diagonal:.3g} times its diagonal: the kernel is not positive "
                         "definite on these centres")
    return T, jitter


def ridge_cholesky(T, weights, m, lam):
    """Upper ``A`` with ``A^T A = T D T^T / m + lam I`` (``D = diag(weights)``, or ``I`` for ``None``).

    ``T D T^T`` by BLAS ``syrk`` (half a GEMM's work, upper triangle only, which is
    all the Cholesky factorization reads; in blocks above :data:`~kernelmaps._solvers.cholesky.BLOCK_ORDER`),
    shifted and factored in place. A ridge below the rounding of ``T D T^T / m``
    (a tiny ``alpha``, or weights near zero) cannot make up for its rounding
    below zero: the factorization is then retried with the jitter of
    :func:`cholesky_with_jitter`, relative to the mean diagonal, added to
    ``lam``. ``A`` only preconditions the solvers, which apply the ridge exactly
    through ``lam``: a jitter changes the iterations, not the solution.
    """
    scaled = T if weights is None else T * np.sqrt(weights).astype(T.dtype, copy=False)
    diagonal_of = np.diag_indices(m)
    scale = float(np.einsum("ij,ij->", scaled, scaled)) / (m * m) if m else 1.0

    def shifted(jitter):
        product = _gram_of_rows(scaled, 1.0 / m)
        product[diagonal_of] += lam + jitter
        return product

    A, jitter = _jittered_cholesky(shifted, itertools.chain([0.0], _jitters(m, scale if scale > 0 else 1.0)))
    if A is None:
        raise ValueError(f"T D T^T / m + lam I is not positive definite even with a jitter of {jitter:.3g}: "
                         "the weights of the centres are not finite and non-negative")
    return A


class FalkonPreconditioner:
    """``B = T^{-1} A^{-1}`` of Falkon for centres with Gram matrix ``K_mm`` and ridge ``lam``.

    Parameters
    ----------
    K_mm : ndarray of shape (m, m)
        Symmetric positive semi-definite Gram matrix of the centres.
    lam : float
        Ridge (> 0) of the objective ``(1/n) ||K a - y||^2 + lam a^T K_mm a``.
    eps : float, default=float64's machine epsilon
        The machine epsilon of the kernel blocks (see :func:`cholesky_with_jitter`).

    Attributes
    ----------
    T, A : ndarray of shape (m, m)
        Upper Cholesky factors: ``T^T T = K_mm + jitter I``, ``A^T A = T T^T / m + lam I``.
    jitter : float
        What was added to ``K_mm``'s diagonal for ``T`` to exist.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import exact_kernel
    >>> from kernelmaps._solvers.falkon import FalkonPreconditioner
    >>> C = np.random.default_rng(0).standard_normal((30, 2))
    >>> B = FalkonPreconditioner(exact_kernel(C, gamma=0.5), lam=1e-3)
    >>> B.apply(np.ones((30, 1))).shape
    (30, 1)

    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017, section 3 and Algorithm 1.
    """

    def __init__(self, K_mm, lam, eps=np.finfo(np.float64).eps):
        K_mm = np.asarray(K_mm, dtype=np.float64)
        m = K_mm.shape[0]
        if not lam > 0:
            raise ValueError(f"the ridge lam must be positive, got {lam!r}")
        self.lam = float(lam)
        self.T, jitter = cholesky_with_jitter(K_mm, eps)
        self.jitter = jitter
        self.m = m
        self.A = ridge_cholesky(self.T, None, m, self.lam)

    def apply(self, U):
        """``B U = T^{-1} A^{-1} U``."""
        inner = scipy.linalg.solve_triangular(self.A, U, lower=False, check_finite=False)
        return scipy.linalg.solve_triangular(self.T, inner, lower=False, check_finite=False)

    def apply_transpose(self, U):
        """``B^T U = A^{-T} T^{-T} U``."""
        inner = scipy.linalg.solve_triangular(self.T, U, lower=False, trans="T", check_finite=False)
        return scipy.linalg.solve_triangular(self.A, inner, lower=False, trans="T", check_finite=False)


def block_epsilon(K):
    """The machine epsilon of the operator ``K``'s kernel blocks (float64 unless it says otherwise)."""
    return float(np.finfo(getattr(K, "block_dtype", np.float64)).eps)


class KernelRidgeSolution(NamedTuple):
    """What :func:`nystroem_kernel_ridge` returns."""

    #: ndarray of shape (m, k): the coefficients ``a`` of each target
    coef: np.ndarray
    #: conjugate gradient's iterations, residual history and convergence
    cg: CGResult
    preconditioner: "FalkonPreconditioner | None"


def nystroem_kernel_ridge(K, K_mm, Y, lam, *, preconditioned=True, max_iter=100, tol=1e-6,
                          x0=None, callback=None, callback_coef=True):
    """Minimize ``(1/n) ||K a - y||^2 + lam a^T K_mm a`` for every column ``y`` of ``Y``.

    Preconditioned, the ridge term is ``lam a^T (K_mm + jitter I) a`` with the
    preconditioner's jitter (``eps m`` times the mean diagonal, 2e-13 at m = 1000 for float64
    blocks, 1.2e-4 for float32 ones):
    the problem Falkon solves, and what keeps the preconditioned system well
    conditioned when ``K_mm`` is numerically singular.

    Parameters
    ----------
    K : KernelOperator, or any operator with ``shape`` and ``normal_matvec``
        ``K(X, C)``, shape (n, m) (for Dask input, ``DaskKernelOperator``).
    K_mm : ndarray of shape (m, m)
    Y : ndarray of shape (n, k)
    lam : float
        The ridge (> 0). Kernel ridge's ``alpha`` (``||K a - y||^2 + alpha a^T K a``)
        is ``lam = alpha / n``: with every row as a centre the two agree.
    preconditioned : bool, default=True
        ``False`` runs plain CG on ``H a = K^T y / n``, for comparison.
    max_iter, tol, callback
        Of :func:`conjugate_gradient`; ``tol`` bounds the relative residual of the
        (preconditioned) system, and ``callback`` receives the coefficients ``a``.
    x0 : ndarray of shape (m, k) or None
        Starting coefficients (a warm start).
    callback_coef : bool, default=True
        ``False`` hands the callback ``None`` for the coefficients: mapping CG's
        preconditioned variables back to them costs two ``m x m`` triangular
        solves per iteration, a third of the triangular solves an iteration makes,
        for a callback that only counts iterations.

    Returns
    -------
    KernelRidgeSolution

    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. FALKON: An optimal large scale kernel
    method. NIPS 2017, Algorithm 1.
    """
    n = K.shape[0]
    # a Dask Y stays lazy: the operator of a Dask X reads it chunk by chunk
    Y = (Y if hasattr(Y, "dask") else np.asarray(Y, dtype=np.float64)).reshape(n, -1)
    K_mm = np.asarray(K_mm, dtype=np.float64)
    rhs = K.normal_matvec(None, Y / n)
    if not preconditioned:
        def hessian(V):
            return K.normal_matvec(V) / n + lam * (K_mm @ V)

        with blas_single_thread():
            result = conjugate_gradient(hessian, rhs, x0=x0, max_iter=max_iter, tol=tol, callback=callback)
        return KernelRidgeSolution(result.x, result, None)
    # the factors on BLAS's threads, the iterations' m x m products and solves single-threaded
    # (see blas_single_thread: a threaded call's spinning workers slow the passes that follow)
    B = FalkonPreconditioner(K_mm, lam, block_epsilon(K))

    def preconditioned_hessian(U):
        # B^T (K^T K / n + lam T^T T) B U: the ridge term through T, as Falkon does, is
        # lam A^{-T} A^{-1} U, exact in the preconditioned variables; through K_mm
        # itself, the directions where K_mm's eigenvalues fall below the jitter would
        # be scaled by mu / (mu + jitter) and undo the preconditioning
        inner = scipy.linalg.solve_triangular(B.A, U, lower=False, check_finite=False)
        V = scipy.linalg.solve_triangular(B.T, inner, lower=False, check_finite=False)
        image = scipy.linalg.solve_triangular(B.T, K.normal_matvec(V) / n, lower=False, trans="T", check_finite=False)
        return scipy.linalg.solve_triangular(B.A, image + lam * inner, lower=False, trans="T", check_finite=False)

    # CG runs on b = B^{-1} a = A T a; the caller sees coefficients a
    start = None if x0 is None else B.A @ (B.T @ np.asarray(x0, dtype=np.float64).reshape(rhs.shape))
    report = None if callback is None else (
        lambda it, residual, b: callback(it, residual, B.apply(b) if callback_coef else None))
    with blas_single_thread():
        result = conjugate_gradient(preconditioned_hessian, B.apply_transpose(rhs), x0=start,
                                    max_iter=max_iter, tol=tol, callback=report)
        return KernelRidgeSolution(B.apply(result.x), result, B)
