"""Symbolic shapes for shape inference: dims as `Dim` expressions, and the values
of small integer tensors computed from them (the exporters' shape arithmetic).

ONNX's own inference functions pass a dim's name through the ops that keep it
(element-wise ops, a Conv's batch, MatMul's leading dims) but leave a dim
unknown wherever it must be computed: a Conv's spatial dims over a symbolic
height, a Reshape whose target is `Concat(Gather(Shape(x), 0), [-1])`, a Range
to the sequence length. `symbolic_result_dims` computes those from the
operands' symbolic dims and the symbolic values of shape-like operands
(`symbolic_value`), so a dim is an expression of the graph inputs' dims
wherever it can be, and the lowering evaluates it at run time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, WeightAttr, onnx_inputs, tensor_value
from onnxc.dialects.symbolic import Dim
from onnxc.dialects.types import dim_params

MAX_SYMBOLIC_ELEMENTS = 64
"""Integer tensors up to this size get symbolic values (shape vectors are short)."""

INT64_MAX = (1 << 63) - 1

SymbolicArray = np.ndarray
"""An object array of `Dim`s."""


def dims_of(value: SSAValue | None) -> list[Dim | None] | None:
    """A ranked tensor's dims as expressions (None for a dim nothing is known of)."""
    if value is None or not isinstance(value.type, TensorType):
        return None
    dims: list[Dim | None] = []
    for dim, param in zip(value.type.get_shape(), dim_params(value.type)):
        if dim != DYNAMIC_INDEX:
            dims.append(Dim.const(dim))
        else:
            dims.append(_parse_or_none(param))
    return dims


def _parse_or_none(text: str) -> Dim | None:
    try:
        return Dim.parse(text) if text else None
    except ValueError:
        return None


# ----------------------------------------------------------------------------- values


def symbolic_value(value: SSAValue | None, memo: dict | None = None) -> SymbolicArray | None:
    """The elements of a small integer tensor as `Dim`s, where shape arithmetic over
    the inputs' dims determines them (Shape, Gather, Concat, Unsqueeze, Add...)."""
    if value is None or not isinstance(value.type, TensorType) or DYNAMIC_INDEX in value.type.get_shape():
        return None
    if math.prod(value.type.get_shape()) > MAX_SYMBOLIC_ELEMENTS:
        return None
    memo = {} if memo is None else memo
    if value not in memo:
        memo[value] = None  # a cycle (there is none in a graph) would end here
        memo[value] = _compute_value(value, memo)
    return memo[value]


def _compute_value(value: SSAValue, memo: dict) -> SymbolicArray | None:
    op = value.owner
    if not isinstance(op, OnnxOp) or value is not op.results[0]:
        return None
    shape = tuple(value.type.get_shape())
    if op.OP_TYPE == "Constant":
        attr = op.attributes.get("value")
        if attr is None or not hasattr(attr, "get_type"):
            return None
        array = tensor_value(op, attr)
        if array.dtype.kind not in "iu":
            return None
        return _as_dims(array.astype(np.int64)).reshape(shape)
    rule = _VALUE_RULES.get(op.OP_TYPE)
    if rule is None:
        return None
    operands = [symbolic_value(v, memo) if v is not None else None for v in onnx_inputs(op)]
    try:
        result = rule(op, operands)
    except (ValueError, IndexError, TypeError, ZeroDivisionError):
        return None
    if result is None:
        return None
    result = np.asarray(result, dtype=object)
    return result.reshape(shape) if result.size == math.prod(shape) else None


def _as_dims(array: np.ndarray) -> SymbolicArray:
    flat = [Dim.const(int(v)) for v in np.asarray(array).reshape(-1)]
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(np.shape(array))


def _objects(items: Sequence[Dim]) -> SymbolicArray:
    out = np.empty(len(items), dtype=object)
    out[:] = list(items)
    return out


def _shape_value(op: OnnxOp, operands) -> SymbolicArray | None:
    dims = dims_of(op.input(0))
    if dims is None:
        return None
    rank = len(dims)
    start, end = op.attr("start"), op.attr("end")
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = rank if end is None else min(max(end + rank if end < 0 else end, 0), rank)
    picked = dims[start:end]
    return None if any(d is None for d in picked) else _objects(picked)


def _size_value(op: OnnxOp, operands) -> SymbolicArray | None:
    dims = dims_of(op.input(0))
    if dims is None or any(d is None for d in dims):
        return None
    total = Dim.const(1)
    for d in dims:
        total = total * d
    return _objects([total])


