"""Symbolic shape rules of the convolution-like, pooling, signal and quantized ops
(DeformConv, ConvInteger, QLinearConv, MaxPool's indices, MaxUnpool, Col2Im,
QLinearMatMul, STFT, DFT, CausalConvWithState), registered in symbolic_shapes'
tables: their result dims as expressions of the input dims, and what they
require of those dims (checked when a run starts), so that their lowerings
take run-time dims."""

from __future__ import annotations

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.symbolic import Dim
from onnxc.passes.helpers.symbolic_shapes import (
    _REQUIREMENTS,
    _RESULT_RULES,
    _SHAPE_RULES,
    WEIGHT_OPERANDS,
    _kernel_dims,
    _product,
    _value_dims,
    _windowed_dims,
    broadcast_dims,
    matrix_product_dims,
)
from onnxc.passes.helpers.symbolic_values import dims_of, symbolic_value


def _weighted_window_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """The convolutions' windows (`_windowed_dims`), one channel per weight row."""
    out, weight = _windowed_dims(op, memo), dims_of(op.input(WEIGHT_OPERANDS[op.OP_TYPE]))
    if out is None or weight is None or not weight:
        return None
    out[1] = weight[0]
    return out


def _weighted_window_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """The input's channels are the weights' times the groups; `kernel_shape` is the weights' size."""
    x, weight = dims_of(op.input(0)), dims_of(op.input(WEIGHT_OPERANDS[op.OP_TYPE]))
    if x is None or weight is None or len(x) < 2 or len(weight) != len(x):
        return []
    checks = [(x[1], "==", None if weight[1] is None else weight[1] * op.attr("group"))]
    kernel = op.attr("kernel_shape") or []
    return checks + [(w, "==", Dim.const(k)) for w, k in zip(weight[2:], kernel)]


