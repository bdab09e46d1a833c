"""The fast Walsh-Hadamard transform (FWHT) shared by every Hadamard-based map.

``H_n`` is the unnormalized Sylvester-Hadamard matrix (``H_1 = [1]``,
``H_2k = [[H_k, H_k], [H_k, -H_k]]``, ``H_n H_n = n I``), as in
``scipy.linalg.hadamard``. A row ``x`` of length ``n = 2**k`` becomes ``H_n x`` in
``n log2 n`` additions.

Layout of the kernels (each works in place on one row, serially, without the GIL,
so that the feature maps can call them on their row blocks):

* the first stages, up to :data:`REGISTER_BLOCK` elements, run in vector
  registers (:func:`register_butterflies`): LLVM IR written directly with
  shuffles for the stages inside a 512-bit vector, because LLVM does not
  vectorize those stages from scalar code (they pair neighbouring lanes);
* the next stages run as radix-4 and radix-8 passes (two or three stages per
  sweep of memory, one load and one store per element), whose inner loop over
  contiguous elements vectorizes (see ``_stages`` for the choice of radix);
* rows longer than :data:`CACHE_BLOCK` elements are transformed block by block
  up to the block size while the block is in L1, then the remaining (long-
  stride) stages sweep the whole row, three stages at a time.

:func:`fwht_row` is inlined into its callers: a call per short row cost more
than the transform (25 ns against 2 ns per row of 16).

References
----------
Fino, B. J. and Algazi, V. R. Unified matrix treatment of the fast Walsh-Hadamard
transform. IEEE Transactions on Computers, 1976.
Le, Q., Sarlós, T. and Smola, A. Fastfood: approximating kernel expansions in
loglinear time. ICML 2013 (the transform's use in feature maps).
"""

import math

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import errors
from numba.extending import intrinsic

from .fastmath import FASTMATH

__all__ = ["fwht"]


def _target_has_avx512():
    """Whether the code Numba generates here may use AVX-512 (its 32 vector
    registers): the target's features, ``NUMBA_CPU_FEATURES`` or the host's, as
    Numba itself passes them to LLVM."""
    from llvmlite import binding
    from numba.core import config

    features = config.CPU_FEATURES
    if features is None:
        features = binding.get_host_cpu_features().flatten()
    return "+avx512f" in features.split(",")


#: Whether the compilation target has AVX-512 (32 vector registers of 512 bits).
AVX512_TARGET = _target_has_avx512()
#: Rows longer than this many elements are transformed in cache-sized blocks first.
CACHE_BLOCK = 2048
#: Elements transformed in registers before the passes over memory begin: as many
#: as the target's register file holds with room for the shuffles. 128 elements
#: are 16 zmm registers of AVX-512's 32, but 32 ymm registers (float64) on an
#: AVX2 target, which has 16: there they spilled, and float64 ran at 0.69-0.96x
#: FFHT's speed (AMD EPYC znver3, n = 2^8..2^16, one thread) against 1.08-1.24x
#: with 64 elements (float32 1.05-1.28x and 1.09-1.44x).
REGISTER_BLOCK = 128 if AVX512_TARGET else 64
#: Largest supported row length.
MAX_LOG2 = 30
#: Width of the target's widest SIMD register: :func:`register_butterflies`
#: works on vectors of this many bits (LLVM splits wider ones into legal widths).
VECTOR_BITS = 512 if AVX512_TARGET else 256


