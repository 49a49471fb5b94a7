"""ConvTranspose: the gradient of Conv, as a scatter of each input position into
the output windows it contributes to. Sizes known at run time only (of the input,
the weights or the output) make the geometry index arithmetic at run time."""

from __future__ import annotations

from collections.abc import Sequence

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, dims_agree, lowers, shape_of, shape_text
from onnxc.passes.onnx_to_krnl.windows import SlidingWindow


def transpose_pads(
    g: GraphLowering, op: OnnxOp, input_sizes: Sequence[Bound], full_sizes: Sequence[Bound]
) -> list[tuple[Bound, Bound]]:
    """(begin, end) padding per spatial dim. `full_sizes` are the output sizes
    without padding; an `output_shape` attribute or SAME auto_pad (output =
    input * stride) fixes the total padding, split as the spec says: SAME_UPPER
    puts the smaller half first, anything else the larger half. Padding that
    depends on run-time sizes is refused (the windows take constant pads)."""
    rank = len(input_sizes)
    auto_pad = op.attr("auto_pad")
    output_shape = op.attr("output_shape")
    strides = op.attr("strides") or [1] * rank
    b = g.top
    if output_shape is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        output_shape = [b.mul(size, stride) for size, stride in zip(input_sizes, strides)]
    if output_shape is None:
        pads = op.attr("pads") or [0] * (2 * rank)
        if auto_pad not in ("NOTSET", "VALID") or len(pads) != 2 * rank:
            raise g.shape_error(op, f"pads {pads} / auto_pad {auto_pad} for {rank} spatial dims")
        return [(0, 0) if auto_pad == "VALID" else (pads[d], pads[d + rank]) for d in range(rank)]
    output_shape = list(output_shape)[-rank:]
    totals = [b.sub(full, wanted) for full, wanted in zip(full_sizes, output_shape)]
    halves = [total // 2 if isinstance(total, int) else _floor_half(b, total) for total in totals]
    if auto_pad == "SAME_UPPER":
        return [(half, b.sub(total, half)) for total, half in zip(totals, halves)]
    return [(b.sub(total, half), half) for total, half in zip(totals, halves)]


def _floor_half(b: KernelBuilder, total: Bound) -> Bound:
    """floor(total / 2) of an index (a total padding may be negative: output_shape
    larger than the full output), as Python's // computes the static one."""
    negative = b.compare_index("slt", total, 0)
    return b.select_index(negative, b.div(b.sub(total, 1), 2), b.div(total, 2))


@lowers("ConvTranspose", run_time_dims=True)
def lower_conv_transpose(g: GraphLowering, op: OnnxOp) -> None:
    """Per (n, output channel m): the output planes are set to the bias, then for
    each input channel c of m's group and kernel offset k, every input position i
    adds x[n, c, i] * w[c, m mod M/group, k] at output position
    i * stride - pad_begin + k * dilation. As in Conv, the range of i is clipped to
    positions inside the output, so there is no branch in the loops."""
    x, weights, bias = g.input(op, 0), g.input(op, 1), g.input(op, 2)
    element = g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    out = g.result(op)
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    weight_channels, per_group_out, *kernel = shape_of(weights)
    group = op.attr("group")
    rank = len(kernel)
    uneven = isinstance(channels, int) and channels % group
    if not input_sizes or len(input_sizes) != rank or not dims_agree([weight_channels], [channels]) or uneven:
        raise g.shape_error(
            op, f"input {shape_text(shape_of(x))}, weights {shape_text(shape_of(weights))}, group {group}"
        )
    b = g.top
    out_channels, out_sizes = out_shape[1], out_shape[2:]
    if not dims_agree(out_shape[:2], [batch, b.mul(per_group_out, group)]):
        raise g.shape_error(op, f"output shape {shape_text(out_shape)}")
    if bias is not None and not dims_agree(shape_of(bias), [out_channels]):
        raise g.shape_error(op, f"bias of shape {shape_text(shape_of(bias))}")
    strides = op.attr("strides") or [1] * rank
    dilations = op.attr("dilations") or [1] * rank
    output_padding = op.attr("output_padding") or [0] * rank
    full = [
        b.add(b.add(b.add(b.mul(s, b.sub(i, 1)), p), b.mul(b.sub(k, 1), d)), 1)
        for s, i, p, k, d in zip(strides, input_sizes, output_padding, kernel, dilations)
    ]
    pads = transpose_pads(g, op, input_sizes, full)
    if not dims_agree([b.sub(b.sub(f, begin), end) for f, (begin, end) in zip(full, pads)], out_sizes):
        raise g.shape_error(op, f"output sizes {shape_text(out_sizes)} do not follow from the attributes (pads {pads})")
    windows = [
        SlidingWindow(o, i, k, s, d, b, e)
        for o, i, k, s, d, (b, e) in zip(out_sizes, input_sizes, kernel, strides, dilations, pads)
    ]
    in_per_group = b.div(channels, group)

    (n, m), body = g.top.loop_nest([batch, out_channels])
    group_index, m_in_group = body.div(m, per_group_out), body.rem(m, per_group_out)
    initial = body.load(bias, [m]) if bias is not None else body.constant(0.0, element)
    positions, fill = body.for_nest([(0, size) for size in out_sizes])
    fill.store(initial, out, [n, m, *positions])

    (c,), per_channel = body.for_nest([(0, in_per_group)])
    channel = per_channel.add(per_channel.mul(group_index, in_per_group), c)
    offsets, per_offset = per_channel.for_nest([(0, k) for k in kernel])
    shifts = [w.shift(per_offset, k) for w, k in zip(windows, offsets)]
    weight = per_offset.load(weights, [channel, m_in_group, *offsets])
    input_positions, point = per_offset.for_nest([w.output_range(per_offset, s) for w, s in zip(windows, shifts)])
    targets = [point.sub(point.mul(i, w.stride), s) for i, w, s in zip(input_positions, windows, shifts)]
    partial = point.load(out, [n, m, *targets])
    contribution = point.mul(point.load(x, [n, channel, *input_positions]), weight)
    point.store(point.add(partial, contribution), out, [n, m, *targets])
