"""Depthwise QLinearConv and ConvInteger with constant 8-bit weights, widened to float32.

A depthwise conv (MobileNet's 3x3 between the 1x1 convs) has one input channel per output:
no reduction for the int8 GEMM kernel to work on, and the generic loop nest of
quantization.py takes most of a quantized MobileNet's time. Its integer sums are exact in
float32 where every partial sum stays below 2^24: x, zx and (w - zw) are at most 255 in
magnitude, so a bias less zx * sum(w - zw) and KH*KW products stay within
2*KH*KW*255*255 plus the largest bias, below 2^24 (checked at compile time; any 3x3 to
11x11 kernel with an ordinary bias). So the conv runs in float32 on x's bytes, read from
planes of bytes padded with zx (phase planes for a stride) and widened to float as each is
read, with the weights less their zero points and the bias less zx * sum(w - zw) made
float32 at compile time (a run-time zero point's bias by a loop over the channels); its
float results are the int32 sums exactly. QLinearConv requantizes them as they are stored,
as the int8 kernel does (float32 multiplier per channel, round half to even, plus the zero
point, clamped; a following Clip joins the clamp): what onnxruntime computes, bit for bit;
ConvInteger stores them as int32.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import MemRefType, f32, i32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, has_static_shape, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.quantized_gemm import epilogue_clamp, requantization, scalar_zero_point, zero_value
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, sliding_windows

VECTOR_COLUMNS = 16
"""Columns of the widest target's vectors: each channel's loop runs over a multiple of them (the
planes' slack), rather than leaving a remainder of up to 15 to scalar code (14x14 outputs: 222
columns, 14 of them scalar, as long as the 208 in vectors)."""
ROW_BAND = 4
"""Output rows a step of the conv computes (rows of 16 columns or more), each row of bytes read
widened once for all: 3x3, 4 rows, 18 widened vectors for 36 multiply-adds rather than 36."""
MAX_BAND_WASTE = 1.25
"""Bands of rows step along a row in whole vectors: padded rows of 58 take 64 columns, of 18
(16x16 outputs) 32, the bands' sharing (about 1.35x fewer operations) lost to computing 1.8x
the positions: such rows go along all of them at once (512 channels at 16x16: 100 -> 91 us)."""
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
        lowest, highest = b.constant(float(low), f32), b.constant(float(high), f32)
        value = b.select(b.compare("gt", value, lowest), value, lowest)  # vmaxps, vminps: value is no NaN
        value = b.select(b.compare("lt", value, highest), value, highest)
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
    into `out` [1, M, OH, OW]. x is padded with its zero point into planes of bytes (phase
    planes for a stride, see ShiftedRows), and the bias absorbs the zero point: sum (x - zx)
    * w = sum x * w - zx * sum w, every tap included (a padded one reads zx); that bias is
    made at compile time, or for a zero point known at run time only (DynamicQuantizeLinear's)
    by a loop over the channels. One nest then runs along each channel's padded rows in bands
    of ROW_BAND output rows (rows whose vectors would waste more than MAX_BAND_WASTE: along
    all of them at once), each
    distinct run of bytes read widened to float once for the band, each tap a fused
    multiply-add, over a multiple of 16 columns; the sums requantized into wide rows of bytes,
    compacted after. (Its positions are those of the planes, flat: a step that runs past a
    row's end computes the next row's first positions, as that row's own step does.) Float
    planes (x converted once, 4 bytes per padded pixel) made the conv bound by memory: 96
    channels at 112x112, stride 2: 5 MB of planes, 360 us to write, 170 to read."""
    x = g.buffers[op.input(0)]
    name = op.node_name or op.OP_TYPE.lower()
    zero = zero_value(g.top, x_zero, x.type.get_element_type())
    channels, _, kernel_h, kernel_w = weights.shape
    weight_values = weight_buffer(g, op, weights.reshape(channels, -1), f32, f"{name}_weights")
    weight_sums = weights.sum(axis=(1, 2, 3)).astype(np.int64)
    base = np.zeros(channels, np.int64) if bias is None else bias.astype(np.int64)
    if isinstance(x_zero, int):
        bias_values = weight_buffer(g, op, (base - x_zero * weight_sums).astype(np.float32), f32, f"{name}_bias")
    else:
        sums = weight_buffer(g, op, weight_sums.astype(np.float32), f32, f"{name}_weight_sums")
        bases = weight_buffer(g, op, base.astype(np.float32), f32, f"{name}_bias")
        bias_values, zero_float = g.top.alloc(MemRefType(f32, [channels])), g.top.convert(zero, f32)
        (channel,), body = g.top.loop_nest([channels])
        correction = body.mul(zero_float, body.load(sums, [channel]))
        body.store(body.sub(body.load(bases, [channel]), correction), bias_values, [channel])
    offsets = [shifted.offset(g.top, ky, kx) for ky in range(kernel_h) for kx in range(kernel_w)]
    width, rows = shifted.width, shifted.window_y.output_size
    if _vector_multiple(width) <= MAX_BAND_WASTE * width:  # bands of rows, each step along a row
        band, bands, run = ROW_BAND, -(-rows // ROW_BAND), _vector_multiple(width)
    else:  # rows a vector would waste much of: along all of them at once
        band, bands, run = 1, 1, _vector_multiple(shifted.columns)
    extent = (bands * band - 1) * width + run  # positions computed, past the last ones read
    planes = shifted.planes(g, x, max(0, extent + max(offsets) - shifted.phases * shifted.height * width), pad=zero)
    wide = g.top.alloc(MemRefType(out.type.get_element_type(), [1, channels, extent]))
    (channel, first, j), body = g.top.loop_nest([channels, bands, run])
    start = body.add(body.mul(first, band * width), j)
    bytes_ = {}  # each distinct position read once, widened once, for all the rows of the band
    totals = [body.load(bias_values, [channel]) for _ in range(band)]
    for tap, offset in enumerate(offsets):
        weight = body.load(weight_values, [channel, tap])
        for r in range(band):
            at = offset + r * width
            if at not in bytes_:
                bytes_[at] = body.convert(body.load(planes, [0, channel, body.add(start, at)]), f32)
            totals[r] = body.math(math.FmaOp, bytes_[at], weight, totals[r])
    for r, total in enumerate(totals):
        body.store(epilogue(body, total, channel), wide, [0, channel, body.add(start, r * width)])
    shifted.compact(g, wide, out)


def _vector_multiple(count: int) -> int:
    return -(-count // VECTOR_COLUMNS) * VECTOR_COLUMNS
