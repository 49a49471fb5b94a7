"""Depthwise QLinearConv and ConvInteger with constant 8-bit weights on the float depthwise conv.

A depthwise conv (MobileNet's 3x3 between the 1x1 convs) has one input channel per output:
no reduction for the int8 GEMM kernel to work on, and the generic loop nest of
quantization.py takes most of a quantized MobileNet's time. Its integer sums are exact in
float32 where every partial sum stays below 2^24: x, zx and (w - zw) are at most 255 in
magnitude, so a bias less zx * sum(w - zw) and KH*KW products stay within
2*KH*KW*255*255 plus the largest bias, below 2^24 (checked at compile time; any 3x3 to
11x11 kernel with an ordinary bias). So the conv runs as the float depthwise conv of
conv.py (shifted rows, vectorized along them) over x as float32, read from its planes
padded with zx (one pass over x: converted, padded, split into phase planes for a
stride), with the weights less their zero points and the bias less zx * sum(w - zw)
made float32 at compile time (a run-time zero point's bias by a loop over the channels);
its float results are the int32 sums exactly. QLinearConv
requantizes them as the conv stores them (short rows: into its wide rows of bytes, then
compacted), as the int8 kernel does (float32 multiplier per channel, round half to even,
plus the zero point, clamped; a following Clip joins the clamp): what onnxruntime
computes, bit for bit; ConvInteger stores them as int32.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import MemRefType, f32, i32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, has_static_shape, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.conv import ROW_BY_ROW_MAX_TAPS, SHORT_ROW, VECTOR_COLUMNS, shifted_grouped_conv
from onnxc.passes.onnx_to_krnl.quantized_gemm import epilogue_clamp, requantization, scalar_zero_point, zero_value
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, sliding_windows

EXACT_FLOAT32 = 2**24
"""Integers up to this magnitude are exact in float32, and so are sums that stay below it."""


def _depthwise_weights(g: GraphLowering, op: OnnxOp, w_index: int, bias: np.ndarray | None) -> np.ndarray | None:
    """The constant 8-bit weights [M, 1, KH, KW] of a 2-D depthwise conv of a batch-1 image of
    static shape less their (constant) zero points, as float32, where its sums are exact in
    float32; else None."""
    x_value, weights = op.input(0), constant_array(op.input(w_index))
    zero_value_ = op.input(w_index + 2)
    zeros = constant_array(zero_value_) if zero_value_ is not None else np.zeros(1, np.int8)
    if weights is None or weights.dtype not in (np.int8, np.uint8) or weights.ndim != 4 or zeros is None:
        return None
    if not has_static_shape(x_value) or not has_static_shape(op.results[0]):
        return None
    channels = shape_of(g.buffers[x_value])[1]
    out_channels, group_channels, kernel_h, kernel_w = weights.shape
    if op.attr("group", 1) != channels or group_channels != 1 or out_channels != channels or channels == 1:
        return None
    if zeros.size not in (1, out_channels) or shape_of(g.buffers[x_value])[0] != 1:
        return None
    less_zero = weights.astype(np.int64) - zeros.astype(np.int64).reshape(-1, 1, 1, 1)
    largest_bias = 0 if bias is None else int(np.abs(bias.astype(np.int64)).max(initial=0))
    if 2 * kernel_h * kernel_w * 255 * 255 + largest_bias >= EXACT_FLOAT32:
        return None
    return less_zero.astype(np.float32)


def _shifted_rows(g: GraphLowering, op: OnnxOp, kernel: tuple[int, int]) -> ShiftedRows | None:
    out_shape = tuple(op.results[0].type.get_shape())
    height, width = shape_of(g.buffers[op.input(0)])[2:]
    windows = sliding_windows(g, op, (height, width), out_shape[2:], kernel)
    return ShiftedRows.of(windows, g.top, strided=True)


def lower_qlinear_depthwise(g: GraphLowering, op: OnnxOp) -> bool:
    """QLinearConv of a depthwise conv (one x zero point and scale, constant weights) on
    the float depthwise conv, requantized as its sums are stored."""
    bias = constant_array(op.input(8)) if op.input(8) is not None else None
    if op.input(8) is not None and (bias is None or bias.dtype != np.int32):
        return False
    weights = _depthwise_weights(g, op, 3, bias)
    if weights is None:
        return False
    parameters = requantization(op, weights.shape[0], 1, 4)
    shifted = _shifted_rows(g, op, weights.shape[2:]) if parameters is not None else None
    x_zero = scalar_zero_point(g, op, 2)
    if shifted is None or x_zero is None:
        return False
    multipliers, y_zero, _ = parameters
    last, (low, high) = epilogue_clamp(g, op)
    out = g.result(last)
    g.alias(op.results[0], out)
    table = weight_buffer(g, op, multipliers, f32, f"{op.node_name or 'qlinearconv'}_multipliers")
    element = out.type.get_element_type()

    def requantized(b: KernelBuilder, total: SSAValue, channel: SSAValue) -> SSAValue:
        scaled = b.mul(total, b.load(table, [channel]))
        value = b.add(b.math(math.RoundEvenOp, scaled), b.constant(float(y_zero), f32))
        value = b.min(b.max(value, b.constant(float(low), f32)), b.constant(float(high), f32))
        return b.convert(b.convert(value, i32), element)

    _depthwise_conv(g, op, weights, bias, x_zero, shifted, out, requantized)
    return True


def lower_conv_integer_depthwise(g: GraphLowering, op: OnnxOp, out: SSAValue) -> bool:
    """ConvInteger of a depthwise conv (one x zero point, constant weights) on the float
    depthwise conv, its exact sums stored into the int32 `out`."""
    weights, x_zero = _depthwise_weights(g, op, 1, None), scalar_zero_point(g, op, 2)
    shifted = _shifted_rows(g, op, weights.shape[2:]) if weights is not None and x_zero is not None else None
    if shifted is None:
        return False
    _depthwise_conv(g, op, weights, None, x_zero, shifted, out, lambda b, total, _: b.convert(total, i32))
    return True


def _depthwise_conv(
    g, op, weights: np.ndarray, bias: np.ndarray | None, x_zero, shifted: ShiftedRows, out: SSAValue, epilogue
) -> None:
    """The depthwise conv's int32 sums (bias included), as float32, each through `epilogue`
    into `out` [1, M, OH, OW], in the conv's store. The conv reads x's values as they are,
    from planes padded with the zero point, and the bias absorbs the zero point:
    sum (x - zx) * w = sum x * w - zx * sum w, every tap included (a padded one reads zx);
    that bias is made at compile time, or for a zero point known at run time only
    (DynamicQuantizeLinear's) by a loop over the channels."""
    x = g.buffers[op.input(0)]
    name = op.node_name or op.OP_TYPE.lower()
    zero = g.top.convert(zero_value(g.top, x_zero, x.type.get_element_type()), f32)
    planes = shifted.planes(g, x, VECTOR_COLUMNS - 1, f32, zero)
    weight_values = weight_buffer(g, op, weights, f32, f"{name}_weights")
    weight_sums = weights.sum(axis=(1, 2, 3)).astype(np.int64)
    base = np.zeros(weights.shape[0], np.int64) if bias is None else bias.astype(np.int64)
    if isinstance(x_zero, int):
        bias_values = weight_buffer(g, op, (base - x_zero * weight_sums).astype(np.float32), f32, f"{name}_bias")
    else:
        sums = weight_buffer(g, op, weight_sums.astype(np.float32), f32, f"{name}_weight_sums")
        bases = weight_buffer(g, op, base.astype(np.float32), f32, f"{name}_bias")
        bias_values = g.top.alloc(MemRefType(f32, [weights.shape[0]]))
        (channel,), body = g.top.loop_nest([weights.shape[0]])
        correction = body.mul(zero, body.load(sums, [channel]))
        body.store(body.sub(body.load(bases, [channel]), correction), bias_values, [channel])
    taps = weights.shape[2] * weights.shape[3]
    by_rows = shifted.window_x.output_size > SHORT_ROW and taps <= ROW_BY_ROW_MAX_TAPS  # as conv.py chooses
    shifted_grouped_conv(g, planes, weight_values, bias_values, out, shifted, by_rows=by_rows, epilogue=epilogue)
