"""Normalization ops (BatchNormalization in inference)."""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.dialects.builtin import MemRefType

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.onnx_to_krnl.common import GraphLowering, Operand, elementwise, lowers, shape_of


@lowers("BatchNormalization")
def lower_batch_normalization(g: GraphLowering, op: OnnxOp) -> None:
    """Inference: y = (x - mean) * (scale / sqrt(var + epsilon)) + bias, per channel (dim 1)."""
    if op.attr("training_mode", 0) or any(r.uses for r in op.results[1:]):
        raise g.unsupported(op, "BatchNormalization in training mode")
    if op.attr("spatial", 1) == 0:
        raise g.unsupported(op, "BatchNormalization with per-activation statistics (spatial=0)")
    x, scale, bias, mean, var = (g.input(op, k) for k in range(5))
    element = g.same_element_type(op, [*onnx_inputs(op)[:5], op.results[0]], ints=False)
    channel_shape = shape_of(var)
    x_shape = shape_of(x)
    if len(x_shape) < 2 or x_shape[1 : 1 + len(channel_shape)] != channel_shape:
        raise g.shape_error(op, f"statistics of shape {list(channel_shape)} do not fit input {list(x_shape)}")
    if any(shape_of(p) != channel_shape for p in (scale, bias, mean)):
        raise g.shape_error(op, "scale, bias, mean and var must have the same shape")

    factor = g.top.alloc(MemRefType(element, channel_shape))
    epsilon = g.top.constant(op.attr("epsilon", 1e-5), element)
    elementwise(
        g.top,
        factor,
        [Operand.whole(scale), Operand.whole(var)],
        lambda b, xs: b.div(xs[0], b.math(math.SqrtOp, b.add(xs[1], epsilon))),
    )
    channel_axes = tuple(range(1, 1 + len(channel_shape)))
    elementwise(
        g.top,
        g.result(op),
        [Operand.whole(x), *(Operand(p, channel_axes) for p in (mean, factor, bias))],
        lambda b, xs: b.add(b.mul(b.sub(xs[0], xs[1]), xs[2]), xs[3]),
    )
