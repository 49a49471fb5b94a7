"""Conv: a GEMM kernel (krnl.matmul) for 2-D convolutions with constant weights,
with a following BatchNormalization folded into the weights and a following
Relu/Clip applied in the kernel's store; otherwise a direct convolution,
row-vectorizable, padding by clipped loop ranges."""

from __future__ import annotations

from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of
from onnxc.passes.onnx_to_krnl.gemm import lower_conv_as_gemm
from onnxc.passes.onnx_to_krnl.windows import sliding_windows


@lowers("Conv")
def lower_conv(g: GraphLowering, op: OnnxOp) -> None:
    """The GEMM kernel where it applies (see `lower_conv_as_gemm`), else direct convolution."""
    if lower_conv_as_gemm(g, op):
        return
    g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    direct_conv(g, op, g.input(op, 0), g.input(op, 1), g.input(op, 2), g.result(op))


def direct_conv(
    g: GraphLowering, op: OnnxOp, x: SSAValue, weights: SSAValue, bias: SSAValue | None, out: SSAValue
) -> None:
    """Direct convolution, one output row at a time. A krnl nest runs over
    (n, m, the spatial dims but the last); in its body the row is set to the bias,
    then for each (input channel of the group, kernel offset...) one weight
    scales the input row into the output row. That innermost loop runs along
    both rows (with unit stride when the stride is 1), so it vectorizes.
    Padding costs no branch: each loop range is clipped to what reads the input
    (padding is zero). Computes in the element type of `out`, to which the
    operands are converted (the integer convolutions accumulate in int32)."""
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    out_channels, group_channels, *kernel = shape_of(weights)
    group = op.attr("group", 1)
    if not input_sizes or channels != group_channels * group or out_channels % group:
        raise g.shape_error(op, f"input {list(shape_of(x))}, weights {list(shape_of(weights))}, group {group}")
    if op.attr("kernel_shape") not in (None, kernel):
        raise g.shape_error(op, f"kernel_shape {op.attr('kernel_shape')} differs from the weights' {kernel}")
    if bias is not None and shape_of(bias) != (out_channels,):
        raise g.shape_error(op, f"bias of shape {list(shape_of(bias))}")
    if out_shape[:2] != (batch, out_channels):
        raise g.shape_error(op, f"output shape {list(out_shape)}")
    *outer_windows, row_window = sliding_windows(g, op, input_sizes, out_shape[2:], kernel)

    row_ivs, body = g.top.loop_nest(out_shape[:-1])
    n, m, *outer_position = row_ivs
    element = out.type.get_element_type()
    init = body.convert(body.load(bias, [m]), element) if bias is not None else body.constant(0, element)
    (init_column,), row_start = body.for_nest([(0, row_window.output_size)])
    row_start.store(init, out, [*row_ivs, init_column])

    first_channel = 0 if group == 1 else body.mul(body.div(m, out_channels // group), group_channels)
    starts = [w.start(body, o) for w, o in zip(outer_windows, outer_position)]
    ranges = [(0, group_channels), *(w.data_range(body, s) for w, s in zip(outer_windows, starts))]
    (c, *offsets, row_offset), tap = body.for_nest([*ranges, (0, row_window.kernel)])
    channel = tap.add(first_channel, c)
    positions = [w.position(tap, s, k) for w, s, k in zip(outer_windows, starts, offsets)]
    weight = tap.convert(tap.load(weights, [m, c, *offsets, row_offset]), element)
    shift = row_window.shift(tap, row_offset)
    (column,), point = tap.for_nest([row_window.output_range(tap, shift)])
    input_column = point.sub(point.mul(column, row_window.stride), shift)
    pixel = point.convert(point.load(x, [n, channel, *positions, input_column]), element)
    partial = point.load(out, [*row_ivs, column])
    point.store(point.add(partial, point.mul(pixel, weight)), out, [*row_ivs, column])
