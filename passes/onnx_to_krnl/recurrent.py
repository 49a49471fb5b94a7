"""Recurrent ops: LSTM, GRU and RNN (one layer, forward, reverse or bidirectional).

Schedule, as onnx-mlir and onnxruntime do it:
1. the input projection of every time step at once, XW[d, t, b, :] = X[t, b] · W[d]ᵀ,
   as one GEMM per direction (krnl.matmul for float32), W transposed once (at
   compile time when it is a constant), Wb + Rb summed once;
2. per direction, one kernel holding the time loop; per step, the gate accumulator
   [batch, gates*hidden] starts as the projected rows plus the biases, the recurrent
   product H · R[d]ᵀ is added by one krnl.matmul (batch rows x gate columns, its
   accumulators in registers; other float types: unit-stride axpy loops), then the
   gate math of the cell, whose sigmoid/tanh are the vectorizable math of
   codegen/vector_math.py.

Gate columns follow the ONNX order (LSTM i, o, f, c; GRU z, r, h). `sequence_lens`
follows onnxruntime: a row b runs steps 0..len[b]-1 (reverse: from x[len-1] down to
x[0]), Y is zero past len[b], Y_h / Y_c hold the state after the last valid step.

A sequence, batch or size known at run time only takes the loop nests of the other
float types for both products (krnl.matmul's geometry is static), the same arithmetic.

The two products are a `Products` of the op: these float ones, or the 8-bit ones of
DynamicQuantizeLSTM (quantized_recurrent.py), which shares the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import Float32Type, Float64Type
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, reshaped_view
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    Operand,
    constant_array,
    dims_agree,
    elementwise,
    fill,
    lowers,
    optional_result,
    shape_of,
    shape_text,
)
from onnxc.passes.onnx_to_krnl.elementwise import ACTIVATIONS, ELEMENTWISE
from onnxc.passes.onnx_to_krnl.matmul import contract
from onnxc.passes.onnx_to_krnl.matmul_kernel import RUN_TIME_ROWS_GUESS, TILE_ROWS, emit_matrix_product, weight_global

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh",)}

Activation = Callable[[KernelBuilder, SSAValue], SSAValue]


# ----------------------------------------------------------------------------- activations


def _affine(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    return b.add(b.mul(a("alpha"), x), a("beta"))


def _scaled_tanh(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    return b.mul(a("alpha"), b.math(math.TanhOp, b.mul(a("beta"), x)))


def _plain(name: str):
    function = ELEMENTWISE[name][0]
    return lambda b, x, a: function(b, [x])


ACTIVATION_FUNCTIONS = {
    "relu": (_plain("Relu"), None, None),
    "tanh": (_plain("Tanh"), None, None),
    "sigmoid": (_plain("Sigmoid"), None, None),
    "softsign": (_plain("Softsign"), None, None),
    "softplus": (_plain("Softplus"), None, None),
    "affine": (_affine, 1.0, 0.0),
    "scaledtanh": (_scaled_tanh, 1.0, 1.0),
    "leakyrelu": (ACTIVATIONS["LeakyRelu"][0], 0.01, None),
    "thresholdedrelu": (ACTIVATIONS["ThresholdedRelu"][0], 1.0, None),
    "hardsigmoid": (ACTIVATIONS["HardSigmoid"][0], 0.2, 0.5),
    "elu": (ACTIVATIONS["Elu"][0], 1.0, None),
}
"""lower-case name -> (function(builder, x, parameter), default alpha, default beta); None:
the function takes no such parameter."""


def _activations(g: GraphLowering, op: OnnxOp, cell: str, directions: int) -> list[list[Activation]]:
    """The activation functions of each direction. As onnxruntime does, names are
    case-insensitive, one set of names serves both directions, and activation_alpha /
    activation_beta are consumed in order by the functions that take the parameter
    (the others take none), with the ONNX operator's default where the list runs out."""
    per_direction = len(DEFAULT_ACTIVATIONS[cell])
    # Not the schema's default: RNN's lists two Tanh whatever the direction.
    names = list(op.attr("activations") if "activations" in op.attributes else DEFAULT_ACTIVATIONS[cell])
    if len(names) == per_direction:
        names *= directions
    if len(names) != per_direction * directions:
        raise g.shape_error(op, f"{len(names)} activations for {directions} direction(s) of {per_direction}")
    alphas, betas = list(op.attr("activation_alpha") or []), list(op.attr("activation_beta") or [])
    functions: list[Activation] = []
    for name in names:
        entry = ACTIVATION_FUNCTIONS.get(name.lower())
        if entry is None:
            raise g.unsupported(op, f"activation function '{name}'")
        function, alpha_default, beta_default = entry
        alpha = None if alpha_default is None else (alphas.pop(0) if alphas else alpha_default)
        beta = None if beta_default is None else (betas.pop(0) if betas else beta_default)
        parameters = {"alpha": alpha, "beta": beta}

        def apply(b: KernelBuilder, x: SSAValue, function=function, parameters=parameters) -> SSAValue:
            return function(b, x, lambda name: b.constant(parameters[name], x.type))

        functions.append(apply)
    return [functions[k * per_direction : (k + 1) * per_direction] for k in range(directions)]


