"""Symbolic shapes for shape inference: dims as `Dim` expressions, and the values
of small integer tensors computed from them (the exporters' shape arithmetic).

ONNX's own inference functions pass a dim's name through the ops that keep it
(element-wise ops, a Conv's batch, MatMul's leading dims) but leave a dim
unknown wherever it must be computed: a Conv's spatial dims over a symbolic
height, a Reshape whose target is `Concat(Gather(Shape(x), 0), [-1])`, a Range
to the sequence length. `symbolic_result_dims` computes those from the
operands' symbolic dims and the symbolic values of shape-like operands
(`symbolic_value`, symbolic_values.py), so a dim is an expression of the graph inputs' dims
wherever it can be, and the lowering evaluates it at run time.
"""

from __future__ import annotations

import fractions
from collections.abc import Callable, Sequence

import numpy as np

from onnxc.dialects.onnx import OnnxOp, WeightAttr, onnx_inputs, tensor_value
from onnxc.dialects.symbolic import Dim
from onnxc.passes.helpers.symbolic_values import INT64_MAX, dims_of, symbolic_value

# ----------------------------------------------------------------------------- dims of results


def symbolic_result_dims(op: OnnxOp, memo: dict | None = None, index: int = 0) -> list[Dim | None] | None:
    """A result's dims as expressions where a rule knows them (None entries where not)."""
    memo = {} if memo is None else memo
    try:
        if op.OP_TYPE in _RESULT_RULES:
            return _RESULT_RULES[op.OP_TYPE](op, index, memo)
        rule = _SHAPE_RULES.get(op.OP_TYPE)
        if rule is None:
            rule = _broadcast_dims if op.OP_TYPE in BROADCASTING_OPS else None
        return None if rule is None or index != 0 else rule(op, memo)
    except (ValueError, IndexError, TypeError, ZeroDivisionError):
        return None


