"""DeformConv: a convolution whose every kernel tap reads the input at its
regular position plus a learned (fractional) offset, sampled bilinearly with
zeros outside the input (GridSample's linear taps with aligned corners), and
optionally scaled by a mask."""

from __future__ import annotations

import itertools

from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import element_count, linearize
from onnxc.passes.onnx_to_krnl.common import GraphLowering, dims_agree, lowers, shape_of, shape_text
from onnxc.passes.onnx_to_krnl.grid_sample import SamplingAxis, compute_type
from onnxc.passes.onnx_to_krnl.windows import sliding_windows


@lowers("DeformConv", run_time_dims=True)
def lower_deform_conv(g: GraphLowering, op: OnnxOp) -> None:
    """out[n, m, o...] = bias[m] + sum over the group's input channels c and kernel
    offsets k of w[m, c, k] * mask[n, (og, k), o] * x[n, c] sampled at
    o * stride - pad + k * dilation + offset[n, (og, k, d), o], og the offset group of c.
    Dims known at run time only were checked against each other when the run
    started (symbolic_shapes); `kernel_shape`, where given, is the weights' size."""
    x, weights, offsets, bias, mask = (g.input(op, k) for k in range(5))
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    out = g.result(op)
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    out_channels, group_channels, *kernel = shape_of(weights)
    if op.attr("kernel_shape") is not None:
        if not dims_agree(op.attr("kernel_shape"), kernel):
            raise g.shape_error(
                op, f"kernel_shape {op.attr('kernel_shape')} differs from the weights' {shape_text(kernel)}"
            )
        kernel = op.attr("kernel_shape")
    rank, taps = len(kernel), element_count(g.top, kernel)
    group, offset_group = op.attr("group"), op.attr("offset_group")
    if (
        not input_sizes
        or not dims_agree([channels], [g.top.mul(group_channels, group)])
        or _indivisible(out_channels, group)
        or _indivisible(channels, offset_group)
        or not dims_agree(shape_of(offsets), (batch, g.top.mul(taps, offset_group * rank), *out_shape[2:]))
        or (mask is not None and not dims_agree(shape_of(mask), (batch, g.top.mul(taps, offset_group), *out_shape[2:])))
    ):
        raise g.shape_error(
            op,
            f"input {shape_text(shape_of(x))}, weights {shape_text(shape_of(weights))}, "
            f"offsets {shape_text(shape_of(offsets))}, group {group}, offset_group {offset_group}",
        )
    windows = sliding_windows(g, op, input_sizes, out_shape[2:], kernel)
    compute = compute_type(element)
    axes = [SamplingAxis(g.top, size, True, "zeros", compute) for size in input_sizes]

    ivs, body = g.top.loop_nest(out_shape)
    n, m, *position = ivs
    first_channel = 0 if group == 1 else body.mul(body.div(m, body.div(out_channels, group)), group_channels)
    starts = [w.start(body, o) for w, o in zip(windows, position)]

    def tap(b: KernelBuilder, loop_ivs: list[Bound], acc: SSAValue) -> SSAValue:
        c, *k = loop_ivs
        channel = b.add(first_channel, c)
        kernel_offset = linearize(b, k, kernel)
        group_tap = b.add(b.mul(b.div(channel, b.div(channels, offset_group)), taps), kernel_offset)
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


def _indivisible(count: Bound, parts: int) -> bool:
    """Whether a count known at compile time does not split into `parts` equal parts."""
    return isinstance(count, int) and count % parts != 0