# ----------------------------------------------------------------------------- the lowering


Vector = tuple[SSAValue, tuple[int, ...]]
"""Rows of the left operand of a recurrent product: (buffer, index prefix); row b is
buffer[*prefix, b, :] (the state of direction d: (hidden_state, (d,)))."""


@dataclass
class Recurrence:
    """Buffers and geometry shared by the steps of one recurrent op."""

    op: OnnxOp
    g: GraphLowering
    element: Attribute
    sequence: Bound
    batch: Bound
    hidden: Bound
    batchwise: bool  # layout 1: X, Y, states with the batch dim first
    reverse: list[bool]  # per direction
    lengths: SSAValue | None  # sequence_lens [batch]
    projection: SSAValue  # [dirs, X dim 0, X dim 1, gates*hidden]: X·Wᵀ
    bias: SSAValue | None  # B [dirs, 2*gates*hidden]
    gate_bias: SSAValue | None  # [dirs, gates*hidden]: Wb + Rb, added to the projection
    peepholes: SSAValue | None  # P [dirs, 3*hidden]
    hidden_state: SSAValue  # [dirs, batch, hidden]
    cell_state: SSAValue | None  # [dirs, batch, hidden], LSTM
    accumulator: SSAValue  # [batch, gates*hidden]: the gate pre-activations of one step
    reset_state: SSAValue | None  # [batch, hidden]: r ⊙ H of a GRU without linear_before_reset
    y: SSAValue | None
    clip: float | None
    products: Products = field(init=False)

    @property
    def columns(self) -> Bound:
        return shape_of(self.accumulator)[1]

    @property
    def kernel(self) -> bool:
        """Whether the products take krnl.matmul: float32 of static sizes, the batch
        and sequence known at run time only with one direction (its rows then start
        at offset 0, as krnl.matmul's `rows` wants)."""
        sizes = (self.hidden, self.columns)
        lengths = (self.sequence, self.batch)
        one_direction = shape_of(self.projection)[0] == 1
        static = all(isinstance(s, int) for s in sizes) and (one_direction or all(isinstance(s, int) for s in lengths))
        return isinstance(self.element, Float32Type) and static

    def run_time_rows(self, rows: Bound, guess: int) -> tuple[int, SSAValue | None]:
        """The M to schedule a product of `rows` for (`guess` where known at run time
        only), and `rows` where known at run time only."""
        return (rows, None) if isinstance(rows, int) else (guess, self.g.top.index(rows))

    def each_row(self, b: KernelBuilder, d: int, t: Bound) -> tuple[KernelBuilder, Bound, Bound]:
        """A loop over the batch rows still running at step t: a builder in its body,
        the row, and the row's time index (reverse: counted back from its length).
        A length past the sequence counts as the sequence's (no access out of bounds)."""
        (row,), body = b.for_nest([(0, self.batch)])
        if self.lengths is None:
            return body, row, body.sub(body.sub(self.sequence, 1), t) if self.reverse[d] else t
        length = body.min(body.to_index(body.load(self.lengths, [row])), self.sequence)
        body = body.if_then(body.compare_index("slt", t, length))
        return body, row, body.sub(body.sub(length, 1), t) if self.reverse[d] else t

    def projected(self, b: KernelBuilder, d: int, t: Bound, row: Bound, column: Bound) -> SSAValue:
        """X·Wᵀ plus the biases of a gate column at time t."""
        index = [d, row, t] if self.batchwise else [d, t, row]
        value = b.load(self.projection, [*index, column])
        return value if self.gate_bias is None else b.add(value, b.load(self.gate_bias, [d, column]))

    def store_y(self, b: KernelBuilder, value: SSAValue, d: int, t: Bound, row: Bound, j: Bound) -> None:
        if self.y is not None:
            b.store(value, self.y, [row, t, d, j] if self.batchwise else [t, d, row, j])

    def clipped(self, b: KernelBuilder, x: SSAValue) -> SSAValue:
        if self.clip is None:
            return x
        return b.min(b.max(x, b.constant(-self.clip, x.type)), b.constant(self.clip, x.type))

    def gate(self, b: KernelBuilder, row: Bound, number: int, j: Bound) -> SSAValue:
        return b.load(self.accumulator, [row, b.add(j, b.mul(number, self.hidden))])

    def initialize(self, b: KernelBuilder, d: int, t: Bound, gates: range, value: Initializer) -> None:
        """accumulator[row, column] := value(row, time, column) over the columns of `gates`."""
        body, row, time = self.each_row(b, d, t)
        (j,), inner = body.for_nest([(0, body.mul(len(gates), self.hidden))])
        column = inner.add(j, inner.mul(gates.start, self.hidden))
        inner.store(value(inner, row, time, column), self.accumulator, [row, column])

    def accumulate(self, b: KernelBuilder, d: int, t: Bound, gates: range, vector: Vector) -> None:
        """accumulator[:, columns of `gates`] += vector · Rᵀ[d][:, those columns] at step t."""
        self.products.accumulate(self, b, d, t, gates, vector)


