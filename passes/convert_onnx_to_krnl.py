"""convert-onnx-to-krnl: lower `@main_graph` from onnx ops on tensors to krnl loops on memrefs.

The graph is walked once, in order, with a map from every tensor to the memref
holding it. Each op type has one lowering function (registered in `LOWERINGS`)
that emits its loop nests at the function's top level, next to the
`memref.alloc` of its result. Shared helpers (broadcast indexing, the
elementwise generator, sliding windows, reshaping copies) keep every op's
lowering down to what is particular to it. docs/design.md, "Level 2", is the
contract for the output.

Graph outputs are computed directly into the output arguments when the
producing op writes a fresh buffer; otherwise (a graph input, a constant, a
value returned twice) they are copied there at the end.
"""

from __future__ import annotations

import functools
import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import onnx.defs
from xdsl.context import Context
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from onnxc.dialects.krnl import EntryPointOp, GlobalOp
from onnxc.dialects.onnx import OPSET_ATTR, SINCE_VERSION_ATTR, OnnxOp, WeightAttr, onnx_inputs, tensor_value
from onnxc.dialects.types import is_float, static_shape
from onnxc.errors import InvalidModelError, ShapeError, UnsupportedOpError
from onnxc.passes.krnl_builder import Bound, ConstantPool, KernelBuilder, is_signless_int

GRAPH_NAME = "main_graph"

MATMUL_COLUMN_TILE = 64
"""Columns of the output computed per sweep over the reduction dim (MatMul, Gemm)."""


class ConvertOnnxToKrnlPass(ModulePass):
    """Lower the onnx graph function to krnl loop nests and add the krnl entry point."""

    name = "convert-onnx-to-krnl"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graph = next(
            (f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == GRAPH_NAME),
            None,
        )
        if graph is None:
            raise InvalidModelError(f"no function @{GRAPH_NAME} to lower")
        lowering = GraphLowering(op, graph)
        lowered = lowering.run()
        entry_point = EntryPointOp(GRAPH_NAME, lowering.input_names, lowering.output_names)
        Rewriter.replace_op(graph, [lowered, entry_point], new_results=[])


# ----------------------------------------------------------------------------- graph walk


class GraphLowering:
    """Lowers one graph function: owns the tensor -> memref map and the top-level builder."""

    def __init__(self, module: ModuleOp, graph: func.FuncOp):
        self.graph = graph
        opset = module.attributes.get(OPSET_ATTR)
        # Hand-written IR may leave the opset out: it then means the newest.
        self.opset = opset.value.data if isinstance(opset, IntegerAttr) else onnx.defs.onnx_opset_version()
        terminator = graph.body.block.last_op
        assert isinstance(terminator, func.ReturnOp)
        self.outputs: list[SSAValue] = list(terminator.arguments)
        inputs = list(graph.body.block.args)
        declared_inputs = self._declared_names("onnx.input_names", len(inputs))
        declared_outputs = self._declared_names("onnx.output_names", len(self.outputs))
        self.input_names = declared_inputs or [f"input_{k}" for k in range(len(inputs))]
        self.output_names = declared_outputs or [f"output_{k}" for k in range(len(self.outputs))]

        described = [(v, f"graph input '{n}'") for v, n in zip(inputs, self.input_names)]
        described += [(v, f"graph output '{n}'") for v, n in zip(self.outputs, self.output_names)]
        types = [memref_type_of(value, name=description) for value, description in described]
        self.function = func.FuncOp(GRAPH_NAME, (types, []))
        args = self.function.body.block.args
        self.output_args = args[len(inputs) :]
        hints = (declared_inputs or [v.name_hint for v in inputs]) + (
            declared_outputs or [v.name_hint for v in self.outputs]
        )
        for arg, hint in zip(args, hints):
            if SSAValue.is_valid_name(hint):  # ONNX names may be anything, e.g. "0" or "a:b"
                arg.name_hint = hint
        self.buffers: dict[SSAValue, SSAValue] = dict(zip(inputs, args))
        self.destinations = self._output_destinations()
        entry = self.function.body.block
        self.top = KernelBuilder(InsertPoint.at_end(entry), ConstantPool(entry))

    def run(self) -> func.FuncOp:
        """Lower every op in order, then fill the output arguments not yet written."""
        for op in self.graph.body.block.ops:
            if isinstance(op, func.ReturnOp):
                continue
            if not isinstance(op, OnnxOp):
                raise UnsupportedOpError(f"cannot lower '{op.name}' in @{GRAPH_NAME}")
            lower = LOWERINGS.get(op.OP_TYPE)
            if lower is None:
                raise self.unsupported(op, f"op {op.OP_TYPE} has no lowering")
            last_before = self.function.body.block.last_op
            lower(self, op)
            self._locate_emitted(last_before, op.location)
        for value, arg in zip(self.outputs, self.output_args):
            if self.buffers[value] is not arg:
                copy_reshaped(self.top, self.buffers[value], arg)
        self.top.insert(func.ReturnOp())
        return self.function

    def _locate_emitted(self, last_before: Operation | None, location: Attribute) -> None:
        """Give the ops emitted for a node the node's location (its name), for
        readers of the IR and for error messages further down the pipeline."""
        emitted = last_before.next_op if last_before else self.function.body.block.first_op
        while emitted is not None:
            if not isinstance(emitted, arith.ConstantOp):  # shared by every node
                for nested in emitted.walk():
                    nested.location = location
            emitted = emitted.next_op

    def _declared_names(self, attr_name: str, count: int) -> list[str] | None:
        """Graph input or output names from the func attributes, if given."""
        attr = self.graph.attributes.get(attr_name)
        if isinstance(attr, ArrayAttr) and len(attr.data) == count:
            return [a.data for a in attr.data]
        return None

    def _output_destinations(self) -> dict[SSAValue, SSAValue]:
        """Graph outputs an op can write in place: result -> output argument.

        Pass-through ops (Identity, Dropout) are looked through, so that the op
        producing the data writes the output buffer. Graph inputs and constants
        are not ops that write, and a value returned twice gets one buffer; those
        outputs are copied at the end.
        """
        destinations: dict[SSAValue, SSAValue] = {}
        for value, arg in zip(self.outputs, self.output_args):
            source = value
            while passes_through(source):
                source = source.owner.input(0)
            writes = isinstance(source.owner, OnnxOp) and source.owner.OP_TYPE != "Constant"
            if writes and source not in destinations:
                destinations[source] = arg
        return destinations

    # -------------------------------------------------------------- values of ops

    def input(self, op: OnnxOp, index: int) -> SSAValue | None:
        """The buffer of the index-th ONNX input, None where an optional input is absent."""
        value = op.input(index)
        return None if value is None else self.buffers[value]

    def inputs(self, op: OnnxOp) -> list[SSAValue]:
        """Buffers of every present input (variadic ops)."""
        return [self.buffers[v] for v in onnx_inputs(op) if v is not None]

    def result(self, op: OnnxOp, index: int = 0) -> SSAValue:
        """A fresh buffer for a result: its output argument, or a new top-level alloc."""
        value = op.results[index]
        buffer = self.destinations.get(value)
        if buffer is None:
            buffer = self.top.alloc(memref_type_of(value, op, name=f"result {index}"))
            buffer.name_hint = value.name_hint
        self.buffers[value] = buffer
        return buffer

    def alias(self, value: SSAValue, buffer: SSAValue) -> None:
        """Let `value` share a buffer of the same shape (buffers are never overwritten)."""
        self.buffers[value] = buffer

    # ---------------------------------------------------------------------- checks

    def version(self, op: OnnxOp) -> int:
        """The opset whose semantics `op` follows: the model's, or a later one where
        the importer moved old attributes to inputs (`onnx.since_version`)."""
        since = op.attributes.get(SINCE_VERSION_ATTR)
        return max(self.opset, since.value.data) if isinstance(since, IntegerAttr) else self.opset

    def unsupported(self, op: OnnxOp, message: str) -> UnsupportedOpError:
        return UnsupportedOpError(f"{message} (opset {self.version(op)})", node=op.node_name, op_type=op.OP_TYPE)

    def shape_error(self, op: OnnxOp, message: str) -> ShapeError:
        return ShapeError(message, node=op.node_name, op_type=op.OP_TYPE)

    def element_type(self, op: OnnxOp, value: SSAValue, *, ints: bool = True, bools: bool = False) -> Attribute:
        """The element type of a tensor, if the op supports it: floats, and on request
        signless integers and bool (unsigned types have no arith ops)."""
        element = value.type.get_element_type()
        if is_float(element) or (ints and is_signless_int(element)) or (bools and element == i1):
            return element
        raise self.unsupported(op, f"element type {element} is not supported")

    def same_element_type(self, op: OnnxOp, values: Sequence[SSAValue], **kinds: bool) -> Attribute:
        """The common supported element type of several tensors."""
        elements = {v.type.get_element_type() for v in values}
        if len(elements) != 1:
            raise self.unsupported(op, f"mixed element types {sorted(map(str, elements))}")
        return self.element_type(op, values[0], **kinds)


