"""DynamicQuantizeLSTM (onnxruntime's dynamically quantized LSTM) on integer kernels.

onnxruntime keeps W [D, input, 4H] and R [D, H, 4H] in 8 bits and multiplies them by
activations quantized to uint8 on the fly. Each of its products A·B is

    a_scale, a_zero = DynamicQuantizeLinear's parameters of A (one range over all of A, and 0)
    C[m, n] = float32(Σ_k (q(A[m, k]) - a_zero) (B[k, n] - b_zero)) · (a_scale · b_scale[n])

with q(a) = saturate(round_half_even(a / a_scale) + a_zero); A is X at every step at once
(the steps below the longest sequence set the range) for the input projection, and at each
step the hidden state for the recurrent product. Its range, with sequence_lens, is that of
the rows which ran at the step before (the first step: all rows); without Y, onnxruntime
keeps every row's last state in place, and all rows count. The gate
math stays in float: recurrent.py's LSTM step (peepholes, clip, activations) runs on these
products (`QuantizedProducts`).

Here the weights less their zero points are packed at compile time as krnl.qmatmul's B
(column panels, quantized_gemm.py) with their column sums: Σ (a - a_zero) w = Σ a w -
a_zero Σ w. Per product, a nest finds the range of A, another quantizes and packs its rows
in row tiles, krnl.qmatmul (vpdpbusd on x86 with VNNI, portable vector IR elsewhere) stores
the int32 sums, and a last nest subtracts the compensation and scales them into the
projection or adds them to the gate accumulator. krnl.qmatmul's geometry is static: rows
known at run time only go in chunks of static sizes (CHUNK_ROWS, then ROW_TILE, then one).

The results are onnxruntime's (at one intra-op thread; with more, it quantizes each
thread's batch rows apart) up to float rounding: it adds the biases after the recurrent
product, here before. A value that lands on the other side of a rounding boundary of the
next step's quantization moves that element of h by one step: differences stay far below
onnxruntime's own quantization error (tests/test_microsoft_ops.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType, MemRefType, Signedness, f32, i8, i32
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_int8 import QMatmulOp, padded_columns
from onnxc.dialects.microsoft import lstm_integer_weights
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import reshaped_view
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, lowers, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.quantization import dynamic_parameters, to_integer
from onnxc.passes.onnx_to_krnl.quantized_gemm import ROW_TILE, column_panels
from onnxc.passes.onnx_to_krnl.recurrent import Recurrence, Vector, WeightLayout, lower_recurrence

UINT8 = IntegerType(8, Signedness.UNSIGNED)
CHUNK_ROWS = 8 * ROW_TILE
"""The most rows of A one krnl.qmatmul takes: a long sequence's input projection goes in
chunks, each one pass over W."""
QUANTIZED_WEIGHTS = WeightLayout(transposed=True, integer_inputs=(1, 2, 4, 9, 11))

Load = Callable[[KernelBuilder, Bound, Bound], SSAValue]
"""(builder, row, k) -> A[row, k], a float."""
Counts = Callable[[KernelBuilder, Bound], SSAValue | None]
"""(builder, row) -> whether the row's values set A's range (an i1), None where every row's do."""
Store = Callable[[KernelBuilder, int, Bound, Bound, SSAValue], None]
"""(builder, direction, row, column, C[row, column]) -> None."""


@lowers("DynamicQuantizeLSTM", run_time_dims=True)
def lower_dynamic_quantize_lstm(g: GraphLowering, op: OnnxOp) -> None:
    lower_recurrence(g, op, "LSTM", QUANTIZED_WEIGHTS, _products)


@dataclass(frozen=True)
class _Weights:
    """W or R as krnl.qmatmul's B per direction, with [D, 4H] tables of its column sums
    (int32) and scales (float32)."""

    panels: list[SSAValue]
    sums: SSAValue
    scales: SSAValue
    reduction: int