def _deform_conv_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """Conv's, and the offsets [N, offset_group * taps * rank, out...] and the mask
    [N, offset_group * taps, out...] cover every output's taps; the groups divide the channels."""
    checks = _weighted_window_requirements(op)
    x, weight, out = dims_of(op.input(0)), dims_of(op.input(1)), _weighted_window_dims(op, {})
    kernel = _kernel_dims(op, len(x) - 2) if x is not None else None
    if out is None or kernel is None or None in kernel or None in x or weight is None or weight[0] is None:
        return checks
    group, offset_group = op.attr("group"), op.attr("offset_group")
    checks += [(weight[0], "==", weight[0] // group * group), (x[1], "==", x[1] // offset_group * offset_group)]
    taps = _product(kernel) * offset_group
    for index, per_tap in ((2, len(kernel)), (4, 1)):
        dims = dims_of(op.input(index)) if op.input(index) is not None else None
        if dims is not None and len(dims) == len(out):
            checks += [(d, "==", want) for d, want in zip(dims, [x[0], taps * per_tap, *out[2:]])]
    return checks


def _causal_conv_dims(op: OnnxOp, index: int, memo: dict) -> list[Dim | None] | None:
    """CausalConvWithState: the output has the input's dims; the state [N, C, k - 1]."""
    dims, weight = dims_of(op.input(0)), dims_of(op.input(1))
    if index == 0 or dims is None:
        return dims
    return None if weight is None or len(weight) != 3 or weight[2] is None else [dims[0], dims[1], weight[2] - 1]


def _causal_conv_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """Weights [C, 1, k], bias [C], state [N, C, k - 1] for an input [N, C, L]."""
    x, weight = dims_of(op.input(0)), dims_of(op.input(1))
    if x is None or weight is None or len(x) != 3 or len(weight) != 3:
        return []
    wanted = [(weight, [x[1], Dim.const(1), weight[2]])]
    for index, dims in ((2, [x[1]]), (3, [x[0], x[1], None if weight[2] is None else weight[2] - 1])):
        given = dims_of(op.input(index)) if op.input(index) is not None else None
        if given is not None and len(given) == len(dims):
            wanted.append((given, dims))
    return [(d, "==", want) for given, dims in wanted for d, want in zip(given, dims)]


def _linear_attention_heads(op: OnnxOp) -> tuple[list, list, Dim, Dim] | None:
    """LinearAttention's query and value dims and head sizes d_k, d_v (from the packed widths)."""
    query, value = dims_of(op.input(0)), dims_of(op.input(2))
    q_heads, kv_heads = op.attr("q_num_heads"), op.attr("kv_num_heads")
    if query is None or value is None or len(query) != 3 or len(value) != 3 or not q_heads or not kv_heads:
        return None
    if query[2] is None or value[2] is None:
        return None
    return query, value, query[2] // q_heads, value[2] // kv_heads


def _linear_attention_dims(op: OnnxOp, index: int, memo: dict) -> list[Dim | None] | None:
    """The output [B, T, H_q * d_v]; the state [B, H_kv, d_k, d_v]."""
    heads = _linear_attention_heads(op)
    if heads is None:
        return None
    query, _, d_k, d_v = heads
    if index == 0:
        return [query[0], query[1], d_v * op.attr("q_num_heads")]
    return [query[0], Dim.const(op.attr("kv_num_heads")), d_k, d_v]


def _linear_attention_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """The widths split into heads; key [B, T, H_kv * d_k], value [B, T, .], the state
    [B, H_kv, d_k, d_v]; decay's last dim H_kv * d_k or H_kv, beta's H_kv or 1 (one
    of two: their differences' product is 0)."""
    heads = _linear_attention_heads(op)
    if heads is None:
        return []
    query, value, d_k, d_v = heads
    q_heads, kv_heads = op.attr("q_num_heads"), op.attr("kv_num_heads")
    batch, steps = query[0], query[1]
    checks = [(query[2], "==", d_k * q_heads), (value[2], "==", d_v * kv_heads)]
    wanted = {1: [batch, steps, d_k * kv_heads], 2: [batch, steps, None], 3: [batch, kv_heads, d_k, d_v]}
    widths = {4: (d_k * kv_heads, Dim.const(kv_heads)), 5: (Dim.const(kv_heads), Dim.const(1))}
    for index in range(1, 6):
        dims = dims_of(op.input(index)) if op.input(index) is not None else None
        if dims is None:
            continue
        if index in widths and len(dims) == 3:
            wide, narrow = widths[index]
            checks += [(dims[0], "==", batch), (dims[1], "==", steps)]
            if dims[2] is not None:
                checks.append(((dims[2] - wide) * (dims[2] - narrow), "==", Dim.const(0)))
        elif index in wanted and len(dims) == len(wanted[index]):
            checks += [
                (d, "==", w if isinstance(w, Dim) or w is None else Dim.const(w)) for d, w in zip(dims, wanted[index])
            ]
    return checks


def _pool_result_dims(op: OnnxOp, index: int, memo: dict) -> list[Dim | None] | None:
    """MaxPool's values and their indices have the same dims."""
    return _windowed_dims(op, memo)


def _max_unpool_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """`output_shape`, else (in - 1) * stride + kernel - pads per spatial dim."""
    operands = onnx_inputs(op)
    if len(operands) > 2 and operands[2] is not None:
        return _value_dims(2)(op, memo)
    dims, kernel = dims_of(op.input(0)), op.attr("kernel_shape")
    if dims is None or len(dims) != len(kernel) + 2:
        return None
    spatial = len(kernel)
    strides = op.attr("strides") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    sizes = [
        None if d is None else (d - 1) * strides[k] + kernel[k] - pads[k] - pads[k + spatial]
        for k, d in enumerate(dims[2:])
    ]
    return [dims[0], dims[1], *sizes]


def _col2im_blocks(op: OnnxOp, memo: dict) -> tuple[list[Dim], list[Dim]] | None:
    """Col2Im's image shape and block shape (operand values), if known."""
    image, block = symbolic_value(op.input(1), memo), symbolic_value(op.input(2), memo)
    return None if image is None or block is None else (list(image.reshape(-1)), list(block.reshape(-1)))


def _col2im_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """[N, C * prod(block), L] -> [N, C, *image_shape]."""
    dims, shapes = dims_of(op.input(0)), _col2im_blocks(op, memo)
    if dims is None or shapes is None or len(dims) != 3:
        return None
    image, block = shapes
    return [dims[0], None if dims[1] is None else dims[1] // _product(block), *image]


def _col2im_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """The channels divide into blocks; there is one column per block position."""
    dims, shapes = dims_of(op.input(0)), _col2im_blocks(op, {})
    if dims is None or shapes is None or len(dims) != 3 or None in dims:
        return []
    image, block = shapes
    spatial = len(image)
    strides = op.attr("strides") or [1] * spatial
    dilations = op.attr("dilations") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    positions = [
        (image[d] + pads[d] + pads[d + spatial] - (block[d] - 1) * dilations[d] - 1) // strides[d] + 1
        for d in range(spatial)
    ]
    per_image = _product(block)
    return [(dims[1], "==", dims[1] // per_image * per_image), (dims[2], "==", _product(positions))]


def _qlinear_matmul_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """numpy.matmul of a (operand 0) and b (operand 3)."""
    return matrix_product_dims(dims_of(op.input(0)), dims_of(op.input(3)))


def _qlinear_matmul_requirements(op: OnnxOp) -> list[tuple[Dim, str, Dim]]:
    """a's columns are b's rows; batch dims broadcast."""
    a, b = dims_of(op.input(0)), dims_of(op.input(3))
    if a is None or b is None or not a or not b:
        return []
    batch = broadcast_dims([a[:-2], b[:-2]])[1] if len(a) > 2 or len(b) > 2 else []
    return [(a[-1], "==", b[-2] if len(b) >= 2 else b[0]), *((x, "==", y) for x, y in batch)]


def _stft_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """[batch, frames, bins, 2]: frames = (length - frame_length) // step + 1, bins
    frame_length // 2 + 1 one-sided; frame_length the operand, else the window's length."""
    dims, operands = dims_of(op.input(0)), onnx_inputs(op)
    step = symbolic_value(operands[1], memo)
    if dims is None or len(dims) != 3 or dims[1] is None or step is None:
        return None
    frame_length = symbolic_value(operands[3], memo) if len(operands) > 3 and operands[3] is not None else None
    if frame_length is not None:
        length = frame_length.reshape(-1)[0]
    elif len(operands) > 2 and operands[2] is not None:
        length = dims_of(operands[2])[0]
    else:
        length = dims[1]
    if length is None:
        return None
    bins = length // 2 + 1 if op.attr("onesided") else length
    return [dims[0], (dims[1] - length) // step.reshape(-1)[0] + 1, bins, Dim.const(2)]


def _dft_dims(op: OnnxOp, memo: dict) -> list[Dim | None] | None:
    """The input's dims but along `axis` (the DFT length, halved plus one one-sided)
    and the last (2, or 1 for a one-sided inverse: a real signal)."""
    dims, operands = dims_of(op.input(0)), onnx_inputs(op)
    if dims is None or len(dims) < 2:
        return None
    if op.opset < 20:
        axis = op.attr("axis")
    elif len(operands) < 3 or operands[2] is None:
        axis = -2
    else:
        value = symbolic_value(operands[2], memo)
        axis = None if value is None else value.reshape(-1)[0].constant
    if axis is None:
        return None
    axis %= len(dims)
    inverse, onesided = bool(op.attr("inverse")), bool(op.attr("onesided"))
    given = symbolic_value(operands[1], memo) if len(operands) > 1 and operands[1] is not None else None
    if given is not None:
        length = given.reshape(-1)[0]
    elif dims[axis] is None:
        return None
    else:
        length = (dims[axis] - 1) * 2 if inverse and onesided else dims[axis]
    out = list(dims)
    out[axis] = length // 2 + 1 if onesided and not inverse else length
    out[-1] = Dim.const(1 if inverse and onesided else 2)
    return out


_SHAPE_RULES.update(
    {
        "DFT": _dft_dims,
        "DeformConv": _weighted_window_dims,
        "ConvInteger": _weighted_window_dims,
        "QLinearConv": _weighted_window_dims,
        "MaxUnpool": _max_unpool_dims,
        "Col2Im": _col2im_dims,
        "QLinearMatMul": _qlinear_matmul_dims,
        "STFT": _stft_dims,
    }
)
_RESULT_RULES.update(
    {"MaxPool": _pool_result_dims, "CausalConvWithState": _causal_conv_dims, "LinearAttention": _linear_attention_dims}
)
_REQUIREMENTS.update(
    {
        "DeformConv": _deform_conv_requirements,
        "ConvInteger": _weighted_window_requirements,
        "QLinearConv": _weighted_window_requirements,
        "Col2Im": _col2im_requirements,
        "CausalConvWithState": _causal_conv_requirements,
        "LinearAttention": _linear_attention_requirements,
        "QLinearMatMul": _qlinear_matmul_requirements,
    }
)