class Products(Protocol):
    """The two products of a recurrent op: the input projection of every step, and per step
    the recurrent product added to the gate accumulator."""

    def project(self, r: Recurrence) -> None: ...

    def accumulate(self, r: Recurrence, b: KernelBuilder, d: int, t: Bound, gates: range, vector: Vector) -> None: ...


Initializer = Callable[[KernelBuilder, Bound, Bound, Bound], SSAValue]
"""(builder, batch row, its time index, gate column) -> the accumulator's start value."""

Step = Callable[[Recurrence, KernelBuilder, int, list[Activation], Bound], None]
"""(recurrence, builder in the time loop, direction, its activations, step)."""


def _projected(r: Recurrence, d: int) -> Initializer:
    return lambda body, row, time, column: r.projected(body, d, time, row, column)


def _lstm_step(r: Recurrence, b: KernelBuilder, d: int, f: list[Activation], t: Bound) -> None:
    """i, f, o gates see the previous cell state through the peepholes (o the new one);
    with input_forget the forget gate is 1 - i."""
    r.initialize(b, d, t, range(4), _projected(r, d))
    r.accumulate(b, d, t, range(4), (r.hidden_state, (d,)))
    rows, row, time = r.each_row(b, d, t)
    (j,), body = rows.for_nest([(0, r.hidden)])
    previous = body.load(r.cell_state, [d, row, j])

    def pre_activation(gate: int, peephole: int | None, cell: SSAValue) -> SSAValue:
        value = r.gate(body, row, gate, j)
        if r.peepholes is not None and peephole is not None:
            weight = body.load(r.peepholes, [d, body.add(j, body.mul(peephole, r.hidden))])
            value = body.add(value, body.mul(weight, cell))
        return r.clipped(body, value)

    one = body.constant(1.0, r.element)
    input_gate = f[0](body, pre_activation(0, 0, previous))
    if r.op.attr("input_forget"):
        forget_gate = body.sub(one, input_gate)
    else:
        forget_gate = f[0](body, pre_activation(2, 2, previous))
    candidate = f[1](body, pre_activation(3, None, previous))
    cell = body.add(body.mul(forget_gate, previous), body.mul(input_gate, candidate))
    output_gate = f[0](body, pre_activation(1, 1, cell))
    hidden = body.mul(output_gate, f[2](body, cell))
    body.store(cell, r.cell_state, [d, row, j])
    body.store(hidden, r.hidden_state, [d, row, j])
    r.store_y(body, hidden, d, time, row, j)