def _gather_value(op: OnnxOp, operands) -> SymbolicArray | None:
    data, indices = operands
    if data is None or indices is None or any(i.constant is None for i in indices.reshape(-1)):
        return None
    axis = op.attr("axis")
    index = np.vectorize(lambda d: d.constant, otypes=[np.int64])(indices) if indices.size else np.zeros(indices.shape, np.int64)
    index = np.where(index < 0, index + data.shape[axis], index)
    return np.take(data, index, axis=axis)


def _elementwise(function: Callable[[Dim, Dim], Dim]) -> Callable:
    def rule(op: OnnxOp, operands) -> SymbolicArray | None:
        a, b = operands[:2]
        if a is None or b is None:
            return None
        return np.vectorize(function, otypes=[object])(a, b)

    return rule


def _integer_div(a: Dim, b: Dim) -> Dim:
    if b.constant is None or b.constant <= 0:
        raise ValueError("division by a symbolic or non-positive value")
    return a // b  # dims are non-negative: floor and ONNX's truncation agree


def _slice_value(op: OnnxOp, operands) -> SymbolicArray | None:
    data = operands[0]
    bounds = [None if v is None else [d.constant for d in v.reshape(-1)] for v in operands[1:5]]
    if data is None or data.ndim != 1 or bounds[0] is None or bounds[1] is None:
        return None
    starts, ends = bounds[0], bounds[1]
    axes = bounds[2] or [0]
    steps = bounds[3] or [1]
    if None in starts or None in ends or None in steps or axes not in ([0], [-1]):
        return None
    return data[slice(starts[0], max(min(ends[0], INT64_MAX), -INT64_MAX), steps[0])]


def _concat_value(op: OnnxOp, operands) -> SymbolicArray | None:
    if any(v is None for v in operands):
        return None
    return np.concatenate(operands, axis=op.attr("axis"))


def _first(op: OnnxOp, operands) -> SymbolicArray | None:
    return operands[0]