def memref_type_of(value: SSAValue, op: OnnxOp | None = None, *, name: str = "a value") -> MemRefType:
    """The memref holding a tensor value (a result of `op`, or the value `name`);
    its shape must be static."""
    where = {"node": op.node_name, "op_type": op.OP_TYPE} if op is not None else {}
    tensor = value.type
    if not isinstance(tensor, TensorType):
        raise ShapeError(f"{name} of type {tensor} has no known shape", **where)
    if not static_shape(tensor.get_shape()):
        raise ShapeError(f"{name} has dynamic shape {tensor} (pin the symbolic dims of the graph inputs)", **where)
    return MemRefType(tensor.get_element_type(), tensor.get_shape())


def shape_of(buffer: SSAValue) -> tuple[int, ...]:
    return tuple(buffer.type.get_shape())


LoweringFunction = Callable[[GraphLowering, OnnxOp], None]
LOWERINGS: dict[str, LoweringFunction] = {}

PASS_THROUGH = ("Identity", "Dropout")
"""Ops whose first result is their first input, in inference."""


def passes_through(value: SSAValue) -> bool:
    """Whether `value` is the first result of a pass-through op."""
    owner = value.owner
    return isinstance(owner, OnnxOp) and owner.OP_TYPE in PASS_THROUGH and value is owner.results[0]


def lowers(*op_types: str) -> Callable[[LoweringFunction], LoweringFunction]:
    """Register a lowering function for op types."""

    def register(function: LoweringFunction) -> LoweringFunction:
        for op_type in op_types:
            LOWERINGS[op_type] = function
        return function

    return register


# --------------------------------------------------------------------------- shared helpers


@dataclass(frozen=True)
class Operand:
    """A buffer read in a loop nest over an output: its dim d is indexed by the
    output's induction variable axes[d], or by 0 where axes[d] is None."""

    buffer: SSAValue
    axes: tuple[int | None, ...]

    @staticmethod
    def whole(buffer: SSAValue) -> Operand:
        """Indexed dim for dim by a nest of the same shape."""
        return Operand(buffer, tuple(range(len(shape_of(buffer)))))

    def load(self, builder: KernelBuilder, ivs: Sequence[SSAValue]) -> SSAValue:
        return builder.load(self.buffer, broadcast_index(self.axes, ivs))


def broadcast_index(axes: Sequence[int | None], ivs: Sequence[SSAValue]) -> list[Bound]:
    """Indices of a broadcast operand: the iv of each axis, 0 for a stretched unit dim."""
    return [0 if axis is None else ivs[axis] for axis in axes]


