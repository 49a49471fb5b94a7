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
from onnxc.passes.onnx_to_krnl.windows import SlidingWindow, statically_empty

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
MAX_ROW = 32
"""For an image of run-time size, stride-1 convs take the lanes where output rows are at most this
long (the shifted rows' short rows; strided ones wherever conv.py does not read them straight):
two kernels per conv, not four (a MobileNetV2 of free height and width: 15 s to compile with
four, 12 with two, 8 once the branches' kernels are shared)."""
ROW_PIXELS = 16
"""Pixels of a row transposed per iteration of the lane loop (each a gather of 16 channels)."""
ROW_OUTPUTS = 8
"""Outputs of a row computed together, up to this many (the largest divisor of the row's
length): each input vector they share is loaded once, each weight vector once for all."""


def lanes_of(g: GraphLowering, op: OnnxOp, windows: list[SlidingWindow]) -> int | None:
    """The channels per block of a depthwise conv the lanes can compute, else None: constant
    weights (and bias), one output channel per input channel, a static channel count that is a
    multiple of 8, a constant kernel and begin padding (sizes may be known at run time only;
    whether the image is small enough for the lanes is `fits_lanes`)."""
    x = op.input(0)
    weights = constant_array(op.input(1))
    bias = op.input(2)
    shape = tuple(x.type.get_shape())
    if (
        weights is None
        or (bias is not None and constant_array(bias) is None)
        or not isinstance(x.type.get_element_type(), Float32Type)
        or len(shape) != 4
        or shape[1] < 0
        or not all(w.constant_geometry for w in windows)
        or weights.shape[:2] != (shape[1], 1)
        or op.attr("group") != shape[1]
    ):
        return None
    return next((lanes for lanes in LANES if shape[1] % lanes == 0), None)


def fits_lanes(b: KernelBuilder, x: SSAValue, windows: list[SlidingWindow]) -> bool | SSAValue:
    """Whether x's image has at most MAX_PIXELS (MAX_STRIDED_PIXELS for strided windows), for
    a size known at run time only a condition decided then (stride 1: see MAX_ROW)."""
    height, width = shape_of(x)[2:]
    strided = any(w.stride > 1 for w in windows)
    pixels = b.mul(height, width)
    if isinstance(pixels, int):
        return pixels <= (MAX_STRIDED_PIXELS if strided else MAX_PIXELS)
    if strided:
        return b.compare_index("sle", pixels, MAX_STRIDED_PIXELS)
    return b.compare_index("sle", windows[1].output_size, MAX_ROW)


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
    block's padded image and its outputs in lanes are buffers of their own, of the size of
    an image known at run time only too."""
    batch, channels, height, width = shape_of(x)
    window_y, window_x = windows
    weights = constant_array(op.input(1))
    bias = constant_array(op.input(2)) if op.input(2) is not None else np.zeros(channels, np.float32)
    blocks, (kernel_h, kernel_w) = channels // lanes, weights.shape[2:]
    b = g.top
    rows, columns = (
        b.max(b.add(b.mul(b.sub(w.output_size, 1), w.stride), (w.kernel - 1) * w.dilation + 1), 0) for w in windows
    )
    pixels = b.mul(window_y.output_size, window_x.output_size)
    packed = weights.reshape(blocks, lanes, kernel_h * kernel_w).transpose(0, 2, 1)
    tap_weights = weight_global(g, op, packed, "depthwise lanes")
    biases = weight_global(g, op, bias.reshape(blocks, lanes), "depthwise lanes bias")
    padded = alloc_shaped(b, f32, [batch, blocks, b.mul(b.mul(rows, columns), lanes)])
    sums = alloc_shaped(b, f32, [batch, blocks, b.mul(pixels, lanes)])
    planes = reshaped_view(g.top, x, [batch, blocks, lanes, height, width])
    out_planes = reshaped_view(g.top, out, [batch, blocks, lanes, pixels])
    zero = g.top.constant(0.0, f32)
    (block, n), body = g.top.loop_nest([blocks, batch])
    image = _Image(n, block, padded, lanes, columns)
    image.transpose_in(body, planes, windows, rows, zero)
    for span in _row_spans(body, window_x.output_size):
        _row_runs(body, image, sums, tap_weights, biases, windows, (kernel_h, kernel_w), epilogue, span)
    (pixel, lane), point = body.for_nest([(0, pixels), (0, lanes)])
    value = point.load(sums, [n, block, point.add(point.mul(pixel, lanes), lane)])
    point.store(value, out_planes, [n, block, lane, pixel])


class _Image:
    """A block's zero-padded image in lanes: pixel (r, c) of lane l at (r*columns + c)*lanes + l."""

    def __init__(self, n: SSAValue, block: SSAValue, buffer: SSAValue, lanes: int, columns: Bound):
        self.n, self.block, self.buffer, self.lanes, self.columns = n, block, buffer, lanes, columns

    def at(self, b: KernelBuilder, row: Bound, column: Bound, lane: Bound) -> list[Bound]:
        return [self.n, self.block, b.add(b.mul(b.add(b.mul(row, self.columns), column), self.lanes), lane)]

    def transpose_in(
        self, body: KernelBuilder, planes: SSAValue, windows: list[SlidingWindow], rows: Bound, zero: SSAValue
    ) -> None:
        """The padding rows and columns zeroed, then the image's pixels (those the windows read)
        copied in, ROW_PIXELS per iteration of the (vectorized) lane loop."""
        window_y, window_x = windows
        _, _, _, height, width = shape_of(planes)
        b, lanes = body, self.lanes
        top, left, stride = window_y.pad_begin, window_x.pad_begin, b.mul(self.columns, lanes)
        last_row = b.max(b.min(height, b.sub(rows, top)), 0)
        last_column = b.max(b.min(width, b.sub(self.columns, left)), 0)
        # Padding clipped to the buffer: an image of run-time size may have fewer rows (columns)
        # than the begin padding (no outputs: the buffer is empty).
        top_rows, left_columns = b.min(top, rows), b.min(left, self.columns)
        for span in ((0, b.mul(top_rows, stride)), (b.mul(b.add(top, last_row), stride), b.mul(rows, stride))):
            if not statically_empty(span):
                (q,), fill = b.for_nest([span])
                fill.store(zero, self.buffer, [self.n, self.block, q])
        for low, high in ((0, left_columns), (b.add(left, last_column), self.columns)):
            if not statically_empty((low, high)):
                (y, q), fill = b.for_nest([(top, b.add(top, last_row)), (b.mul(low, lanes), b.mul(high, lanes))])
                fill.store(zero, self.buffer, [self.n, self.block, fill.add(fill.mul(y, stride), q)])
        for first, end, step in _chunks(b, last_column, ROW_PIXELS):
            (y, chunk, lane), copy = b.for_nest([(0, last_row), (0, b.div(b.sub(end, first), step)), (0, lanes)])
            for j in range(step):
                column = copy.add(copy.add(copy.mul(chunk, step), first), j)
                value = copy.load(planes, [self.n, self.block, lane, y, column])
                copy.store(value, self.buffer, self.at(copy, copy.add(y, top), copy.add(column, left), lane))


