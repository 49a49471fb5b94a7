"""Normalization ops: BatchNormalization (inference), Layer/RMS/Instance/Group/Lp normalization, LRN."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.affine import batch_norm_factor
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, element_count
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    Operand,
    broadcast,
    constant_array,
    dims_agree,
    elementwise,
    lowers,
    normalized_axis,
    optional_result,
    shape_of,
    shape_text,
    weight_buffer,
)
from onnxc.passes.onnx_to_krnl.fusion import ScalarOp, elementwise_read, scalar_op


@scalar_op("BatchNormalization")
def batch_normalization(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """Inference: y = (x - mean) * factor + bias per channel (dim 1), factor =
    scale / sqrt(var + epsilon) computed once per channel before the nest."""
    if op.attr("training_mode") or any(r.uses for r in op.results[1:]):
        raise g.unsupported(op, "BatchNormalization in training mode")
    if op.attr("spatial") == 0:
        raise g.unsupported(op, "BatchNormalization with per-activation statistics (spatial=0)")
    inputs = onnx_inputs(op)[:5]
    element = g.same_element_type(op, [*inputs, op.results[0]], ints=False)
    x_shape, *parameter_shapes = (tuple(v.type.get_shape()) for v in inputs)
    channel_shape = parameter_shapes[3]
    if len(x_shape) < 2 or x_shape[1 : 1 + len(channel_shape)] != channel_shape:
        raise g.shape_error(op, f"statistics of shape {list(channel_shape)} do not fit input {list(x_shape)}")
    if any(shape != channel_shape for shape in parameter_shapes):
        raise g.shape_error(op, "scale, bias, mean and var must have the same shape")
    channel_axes = tuple(range(1, 1 + len(channel_shape)))
    factor = Operand(_batch_norm_factor(g, op, element), channel_axes)
    reads = [elementwise_read(op, 0), (op.input(3), channel_axes), factor, (op.input(2), channel_axes)]
    return ScalarOp(reads, lambda b, xs: b.add(b.mul(b.sub(xs[0], xs[1]), xs[2]), xs[3]))


def _batch_norm_factor(g: GraphLowering, op: OnnxOp, element: Attribute) -> SSAValue:
    """scale / sqrt(var + epsilon) per channel: folded at compile time for constant
    float32/float64 statistics (in float64, rounded once: see `batch_norm_affine`), else a nest."""
    epsilon = op.attr("epsilon")
    scale, var = constant_array(op.input(1)), constant_array(op.input(4))
    if scale is not None and var is not None and scale.dtype == var.dtype and scale.dtype in (np.float32, np.float64):
        factor = batch_norm_factor(scale, var, epsilon).astype(scale.dtype)
        return weight_buffer(g, op, factor, element, f"{op.node_name or 'batch_norm'}_factor")
    scale, var = g.input(op, 1), g.input(op, 4)
    factor = alloc_shaped(g.top, element, shape_of(var))
    epsilon_value = g.top.constant(epsilon, element)
    elementwise(
        g.top,
        factor,
        [Operand.whole(scale), Operand.whole(var)],
        lambda b, xs: b.div(xs[0], b.math(math.SqrtOp, b.add(xs[1], epsilon_value))),
    )
    return factor


# ------------------------------------------------------- normalization over reduced dims


Loader = Callable[[KernelBuilder, list[Bound]], SSAValue]
"""(builder, ivs of the reduced loops) -> one element of the group being normalized."""


def moments(
    b: KernelBuilder, ranges: Sequence[tuple[Bound, Bound]], load: Loader, compute: Attribute
) -> tuple[SSAValue, SSAValue]:
    """Mean and (population) variance of a group of elements, in two passes (the
    second over deviations from the mean, which keeps the variance accurate)."""
    count: Bound = 1
    for low, high in ranges:
        count = b.mul(count, b.sub(high, low))
    count = b.number(count, compute)
    zero = b.constant(0.0, compute)
    total = b.reduce(ranges, zero, lambda r, ivs, acc: r.running_sum(acc, r.convert(load(r, ivs), compute)))
    mean = b.div(total, count)

    def squared_deviation(r: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        deviation = r.sub(r.convert(load(r, ivs), compute), mean)
        return r.running_sum(acc, r.mul(deviation, deviation))

    return mean, b.div(b.reduce(ranges, zero, squared_deviation), count)


def inverse_std(b: KernelBuilder, variance: SSAValue, epsilon: float) -> SSAValue:
    one = b.constant(1.0, variance.type)
    return b.div(one, b.math(math.SqrtOp, b.add(variance, b.constant(epsilon, variance.type))))


def stash_type(g: GraphLowering, op: OnnxOp, element: Attribute) -> Attribute:
    """The type statistics are computed in: float32 for narrower floats when
    stash_type is 1 (the default), else the input's type."""
    if op.attr("stash_type") == 1 and element.bitwidth < 32:
        return f32
    return element


