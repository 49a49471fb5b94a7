"""Sequences, optionals and compile-time control flow, resolved while importing.

onnxc compiles for static shapes, and the C ABI passes tensors only. A sequence
whose length and an optional whose presence are known at compile time are
therefore never values in the IR: the importer tracks them as Python objects
(`TensorSequence`, `TensorOptional`) holding the SSA values of their tensors,
and each sequence/optional op becomes plain tensor ops (SplitToSequence → Split,
ConcatFromSequence → Concat, SequenceMap → its body once per element). ZipMap's
sequence of maps (`MapSequence`) is its input tensor plus the keys, kept for the
signature: a pure output format, so it may only be a graph output.

Control flow whose outcome the importer already knows is resolved here too: an
If whose condition is an import-time constant imports only the branch taken, a
Loop that carries sequences is unrolled. Anything else is left to the generic
import (If/Loop/Scan ops with regions, handled by the `inline-control-flow`
pass). A handler returns the node's output values, or None to fall back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import onnx
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IntegerAttr,
    NameLoc,
    NoneAttr,
    NoneType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    i64,
)
from xdsl.ir import Block, SSAValue

from onnxc.dialects.onnx import build_op
from onnxc.errors import InvalidModelError, UnsupportedOpError
from onnxc.frontend.collected_rows import collect_into_scan_outputs
from onnxc.frontend.sequence_values import MapSequence, SlicedSequence, TensorOptional, TensorSequence

if TYPE_CHECKING:
    from onnxc.frontend.importer import _GraphImporter

MAX_UNROLLED_ITERATIONS = 4096


Handler = Callable[["_GraphImporter", Block, onnx.NodeProto], list | None]


def _refuse(importer: "_GraphImporter", node: onnx.NodeProto, why: str) -> UnsupportedOpError:
    return UnsupportedOpError(f"{why} (opset {importer.opset})", node=node.name, op_type=node.op_type)


def _inputs(importer: "_GraphImporter", node: onnx.NodeProto) -> list:
    return [importer.symbolic(name, node) if name else None for name in node.input]


def _attribute(node: onnx.NodeProto, name: str, default):
    for attr in node.attribute:
        if attr.name == name:
            return onnx.helper.get_attribute_value(attr)
    return default


def _sub_graph(node: onnx.NodeProto, name: str) -> onnx.GraphProto:
    for attr in node.attribute:
        if attr.name == name and attr.type == onnx.AttributeProto.GRAPH:
            return attr.g
    raise InvalidModelError(
        f"the required sub-graph attribute '{name}' is missing", node=node.name, op_type=node.op_type
    )


def _sequence(importer: "_GraphImporter", node: onnx.NodeProto, value) -> TensorSequence:
    if isinstance(value, TensorOptional):
        value = value.content
    if not isinstance(value, TensorSequence):
        raise _refuse(importer, node, "expected a sequence input whose length is known at compile time")
    return value


def _tensor(importer: "_GraphImporter", node: onnx.NodeProto, value) -> SSAValue:
    if not isinstance(value, SSAValue):
        raise _refuse(importer, node, "expected a tensor input, got a sequence or optional")
    return value


def _scalar(importer: "_GraphImporter", node: onnx.NodeProto, value, what: str) -> int:
    array = importer.known_value(value)
    if array is None or array.size != 1:
        raise _refuse(importer, node, f"the {what} must be a constant scalar at compile time")
    return int(array.reshape(-1)[0])


def _position(importer, node, value, length: int, default: int, insert: bool) -> int:
    position = default if value is None else _scalar(importer, node, value, "position")
    limit = length + 1 if insert else length
    if position < 0:
        position += length
    if not 0 <= position < limit:
        raise _refuse(importer, node, f"sequence position {position} is out of range for length {length}")
    return position


def add_op(
    importer: "_GraphImporter",
    block: Block,
    node: onnx.NodeProto,
    op_type: str,
    inputs: list,
    outputs: int = 1,
    **attributes,
):
    """Append an onnx op (results typed by shape inference later) named after `node`."""
    attrs = {
        k: IntegerAttr(v, i64) if isinstance(v, int) else ArrayAttr([IntegerAttr(d, i64) for d in v])
        for k, v in attributes.items()
    }
    op = build_op(op_type, inputs, UnrankedTensorType(NoneType()), attrs, outputs, importer.opset)
    op.location = NameLoc(StringAttr(node.name or node.output[0]), NoneAttr())
    block.add_op(op)
    return op


def _int64s(importer, block, node, values, suffix: str) -> SSAValue:
    return importer.constant(block, f"{node.name or node.output[0]}.{suffix}", np.array(values, dtype=np.int64))


def _stack(importer, block, node, items: list[SSAValue], axis: int) -> SSAValue:
    """The tensors of `items` stacked along a new axis `axis`."""
    axes = _int64s(importer, block, node, [axis], "axes")
    expanded = [add_op(importer, block, node, "Unsqueeze", [item, axes]).results[0] for item in items]
    return add_op(importer, block, node, "Concat", expanded, axis=axis).results[0]


# ------------------------------------------------------------------------ sequences


def _sequence_empty(importer, block, node):
    return [TensorSequence(())]


def _sequence_construct(importer, block, node):
    return [TensorSequence(tuple(_tensor(importer, node, v) for v in _inputs(importer, node)))]


def _sequence_insert(importer, block, node):
    seq, tensor, *rest = _inputs(importer, node) + [None]
    items = list(_sequence(importer, node, seq).items)
    position = _position(importer, node, rest[0], len(items), len(items), insert=True)
    items.insert(position, _tensor(importer, node, tensor))
    return [TensorSequence(tuple(items))]


def _sequence_erase(importer, block, node):
    seq, *rest = _inputs(importer, node) + [None]
    items = list(_sequence(importer, node, seq).items)
    del items[_position(importer, node, rest[0], len(items), len(items) - 1, insert=False)]
    return [TensorSequence(tuple(items))]


def _sequence_at(importer, block, node):
    seq, position = _inputs(importer, node)
    if isinstance(seq, SlicedSequence):
        if seq.size != 1:
            raise _refuse(importer, node, f"an item of a sequence of run-time length cut in pieces of {seq.size}")
        item = add_op(importer, block, node, "Gather", [seq.values, position], axis=seq.axis).results[0]
        if not seq.keepdims:
            return [item]
        return [
            add_op(
                importer, block, node, "Unsqueeze", [item, _int64s(importer, block, node, [seq.axis], "axes")]
            ).results[0]
        ]
    items = _sequence(importer, node, seq).items
    return [items[_position(importer, node, position, len(items), 0, insert=False)]]


def _sequence_length(importer, block, node):
    sequence = _inputs(importer, node)[0]
    if isinstance(sequence, SlicedSequence):  # ceil(n / size) of the sliced axis' n
        shape = add_op(importer, block, node, "Shape", [sequence.values]).results[0]

        def scalar(what: str, value: int) -> SSAValue:
            return importer.constant(block, f"{node.name or node.output[0]}.{what}", np.array(value, np.int64))

        length = add_op(importer, block, node, "Gather", [shape, scalar("axis", sequence.axis)]).results[0]
        if sequence.size == 1:
            return [length]
        padded = add_op(importer, block, node, "Add", [length, scalar("rest", sequence.size - 1)]).results[0]
        return [add_op(importer, block, node, "Div", [padded, scalar("size", sequence.size)]).results[0]]
    length = len(_sequence(importer, node, sequence).items)
    return [importer.constant(block, node.output[0], np.array(length, dtype=np.int64))]


def _split_to_sequence(importer, block, node):
    data, *rest = _inputs(importer, node) + [None]
    data = _tensor(importer, node, data)
    axis = _attribute(node, "axis", 0)
    keepdims = _attribute(node, "keepdims", 1)
    shape = data.type.get_shape() if isinstance(data.type, TensorType) else None
    if shape is None or not -len(shape) <= axis < len(shape):
        raise _refuse(importer, node, f"axis {axis} of an input of type {data.type}")
    axis %= len(shape)
    length = shape[axis]
    split = None if rest[0] is None else importer.known_value(rest[0])
    if rest[0] is not None and split is None:
        raise _refuse(importer, node, "the split sizes must be constants at compile time")
    if length == DYNAMIC_INDEX and (split is None or split.ndim == 0):
        # explicit sizes give the sequence's length whatever the axis's (Split checks they cover it)
        if split is None:
            return [SlicedSequence(data, axis, keepdims=bool(keepdims))]
        if int(split) < 1:
            raise InvalidModelError(f"split {int(split)} is not positive", node=node.name, op_type=node.op_type)
        return [SlicedSequence(data, axis, keepdims=True, size=int(split))]
    if split is None:
        sizes = [1] * length
    elif split.ndim == 0:
        chunk = int(split)
        sizes = [chunk] * (length // chunk) + ([length % chunk] if length % chunk else [])
    else:
        sizes = [int(s) for s in split]
    if not sizes:
        return [TensorSequence(())]
    split_op = add_op(
        importer, block, node, "Split", [data, _int64s(importer, block, node, sizes, "split")], len(sizes), axis=axis
    )
    parts = list(split_op.results)
    if split is None and not keepdims:
        axes = _int64s(importer, block, node, [axis], "axes")
        parts = [add_op(importer, block, node, "Squeeze", [part, axes]).results[0] for part in parts]
    return [TensorSequence(tuple(parts))]


def _concat_from_sequence(importer, block, node):
    sequence = _inputs(importer, node)[0]
    if isinstance(sequence, SlicedSequence):
        return [_joined_slices(importer, block, node, sequence)]
    items = list(_sequence(importer, node, sequence).items)
    if not items:
        raise _refuse(importer, node, "concatenating an empty sequence (its element shape is unknown)")
    axis = _attribute(node, "axis", 0)
    if _attribute(node, "new_axis", 0):
        return [_stack(importer, block, node, items, axis)]
    return [add_op(importer, block, node, "Concat", items, axis=axis).results[0]]


def _joined_slices(importer, block, node, sequence: SlicedSequence) -> SSAValue:
    """ConcatFromSequence of a sequence of run-time length: its tensor, transposed so that
    the sliced axis is the joined one. Stacking slices that kept a dim of one adds that
    dim after it; concatenating slices without it merges the sliced axis into the next.
    Joining along another axis than the sliced one needs the tensor's rank."""
    axis, stack = _attribute(node, "axis", 0), bool(_attribute(node, "new_axis", 0))
    values, sliced, keepdims, size = sequence.values, sequence.axis, sequence.keepdims, sequence.size
    rank = None
    if isinstance(values.type, TensorType):
        rank = values.type.get_num_dims() + (stack and keepdims) - (not stack and not keepdims)
        axis = axis % rank if -rank <= axis < rank else axis
    if axis == sliced and stack != keepdims:
        return values
    if (keepdims and not stack) or (size != 1 and stack) or (axis != sliced and not (rank and 0 <= axis < rank)):
        raise _refuse(
            importer,
            node,
            f"{'stacking' if stack else 'concatenating'} the slices of a sequence of run-time length (cut along"
            f" axis {sliced} of {values.type}{'' if size == 1 else f' in pieces of {size}'}) along axis {axis}",
        )
    if stack and keepdims:
        kept = _int64s(importer, block, node, [sliced + 1], "axes")
        values = add_op(importer, block, node, "Unsqueeze", [values, kept]).results[0]
    if axis != sliced:
        order = [d for d in range(rank + (not stack)) if d != sliced]
        order.insert(axis, sliced)
        values = add_op(importer, block, node, "Transpose", [values], perm=order).results[0]
    return values if stack else _merged_dims(importer, block, node, values, axis)