def _gru_step(r: Recurrence, b: KernelBuilder, d: int, f: list[Activation], t: Bound) -> None:
    """z and r from H·Rᵀ; the candidate h from (r ⊙ H)·Rhᵀ, or with linear_before_reset
    from r ⊙ (H·Rhᵀ + Rbh) (Rbh then starts the accumulator instead of the projection)."""
    hidden = r.hidden
    state = (r.hidden_state, (d,))
    linear_before_reset = r.op.attr("linear_before_reset")
    r.initialize(b, d, t, range(2), _projected(r, d))
    if linear_before_reset:
        if r.bias is None:
            r.initialize(b, d, t, range(2, 3), lambda body, row, time, column: body.constant(0.0, r.element))
        else:  # Rbh: Rb starts at column 3 * hidden of B
            r.initialize(
                b,
                d,
                t,
                range(2, 3),
                lambda body, row, time, column: body.load(r.bias, [d, body.add(column, body.mul(3, hidden))]),
            )
        r.accumulate(b, d, t, range(3), state)
    else:
        r.accumulate(b, d, t, range(2), state)
        rows, row, _ = r.each_row(b, d, t)
        (j,), body = rows.for_nest([(0, hidden)])
        reset = f[0](body, r.clipped(body, r.gate(body, row, 1, j)))
        body.store(body.mul(reset, body.load(r.hidden_state, [d, row, j])), r.reset_state, [row, j])
        r.initialize(b, d, t, range(2, 3), _projected(r, d))
        r.accumulate(b, d, t, range(2, 3), (r.reset_state, ()))

    rows, row, time = r.each_row(b, d, t)
    (j,), body = rows.for_nest([(0, hidden)])
    update = f[0](body, r.clipped(body, r.gate(body, row, 0, j)))
    if linear_before_reset:
        reset = f[0](body, r.clipped(body, r.gate(body, row, 1, j)))
        projected = r.projected(body, d, time, row, body.add(j, body.mul(2, hidden)))
        candidate = f[1](body, r.clipped(body, body.add(projected, body.mul(reset, r.gate(body, row, 2, j)))))
    else:
        candidate = f[1](body, r.clipped(body, r.gate(body, row, 2, j)))
    previous = body.load(r.hidden_state, [d, row, j])
    one = body.constant(1.0, r.element)
    new = body.add(body.mul(body.sub(one, update), candidate), body.mul(update, previous))
    body.store(new, r.hidden_state, [d, row, j])
    r.store_y(body, new, d, time, row, j)


def _rnn_step(r: Recurrence, b: KernelBuilder, d: int, f: list[Activation], t: Bound) -> None:
    r.initialize(b, d, t, range(1), _projected(r, d))
    r.accumulate(b, d, t, range(1), (r.hidden_state, (d,)))
    rows, row, time = r.each_row(b, d, t)
    (j,), body = rows.for_nest([(0, r.hidden)])
    new = f[0](body, r.clipped(body, r.gate(body, row, 0, j)))
    body.store(new, r.hidden_state, [d, row, j])
    r.store_y(body, new, d, time, row, j)