def broadcast_axes(
    g: GraphLowering, op: OnnxOp, shape: Sequence[int], out_shape: Sequence[int]
) -> tuple[int | None, ...]:
    """numpy broadcasting (dims aligned from the right): the out axis indexing each
    dim of `shape`, None for a stretched unit dim."""
    offset = len(out_shape) - len(shape)
    if offset < 0 or any(d not in (1, out_shape[offset + k]) for k, d in enumerate(shape)):
        raise g.shape_error(op, f"cannot broadcast {list(shape)} to {list(out_shape)}")
    return tuple(None if d == 1 and out_shape[offset + k] != 1 else offset + k for k, d in enumerate(shape))


def broadcast(g: GraphLowering, op: OnnxOp, buffer: SSAValue, out_shape: Sequence[int]) -> Operand:
    return Operand(buffer, broadcast_axes(g, op, shape_of(buffer), out_shape))


ScalarFunction = Callable[[KernelBuilder, list[SSAValue]], SSAValue]
"""(builder in the loop body, loaded operand values) -> value to store."""


def elementwise(builder: KernelBuilder, out: SSAValue, operands: Sequence[Operand], compute: ScalarFunction) -> None:
    """out[i...] = compute(operands loaded at i...) over the whole of `out`."""
    ivs, body = builder.loop_nest(shape_of(out))
    body.store(compute(body, [operand.load(body, ivs) for operand in operands]), out, ivs)


def fill(builder: KernelBuilder, out: SSAValue, value: SSAValue) -> None:
    """Every element of `out` := value (a scalar defined outside the loops)."""
    elementwise(builder, out, [], lambda body, _: value)


def linearize(builder: KernelBuilder, ivs: Sequence[Bound], sizes: Sequence[int]) -> Bound:
    """Row-major offset of ivs within dims of `sizes`."""
    offset: Bound = 0
    for iv, size in zip(ivs, sizes):
        offset = builder.add(builder.mul(offset, size), iv)
    return offset


def delinearize(builder: KernelBuilder, offset: Bound, sizes: Sequence[int]) -> list[Bound]:
    """Indices of a row-major offset (less than prod(sizes)) within dims of `sizes`."""
    indices = []
    for k, size in enumerate(sizes):
        index = builder.div(offset, pymath.prod(sizes[k + 1 :]))
        indices.append(index if k == 0 else builder.rem(index, size))
    return indices


def reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]]:
    """Split two shapes of the same element count into consecutive groups of dims
    with equal element counts, as small as possible: [2,3,4] -> [6,4] gives
    ([0,1],[0]), ([2],[1]). Within a group a reshape is a (de)linearization."""
    src_counts = [pymath.prod(src[:k]) for k in range(len(src) + 1)]
    dst_counts = [pymath.prod(dst[:k]) for k in range(len(dst) + 1)]
    groups: list[tuple[list[int], list[int]]] = []
    src_dims: list[int] = []
    dst_dims: list[int] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        if j == len(dst) or (i < len(src) and src_counts[i] <= dst_counts[j]):
            src_dims.append(i)
            i += 1
        else:
            dst_dims.append(j)
            j += 1
        if src_counts[i] == dst_counts[j]:
            groups.append((src_dims, dst_dims))
            src_dims, dst_dims = [], []
    return groups