def _merged_dims(importer, block, node, values: SSAValue, axis: int) -> SSAValue:
    """`values` with dims axis and axis + 1 merged into one, whatever its rank."""
    shape = add_op(importer, block, node, "Shape", [values]).results[0]

    def dims(start: int, end: int) -> SSAValue:
        bounds = [_int64s(importer, block, node, [bound], f"dims{bound}") for bound in (start, end)]
        return add_op(importer, block, node, "Slice", [shape, *bounds]).results[0]

    pair = [dims(axis, axis + 1), dims(axis + 1, axis + 2)]
    product = add_op(importer, block, node, "Mul", pair).results[0]
    parts = [dims(0, axis), product, dims(axis + 2, np.iinfo(np.int64).max)]
    merged = add_op(importer, block, node, "Concat", parts, axis=0).results[0]
    return add_op(importer, block, node, "Reshape", [values, merged]).results[0]


def _sequence_map(importer, block, node):
    inputs = _inputs(importer, node)
    body = _sub_graph(node, "body")
    lengths = {len(v.items) for v in inputs if isinstance(v, TensorSequence)}
    if len(lengths) != 1:
        raise _refuse(importer, node, "the input sequences must have one length known at compile time")
    length = lengths.pop()
    results: list[list[SSAValue]] = [[] for _ in node.output]
    for index in range(length):
        bindings = [v.items[index] if isinstance(v, TensorSequence) else v for v in inputs]
        for collected, value in zip(results, importer.inline_graph(block, body, bindings)):
            collected.append(_tensor(importer, node, value))
    return [TensorSequence(tuple(values)) for values in results]