_VALUE_RULES: dict[str, Callable] = {
    "Shape": _shape_value,
    "Size": _size_value,
    "Gather": _gather_value,
    "Concat": _concat_value,
    "Slice": _slice_value,
    "Add": _elementwise(lambda a, b: a + b),
    "Sub": _elementwise(lambda a, b: a - b),
    "Mul": _elementwise(lambda a, b: a * b),
    "Div": _elementwise(_integer_div),
    "Max": _elementwise(lambda a, b: a.maximum(b)),
    "Min": _elementwise(lambda a, b: a.minimum(b)),
    **{name: _first for name in ("Cast", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze")},
}


# ----------------------------------------------------------------------------- dims of results


def symbolic_result_dims(op: OnnxOp, memo: dict | None = None) -> list[Dim | None] | None:
    """Result 0's dims as expressions where a rule knows them (None entries where not)."""
    rule = _SHAPE_RULES.get(op.OP_TYPE)
    if rule is None:
        rule = _broadcast_dims if op.OP_TYPE in BROADCASTING_OPS else None
    if rule is None:
        return None
    memo = {} if memo is None else memo
    try:
        return rule(op, memo)
    except (ValueError, IndexError, TypeError, ZeroDivisionError):
        return None


BROADCASTING_OPS = frozenset(
    {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "Greater"}
    | {"LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr"}
    | {"BitwiseXor"}
)


def broadcast_dims(shapes: Sequence[Sequence[Dim | None]]) -> tuple[list[Dim | None], list[tuple[Dim, Dim]]]:
    """numpy broadcasting over symbolic dims; two different symbolic dims of one axis
    are assumed equal (the returned pairs are checked at run time), as onnx-mlir does."""
    rank = max(len(s) for s in shapes)
    out: list[Dim | None] = []
    equalities: list[tuple[Dim, Dim]] = []
    for axis in range(rank):
        dims = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        known = [d for d in dims if d is not None and d.constant != 1]
        if any(d is None for d in dims):
            out.append(known[0] if known and known[0].constant is not None else None)
            continue
        if not known:
            out.append(Dim.const(1))
            continue
        chosen = next((d for d in known if d.constant is not None), known[0])
        equalities += [(chosen, d) for d in known if d != chosen]
        out.append(chosen)
    return out, equalities


def required_equalities(op: OnnxOp) -> list[tuple[Dim, Dim]]:
    """Pairs of dims the op requires equal: broadcast axes (Expand's too), the reduction
    dim of a matrix product, a Conv's input channels and its weights'."""
    if op.OP_TYPE in BROADCASTING_OPS:
        shapes = [dims_of(v) for v in onnx_inputs(op) if v is not None]
        return [] if any(s is None for s in shapes) or not shapes else broadcast_dims(shapes)[1]
    if op.OP_TYPE == "Expand":
        data, target = dims_of(op.input(0)), symbolic_value(op.input(1))
        return [] if data is None or target is None else broadcast_dims([data, list(target.reshape(-1))])[1]
    a, b = dims_of(op.input(0)), dims_of(op.input(1)) if len(onnx_inputs(op)) > 1 else None
    if a is None or b is None or not a or not b:
        return []
    if op.OP_TYPE == "MatMul" and len(b) >= 2:
        pairs = [(a[-1], b[-2])]
    elif op.OP_TYPE == "Gemm" and len(a) == 2 and len(b) == 2:
        pairs = [(a[0 if op.attr("transA") else 1], b[1 if op.attr("transB") else 0])]
    elif op.OP_TYPE == "Conv" and len(a) >= 2 and len(b) >= 2 and b[1] is not None:
        pairs = [(a[1], b[1] * op.attr("group"))]
    else:
        return []
    return [(x, y) for x, y in pairs if x is not None and y is not None and x != y]


def _broadcast_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    shapes = [dims_of(v) for v in onnx_inputs(op) if v is not None]
    if any(s is None for s in shapes):
        return None
    return broadcast_dims(shapes)[0]


def _windowed_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """Conv and the pools: out = (in + pads - dilation*(k-1) - 1) // stride + 1 (ceil_mode rounds up)."""
    dims = dims_of(op.input(0))
    if dims is None or len(dims) < 3:
        return None
    spatial = len(dims) - 2
    kernel = op.attr("kernel_shape")
    if kernel is None and op.OP_TYPE == "Conv":
        weight = dims_of(op.input(1))
        kernel = [d.constant for d in weight[2:]] if weight else None
    if kernel is None or None in kernel:
        return None
    strides = op.attr("strides") or [1] * spatial
    dilations = op.attr("dilations") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    auto_pad = op.attr("auto_pad")
    ceil_mode = op.attr("ceil_mode") if "ceil_mode" in op.ATTR_TYPES else 0
    out = [dims[0], None]
    for k in range(spatial):
        size = dims[2 + k]
        if size is None:
            out.append(None)
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out.append(size.ceil_div(strides[k]))
        else:
            if auto_pad == "VALID":
                pads_k = 0
            else:
                pads_k = pads[k] + pads[k + spatial]
            span = size + pads_k - dilations[k] * (kernel[k] - 1) - 1
            out.append((span.ceil_div(strides[k]) if ceil_mode else span // strides[k]) + 1)
    return out


def _reshape_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    data, target = dims_of(op.input(0)), symbolic_value(op.input(1), memo)
    if data is None or target is None or any(d is None for d in data):
        return None
    allow_zero = op.attr("allowzero") if "allowzero" in op.ATTR_TYPES else 0
    out: list[Dim | None] = []
    for axis, d in enumerate(target.reshape(-1)):
        out.append(data[axis] if d.constant == 0 and not allow_zero else d)
    inferred = [k for k, d in enumerate(out) if d.constant == -1]
    if len(inferred) > 1:
        return None
    if inferred:
        total, known = _product(data), _product([d for k, d in enumerate(out) if k != inferred[0]])
        quotient = total // known
        if quotient * known != total:
            return None  # not an exact division of expressions
        out[inferred[0]] = quotient
    return out


def _product(dims: Sequence[Dim]) -> Dim:
    total = Dim.const(1)
    for d in dims:
        total = total * d
    return total


def _value_dims(index: int) -> Callable:
    """A result whose shape is the value of an operand (ConstantOfShape)."""

    def rule(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
        target = symbolic_value(op.input(index), memo)
        return None if target is None else list(target.reshape(-1))

    return rule


def _expand_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    data, target = dims_of(op.input(0)), symbolic_value(op.input(1), memo)
    if data is None or target is None:
        return None
    return broadcast_dims([data, list(target.reshape(-1))])[0]


def _tile_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    data, repeats = dims_of(op.input(0)), symbolic_value(op.input(1), memo)
    if data is None or repeats is None:
        return None
    return [None if d is None else d * r for d, r in zip(data, repeats.reshape(-1))]


def _range_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    start, limit, delta = (symbolic_value(v, memo) for v in onnx_inputs(op))
    if start is None or limit is None or delta is None:
        return None
    start, limit, delta = (v.reshape(-1)[0] for v in (start, limit, delta))
    if delta.constant is None or delta.constant == 0:
        return None
    span = limit - start
    if delta.constant == 1 and all(c > 0 for _, c in span.terms):
        return [span]
    return [span.ceil_div(delta.constant).maximum(0)]


def _concat_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    shapes = [dims_of(v) for v in onnx_inputs(op) if v is not None]
    if not shapes or any(s is None for s in shapes):
        return None
    rank = len(shapes[0])
    axis = op.attr("axis") % rank
    out = list(shapes[0])
    parts = [s[axis] for s in shapes]
    out[axis] = None if any(p is None for p in parts) else _sum(parts)
    for k in range(rank):
        if k != axis and out[k] is None:
            out[k] = next((s[k] for s in shapes if s[k] is not None), None)
    return out


def _sum(dims: Sequence[Dim]) -> Dim:
    total = Dim.const(0)
    for d in dims:
        total = total + d
    return total


def _flatten_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    dims = dims_of(op.input(0))
    if dims is None or any(d is None for d in dims):
        return None
    axis = op.attr("axis")
    axis = axis + len(dims) if axis < 0 else axis  # in [-rank, rank]
    if not 0 <= axis <= len(dims):
        return None
    return [_product(dims[:axis]), _product(dims[axis:])]


def _slice_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    dims = dims_of(op.input(0))
    values = [symbolic_value(v, memo) if v is not None else None for v in onnx_inputs(op)[1:5]]
    if dims is None or values[0] is None or values[1] is None:
        return None
    starts, ends = list(values[0].reshape(-1)), list(values[1].reshape(-1))
    axes = [a.constant for a in values[2].reshape(-1)] if values[2] is not None else list(range(len(starts)))
    steps = [s.constant for s in values[3].reshape(-1)] if values[3] is not None else [1] * len(starts)
    out = list(dims)
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis %= len(dims)
        out[axis] = _sliced_length(dims[axis], start, end, step)
    return out


def _sliced_length(size: Dim | None, start: Dim, end: Dim, step: int | None) -> Dim | None:
    """Length of size[start:end:step] for step 1 where the bounds are known well
    enough: a constant start (negative counts from the end), an end that is a
    constant (INT64_MAX: to the end) or an expression clamped to the size."""
    if size is None or step != 1 or start.constant is None:
        return None
    begin = size + start.constant if start.constant < 0 else Dim.const(start.constant)
    begin = begin.minimum(size) if begin.constant is None or size.constant is not None else begin
    if end.constant is not None:
        if end.constant >= INT64_MAX // 2:
            stop = size
        elif end.constant < 0:
            stop = size + end.constant
        else:
            stop = size.minimum(end.constant) if size.constant is None else Dim.const(min(end.constant, size.constant))
    else:
        stop = end if size.constant is None and end == size else end.minimum(size)
    length = stop - begin
    return length if length.constant is None or length.constant >= 0 else Dim.const(0)


def _resize_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    dims = dims_of(op.input(0))
    inputs = onnx_inputs(op)
    if dims is None:
        return None
    sizes = symbolic_value(inputs[3], memo) if len(inputs) > 3 and inputs[3] is not None else None
    if sizes is not None:
        return list(sizes.reshape(-1))
    scales_value = inputs[2] if len(inputs) > 2 else None
    owner = scales_value.owner if scales_value is not None else None
    if not (isinstance(owner, OnnxOp) and owner.OP_TYPE == "Constant" and isinstance(owner.attributes.get("value"), WeightAttr)):
        return None
    scales = tensor_value(owner, owner.attributes["value"]).reshape(-1)
    if len(scales) != len(dims) or any(float(s) != int(s) for s in scales):
        return None
    return [None if d is None else d * int(s) for d, s in zip(dims, scales)]


_SHAPE_RULES: dict[str, Callable] = {
    "Conv": _windowed_dims,
    "MaxPool": _windowed_dims,
    "AveragePool": _windowed_dims,
    "LpPool": _windowed_dims,
    "Reshape": _reshape_dims,
    "ConstantOfShape": _value_dims(0),
    "Expand": _expand_dims,
    "Tile": _tile_dims,
    "Range": _range_dims,
    "Concat": _concat_dims,
    "Flatten": _flatten_dims,
    "Slice": _slice_dims,
    "Resize": _resize_dims,
}
