"""Resize: nearest, linear and cubic interpolation (with antialias), every
coordinate transformation mode, axes and keep_aspect_ratio_policy.

Resize is separable: the spec's result is a 1-D resize along each resized
axis in turn. Scales, sizes and roi are bound at compile time, so for each
axis of static sizes the source positions and weights of every output
position are computed here, with numpy, into constant tables (`AxisTaps`);
over a size known at run time only, a loop computes the same tables at run
time (resize_taps.py). The kernel of an axis sums weight * input over the
taps of each output position.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import f64, i64
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import dim_params, is_float
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    constant_array,
    constant_buffer,
    copy_reshaped,
    lowers,
    normalized_axis,
    shape_of,
)
from onnxc.passes.onnx_to_krnl.resize_taps import Interpolation, Scale, TapTables, run_time_taps

Coefficients = Callable[[float, float], np.ndarray]
"""(ratio in (0, 1] of the source position past its left pixel, scale) -> tap weights."""


def _nearest(nearest_mode: str) -> Coefficients:
    def coefficients(ratio: float, scale: float) -> np.ndarray:
        if float(ratio).is_integer():
            return np.array([0.0, 1.0])
        right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False, "ceil": True}[
            nearest_mode
        ]
        return np.array([0.0, 1.0]) if right else np.array([1.0, 0.0])

    return coefficients


def _linear(ratio: float, scale: float) -> np.ndarray:
    return np.array([1 - ratio, ratio])


def _linear_antialias(ratio: float, scale: float) -> np.ndarray:
    """A triangle filter stretched by 1/scale when downsampling."""
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    distances = (np.arange(start, 2 - start) - ratio) * scale
    weights = np.clip(1 - np.abs(distances), 0, 1)
    return weights / weights.sum()


def _cubic_kernel(a: float, x: float) -> float:
    """Keys' cubic convolution kernel with parameter a."""
    x = abs(x)
    if x <= 1:
        return (a + 2) * x**3 - (a + 3) * x**2 + 1
    if x < 2:
        return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a
    return 0.0


def _cubic(a: float, antialias: bool) -> Coefficients:
    def coefficients(ratio: float, scale: float) -> np.ndarray:
        if not antialias:
            return np.array([_cubic_kernel(a, d) for d in (ratio + 1, ratio, 1 - ratio, 2 - ratio)])
        scale = min(scale, 1.0)
        start = int(np.floor(-2 / scale) + 1)
        weights = np.array([_cubic_kernel(a, scale * (i - ratio)) for i in range(start, 2 - start)])
        return weights / weights.sum()

    return coefficients


@dataclass
class AxisTaps:
    """For each output position along one axis: the input positions read (clamped
    into the input), their weights, and whether the position is outside the
    crop region (tf_crop_and_resize: the output is the extrapolation value)."""

    indices: np.ndarray  # [out, taps] int64
    weights: np.ndarray  # [out, taps] float64
    extrapolated: np.ndarray | None  # [out] bool


def source_coordinates(mode: str, out_size: int, in_size: int, scale: float, roi: tuple[float, float]) -> np.ndarray:
    """The input coordinate of each output position, per coordinate_transformation_mode."""
    y = np.arange(out_size, dtype=np.float64)
    scaled_size = scale * in_size
    if mode == "align_corners":
        return np.zeros(out_size) if scaled_size == 1 else y * (in_size - 1) / (scaled_size - 1)
    if mode == "asymmetric":
        return y / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if scaled_size == 1:
            x = np.full(out_size, (end - start) * (in_size - 1) / 2)
        else:
            x = y * (end - start) * (in_size - 1) / (scaled_size - 1)
        return x + start * (in_size - 1)
    if mode == "pytorch_half_pixel":
        return np.full(out_size, -0.5) if scaled_size == 1 else (y + 0.5) / scale - 0.5
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / scaled_size)
        return offset + (y + 0.5) / scale - 0.5
    raise ValueError(mode)


