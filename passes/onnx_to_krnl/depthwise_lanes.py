"""Depthwise convs over small images, and strided ones, with 16 channels in the vector lanes.

Along the rows of an NCHW plane, a depthwise conv over 14x14 or 7x7 images leaves much of its
work to the remainders of short rows, and a strided one gathers its reads or copies its image
into phase planes, a copy that cost more than the conv (240 channels of 28x28 at stride 2:
0.100 ms of 0.130). Here, as in onnxruntime's NCHWc kernels, each block of 16 channels (8 where
the channel count is not a multiple of 16) is transposed once into a zero-padded image of
[rows][columns][16] pixels, so that every tap of every output is one vector multiply-add of a
contiguous pixel by that tap's weights for the 16 channels (packed at compile time), at any
stride, without padding branches or remainders; a block's outputs are then transposed back
into the NCHW output. Each output sums its taps in `direct_conv`'s order, by fused
multiply-adds, from its bias, as the shifted-rows conv does. The transposes are loops whose
lane loop LLVM vectorizes as gathers (the other orders became scatters, 3x slower); they cost
most of the time, so larger images keep the NCHW paths.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import Float32Type, f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, reshaped_view
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, shape_of
from onnxc.passes.onnx_to_krnl.conv_epilogue import Epilogue
from onnxc.passes.onnx_to_krnl.matmul_kernel import weight_global
from onnxc.passes.onnx_to_krnl.windows import SlidingWindow

LANES = (16, 8)
"""Channels per block, the first that divides the channel count: AVX-512's vector, else AVX2's."""
MAX_PIXELS = 784
"""Stride-1 convs take the lanes up to this many input pixels (28x28), one thread, against the
shifted rows: 1152 channels of 7x7, 3x3, 0.067 -> 0.030 ms; 192 of 20x20, 5x5, 0.100 -> 0.069;
144 of 28x28, 3x3, 0.090 -> 0.076; 120 of 28x28, 5x5, 0.094 -> 0.097; not 72 of 56x56, 3x3,
0.134 -> 0.183 ..."""
MAX_STRIDED_PIXELS = 3136
"""... strided ones up to this many (56x56), those not read straight from x (see conv.py's
`_reads_strided`: 144 channels of 56x56, 3x3 stride 2, straight 0.094, in lanes 0.216 ms):
72 of 56x56, 5x5 stride 2, 0.197 -> 0.116; 240 of 28x28, 3x3, 0.142 -> 0.071."""
ROW_PIXELS = 16
"""Pixels of a row transposed per iteration of the lane loop (each a gather of 16 channels)."""
ROW_OUTPUTS = 8
"""Outputs of a row computed together, up to this many (the largest divisor of the row's
length): each input vector they share is loaded once, each weight vector once for all."""


def lanes_of(g: GraphLowering, op: OnnxOp, windows: list[SlidingWindow]) -> int | None:
    """The channels per block of a depthwise conv that runs faster in the lanes, else None:
    static sizes but the batch's, constant weights (and bias), one output channel per input channel, a channel
    count that is a multiple of 8, and an image of at most MAX_PIXELS (MAX_STRIDED_PIXELS)."""
    x = op.input(0)
    weights = constant_array(op.input(1))
    bias = op.input(2)
    shape = tuple(x.type.get_shape())
    if (
        weights is None
        or (bias is not None and constant_array(bias) is None)
        or not isinstance(x.type.get_element_type(), Float32Type)
        or len(shape) != 4
        or any(d < 0 for d in shape[1:])
        or not all(w.static for w in windows)
        or weights.shape[:2] != (shape[1], 1)
        or op.attr("group") != shape[1]
    ):
        return None
    strided = any(w.stride > 1 for w in windows)
    if shape[2] * shape[3] > (MAX_STRIDED_PIXELS if strided else MAX_PIXELS):
        return None
    return next((lanes for lanes in LANES if shape[1] % lanes == 0), None)


def depthwise_in_lanes(
    g: GraphLowering,
    op: OnnxOp,
    x: SSAValue,
    out: SSAValue,
    windows: list[SlidingWindow],
    lanes: int,
    epilogue: Epilogue | None,
) -> None:
    """The depthwise conv `op` of x into `out` (see the module docstring), `epilogue` applied to
    each sum before its store. One nest over (block of channels, image), split over threads by
    blocks (a batch of run-time size is the inner loop, so that a batch of 1 splits too): the
    block's padded image and its outputs in lanes are buffers of their own."""
    batch, channels, height, width = shape_of(x)
    window_y, window_x = windows
    weights = constant_array(op.input(1))
    bias = constant_array(op.input(2)) if op.input(2) is not None else np.zeros(channels, np.float32)
    blocks, (kernel_h, kernel_w) = channels // lanes, weights.shape[2:]
    rows, columns = ((w.output_size - 1) * w.stride + (w.kernel - 1) * w.dilation + 1 for w in windows)
    pixels = window_y.output_size * window_x.output_size
    packed = weights.reshape(blocks, lanes, kernel_h * kernel_w).transpose(0, 2, 1)
    tap_weights = weight_global(g, op, packed, "depthwise lanes")
    biases = weight_global(g, op, bias.reshape(blocks, lanes), "depthwise lanes bias")
    padded = alloc_shaped(g.top, f32, [batch, blocks, rows * columns * lanes])
    sums = alloc_shaped(g.top, f32, [batch, blocks, pixels * lanes])
    planes = reshaped_view(g.top, x, [batch, blocks, lanes, height, width])
    out_planes = reshaped_view(g.top, out, [batch, blocks, lanes, pixels])
    zero = g.top.constant(0.0, f32)
    (block, n), body = g.top.loop_nest([blocks, batch])
    image = _Image(n, block, padded, lanes, columns)
    image.transpose_in(body, planes, windows, rows, zero)
    _sums(body, image, sums, tap_weights, biases, windows, (kernel_h, kernel_w), epilogue)
    (pixel, lane), point = body.for_nest([(0, pixels), (0, lanes)])
    value = point.load(sums, [n, block, point.add(point.mul(pixel, lanes), lane)])
    point.store(value, out_planes, [n, block, lane, pixel])


