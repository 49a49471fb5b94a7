"""DeformConv: a convolution whose every kernel tap reads the input at its
regular position plus a learned (fractional) offset, sampled bilinearly with
zeros outside the input (GridSample's linear taps with aligned corners), and
optionally scaled by a mask."""

from __future__ import annotations

import itertools
import math as pymath

from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, linearize, lowers, shape_of
from onnxc.passes.onnx_to_krnl.grid_sample import SamplingAxis, compute_type
from onnxc.passes.onnx_to_krnl.windows import sliding_windows


@lowers("DeformConv")
def lower_deform_conv(g: GraphLowering, op: OnnxOp) -> None:
    """out[n, m, o...] = bias[m] + sum over the group's input channels c and kernel
    offsets k of w[m, c, k] * mask[n, (og, k), o] * x[n, c] sampled at
    o * stride - pad + k * dilation + offset[n, (og, k, d), o], og the offset group of c."""
    x, weights, offsets, bias, mask = (g.input(op, k) for k in range(5))
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    out = g.result(op)
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    out_channels, group_channels, *kernel = shape_of(weights)
    rank, taps = len(kernel), pymath.prod(kernel)
    group, offset_group = op.attr("group"), op.attr("offset_group")
    if (
        not input_sizes
        or channels != group_channels * group
        or out_channels % group
        or channels % offset_group
        or shape_of(offsets) != (batch, offset_group * taps * rank, *out_shape[2:])
        or (mask is not None and shape_of(mask) != (batch, offset_group * taps, *out_shape[2:]))
    ):
        raise g.shape_error(
            op,
            f"input {list(shape_of(x))}, weights {list(shape_of(weights))}, offsets {list(shape_of(offsets))}, "
            f"group {group}, offset_group {offset_group}",
        )
    windows = sliding_windows(g, op, input_sizes, out_shape[2:], kernel)
    compute = compute_type(element)
    axes = [SamplingAxis(g.top, size, True, "zeros", compute) for size in input_sizes]

    ivs, body = g.top.loop_nest(out_shape)
    n, m, *position = ivs
    first_channel = 0 if group == 1 else body.mul(body.div(m, out_channels // group), group_channels)
    starts = [w.start(body, o) for w, o in zip(windows, position)]

    def tap(b: KernelBuilder, loop_ivs: list[Bound], acc: SSAValue) -> SSAValue:
        c, *k = loop_ivs
        channel = b.add(first_channel, c)
        kernel_offset = linearize(b, k, kernel)
        group_tap = b.add(b.mul(b.div(channel, channels // offset_group), taps), kernel_offset)
        samples = []
        for d, (window, axis) in enumerate(zip(windows, axes)):
            shift = b.convert(b.load(offsets, [n, b.add(b.mul(group_tap, rank), d), *position]), compute)
            regular = b.index_to_float(b.index(window.position(b, starts[d], k[d])), compute)
            samples.append(axis.taps(b, b.add(regular, shift), "linear"))
        value = None
        for combination in itertools.product(*samples):
            pixel = b.convert(b.load(x, [n, channel, *(t.index for t in combination)]), compute)
            inside = combination[0].inside
            for other in combination[1:]:
                inside = b.and_(inside, other.inside)
            term = b.select(inside, pixel, b.constant(0.0, compute))
            for weight in (t.weight for t in combination):
                term = b.mul(weight, term)
            value = term if value is None else b.add(value, term)
        value = b.mul(value, b.convert(b.load(weights, [m, c, *k]), compute))
        if mask is not None:
            value = b.mul(value, b.convert(b.load(mask, [n, group_tap, *position]), compute))
        return b.add(acc, value)

    init = body.convert(body.load(bias, [m]), compute) if bias is not None else body.constant(0.0, compute)
    total = body.reduce([(0, group_channels), *((0, size) for size in kernel)], init, tap)
    body.store(body.convert(total, element), out, ivs)