def axis_taps(
    coefficients: Coefficients,
    coordinate_mode: str,
    in_size: int,
    out_size: int,
    scale: float,
    roi: tuple[float, float],
    exclude_outside: bool,
) -> AxisTaps:
    """Taps of a 1-D resize: the n input positions nearest to each source coordinate
    (ties to the left; edge positions repeated past the ends) and the weights
    `coefficients` gives for its distance to the pixel on its left."""
    x = source_coordinates(coordinate_mode, out_size, in_size, scale, roi)
    left = np.floor(x)
    ratios = np.where(x == left, 1.0, x - left)
    weights = np.array([coefficients(float(r), scale) for r in ratios], dtype=np.float64).reshape(out_size, -1)
    taps = weights.shape[1]
    if taps % 2 == 0:
        first = left - taps // 2 + np.where(x == left, 0, 1)
    else:
        first = left - (taps - 1) // 2 + np.where(x - left <= 0.5, 0, 1)
    indices = first.astype(np.int64)[:, None] + np.arange(taps)[None, :]
    if exclude_outside:
        weights = np.where((indices < 0) | (indices >= in_size), 0.0, weights)
        totals = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(totals == 0, 1.0, totals)
    extrapolated = None
    if coordinate_mode == "tf_crop_and_resize":
        extrapolated = (x < 0) | (x > in_size - 1)
    return AxisTaps(np.clip(indices, 0, in_size - 1), weights, extrapolated)


def _sizes(g: GraphLowering, op: OnnxOp, out_shape, axes) -> list[Bound]:
    """The `sizes` of the resized axes: the constant input, or else (stretching) the
    result's dims, which shape inference took from `sizes` (exporters compute them at
    run time, e.g. torch's `interpolate(x, size=...)` as Concat(Shape(x)[:2], [h, w]))."""
    sizes = constant_array(op.input(3)) if op.input(3) is not None else None
    if sizes is not None:
        return [int(v) for v in sizes.reshape(-1)]
    if op.input(3) is None or op.attr("keep_aspect_ratio_policy") != "stretch":
        raise g.unsupported(op, "Resize needs constant scales, or sizes constant or stretched to its result's shape")
    return [out_shape[axis] for axis in axes]


def _scales(g: GraphLowering, op: OnnxOp, in_shape, out_shape, axes) -> list[Scale]:
    """The scale of each dim: from `scales`, or out/in for `sizes` (a common one
    under keep_aspect_ratio_policy not_larger / not_smaller); an f64 value
    computed at run time where a size is known then only (1 where the result
    keeps the input's symbolic dim)."""
    scales = constant_array(op.input(2)) if op.input(2) is not None else None
    if scales is not None and scales.size:
        per_dim = [1.0] * len(in_shape)
        for axis, scale in zip(axes, scales.reshape(-1).tolist()):
            per_dim[axis] = scale
        return per_dim
    sizes = _sizes(g, op, out_shape, axes)
    in_dims, out_dims = dim_params(op.input(0).type), dim_params(op.results[0].type)
    per_dim: list[Scale] = [1.0] * len(in_shape)
    b = g.top
    for axis, size in zip(axes, sizes):
        in_size = in_shape[axis]
        if isinstance(size, int) and isinstance(in_size, int):
            per_dim[axis] = size / in_size
        elif not isinstance(size, int) and in_dims[axis] and in_dims[axis] == out_dims[axis]:
            per_dim[axis] = 1.0
        else:
            per_dim[axis] = b.div(b.number(size, f64), b.number(in_size, f64))
    policy = op.attr("keep_aspect_ratio_policy")
    if policy != "stretch":
        kind = "min" if policy == "not_larger" else "max"
        common = per_dim[axes[0]]
        for axis in axes[1:]:
            scale = per_dim[axis]
            if isinstance(common, float) and isinstance(scale, float):
                common = min(common, scale) if kind == "min" else max(common, scale)
            else:
                common = b.binary(
                    kind, *(s if isinstance(s, SSAValue) else b.constant(s, f64) for s in (common, scale))
                )
        per_dim = [common if d in axes else 1.0 for d in range(len(in_shape))]
    return per_dim


def _coefficients(g: GraphLowering, op: OnnxOp) -> Coefficients:
    mode = op.attr("mode")
    antialias = bool(op.attr("antialias"))
    if mode == "nearest" and not antialias:
        return _nearest(op.attr("nearest_mode"))
    if mode == "linear":
        return _linear_antialias if antialias else _linear
    if mode == "cubic":
        return _cubic(op.attr("cubic_coeff_a"), antialias)
    raise g.unsupported(op, f"Resize mode '{mode}'" + (" with antialias" if antialias else ""))