STEPS: dict[str, Step] = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN": _rnn_step}


def _transposed(g: GraphLowering, op: OnnxOp, index: int, element: Attribute, hint: str) -> SSAValue:
    """W or R of shape [dirs, rows, columns] as [dirs, columns, rows]: at compile time
    when it is a constant, else by a copy at run time."""
    array = constant_array(op.input(index))
    if array is not None:
        return weight_global(g, op, np.swapaxes(array, 1, 2), f"{op.node_name or op.OP_TYPE.lower()}_{hint}", element)
    source = g.input(op, index)
    directions, rows, columns = shape_of(source)
    out = alloc_shaped(g.top, element, [directions, columns, rows])
    elementwise(g.top, out, [Operand(source, (0, 2, 1))], lambda b, xs: xs[0])
    return out


@dataclass
class FloatProducts:
    """The products in the op's float type (krnl.matmul for float32, `Recurrence.kernel`)."""

    recurrent_weights: SSAValue  # [dirs, hidden, gates*hidden]: Rᵀ

    def project(self, r: Recurrence) -> None:
        _project_inputs(r.g, r.op, r)

    def accumulate(self, r: Recurrence, b: KernelBuilder, d: int, t: Bound, gates: range, vector: Vector) -> None:
        """accumulator[:, columns of `gates`] += vector · Rᵀ[d][:, those columns]: for
        float32 the GEMM kernel (rows of the batch x gate columns, accumulators in
        registers), else one unit-stride axpy per element of the vector."""
        first, count = b.mul(gates.start, r.hidden), b.mul(len(gates), r.hidden)
        buffer, prefix = vector
        if r.kernel:
            a_offset = b.mul(b.mul(prefix[0], r.batch), r.hidden) if prefix else 0  # 0 if run-time
            b_offset = d * r.hidden * r.columns + first
            # A batch of a few rows: R^T read in place, not packed again at every step.
            m, rows = r.run_time_rows(r.batch, TILE_ROWS)
            emit_matrix_product(
                r.g,
                r.op,
                buffer,
                self.recurrent_weights,
                r.accumulator,
                (m, count, r.hidden),
                (r.hidden, 1),
                [a_offset, b_offset, first],
                accumulate=True,
                ldb=r.columns,
                ldc=r.columns,
                at=b,
                rows=rows,
            )
            return
        (row, k), outer = b.for_nest([(0, r.batch), (0, r.hidden)])
        scale = outer.load(buffer, [*prefix, row, k])
        (j,), inner = outer.for_nest([(0, count)])
        column = inner.add(j, first)
        weight = inner.load(self.recurrent_weights, [d, k, column])
        total = inner.add(inner.load(r.accumulator, [row, column]), inner.mul(scale, weight))
        inner.store(total, r.accumulator, [row, column])


def _project_inputs(g: GraphLowering, op: OnnxOp, r: Recurrence) -> None:
    """projection[d, t, b, :] = X[t, b] · W[d]ᵀ for every step at once."""
    x, w = g.input(op, 0), g.input(op, 1)
    directions, columns, input_size = shape_of(w)
    if r.kernel and isinstance(input_size, int):
        rows = g.top.mul(r.sequence, r.batch)
        w_transposed = _transposed(g, op, 1, r.element, "w_transposed")
        m, run_time_rows = r.run_time_rows(rows, RUN_TIME_ROWS_GUESS)
        if run_time_rows is not None:  # one direction: [rows, input] by [input, columns]
            x = reshaped_view(g.top, x, [rows, input_size])
            projection = reshaped_view(g.top, r.projection, [rows, columns])
            sizes = (m, columns, input_size)
            emit_matrix_product(
                g, op, x, w_transposed, projection, sizes, (input_size, 1), [0, 0, 0], rows=run_time_rows
            )
            return
        offsets = [value for d in range(directions) for value in (0, d * input_size * columns, d * rows * columns)]
        emit_matrix_product(g, op, x, w_transposed, r.projection, (rows, columns, input_size), (input_size, 1), offsets)
        return
    fill(g.top, r.projection, g.top.constant(0.0, r.element))
    contract(
        g,
        r.projection,
        input_size,
        (x, lambda ivs, k: [ivs[1], ivs[2], k]),
        (w, lambda ivs, k: [ivs[0], ivs[3], k]),
        row_axis=2,
        column_axis=3,
    )