def _register_butterfly_codegen(size, lanes):
    """LLVM IR builder of the in-register transform of ``size`` elements."""
    n_vectors = size // lanes

    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args[:2]
        array = context.make_array(array_type)(context, builder, args[0])
        index = context.cast(builder, args[1], index_type, types.intp)
        element = context.get_value_type(array_type.dtype)
        vector = ir.VectorType(element, lanes)
        first = builder.bitcast(builder.gep(array.data, [index]), vector.as_pointer())
        pointers = [builder.gep(first, [ir.Constant(ir.IntType(64), v)]) for v in range(n_vectors)]
        # rows are only guaranteed element-aligned
        align = array_type.dtype.bitwidth // 8
        vectors = [builder.load(pointer, align=align) for pointer in pointers]
        # stages inside a vector: lane j pairs with lane j ^ h; the lane with bit h set
        # keeps the difference, so  out = v * (+1 | -1) + swap(v)  (exact: the product is by ±1)
        h = 1
        while h < lanes:
            swap = ir.Constant(ir.VectorType(ir.IntType(32), lanes), [j ^ h for j in range(lanes)])
            sign = ir.Constant(vector, [-1.0 if j & h else 1.0 for j in range(lanes)])
            vectors = [builder.fadd(builder.fmul(v, sign), builder.shuffle_vector(v, v, swap))
                       for v in vectors]
            h *= 2
        # stages across vectors: plain vector additions and subtractions
        h = 1
        while h < n_vectors:
            pairs = list(vectors)
            for a in range(n_vectors):
                if not a & h:
                    pairs[a] = builder.fadd(vectors[a], vectors[a + h])
                    pairs[a + h] = builder.fsub(vectors[a], vectors[a + h])
            vectors = pairs
            h *= 2
        for pointer, v in zip(pointers, vectors):
            builder.store(v, pointer, align=align)
        return context.get_dummy_value()

    return codegen