def _chunks(b: KernelBuilder, length: Bound, most: int) -> list[tuple[Bound, Bound, int]]:
    """[0, length) as runs (first, end, step) of chunks of `step` elements each: for a static
    length, chunks of `most` then one of the rest; for a length known at run time only, chunks
    of `most` then single elements (chunks of each power of two below `most` besides ran no
    faster in a MobileNetV2 of free height and width, and nearly doubled its compile time)."""
    if isinstance(length, int):
        run = min(most, length)
        whole = length - length % run if run else 0
        spans = [(0, whole, run), (whole, length, length - whole)]
    else:
        whole = b.sub(length, b.rem(length, most))
        spans = [(0, whole, most), (whole, length, 1)]
    return [(first, end, step) for first, end, step in spans if step and not statically_empty((first, end))]


def _row_spans(b: KernelBuilder, out_w: Bound) -> list[tuple[Bound, Bound, int]]:
    """The output columns of a row as spans (first, end, run) computed `run` at a time: the
    largest divisor of a static row up to ROW_OUTPUTS; along a row of run-time length, runs of
    ROW_OUTPUTS, then single outputs."""
    if isinstance(out_w, int):
        return [(0, out_w, max(d for d in range(1, ROW_OUTPUTS + 1) if out_w % d == 0))]
    return _chunks(b, out_w, ROW_OUTPUTS)


def _row_runs(
    body: KernelBuilder,
    image: _Image,
    sums: SSAValue,
    tap_weights: SSAValue,
    biases: SSAValue,
    windows: list[SlidingWindow],
    kernel: tuple[int, int],
    epilogue: Epilogue | None,
    span: tuple[Bound, Bound, int],
) -> None:
    """The outputs of columns [first, end) of every row, `run` at a time, in lanes into `sums`
    (pixel-major): each input vector they share loaded once, each tap's weights once for all."""
    window_y, window_x = windows
    (kernel_h, kernel_w), out_w = kernel, window_x.output_size
    start, end, run = span
    ranges = [(0, window_y.output_size), (0, body.div(body.sub(end, start), run)), (0, image.lanes)]
    (oy, part, lane), point = body.for_nest(ranges)
    first = point.add(point.mul(part, run), start)
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
