"""The register-blocked SIMD kernel behind `krnl.matmul`, as explicit LLVM vector IR.

LLVM's loop vectorizer does not find a register tiling by itself (and on
ppc64le leaves loops scalar), so the kernel is written out in vectors:

    for each (a, b, c) batch offset triple:
      for jc in [0, N) step nc:                 # column block
        for pc in [0, K) step kc:               # reduction block
          im2col only: pack B[pc:pc+kc, jc:jc+nc] into panels of nr columns (scratch)
          for ir in [0, M) step mr:             # register tile rows (A panel in L1)
            for jr in [jc, jc+nc) step nr:      # register tile columns (B block in L2)
              micro-kernel: mr x nr accumulators in registers over kc steps,
              each step nr/vw vector loads of B, mr broadcasts of A, mr*nr/vw FMAs

The first reduction block starts the accumulators from the bias (plus C when
accumulating), later ones from C; the last one clamps before its store.
Columns past N are masked (full tiles take an unmasked copy of the kernel);
rows past M get a kernel with fewer rows. Vector width and the number of
vectors per tile row come from the target (`vector_shape`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from llvmlite import ir

from onnxc.codegen.target import Target
from onnxc.dialects.krnl import MatmulOp, int_values

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
F32 = ir.FloatType()
PTR = ir.PointerType()


def vector_shape(target: Target) -> tuple[int, int]:
    """(floats per vector, vectors per tile row) for the target's SIMD unit.

    With mr = 6 tile rows: AVX-512 6 x 4 zmm = 24 of 32 registers, AVX2 6 x 2
    ymm = 12 of 16, VSX 6 x 8 = 48 of 64, z14 6 x 4 = 24 of 32.
    """
    if target.arch == "x86_64":
        return (16, 4) if "+avx512f" in target.features else (8, 2)
    if target.arch == "ppc64le":
        return 4, 8
    return 4, 4


@contextmanager
def counted_loop(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: int, name: str) -> Iterator[ir.Value]:
    """`for iv in range(start, stop, step)`: yields the induction variable, leaves b after the loop."""
    before = b.block
    header = b.append_basic_block(f"{name}.header")
    body = b.append_basic_block(f"{name}.body")
    exit_ = b.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(I64, name)
    iv.add_incoming(start, before)
    b.cbranch(b.icmp_signed("<", iv, stop), body, exit_)
    b.position_at_end(body)
    yield iv
    iv.add_incoming(b.add(iv, ir.Constant(I64, step), flags=["nsw"]), b.block)
    b.branch(header)
    b.position_at_end(exit_)


def _const(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


@dataclass
class MatmulPlan:
    """The op's static parameters, resolved for one target."""

    m: int
    n: int
    k: int
    mr: int
    kc: int
    nc: int
    vw: int
    nv: int
    a_panels: bool
    a_strides: tuple[int, int]
    im2col: bool
    ldb: int
    conv: list[int]
    ldc: int
    batch: list[tuple[int, int, int]]
    accumulate: bool
    clip: tuple[float, float]
    has_bias: bool

    @property
    def nr(self) -> int:
        return self.vw * self.nv

    @staticmethod
    def of(op: MatmulOp, target: Target) -> MatmulPlan:
        m, n, k = int_values(op.sizes)
        mr, kc, nc = int_values(op.tile)
        vw, nv = vector_shape(target)
        offsets = int_values(op.batch)
        return MatmulPlan(
            m, n, k, mr, min(kc, k), nc, vw, nv,
            a_panels=op.a_layout.data == "panels",
            a_strides=tuple(int_values(op.a_strides)),
            im2col=op.b_access.data == "im2col",
            ldb=op.ldb.value.data,
            conv=int_values(op.conv),
            ldc=op.ldc.value.data,
            batch=[tuple(offsets[i : i + 3]) for i in range(0, len(offsets), 3)],
            accumulate=bool(op.accumulate.value.data),
            clip=op.clip_bounds,
            has_bias=op.bias is not None,
        )