@lowers("LayerNormalization", "RMSNormalization", run_time_dims=True)
def lower_layer_normalization(g: GraphLowering, op: OnnxOp) -> None:
    """Each slice x[i..., :] over the dims from `axis` on is normalized:
    LayerNormalization: (x - mean) / sqrt(var + epsilon) * scale + bias, and the
    optional Mean and InvStdDev outputs; RMSNormalization: x / sqrt(mean(x²) +
    epsilon) * scale. Scale and bias broadcast to the normalized dims."""
    x, scale, bias = g.input(op, 0), g.input(op, 1), g.input(op, 2)
    element = g.same_element_type(op, [op.input(0), op.input(1), op.results[0]], ints=False)
    compute = stash_type(g, op, element)
    shape = shape_of(x)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    epsilon = op.attr("epsilon")
    rms = op.OP_TYPE == "RMSNormalization"
    out = g.result(op)
    mean_out, inv_std_out = (None, None) if rms else (optional_result(g, op, 1), optional_result(g, op, 2))
    operands = [broadcast(g, op, p, shape) for p in (scale, bias) if p is not None]
    ranges = [(0, d) for d in shape[axis:]]

    outer, body = g.top.loop_nest(shape[:axis])
    load = lambda b, ivs: b.load(x, [*outer, *ivs])  # noqa: E731
    if rms:
        count = body.number(element_count(body, shape[axis:]), compute)
        squares = body.reduce(
            ranges,
            body.constant(0.0, compute),
            lambda b, ivs, acc: b.running_sum(acc, b.square(b.convert(load(b, ivs), compute))),
        )
        mean, variance = None, body.div(squares, count)
    else:
        mean, variance = moments(body, ranges, load, compute)
    inv_std = inverse_std(body, variance, epsilon)
    statistics_index = [*outer, *[0] * len(ranges)]
    for buffer, value in ((mean_out, mean), (inv_std_out, inv_std)):
        if buffer is not None:
            body.store(body.convert(value, buffer.type.get_element_type()), buffer, statistics_index)

    ivs, inner = body.for_nest(ranges)
    index = [*outer, *ivs]
    value = inner.convert(load(inner, ivs), compute)
    normalized = inner.mul(value if mean is None else inner.sub(value, mean), inv_std)
    y = inner.mul(inner.convert(normalized, element), operands[0].load(inner, index))
    if len(operands) > 1:
        y = inner.add(y, operands[1].load(inner, index))
    inner.store(y, out, index)


@lowers("InstanceNormalization", "GroupNormalization", run_time_dims=True)
def lower_group_normalization(g: GraphLowering, op: OnnxOp) -> None:
    """x of shape [N, C, spatial...] is normalized per (n, group of C / G channels)
    over the group's channels and all spatial positions, then scaled and shifted
    per channel. InstanceNormalization is the case of one channel per group.
    GroupNormalization before opset 21 has scale and bias per group."""
    x, scale, bias = (g.input(op, k) for k in range(3))
    element = g.same_element_type(op, [*onnx_inputs(op)[:3], op.results[0]], ints=False)
    compute = stash_type(g, op, element) if op.OP_TYPE == "GroupNormalization" else element
    shape = shape_of(x)
    if len(shape) < 2:
        raise g.shape_error(op, f"input of shape {list(shape)} has no channel dim")
    batch, channels, *spatial = shape
    groups = op.attr("num_groups") if op.OP_TYPE == "GroupNormalization" else channels
    if not groups or isinstance(channels, int) and channels % groups:
        raise g.shape_error(op, f"{shape_text([channels])} channels do not split into {groups} groups")
    per_group = 1 if groups is channels else g.top.div(channels, groups)
    parameters = [shape_of(scale), shape_of(bias)]
    per_channel = all(dims_agree(s, [channels]) for s in parameters)
    if per_channel and all(dims_agree(s, [groups]) for s in parameters):  # sizes known at run time only
        per_channel = per_group == 1 or g.version(op) >= 21
    if per_channel:
        parameter_channel = lambda b, group, c: b.add(b.mul(group, per_group), c)  # noqa: E731
    elif all(dims_agree(s, [groups]) for s in parameters):
        parameter_channel = lambda b, group, c: group  # noqa: E731
    else:
        raise g.shape_error(
            op, f"scale and bias must have shape {shape_text([channels])} (or [{groups}] before opset 21)"
        )
    out = g.result(op)
    ranges = [(0, per_group), *((0, d) for d in spatial)]

    (n, group), body = g.top.loop_nest([batch, groups])

    def index(b: KernelBuilder, ivs: list[Bound]) -> list[Bound]:
        return [n, b.add(b.mul(group, per_group), ivs[0]), *ivs[1:]]

    mean, variance = moments(body, ranges, lambda b, ivs: b.load(x, index(b, ivs)), compute)
    inv_std = inverse_std(body, variance, op.attr("epsilon"))
    ivs, inner = body.for_nest(ranges)
    normalized = inner.mul(inner.sub(inner.convert(inner.load(x, index(inner, ivs)), compute), mean), inv_std)
    channel = parameter_channel(inner, group, ivs[0])
    y = inner.mul(inner.convert(normalized, element), inner.load(scale, [channel]))
    inner.store(inner.add(y, inner.load(bias, [channel])), out, index(inner, ivs))


