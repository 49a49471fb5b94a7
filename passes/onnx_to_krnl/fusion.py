"""Element-wise ops and their fusion: a chain (or tree) of element-wise ops is one
loop nest that computes every op in registers and stores only the last result.

Each element-wise op type registers, with `scalar_op`, a definition that checks
the op and says how one element of its result is computed (`ScalarOp`: the
graph values it reads, each with its broadcast index, and the scalar function).
The same definition lowers the op alone and as part of a fused nest, so an op's
formula exists once.

Which ops fuse is decided one op at a time, in graph order (onnx-mlir's
Elementwise lowering fuses the same way): an op whose result is read only by
one element-wise user, at the same shape as that user's result, is not lowered
where it stands; its user computes it in its own nest, element by element at
the same index. Such a result is no graph output (returning it is another use)
and gets no buffer: a value without a buffer when its user is lowered is one
of those, and the user's nest computes it, recursively. The ops an op reads
besides the chain were lowered before it, so the fused nest, emitted where the
chain's last op stands, finds their buffers. The Conv lowering (matmul_kernel.py)
claims a following Relu/Clip/BatchNormalization/Add into its kernel only when
the values they read have buffers, so it never claims an op whose input is
computed in a later nest.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.types import is_float
from onnxc.errors import CompileError
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.run_time_dims import element_count, reshaped_view
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    Operand,
    ScalarFunction,
    broadcast_axes,
    lowers,
    normalized_axis,
    same_shape,
    shape_of,
)

Axes = tuple[int | None, ...]
"""For each dim of a value read: the result's axis indexing it, None for a stretched unit dim."""


@dataclass(frozen=True)
class ScalarOp:
    """How one element of an element-wise op's result is computed: `compute` of the
    elements of `reads` at the result element's index. A read is a graph value
    with its broadcast axes, or a buffer the definition made at the top level
    (BatchNormalization's factor per channel)."""

    reads: Sequence[tuple[SSAValue, Axes] | Operand]
    compute: ScalarFunction


ScalarDefinition = Callable[[GraphLowering, OnnxOp], ScalarOp]
SCALAR_OPS: dict[str, ScalarDefinition] = {}
ENDS_NEST: set[str] = set()
"""Op types whose result is always stored, never computed in a user's nest (see `scalar_op`)."""


def scalar_op(*op_types: str, ends_nest: bool = False) -> Callable[[ScalarDefinition], ScalarDefinition]:
    """Register the definition of element-wise op types; they are lowered (and fused) here.
    With `ends_nest`, their result is stored even where one element-wise user reads it: a
    fused nest may start at them but not run on through them (QuantizeLinear: a nest from
    one quantized tensor to the next, not one nest of a whole chain of quantized ops)."""

    def register(definition: ScalarDefinition) -> ScalarDefinition:
        for op_type in op_types:
            SCALAR_OPS[op_type] = definition
            if ends_nest:
                ENDS_NEST.add(op_type)
        lowers(*op_types, run_time_dims=True)(lower_scalar_op)
        return definition

    return register


# ------------------------------------------------------------------ definitions' helpers


def result_shape(op: OnnxOp) -> tuple[int, ...]:
    return tuple(op.results[0].type.get_shape())


def elementwise_read(op: OnnxOp, index: int) -> tuple[SSAValue, Axes]:
    """Input `index` of `op`, of the result's shape, read at the result element's index."""
    return op.input(index), tuple(range(len(result_shape(op))))


def broadcast_reads(g: GraphLowering, op: OnnxOp) -> list[tuple[SSAValue, Axes]]:
    """The present inputs of an element-wise op, broadcast to its result: numpy
    broadcasting, except before opset 7 where, with `broadcast` and `axis`, the
    second input's dims line up with the result's from `axis` on."""
    out_shape = result_shape(op)
    legacy_axis = g.version(op) < 7 and op.attr("broadcast") and "axis" in op.attributes
    reads = []
    for position, value in enumerate(v for v in onnx_inputs(op) if v is not None):
        shape, aligned_to = tuple(value.type.get_shape()), out_shape
        if legacy_axis and position == 1:
            axis = normalized_axis(g, op, op.attr("axis"), len(out_shape))
            aligned_to = out_shape[: axis + len(shape)]
        reads.append((value, broadcast_axes(g, op, shape, aligned_to)))
    return reads


