"""Conv1d (constant float32 weights, any stride, length and batch known at run time or not)
as one GEMM of run-time rows per group, the audio front end's conv (wav2vec2: kernel 10
stride 5, 3/2, 2/2; a grouped positional conv of kernel 128).

The image [N, C, L] is copied channels-last, zero-padded, into segments of S = R*s
positions per image (s the stride, R = ceil((pad + L + pad) / s) >= the output length
L_out), so that output row m = n*R + t reads the K = k*C contiguous floats from (m*s)*C on:
the reduction (kernel offset j, channel c) is one run of memory, A[m, r] = xt[m*s*C + r], a
strided A whose rows are the output positions of every image together (the kernel's
run-time M = (N-1)*R + L_out). W [M_out, C, k] is packed at compile time as B [k*C, M_out]
(B panels). Between two images, R - L_out rows (about k/s) read across their boundary and
are dropped by the copy back to [N, M_out, L_out], which adds the bias. With groups, each
group gets its own channels-last copy and product (a view of a run-time buffer starts at
offset 0, so the groups cannot share one)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float32Type, f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, shape_of
from onnxc.passes.onnx_to_krnl.matmul_kernel import RUN_TIME_ROWS_GUESS, emit_matrix_product
from onnxc.passes.onnx_to_krnl.windows import SlidingWindow, sliding_windows

MAX_GROUPS = 16
"""Groups of a conv1d taken as products (each a kernel function of its own: its channels-last
copy starts at offset 0 of a buffer of its own, see the module docstring)."""
TRANSPOSE_TILE = 16
"""Positions per tile of the copies to and from channels-last (see `_transposing_nest`)."""


def lower_conv1d_as_gemm(g: GraphLowering, op: OnnxOp) -> bool:
    """Lower a float32 Conv of one spatial dim with constant weights, dilation 1 and
    constant pads, at most MAX_GROUPS groups, as in the module docstring; False if it
    does not apply (the caller lowers it otherwise)."""
    weights = constant_array(op.input(1))
    x, out = g.input(op, 0), op.results[0]
    group = op.attr("group", 1)
    if (
        weights is None
        or weights.dtype != np.float32
        or weights.ndim != 3
        or not all(isinstance(v.type.get_element_type(), Float32Type) for v in (op.input(0), out))
        or len(shape_of(x)) != 3
        or not 1 <= group <= MAX_GROUPS
        or 0 in weights.shape
        or weights.shape[0] % group
    ):
        return False
    batch, channels, length = shape_of(x)
    out_channels, group_channels, kernel = weights.shape
    bias = g.input(op, 2) if op.input(2) is not None else None
    if channels != group_channels * group or (bias is not None and shape_of(bias) != (out_channels,)):
        return False
    if op.attr("kernel_shape") not in (None, [kernel]):
        return False
    out_length = g.tensor_shape(op, out)[2]
    (window,) = sliding_windows(g, op, [length], [out_length], [kernel])
    if window.dilation != 1 or not isinstance(window.pad_begin, int) or not isinstance(window.pad_end, int):
        return False
    if 0 in (batch, length, out_length):
        return False  # an empty conv (static dims): the direct loops write nothing, as is right

    b = g.top
    rows_per_image = b.ceil_div(b.add(window.pad_begin + window.pad_end, length), window.stride)
    group_stride = b.mul(batch, rows_per_image)  # rows of A and C from one group to the next
    rows = b.add(b.mul(b.sub(batch, 1), rows_per_image), out_length)
    image = _channels_last(g, x, group, window, rows_per_image)
    group_rows = out_channels // group
    product = alloc_shaped(b, f32, [b.mul(group, group_stride), group_rows])
    a_stride = window.stride * group_channels
    for index in range(group):
        matrix = weights[index * group_rows : (index + 1) * group_rows].transpose(2, 1, 0)
        first_row = b.mul(index, group_stride)
        static = isinstance(rows, int)
        emit_matrix_product(
            g,
            op,
            image,
            image,  # unused: B is the packed constant
            product,
            (rows if static else RUN_TIME_ROWS_GUESS, group_rows, kernel * group_channels),
            (a_stride, 1),
            [first_row * a_stride, 0, first_row * group_rows] if static else [0, 0, 0],
            b_constant=matrix.reshape(kernel * group_channels, group_rows),
            rows=None if static else b.index(rows),
            first_row=None if static or index == 0 else b.index(first_row),
        )
    _channels_first(g, product, group, bias, g.result(op), rows_per_image)
    return True


def _channels_last(g: GraphLowering, x: SSAValue, group: int, window: SlidingWindow, rows_per_image: Bound) -> SSAValue:
    """x as [G*N*S, C/G]: group k's channels of image n, position p at row (k*N + n)*S + pad + p;
    zeros elsewhere (the padding, each segment's tail)."""
    b = g.top
    batch, channels, length = shape_of(x)
    group_channels = channels // group
    segment, images = b.mul(rows_per_image, window.stride), b.mul(group, batch)
    image = alloc_shaped(b, f32, [b.mul(images, segment), group_channels])
    # The positions of a segment holding no data, [pad + L, S) then [0, pad): S - L of them, cyclically.
    zero = b.constant(0.0, f32)
    (n, gap, c), fill = b.loop_nest([images, b.sub(segment, length), group_channels])
    position = fill.rem(fill.add(gap, fill.add(window.pad_begin, length)), segment)
    fill.store(zero, image, [fill.add(fill.mul(n, segment), position), c])
    (n, k, c, p), copy = _transposing_nest(b, [batch, group], length, group_channels)
    image_row = copy.mul(copy.add(copy.mul(k, batch), n), segment)
    row = copy.add(image_row, copy.add(p, window.pad_begin))
    copy.store(copy.load(x, [n, copy.add(copy.mul(k, group_channels), c), p]), image, [row, c])
    return image


def _transposing_nest(b: KernelBuilder, outer: list[Bound], positions: Bound, channels: int):
    """A nest over (outer..., channel, position) that runs along TRANSPOSE_TILE positions for
    each channel, then the next channel: a tile of rows [position, channels] stays in L1 while
    its columns are read or written one by one (a whole row per channel would stream the
    channels-last side once per channel)."""
    (*ivs, tile, c), body = b.loop_nest([*outer, b.ceil_div(positions, TRANSPOSE_TILE), channels])
    start = body.mul(tile, TRANSPOSE_TILE)
    (p,), inner = body.for_nest([(start, body.min(body.add(start, TRANSPOSE_TILE), positions))])
    return (*ivs, c, p), inner


def _channels_first(
    g: GraphLowering, product: SSAValue, group: int, bias: SSAValue | None, out: SSAValue, rows_per_image: Bound
) -> None:
    """out[n, k*M_g + o, t] = product[(k*N + n)*R + t, o] (+ bias[k*M_g + o]): each group's
    rows of each image's output positions, back to channels first."""
    batch, _, out_length = shape_of(out)
    group_rows = shape_of(product)[1]
    (n, k, o, t), body = _transposing_nest(g.top, [batch, group], out_length, group_rows)
    channel = body.add(body.mul(k, group_rows), o)
    row = body.add(body.mul(body.add(body.mul(k, batch), n), rows_per_image), t)
    value = body.load(product, [row, o])
    if bias is not None:
        value = body.add(value, body.load(bias, [channel]))
    body.store(value, out, [n, channel, t])