def _packed(g: GraphLowering, op: OnnxOp, index: int, scale_index: int, columns: int) -> _Weights:
    """Input `index` (W or R) less its zero point (input scale_index + 1), packed."""
    weights, scale, zero_point = (constant_array(op.input(k)) for k in (index, scale_index, scale_index + 1))
    if weights is None or scale is None or zero_point is None:
        raise g.unsupported(op, f"input {index}, its scale and its zero point must be constants")
    differences = lstm_integer_weights(weights, zero_point)
    if differences is None:
        raise g.unsupported(
            op, f"input {index} of {weights.dtype} less its zero point of shape {list(zero_point.shape)} is not int8"
        )
    directions = weights.shape[0]
    if scale.dtype != np.float32 or scale.size not in (directions, directions * columns):
        raise g.shape_error(
            op, f"scale of input {index}: {scale.dtype} {list(scale.shape)}, expected float32 [{directions}] or "
            f"[{directions}, {columns}]"
        )  # fmt: skip
    name = f"{op.node_name or 'dynamic_quantize_lstm'}_{'wr'[index - 1]}"
    panels, sums = zip(*(column_panels(differences[d]) for d in range(directions)))
    scales = np.broadcast_to(scale.reshape(directions, -1), (directions, columns))
    return _Weights(
        [weight_buffer(g, op, p, i8, f"{name}_panels_{d}") for d, p in enumerate(panels)],
        weight_buffer(g, op, np.stack(sums)[:, :columns].astype(np.int32), i32, f"{name}_sums"),
        weight_buffer(g, op, scales.astype(np.float32), f32, f"{name}_scales"),
        weights.shape[1],
    )


def _chunk_sizes(rows: Bound, most: int) -> list[int]:
    """The static row counts of the chunks of a product of `rows` rows, largest first: for
    a known count, `most` (or all rows) and then the rest; else `most`, ROW_TILE and 1."""
    if isinstance(rows, int):
        chunk = min(rows, most)
        return [size for size in (chunk, rows % chunk) if size]
    return sorted({most, ROW_TILE, 1}, reverse=True)


