"""The register-blocked SIMD kernel behind `krnl.matmul`, as explicit LLVM vector IR.

LLVM's loop vectorizer does not find a register tiling by itself (and on
ppc64le leaves loops scalar), so the kernel is written out in vectors:

    for each (a, b, c) batch offset triple:
      on the thread pool, each thread taking a contiguous range of the grid of
      row tiles x column tiles (tile_grid.py; see MatmulPlan.split_rows):
        for jc in its columns, step nc:           # column block
          for pc in [0, K) step kc:               # reduction block
            pack its B[pc:pc+kc, jc:jc+nc] into its own scratch rows of `pitch` floats
            for jr in [jc, jc+nc) step nr:        # register tile columns (kc x nr B tile in L1)
              for ir in its rows, step mr:        # register tile rows (A panels stream from L2)
                micro-kernel: mr x nr accumulators in registers over kc steps,
                each step nr/vw vector loads of B, mr broadcasts of A, mr*nr/vw FMAs

B is read from the scratch block, in place (rows of ldb floats), from the
column panels of a constant B packed at compile time (b_access "panels": a
tile wider than a panel reads one panel per vector, `panel_stride` apart), or
from a (padded) image in place (b_access "window", a stride-1 conv: row k of B
is the image shifted by that row's offset, taken from a table made here).
A is read from row panels packed at compile time, with strides, or from a
(padded) image in place (a_layout "window": row m of A is output pixel m, its
column k at the same table's offset; a tile's rows are a run of one output row,
or whole output rows, see window_tile_rows), C with it stored transposed, its
partial sums in the thread's scratch (see gemm_tile_c.py).
Each thread packs what its own tiles read into its own scratch memory (the
runtime's, runtime/support/onnxc_parallel.c): one pool job per product and
no thread waits for another's packing. Splitting by rows, every thread packs
the whole B block; splitting by columns, only its columns.

The first reduction block starts the accumulators from the bias (plus C when
accumulating), later ones from C; the last one applies the epilogue (activation, clamp) before
its store.
Columns past N are masked (full tiles take an unmasked copy of the kernel);
rows past M get a kernel with fewer rows. Vector width and the number of
vectors per tile row come from the target (`vector_shape`).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from onnxc.codegen import vector_math
from onnxc.codegen.gemm_batches import batches_in_one_job, emit_batches
from onnxc.codegen.gemm_plan import MatmulPlan
from onnxc.codegen.gemm_tile_c import RowsOfC, TransposedC
from onnxc.codegen.llvm_idioms import (
    THREAD_SCRATCH,
    Declare,
    constant_global,
    counted_loop,
    internal_function,
    parallel_for,
    stack_struct,
    store_fields,
    thread_pool_slice,
)
from onnxc.codegen.llvm_types import F32, I1, I32, I64, PTR
from onnxc.codegen.tile_grid import product_rectangles
from onnxc.dialects.krnl_matmul import MATMUL_B_PANEL

PREFETCH_STEPS = 24
"""Reduction steps ahead of the current one at which a micro-kernel prefetches A."""


def _const(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


@dataclass
class _PlanFunctions:
    """The functions a krnl.matmul's products call (all but the micro-kernels), made once per plan."""

    packing: ir.Function | None = None
    tiles: ir.Function | None = None
    range: ir.Function | None = None
    rectangle: ir.Function | None = None
    slice: ir.Function | None = None
    batches: ir.Function | None = None
    offsets_table: ir.GlobalVariable | None = None