@lowers("LpNormalization", run_time_dims=True)
def lower_lp_normalization(g: GraphLowering, op: OnnxOp) -> None:
    """x / ||x||_p along `axis` (p is 1 or 2); a zero norm gives 0, as onnxruntime does."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    p = op.attr("p")
    if p not in (1, 2):
        raise g.unsupported(op, f"LpNormalization with p={p} (only 1 and 2 are defined)")
    shape = shape_of(x)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    out = g.result(op)
    kept = [d for d in range(len(shape)) if d != axis]
    outer, body = g.top.loop_nest([shape[d] for d in kept])

    def index(iv: Bound) -> list[Bound]:
        return [*outer[:axis], iv, *outer[axis:]]

    def accumulate(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        value = b.load(x, index(ivs[0]))
        return b.running_sum(acc, b.abs(value) if p == 1 else b.square(value))

    norm = body.reduce([(0, shape[axis])], body.constant(0.0, element), accumulate)
    if p == 2:
        norm = body.math(math.SqrtOp, norm)
    zero = body.constant(0.0, element)
    (iv,), inner = body.for_nest([(0, shape[axis])])
    quotient = inner.div(inner.load(x, index(iv)), norm)
    is_zero = inner.insert(arith.CmpfOp(norm, zero, "oeq")).result
    inner.store(inner.select(is_zero, zero, quotient), out, index(iv))


@lowers("LRN", run_time_dims=True)
def lower_lrn(g: GraphLowering, op: OnnxOp) -> None:
    """Local response normalization across channels:
    y = x / (bias + alpha / size * sum of x² over the channel window) ** beta,
    the window being channels [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    size = op.attr("size")
    if not size or size < 1:
        raise g.shape_error(op, f"LRN size {size}")
    shape = shape_of(x)
    if len(shape) < 2:
        raise g.shape_error(op, f"input of shape {list(shape)} has no channel dim")
    out = g.result(op)
    below, above = (size - 1) // 2, -(-(size - 1) // 2)
    # Per (n, c): the output plane accumulates the squares of the window's planes (channels in
    # ascending order), then is normalized in place: every inner loop runs along a plane, so
    # it vectorizes (one window per point left the channel loop innermost, and scalar).
    (n, channel), body = g.top.loop_nest(shape[:2])
    low = body.max(body.sub(channel, below), 0)
    high = body.min(body.add(channel, above + 1), shape[1])
    plane = [(0, extent) for extent in shape[2:]]
    points, start = body.for_nest(plane)
    start.store(start.constant(0.0, element), out, [n, channel, *points])
    (window_channel, *points), accumulate = body.for_nest([(low, high), *plane])
    square = accumulate.square(accumulate.load(x, [n, window_channel, *points]))
    accumulate.store(accumulate.add(accumulate.load(out, [n, channel, *points]), square), out, [n, channel, *points])
    points, end = body.for_nest(plane)
    scaled = end.add(
        end.constant(op.attr("bias"), element),
        end.mul(end.constant(op.attr("alpha") / size, element), end.load(out, [n, channel, *points])),
    )
    end.store(
        end.div(end.load(x, [n, channel, *points]), _power(end, scaled, op.attr("beta"))), out, [n, channel, *points]
    )


def _power(b: KernelBuilder, base: SSAValue, exponent: float) -> SSAValue:
    """base ** exponent, through square roots for the exponents LRN uses (0.75 by default,
    0.5, 1), which vectorize and round at most three times; else powf."""
    if exponent == 1.0:
        return base
    if exponent in (0.5, 0.75):
        root = b.math(math.SqrtOp, base)
        return root if exponent == 0.5 else b.mul(root, b.math(math.SqrtOp, root))
    return b.math(math.PowFOp, base, b.constant(exponent, base.type))