@dataclass
class QuantizedProducts:
    """The products of a DynamicQuantizeLSTM (see the module docstring), with the buffers
    they reuse: A packed and the int32 C of each chunk size (allocated once, before the
    time loops)."""

    g: GraphLowering
    input_weights: _Weights
    recurrent_weights: _Weights
    offsets: SSAValue  # zeros [Np]: the compensation is subtracted as the sums are scaled
    buffers: dict[tuple[int, int], tuple[SSAValue, SSAValue]]  # (rows, K) -> (A, C)

    def allocate(self, rows: Bound, most: int, reduction: int, columns: int) -> None:
        """The buffers of the chunks of a product of `rows` rows (`_chunk_sizes`)."""
        for size in _chunk_sizes(rows, most):
            if (size, reduction) not in self.buffers:
                a = self.g.top.alloc(MemRefType(UINT8, [-(-size // ROW_TILE), -(-reduction // 4), ROW_TILE, 4]))
                self.buffers[size, reduction] = (a, self.g.top.alloc(MemRefType(i32, [size, columns])))

    def project(self, r: Recurrence) -> None:
        """projection[d, t, b, :] = X[t, b] · W[d] for every step at once, X quantized over
        the steps below the longest sequence (all rows without sequence_lens)."""
        top = self.g.top
        x = self.g.input(r.op, 0)
        reduction = self.input_weights.reduction
        rows = top.mul(r.sequence, r.batch)
        flat = reshaped_view(top, x, [rows, reduction])
        directions = len(r.reverse)
        projection = reshaped_view(top, r.projection, [directions, rows, r.columns])
        counted = rows if r.lengths is None else top.mul(_longest(top, r), r.batch)

        def counts(b: KernelBuilder, row: Bound) -> SSAValue | None:
            return None if r.lengths is None else b.compare_index("slt", row, counted)

        def store(b: KernelBuilder, d: int, row: Bound, column: Bound, value: SSAValue) -> None:
            b.store(value, projection, [d, row, column])

        load = lambda b, row, k: b.load(flat, [row, k])
        self.product(top, r, rows, self.input_weights, range(directions), (load, counts, store), CHUNK_ROWS)

    def accumulate(self, r: Recurrence, b: KernelBuilder, d: int, t: Bound, gates: range, vector: Vector) -> None:
        """accumulator[b, :] += h[b] · R[d] at step t (an LSTM's step: all four gates), h
        quantized over the rows onnxruntime's is (the module docstring)."""
        buffer, prefix = vector

        def counts(body: KernelBuilder, row: Bound) -> SSAValue | None:
            if r.lengths is None or r.y is None:
                return None
            length = body.min(body.to_index(body.load(r.lengths, [row])), r.sequence)
            return body.compare_index("sle", t, length)  # ran at step t - 1

        def store(body: KernelBuilder, _: int, row: Bound, column: Bound, value: SSAValue) -> None:
            body.store(body.add(body.load(r.accumulator, [row, column]), value), r.accumulator, [row, column])

        load = lambda body, row, k: body.load(buffer, [*prefix, row, k])
        self.product(b, r, r.batch, self.recurrent_weights, [d], (load, counts, store), ROW_TILE)

    def product(
        self,
        b: KernelBuilder,
        r: Recurrence,
        rows: Bound,
        weights: _Weights,
        directions: Sequence[int],
        access: tuple[Load, Counts, Store],
        most: int,
    ) -> None:
        """store(d, row, n, A[row] · B_d[:, n]) for every row, A quantized over the rows that
        count (`access`: how A is read, which rows set its range, where results go)."""
        load, counts, store = access
        reduction, columns = weights.reduction, r.columns
        zero = b.constant(0.0, f32)

        def extreme(kind: str) -> SSAValue:
            def step(body: KernelBuilder, ivs: list[Bound], total: SSAValue) -> SSAValue:
                value, counted = load(body, *ivs), counts(body, ivs[0])
                value = value if counted is None else body.select(counted, value, zero)
                return body.max(total, value) if kind == "max" else body.min(total, value)

            return b.reduce([(0, rows), (0, reduction)], zero, step)

        scale, zero_point = dynamic_parameters(b, extreme("min"), extreme("max"), UINT8)
        start: Bound = 0
        for size in _chunk_sizes(rows, most):
            count = b.div(b.sub(rows, start), size)
            a, c = self.buffers[size, reduction]
            (chunk,), body = b.for_nest([(0, count)])
            first = body.add(start, body.mul(chunk, size))
            _pack(body, a, first, size, reduction, load, (scale, zero_point))
            for d in directions:
                body.insert(_qmatmul(a, weights.panels[d], c, self.offsets, (size, columns, reduction)))
                (i, j), inner = body.for_nest([(0, size), (0, columns)])
                compensation = inner.mul(inner.convert(zero_point, i32), inner.load(weights.sums, [d, j]))
                total = inner.sub(inner.load(c, [i, j]), compensation)
                multiplier = inner.mul(scale, inner.load(weights.scales, [d, j]))
                store(inner, d, inner.add(first, i), j, inner.mul(inner.convert(total, f32), multiplier))
            start = b.add(start, b.mul(count, size))


def _pack(b: KernelBuilder, a: SSAValue, first: Bound, size: int, reduction: int, load: Load, parameters) -> None:
    """A[i / mr, k / 4, i % mr, k % 4] = q(row first + i, k) for the chunk's rows i, zero
    past the reduction (krnl.qmatmul's row tiles)."""
    scale, zero_point = parameters
    (i, k4, t), body = b.for_nest([(0, size), (0, shape_of(a)[1]), (0, 4)])
    k = body.add(body.mul(k4, 4), t)
    value = load(body, body.add(first, i), body.min(k, reduction - 1))
    quantized = to_integer(body, body.div(value, scale), zero_point, UINT8, round_first=True)
    inside = body.compare_index("slt", k, reduction)
    body.store(
        body.select(inside, quantized, body.constant(0, UINT8)),
        a,
        [body.div(i, ROW_TILE), k4, body.rem(i, ROW_TILE), t],
    )


def _qmatmul(a: SSAValue, b: SSAValue, c: SSAValue, offsets: SSAValue, sizes: tuple[int, int, int]) -> QMatmulOp:
    """C (int32) = A (uint8 row tiles) · B (int8 column panels in blocks) for sizes (M, N, K)."""
    rows, columns, reduction = sizes
    int32 = np.iinfo(np.int32)
    return QMatmulOp(
        a, b, c, offsets, None,
        sizes=(rows, columns, -(-reduction // 4)), row_tile=ROW_TILE, ldc=columns, batch=[0, 0, 0], zero_point=0,
        clip=(int(int32.min), int(int32.max)), a_signed=False, per_column=True, b_blocked=True,
    )  # fmt: skip


def _longest(b: KernelBuilder, r: Recurrence) -> Bound:
    """The longest of sequence_lens, at most the sequence's length."""
    longest = b.reduce(
        [(0, r.batch)], b.constant(0, i32), lambda body, ivs, total: body.max(total, body.load(r.lengths, ivs))
    )
    return b.min(b.to_index(longest), r.sequence)


def _products(g: GraphLowering, op: OnnxOp, r: Recurrence) -> QuantizedProducts:
    columns = r.columns
    offsets = np.zeros(padded_columns(columns), np.int32)
    products = QuantizedProducts(
        g,
        _packed(g, op, 1, 8, columns),
        _packed(g, op, 2, 10, columns),
        weight_buffer(g, op, offsets, i32, f"{op.node_name or 'dynamic_quantize_lstm'}_no_offsets"),
        {},
    )
    products.allocate(g.top.mul(r.sequence, r.batch), CHUNK_ROWS, products.input_weights.reduction, columns)
    products.allocate(r.batch, ROW_TILE, products.recurrent_weights.reduction, columns)
    return products