def _gate_bias(g: GraphLowering, op: OnnxOp, element: Attribute, folded_columns: Bound) -> SSAValue | None:
    """Wb[d] + Rb[d] per gate column, [dirs, gates*hidden] (Rb only in the first
    `folded_columns` columns), or None without B."""
    bias = g.input(op, 3)
    if bias is None:
        return None
    directions, both = shape_of(bias)
    columns = g.top.div(both, 2)
    out = alloc_shaped(g.top, element, [directions, columns])
    (d, column), body = g.top.loop_nest([directions, columns])
    recurrent = body.load(bias, [d, body.add(column, columns)])  # Rb follows Wb in B
    if not isinstance(folded_columns, int) or not isinstance(columns, int) or folded_columns < columns:
        folded = body.compare_index("slt", column, folded_columns)
        recurrent = body.select(folded, recurrent, body.constant(0.0, element))
    body.store(body.add(body.load(bias, [d, column]), recurrent), out, [d, column])
    return out


@dataclass(frozen=True)
class WeightLayout:
    """How an op holds its weights: W [dirs, gates*hidden, input] and R [dirs, gates*hidden,
    hidden] of the float type (LSTM, GRU, RNN), or `transposed` ([dirs, input, gates*hidden],
    [dirs, hidden, gates*hidden]); `integer_inputs` are not of the float type."""

    transposed: bool
    integer_inputs: tuple[int, ...]


FLOAT_WEIGHTS = WeightLayout(transposed=False, integer_inputs=(4,))

ProductsOf = Callable[[GraphLowering, OnnxOp, Recurrence], Products]
"""(graph, op, its recurrence) -> the products of its steps."""


@lowers("LSTM", "GRU", "RNN", run_time_dims=True)
def lower_recurrent(g: GraphLowering, op: OnnxOp) -> None:
    lower_recurrence(g, op, op.OP_TYPE, FLOAT_WEIGHTS, _float_products)


def _float_products(g: GraphLowering, op: OnnxOp, r: Recurrence) -> Products:
    return FloatProducts(_transposed(g, op, 2, r.element, "r_transposed"))


