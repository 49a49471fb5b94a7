"""The int8 kernel behind `krnl.qmatmul` (dialects/krnl_int8.py), as explicit LLVM vector IR.

    for each batch triple:
      on the thread pool (enough work), each thread taking a contiguous range of the grid of
      row tiles x column tiles (tile_grid.py; B is packed before: nothing to share):
      for jr in its columns, step nr:             # a column tile: K4 x nr x 4 bytes of B
        for each of its row tiles of mr rows, in blocks of `rows` rows:
          micro-kernel: rows x nv accumulators over the K4 groups of 4 products, each step
            nv vector loads of B, one 4-byte broadcast of A per row, rows * nv dot products
          epilogue: + offset, * multiplier (float32), round half to even, + zero point,
            clamp, narrow to bytes, a masked store of each vector; for a C of int32, a
            masked store of the sums plus offsets; a transposed C (a conv's NCHW output,
            its channels the columns) by scatters, 4 rows of bytes at a time
The last row tile and the last column tile compute just the rows and vectors left.

The dot product of a step, by target:
- x86 with AVX512-VNNI: `vpdpbusd` on zmm (16 columns per vector, 4 products per lane);
  with AVX-VNNI (no AVX-512): the same on ymm;
- anywhere else (AVX2, ppc64le, s390x): portable vector IR. Bytes widen to int32 and
  multiply; adjacent pairs of products add (x86 makes it `vpmaddwd`), so each column keeps
  two partial lanes, added in the epilogue. Exact: a pair of u8 x s8 products fits int32.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from onnxc.codegen.function_translator import FunctionTranslator, emits
from onnxc.codegen.llvm_idioms import (
    counted_loop,
    internal_function,
    parallel_for,
    stack_struct,
    store_fields,
    thread_pool_slice,
)
from onnxc.codegen.llvm_types import F32, I8, I32, I64, PTR
from onnxc.codegen.parallel import MIN_PARALLEL_WORK
from onnxc.codegen.target import Target
from onnxc.codegen.tile_grid import product_rectangles
from onnxc.dialects.krnl_int8 import QMATMUL_COLUMN_PAD, QMatmulOp, panel_pitch

MIN_CHAINS = 8
"""Independent accumulators a micro-kernel keeps at least: a dot product's latency (5 cycles
for vpdpbusd) over its throughput, with margin."""
VNNI_512_CPUS = {
    "icelake-client", "icelake-server", "tigerlake", "cascadelake", "cooperlake", "rocketlake",
    "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids", "znver4", "znver5",
}  # fmt: skip
VNNI_256_CPUS = {
    "alderlake",
    "raptorlake",
    "meteorlake",
    "arrowlake",
    "arrowlake-s",
    "lunarlake",
    "gracemont",
    "sierraforest",
}


def dot_product_kind(target: Target) -> str:
    """'vnni512', 'vnni256' or 'portable': from the features of a host build, else the CPU name."""
    if target.arch != "x86_64":
        return "portable"
    features = target.features
    if features:
        if "+avx512vnni" in features and "+avx512bw" in features:
            return "vnni512"
        return "vnni256" if "+avxvnni" in features else "portable"
    if target.cpu in VNNI_512_CPUS:
        return "vnni512"
    return "vnni256" if target.cpu in VNNI_256_CPUS else "portable"


@dataclass(frozen=True)
class QGemmShape:
    """Columns per vector (int32 lanes of the result), vectors per tile, rows per micro-kernel."""

    kind: str
    lanes: int
    vectors: int
    rows: int

    @staticmethod
    def of(target: Target) -> QGemmShape:
        kind = dot_product_kind(target)
        if kind == "vnni512":
            return QGemmShape(kind, 16, 2, 12)  # 24 of 32 zmm accumulate
        if kind == "vnni256":
            return QGemmShape(kind, 8, 2, 6)  # 12 of 16 ymm
        if target.arch == "x86_64":
            return QGemmShape(kind, 8, 1, 6)  # 2 ymm of partial lanes per accumulator
        return QGemmShape(kind, 4, 2, 6 if target.arch == "ppc64le" else 3)


def _sum(b: ir.IRBuilder, values: list[ir.Value]) -> ir.Value:
    total = values[0]
    for value in values[1:]:
        total = b.add(total, value)
    return total


def _c(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


class QGemmEmitter:
    def __init__(self, t: FunctionTranslator, op: QMatmulOp):
        self.t = t
        self.op = op
        self.module = t.parent.module
        self.declare = t.parent.declare
        self.shape = QGemmShape.of(t.parent.target)
        self.m, self.n, self.k4 = op.m_n_k4
        self.mr = op.row_tile.value.data
        s = self.shape
        self.partial = 1 if s.kind != "portable" else 2  # int32 lanes per column in an accumulator
        self.acc_type = ir.VectorType(I32, s.lanes * self.partial)
        self.bytes_type = ir.VectorType(I8, 4 * s.lanes)

    @property
    def split_rows(self) -> bool:
        """The grid of tiles the threads split (tile_grid.py) is numbered row tile first, or else
        column tile first: whichever has more tiles."""
        return self.row_tiles >= self.column_tiles

    @property
    def row_tiles(self) -> int:
        """Tiles of mr rows (A in tiles), or of at most the micro-kernel's rows (A in panels)."""
        return -(-self.m // (self.mr if self.op.a_panels is None else self.shape.rows))

    @property
    def column_tiles(self) -> int:
        return -(-self.n // (self.shape.lanes * self.shape.vectors))

    @property
    def parallel(self) -> bool:
        """Whether a product goes to the thread pool: more than one tile to split, and enough
        work to repay waking it (as for the float GEMM)."""
        return self.row_tiles * self.column_tiles > 1 and 2 * self.m * self.n * self.k4 * 4 >= MIN_PARALLEL_WORK

    def emit(self) -> None:
        t, op = self.t, self.op
        kernel = self.kernel_function()
        tables = [op.offsets] if op.multipliers is None else [op.offsets, op.multipliers]
        pointers = [t.get(v) for v in (op.a, op.b, op.c, *tables)]
        c_element = I32 if op.int32_result else I8
        context_type = ir.LiteralStructType([PTR] * len(pointers))
        slice_, context = (
            (self.slice_function(kernel, context_type), self.context_slot(context_type))
            if self.parallel
            else (None, None)
        )
        for a_offset, b_offset, c_offset in op.batch_triples:
            a, b = (t.builder.gep(p, [_c(o)], source_etype=I8) for p, o in zip(pointers, (a_offset, b_offset)))
            c = t.builder.gep(pointers[2], [_c(c_offset)], source_etype=c_element)
            if slice_ is None:
                t.builder.call(kernel, [a, b, c, *pointers[3:], _c(0), _c(self.n), _c(0), _c(self.row_tiles)])
                continue
            store_fields(t.builder, context, context_type, [a, b, c, *pointers[3:]])
            parallel_for(t.builder, self.declare, slice_, context, self.row_tiles * self.column_tiles)

    def slice_function(self, kernel: ir.Function, context_type: ir.LiteralStructType) -> ir.Function:
        """slice(context, begin, end): the kernel over the tiles [begin, end) of the grid
        (tile_grid.py), for the thread pool."""
        fn, b, pointers, begin, end = thread_pool_slice(self.module, f"{kernel.name}.slice", context_type)
        nr = self.shape.lanes * self.shape.vectors
        tiles = (_c(self.row_tiles), _c(self.column_tiles))
        product_rectangles(
            b,
            begin,
            end,
            tiles,
            self.split_rows,
            nr,
            _c(self.n),
            lambda b, *bounds: b.call(kernel, [*pointers, *bounds]),
        )
        b.ret_void()
        return fn

    def context_slot(self, context_type: ir.LiteralStructType) -> ir.Value:
        """Stack room for the thread pool's context, allocated once in the function's entry block."""
        b, block = self.t.builder, self.t.builder.block
        b.position_at_start(b.function.entry_basic_block)
        slot = stack_struct(b, context_type)
        b.position_at_end(block)
        return slot

    # ---------------------------------------------------------------- the kernel function

    def kernel_function(self) -> ir.Function:
        """kernel(a, b, c, offsets, [multipliers], columns [from, to), row tiles [from, to)): that
        part of the product."""
        name = self.module.get_unique_name(f"{self.t.builder.function.name}.qgemm")
        tables = 1 if self.op.int32_result else 2
        fn = internal_function(self.module, name, ir.FunctionType(ir.VoidType(), [PTR] * (3 + tables) + [I64] * 4))
        fn.attributes.add("noinline")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        a, b_in, c, offsets, *multipliers, first_column, column_end, row_from, row_to = fn.args
        s = self.shape
        nr = s.lanes * s.vectors
        tiles = (row_from, row_to)
        tables = (offsets, multipliers[0] if multipliers else None)
        full = self.n // nr * nr  # the columns of whole tiles; the last tile's vectors cover just the rest
        full_end = b.select(b.icmp_signed("<", column_end, _c(full)), column_end, _c(full))
        with counted_loop(b, first_column, full_end, nr, "jr") as jr:
            self.column_tile(b, a, b_in, c, tables, jr, s.vectors, tiles)
        if full < self.n:
            with b.if_then(b.icmp_signed(">", column_end, _c(full))):
                self.column_tile(b, a, b_in, c, tables, _c(full), -(-(self.n - full) // s.lanes), tiles)
        b.ret_void()
        return fn

    def column_tile(self, b, a, b_in, c, tables, jr, vectors: int, tiles) -> None:
        """The columns [jr, jr + vectors * lanes) of the row tiles [tiles) (`row_tile_sizes`)."""
        if self.op.b_blocked is not None:
            block = b.mul(b.udiv(jr, _c(QMATMUL_COLUMN_PAD)), _c(self.k4 * QMATMUL_COLUMN_PAD * 4))
            jr_bytes = b.add(block, b.mul(b.urem(jr, _c(QMATMUL_COLUMN_PAD)), _c(4)))
        else:
            jr_bytes = b.mul(jr, _c(4))
        b_tile = b.gep(b_in, [jr_bytes], source_etype=I8)
        first_tiles, first_rows, rows = self.row_tile_sizes()
        with counted_loop(b, *tiles, 1, "tile") as tile:
            if first_tiles in (0, self.row_tiles):
                size = first_rows if first_tiles else rows
                self.row_tile(b, a, b_tile, c, tables, tile, b.mul(tile, _c(size)), jr, vectors, size)
            else:
                with b.if_else(b.icmp_signed("<", tile, _c(first_tiles))) as (then, otherwise):
                    with then:
                        row0 = b.mul(tile, _c(first_rows))
                        self.row_tile(b, a, b_tile, c, tables, tile, row0, jr, vectors, first_rows)
                    with otherwise:
                        row0 = b.add(b.mul(b.sub(tile, _c(first_tiles)), _c(rows)), _c(first_tiles * first_rows))
                        self.row_tile(b, a, b_tile, c, tables, tile, row0, jr, vectors, rows)

    def row_tile_sizes(self) -> tuple[int, int, int]:
        """(n, r1, r2): the first n row tiles have r1 rows, the others r2. A in tiles: tiles of
        mr rows, the last M mod mr. A in panels: the rows split evenly into as few tiles of at
        most the micro-kernel's rows as can be (49 rows: 10, 10, 10, 10, 9; not 12, 12, 12, 12,
        1, whose one-row micro-kernel streams all of the column tile of B for 1/12 of the work:
        3x3 512 -> 512 at 7x7 in the lanes, 384 us; at 6x8, 48 rows, 319 us)."""
        if self.op.a_panels is None:
            whole, rest = divmod(self.m, self.mr)
            return whole, self.mr, rest
        base, extra = divmod(self.m, self.row_tiles)
        return extra, base + 1, base

    def row_tile(self, b, a, b_tile, c, tables, tile, row0, jr, vectors: int, rows_in_tile: int) -> None:
        """The tile's rows [row0, row0 + rows_in_tile), a micro-kernel of up to `rows` rows at a time."""
        if self.op.a_panels is not None:
            a_tile = b.gep(a, [b.mul(row0, _c(4))], source_etype=I8)
        else:
            a_tile = b.gep(a, [b.mul(tile, _c(self.k4 * self.mr * 4))], source_etype=I8)
        for first in range(0, rows_in_tile, self.shape.rows):
            rows = min(self.shape.rows, rows_in_tile - first)
            accumulators = self.micro_kernel(b, b.gep(a_tile, [_c(first * 4)], source_etype=I8), b_tile, rows, vectors)
            self.epilogue(b, accumulators, c, *tables, b.add(row0, _c(first)), jr)

    def micro_kernel(
        self, b: ir.IRBuilder, a: ir.Value, b_tile: ir.Value, rows: int, vectors: int
    ) -> list[list[ir.Value]]:
        """rows x vectors accumulators over the K4 groups: A's row r at a + k4*(mr or, with
        `a_panels`, panel_pitch(M))*4 + r*4, B's vector v at b_tile + k4*(panel_pitch(N) or,
        with `b_blocked`, 64)*4 + v*lanes*4. A tile of fewer than MIN_CHAINS accumulators (a
        product of one row: an LSTM's step) keeps several sets of them, each taking every
        sets-th group, added at the end (exact): one set waits on the dot product's latency."""
        tile = rows * vectors
        sets = -(-MIN_CHAINS // tile) if tile < MIN_CHAINS else 1
        whole = self.k4 - self.k4 % sets
        partial = self.k4_loop(b, a, b_tile, rows, vectors, 0, whole, sets)
        if whole < self.k4:
            partial[0] = self.k4_loop(b, a, b_tile, rows, vectors, whole, self.k4, 1, partial[0])[0]
        return [[_sum(b, [p[r][v] for p in partial]) for v in range(vectors)] for r in range(rows)]

    def k4_loop(self, b, a, b_tile, rows: int, vectors: int, start: int, stop: int, sets: int, initial=None):
        """`sets` sets of rows x vectors accumulators (from `initial`'s, else zero) over the K4
        groups [start, stop), set u taking the groups start + u, start + u + sets, ..."""
        s = self.shape
        entry = b.block
        header, body, exit_ = (b.append_basic_block(f"k4.{part}") for part in ("header", "body", "exit"))
        b.branch(header)
        b.position_at_end(header)
        k4 = b.phi(I64, "k4")
        k4.add_incoming(_c(start), entry)
        accumulators = [[[b.phi(self.acc_type) for _ in range(vectors)] for _ in range(rows)] for _ in range(sets)]
        for u, rows_of_set in enumerate(accumulators):
            for r, row in enumerate(rows_of_set):
                for v, phi in enumerate(row):
                    phi.add_incoming(initial[r][v] if initial else ir.Constant(self.acc_type, None), entry)
        b.cbranch(b.icmp_signed("<", k4, _c(stop)), body, exit_)
        b.position_at_end(body)
        b_step = QMATMUL_COLUMN_PAD * 4 if self.op.b_blocked is not None else panel_pitch(self.n) * 4
        a_step = panel_pitch(self.m) * 4 if self.op.a_panels is not None else self.mr * 4
        updates = []
        for u in range(sets):
            group_index = b.add(k4, _c(u), flags=["nsw"])
            b_row = b.gep(b_tile, [b.mul(group_index, _c(b_step))], source_etype=I8)
            b_vectors = [
                b.load(b.gep(b_row, [_c(v * s.lanes * 4)], source_etype=I8), typ=self.bytes_type, align=1)
                for v in range(vectors)
            ]
            a_row = b.gep(a, [b.mul(group_index, _c(a_step))], source_etype=I8)
            for r in range(rows):
                group = b.load(b.gep(a_row, [_c(r * 4)], source_etype=I8), typ=I32, align=1)
                broadcast = self.splat(b, group, ir.VectorType(I32, s.lanes))
                for v in range(vectors):
                    updates.append((accumulators[u][r][v], self.dot(b, accumulators[u][r][v], broadcast, b_vectors[v])))
        for phi, updated in updates:
            phi.add_incoming(updated, b.block)
        k4.add_incoming(b.add(k4, _c(sets), flags=["nsw"]), b.block)
        b.branch(header)
        b.position_at_end(exit_)
        return accumulators

    def dot(self, b: ir.IRBuilder, acc: ir.Value, broadcast: ir.Value, b_bytes: ir.Value) -> ir.Value:
        """acc + the dot products of 4-byte groups: A's group (broadcast) with each of B's."""
        s, a_signed = self.shape, self.op.a_signed is not None
        if s.kind != "portable":
            words = ir.VectorType(I32, s.lanes)
            b_words = b.bitcast(b_bytes, words)
            unsigned, signed = (b_words, broadcast) if a_signed else (broadcast, b_words)
            name = f"llvm.x86.avx512.vpdpbusd.{32 * s.lanes}"
            return b.call(self.declare(name, words, [words] * 3), [acc, unsigned, signed])
        wide = ir.VectorType(I32, 4 * s.lanes)
        a_bytes = b.bitcast(broadcast, self.bytes_type)
        a_wide = b.sext(a_bytes, wide) if a_signed else b.zext(a_bytes, wide)
        b_wide = b.zext(b_bytes, wide) if a_signed else b.sext(b_bytes, wide)
        products = b.mul(a_wide, b_wide)
        return b.add(acc, self.pairs_added(b, products, 2 * s.lanes))

    def pairs_added(self, b: ir.IRBuilder, vector: ir.Value, count: int) -> ir.Value:
        """Lanes 2j and 2j+1 of `vector` added, for j < count."""
        undef = ir.Constant(vector.type, None)
        even = b.shuffle_vector(vector, undef, ir.Constant(ir.VectorType(I32, count), list(range(0, 2 * count, 2))))
        odd = b.shuffle_vector(vector, undef, ir.Constant(ir.VectorType(I32, count), list(range(1, 2 * count, 2))))
        return b.add(even, odd)

    def splat(self, b: ir.IRBuilder, scalar: ir.Value, vector_type: ir.VectorType) -> ir.Value:
        undef = ir.Constant(vector_type, None)
        single = b.insert_element(undef, scalar, ir.Constant(I32, 0))
        return b.shuffle_vector(
            single, undef, ir.Constant(ir.VectorType(I32, vector_type.count), [0] * vector_type.count)
        )

    # ---------------------------------------------------------------- requantization

    def epilogue(self, b, accumulators, c, offsets, multipliers, row0, jr) -> None:
        """Each row's vectors plus their offsets, requantized to bytes (or, with no
        `multipliers`, as int32), stored masked to the columns below N (rows row0 + r, all
        below M)."""
        s, op = self.shape, self.op
        lanes = s.lanes
        ints, floats = ir.VectorType(I32, lanes), ir.VectorType(F32, lanes)
        stored = ints if multipliers is None else ir.VectorType(I8, lanes)
        per_column = op.per_column is not None
        values = []
        for r, row in enumerate(accumulators):
            m = b.add(row0, _c(r))
            if not per_column:
                offset = self.splat(b, b.load(b.gep(offsets, [m], source_etype=I32), typ=I32), ints)
                if multipliers is not None:
                    scale = self.splat(b, b.load(b.gep(multipliers, [m], source_etype=F32), typ=F32), floats)
            values.append([])
            for v, acc in enumerate(row):
                column = b.add(jr, _c(v * lanes))
                if per_column:
                    offset = b.load(b.gep(offsets, [column], source_etype=I32), typ=ints, align=4)
                    if multipliers is not None:
                        scale = b.load(b.gep(multipliers, [column], source_etype=F32), typ=floats, align=4)
                sums = acc if self.partial == 1 else self.pairs_added(b, acc, lanes)
                value = b.add(sums, offset)
                values[-1].append(value if multipliers is None else self.requantized(b, value, scale))
        if op.transposed_c is not None:
            self.store_transposed(b, values, c, row0, jr, bytes_=multipliers is not None)
            return
        for r, row in enumerate(values):
            for v, value in enumerate(row):
                column = b.add(jr, _c(v * lanes))
                at = b.add(b.mul(b.add(row0, _c(r)), _c(op.ldc.value.data)), column)
                self.masked_store(
                    b, value, b.gep(c, [at], source_etype=stored.element), self.lane_mask(b, column, lanes)
                )

    def masked_store(self, b, value: ir.Value, pointer: ir.Value, mask: ir.Value) -> None:
        """value (int32 lanes) at pointer, as int32 or (C of bytes) narrowed to bytes, in the
        lanes of mask. With AVX-512 bytes go by vpmovdb's intrinsic: LLVM 22 stores a trunc
        whose masked store keeps one constant lane as 4 bytes (vmovss), past the row's end
        (the last vector of N = 16k + 1 columns)."""
        lanes = value.type.count
        if self.op.int32_result:
            name, stored = f"llvm.masked.store.v{lanes}i32.p0", value
        elif self.shape.kind == "vnni512":
            store = self.declare(
                "llvm.x86.avx512.mask.pmov.db.mem.512", ir.VoidType(), [PTR, value.type, ir.IntType(16)]
            )
            b.call(store, [pointer, value, b.bitcast(mask, ir.IntType(16))])
            return
        else:
            name, stored = f"llvm.masked.store.v{lanes}i8.p0", b.trunc(value, ir.VectorType(I8, lanes))
        store = self.declare(name, ir.VoidType(), [stored.type, PTR, I32, mask.type])
        b.call(store, [stored, pointer, ir.Constant(I32, stored.type.element.width // 8), mask])

    def store_transposed(self, b, values, c, row0, jr, *, bytes_: bool) -> None:
        """values[r][v] (lane j: C[row0 + r, jr + v*lanes + j]) at c[n*ldc + m]: a scatter per
        vector, each lane to another column's row of C. Bytes go 4 rows at a time, the lanes
        of 4 consecutive rows interleaved into one int32 per column (a scatter of words: 3 per
        12 rows rather than 12 of bytes); rows left over (fewer than 4) go one by one."""
        lanes, ldc = self.shape.lanes, self.op.ldc.value.data
        element, group = (I8, 4) if bytes_ else (I32, 1)
        for v in range(len(values[0])):
            column = b.add(jr, _c(v * lanes))
            mask = self.lane_mask(b, column, lanes)
            i64s = ir.VectorType(I64, lanes)
            columns = b.add(self.splat(b, column, i64s), ir.Constant(i64s, list(range(lanes))))
            lane_starts = b.add(b.mul(columns, ir.Constant(i64s, [ldc] * lanes)), self.splat(b, row0, i64s))
            r = 0
            while r < len(values):
                count = group if r + group <= len(values) else 1
                value = self.interleaved(b, [self.narrow(b, values[r + i][v], bytes_) for i in range(count)])
                at = b.add(lane_starts, ir.Constant(i64s, [r] * lanes))
                pointers = b.gep(c, [at], source_etype=element)
                pointers.type = ir.VectorType(PTR, lanes)  # llvmlite types a GEP of vector indices as one pointer
                name = f"llvm.masked.scatter.v{lanes}i{value.type.element.width}.v{lanes}p0"
                scatter = self.declare(name, ir.VoidType(), [value.type, pointers.type, I32, mask.type])
                b.call(scatter, [value, pointers, ir.Constant(I32, 1 if group > 1 else element.width // 8), mask])
                r += count

    @staticmethod
    def narrow(b, value: ir.Value, bytes_: bool) -> ir.Value:
        return b.trunc(value, ir.VectorType(I8, value.type.count)) if bytes_ else value

    @staticmethod
    def interleaved(b, vectors: list[ir.Value]) -> ir.Value:
        """One vector, or 4 byte vectors as words: lane j the bytes of lane j of each, in order
        (as memory: a bitcast, so the same bytes on either endianness)."""
        if len(vectors) == 1:
            return vectors[0]
        lanes = vectors[0].type.count
        low, high = (
            b.shuffle_vector(
                vectors[i], vectors[i + 1], ir.Constant(ir.VectorType(I32, 2 * lanes), list(range(2 * lanes)))
            )
            for i in (0, 2)
        )
        order = [i * lanes + j for j in range(lanes) for i in range(4)]
        bytes_ = b.shuffle_vector(low, high, ir.Constant(ir.VectorType(I32, 4 * lanes), order))
        return b.bitcast(bytes_, ir.VectorType(I32, lanes))

    def requantized(self, b, sums: ir.Value, scale: ir.Value) -> ir.Value:
        """round_half_even(float(sums) * scale) + zero point, clamped to `clip` (int32 lanes)."""
        lanes = self.shape.lanes
        ints, floats = ir.VectorType(I32, lanes), ir.VectorType(F32, lanes)
        # rint: the current rounding mode, to nearest even (roundeven is a libcall on ppc64le).
        round_even = self.declare(f"llvm.rint.v{lanes}f32", floats, [floats])
        zero_point = ir.Constant(ints, [self.op.zero_point.value.data] * lanes)
        value = b.fmul(b.sitofp(sums, floats), scale)
        quantized = b.add(b.fptosi(b.call(round_even, [value]), ints), zero_point)
        return self.clamp(b, quantized, *self.op.clip_bounds, ints)

    @staticmethod
    def clamp(b, value, low: int, high: int, ints) -> ir.Value:
        lows, highs = ir.Constant(ints, [low] * ints.count), ir.Constant(ints, [high] * ints.count)
        value = b.select(b.icmp_signed("<", value, lows), lows, value)
        return b.select(b.icmp_signed(">", value, highs), highs, value)

    def lane_mask(self, b, column, lanes: int) -> ir.Value:
        """Lanes column + j < N."""
        i64s = ir.VectorType(I64, lanes)
        first = self.splat(b, column, i64s)
        indices = b.add(first, ir.Constant(i64s, list(range(lanes))))
        return b.icmp_signed("<", indices, ir.Constant(i64s, [self.n] * lanes))


@emits(QMatmulOp)
def _emit_qmatmul(t: FunctionTranslator, op: QMatmulOp) -> None:
    QGemmEmitter(t, op).emit()