@lowers("Resize", run_time_dims=True)
def lower_resize(g: GraphLowering, op: OnnxOp) -> None:
    if g.version(op) < 11:
        raise g.unsupported(op, "Resize before opset 11 (scales only, asymmetric coordinates)")
    src, out = g.input(op, 0), g.result(op)
    in_shape, out_shape = shape_of(src), shape_of(out)
    in_dims, out_dims = dim_params(op.input(0).type), dim_params(op.results[0].type)
    rank = len(in_shape)
    axes = [normalized_axis(g, op, a, rank) for a in (op.attr("axes") or range(rank))]
    scales = _scales(g, op, in_shape, out_shape, axes)
    coordinate_mode = op.attr("coordinate_transformation_mode")
    roi = constant_array(op.input(1)) if op.input(1) is not None else None
    roi = None if roi is None or roi.size == 0 else roi.reshape(-1).tolist()
    if coordinate_mode == "tf_crop_and_resize" and roi is None:
        raise g.unsupported(op, "tf_crop_and_resize without a constant roi")
    coefficients = _coefficients(g, op)
    nearest = op.attr("mode") == "nearest"
    element = out.type.get_element_type()
    if not nearest and not is_float(element):
        raise g.unsupported(op, f"{op.attr('mode')} interpolation of {element}")

    def axis_roi(axis: int) -> tuple[float, float]:
        return (0.0, 1.0) if roi is None else (roi[axes.index(axis)], roi[len(axes) + axes.index(axis)])

    def unchanged(axis: int) -> bool:
        in_size, out_size, scale = in_shape[axis], out_shape[axis], scales[axis]
        same_size = out_size == in_size or (not isinstance(in_size, int) and in_dims[axis] == out_dims[axis])
        return isinstance(scale, float) and pymath.isclose(scale, 1.0) and same_size and axis_roi(axis) == (0.0, 1.0)

    resized = [axis for axis in _pass_order(axes, in_shape, out_shape, scales) if not unchanged(axis)]
    current, shape = src, list(in_shape)
    for axis in resized:
        in_size, out_size, scale = in_shape[axis], out_shape[axis], scales[axis]
        shape[axis] = out_size
        # The last pass writes the result (its other dims may be other values of the same symbols).
        target = out if axis == resized[-1] else alloc_shaped(g.top, element, shape)
        if all(isinstance(v, int | float) for v in (in_size, out_size, scale)):
            axis_taps_ = axis_taps(
                coefficients,
                coordinate_mode,
                in_size,
                out_size,
                scale,
                axis_roi(axis),
                bool(op.attr("exclude_outside")),
            )
            tables = _constant_tables(g, axis_taps_, nearest, element)
        else:
            how = Interpolation(
                op.attr("mode"),
                op.attr("nearest_mode"),
                op.attr("cubic_coeff_a"),
                bool(op.attr("antialias")),
                bool(op.attr("exclude_outside")),
                coordinate_mode,
                axis_roi(axis),
            )
            taps = (
                _antialias_taps(g, op, in_shape, out_shape, axes, axis)
                if how.antialias and not isinstance(scale, float)
                else None
            )
            tables = run_time_taps(g.top, in_size, out_size, scale, how, element, taps)
        _resize_axis(g, op, current, target, axis, tables)
        current = target
    if current is not out:
        copy_reshaped(g.top, current, out)


def _pass_order(
    axes: list[int], in_shape: Sequence[Bound], out_shape: Sequence[Bound], scales: list[Scale]
) -> list[int]:
    """The axes in the order their passes run: the innermost one, whose taps are gathers along
    the row, first where it grows and last where it shrinks, so that it makes the smallest
    tensor it can; the others, whose rows are read and written whole (vectors), in `axes`
    order. DeepLabV3's x8 bilinear upsampling of 21 x 32 x 32: H then W 0.81 ms, W then H 0.35
    ms (one thread). Whether it grows: from its static sizes, else from a constant scale (the
    same upsampling over a map of run-time size took H then W: 0.73 ms); else `axes` order."""
    inner = len(in_shape) - 1
    sizes = (in_shape[inner], out_shape[inner])
    if inner not in axes:
        return axes
    if all(isinstance(size, int) for size in sizes):
        growth = sizes[1] - sizes[0]
    elif isinstance(scales[inner], float):
        growth = scales[inner] - 1.0
    else:
        return axes
    rest = [axis for axis in axes if axis != inner]
    return axes if growth == 0 else [inner, *rest] if growth > 0 else [*rest, inner]


