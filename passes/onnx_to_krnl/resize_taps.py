"""Resize's tap tables along one axis: made at compile time with numpy where the
axis's sizes are static (`resize.axis_taps`), or at run time by a loop over the
output positions where an input or output size is known at run time only.

Both give the same `TapTables` to the resize kernel: per output position the
input positions read (clamped into the input), their weights, and whether the
position lies outside the crop region (tf_crop_and_resize). The run-time loop
follows numpy's float64 arithmetic step by step, so both agree (but for the
last bit of the cubic kernel's powers).
"""

from __future__ import annotations

import math as pymath
from dataclasses import dataclass
from typing import NamedTuple

from xdsl.dialects import math
from xdsl.dialects.builtin import f64, i1, i64
from xdsl.ir import Attribute, SSAValue

from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped

Scale = float | SSAValue
"""A scale known at compile time, or an f64 value (sizes over a run-time input size)."""


@dataclass(frozen=True)
class TapTables:
    """indices [out, taps] i64, weights [out, taps] (None for nearest: one tap of
    weight 1), extrapolated [out] i64 flags (None when no position is outside)."""

    indices: SSAValue
    weights: SSAValue | None
    extrapolated: SSAValue | None


@dataclass(frozen=True)
class Interpolation:
    """What Resize interpolates with: mode, its attributes, and the crop region of the axis."""

    mode: str  # nearest, linear, cubic
    nearest_mode: str
    cubic_a: float
    antialias: bool
    exclude_outside: bool
    coordinate_mode: str
    roi: tuple[float, float]

    def tap_count(self, scale: float) -> int:
        """Taps per output position (antialias: widened by 1/scale when downsampling)."""
        if self.mode == "nearest":
            return 2
        reach = {"linear": 1, "cubic": 2}[self.mode]
        if not self.antialias:
            return 2 * reach
        start = pymath.floor(-reach / min(scale, 1.0)) + 1
        return 2 - 2 * start


def run_time_taps(
    top: KernelBuilder,
    in_size: Bound,
    out_size: Bound,
    scale: Scale,
    how: Interpolation,
    element: Attribute,
    taps: Bound | None = None,
) -> TapTables:
    """The tap tables of one axis computed by a loop over its output positions
    (`resize.axis_taps` at run time); antialias over a run-time scale takes a
    run-time number of `taps` (`_run_time_count_taps`)."""
    if how.antialias and not isinstance(scale, float):
        return _run_time_count_taps(top, in_size, out_size, scale, how, element, taps)
    taps = how.tap_count(scale if isinstance(scale, float) else 1.0)
    nearest = how.mode == "nearest"
    tables, loop = _tables_and_loop(top, in_size, out_size, scale, how, element, taps, taps // 2)
    indices, weights, extrapolated = tables.indices, tables.weights, tables.extrapolated
    b, position, x, exact, ratio, first, in_f = loop
    f = _Float64(b)

    def clamped_index(offset: SSAValue) -> SSAValue:
        return _clamped_index(b, offset, in_f)

    if nearest:
        right = b.or_(exact, _rounds_right(f, how.nearest_mode, ratio))
        b.store(clamped_index(b.add(first, b.select(right, f.value(1.0), f.value(0.0)))), indices, [position, 0])
    else:
        offsets = [b.add(first, f.value(float(k))) for k in range(taps)]
        values = _weights(f, how, ratio, scale, taps)
        if how.exclude_outside:
            zero = f.value(0.0)
            values = [
                b.select(b.and_(b.compare("ge", o, zero), b.compare("lt", o, in_f)), w, zero)
                for o, w in zip(offsets, values)
            ]
            total = values[0]
            for w in values[1:]:
                total = b.add(total, w)
            total = b.select(b.compare("eq", total, zero), f.value(1.0), total)
            values = [b.div(w, total) for w in values]
        for k, (offset, weight) in enumerate(zip(offsets, values)):
            b.store(clamped_index(offset), indices, [position, k])
            b.store(b.convert(weight, element), weights, [position, k])
    if extrapolated is not None:
        _store_extrapolated(b, x, in_f, extrapolated, position)
    return TapTables(indices, weights, extrapolated)


class _PositionLoop(NamedTuple):
    """The loop over an axis's output positions: its body's builder, the position,
    its source coordinate x, whether x is a pixel's, x's ratio past the pixel on its
    left, the first tap's input position (all f64), and the input size as f64."""

    b: KernelBuilder
    position: SSAValue
    x: SSAValue
    exact: SSAValue
    ratio: SSAValue
    first: SSAValue
    in_f: SSAValue


def _tables_and_loop(
    top: KernelBuilder,
    in_size: Bound,
    out_size: Bound,
    scale: Scale,
    how: Interpolation,
    element: Attribute,
    taps: Bound,
    half: Bound,
) -> tuple[TapTables, _PositionLoop]:
    """The tables to fill (one index column for nearest, no weights), and the loop
    over the output positions that fills them, with each position's source."""
    nearest = how.mode == "nearest"
    indices = alloc_shaped(top, i64, [out_size, 1 if nearest else taps])
    weights = None if nearest else alloc_shaped(top, element, [out_size, taps])
    cropped = how.coordinate_mode == "tf_crop_and_resize"
    extrapolated = alloc_shaped(top, i64, [out_size]) if cropped else None
    sizes = _axis_floats(top, how, in_size, out_size, scale)
    (position,), b = top.loop_nest([out_size])
    x, exact, ratio, first = _source_position(b, how, position, sizes, half)
    return TapTables(indices, weights, extrapolated), _PositionLoop(b, position, x, exact, ratio, first, sizes[0])


def _axis_floats(
    top: KernelBuilder, how: Interpolation, in_size: Bound, out_size: Bound, scale: Scale
) -> tuple[SSAValue, SSAValue | None, SSAValue]:
    """The input size, the output size (half_pixel_symmetric only) and the scale as
    f64, made before the loop over the output positions."""
    in_f, scale_f = top.number(in_size, f64), _Float64(top).value(scale)
    out_f = top.number(out_size, f64) if how.coordinate_mode == "half_pixel_symmetric" else None
    return in_f, out_f, scale_f


def _source_position(
    b: KernelBuilder,
    how: Interpolation,
    position: SSAValue,
    sizes: tuple[SSAValue, SSAValue | None, SSAValue],
    half: Bound,
) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue]:
    """Output `position`'s source coordinate x, whether it is a pixel's, its ratio
    in (0, 1] past the pixel on its left, and the first of an even number (2 * `half`)
    of taps: half of them left of x, the pixel at x on the right."""
    f = _Float64(b)
    in_f, out_f, scale_f = sizes
    x = _source_coordinate(f, how, b.index_to_float(position, f64), in_f, out_f, scale_f)
    left = b.math(math.FloorOp, x)
    exact = b.compare("eq", x, left)
    ratio = b.select(exact, f.value(1.0), b.sub(x, left))
    half_f = f.value(float(half)) if isinstance(half, int) else b.index_to_float(half, f64)
    first = b.add(b.sub(left, half_f), b.select(exact, f.value(0.0), f.value(1.0)))
    return x, exact, ratio, first