def lower_recurrence(g: GraphLowering, op: OnnxOp, cell: str, layout: WeightLayout, products: ProductsOf) -> None:
    """The op as recurrent `cell` (LSTM, GRU or RNN) with weights of `layout` and `products`."""
    gates = GATES[cell]
    floats = [v for k, v in enumerate(onnx_inputs(op)) if k not in layout.integer_inputs and v is not None]
    element = g.same_element_type(op, [*floats, *(r for r in op.results if r is not None)], ints=False)
    if not isinstance(element, Float32Type | Float64Type):
        raise g.unsupported(op, f"{op.OP_TYPE} on {element} (float32 and float64 only)")
    # Not the schema's default at GRU-1/2, the misspelled "foward": meant as "forward".
    direction = op.attr("direction") if "direction" in op.attributes else "forward"
    if direction not in ("forward", "reverse", "bidirectional"):
        raise g.unsupported(op, f"direction '{direction}'")
    directions = 2 if direction == "bidirectional" else 1
    batchwise = bool(op.attr("layout"))
    x, r_weights = g.input(op, 0), g.input(op, 2)
    x_shape = shape_of(x)
    if len(x_shape) != 3:
        raise g.shape_error(op, f"X of shape {list(x_shape)} is not [seq, batch, input]")
    batch, sequence = x_shape[:2] if batchwise else reversed(x_shape[:2])
    hidden = shape_of(r_weights)[1 if layout.transposed else -1]
    if not isinstance(hidden, int) and op.attr("hidden_size") is not None:
        hidden = op.attr("hidden_size")  # R's columns at run time must agree
    if op.attr("hidden_size", hidden) != hidden:
        raise g.shape_error(op, f"hidden_size {op.attr('hidden_size')} but R has {hidden} columns")
    top = g.top
    columns = top.mul(gates, hidden)
    expected = {1: (directions, columns, x_shape[2]), 2: (directions, columns, hidden)}
    if layout.transposed:
        expected = {index: (directions, rows, columns) for index, (_, _, rows) in expected.items()}
    expected |= {3: (directions, top.mul(2, columns)), 7: (directions, top.mul(3, hidden))}
    state_shape = (batch, directions, hidden) if batchwise else (directions, batch, hidden)
    expected |= {5: state_shape, 6: state_shape, 4: (batch,)}
    for index, shape in expected.items():
        buffer = g.input(op, index)
        if buffer is not None and not dims_agree(shape_of(buffer), shape):
            raise g.shape_error(
                op, f"input {index} has shape {shape_text(shape_of(buffer))}, expected {shape_text(shape)}"
            )
    if sequence == 0 or batch == 0:
        raise g.unsupported(op, f"{op.OP_TYPE} over an empty sequence or batch")
    activations = _activations(g, op, cell, directions)
    clip = op.attr("clip")
    lstm = cell == "LSTM"

    def state(index: int) -> SSAValue:
        buffer = alloc_shaped(g.top, element, [directions, batch, hidden])
        initial = g.input(op, index)
        if initial is None:
            fill(g.top, buffer, g.top.constant(0.0, element))
        else:
            elementwise(g.top, buffer, [Operand(initial, (1, 0, 2) if batchwise else (0, 1, 2))], lambda b, xs: xs[0])
        return buffer

    y = optional_result(g, op, 0)
    linear_before_reset = cell == "GRU" and op.attr("linear_before_reset")
    lengths = g.input(op, 4)
    r = Recurrence(
        op=op,
        g=g,
        element=element,
        sequence=sequence,
        batch=batch,
        hidden=hidden,
        batchwise=batchwise,
        reverse=[direction == "reverse" or d == 1 for d in range(directions)],
        lengths=lengths,
        projection=alloc_shaped(g.top, element, [directions, *x_shape[:2], columns]),
        bias=g.input(op, 3),
        gate_bias=_gate_bias(g, op, element, top.mul(2, hidden) if linear_before_reset else columns),
        peepholes=g.input(op, 7) if lstm else None,
        hidden_state=state(5),
        cell_state=state(6) if lstm else None,
        accumulator=alloc_shaped(g.top, element, [batch, columns]),
        reset_state=alloc_shaped(g.top, element, [batch, hidden])
        if cell == "GRU" and not linear_before_reset
        else None,
        y=y,
        clip=None if clip is None else float(clip),
    )
    r.products = products(g, op, r)
    r.products.project(r)
    if lengths is not None and y is not None:
        fill(g.top, y, g.top.constant(0.0, element))  # steps past a row's length stay zero

    for d in range(directions):  # one kernel each: the time loop
        (t,), step = g.top.for_nest([(0, sequence)])
        STEPS[cell](r, step, d, activations[d], t)

    final_states = [(1, r.hidden_state), (2, r.cell_state)]
    for position, buffer in final_states:
        out = optional_result(g, op, position)
        if out is not None:
            elementwise(g.top, out, [Operand(buffer, (1, 0, 2) if batchwise else (0, 1, 2))], lambda b, xs: xs[0])