def copy_reshaped(builder: KernelBuilder, src: SSAValue, dst: SSAValue) -> None:
    """Copy src into dst of the same element count in row-major order (a plain copy
    when shapes are equal). The nest runs over the shape with more dims, so that
    the common cases (flatten, split a dim, add unit dims) need no division."""
    src_shape, dst_shape = shape_of(src), shape_of(dst)
    if pymath.prod(src_shape) == 0:
        return
    walk_src = len(src_shape) > len(dst_shape)
    ivs, body = builder.loop_nest(src_shape if walk_src else dst_shape)
    src_index: list[Bound] = []
    dst_index: list[Bound] = []
    for src_dims, dst_dims in reshape_groups(src_shape, dst_shape):
        walked, other = (src_dims, dst_dims) if walk_src else (dst_dims, src_dims)
        walked_shape, other_shape = (src_shape, dst_shape) if walk_src else (dst_shape, src_shape)
        here = [ivs[d] for d in walked]
        offset = linearize(body, here, [walked_shape[d] for d in walked])
        there = delinearize(body, offset, [other_shape[d] for d in other])
        src_index += here if walk_src else there
        dst_index += there if walk_src else here
    body.store(body.load(src, src_index), dst, dst_index)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a tensor defined by onnx.Constant with a `value` attribute, else None."""
    owner = value.owner
    if isinstance(owner, OnnxOp) and owner.OP_TYPE == "Constant" and "value" in owner.attributes:
        return tensor_value(owner, owner.attributes["value"])
    return None


def normalized_axis(g: GraphLowering, op: OnnxOp, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise g.shape_error(op, f"axis {axis} out of range for rank {rank}")
    return axis % rank


# ------------------------------------------------------------------------ elementwise ops


def broadcast_inputs(g: GraphLowering, op: OnnxOp, out_shape: Sequence[int]) -> list[Operand]:
    """The present inputs of an elementwise op as operands of a nest over its output:
    numpy broadcasting, except before opset 7 where, with `broadcast` and `axis`,
    the second input's dims line up with the output's from `axis` on."""
    legacy_axis = g.version(op) < 7 and op.attr("broadcast", 0) and "axis" in op.attributes
    operands = []
    for position, value in enumerate(v for v in onnx_inputs(op) if v is not None):
        buffer, aligned_to = g.buffers[value], out_shape
        if legacy_axis and position == 1:
            axis = normalized_axis(g, op, op.attr("axis"), len(out_shape))
            aligned_to = out_shape[: axis + len(shape_of(buffer))]
        operands.append(broadcast(g, op, buffer, aligned_to))
    return operands


def lower_elementwise(g: GraphLowering, op: OnnxOp, compute: ScalarFunction, *, ints: bool) -> None:
    """Lower an op whose output is a function of its broadcast inputs, element by element."""
    g.same_element_type(op, [*(v for v in onnx_inputs(op) if v is not None), op.results[0]], ints=ints)
    out = g.result(op)
    elementwise(g.top, out, broadcast_inputs(g, op, shape_of(out)), compute)


def _fold(kind: str) -> ScalarFunction:
    """A binary arith operation folded over any number of operands (Sum, Max...)."""
    return lambda b, xs: functools.reduce(functools.partial(b.binary, kind), xs)


def _apply_math(op_class: type[Operation]) -> ScalarFunction:
    return lambda b, xs: b.math(op_class, xs[0])


def _sigmoid(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
    one = b.constant(1.0, xs[0].type)
    return b.div(one, b.add(one, b.math(math.ExpOp, b.neg(xs[0]))))


ELEMENTWISE: dict[str, tuple[ScalarFunction, bool]] = {
    "Add": (_fold("add"), True),
    "Sum": (_fold("add"), True),
    "Sub": (_fold("sub"), True),
    "Mul": (_fold("mul"), True),
    "Div": (_fold("div"), True),
    "Max": (_fold("max"), True),
    "Min": (_fold("min"), True),
    "Relu": (lambda b, xs: b.max(xs[0], b.constant(0, xs[0].type)), True),
    "Neg": (lambda b, xs: b.neg(xs[0]), True),
    "Abs": (lambda b, xs: b.abs(xs[0]), True),
    "Exp": (_apply_math(math.ExpOp), False),
    "Log": (_apply_math(math.LogOp), False),
    "Sqrt": (_apply_math(math.SqrtOp), False),
    "Tanh": (_apply_math(math.TanhOp), False),
    "Sigmoid": (_sigmoid, False),
}
"""op type -> (scalar function, whether integer element types are supported)."""


@lowers(*ELEMENTWISE)
def lower_elementwise_op(g: GraphLowering, op: OnnxOp) -> None:
    compute, ints = ELEMENTWISE[op.OP_TYPE]
    lower_elementwise(g, op, compute, ints=ints)


@lowers("LeakyRelu")
def lower_leaky_relu(g: GraphLowering, op: OnnxOp) -> None:
    alpha = op.attr("alpha", 0.01)

    def leaky_relu(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x = xs[0]
        scaled = b.mul(x, b.constant(alpha, x.type))
        return b.select(b.less_than(x, b.constant(0, x.type)), scaled, x)

    lower_elementwise(g, op, leaky_relu, ints=False)


@lowers("Pow")
def lower_pow(g: GraphLowering, op: OnnxOp) -> None:
    """X ** Y for float X; an integer or other float Y is converted to X's type."""
    base, exponent = op.input(0), op.input(1)
    element = g.element_type(op, base, ints=False)
    g.element_type(op, exponent)
    out = g.result(op)
    elementwise(
        g.top,
        out,
        broadcast_inputs(g, op, shape_of(out)),
        lambda b, xs: b.math(math.PowFOp, xs[0], b.convert(xs[1], element)),
    )