class MatmulEmitter:
    """Emits one krnl.matmul into the function `builder` is in, with helper functions in `module`."""

    def __init__(self, module: ir.Module, builder: ir.IRBuilder, plan: MatmulPlan, name: str, declare, kernels: dict):
        self.module = module
        self.b = builder
        self.p = plan
        self.name = name
        self.declare = declare
        self.vector = ir.VectorType(F32, plan.vw)
        self.mask_type = ir.VectorType(I1, plan.vw)
        self.kernels = kernels  # micro-kernels of the module, shared by its krnl.matmul ops
        self.packing: ir.Function | None = None

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

    def function(self, name: str, args: list[ir.Type]) -> tuple[ir.Function, ir.IRBuilder]:
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), args), name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        for arg in fn.args:
            if arg.type == PTR:
                arg.add_attribute("noalias")
        return fn, ir.IRBuilder(fn.append_basic_block("entry"))

    # ------------------------------------------------------------------- driver

    def emit(self, a: ir.Value, b_in: ir.Value, c: ir.Value, scratch: ir.Value | None, bias: ir.Value | None) -> None:
        p, b = self.p, self.b
        for a_offset, b_offset, c_offset in p.batch:
            a_base, b_base, c_base = self.gep(b, a, a_offset), self.gep(b, b_in, b_offset), self.gep(b, c, c_offset)
            with counted_loop(b, _const(0), _const(p.n), p.nc, "jc") as jc:
                with counted_loop(b, _const(0), _const(p.k), p.kc, "pc") as pc:
                    remaining = b.sub(_const(p.k), pc)
                    kc = b.select(b.icmp_signed("<", remaining, _const(p.kc)), remaining, _const(p.kc))
                    first = b.icmp_signed("==", pc, _const(0))
                    last = b.icmp_signed("==", kc, remaining)
                    if p.im2col:
                        b.call(self.packing_function(), [b_base, scratch, jc, pc, kc])
                    self.row_tiles(a_base, b_base, c_base, scratch, bias, jc, pc, kc, first, last)

    def row_tiles(self, a, b_in, c, scratch, bias, jc, pc, kc, first, last) -> None:
        p, b = self.p, self.b
        full_rows = p.m - p.m % p.mr
        if full_rows:
            with counted_loop(b, _const(0), _const(full_rows), p.mr, "ir") as ir_:
                self.column_tiles(p.mr, ir_, a, b_in, c, scratch, bias, jc, pc, kc, first, last)
        if p.m % p.mr:
            self.column_tiles(p.m % p.mr, _const(full_rows), a, b_in, c, scratch, bias, jc, pc, kc, first, last)

    def column_tiles(self, rows, ir_, a, b_in, c, scratch, bias, jc, pc, kc, first, last) -> None:
        p, b = self.p, self.b
        if p.a_panels:
            a_tile = self.gep(b, a, b.add(b.mul(b.udiv(ir_, _const(p.mr)), _const(p.k * p.mr)), b.mul(pc, _const(p.mr))))
        else:
            row_stride, column_stride = p.a_strides
            a_tile = self.gep(b, a, b.add(b.mul(ir_, _const(row_stride)), b.mul(pc, _const(column_stride))))
        block_end = b.add(jc, _const(p.nc))
        block_end = b.select(b.icmp_signed("<", block_end, _const(p.n)), block_end, _const(p.n))
        with counted_loop(b, jc, block_end, p.nr, "jr") as jr:
            valid = b.sub(_const(p.n), jr)
            if p.im2col:
                panel = b.udiv(b.sub(jr, jc), _const(p.nr))
                b_tile = self.gep(b, scratch, b.mul(panel, _const(p.kc * p.nr)))
            else:
                b_tile = self.gep(b, b_in, b.add(b.mul(pc, _const(p.ldb)), jr))
            c_tile = self.gep(b, c, b.add(b.mul(ir_, _const(p.ldc)), jr))
            if p.a_panels:
                a_rows, a_columns = 1, p.mr
            else:
                a_rows, a_columns = p.a_strides
            b_stride = p.nr if p.im2col else p.ldb
            args = [a_tile, b_tile, c_tile, kc, first, last, valid, ir_, *map(_const, (a_rows, a_columns, b_stride, p.ldc))]
            if bias is not None:
                args.append(bias)
            full = b.icmp_signed(">=", valid, _const(p.nr))
            with b.if_else(full) as (then, otherwise):
                with then:
                    b.call(self.micro_kernel(rows, masked=False), args)
                with otherwise:
                    b.call(self.micro_kernel(rows, masked=True), args)

    # ------------------------------------------------------------- micro-kernel

    def micro_kernel(self, rows: int, masked: bool) -> ir.Function:
        """C tile (rows x nr) = epilogue(init + A tile (rows x kc) * B tile (kc x nr)).

        Strides are arguments, so that one kernel per variant serves every
        krnl.matmul of the module (compile time grows with distinct kernels).
        """
        p = self.p
        key = (rows, masked, p.im2col, p.has_bias, p.accumulate, p.clip)
        if key in self.kernels:
            return self.kernels[key]
        args = [PTR, PTR, PTR, I64, I1, I1, I64, I64, I64, I64, I64, I64] + ([PTR] if p.has_bias else [])
        suffix = f"r{rows}{'m' if masked else ''}{'p' if p.im2col else ''}{'b' if p.has_bias else ''}"
        suffix += f"{'a' if p.accumulate else ''}.{len(self.kernels)}"
        fn, b = self.function(f"onnxc.gemm.{suffix}", args)
        fn.attributes.add("noinline")
        self.kernels[key] = fn
        a, b_tile, c, kc, first, last, valid, row0, a_rows, a_columns, b_stride, ldc, *bias = fn.args
        masks = [self.lane_mask(b, _const(v * p.vw), valid) for v in range(p.nv)] if masked else None
        a_pointers = [self.gep(b, a, b.mul(a_rows, _const(r))) for r in range(rows)]

        def b_vector(bb: ir.IRBuilder, row: ir.Value, v: int) -> ir.Value:
            pointer = self.gep(bb, b_tile, bb.add(bb.mul(row, b_stride), _const(v * p.vw)))
            if masked and not p.im2col:  # packed panels are zero-padded, rows are not
                return self.masked_load(bb, pointer, masks[v])
            return bb.load(pointer, typ=self.vector, align=p.vw * 4 if p.im2col else 4)

        def a_scalar(bb: ir.IRBuilder, kk: ir.Value, r: int) -> ir.Value:
            return bb.load(self.gep(bb, a_pointers[r], bb.mul(kk, a_columns)), typ=F32, align=4)

        c_pointers = [
            [self.gep(b, c, b.add(b.mul(ldc, _const(r)), _const(v * p.vw))) for v in range(p.nv)]
            for r in range(rows)
        ]
        zero = ir.Constant(self.vector, None)
        init = []
        for r in range(rows):
            start = zero
            if p.has_bias:
                row_bias = b.load(self.gep(b, bias[0], b.add(row0, _const(r))), typ=F32, align=4)
                start = self.splat(b, row_bias, self.vector)
            row = []
            for v in range(p.nv):
                if masked:
                    loaded = self.masked_load(b, c_pointers[r][v], masks[v])
                else:
                    loaded = b.load(c_pointers[r][v], typ=self.vector, align=4)
                fresh = b.fadd(loaded, start) if p.accumulate else start
                row.append(b.select(first, fresh, loaded))
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
            for v in range(p.nv):
                phi = b.phi(self.vector)
                phi.add_incoming(init[r][v], entry)
                row.append(phi)
            accumulators.append(row)
        b.cbranch(b.icmp_signed("<", kk, kc), body, exit_)
        b.position_at_end(body)
        b_vectors = [b_vector(b, kk, v) for v in range(p.nv)]
        fma = self.declare(f"llvm.fma.v{p.vw}f32", self.vector, [self.vector] * 3)
        for r in range(rows):
            broadcast = self.splat(b, a_scalar(b, kk, r), self.vector)
            for v in range(p.nv):
                updated = b.call(fma, [broadcast, b_vectors[v], accumulators[r][v]])
                accumulators[r][v].add_incoming(updated, body)
        kk.add_incoming(b.add(kk, _const(1), flags=["nsw"]), body)
        b.branch(header)

        b.position_at_end(exit_)
        low, high = p.clip
        for r in range(rows):
            for v in range(p.nv):
                value = accumulators[r][v]
                clamped = value
                if low != float("-inf"):
                    bound = ir.Constant(self.vector, [low] * p.vw)
                    clamped = b.select(b.fcmp_ordered("<", clamped, bound), bound, clamped)
                if high != float("inf"):
                    bound = ir.Constant(self.vector, [high] * p.vw)
                    clamped = b.select(b.fcmp_ordered(">", clamped, bound), bound, clamped)
                if clamped is not value:
                    value = b.select(last, clamped, value)
                if masked:
                    self.masked_store(b, value, c_pointers[r][v], masks[v])
                else:
                    b.store(value, c_pointers[r][v], align=4)
        b.ret_void()
        return fn

    # ------------------------------------------------------------------ packing

    def packing_function(self) -> ir.Function:
        """pack(image, scratch, jc, pc, kc): the im2col block B[pc:pc+kc, jc:jc+nc] as
        panels [nc/nr][kc][nr], zero where a window reads padding or n >= N."""
        if self.packing is not None:
            return self.packing
        p = self.p
        fn, b = self.function(f"{self.name}.pack", [PTR, PTR, I64, I64, I64])
        self.packing = fn
        image, scratch, jc, pc, kc = fn.args
        _, height, width, _, out_w, kh, kw, sh, sw, dh, dw, ph, pw = p.conv
        i32v = ir.VectorType(I32, p.vw)

        def vconst(value: int) -> ir.Constant:
            return ir.Constant(i32v, [value] * p.vw)

        block_end = b.add(jc, _const(p.nc))
        block_end = b.select(b.icmp_signed("<", block_end, _const(p.n)), block_end, _const(p.n))
        with counted_loop(b, jc, block_end, p.nr, "panel") as n0:
            panel = self.gep(b, scratch, b.mul(b.udiv(b.sub(n0, jc), _const(p.nr)), _const(p.kc * p.nr)))
            origins = []
            for v in range(p.nv):
                first_n = b.add(n0, _const(v * p.vw))
                columns = b.add(self.splat(b, b.trunc(first_n, I32), i32v), ir.Constant(i32v, list(range(p.vw))))
                in_range = b.icmp_signed("<", columns, vconst(p.n))
                oy, ox = b.udiv(columns, vconst(out_w)), b.urem(columns, vconst(out_w))
                origins.append((in_range, b.sub(b.mul(oy, vconst(sh)), vconst(ph)), b.sub(b.mul(ox, vconst(sw)), vconst(pw))))
            with counted_loop(b, _const(0), kc, 1, "packk") as k:
                kk = b.trunc(b.add(pc, k), I32)
                channel = b.udiv(kk, ir.Constant(I32, kh * kw))
                offset = b.urem(kk, ir.Constant(I32, kh * kw))
                ky, kx = b.udiv(offset, ir.Constant(I32, kw)), b.urem(offset, ir.Constant(I32, kw))
                plane = b.mul(channel, ir.Constant(I32, height * width))
                for v, (in_range, y0, x0) in enumerate(origins):
                    y = b.add(y0, self.splat(b, b.mul(ky, ir.Constant(I32, dh)), i32v))
                    x = b.add(x0, self.splat(b, b.mul(kx, ir.Constant(I32, dw)), i32v))
                    inside = b.and_(in_range, b.and_(b.icmp_unsigned("<", y, vconst(height)), b.icmp_unsigned("<", x, vconst(width))))
                    index = b.add(self.splat(b, plane, i32v), b.add(b.mul(y, vconst(width)), x))
                    safe = b.select(inside, index, vconst(0))
                    pointers = b.gep(image, [b.sext(safe, ir.VectorType(I64, p.vw))], source_etype=F32)
                    pointers.type = ir.VectorType(PTR, p.vw)  # llvmlite types a vector GEP as scalar
                    gather = self.declare(
                        f"llvm.masked.gather.v{p.vw}f32.v{p.vw}p0",
                        self.vector,
                        [ir.VectorType(PTR, p.vw), I32, self.mask_type, self.vector],
                    )
                    value = b.call(gather, [pointers, ir.Constant(I32, 4), inside, ir.Constant(self.vector, None)])
                    destination = self.gep(b, panel, b.add(b.mul(k, _const(p.nr)), _const(v * p.vw)))
                    b.store(value, destination, align=p.vw * 4)
        b.ret_void()
        return fn
