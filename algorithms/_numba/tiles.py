"""Register-tiled loops of the fused kernel pass, written as LLVM IR.

A kernel block ``K(X, C)`` of a few features per row is bound by its
multiply-adds, not by memory, once the accumulators stay in vector registers.
LLVM's loop vectorizer does not find that layout from scalar Numba code: it
vectorizes only innermost loops, and with the loop over features inside the loop
over centres it keeps the accumulators in memory (a load and a store per
multiply-add). The intrinsics here emit the register tile directly:
:data:`TILE_ROWS` rows times ``vectors`` SIMD vectors of consecutive centres, the
loop over features carrying the accumulators as SSA values, one broadcast per
row and one vector load of centres per step.

Every tile reads the centres packed by :func:`pack_columns`: ``(chunks, d, W)``,
chunk ``c`` holding centres ``c W ... c W + W - 1`` transposed, so that the
vector of one feature of ``W`` centres is contiguous. The tile writes its
``TILE_ROWS x W`` result to rows of a C-contiguous scratch (one row per input
row), which the kernel's element-wise epilogue then reads from cache.

The accumulations (one intrinsic each):

* ``dot``: ``bias[j] + sum_k x_k c_kj`` (a multiply-add per step);
* ``sqdist``: ``sum_k (x_k - c_kj)^2`` (exact squared distances, without the
  cancellation of ``|x|^2 + |c|^2 - 2 x.c``);
* ``l1``: ``sum_k |x_k - c_kj|``;
* ``cauchy``: ``prod_k (1 + (x_k - c_kj)^2)`` (on data scaled by ``sqrt(gamma)``).

:func:`rank_update` is the transposed product of a pass, ``out[j] += sum_r
T[r, j] U[r]``, with the ``TILE_ROWS x W`` block of ``U`` held in registers.
The vector width is the compilation target's (:data:`kernelmaps._numba.fwht.VECTOR_BITS`:
512 bits with AVX-512, 256 on an AVX2 target such as ``NUMBA_CPU_NAME=haswell``).
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, errors
from numba.extending import intrinsic

from .fwht import AVX512_TARGET, VECTOR_BITS

#: Rows of one register tile.
TILE_ROWS = 4
#: SIMD vectors of centres per row of a tile: 16 accumulators of AVX-512's 32
#: registers, 8 of AVX2's 16 (the rest hold the centres' vectors and the broadcasts).
TILE_VECTORS = 4 if AVX512_TARGET else 2
#: Most vectors per row any tile is compiled for (on AVX2 the accumulators of
#: more than :data:`TILE_VECTORS` spill: the callers never ask for them there).
MAX_VECTORS = 4


def lanes(dtype):
    """SIMD lanes of ``dtype`` in the target's widest vector."""
    return VECTOR_BITS // (8 * np.dtype(dtype).itemsize)


def tile_width(dtype, vectors=TILE_VECTORS):
    """Centres per tile: ``vectors`` SIMD vectors of ``dtype``."""
    return vectors * lanes(dtype)