class _Image:
    """A block's zero-padded image in lanes: pixel (r, c) of lane l at (r*columns + c)*lanes + l."""

    def __init__(self, n: SSAValue, block: SSAValue, buffer: SSAValue, lanes: int, columns: int):
        self.n, self.block, self.buffer, self.lanes, self.columns = n, block, buffer, lanes, columns

    def at(self, b: KernelBuilder, row: Bound, column: Bound, lane: Bound) -> list[Bound]:
        return [self.n, self.block, b.add(b.mul(b.add(b.mul(row, self.columns), column), self.lanes), lane)]

    def transpose_in(
        self, body: KernelBuilder, planes: SSAValue, windows: list[SlidingWindow], rows: int, zero: SSAValue
    ) -> None:
        """The padding rows and columns zeroed, then the image's pixels (those the windows read)
        copied in, ROW_PIXELS per iteration of the (vectorized) lane loop."""
        window_y, window_x = windows
        _, _, _, height, width = shape_of(planes)
        top, left, stride = window_y.pad_begin, window_x.pad_begin, self.columns * self.lanes
        last_row, last_column = min(height, rows - top), min(width, self.columns - left)
        for low, high in ((0, top * stride), ((top + last_row) * stride, rows * stride)):
            if low < high:
                (q,), fill = body.for_nest([(low, high)])
                fill.store(zero, self.buffer, [self.n, self.block, q])
        for low, high in ((0, left), (left + last_column, self.columns)):
            if low < high:
                (y, q), fill = body.for_nest([(top, top + last_row), (low * self.lanes, high * self.lanes)])
                fill.store(zero, self.buffer, [self.n, self.block, fill.add(fill.mul(y, stride), q)])
        run = min(ROW_PIXELS, last_column)
        whole = last_column - last_column % run
        for first, end, step in ((0, whole, run), (whole, last_column, last_column - whole)):
            if first == end:
                continue
            (y, chunk, lane), copy = body.for_nest([(0, last_row), (0, (end - first) // step), (0, self.lanes)])
            for j in range(step):
                column = copy.add(copy.add(copy.mul(chunk, step), first), j)
                value = copy.load(planes, [self.n, self.block, lane, y, column])
                copy.store(value, self.buffer, self.at(copy, copy.add(y, top), copy.add(column, left), lane))


def _sums(
    body: KernelBuilder,
    image: _Image,
    sums: SSAValue,
    tap_weights: SSAValue,
    biases: SSAValue,
    windows: list[SlidingWindow],
    kernel: tuple[int, int],
    epilogue: Epilogue | None,
) -> None:
    """Each output of the block, `run` of a row at a time, in lanes into `sums` (pixel-major)."""
    window_y, window_x = windows
    (kernel_h, kernel_w), out_w = kernel, window_x.output_size
    run = max(d for d in range(1, ROW_OUTPUTS + 1) if out_w % d == 0)
    (oy, part, lane), point = body.for_nest([(0, window_y.output_size), (0, out_w // run), (0, image.lanes)])
    first = point.mul(part, run)
    totals = [point.load(biases, [image.block, lane])] * run
    for ky in range(kernel_h):
        row = point.add(point.mul(oy, window_y.stride), ky * window_y.dilation)
        reads: dict[int, SSAValue] = {}
        for r in range(run):
            for kx in range(kernel_w):
                offset = r * window_x.stride + kx * window_x.dilation
                if offset not in reads:
                    column = point.add(point.mul(first, window_x.stride), offset)
                    reads[offset] = point.load(image.buffer, image.at(point, row, column, lane))
        for kx in range(kernel_w):
            weight = point.load(tap_weights, [image.block, ky * kernel_w + kx, lane])
            totals = [
                point.math(math.FmaOp, reads[r * window_x.stride + kx * window_x.dilation], weight, total)
                for r, total in enumerate(totals)
            ]
    channel = point.add(point.mul(image.block, image.lanes), lane) if epilogue is not None else None
    for r, total in enumerate(totals):
        value = epilogue(point, total, channel) if epilogue is not None else total
        pixel = point.add(point.add(point.mul(oy, out_w), first), r)
        point.store(value, sums, [image.n, image.block, point.add(point.mul(pixel, image.lanes), lane)])