class MatmulEmitter:
    """Emits one krnl.matmul into the function `builder` is in, with helper functions in `module`."""

    def __init__(
        self, module: ir.Module, builder: ir.IRBuilder, plan: MatmulPlan, name: str, declare: Declare, kernels: dict
    ):
        self.module = module
        self.b = builder
        self.p = plan
        self.name = name
        self.declare = declare
        self.vector = ir.VectorType(F32, plan.vw)
        self.mask_type = ir.VectorType(I1, plan.vw)
        self.kernels = kernels  # micro-kernels of the module, shared by its krnl.matmul ops
        # ... and the functions around them, shared by the ops of one plan but for the batch
        # (the products of a run-time batch of matrices: one op each)
        self.f: _PlanFunctions = kernels.setdefault(plan.functions_key, _PlanFunctions())
        self.context: ir.Value | None = None  # the thread pool's context, one stack slot

    # ------------------------------------------------------------------ helpers

    def gep(self, b: ir.IRBuilder, base: ir.Value, index: ir.Value | int) -> ir.Value:
        if isinstance(index, int):
            if index == 0:
                return base
            index = _const(index)
        return b.gep(base, [index], inbounds=True, source_etype=F32)

    def splat(self, b: ir.IRBuilder, scalar: ir.Value, vector_type: ir.VectorType) -> ir.Value:
        undef = ir.Constant(vector_type, ir.Undefined)
        single = b.insert_element(undef, scalar, ir.Constant(I32, 0))
        zeros = ir.Constant(ir.VectorType(I32, vector_type.count), [0] * vector_type.count)
        return b.shuffle_vector(single, undef, zeros)

    def lane_mask(self, b: ir.IRBuilder, first_lane: ir.Value, limit: ir.Value) -> ir.Value:
        """Lanes first_lane + j < limit, for j in [0, vw)."""
        vw = self.p.vw
        i64v = ir.VectorType(I64, vw)
        lanes = b.add(self.splat(b, first_lane, i64v), ir.Constant(i64v, list(range(vw))))
        return b.icmp_signed("<", lanes, self.splat(b, limit, i64v))

    def masked_load(self, b: ir.IRBuilder, pointer: ir.Value, mask: ir.Value) -> ir.Value:
        name = f"llvm.masked.load.v{self.p.vw}f32.p0"
        fn = self.declare(name, self.vector, [PTR, I32, self.mask_type, self.vector])
        return b.call(fn, [pointer, ir.Constant(I32, 4), mask, ir.Constant(self.vector, None)])

    def masked_store(self, b: ir.IRBuilder, value: ir.Value, pointer: ir.Value, mask: ir.Value) -> None:
        name = f"llvm.masked.store.v{self.p.vw}f32.p0"
        fn = self.declare(name, ir.VoidType(), [self.vector, PTR, I32, self.mask_type])
        b.call(fn, [value, pointer, ir.Constant(I32, 4), mask])

    def finish(self, b: ir.IRBuilder, value: ir.Value) -> ir.Value:
        """The epilogue of a total (bias added): the plan's activation, then its clamp (Relu/Clip)."""
        if self.p.activation is not None:
            value = vector_math.activation(b, self.p.activation, value, vector_ldexp=self.p.vector_ldexp)
        low, high = self.p.clip
        if low != float("-inf"):
            bound = ir.Constant(self.vector, [low] * self.p.vw)
            value = b.select(b.fcmp_ordered("<", value, bound), bound, value)
        if high != float("inf"):
            bound = ir.Constant(self.vector, [high] * self.p.vw)
            value = b.select(b.fcmp_ordered(">", value, bound), bound, value)
        return value

    def row_offsets(self, b: ir.IRBuilder, pc: ir.Value) -> ir.Value:
        """Window access: the table of B's row offsets (i32, made once per op), from row pc."""
        if self.f.offsets_table is None:
            offsets = self.p.row_offsets
            table_type = ir.ArrayType(I32, len(offsets))
            table = constant_global(self.module, self.module.get_unique_name(f"{self.name}.rows"), table_type)
            table.linkage = "private"
            table.initializer = ir.Constant(table_type, offsets)
            self.f.offsets_table = table
        return b.gep(self.f.offsets_table, [pc], inbounds=True, source_etype=I32)

    def sizes(self, values: list[ir.Value]) -> dict[str, ir.Value]:
        """The run-time sizes among a function's arguments, by name (see MatmulPlan.run_time_names)."""
        return dict(zip(self.p.run_time_names, values))

    def columns(self, sizes: dict[str, ir.Value]) -> ir.Value:
        """N: a constant, or known at run time only."""
        return sizes.get("columns", _const(self.p.n))

    def ldb(self, sizes: dict[str, ir.Value]) -> ir.Value:
        return sizes.get("columns", _const(self.p.ldb))

    def ldc(self, sizes: dict[str, ir.Value]) -> ir.Value:
        return sizes.get("columns", _const(self.p.ldc))

    def function(self, name: str, args: list[ir.Type]) -> tuple[ir.Function, ir.IRBuilder]:
        # Unique: a function may hold several krnl.matmul ops (e.g. a recurrent step's).
        fnty = ir.FunctionType(ir.VoidType(), args)
        fn = internal_function(self.module, self.module.get_unique_name(name), fnty)
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    # ------------------------------------------------------------------- driver

    def emit(
        self,
        a: ir.Value,
        b_in: ir.Value,
        c: ir.Value,
        bias: ir.Value | None,
        sizes: list,
        offsets: list,
        first_row: ir.Value | None = None,
    ) -> None:
        """One product per batch triple: on the thread pool when the plan says so.
        `sizes` are those known at run time only (MatmulPlan.run_time_names; the plan's
        are then guesses), `offsets` B's and C's run-time offsets (or none), `first_row`
        where A and C start (see krnl.MatmulOp)."""
        p, b = self.p, self.b
        if first_row is not None:
            a = self.gep(b, a, b.mul(first_row, _const(p.a_strides[0])))
            c = self.gep(b, c, b.mul(first_row, _const(p.ldc)))
        if not offsets and batches_in_one_job(p):
            emit_batches(self, [a, b_in, c, *([bias] if bias is not None else []), *sizes])
            return
        for (a_offset, b_offset, c_offset), bias_offset in zip(p.batch, p.bias_offsets):
            if offsets:
                b_offset, c_offset = (b.add(_const(o), moved) for o, moved in zip((b_offset, c_offset), offsets))
            pointers = [self.gep(b, a, a_offset), self.gep(b, b_in, b_offset), self.gep(b, c, c_offset)]
            pointers += [self.gep(b, bias, bias_offset)] if bias is not None else []
            pointers += sizes  # after the pointers: range's and slice's too
            named = self.sizes(sizes)
            if not p.parallel:
                b.call(self.range_function(), [*pointers, *self.whole_bounds(b, named)])
                continue
            context_type = ir.LiteralStructType([value.type for value in pointers])
            if self.context is None:
                self.context = self.context_slot(context_type)
            store_fields(b, self.context, context_type, pointers)
            parallel_for(b, self.declare, self.slice_function(context_type), self.context, self.tile_count(b, named))

    def tile_count(self, b: ir.IRBuilder, sizes: dict[str, ir.Value]) -> ir.Value:
        """The tiles the threads split: the grid of row tiles x column tiles (see tile_grid.py)."""
        return b.mul(self.row_tile_count(b, sizes), self.column_tile_count(b, sizes))

    def row_tile_count(self, b: ir.IRBuilder, sizes: dict[str, ir.Value]) -> ir.Value:
        """ceil(M / mr): a constant, or computed from the run-time M."""
        if "rows" not in sizes:
            return _const(self.p.row_tiles)
        return b.udiv(b.add(sizes["rows"], _const(self.p.mr - 1)), _const(self.p.mr))

    def column_tile_count(self, b: ir.IRBuilder, sizes: dict[str, ir.Value]) -> ir.Value:
        """ceil(N / nr): a constant, or computed from the run-time N."""
        if "columns" not in sizes:
            return _const(self.p.column_tiles)
        return b.udiv(b.add(sizes["columns"], _const(self.p.nr - 1)), _const(self.p.nr))

    def context_slot(self, context_type: ir.LiteralStructType) -> ir.Value:
        """Stack room for the thread pool's context, allocated once in the function's entry block."""
        b, block = self.b, self.b.block
        b.position_at_start(b.function.entry_basic_block)  # through `b`: its insertion point stays right
        slot = stack_struct(b, context_type)
        b.position_at_end(block)
        return slot

    def slice_function(self, context_type: ir.LiteralStructType) -> ir.Function:
        """slice(context, begin, end): the tiles [begin, end) of the grid (tile_grid.py), for the thread pool."""
        if self.f.slice is not None:
            return self.f.slice
        fn, b, pointers, begin, end = thread_pool_slice(self.module, f"{self.name}.gemm.slice", context_type)
        self.f.slice = fn
        self.tiles_of_product(b, pointers, begin, end)
        b.ret_void()
        return fn

    def tiles_of_product(self, b: ir.IRBuilder, pointers: list[ir.Value], begin: ir.Value, end: ir.Value) -> None:
        """The tiles [begin, end) of the product of `pointers` (a, b, c, [bias], run-time sizes)."""
        p = self.p
        sizes = self.sizes(pointers[len(pointers) - len(p.run_time_names) :])

        def product(b: ir.IRBuilder, *bounds: ir.Value) -> None:
            b.call(self.rectangle_function(), [*pointers, *bounds])

        # The whole product (one thread, or the pool busy) takes a copy of `range` with constant
        # bounds: LLVM then folds the im2col geometry, which costs small convs dearly otherwise.
        whole = b.and_(b.icmp_signed("==", begin, _const(0)), b.icmp_signed("==", end, self.tile_count(b, sizes)))
        with b.if_else(whole) as (then, otherwise):
            with then:
                b.call(self.range_function(), [*pointers, *self.whole_bounds(b, sizes)])
            with otherwise:
                tiles = (self.row_tile_count(b, sizes), self.column_tile_count(b, sizes))
                rows_first = self.split_rows(b, *tiles) if sizes else p.split_rows
                product_rectangles(b, begin, end, tiles, rows_first, p.nr, self.columns(sizes), product)

    def split_rows(self, b: ir.IRBuilder, row_tiles: ir.Value, column_tiles: ir.Value) -> ir.Value:
        """MatmulPlan.split_rows (and gathers_by_columns) for the sizes of this run: with sizes
        known at run time only, the plan's guesses chose columns for a free-size MobileNetV2's 7x7
        projections (2 column tiles, the second 17 wide: one thread did two thirds)."""
        p = self.p
        rows = b.icmp_unsigned(">=", row_tiles, column_tiles)
        if p.im2col:
            columns_wide = b.icmp_unsigned(">=", b.mul(column_tiles, _const(2 * p.nr)), b.mul(row_tiles, _const(p.mr)))
            by_columns = b.and_(b.icmp_unsigned(">", column_tiles, _const(1)), columns_wide)
            rows = b.and_(rows, b.not_(by_columns))
        return rows

    def whole_bounds(self, b: ir.IRBuilder, sizes: dict[str, ir.Value]) -> list[ir.Value]:
        """range's bounds for all of C: every column, every row tile."""
        return [_const(0), self.columns(sizes), _const(0), self.row_tile_count(b, sizes)]

    def rectangle_function(self) -> ir.Function:
        """`range` with run-time bounds, for a thread's rectangles of tiles: one copy of its code
        however many rectangles a slice calls it for (LLVM's time grows with every copy)."""
        if self.f.rectangle is not None:
            return self.f.rectangle
        range_ = self.range_function()
        fn, b = self.function(f"{self.name}.rectangle", [a.type for a in range_.args])
        fn.attributes.add("noinline")
        self.f.rectangle = fn
        b.call(range_, list(fn.args))
        b.ret_void()
        return fn

    def range_function(self) -> ir.Function:
        """range(a, b, c, [bias], columns [from, to), row tiles [from, to)): that part of C,
        packing the B blocks it reads (if packed) into this thread's scratch."""
        if self.f.range is not None:
            return self.f.range
        p = self.p
        sizes = len(p.run_time_names)
        fn, b = self.function(f"{self.name}.gemm", [PTR] * (3 + p.has_bias) + [I64] * (4 + sizes))
        fn.attributes.add("alwaysinline")  # each call site gets its bounds folded in
        self.f.range = fn
        a, b_in, c, *rest = fn.args
        bias = rest.pop(0) if p.has_bias else None
        sizes, (column_from, column_to, row_from, row_to) = rest[:sizes], rest[sizes:]
        scratch = b.call(self.declare(THREAD_SCRATCH, PTR, []), []) if p.scratch_bytes else None
        with counted_loop(b, column_from, column_to, p.nc, "jc") as jc:
            block_end = b.add(jc, _const(p.nc))
            block_end = b.select(b.icmp_signed("<", block_end, column_to), block_end, column_to)
            with counted_loop(b, _const(0), _const(p.k), p.kc, "pc") as pc:
                remaining = b.sub(_const(p.k), pc)
                kc = b.select(b.icmp_signed("<", remaining, _const(p.kc)), remaining, _const(p.kc))
                first = b.icmp_signed("==", pc, _const(0))
                last = b.icmp_signed("==", kc, remaining)
                if p.packed:
                    b.call(self.packing_function(), [b_in, scratch, *sizes, jc, block_end, pc, kc])
                pointers = [a, b_in, c] + [v for v in (scratch, bias) if v is not None]
                tile_args = [jc, block_end, pc, kc, first, last, row_from, row_to]
                b.call(self.tiles_function(), [*pointers, *sizes, *tile_args])
        b.ret_void()
        return fn

    def tiles_function(self) -> ir.Function:
        """tiles(a, b, c, [scratch], [bias], jc, block end, pc, kc, first, last, row tiles [from, to)).

        Column tiles outside, row tiles inside: a kc x nr B tile stays in L1
        while the row panels of A stream through it."""
        if self.f.tiles is not None:
            return self.f.tiles
        p = self.p
        pointer_count = 3 + bool(p.scratch_bytes) + p.has_bias
        sizes = len(p.run_time_names)
        arg_types = [PTR] * pointer_count + [I64] * sizes + [I64, I64, I64, I64, I1, I1, I64, I64]
        fn, b = self.function(f"{self.name}.tiles", arg_types)
        fn.attributes.add("noinline")
        self.f.tiles = fn
        a, b_in, c, *rest = fn.args
        scratch = rest.pop(0) if p.scratch_bytes else None
        bias = rest.pop(0) if p.has_bias else None
        sizes, (jc, block_end, pc, kc, first, last, row_from, row_to) = self.sizes(rest[:sizes]), rest[sizes:]
        offsets = self.row_offsets(b, pc) if p.reads_image else None
        with counted_loop(b, jc, block_end, p.nr, "jr") as jr:
            valid = b.sub(self.columns(sizes), jr)
            if p.window:  # row k of the tile at offsets[k], from column jr
                b_tile = self.gep(b, b_in, jr)
            elif p.packed:
                b_tile = self.gep(b, scratch, b.sub(jr, jc))
            elif p.b_panels:  # block pc (pc rows of padded N before it), its panel jr / P, column jr % P
                block_start = b.mul(pc, _const(-(-p.n // MATMUL_B_PANEL) * MATMUL_B_PANEL))
                panel_start = b.mul(b.udiv(jr, _const(MATMUL_B_PANEL)), b.mul(kc, _const(MATMUL_B_PANEL)))
                offset = b.add(block_start, b.add(panel_start, b.urem(jr, _const(MATMUL_B_PANEL))))
                b_tile = self.gep(b, b_in, offset)
            else:
                b_tile = self.gep(b, b_in, b.add(b.mul(pc, self.ldb(sizes)), jr))
            partial, tile_bias = None, bias
            if p.transposed_c:  # this column's partial tiles
                partial = self.gep(b, scratch, b.mul(b.udiv(b.sub(jr, jc), _const(p.nr)), _const(p.mr * p.nr)))
            if (p.transposed_c or p.bias_columns) and bias is not None:  # its bias, per column
                tile_bias = self.gep(b, bias, jr)
            full = b.icmp_signed(">=", valid, _const(p.nr))
            with b.if_else(full) as (then, otherwise):
                for block, masked in ((then, False), (otherwise, True)):
                    with block:
                        self.row_tiles(
                            b, masked, sizes, a, b_tile, offsets, c, tile_bias, jr, pc, kc, first, last, valid,
                            row_from, row_to, partial,
                        )  # fmt: skip
        b.ret_void()
        return fn

    def row_tiles(
        self, b, masked, sizes, a, b_tile, offsets, c, bias, jr, pc, kc, first, last, valid, row_from, row_to, partial
    ):
        """Row tiles [row_from, row_to): full ones of mr rows, then the last one of M % mr rows if in range
        (`partial`: a transposed C's partial tiles of column jr, see MatmulPlan.partial_tiles)."""
        p = self.p
        a_rows, a_columns = p.a_steps
        b_stride = _const(p.pitch) if p.packed else _const(MATMUL_B_PANEL) if p.b_panels else self.ldb(sizes)
        panel_stride = b.mul(kc, _const(MATMUL_B_PANEL)) if p.b_panels else _const(0)
        ldc = self.ldc(sizes)
        strides = [b_stride, panel_stride, ldc]

        def call(rows: int, ir_: ir.Value) -> None:
            if p.a_panels:  # block pc (pc * M_pad floats before it), panel ir/mr of kc rows
                padded_rows = p.row_tiles * p.mr
                a_offset = b.add(b.mul(pc, _const(padded_rows)), b.mul(ir_, kc))
            elif p.a_window:  # pixel ir = (oy, ox): see MatmulPlan.pixel_offset
                out_w, (stride_h, stride_w) = p.conv.output_w.data, p.conv.stride
                row, column = b.udiv(ir_, _const(out_w)), b.urem(ir_, _const(out_w))
                a_offset = b.add(b.mul(row, _const(stride_h * p.conv.width.data)), b.mul(column, _const(stride_w)))
            else:
                a_offset = b.add(b.mul(ir_, _const(a_rows)), b.mul(pc, _const(a_columns)))
            if p.transposed_c:
                c_tile = self.gep(b, c, b.add(b.mul(jr, ldc), ir_))
                column_tiles = p.partial_tiles // p.row_tiles
                partial_tile = [self.gep(b, partial, b.mul(ir_, _const(column_tiles * p.nr)))]
            else:
                c_tile, partial_tile = self.gep(b, c, b.add(b.mul(ir_, ldc), jr)), []
            args = [self.gep(b, a, a_offset), b_tile, c_tile, kc, first, last, valid, ir_, *strides, *partial_tile]
            args += [v for v in (bias, offsets) if v is not None]
            b.call(self.micro_kernel(rows, masked), args)

        rows = sizes.get("rows")
        if rows is None:
            full_tiles, rest = _const(p.m // p.mr), _const(p.m % p.mr)
        else:
            full_tiles, rest = b.udiv(rows, _const(p.mr)), b.urem(rows, _const(p.mr))
        full_to = b.select(b.icmp_signed("<", row_to, full_tiles), row_to, full_tiles)
        with counted_loop(b, b.mul(row_from, _const(p.mr)), b.mul(full_to, _const(p.mr)), p.mr, "ir") as ir_:
            call(p.mr, ir_)
        if rows is None and p.m % p.mr == 0:
            return
        last_tile = b.mul(full_tiles, _const(p.mr))
        with b.if_then(b.icmp_signed(">", row_to, full_tiles)):
            if rows is None:
                call(p.m % p.mr, last_tile)
                return
            done = b.append_basic_block("rest.done")
            switch = b.switch(rest, done)  # one micro-kernel per row count of the last tile
            for count in range(1, p.mr):
                case = b.append_basic_block(f"rest.{count}")
                switch.add_case(_const(count), case)
                b.position_at_end(case)
                call(count, last_tile)
                b.branch(done)
            b.position_at_end(done)

    # ------------------------------------------------------------- micro-kernel

    def micro_kernel(self, rows: int, masked: bool) -> ir.Function:
        """C tile (rows x nr) = epilogue(init + A tile (rows x kc) * B tile (kc x nr)).

        B's and C's strides are arguments, so that one kernel per variant serves every
        krnl.matmul of the module (compile time grows with distinct kernels). A's are
        constants: with a run-time row stride the mr row pointers of A do not fit the
        general registers, and a kernel shared by products of different K ran at 0.45x
        (a BERT layer's 768x3072 and 3072x768 products, one thread).
        """
        p = self.p
        # A partial tile (only the last one: nc is a multiple of nr) holds N % nr columns.
        partial_vectors = p.nv if p.run_time_columns else -(-(p.n % p.nr) // p.vw)
        vectors = partial_vectors if masked else p.nv
        _, a_columns = p.a_steps
        variant = (p.packed, p.b_panels, p.window, p.a_window, p.transposed_c, p.has_bias, p.bias_columns, p.accumulate)
        variant += (p.activation, p.clip)
        a_offsets = tuple(p.a_row_offset(r) for r in range(rows))
        key = (rows, masked, vectors, *variant, a_offsets, a_columns)
        if key in self.kernels:
            return self.kernels[key]
        args = [PTR, PTR, PTR, I64, I1, I1, I64, I64, I64, I64, I64]
        args += [PTR] * (p.transposed_c + p.has_bias + p.reads_image)
        access = "p" if p.packed else "c" if p.b_panels else "w" if p.window else ""
        suffix = f"r{rows}{f'm{vectors}' if masked else ''}{'x' if p.a_window else ''}{access}"
        suffix += ("bc" if p.bias_columns else "b") if p.has_bias else ""
        suffix += f"{'a' if p.accumulate else ''}{'t' if p.transposed_c else ''}.{len(self.kernels)}"
        fn, b = self.function(f"onnxc.gemm.{suffix}", args)
        fn.attributes.add("noinline")
        self.kernels[key] = fn
        a, b_tile, c, kc, first, last, valid, row0, b_stride, panel_stride, ldc, *rest = fn.args
        partial = rest.pop(0) if p.transposed_c else None
        bias = rest.pop(0) if p.has_bias else None
        offsets = rest.pop(0) if p.reads_image else None
        masks = [self.lane_mask(b, _const(v * p.vw), valid) for v in range(vectors)] if masked else None
        a_pointers = [self.gep(b, a, _const(offset)) for offset in a_offsets]

        def b_row_start(bb: ir.IRBuilder, row: ir.Value) -> ir.Value:
            """Where B's row `row` of the tile starts, in floats from b_tile."""
            return image_offset(bb, row) if p.window else bb.mul(row, b_stride)

        def b_vector_pointer(bb: ir.IRBuilder, row_start: ir.Value, v: int) -> ir.Value:
            column = v * p.vw
            if p.b_panels:  # a tile wider than a panel spans several
                offset = bb.add(bb.mul(_const(column // MATMUL_B_PANEL), panel_stride), _const(column % MATMUL_B_PANEL))
            else:
                offset = _const(column)
            return self.gep(bb, b_tile, bb.add(row_start, offset))

        def b_vector(bb: ir.IRBuilder, row_start: ir.Value, v: int) -> ir.Value:
            pointer = b_vector_pointer(bb, row_start, v)
            if masked and not (p.packed or p.b_panels):  # scratch and panels have room past N (lanes never stored)
                return self.masked_load(bb, pointer, masks[v])
            return bb.load(pointer, typ=self.vector, align=min(p.vw * 4, 64) if p.packed else 4)

        def image_offset(bb: ir.IRBuilder, kk: ir.Value) -> ir.Value:
            """Where row (or column) kk of the operand read from the image starts, in floats."""
            return bb.sext(bb.load(bb.gep(offsets, [kk], inbounds=True, source_etype=I32), typ=I32, align=4), I64)

        def a_column(bb: ir.IRBuilder, kk: ir.Value) -> ir.Value:
            return image_offset(bb, kk) if p.a_window else bb.mul(kk, _const(a_columns))

        def a_scalar(bb: ir.IRBuilder, column: ir.Value, r: int) -> ir.Value:
            return bb.load(self.gep(bb, a_pointers[r], column), typ=F32, align=4)

        if p.transposed_c:
            tile_c = TransposedC(self, b, rows, vectors, c, ldc, masks, bias, partial)
        else:
            tile_c = RowsOfC(self, b, rows, vectors, c, ldc, masks, bias, row0)
        # The first reduction block starts from the bias (plus C when accumulating),
        # later ones from C: a branch, so that a fresh C is not read at all.
        with b.if_else(first) as (then, otherwise):
            with then:
                fresh = tile_c.fresh(b, p.accumulate)
                fresh_block = b.block
            with otherwise:
                resumed = tile_c.resumed(b)
                resumed_block = b.block
        init = []
        for r in range(rows):
            row = []
            for v in range(vectors):
                phi = b.phi(self.vector)
                phi.add_incoming(fresh[r][v], fresh_block)
                phi.add_incoming(resumed[r][v], resumed_block)
                row.append(phi)
            init.append(row)

        entry = b.block
        header = b.append_basic_block("k.header")
        body = b.append_basic_block("k.body")
        exit_ = b.append_basic_block("k.exit")
        b.branch(header)
        b.position_at_end(header)
        kk = b.phi(I64, "k")
        kk.add_incoming(_const(0), entry)
        accumulators = []
        for r in range(rows):
            row = []
            for v in range(vectors):
                phi = b.phi(self.vector)
                phi.add_incoming(init[r][v], entry)
                row.append(phi)
            accumulators.append(row)
        b.cbranch(b.icmp_signed("<", kk, kc), body, exit_)
        b.position_at_end(body)
        row_start = b_row_start(b, kk)
        b_vectors = [b_vector(b, row_start, v) for v in range(vectors)]
        # A streams from L2/L3 (weights are read once per column tile): prefetch ahead.
        prefetch = self.declare("llvm.prefetch.p0", ir.VoidType(), [PTR, I32, I32, I32])
        if p.window and not masked:
            # Each row of a window tile is another stream, too many for the hardware prefetchers:
            # fetch the same row of the next column tile while this one computes.
            for v in range(vectors):
                following = self.gep(b, b_tile, b.add(row_start, _const(p.nr + v * p.vw)))
                b.call(prefetch, [following, ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)])
        if not p.a_window:  # (an image read in place is in cache: a tile reads kc of its rows)
            ahead = self.gep(b, a_pointers[0], b.mul(b.add(kk, _const(PREFETCH_STEPS)), _const(a_columns)))
            b.call(prefetch, [ahead, ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)])
        elif p.b_panels and not masked:  # the weights stream from memory instead, one line per panel
            ahead = b_row_start(b, b.add(kk, _const(PREFETCH_STEPS)))
            for v in range(0, vectors, max(1, MATMUL_B_PANEL // p.vw)):
                b.call(
                    prefetch,
                    [b_vector_pointer(b, ahead, v), ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)],
                )
        # llvm.fmuladd: fused where the target has an instruction for it, a multiply and an add elsewhere.
        fma = self.declare(f"llvm.{'fma' if p.fused else 'fmuladd'}.v{p.vw}f32", self.vector, [self.vector] * 3)
        column = a_column(b, kk)
        for r in range(rows):
            broadcast = self.splat(b, a_scalar(b, column, r), self.vector)
            for v in range(vectors):
                updated = b.call(fma, [broadcast, b_vectors[v], accumulators[r][v]])
                accumulators[r][v].add_incoming(updated, body)
        kk.add_incoming(b.add(kk, _const(1), flags=["nsw"]), body)
        b.branch(header)

        b.position_at_end(exit_)
        tile_c.store(b, accumulators, last)
        b.ret_void()
        return fn

    # ------------------------------------------------------------------ packing

    def packing_function(self) -> ir.Function:
        """pack(b, scratch, jc, block end, pc, kc): B[pc:pc+kc, jc:block end] into scratch rows of
        `pitch` floats, from a matrix (a row copy) or an image (im2col: per output
        row, a copy of one input row segment between zero-filled padding).

        The copies are plain scalar loops with unit stride on the destination;
        LLVM vectorizes them (with stride 1 on the source too where the conv's is).
        Past N, up to the next whole vector, the lanes the tail tile loads (and never
        stores) are zeroed: left as they were, scratch garbage such as denormals
        slows every FMA of the tile (a MatMul with N = 24 took twice N = 32's time).
        """
        if self.f.packing is not None:
            return self.f.packing
        p = self.p
        sizes = len(p.run_time_names)
        fn, b = self.function(f"{self.name}.pack", [PTR, PTR] + [I64] * (4 + sizes))
        fn.attributes.add("alwaysinline")  # so that range's constant bounds reach the im2col geometry
        self.f.packing = fn
        source, scratch, *rest = fn.args
        sizes, (jc, block_end, pc, kc) = self.sizes(rest[:sizes]), rest[sizes:]
        with counted_loop(b, _const(0), kc, 1, "packk") as k:
            destination = self.gep(b, scratch, b.sub(b.mul(k, _const(p.pitch)), jc))  # [n] for n in the block
            row = b.add(pc, k)
            if p.im2col:
                self.pack_im2col_row(b, source, destination, sizes, row, jc, block_end)
            else:
                self.copy(b, destination, self.gep(b, source, b.mul(row, self.ldb(sizes))), 1, jc, block_end)
            if p.n % p.vw or p.run_time_columns:  # block_end is a whole number of vectors except at N
                vectors_end = b.mul(b.sdiv(b.add(block_end, _const(p.vw - 1)), _const(p.vw)), _const(p.vw))
                self.fill_zero(b, destination, block_end, vectors_end)
        b.ret_void()
        return fn

    def copy(self, b, destination, source, s_stride: int, start, stop) -> None:
        """destination[i] = source[i*s_stride] for i in [start, stop)."""
        with counted_loop(b, start, stop, 1, "copy") as i:
            value = b.load(self.gep(b, source, b.mul(i, _const(s_stride)) if s_stride != 1 else i), typ=F32, align=4)
            b.store(value, self.gep(b, destination, i), align=4)

    def fill_zero(self, b, destination, start, stop) -> None:
        with counted_loop(b, start, stop, 1, "zero") as i:
            b.store(ir.Constant(F32, 0.0), self.gep(b, destination, i), align=4)

    def pack_im2col_row(self, b, image, destination, sizes, row, jc, block_end) -> None:
        """One row k = (c, ky, kx) of the im2col block: columns n = (oy, ox) in [jc, block_end)."""
        conv = self.p.conv
        height, width, out_w = (
            sizes.get(name, _const(getattr(conv, name).data)) for name in ("height", "width", "output_w")
        )
        pad_h, pad_w = (sizes.get(name, _const(pad)) for name, pad in zip(("pad_h", "pad_w"), conv.padding))
        (kh, kw), (sh, sw), (dh, dw) = conv.kernel, conv.stride, conv.dilation

        def smax(x, y):
            return b.select(b.icmp_signed(">", x, y), x, y)

        def smin(x, y):
            return b.select(b.icmp_signed("<", x, y), x, y)

        def ceil_div(x, d: int):  # x >= 0
            return b.sdiv(b.add(x, _const(d - 1)), _const(d))

        channel = b.udiv(row, _const(kh * kw))
        offset = b.urem(row, _const(kh * kw))
        ky, kx = b.udiv(offset, _const(kw)), b.urem(offset, _const(kw))
        plane = self.gep(b, image, b.mul(channel, b.mul(height, width)))
        x0 = b.sub(b.mul(kx, _const(dw)), pad_w)  # input x = ox*sw + x0
        first_ox = ceil_div(smax(b.sub(_const(0), x0), _const(0)), sw)
        stop_ox = ceil_div(smax(b.sub(width, x0), _const(0)), sw)
        first_row, last_row = b.udiv(jc, out_w), b.udiv(b.sub(block_end, _const(1)), out_w)
        with counted_loop(b, first_row, b.add(last_row, _const(1)), 1, "oy") as oy:
            row_start = b.mul(oy, out_w)
            start = b.sub(smax(jc, row_start), row_start)
            stop = b.sub(smin(block_end, b.add(row_start, out_w)), row_start)
            output_row = self.gep(b, destination, row_start)  # [ox]
            y = b.add(b.sub(b.mul(oy, _const(sh)), pad_h), b.mul(ky, _const(dh)))
            inside = b.icmp_unsigned("<", y, height)
            with b.if_else(inside) as (then, otherwise):
                with then:
                    low = smin(smax(first_ox, start), stop)
                    high = smax(smin(stop_ox, stop), low)
                    self.fill_zero(b, output_row, start, low)
                    source = self.gep(b, plane, b.add(b.mul(y, width), x0))  # [ox*sw]
                    self.copy(b, output_row, source, sw, low, high)
                    self.fill_zero(b, output_row, high, stop)
                with otherwise:
                    self.fill_zero(b, output_row, start, stop)
