"""Where a GEMM micro-kernel's accumulators start and end (see gemm.MatmulEmitter.micro_kernel).

The first reduction block starts the accumulators from the bias (plus C when accumulating),
later ones from what the block before left; the last block applies the epilogue (activation,
clamp) before its store. C is a
matrix of rows `ldc` apart (`RowsOfC`), or with MatmulPlan.transposed_c a conv's NCHW output
stored transposed (`TransposedC`): a tile's vectors run along the channels, each lane in another
channel's plane, so its last block scatters them; blocks before it keep their partial sums in
the thread's scratch, contiguous (a gather and a scatter of each vector per block would take,
by a count of their stores, about a third of the time of a 128-step block's FMAs).
"""

from __future__ import annotations

from llvmlite import ir

from onnxc.codegen.llvm_types import I32, I64, PTR


def column_bias(emitter, b: ir.IRBuilder, bias, masks, v: int) -> ir.Value:
    """Vector v of a bias per column, bias[v*vw + j] (bias starting at the tile's column)."""
    if bias is None:
        return ir.Constant(emitter.vector, None)
    pointer = emitter.gep(b, bias, v * emitter.p.vw)
    if masks is not None:
        return emitter.masked_load(b, pointer, masks[v])
    return b.load(pointer, typ=emitter.vector, align=4)


class RowsOfC:
    """C[r, j] of a tile at c[r*ldc + j]; the bias per row, bias[row0 + r], or with
    MatmulPlan.bias_columns per column, bias[j] (bias starting at the tile's column)."""

    def __init__(self, emitter, b: ir.IRBuilder, rows: int, vectors: int, c, ldc, masks, bias, row0):
        self.e, self.rows, self.vectors, self.masks = emitter, rows, vectors, masks
        vw = emitter.p.vw
        self.pointers = [
            [
                emitter.gep(b, c, b.add(b.mul(ldc, ir.Constant(I64, r)), ir.Constant(I64, v * vw)))
                for v in range(vectors)
            ]
            for r in range(rows)
        ]
        if emitter.p.bias_columns:
            self.bias = [[column_bias(emitter, b, bias, masks, v) for v in range(vectors)]] * rows
        else:
            self.bias = [[self._row_bias(b, bias, row0, r)] * vectors for r in range(rows)]

    def _row_bias(self, b: ir.IRBuilder, bias, row0, r: int) -> ir.Value:
        if bias is None:
            return ir.Constant(self.e.vector, None)
        value = b.load(self.e.gep(b, bias, b.add(row0, ir.Constant(I64, r))), typ=self.e.vector.element, align=4)
        return self.e.splat(b, value, self.e.vector)

    def load(self, b: ir.IRBuilder, r: int, v: int) -> ir.Value:
        if self.masks is not None:
            return self.e.masked_load(b, self.pointers[r][v], self.masks[v])
        return b.load(self.pointers[r][v], typ=self.e.vector, align=4)

    def fresh(self, b: ir.IRBuilder, accumulate: bool) -> list[list[ir.Value]]:
        """The first block's start: the bias, plus C when accumulating."""
        return [
            [
                b.fadd(self.load(b, r, v), self.bias[r][v]) if accumulate else self.bias[r][v]
                for v in range(self.vectors)
            ]
            for r in range(self.rows)
        ]

    def resumed(self, b: ir.IRBuilder) -> list[list[ir.Value]]:
        """A later block's start: C as the block before stored it."""
        return [[self.load(b, r, v) for v in range(self.vectors)] for r in range(self.rows)]

    def store(self, b: ir.IRBuilder, values: list[list[ir.Value]], last: ir.Value) -> None:
        """Every block stores into C, the last one through the epilogue: a clamp alone by a select,
        an activation (dozens of instructions per vector) in a branch of its own."""
        if self.e.p.activation is None:
            clamped = [[self.e.finish(b, value) for value in row] for row in values]
            self._store(
                b, [[b.select(last, c, v) if c is not v else v for c, v in zip(*rows)] for rows in zip(clamped, values)]
            )
            return
        with b.if_else(last) as (then, otherwise):
            with then:
                self._store(b, [[self.e.finish(b, value) for value in row] for row in values])
            with otherwise:
                self._store(b, values)

    def _store(self, b: ir.IRBuilder, values: list[list[ir.Value]]) -> None:
        for r, row in enumerate(values):
            for v, value in enumerate(row):
                if self.masks is not None:
                    self.e.masked_store(b, value, self.pointers[r][v], self.masks[v])
                else:
                    b.store(value, self.pointers[r][v], align=4)