@intrinsic
def register_butterflies(typingctx, x, start, size):
    """``x[start:start + size] <- H_size x[start:start + size]``, held in vector registers.

    ``size`` (a compile-time power of two) elements are loaded as vectors of up to
    512 bits; the stages shorter than a vector pair lanes by a shuffle and a
    multiply-add with a ±1 vector, the longer ones add and subtract whole vectors.
    LLVM does not find this from scalar code, because the stages ``h < 8`` of a
    row pair neighbouring elements of one vector.

    Parameters
    ----------
    x : 1-D C-contiguous float32 or float64 array, modified in place
    start : integer index of the first element; ``start + size <= len(x)``
        (not checked)
    size : integer literal, a power of two

    References
    ----------
    Fino, B. J. and Algazi, V. R. Unified matrix treatment of the fast
    Walsh-Hadamard transform. IEEE Transactions on Computers, 1976.
    """
    if not (isinstance(x, types.Array) and x.ndim == 1 and x.layout == "C"
            and x.dtype in (types.float32, types.float64)):
        raise errors.TypingError(f"register_butterflies needs a 1-D C-contiguous float array, got {x}")
    if not isinstance(start, types.Integer):
        raise errors.TypingError(f"register_butterflies needs an integer start, got {start}")
    if not isinstance(size, types.IntegerLiteral) or size.literal_value < 2 \
            or size.literal_value & (size.literal_value - 1):
        raise errors.TypingError(f"register_butterflies needs a literal power-of-two size, got {size}")
    size = size.literal_value
    lanes = min(size, VECTOR_BITS // x.dtype.bitwidth)
    return types.void(x, start, types.literal(size)), _register_butterfly_codegen(size, lanes)


# The passes below address each of their 2, 4 or 8 strided streams through its own
# slice view indexed from 0: LLVM then sees non-negative indices (no wraparound
# selects) and few enough pointer pairs to vectorize behind runtime alias checks,
# which it does not do for ``x[j + k h]`` with a run-time ``h``.
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _radix8(x, start, stop, h):
    # stages h, 2h, 4h of x[start:stop], one load and one store per element
    for i in range(start, stop, 8 * h):
        s0 = x[i:i + h]
        s1 = x[i + h:i + 2 * h]
        s2 = x[i + 2 * h:i + 3 * h]
        s3 = x[i + 3 * h:i + 4 * h]
        s4 = x[i + 4 * h:i + 5 * h]
        s5 = x[i + 5 * h:i + 6 * h]
        s6 = x[i + 6 * h:i + 7 * h]
        s7 = x[i + 7 * h:i + 8 * h]
        for k in range(h):
            a0 = s0[k] + s1[k]
            a1 = s0[k] - s1[k]
            a2 = s2[k] + s3[k]
            a3 = s2[k] - s3[k]
            a4 = s4[k] + s5[k]
            a5 = s4[k] - s5[k]
            a6 = s6[k] + s7[k]
            a7 = s6[k] - s7[k]
            b0 = a0 + a2
            b2 = a0 - a2
            b1 = a1 + a3
            b3 = a1 - a3
            b4 = a4 + a6
            b6 = a4 - a6
            b5 = a5 + a7
            b7 = a5 - a7
            s0[k] = b0 + b4
            s4[k] = b0 - b4
            s1[k] = b1 + b5
            s5[k] = b1 - b5
            s2[k] = b2 + b6
            s6[k] = b2 - b6
            s3[k] = b3 + b7
            s7[k] = b3 - b7


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _radix4(x, start, stop, h):
    for i in range(start, stop, 4 * h):
        s0 = x[i:i + h]
        s1 = x[i + h:i + 2 * h]
        s2 = x[i + 2 * h:i + 3 * h]
        s3 = x[i + 3 * h:i + 4 * h]
        for k in range(h):
            a0 = s0[k] + s1[k]
            a1 = s0[k] - s1[k]
            a2 = s2[k] + s3[k]
            a3 = s2[k] - s3[k]
            s0[k] = a0 + a2
            s2[k] = a0 - a2
            s1[k] = a1 + a3
            s3[k] = a1 - a3


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _radix2(x, start, stop, h):
    for i in range(start, stop, 2 * h):
        s0 = x[i:i + h]
        s1 = x[i + h:i + 2 * h]
        for k in range(h):
            a = s0[k]
            b = s1[k]
            s0[k] = a + b
            s1[k] = a - b


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _stages(x, start, stop, h, end):
    """Butterfly stages ``h, 2h, ...`` below ``end`` on ``x[start:stop]``.

    Called with ``h >= REGISTER_BLOCK``: the shorter stages are done in registers.
    """
    while h < end:
        left = 0  # stages still to do: log2(end / h)
        r = end // h
        while r > 1:
            r >>= 1
            left += 1
        if left == 1:
            _radix2(x, start, stop, h)
            h *= 2
        elif left == 2 or left == 4:
            # four stages left: two radix-4 passes, not radix-8 and then a radix-2
            # pass, which would sweep the whole memory for one stage
            _radix4(x, start, stop, h)
            h *= 4
        else:
            _radix8(x, start, stop, h)
            h *= 8


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def _register_row(x):
    # a whole row of at most REGISTER_BLOCK (128 or 64) elements in registers;
    # the size must be a literal, hence one branch per power of two
    n = x.shape[0]
    if n == 128 and REGISTER_BLOCK >= 128:
        register_butterflies(x, 0, 128)
    elif n == 64:
        register_butterflies(x, 0, 64)
    elif n == 32:
        register_butterflies(x, 0, 32)
    elif n == 16:
        register_butterflies(x, 0, 16)
    elif n == 8:
        register_butterflies(x, 0, 8)
    elif n == 4:
        register_butterflies(x, 0, 4)
    elif n == 2:
        register_butterflies(x, 0, 2)


@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def fwht_row(x):
    """In place, ``x <- H_n x`` for one contiguous 1-D row of length ``n = 2**k``.

    Serial and ``nogil``: the building block the feature maps call inside their
    row blocks. The length is not checked here (see :func:`fwht`).

    Parameters
    ----------
    x : ndarray of shape (n,), float32 or float64, C-contiguous

    References
    ----------
    Fino, B. J. and Algazi, V. R. Unified matrix treatment of the fast
    Walsh-Hadamard transform. IEEE Trans. Computers, 1976.
    """
    n = x.shape[0]
    if n <= REGISTER_BLOCK:
        _register_row(x)
        return
    block = min(n, CACHE_BLOCK)
    for b in range(0, n, block):
        for i in range(b, b + block, REGISTER_BLOCK):
            register_butterflies(x, i, REGISTER_BLOCK)
        _stages(x, b, b + block, REGISTER_BLOCK, block)
    if n > block:
        _stages(x, 0, n, block, n)


@njit(cache=True, nogil=True, parallel=True, fastmath=FASTMATH)
def _fwht_rows_parallel(X, scale):
    """In place, every row of the 2-D ``X`` becomes ``scale * H_n row``, rows in
    parallel; ``scale == 1`` skips the scaling pass."""
    for i in prange(X.shape[0]):
        row = X[i]
        fwht_row(row)
        if scale != 1:
            for j in range(row.shape[0]):
                row[j] *= scale


def check_power_of_two(n, name="n_features"):
    """Reject a length that is not a power of two between 2 and 2**MAX_LOG2."""
    if n < 2 or n & (n - 1) or n > 2**MAX_LOG2:
        raise ValueError(f"{name} must be a power of two between 2 and 2**{MAX_LOG2}, got {n}")


def next_power_of_two(n):
    """Smallest power of two >= max(n, 2)."""
    return 1 << max(1, math.ceil(math.log2(max(n, 2))))


def fwht(X, normalize=False):
    """Fast Walsh-Hadamard transform of each row of ``X``, in place.

    Every row ``x`` becomes ``H_n x`` (``normalize=False``, the matrix of
    ``scipy.linalg.hadamard(n)``) or ``H_n x / sqrt(n)`` (``normalize=True``, an
    orthogonal transform). Rows run in parallel on Numba's threads.

    Parameters
    ----------
    X : ndarray of shape (m, n)
        float32 or float64, C-contiguous and writeable; ``n`` a power of two in
        ``[2, 2**30]``.
    normalize : bool, default=False
        Divide by ``sqrt(n)``, which makes the transform orthogonal.

    Returns
    -------
    X : ndarray of shape (m, n)
        The same array, transformed.

    Raises
    ------
    TypeError
        If ``X`` is not a NumPy array of float32 or float64.
    ValueError
        If ``X`` is not 2-D, not C-contiguous, read-only, or its width is not a
        power of two.

    References
    ----------
    Fino, B. J. and Algazi, V. R. Unified matrix treatment of the fast
    Walsh-Hadamard transform. IEEE Transactions on Computers, 1976.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import fwht
    >>> X = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> fwht(X)
    array([[10., -2., -4.,  0.]])
    >>> X  # transformed in place
    array([[10., -2., -4.,  0.]])
    >>> fwht(X, normalize=True)  # H H = n I: back to the input, times sqrt(n) = 2
    array([[2., 4., 6., 8.]])
    """
    if not isinstance(X, np.ndarray):
        raise TypeError(f"fwht needs a numpy.ndarray, got {type(X).__name__}")
    if X.dtype not in (np.float32, np.float64):
        raise TypeError(f"fwht needs a float32 or float64 array, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"fwht needs a 2-D array (rows are transformed), got {X.ndim}-D")
    if not X.flags.c_contiguous:
        raise ValueError("fwht works in place and needs a C-contiguous array: pass np.ascontiguousarray(X)")
    if not X.flags.writeable:
        raise ValueError("fwht works in place and needs a writeable array")
    check_power_of_two(X.shape[1], "the width of X")
    scale = X.dtype.type(1.0 / math.sqrt(X.shape[1]) if normalize else 1.0)
    if X.shape[0]:
        _fwht_rows_parallel(X, scale)
    return X


# ------------------------------------------------------------------ helpers
@njit(cache=True, nogil=True, fastmath=FASTMATH, inline="always")
def load_signed(x, signs, buf):
    """``buf <- [x * signs[:len(x)], 0, ..., 0]``: a row, sign-flipped and zero-padded."""
    d = x.shape[0]
    for k in range(d):
        buf[k] = x[k] * signs[k]
    for k in range(d, buf.shape[0]):
        buf[k] = 0