def _antialias_taps(
    g: GraphLowering, op: OnnxOp, in_shape: Sequence[Bound], out_shape: Sequence[Bound], axes: list[int], axis: int
) -> Bound:
    """Antialias taps along `axis` for a scale of `sizes` over run-time dims: the
    filter of reach r (1 linear, 2 cubic) widened by 1 / min(scale, 1) spans
    2 * max(r, ceil(r * in / size)) taps, in index arithmetic (the memory plan sizes
    buffers from index values only). One scale for all axes (keep_aspect_ratio_policy)
    is the least (not_larger) or greatest ratio: the taps the greatest (least) of
    the axes' counts. A count above the exact one adds taps of weight 0."""
    top = g.top
    reach = {"linear": 1, "cubic": 2}[op.attr("mode")]
    sizes = _sizes(g, op, out_shape, axes)

    def widened(j: int) -> Bound:
        size = top.max(sizes[axes.index(j)], 1)
        return top.div(top.add(top.mul(in_shape[j], reach), top.sub(size, 1)), size)

    policy = op.attr("keep_aspect_ratio_policy")
    counts = [widened(j) for j in (axes if policy != "stretch" else [axis])]
    count = counts[0]
    for other in counts[1:]:
        count = top.max(count, other) if policy == "not_larger" else top.min(count, other)
    return top.mul(top.max(count, reach), 2)


def _constant_tables(g: GraphLowering, taps: AxisTaps, nearest: bool, element: Attribute) -> TapTables:
    """The tap tables of an axis of static sizes, as krnl.globals."""
    indices, weights = taps.indices, taps.weights
    if nearest:  # one tap: the position of weight 1
        indices = np.take_along_axis(indices, weights.argmax(axis=1)[:, None], axis=1)
    extrapolated = None
    if taps.extrapolated is not None and taps.extrapolated.any():
        extrapolated = constant_buffer(g.top, taps.extrapolated.astype(np.int64), i64)
    return TapTables(
        constant_buffer(g.top, indices, i64),
        None if nearest else constant_buffer(g.top, weights, element),
        extrapolated,
    )


def _resize_axis(g: GraphLowering, op: OnnxOp, src: SSAValue, out: SSAValue, axis: int, tables: TapTables) -> None:
    """out[..., i, ...] = sum over taps t of weights[i, t] * src[..., indices[i, t], ...]
    (nearest: the one tap of weight 1)."""
    element = out.type.get_element_type()
    if tables.extrapolated is not None:
        fill_value = g.top.constant(op.attr("extrapolation_value"), element)
    ivs, b = g.top.loop_nest(shape_of(out))

    def tap_value(inner: KernelBuilder, tap: Bound) -> SSAValue:
        source = list(ivs)
        source[axis] = inner.to_index(inner.load(tables.indices, [ivs[axis], tap]))
        value = inner.load(src, source)
        if tables.weights is not None:
            value = inner.mul(inner.load(tables.weights, [ivs[axis], tap]), value)
        return value

    taps = shape_of(tables.indices)[1]
    if isinstance(taps, int):
        total = None
        for tap in range(taps):
            value = tap_value(b, tap)
            total = value if total is None else b.add(total, value)
    else:  # antialias over a run-time scale: a run-time count of taps
        zero = b.constant(0.0, element)
        total = b.reduce([(0, taps)], zero, lambda inner, taps_ivs, acc: inner.add(acc, tap_value(inner, taps_ivs[0])))
    if tables.extrapolated is not None:
        outside = b.compare_index("ne", b.load(tables.extrapolated, [ivs[axis]]), b.constant(0, i64))
        total = b.select(outside, fill_value, total)
    b.store(total, out, ivs)