class TransposedC:
    """C[r, j] of a tile at c[j*ldc + r] (lane j of vector v: column v*vw + j); the bias per
    column, bias[j] (bias and c start at the tile's column); partial sums at partial[r*nr + j]."""

    def __init__(self, emitter, b: ir.IRBuilder, rows: int, vectors: int, c, ldc, masks, bias, partial):
        self.e, self.rows, self.vectors, self.masks = emitter, rows, vectors, masks
        vw, nr = emitter.p.vw, emitter.p.nr
        lanes = ir.VectorType(I64, vw)
        steps = b.mul(emitter.splat(b, ldc, lanes), ir.Constant(lanes, list(range(vw))))
        self.lane_pointers = []
        for r in range(rows):
            row = []
            for v in range(vectors):
                first_lane = emitter.gep(b, c, b.add(b.mul(ldc, ir.Constant(I64, v * vw)), ir.Constant(I64, r)))
                pointers = b.gep(first_lane, [steps], inbounds=True, source_etype=emitter.vector.element)
                pointers.type = ir.VectorType(PTR, vw)  # llvmlite types a GEP of vector indices as one pointer
                row.append(pointers)
            self.lane_pointers.append(row)
        self.partials = [[emitter.gep(b, partial, r * nr + v * vw) for v in range(vectors)] for r in range(rows)]
        self.bias = [[column_bias(emitter, b, bias, masks, v) for v in range(vectors)]] * rows

    def _mask(self, v: int) -> ir.Value:
        return self.masks[v] if self.masks is not None else ir.Constant(self.e.mask_type, [1] * self.e.p.vw)

    def fresh(self, b: ir.IRBuilder, accumulate: bool) -> list[list[ir.Value]]:
        vw = self.e.p.vw
        pointers = ir.VectorType(PTR, vw)
        gather = self.e.declare(
            f"llvm.masked.gather.v{vw}f32.v{vw}p0", self.e.vector, [pointers, I32, self.e.mask_type, self.e.vector]
        )

        def c(r: int, v: int) -> ir.Value:
            zero = ir.Constant(self.e.vector, None)
            return b.call(gather, [self.lane_pointers[r][v], ir.Constant(I32, 4), self._mask(v), zero])

        return [
            [b.fadd(c(r, v), self.bias[r][v]) if accumulate else self.bias[r][v] for v in range(self.vectors)]
            for r in range(self.rows)
        ]

    def resumed(self, b: ir.IRBuilder) -> list[list[ir.Value]]:
        return [
            [b.load(self.partials[r][v], typ=self.e.vector, align=4) for v in range(self.vectors)]
            for r in range(self.rows)
        ]

    def store(self, b: ir.IRBuilder, values: list[list[ir.Value]], last: ir.Value) -> None:
        """The last block scatters into C through the epilogue; the others store their partial sums."""
        vw = self.e.p.vw
        scatter = self.e.declare(
            f"llvm.masked.scatter.v{vw}f32.v{vw}p0",
            ir.VoidType(),
            [self.e.vector, ir.VectorType(PTR, vw), I32, self.e.mask_type],
        )
        with b.if_else(last) as (then, otherwise):
            with then:
                for r, row in enumerate(values):
                    for v, value in enumerate(row):
                        b.call(
                            scatter,
                            [self.e.finish(b, value), self.lane_pointers[r][v], ir.Constant(I32, 4), self._mask(v)],
                        )
            with otherwise:
                for r, row in enumerate(values):
                    for v, value in enumerate(row):
                        b.store(value, self.partials[r][v], align=4)