def product_vectors(n_columns, dtype):
    """Vectors per row for a product with ``n_columns`` right-hand sides (at most :data:`TILE_VECTORS`)."""
    return int(min(TILE_VECTORS, max(1, -(-n_columns // lanes(dtype)))))


def pack_columns(A, dtype, width):
    """``A`` (n, d) as ``(ceil(n / width), d, width)`` chunks of ``A^T`` in ``dtype``, zero-padded."""
    n, d = A.shape
    n_pad = -(-n // width) * width
    At = np.zeros((d, n_pad), dtype=dtype)
    At[:, :n] = A.T
    return np.ascontiguousarray(At.reshape(d, n_pad // width, width).transpose(1, 0, 2))


class _IR:
    """The small vocabulary of IR the tiles are written in."""

    def __init__(self, context, builder, dtype):
        self.builder = builder
        self.i64 = ir.IntType(64)
        self.i32 = ir.IntType(32)
        self.n_lanes = VECTOR_BITS // dtype.bitwidth
        self.vec = ir.VectorType(context.get_value_type(dtype), self.n_lanes)
        self.align = dtype.bitwidth // 8
        suffix = f"v{self.n_lanes}f{dtype.bitwidth}"
        self.fma = self._function(f"llvm.fma.{suffix}", 3)
        self.fabs = self._function(f"llvm.fabs.{suffix}", 1)

    def _function(self, name, n_args):
        return cgutils.get_or_insert_function(self.builder.module, ir.FunctionType(self.vec, [self.vec] * n_args), name)

    def const(self, value):
        return ir.Constant(self.i64, value)

    def splat_constant(self, value):
        return ir.Constant(self.vec, [value] * self.n_lanes)

    def at(self, pointer, offset):
        return self.builder.gep(pointer, [offset if isinstance(offset, ir.Value) else self.const(offset)])

    def load(self, pointer, offset=0):
        address = self.builder.bitcast(self.at(pointer, offset), self.vec.as_pointer())
        return self.builder.load(address, align=self.align)

    def store(self, value, pointer, offset=0):
        address = self.builder.bitcast(self.at(pointer, offset), self.vec.as_pointer())
        self.builder.store(value, address, align=self.align)

    def broadcast(self, pointer, offset):
        scalar = self.builder.load(self.at(pointer, offset))
        lane = self.builder.insert_element(ir.Constant(self.vec, ir.Undefined), scalar, ir.Constant(self.i32, 0))
        mask = ir.Constant(ir.VectorType(self.i32, self.n_lanes), [0] * self.n_lanes)
        return self.builder.shuffle_vector(lane, ir.Constant(self.vec, ir.Undefined), mask)

    def call(self, function, *args):
        return self.builder.call(function, list(args))

    def counted_loop(self, count, carried, body, name):
        """``for i in range(count)``, carrying the SSA values ``carried`` through ``body(i, values)``.

        Returns the carried values after the loop (their initial values when ``count <= 0``).
        """
        b = self.builder
        entry = b.block
        loop = b.append_basic_block(f"{name}.loop")
        done = b.append_basic_block(f"{name}.done")
        b.cbranch(b.icmp_signed(">", count, self.const(0)), loop, done)
        b.position_at_end(loop)
        index = b.phi(self.i64)
        index.add_incoming(self.const(0), entry)
        phis = [b.phi(value.type) for value in carried]
        for phi, value in zip(phis, carried):
            phi.add_incoming(value, entry)
        updated = body(index, phis)
        following = b.add(index, self.const(1))
        latch = b.block
        index.add_incoming(following, latch)
        for phi, value in zip(phis, updated):
            phi.add_incoming(value, latch)
        b.cbranch(b.icmp_signed("<", following, count), loop, done)
        b.position_at_end(done)
        results = []
        for value, new in zip(carried, updated):
            result = b.phi(value.type)
            result.add_incoming(value, entry)
            result.add_incoming(new, latch)
            results.append(result)
        return results


def _step(code, accumulation, x, c, acc):
    """One feature's update of one accumulator vector."""
    b = code.builder
    if accumulation == "dot":
        return code.call(code.fma, x, c, acc)
    t = b.fsub(x, c)
    if accumulation == "sqdist":
        return code.call(code.fma, t, t, acc)
    if accumulation == "l1":
        return b.fadd(acc, code.call(code.fabs, t))
    return b.fmul(acc, code.call(code.fma, t, t, code.splat_constant(1.0)))  # cauchy


def _tile_codegen(accumulation, vectors):
    def codegen(context, builder, signature, args):
        T_ty, _, X_ty, _, S_ty, _, bias_ty = signature.args[:7]
        T, X, S, bias = (context.make_array(ty)(context, builder, value)
                         for ty, value in zip((T_ty, X_ty, S_ty, bias_ty), (args[0], args[2], args[4], args[6])))
        t_row, x_row, chunk = (context.cast(builder, args[i], signature.args[i], types.intp) for i in (1, 3, 5))
        code = _IR(context, builder, T_ty.dtype)
        width = vectors * code.n_lanes
        t_stride = cgutils.unpack_tuple(builder, T.shape, 2)[1]
        d = cgutils.unpack_tuple(builder, X.shape, 2)[1]
        # a chunk of S is S.shape[1] steps long, which a product over kept kernel rows (X: the m
        # centres' values, S: the right-hand sides padded to more) does not share with X's rows
        chunk_steps = cgutils.unpack_tuple(builder, S.shape, 3)[1]
        first = builder.mul(chunk, code.const(width))
        chunk_base = code.at(S.data, builder.mul(first, chunk_steps))
        if accumulation == "dot":
            start = [code.load(bias.data, builder.add(first, code.const(v * code.n_lanes))) for v in range(vectors)]
        else:
            start = [code.splat_constant(1.0 if accumulation == "cauchy" else 0.0)] * vectors
        x_rows = [code.at(X.data, builder.mul(builder.add(x_row, code.const(r)), d)) for r in range(TILE_ROWS)]

        def body(k, values):
            centres = code.at(chunk_base, builder.mul(k, code.const(width)))
            c = [code.load(centres, v * code.n_lanes) for v in range(vectors)]
            out = []
            for r in range(TILE_ROWS):
                x = code.broadcast(x_rows[r], k)
                out.extend(_step(code, accumulation, x, c[v], values[r * vectors + v]) for v in range(vectors))
            return out

        final = code.counted_loop(d, start * TILE_ROWS, body, f"tile_{accumulation}")
        for r in range(TILE_ROWS):
            row = code.at(T.data, builder.add(builder.mul(builder.add(t_row, code.const(r)), t_stride), first))
            for v in range(vectors):
                code.store(final[r * vectors + v], row, v * code.n_lanes)
        return context.get_dummy_value()

    return codegen


def _check_arrays(name, shapes, dtype):
    if dtype not in (types.float32, types.float64):
        raise errors.TypingError(f"{name}: float32 or float64 arrays only, got {dtype}")
    for label, array, ndim in shapes:
        if not (isinstance(array, types.Array) and array.ndim == ndim and array.layout == "C"
                and array.dtype == dtype):
            raise errors.TypingError(f"{name}: {label} must be a C-contiguous {ndim}-D {dtype} array, got {array}")


def _vectors_of(name, vectors):
    if not isinstance(vectors, types.IntegerLiteral) or not 1 <= vectors.literal_value <= MAX_VECTORS:
        raise errors.TypingError(f"{name}: vectors must be an integer literal in [1, {MAX_VECTORS}], got {vectors}")
    return vectors.literal_value


def _tile_intrinsic(accumulation):
    name = f"{accumulation}_tile"

    def typer(typingctx, T, t_row, X, x_row, S, chunk, bias, vectors):
        _check_arrays(name, (("T", T, 2), ("X", X, 2), ("S", S, 3), ("bias", bias, 1)), T.dtype)
        n_vectors = _vectors_of(name, vectors)
        return types.void(T, t_row, X, x_row, S, chunk, bias, vectors), _tile_codegen(accumulation, n_vectors)

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = (f"``T[t_row + r, c W:(c + 1) W]`` <- the ``{accumulation}`` accumulation of rows "
                     "``X[x_row + r]`` (r < TILE_ROWS) against chunk ``c`` of the packed centres ``S``, "
                     "``W = vectors`` SIMD vectors (``bias`` is read by ``dot`` only), over the first "
                     "``X.shape[1] <= S.shape[1]`` steps of the chunk. Nothing is checked at run time: the "
                     "caller keeps every index in range.")
    return intrinsic(typer)


dot_tile = _tile_intrinsic("dot")
sqdist_tile = _tile_intrinsic("sqdist")
l1_tile = _tile_intrinsic("l1")
cauchy_tile = _tile_intrinsic("cauchy")


def _rank_update_codegen(vectors):
    def codegen(context, builder, signature, args):
        out_ty, T_ty, _, U_ty = signature.args[:4]
        out, T, U = (context.make_array(ty)(context, builder, value)
                     for ty, value in zip((out_ty, T_ty, U_ty), (args[0], args[1], args[3])))
        t_row, u_row, chunk = (context.cast(builder, args[i], signature.args[i], types.intp) for i in (2, 4, 5))
        code = _IR(context, builder, out_ty.dtype)
        width = vectors * code.n_lanes
        m, out_stride = cgutils.unpack_tuple(builder, out.shape, 2)
        t_stride = cgutils.unpack_tuple(builder, T.shape, 2)[1]
        u_stride = cgutils.unpack_tuple(builder, U.shape, 2)[1]
        first = builder.mul(chunk, code.const(width))
        held = []
        for r in range(TILE_ROWS):
            row = code.at(U.data, builder.add(builder.mul(builder.add(u_row, code.const(r)), u_stride), first))
            held.append([code.load(row, v * code.n_lanes) for v in range(vectors)])
        t_rows = [code.at(T.data, builder.mul(builder.add(t_row, code.const(r)), t_stride)) for r in range(TILE_ROWS)]

        def body(j, values):
            row = code.at(out.data, builder.add(builder.mul(j, out_stride), first))
            acc = [code.load(row, v * code.n_lanes) for v in range(vectors)]
            for r in range(TILE_ROWS):
                t = code.broadcast(t_rows[r], j)
                acc = [code.call(code.fma, t, held[r][v], acc[v]) for v in range(vectors)]
            for v in range(vectors):
                code.store(acc[v], row, v * code.n_lanes)
            return []

        code.counted_loop(m, [], body, "rank_update")
        return context.get_dummy_value()

    return codegen


@intrinsic
def rank_update(typingctx, out, T, t_row, U, u_row, chunk, vectors):
    """``out[j, c W:(c + 1) W] += sum_r T[t_row + r, j] U[u_row + r, c W:(c + 1) W]`` for every row ``j`` of ``out``.

    ``W = vectors`` SIMD vectors; ``r < TILE_ROWS``. The ``TILE_ROWS x W`` block of
    ``U`` stays in registers while ``out`` and ``T`` stream past. Nothing is
    checked at run time.
    """
    _check_arrays("rank_update", (("out", out, 2), ("T", T, 2), ("U", U, 2)), out.dtype)
    n_vectors = _vectors_of("rank_update", vectors)
    return types.void(out, T, t_row, U, u_row, chunk, vectors), _rank_update_codegen(n_vectors)