@lowers("Clip")
def lower_clip(g: GraphLowering, op: OnnxOp) -> None:
    """min(max(x, lo), hi): bounds are attributes before opset 11, optional scalar inputs since."""
    bounds_are_inputs = g.version(op) >= 11
    values = [v for v in onnx_inputs(op) if v is not None]
    element = g.same_element_type(op, [*values, op.results[0]], ints=bounds_are_inputs)
    out = g.result(op)
    bounds: list[SSAValue | None] = []
    if not bounds_are_inputs:
        bounds = [g.top.constant(op.attr(name), element) for name in ("min", "max")]
    else:
        for index in (1, 2):
            buffer = g.input(op, index)
            if buffer is not None and pymath.prod(shape_of(buffer)) != 1:
                raise g.shape_error(op, f"Clip bound of shape {list(shape_of(buffer))} is not a scalar")
            bounds.append(None if buffer is None else g.top.load(buffer, [0] * len(shape_of(buffer))))
    low, high = bounds

    def clip(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        value = xs[0] if low is None else b.max(xs[0], low)
        return value if high is None else b.min(value, high)

    elementwise(g.top, out, [Operand.whole(g.input(op, 0))], clip)


@lowers("BatchNormalization")
def lower_batch_normalization(g: GraphLowering, op: OnnxOp) -> None:
    """Inference: y = (x - mean) * (scale / sqrt(var + epsilon)) + bias, per channel (dim 1)."""
    if op.attr("training_mode", 0) or any(r.uses for r in op.results[1:]):
        raise g.unsupported(op, "BatchNormalization in training mode")
    if op.attr("spatial", 1) == 0:
        raise g.unsupported(op, "BatchNormalization with per-activation statistics (spatial=0)")
    x, scale, bias, mean, var = (g.input(op, k) for k in range(5))
    element = g.same_element_type(op, [*onnx_inputs(op)[:5], op.results[0]], ints=False)
    channel_shape = shape_of(var)
    x_shape = shape_of(x)
    if len(x_shape) < 2 or x_shape[1 : 1 + len(channel_shape)] != channel_shape:
        raise g.shape_error(op, f"statistics of shape {list(channel_shape)} do not fit input {list(x_shape)}")
    if any(shape_of(p) != channel_shape for p in (scale, bias, mean)):
        raise g.shape_error(op, "scale, bias, mean and var must have the same shape")

    factor = g.top.alloc(MemRefType(element, channel_shape))
    epsilon = g.top.constant(op.attr("epsilon", 1e-5), element)
    elementwise(
        g.top,
        factor,
        [Operand.whole(scale), Operand.whole(var)],
        lambda b, xs: b.div(xs[0], b.math(math.SqrtOp, b.add(xs[1], epsilon))),
    )
    channel_axes = tuple(range(1, 1 + len(channel_shape)))
    elementwise(
        g.top,
        g.result(op),
        [Operand.whole(x), *(Operand(p, channel_axes) for p in (mean, factor, bias))],
        lambda b, xs: b.add(b.mul(b.sub(xs[0], xs[1]), xs[2]), xs[3]),
    )


# ------------------------------------------------------------------ data movement ops


@lowers(*PASS_THROUGH)
def lower_pass_through(g: GraphLowering, op: OnnxOp) -> None:
    """Identity, and Dropout in inference: the output is the input (mask: all true)."""
    if op.OP_TYPE == "Dropout":
        training = op.input(2)
        if training is not None:
            flag = constant_array(training)
            if flag is None or flag.any():
                raise g.unsupported(op, "Dropout in training mode (or a non-constant training_mode)")
        if len(op.results) > 1 and op.results[1].uses:
            mask_element = g.element_type(op, op.results[1], ints=False, bools=True)  # bool, or T before opset 10
            fill(g.top, g.result(op, 1), g.top.constant(1, mask_element))
    g.alias(op.results[0], g.input(op, 0))


@lowers("Reshape", "Flatten", "Squeeze", "Unsqueeze")
def lower_reshape(g: GraphLowering, op: OnnxOp) -> None:
    """A row-major copy to the result type that shape inference computed."""
    src, out = g.input(op, 0), g.result(op)
    if pymath.prod(shape_of(src)) != pymath.prod(shape_of(out)):
        raise g.shape_error(op, f"cannot reshape {list(shape_of(src))} to {list(shape_of(out))}")
    copy_reshaped(g.top, src, out)


@lowers("Transpose")
def lower_transpose(g: GraphLowering, op: OnnxOp) -> None:
    """A nest over the output reading the input at permuted indices."""
    src = g.input(op, 0)
    rank = len(shape_of(src))
    perm = op.attr("perm") or list(reversed(range(rank)))
    if sorted(perm) != list(range(rank)):
        raise g.shape_error(op, f"perm {perm} is not a permutation of {rank} dims")
    out = g.result(op)
    # Output dim d is input dim perm[d]: input dim p is indexed by output iv perm.index(p).
    elementwise(g.top, out, [Operand(src, tuple(perm.index(p) for p in range(rank)))], lambda b, xs: xs[0])


@lowers("Concat")
def lower_concat(g: GraphLowering, op: OnnxOp) -> None:
    """One copy nest per input, into its slice of the output along `axis`."""
    sources = g.inputs(op)
    out = g.result(op)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape_of(out)))
    offset = 0
    for src in sources:
        ivs, body = g.top.loop_nest(shape_of(src))
        dst_index = [body.add(iv, offset) if d == axis else iv for d, iv in enumerate(ivs)]
        body.store(body.load(src, ivs), out, dst_index)
        offset += shape_of(src)[axis]
    if offset != shape_of(out)[axis]:
        raise g.shape_error(op, f"inputs add up to {offset} along axis {axis}, output has {shape_of(out)[axis]}")


@lowers("Constant")
def lower_constant(g: GraphLowering, op: OnnxOp) -> None:
    """A krnl.global holding the weight handle (or inline dense value)."""
    result_type = memref_type_of(op.results[0], op, name="the constant")
    tensor_type = TensorType(result_type.get_element_type(), result_type.get_shape())
    value = op.attributes.get("value")
    if value is None:
        scalars = ("value_float", "value_floats", "value_int", "value_ints")
        name = next((n for n in scalars if n in op.attributes), None)
        if name is None:
            raise g.unsupported(op, f"Constant with attributes {sorted(op.attributes)}")
        data = np.asarray(op.attr(name)).reshape(-1).tolist()
        value = DenseIntOrFPElementsAttr.from_list(tensor_type, data)
    if not isinstance(value, WeightAttr | DenseIntOrFPElementsAttr):
        raise g.unsupported(op, f"Constant value {type(value).__name__}")
    if value.get_type() != tensor_type:
        raise g.shape_error(op, f"value of type {value.get_type()} for a result of type {tensor_type}")
    g.alias(op.results[0], g.top.insert(GlobalOp(value, result_type)).result)


@lowers("ConstantOfShape")
def lower_constant_of_shape(g: GraphLowering, op: OnnxOp) -> None:
    element = g.element_type(op, op.results[0], bools=True)
    value = op.attr("value")
    scalar = 0 if value is None else np.asarray(value).reshape(-1)[0].item()
    fill(g.top, g.result(op), g.top.constant(scalar, element))


# ------------------------------------------------------------------ sliding windows