def _clamped_index(b: KernelBuilder, offset: SSAValue, in_f: SSAValue) -> SSAValue:
    """A tap's input position clamped into [0, in - 1], as i64."""
    f = _Float64(b)
    return b.convert(b.min(b.max(offset, f.value(0.0)), b.sub(in_f, f.value(1.0))), i64)


def _store_extrapolated(b: KernelBuilder, x: SSAValue, in_f: SSAValue, flags: SSAValue, position: SSAValue) -> None:
    """tf_crop_and_resize: whether the source coordinate lies outside the input."""
    f = _Float64(b)
    outside = b.or_(b.compare("lt", x, f.value(0.0)), b.compare("gt", x, b.sub(in_f, f.value(1.0))))
    b.store(b.convert(outside, i64), flags, [position])


def _run_time_count_taps(
    top: KernelBuilder,
    in_size: Bound,
    out_size: Bound,
    scale: SSAValue,
    how: Interpolation,
    element: Attribute,
    taps: Bound,
) -> TapTables:
    """Antialias with a scale known at run time only: the filter, widened by
    1 / min(scale, 1), spans a run-time count of (an even number of) `taps`; each
    output position's weights are summed, then stored normalized (and renormalized
    without the taps outside the input, with exclude_outside), as `_weights` does
    for a count known at compile time."""
    stretch = top.min(scale, _Float64(top).value(1.0))
    half = top.div(taps, 2)
    tables, loop = _tables_and_loop(top, in_size, out_size, scale, how, element, taps, half)
    indices, weights, extrapolated = tables.indices, tables.weights, tables.extrapolated
    b, position, x, _, ratio, first, in_f = loop
    f = _Float64(b)

    def offset(inner: KernelBuilder, k: Bound) -> SSAValue:
        return inner.add(first, inner.index_to_float(inner.index(k), f64))

    def weight(inner: KernelBuilder, k: Bound) -> SSAValue:
        """The filter at tap k, before normalization."""
        position_k = inner.index_to_float(inner.sub(inner.add(k, 1), half), f64)
        distance = inner.mul(inner.sub(position_k, ratio), stretch)
        if how.mode == "linear":  # a triangle: clip(1 - |d|, 0, 1)
            return inner.max(inner.sub(_Float64(inner).value(1.0), inner.abs(distance)), _Float64(inner).value(0.0))
        return _cubic_kernel(_Float64(inner), how.cubic_a, distance)

    def kept(inner: KernelBuilder, k: Bound, value: SSAValue) -> SSAValue:
        """exclude_outside: 0 for a tap outside the input."""
        zero, at = _Float64(inner).value(0.0), offset(inner, k)
        inside = inner.and_(inner.compare("ge", at, zero), inner.compare("lt", at, in_f))
        return inner.select(inside, value, zero)

    def summed(value_of) -> SSAValue:
        return b.reduce([(0, taps)], f.value(0.0), lambda inner, ivs, acc: inner.add(acc, value_of(inner, ivs[0])))

    total = summed(weight)
    kept_total = None
    if how.exclude_outside:
        kept_total = summed(lambda inner, k: kept(inner, k, inner.div(weight(inner, k), total)))
        kept_total = b.select(b.compare("eq", kept_total, f.value(0.0)), f.value(1.0), kept_total)
    (k,), tap = b.for_nest([(0, taps)])
    value = tap.div(weight(tap, k), total)
    if kept_total is not None:
        value = tap.div(kept(tap, k, value), kept_total)
    tap.store(_clamped_index(tap, offset(tap, k), in_f), indices, [position, k])
    tap.store(tap.convert(value, element), weights, [position, k])
    if extrapolated is not None:
        _store_extrapolated(b, x, in_f, extrapolated, position)
    return TapTables(indices, weights, extrapolated)


