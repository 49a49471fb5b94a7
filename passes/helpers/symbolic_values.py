"""Symbolic values: the elements of small integer tensors as `Dim` expressions of
the graph inputs' dims (the exporters' shape arithmetic: Shape, Gather, Concat,
Add, Where over Equal...), and the dims of ranked tensors as expressions.
symbolic_shapes.py computes result dims from these."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs, tensor_value
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
        if array.dtype.kind not in "iub":
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
    index = (
        np.vectorize(lambda d: d.constant, otypes=[np.int64])(indices)
        if indices.size
        else np.zeros(indices.shape, np.int64)
    )
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
    if a.constant is not None and b.constant:
        quotient = abs(a.constant) // abs(b.constant)  # ONNX's Div truncates toward zero
        return Dim.const(quotient if (a.constant < 0) == (b.constant < 0) else -quotient)
    if b.constant is not None and b.constant < 0:
        raise ValueError("division of a symbolic value by a negative one")
    return a // b  # shape values are non-negative: floor and truncation agree


def _where_value(op: OnnxOp, operands) -> SymbolicArray | None:
    condition, if_true, if_false = operands
    if condition is None or if_true is None or if_false is None:
        return None
    return np.vectorize(lambda c, a, b: c * a + (1 - c) * b, otypes=[object])(condition, if_true, if_false)


def _cast_value(op: OnnxOp, operands) -> SymbolicArray | None:
    """Cast keeps integer values; to bool, a value becomes 1 where it is not 0."""
    value = operands[0]
    if value is None or op.attr("to") != onnx.TensorProto.BOOL:
        return value
    return np.vectorize(lambda d: 1 - d.equals(0), otypes=[object])(value)


def _unary(function):
    """A value op of one operand, element by element."""

    def value(op: OnnxOp, operands) -> SymbolicArray | None:
        return None if operands[0] is None else np.vectorize(function, otypes=[object])(operands[0])

    return value


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
    "Mod": _elementwise(lambda a, b: a % b),
    "Max": _elementwise(lambda a, b: a.maximum(b)),
    "Min": _elementwise(lambda a, b: a.minimum(b)),
    # Booleans are the values 0 and 1 (dialects/symbolic.py).
    "Equal": _elementwise(lambda a, b: a.equals(b)),
    "Less": _elementwise(lambda a, b: a.less_than(b)),
    "Greater": _elementwise(lambda a, b: b.less_than(a)),
    "LessOrEqual": _elementwise(lambda a, b: 1 - b.less_than(a)),
    "GreaterOrEqual": _elementwise(lambda a, b: 1 - a.less_than(b)),
    "And": _elementwise(lambda a, b: a * b),
    "Or": _elementwise(lambda a, b: a.maximum(b)),
    "Not": _unary(lambda d: 1 - d),
    "Neg": _unary(lambda d: -d),
    "Where": _where_value,
    "Cast": _cast_value,
    **{name: _first for name in ("Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze")},
}