# ------------------------------------------------------------------------ optionals


def _optional(importer, block, node):
    inputs = _inputs(importer, node)
    return [TensorOptional(inputs[0] if inputs else None)]


def _optional_has_element(importer, block, node):
    inputs = _inputs(importer, node)
    value = inputs[0] if inputs else None
    present = value is not None and not (isinstance(value, TensorOptional) and value.content is None)
    return [importer.constant(block, node.output[0], np.array(present, dtype=np.bool_))]


def _optional_get_element(importer, block, node):
    value = _inputs(importer, node)[0]
    if isinstance(value, TensorOptional):
        if value.content is None:
            raise _refuse(importer, node, "the optional is empty")
        return [value.content]
    return [value]


def _identity(importer, block, node):
    """Sequences and optionals pass through; tensors keep their Identity op."""
    value = _inputs(importer, node)[0]
    return None if isinstance(value, SSAValue) else [value]


def _zip_map(importer, block, node):
    values = _tensor(importer, node, _inputs(importer, node)[0])
    strings = [k.decode() if isinstance(k, bytes) else k for k in _attribute(node, "classlabels_strings", [])]
    keys = tuple(strings) or tuple(int(k) for k in _attribute(node, "classlabels_int64s", []))
    if not keys:
        raise _refuse(importer, node, "ZipMap without class labels")
    return [MapSequence(values, keys)]