class _Float64:
    """f64 constants and values for the run-time tap loop."""

    def __init__(self, builder: KernelBuilder):
        self.b = builder

    def value(self, value: Scale) -> SSAValue:
        return self.b.constant(value, f64) if isinstance(value, float) else value


def _source_coordinate(
    f: _Float64, how: Interpolation, y: SSAValue, in_f: SSAValue, out_f: SSAValue | None, scale: SSAValue
) -> SSAValue:
    """`resize.source_coordinates` of output position y (all f64; the output size
    `out_f` only for half_pixel_symmetric)."""
    b, mode, one = f.b, how.coordinate_mode, f.value(1.0)
    if mode == "asymmetric":
        return b.div(y, scale)
    if mode in ("half_pixel", "pytorch_half_pixel", "half_pixel_symmetric"):
        centered = b.sub(b.div(b.add(y, f.value(0.5)), scale), f.value(0.5))
        if mode == "half_pixel":
            return centered
        if mode == "half_pixel_symmetric":
            offset = b.mul(b.div(in_f, f.value(2.0)), b.sub(one, b.div(out_f, b.mul(scale, in_f))))
            return b.add(offset, centered)
    scaled = b.mul(scale, in_f)
    single = b.compare("eq", scaled, one)
    if mode == "pytorch_half_pixel":
        return b.select(single, f.value(-0.5), centered)
    if mode == "align_corners":
        return b.select(single, f.value(0.0), b.div(b.mul(y, b.sub(in_f, one)), b.sub(scaled, one)))
    if mode == "tf_crop_and_resize":
        start, end = how.roi
        span = b.mul(f.value(end - start), b.sub(in_f, one))
        spread = b.div(b.mul(b.mul(y, f.value(end - start)), b.sub(in_f, one)), b.sub(scaled, one))
        x = b.select(single, b.div(span, f.value(2.0)), spread)
        return b.add(x, b.mul(f.value(start), b.sub(in_f, one)))
    raise ValueError(mode)


def _rounds_right(f: _Float64, nearest_mode: str, ratio: SSAValue) -> SSAValue:
    """Whether nearest picks the right pixel at `ratio` past the left one (not at 1)."""
    b, half = f.b, f.value(0.5)
    if nearest_mode == "round_prefer_floor":
        return b.compare("gt", ratio, half)
    if nearest_mode == "round_prefer_ceil":
        return b.compare("ge", ratio, half)
    return b.constant(nearest_mode == "ceil", i1)


def _weights(f: _Float64, how: Interpolation, ratio: SSAValue, scale: Scale, taps: int) -> list[SSAValue]:
    """The taps' weights at `ratio` (the `resize` coefficient functions)."""
    b, one = f.b, f.value(1.0)
    if how.mode == "linear" and not how.antialias:
        return [b.sub(one, ratio), ratio]
    if how.mode == "cubic" and not how.antialias:
        distances = [b.add(ratio, one), ratio, b.sub(one, ratio), b.sub(f.value(2.0), ratio)]
        return [_cubic_kernel(f, how.cubic_a, d) for d in distances]
    stretch = min(scale, 1.0)
    start = 1 - taps // 2
    values = []
    for k in range(taps):
        distance = b.mul(b.sub(f.value(float(start + k)), ratio), f.value(stretch))
        if how.mode == "linear":  # a triangle: clip(1 - |d|, 0, 1)
            values.append(b.max(b.sub(one, b.abs(distance)), f.value(0.0)))
        else:
            values.append(_cubic_kernel(f, how.cubic_a, distance))
    total = values[0]
    for w in values[1:]:
        total = b.add(total, w)
    return [b.div(w, total) for w in values]


def _cubic_kernel(f: _Float64, a: float, x: SSAValue) -> SSAValue:
    """Keys' cubic convolution kernel (`resize._cubic_kernel`) at |x|."""
    b = f.b
    x = b.abs(x)
    square = b.mul(x, x)
    cube = b.mul(square, x)
    near = b.add(b.sub(b.mul(f.value(a + 2), cube), b.mul(f.value(a + 3), square)), f.value(1.0))
    far = b.sub(
        b.add(b.sub(b.mul(f.value(a), cube), b.mul(f.value(5 * a), square)), b.mul(f.value(8 * a), x)), f.value(4 * a)
    )
    inner = b.compare("le", x, f.value(1.0))
    within = b.compare("lt", x, f.value(2.0))
    return b.select(inner, near, b.select(within, far, f.value(0.0)))