@dataclass(frozen=True)
class SlidingWindow:
    """One spatial axis of a Conv or pooling window: output position o reads input
    positions o*stride - pad_begin + k*dilation for kernel offsets k in [0, kernel)."""

    input_size: int
    output_size: int
    kernel: int
    stride: int = 1
    dilation: int = 1
    pad_begin: int = 0
    pad_end: int = 0

    def start(self, builder: KernelBuilder, out_iv: Bound) -> Bound:
        """Input position of the window's first offset (out_iv is 0 when there is one window)."""
        out_position = 0 if self.output_size == 1 else out_iv
        return builder.sub(builder.mul(out_position, self.stride), self.pad_begin)

    def position(self, builder: KernelBuilder, start: Bound, offset: Bound) -> Bound:
        return builder.add(start, builder.mul(offset, self.dilation))

    def kernel_range(
        self, builder: KernelBuilder, start: Bound, lower: int, upper: int
    ) -> tuple[Bound, Bound]:
        """Offsets [lo, hi) whose position lies in [lower, upper): constants where no
        window reaches past that bound, so unpadded windows cost no arithmetic."""
        low: Bound = 0
        if -self.pad_begin < lower:
            low = builder.ceil_div(builder.max(builder.sub(lower, start), 0), self.dilation)
        high: Bound = self.kernel
        if self.last_position >= upper:
            reach = builder.ceil_div(builder.max(builder.sub(upper, start), 0), self.dilation)
            high = builder.min(reach, self.kernel)
        return low, high

    @property
    def last_position(self) -> int:
        """The input position the last offset of the last window reads."""
        return (self.output_size - 1) * self.stride - self.pad_begin + (self.kernel - 1) * self.dilation

    def shift(self, builder: KernelBuilder, offset: Bound) -> Bound:
        """For kernel offset `offset`, output position o reads input o*stride - shift."""
        return builder.sub(self.pad_begin, builder.mul(offset, self.dilation))

    def output_range(self, builder: KernelBuilder, shift: Bound) -> tuple[Bound, Bound]:
        """Output positions [lo, hi) at which the kernel offset of `shift` reads the
        input (not the padding); constants where no window reaches the padding."""
        # o*stride - shift is in [0, input_size) iff
        # o >= ceil(shift / stride) and o < ceil((input_size + shift) / stride).
        low: Bound = 0
        if self.pad_begin > 0:
            low = builder.ceil_div(builder.max(shift, 0), self.stride)
        high: Bound = self.output_size
        if self.last_position >= self.input_size:
            reach = builder.ceil_div(builder.max(builder.add(shift, self.input_size), 0), self.stride)
            high = builder.min(reach, self.output_size)
        return low, high

    def data_range(self, builder: KernelBuilder, start: Bound) -> tuple[Bound, Bound]:
        """Offsets that read the input (not the padding)."""
        return self.kernel_range(builder, start, 0, self.input_size)

    def padded_range(self, builder: KernelBuilder, start: Bound) -> tuple[Bound, Bound]:
        """Offsets within input and explicit padding (AveragePool count_include_pad)."""
        return self.kernel_range(builder, start, -self.pad_begin, self.input_size + self.pad_end)