# --------------------------------------------------------------------- control flow


def _if(importer, block, node):
    """An If whose condition is known: only the branch taken is imported."""
    condition = importer.known_value(_inputs(importer, node)[0])
    if condition is None:
        return None
    branch = "then_branch" if bool(condition.reshape(-1)[0]) else "else_branch"
    graph = _sub_graph(node, branch)
    return importer.inline_graph(block, graph, [])


def _loop(importer, block, node):
    """A Loop carrying sequences or optionals, unrolled at import (its trip count and
    conditions must be known then); tensor-only loops are left to `inline-control-flow`.
    Where the loop runs at run time, values it only appends to become scan outputs
    (collected_rows.py)."""
    trip_count, condition, *carried = _inputs(importer, node) + [None] * max(0, 2 - len(node.input))
    known = [importer.known_value(v) if v is not None else None for v in (trip_count, condition)]
    unrollable = trip_count is None or (
        known[0] is not None and int(known[0].reshape(-1)[0]) <= MAX_UNROLLED_ITERATIONS
    )
    if not unrollable or (condition is not None and known[1] is None):
        empty = [None if isinstance(v, SSAValue) else isinstance(v, TensorSequence) and not v.items for v in carried]
        outputs = collect_into_scan_outputs(importer, block, node, empty)
        if outputs is not None:
            return outputs
    if all(isinstance(v, SSAValue) for v in carried):
        return None
    limit = MAX_UNROLLED_ITERATIONS if trip_count is None else _scalar(importer, node, trip_count, "trip count")
    if limit > MAX_UNROLLED_ITERATIONS:
        raise _refuse(importer, node, f"a loop carrying sequences runs {limit} times, more than can be unrolled")
    going = True if condition is None else bool(_scalar(importer, node, condition, "loop condition"))
    body = _sub_graph(node, "body")
    scans: list[list[SSAValue]] = []
    iteration = 0
    while going and iteration < limit:
        iteration_value = importer.constant(block, f"{node.name}.i{iteration}", np.array(iteration, dtype=np.int64))
        condition_value = importer.constant(block, f"{node.name}.cond{iteration}", np.array(True))
        outputs = importer.inline_graph(block, body, [iteration_value, condition_value, *carried])
        going = bool(_scalar(importer, node, outputs[0], "loop condition"))
        carried = outputs[1 : 1 + len(carried)]
        scans.append([_tensor(importer, node, v) for v in outputs[1 + len(carried) :]])
        iteration += 1
    if going and trip_count is None:
        raise _refuse(importer, node, f"a loop carrying sequences did not end within {limit} iterations")
    scan_count = len(body.output) - 1 - len(carried)
    if scan_count and not scans:
        raise _refuse(importer, node, "a loop that runs zero times has scan outputs of unknown shape")
    stacked = [_stack(importer, block, node, [s[k] for s in scans], 0) for k in range(scan_count)]
    return [*carried, *stacked]


COMPILE_TIME_OPS: dict[str, Handler] = {
    "SequenceEmpty": _sequence_empty,
    "SequenceConstruct": _sequence_construct,
    "SequenceInsert": _sequence_insert,
    "SequenceErase": _sequence_erase,
    "SequenceAt": _sequence_at,
    "SequenceLength": _sequence_length,
    "SplitToSequence": _split_to_sequence,
    "ConcatFromSequence": _concat_from_sequence,
    "SequenceMap": _sequence_map,
    "Optional": _optional,
    "OptionalHasElement": _optional_has_element,
    "OptionalGetElement": _optional_get_element,
    "Identity": _identity,
    "If": _if,
    "Loop": _loop,
    "ZipMap": _zip_map,
}