BROADCASTING_OPS = frozenset(
    {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "Greater"}
    | {"LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "BitShift", "BitwiseAnd", "BitwiseOr"}
    | {"BitwiseXor", "StringConcat"}
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


def required_checks(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """(lhs, "==" or ">=", rhs) the op requires of its dims: broadcast axes equal
    (Expand's too), the reduction dim of a matrix product, a Conv's input channels
    and its weights', a Reshape's element count, divisible block dims, TopK's k."""
    checks = [(x, "==", y) for x, y in _required_equalities(op)]
    rule = _REQUIREMENTS.get(op.OP_TYPE)
    if rule is not None:
        try:
            checks += rule(op)
        except (ValueError, IndexError, TypeError, ZeroDivisionError):
            pass
    return [(x, relation, y) for x, relation, y in checks if x is not None and y is not None and x != y]


def _legacy_broadcast(op: OnnxOp) -> bool:
    """Before opset 7, `broadcast` with `axis` lines the second input up at `axis`, not numpy's way."""
    return "broadcast" in op.ATTR_TYPES and bool(op.attr("broadcast")) and "axis" in op.attributes


def _required_equalities(op: OnnxOp) -> list[tuple[Dim | None, Dim | None]]:
    if op.OP_TYPE in BROADCASTING_OPS and _legacy_broadcast(op):
        return []
    if op.OP_TYPE in BROADCASTING_OPS:
        shapes = [dims_of(v) for v in onnx_inputs(op) if v is not None]
        return [] if any(s is None for s in shapes) or not shapes else broadcast_dims(shapes)[1]
    if op.OP_TYPE == "Expand":
        data, target = dims_of(op.input(0)), symbolic_value(op.input(1))
        return [] if data is None or target is None else broadcast_dims([data, list(target.reshape(-1))])[1]
    a, b = dims_of(op.input(0)), dims_of(op.input(1)) if len(onnx_inputs(op)) > 1 else None
    if a is None or b is None or not a or not b:
        return []
    if op.OP_TYPE == "MatMul":
        batch = broadcast_dims([a[:-2], b[:-2]])[1] if len(a) > 2 or len(b) > 2 else []
        return [(a[-1], b[-2] if len(b) >= 2 else b[0]), *batch]
    if op.OP_TYPE == "Gemm" and len(a) == 2 and len(b) == 2:
        return [(a[0 if op.attr("transA") else 1], b[1 if op.attr("transB") else 0])]
    if op.OP_TYPE == "Conv" and len(a) >= 2 and len(b) >= 2 and b[1] is not None:
        return [(a[1], b[1] * op.attr("group"))]
    if op.OP_TYPE == "ConvTranspose" and len(a) >= 2 and len(b) >= 2:
        return [(a[1], b[0])]
    return []


def _broadcast_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    shapes = [dims_of(v) for v in onnx_inputs(op) if v is not None]
    if any(s is None for s in shapes) or _legacy_broadcast(op):
        return None
    return broadcast_dims(shapes)[0]


def _windowed_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """Conv and the pools: out = (in + pads - dilation*(k-1) - 1) // stride + 1 (ceil_mode rounds up)."""
    dims = dims_of(op.input(0))
    if dims is None or len(dims) < 3:
        return None
    spatial = len(dims) - 2
    kernel = _kernel_dims(op, spatial)
    if kernel is None or None in kernel:
        return None
    strides = op.attr("strides") or [1] * spatial
    dilations = op.attr("dilations") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    auto_pad = op.attr("auto_pad")
    ceil_mode = op.attr("ceil_mode") if "ceil_mode" in op.ATTR_TYPES else 0
    if op.OP_TYPE == "Conv":
        weight = dims_of(op.input(1))
        channels = None if weight is None else weight[0]
    else:
        channels = dims[1]
    out = [dims[0], channels]
    for k in range(spatial):
        size = dims[2 + k]
        if size is None:
            out.append(None)
        elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out.append(size.ceil_div(strides[k]))
        else:
            pad_begin = 0 if auto_pad == "VALID" else pads[k]
            pads_k = 0 if auto_pad == "VALID" else pads[k] + pads[k + spatial]
            span = size + pads_k - dilations[k] * (kernel[k] - 1) - 1
            if not ceil_mode:
                out.append(span // strides[k] + 1)
                continue
            # ceil_mode drops a last window that would start in the end padding
            count = span.ceil_div(strides[k]) + 1
            starts_inside = ((count - 1) * strides[k]).less_than(size + pad_begin)
            out.append(count - 1 + starts_inside)
    return out


def _kernel_dims(op: OnnxOp, spatial: int) -> list[Dim | None] | None:
    """`kernel_shape`, else (Conv, ConvTranspose) the weights' spatial dims."""
    kernel = op.attr("kernel_shape")
    if kernel:
        return [Dim.const(k) for k in kernel]
    weight = dims_of(op.input(WEIGHT_OPERANDS[op.OP_TYPE])) if op.OP_TYPE in WEIGHT_OPERANDS else None
    return None if weight is None or len(weight) != spatial + 2 else weight[2:]


WEIGHT_OPERANDS = {"Conv": 1, "ConvTranspose": 1, "DeformConv": 1, "ConvInteger": 1, "QLinearConv": 3}
"""Where the convolutions' weights [M, C/group, k...] are among their operands."""


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
        out[inferred[0]] = total // known  # exact where the element counts agree: a check
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
    """Length of size[start:end:step]: a short expression for x[:, :end] (step 1 from
    0), else the spec's normalization and clamping written out, as the
    lowering computes its start at run time (slice_pad.py)."""
    if size is None or step is None or step == 0:
        return None
    if step != 1 or start.constant != 0:
        return _general_sliced_length(size, start, end, step)
    begin = Dim.const(0)
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


def _general_sliced_length(size: Dim, start: Dim, end: Dim, step: int) -> Dim:
    """A bound counts from the end where negative, then is clamped to [0, size]
    (step > 0) or [-1, size - 1] (step < 0); the length is ceil(span / |step|), at least 0."""
    low, high = (Dim.const(0), size) if step > 0 else (Dim.const(-1), size - 1)

    def clamped(bound: Dim) -> Dim:
        if bound.constant is not None and abs(bound.constant) >= INT64_MAX // 2:
            return high if bound.constant > 0 else low
        normalized = bound + bound.less_than(0) * size
        return normalized.maximum(low).minimum(high)

    first, last = clamped(start), clamped(end)
    span = last - first if step > 0 else first - last
    return span.ceil_div(abs(step)).maximum(0)


def _resize_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    dims = dims_of(op.input(0))
    inputs = onnx_inputs(op)
    if dims is None:
        return None
    policy = op.attr("keep_aspect_ratio_policy") if "keep_aspect_ratio_policy" in op.ATTR_TYPES else None
    axes = [a % len(dims) for a in op.attr("axes")] if "axes" in op.ATTR_TYPES and op.attr("axes") else None
    sizes = symbolic_value(inputs[3], memo) if len(inputs) > 3 and inputs[3] is not None else None
    if sizes is not None:
        out = list(dims)
        for axis, size in zip(axes or range(len(dims)), sizes.reshape(-1)):
            out[axis] = size
        return out if policy in (None, "stretch") else _aspect_kept_dims(dims, out, axes, policy)
    scales_value = inputs[2] if len(inputs) > 2 else None
    owner = scales_value.owner if scales_value is not None else None
    if not (
        isinstance(owner, OnnxOp)
        and owner.OP_TYPE == "Constant"
        and isinstance(owner.attributes.get("value"), WeightAttr)
    ):
        return None
    scales = tensor_value(owner, owner.attributes["value"]).reshape(-1)
    scaled = list(range(len(dims))) if axes is None else axes
    if len(scales) != len(scaled) or any(not np.isfinite(s) or s <= 0 for s in scales):
        return None
    out = list(dims)
    for axis, scale in zip(scaled, scales):
        ratio = fractions.Fraction(float(scale))  # floor(d * scale), exactly: the float's own ratio
        out[axis] = None if dims[axis] is None else dims[axis] * ratio.numerator // ratio.denominator
    return out


def _aspect_kept_dims(
    dims: list[Dim | None], sizes: list[Dim | None], axes: list[int] | None, policy: str
) -> list[Dim | None] | None:
    """keep_aspect_ratio_policy: one scale, the least (not_larger) or greatest of
    size / in over the axes, and out = round_half_up(scale * in). Rounding is
    monotone, so out is the least (greatest) over the axes j of
    round_half_up(size_j / in_j * in), each (2 * in * size_j + in_j) // (2 * in_j)."""
    axes = list(range(len(dims))) if axes is None else axes
    if any(dims[a] is None or sizes[a] is None for a in axes):
        return None
    out = list(dims)
    for axis in axes:
        candidates = [sizes[j] if j == axis else (2 * dims[axis] * sizes[j] + dims[j]) // (2 * dims[j]) for j in axes]
        out[axis] = candidates[0]
        for candidate in candidates[1:]:
            out[axis] = out[axis].minimum(candidate) if policy == "not_larger" else out[axis].maximum(candidate)
    return out


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


# ----------------------------------------------------------------------------- more result rules


def _pad_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """in + pad before + pad after, the pads an attribute (opset < 11) or an operand."""
    dims = dims_of(op.input(0))
    operands = onnx_inputs(op)
    if dims is None:
        return None
    if "pads" in op.ATTR_TYPES and op.attr("pads") is not None:
        pads = [Dim.const(p) for p in op.attr("pads")]
    else:
        value = symbolic_value(operands[1], memo)
        if value is None:
            return None
        pads = list(value.reshape(-1))
    axes = list(range(len(dims)))
    if len(operands) > 3 and operands[3] is not None:
        axes_value = symbolic_value(operands[3], memo)
        if axes_value is None:
            return None
        axes = [a.constant % len(dims) for a in axes_value.reshape(-1)]
    out = list(dims)
    for k, axis in enumerate(axes):
        out[axis] = None if dims[axis] is None else dims[axis] + pads[k] + pads[k + len(axes)]
    return out


def _block_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """SpaceToDepth moves b x b blocks of H and W into channels; DepthToSpace back."""
    n, c, h, w = dims_of(op.input(0))
    b = op.attr("blocksize")
    if op.OP_TYPE == "SpaceToDepth":
        return [n, c * (b * b), h // b, w // b]
    return [n, c // (b * b), h * b, w * b]


def _block_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    _, c, h, w = dims_of(op.input(0))
    b = op.attr("blocksize")
    divided = [h, w] if op.OP_TYPE == "SpaceToDepth" else [c]
    step = b if op.OP_TYPE == "SpaceToDepth" else b * b
    return [(d, "==", (d // step) * step) for d in divided]


def _conv_transpose_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """stride*(in - 1) + output_padding + dilation*(k - 1) + 1 - pads (SAME: in*stride)."""
    dims, weight = dims_of(op.input(0)), dims_of(op.input(1))
    if dims is None or weight is None:
        return None
    spatial = len(dims) - 2
    channels = weight[1] * op.attr("group") if weight[1] is not None else None
    if op.attr("output_shape"):
        return [dims[0], channels, *(Dim.const(d) for d in op.attr("output_shape")[-spatial:])]
    kernel = _kernel_dims(op, spatial)
    if kernel is None:
        return None
    strides = op.attr("strides") or [1] * spatial
    dilations = op.attr("dilations") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    output_padding = op.attr("output_padding") or [0] * spatial
    out = [dims[0], channels]
    for k in range(spatial):
        size = dims[2 + k]
        if size is None or kernel[k] is None:
            out.append(None)
        elif op.attr("auto_pad") in ("SAME_UPPER", "SAME_LOWER"):
            out.append(size * strides[k])
        else:
            span = dilations[k] * (kernel[k] - 1) + 1 + output_padding[k] - pads[k] - pads[k + spatial]
            out.append(strides[k] * (size - 1) + span)
    return out


def _matmul_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """numpy.matmul: broadcast batch dims, then (M, N); a 1-D operand drops its dim."""
    return matrix_product_dims(dims_of(op.input(0)), dims_of(op.input(1)))


def matrix_product_dims(a: list[Dim | None] | None, b: list[Dim | None] | None) -> list[Dim | None] | None:
    """The dims of numpy.matmul(a, b) for operand dims a and b."""
    if a is None or b is None or not a or not b:
        return None
    rows = [a[-2]] if len(a) >= 2 else []
    columns = [b[-1]] if len(b) >= 2 else []
    batch = broadcast_dims([a[:-2], b[:-2]])[0] if len(a) > 2 or len(b) > 2 else []
    return [*batch, *rows, *columns]


def _split_dims(op: OnnxOp, index: int, memo: dict) -> list[Dim | None] | None:
    """Split's result `index`: the `split` sizes, else equal parts (opset 18: the
    last part takes what is left of ceil-sized parts)."""
    dims = dims_of(op.input(0))
    if dims is None:
        return None
    axis = op.attr("axis") % len(dims)
    size = dims[axis]
    operands = onnx_inputs(op)
    sizes = None
    if "split" in op.ATTR_TYPES and op.attr("split"):
        sizes = [Dim.const(s) for s in op.attr("split")]
    elif len(operands) > 1 and operands[1] is not None:
        value = symbolic_value(operands[1], memo)
        if value is None:
            return None
        sizes = list(value.reshape(-1))
    elif size is not None:
        parts = len(op.results)
        if "num_outputs" in op.ATTR_TYPES and op.attr("num_outputs"):
            part = size.ceil_div(parts)
            sizes = [part] * (parts - 1) + [size - part * (parts - 1)]
        else:
            sizes = [size // parts] * parts
    if sizes is None:
        return None
    out = list(dims)
    out[axis] = sizes[index]
    return out


def _split_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """The parts cover the axis exactly."""
    dims = dims_of(op.input(0))
    axis = op.attr("axis") % len(dims)
    parts = [_split_dims(op, k, {}) for k in range(len(op.results))]
    if dims[axis] is None or any(p is None or p[axis] is None for p in parts):
        return []
    return [(dims[axis], "==", _sum([p[axis] for p in parts]))]


def _top_k_dims(op: OnnxOp, index: int, memo: dict) -> list[Dim | None] | None:
    dims, k = dims_of(op.input(0)), symbolic_value(op.input(1), memo)
    if dims is None or k is None:
        return None
    out = list(dims)
    out[op.attr("axis") % len(dims)] = k.reshape(-1)[0]
    return out


def _top_k_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    dims, k = dims_of(op.input(0)), symbolic_value(op.input(1))
    return [] if dims is None or k is None else [(dims[op.attr("axis") % len(dims)], ">=", k.reshape(-1)[0])]


def _reshape_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    data, out = dims_of(op.input(0)), _reshape_dims(op, {})
    if data is None or out is None or any(d is None for d in data + out):
        return []
    return [(_product(out), "==", _product(data))]


def _non_max_suppression_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """boxes [batch, box, 4] and scores [batch, class, box] agree on batch and box."""
    boxes, scores = dims_of(op.input(0)), dims_of(op.input(1))
    if boxes is None or scores is None or len(boxes) != 3 or len(scores) != 3:
        return []
    return [(boxes[0], "==", scores[0]), (boxes[1], "==", scores[2])]


_SHAPE_RULES.update(
    {
        "Pad": _pad_dims,
        "SpaceToDepth": _block_dims,
        "DepthToSpace": _block_dims,
        "ConvTranspose": _conv_transpose_dims,
        "MatMul": _matmul_dims,
    }
)

_RESULT_RULES: dict[str, Callable] = {"Split": _split_dims, "TopK": _top_k_dims}
"""Rules for ops with several results: (op, result index, memo) -> dims."""

_REQUIREMENTS: dict[str, Callable] = {
    "Reshape": _reshape_requirements,
    "SpaceToDepth": _block_requirements,
    "DepthToSpace": _block_requirements,
    "Split": _split_requirements,
    "TopK": _top_k_requirements,
    "NonMaxSuppression": _non_max_suppression_requirements,
}


# The windowed, signal and quantized ops' rules (their own module: this one's size).
import onnxc.passes.helpers.symbolic_op_shapes  # noqa: E402, F401  (registers them in the tables above)