def uniform_op(
    g: GraphLowering, op: OnnxOp, compute: ScalarFunction, *, ints: bool, bools: bool = False, same_result: bool = True
) -> ScalarOp:
    """An op whose result is a function of its broadcast inputs, which share one
    element type, as does the result unless `same_result` is False (comparisons
    give bool). 16-bit floats are computed in f32 and rounded once per op, as
    the reference implementations do."""
    inputs = [v for v in onnx_inputs(op) if v is not None]
    element = g.same_element_type(op, [*inputs, op.results[0]] if same_result else inputs, ints=ints, bools=bools)
    if is_float(element) and element.bitwidth == 16 and same_result:
        compute = widened_to_f32(compute)
    return ScalarOp(broadcast_reads(g, op), compute)


def widened_to_f32(compute: ScalarFunction) -> ScalarFunction:
    """`compute` on 16-bit floats done in f32, the result rounded back to the operands' type."""

    def widened(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        narrow = xs[0].type
        return b.convert(compute(b, [b.convert(x, f32) for x in xs]), narrow)

    return widened


# ------------------------------------------------------------------------------ fusion


def fusing_user(g: GraphLowering, op: OnnxOp) -> OnnxOp | None:
    """The element-wise op that computes `op`'s result in its own nest, if any: the
    only user of the result (its other results unused), reading it at the shape
    of its own result."""
    value = op.results[0]
    users = {use.operation for use in value.uses}
    if op.OP_TYPE in ENDS_NEST or len(users) != 1 or any(result.uses for result in op.results[1:]):
        return None
    (user,) = users
    if not isinstance(user, OnnxOp) or user.OP_TYPE not in SCALAR_OPS or user in g.fused:
        return None
    return user if same_shape(value, user.results[0]) else None


@dataclass(eq=False)
class _Node:
    """An op of a fused nest: its definition and, per operand, the node computing it or the buffer read."""

    op: OnnxOp
    scalar: ScalarOp
    operands: list[_Node | Operand] = field(default_factory=list)


def lower_scalar_op(g: GraphLowering, op: OnnxOp) -> None:
    """Lower an element-wise op with the ops fused into it, unless its user computes it."""
    if fusing_user(g, op) is not None:
        return
    nodes: dict[OnnxOp, _Node] = {}
    root = _definitions(g, op, nodes)
    out = _coalesced(g, g.result(op), nodes)
    # Elements read at the same index by every iteration (scalars, Clip's bounds) are loaded once, before the loops.
    operands = [x for node in nodes.values() for x in node.operands if isinstance(x, Operand)]
    invariant = [x for x in operands if all(axis is None for axis in x.axes)]
    loaded: dict[Operand, SSAValue] = {x: x.load(g.top, []) for x in dict.fromkeys(invariant)}
    ivs, body = g.top.loop_nest(shape_of(out))
    computed: dict[_Node, SSAValue] = {}

    def value_of(operand: _Node | Operand, at: KernelBuilder) -> SSAValue:
        """The element of an operand, emitted by `at` (located at the node that needs it first)."""
        if isinstance(operand, Operand):
            if operand not in loaded:
                loaded[operand] = operand.load(at, ivs)
            return loaded[operand]
        if operand not in computed:
            at = body if operand.op is op else body.located(operand.op.location)
            computed[operand] = operand.scalar.compute(at, [value_of(x, at) for x in operand.operands])
        return computed[operand]

    body.store(value_of(root, body), out, ivs)


def _coalesced(g: GraphLowering, out: SSAValue, nodes: dict[OnnxOp, _Node]) -> SSAValue:
    """The nest's output with adjacent dims merged wherever every operand reads them
    alike (both indexed, by consecutive dims of its own, or both not), and its
    operands as views of the merged shape (their stretched unit dims dropped): a
    SiLU over [N, C, H, W] is one loop over N*C*H*W elements, an SE block's scale
    [N, C, H, W] * [N, C, 1, 1] a nest over [N*C, H*W]. Long unit-stride loops
    vectorize with one remainder instead of one per short row (7x7 planes), and so
    do dims known at run time only. An operand read in another order (a transposed
    read) keeps the nest as it is."""
    shape = shape_of(out)
    operands = list(dict.fromkeys(x for node in nodes.values() for x in node.operands if isinstance(x, Operand)))
    read = [x for x in operands if any(axis is not None for axis in x.axes)]  # the others: loaded once
    indexed = [[axis for axis in x.axes if axis is not None] for x in read]
    if len(shape) < 2 or any(axes != sorted(set(axes)) for axes in indexed):
        return out

    def mergeable(axis: int) -> bool:
        """Whether out axis `axis` joins axis - 1: each operand indexes both by consecutive dims, or neither."""
        return all(
            (axis in axes) == (axis - 1 in axes) and (axis not in axes or axes.index(axis) == axes.index(axis - 1) + 1)
            for axes in indexed
        )

    groups = [[0]]
    for axis in range(1, len(shape)):
        if mergeable(axis):
            groups[-1].append(axis)
        else:
            groups.append([axis])
    if len(groups) == len(shape):
        return out
    b = g.top
    views: dict[Operand, Operand] = {}
    for x in read:
        x_shape = shape_of(x.buffer)
        dims_of_axis = {axis: k for k, axis in enumerate(x.axes) if axis is not None}
        merged, axes = [], []
        for number, group in enumerate(groups):
            if group[0] in dims_of_axis:
                merged.append(element_count(b, [x_shape[dims_of_axis[axis]] for axis in group]))
                axes.append(number)
        buffer = x.buffer if merged == list(x_shape) else reshaped_view(b, x.buffer, merged)
        views[x] = Operand(buffer, tuple(axes))
    for node in nodes.values():
        node.operands = [views.get(x, x) if isinstance(x, Operand) else x for x in node.operands]
    return reshaped_view(b, out, [element_count(b, [shape[axis] for axis in group]) for group in groups])


def _definitions(g: GraphLowering, op: OnnxOp, nodes: dict[OnnxOp, _Node]) -> _Node:
    """The tree of ops computed in `op`'s nest, their definitions made (and any
    top-level code of theirs emitted) before the nest: values without a buffer
    are computed by their (fused) producers at the same index."""
    if op in nodes:
        return nodes[op]
    node = nodes[op] = _Node(op, SCALAR_OPS[op.OP_TYPE](g, op))
    for read in node.scalar.reads:
        if isinstance(read, Operand):
            node.operands.append(read)
            continue
        value, axes = read
        buffer = g.buffers.get(value)
        if buffer is not None:
            node.operands.append(Operand(buffer, axes))
            continue
        shape = value.type.get_shape()
        at_same_index = len(axes) == len(result_shape(op)) and all(
            axis == k or shape[k] == 1 for k, axis in enumerate(axes)
        )  # a unit dim read at index 0 is read at the nest's index
        if not at_same_index or not isinstance(value.owner, OnnxOp):
            message = f"operand {value.name_hint or value} has no buffer and cannot be computed in this nest"
            raise CompileError(message, node=op.node_name, op_type=op.OP_TYPE)
        node.operands.append(_definitions(g, value.owner, nodes))
    return node


def scalar_bound_reads(g: GraphLowering, op: OnnxOp, positions: Sequence[int]) -> list[tuple[SSAValue, Axes]]:
    """Present inputs at `positions` that must hold one element (Clip's bounds),
    read at index 0 by every element of the result."""
    reads = []
    for position in positions:
        value = op.input(position)
        if value is None:
            continue
        shape = tuple(value.type.get_shape())
        if pymath.prod(shape) != 1:
            raise g.shape_error(op, f"{op.OP_TYPE} bound of shape {list(shape)} is not a scalar")
        reads.append((value, (None,) * len(shape)))
    return reads