def sliding_windows(
    g: GraphLowering,
    op: OnnxOp,
    input_sizes: Sequence[int],
    output_sizes: Sequence[int],
    kernel: Sequence[int],
    *,
    ceil_mode: bool = False,
) -> list[SlidingWindow]:
    """Window geometry from the strides, dilations, pads and auto_pad attributes;
    checks that it yields the output sizes shape inference gave."""
    rank = len(kernel)
    strides = op.attr("strides") or [1] * rank
    dilations = op.attr("dilations") or [1] * rank
    pads = op.attr("pads") or [0] * (2 * rank)
    auto_pad = op.attr("auto_pad") or "NOTSET"
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise g.shape_error(op, f"strides/dilations/pads do not match {rank} spatial dims")
    if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0 or min(kernel) < 1:
        raise g.unsupported(op, "non-positive strides, dilations or kernel, or negative pads")

    windows = []
    for d in range(rank):
        size, stride = input_sizes[d], strides[d]
        extent = (kernel[d] - 1) * dilations[d] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            expected = -(-size // stride)
            total = max(0, (expected - 1) * stride + extent - size)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            end = total - begin
        elif auto_pad in ("VALID", "NOTSET"):
            begin, end = (0, 0) if auto_pad == "VALID" else (pads[d], pads[d + rank])
            span = size + begin + end - extent
            expected = (-(-span // stride) if ceil_mode else span // stride) + 1
            if ceil_mode and (expected - 1) * stride >= size + begin:
                expected -= 1  # the last window must start inside the input or its begin padding
        else:
            raise g.unsupported(op, f"auto_pad '{auto_pad}'")
        if output_sizes[d] != expected:
            raise g.shape_error(
                op, f"spatial dim {d}: output size {output_sizes[d]}, attributes give {expected}"
            )
        windows.append(SlidingWindow(size, expected, kernel[d], stride, dilations[d], begin, end))
    return windows


def count_as_float(builder: KernelBuilder, ranges: Sequence[tuple[Bound, Bound]], element: Attribute) -> SSAValue:
    """Number of points in a box of index ranges, as a float scalar."""
    count: Bound = 1
    for low, high in ranges:
        count = builder.mul(count, builder.sub(high, low))
    if isinstance(count, int):
        return builder.constant(count, element)
    return builder.index_to_float(count, element)


# ---------------------------------------------------------------- Conv and pooling


@lowers("Conv")
def lower_conv(g: GraphLowering, op: OnnxOp) -> None:
    """Direct convolution, one output row at a time. A krnl nest runs over
    (n, m, the spatial dims but the last); in its body the row is set to the bias,
    then for each (input channel of the group, kernel offset...) one weight
    scales the input row into the output row. That innermost loop runs along
    both rows (with unit stride when the stride is 1), so it vectorizes.
    Padding costs no branch: each loop range is clipped to what reads the input."""
    x, weights, bias = g.input(op, 0), g.input(op, 1), g.input(op, 2)
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    out = g.result(op)
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    out_channels, group_channels, *kernel = shape_of(weights)
    group = op.attr("group", 1)
    if not input_sizes or channels != group_channels * group or out_channels % group:
        raise g.shape_error(op, f"input {list(shape_of(x))}, weights {list(shape_of(weights))}, group {group}")
    if op.attr("kernel_shape") not in (None, kernel):
        raise g.shape_error(op, f"kernel_shape {op.attr('kernel_shape')} differs from the weights' {kernel}")
    if bias is not None and shape_of(bias) != (out_channels,):
        raise g.shape_error(op, f"bias of shape {list(shape_of(bias))}")
    if out_shape[:2] != (batch, out_channels):
        raise g.shape_error(op, f"output shape {list(out_shape)}")
    *outer_windows, row_window = sliding_windows(g, op, input_sizes, out_shape[2:], kernel)

    row_ivs, body = g.top.loop_nest(out_shape[:-1])
    n, m, *outer_position = row_ivs
    init = body.load(bias, [m]) if bias is not None else body.constant(0.0, element)
    (init_column,), row_start = body.for_nest([(0, row_window.output_size)])
    row_start.store(init, out, [*row_ivs, init_column])

    first_channel = 0 if group == 1 else body.mul(body.div(m, out_channels // group), group_channels)
    starts = [w.start(body, o) for w, o in zip(outer_windows, outer_position)]
    ranges = [(0, group_channels), *(w.data_range(body, s) for w, s in zip(outer_windows, starts))]
    (c, *offsets, row_offset), tap = body.for_nest([*ranges, (0, row_window.kernel)])
    channel = tap.add(first_channel, c)
    positions = [w.position(tap, s, k) for w, s, k in zip(outer_windows, starts, offsets)]
    weight = tap.load(weights, [m, c, *offsets, row_offset])
    shift = row_window.shift(tap, row_offset)
    (column,), point = tap.for_nest([row_window.output_range(tap, shift)])
    input_column = point.sub(point.mul(column, row_window.stride), shift)
    pixel = point.load(x, [n, channel, *positions, input_column])
    partial = point.load(out, [*row_ivs, column])
    point.store(point.add(partial, point.mul(pixel, weight)), out, [*row_ivs, column])


def lower_pool(g: GraphLowering, op: OnnxOp, kind: str, windows: Sequence[SlidingWindow] | None = None) -> None:
    """Max or average over sliding windows of each (n, c) plane. `windows`
    defaults to those of the op's attributes (global pools pass whole planes)."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=kind == "max")
    out = g.result(op)
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    if not input_sizes or out_shape[:2] != (batch, channels):
        raise g.shape_error(op, f"input {list(shape_of(x))}, output {list(out_shape)}")
    if windows is None:
        kernel = op.attr("kernel_shape")
        if kernel is None or len(kernel) != len(input_sizes):
            raise g.shape_error(op, f"kernel_shape {kernel} for {len(input_sizes)} spatial dims")
        windows = sliding_windows(g, op, input_sizes, out_shape[2:], kernel, ceil_mode=bool(op.attr("ceil_mode", 0)))

    ivs, body = g.top.loop_nest(out_shape)
    n, c, *out_position = ivs
    starts = [w.start(body, o) for w, o in zip(windows, out_position)]
    ranges = [w.data_range(body, s) for w, s in zip(windows, starts)]
    combine = "max" if kind == "max" else "add"

    def accumulate(b: KernelBuilder, offsets: list[Bound], acc: SSAValue) -> SSAValue:
        positions = [w.position(b, s, k) for w, s, k in zip(windows, starts, offsets)]
        return b.binary(combine, acc, b.load(x, [n, c, *positions]))

    init = body.lowest(element) if kind == "max" else body.constant(0.0, element)
    result = body.reduce(ranges, init, accumulate)
    if kind == "average":
        if op.attr("count_include_pad", 0):
            ranges = [w.padded_range(body, s) for w, s in zip(windows, starts)]
        result = body.div(result, count_as_float(body, ranges, element))
    body.store(result, out, ivs)


@lowers("MaxPool")
def lower_max_pool(g: GraphLowering, op: OnnxOp) -> None:
    if len(op.results) > 1 and op.results[1].uses:
        raise g.unsupported(op, "MaxPool Indices output")
    lower_pool(g, op, "max")


@lowers("AveragePool")
def lower_average_pool(g: GraphLowering, op: OnnxOp) -> None:
    lower_pool(g, op, "average")


@lowers("GlobalMaxPool", "GlobalAveragePool")
def lower_global_pool(g: GraphLowering, op: OnnxOp) -> None:
    """A pool whose one window covers the whole plane."""
    input_sizes = shape_of(g.input(op, 0))[2:]
    windows = [SlidingWindow(size, 1, size) for size in input_sizes]
    lower_pool(g, op, "max" if op.OP_TYPE == "GlobalMaxPool" else "average", windows)


# ------------------------------------------------------------------ MatMul and Gemm


IndexFunction = Callable[[list[SSAValue], SSAValue], list[Bound]]
"""(output ivs, reduction iv) -> indices of an operand."""


def contract(
    g: GraphLowering,
    out: SSAValue,
    reduction_size: int,
    lhs: tuple[SSAValue, IndexFunction],
    rhs: tuple[SSAValue, IndexFunction],
    *,
    row_axis: int | None,
    column_axis: int | None,
    alpha: float = 1.0,
) -> None:
    """out[i...] += alpha * sum_k lhs[..k..] * rhs[..k..], accumulating in `out`.

    Schedule: the column loop is blocked and the reduction loop sits between
    its tile loops, so that the innermost loop walks a row of `rhs` and of
    `out` with unit stride while a tile of `rhs` columns stays in cache across
    rows: (batch..., column tile, row, k, column).
    """
    nest = g.top.loops([*shape_of(out), reduction_size])
    *out_loops, k_loop = nest.loops
    batch = [loop for axis, loop in enumerate(out_loops) if axis not in (row_axis, column_axis)]
    row = [] if row_axis is None else [out_loops[row_axis]]
    if column_axis is None:
        nest.permute([*batch, *row, k_loop])
    else:
        column_outer, column_inner = nest.block(out_loops[column_axis], MATMUL_COLUMN_TILE)
        nest.permute([*batch, column_outer, *row, k_loop, column_inner])
    (*ivs, k), body = nest.iterate()
    (lhs_buffer, lhs_index), (rhs_buffer, rhs_index) = lhs, rhs
    left = body.load(lhs_buffer, lhs_index(ivs, k))
    if alpha != 1.0:
        left = body.mul(left, body.constant(alpha, left.type))
    product = body.mul(left, body.load(rhs_buffer, rhs_index(ivs, k)))
    body.store(body.add(body.load(out, ivs), product), out, ivs)


@lowers("MatMul")
def lower_matmul(g: GraphLowering, op: OnnxOp) -> None:
    """numpy.matmul: batch dims broadcast; a 1-D lhs is a row, a 1-D rhs a column,
    and the dim they add is absent from the result."""
    a, b = g.input(op, 0), g.input(op, 1)
    element = g.same_element_type(op, [op.input(0), op.input(1), op.results[0]])
    out = g.result(op)
    a_shape, b_shape, out_shape = shape_of(a), shape_of(b), shape_of(out)
    if not a_shape or not b_shape:
        raise g.shape_error(op, "MatMul of a scalar")
    reduction = a_shape[-1]
    has_rows, has_columns = len(a_shape) > 1, len(b_shape) > 1
    batch_rank = len(out_shape) - has_rows - has_columns
    expected_tail = a_shape[-2:-1] if has_rows else ()
    expected_tail += b_shape[-1:] if has_columns else ()
    b_reduction = b_shape[-2] if has_columns else b_shape[0]
    if batch_rank < 0 or reduction != b_reduction or out_shape[batch_rank:] != expected_tail:
        raise g.shape_error(op, f"MatMul of {list(a_shape)} and {list(b_shape)} into {list(out_shape)}")
    batch_shape = out_shape[:batch_rank]
    a_axes = broadcast_axes(g, op, a_shape[:-2], batch_shape)
    b_axes = broadcast_axes(g, op, b_shape[:-2], batch_shape)

    def a_index(ivs: list[SSAValue], k: SSAValue) -> list[Bound]:
        return [*broadcast_index(a_axes, ivs), *([ivs[batch_rank]] if has_rows else []), k]

    def b_index(ivs: list[SSAValue], k: SSAValue) -> list[Bound]:
        return [*broadcast_index(b_axes, ivs), k, *([ivs[-1]] if has_columns else [])]

    fill(g.top, out, g.top.constant(0, element))
    contract(
        g,
        out,
        reduction,
        (a, a_index),
        (b, b_index),
        row_axis=batch_rank if has_rows else None,
        column_axis=len(out_shape) - 1 if has_columns else None,
    )


@lowers("Gemm")
def lower_gemm(g: GraphLowering, op: OnnxOp) -> None:
    """Y = alpha * A' @ B' + beta * C, with A' = A or A^T, B' = B or B^T, C broadcast to Y."""
    a, b, c = g.input(op, 0), g.input(op, 1), g.input(op, 2)
    alpha, beta = op.attr("alpha", 1.0), op.attr("beta", 1.0)
    transpose_a, transpose_b = op.attr("transA", 0), op.attr("transB", 0)
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=alpha == beta == 1.0)
    out = g.result(op)
    a_shape, b_shape, out_shape = shape_of(a), shape_of(b), shape_of(out)
    if len(a_shape) != 2 or len(b_shape) != 2:
        raise g.shape_error(op, f"Gemm of {list(a_shape)} and {list(b_shape)}")
    rows, reduction = reversed(a_shape) if transpose_a else a_shape
    b_reduction, columns = reversed(b_shape) if transpose_b else b_shape
    if reduction != b_reduction or out_shape != (rows, columns):
        raise g.shape_error(op, f"Gemm of {list(a_shape)} and {list(b_shape)} into {list(out_shape)}")

    if c is not None and beta != 0.0:
        c_operand = broadcast(g, op, c, out_shape)
        if beta == 1.0:
            elementwise(g.top, out, [c_operand], lambda _, xs: xs[0])
        else:
            scale = g.top.constant(beta, element)
            elementwise(g.top, out, [c_operand], lambda body, xs: body.mul(xs[0], scale))
    else:
        fill(g.top, out, g.top.constant(0, element))
    contract(
        g,
        out,
        reduction,
        (a, lambda ivs, k: [k, ivs[0]] if transpose_a else [ivs[0], k]),
        (b, lambda ivs, k: [ivs[1], k] if transpose_b else [k, ivs[1]]),
        row_axis=0,
        column_axis=1,
        alpha=alpha,
    )


# ---------------------------------------------------------------------------- Softmax


@lowers("Softmax")
def lower_softmax(g: GraphLowering, op: OnnxOp) -> None:
    """exp(x - max) / sum(exp(x - max)) over the softmax dims, for each position of
    the other dims. Since opset 13 the softmax dims are just `axis` (default -1);
    before, they are every dim from `axis` (default 1) on."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    out = g.result(op)
    shape = shape_of(x)
    rank = len(shape)
    per_axis = g.version(op) >= 13
    axis = op.attr("axis") if "axis" in op.attributes else (-1 if per_axis else 1)
    axis = normalized_axis(g, op, axis, rank)
    reduced = [axis] if per_axis else list(range(axis, rank))
    kept = [d for d in range(rank) if d not in reduced]
    ranges = [(0, shape[d]) for d in reduced]

    outer_ivs, body = g.top.loop_nest([shape[d] for d in kept])

    def index(inner_ivs: Sequence[Bound]) -> list[Bound]:
        by_dim = dict(zip(kept, outer_ivs)) | dict(zip(reduced, inner_ivs))
        return [by_dim[d] for d in range(rank)]

    maximum = body.reduce(ranges, body.lowest(element), lambda b, ivs, acc: b.max(acc, b.load(x, index(ivs))))

    def exponentiate(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        exponential = b.math(math.ExpOp, b.sub(b.load(x, index(ivs)), maximum))
        b.store(exponential, out, index(ivs))
        return b.add(acc, exponential)

    total = body.reduce(ranges, body.constant(0.0, element), exponentiate)
    inner_ivs, inner = body.for_nest(ranges)
    inner.store(inner.div(inner.load(out, index(inner_ivs)), total), out, index(inner_ivs))
