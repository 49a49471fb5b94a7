"""GridSample and AffineGrid (the grid an affine transform gives).

GridSample samples an (N, C, D1..Dk) input at the normalized positions of a
grid, by nearest, (multi)linear or (multi)cubic interpolation, with zeros,
border or reflection padding; any number of spatial dims.

Unlike Resize, whose source positions are static and go into constant tables,
the positions here are input values: each output element computes its own
taps (input positions and weights per spatial dim) and sums the weighted
pixels over their product. Every tap index is clamped into the input before
it is loaded, so even NaN or huge grid values never read out of bounds.
Spatial sizes known at run time only enter as float values computed once
before the loops (static ones stay constants).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import f32, f64
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_buffer, dims_agree, lowers, shape_of, shape_text

MODES = {"linear": "linear", "bilinear": "linear", "nearest": "nearest", "cubic": "cubic", "bicubic": "cubic"}
"""Mode names of opset 20 and later, and their opset-16 spellings."""

PADDING_MODES = ("zeros", "border", "reflection")

CUBIC_A = -0.75
"""Keys' cubic convolution parameter GridSample uses (as PyTorch)."""

Scalar = float | SSAValue
"""A float known at compile time, or a float value computed at run time (from a size)."""


def float_value(b: KernelBuilder, value: Scalar, element: Attribute) -> SSAValue:
    return b.constant(value, element) if isinstance(value, float) else value


def float_offset(b: KernelBuilder, value: Scalar, offset: float, element: Attribute) -> Scalar:
    """value + offset, folded when value is known at compile time."""
    if isinstance(value, float):
        return value + offset
    return b.add(value, b.constant(offset, element))


@dataclass
class Tap:
    """One input position read along a spatial dim: its index (clamped into the
    dim), its weight (None for nearest) and, with zeros padding, whether it is
    inside the input (None when it always is)."""

    index: SSAValue
    weight: SSAValue | None
    inside: SSAValue | None


def clamp(b: KernelBuilder, value: SSAValue, low: Scalar, high: Scalar) -> SSAValue:
    """value clamped into [low, high], NaN mapped to low (a safe index)."""
    low_value, high_value = float_value(b, low, value.type), float_value(b, high, value.type)
    value = b.select(b.compare("ge", value, low_value), value, low_value)
    return b.select(b.compare("le", value, high_value), value, high_value)


def reflect(b: KernelBuilder, x: SSAValue, low: Scalar, high: Scalar) -> SSAValue:
    """x reflected by the borders [low, high] until it is inside (as PyTorch)."""
    element = x.type
    low_value, high_value = float_value(b, low, element), float_value(b, high, element)
    below, above = b.compare("lt", x, low_value), b.compare("gt", x, high_value)
    distance = b.select(below, b.sub(low_value, x), b.sub(x, high_value))
    both_known = isinstance(low, float) and isinstance(high, float)
    span = b.constant(high - low, element) if both_known else b.sub(high_value, low_value)
    flips = b.math(math.FloorOp, b.div(distance, span))
    rest = b.sub(distance, b.mul(flips, span))
    half_flips = b.math(math.FloorOp, b.mul(flips, b.constant(0.5, element)))
    even = b.compare("eq", flips, b.mul(half_flips, b.constant(2.0, element)))
    from_low, from_high = b.add(low_value, rest), b.sub(high_value, rest)
    reflected_below = b.select(even, from_low, from_high)
    reflected_above = b.select(even, from_high, from_low)
    return b.select(below, reflected_below, b.select(above, reflected_above, x))


def _cubic_weights(b: KernelBuilder, t: SSAValue) -> list[SSAValue]:
    """Keys' kernel at distances t+1, t, 1-t, 2-t from the four taps (0 <= t < 1)."""
    one = b.constant(1.0, t.type)
    a = CUBIC_A

    def near(s: SSAValue) -> SSAValue:  # |s| <= 1: ((a+2)s - (a+3)) s^2 + 1
        inner = b.sub(b.mul(b.constant(a + 2, t.type), s), b.constant(a + 3, t.type))
        return b.add(b.mul(inner, b.mul(s, s)), one)

    def far(s: SSAValue) -> SSAValue:  # 1 < |s| < 2: ((a s - 5a) s + 8a) s - 4a
        inner = b.sub(b.mul(b.constant(a, t.type), s), b.constant(5 * a, t.type))
        return b.sub(b.mul(b.add(b.mul(inner, s), b.constant(8 * a, t.type)), s), b.constant(4 * a, t.type))

    one_minus_t = b.sub(one, t)
    return [far(b.add(t, one)), near(t), near(one_minus_t), far(b.add(one_minus_t, one))]


class SamplingAxis:
    """Sampling along one spatial dim of `size` elements (its float value made by
    `b`, before the loops, where the size is known at run time only)."""

    def __init__(self, b: KernelBuilder, size: Bound, align_corners: bool, padding: str, element: Attribute):
        self.size: Scalar = float(size) if isinstance(size, int) else b.index_to_float(size, element)
        self.last = float_offset(b, self.size, -1.0, element)
        self.align_corners = align_corners
        self.padding = padding
        # The range a coordinate is reflected into: pixel centers, or pixel edges.
        self.low, self.high = (0.0, self.last) if align_corners else (-0.5, float_offset(b, self.size, -0.5, element))

    def coordinate(self, b: KernelBuilder, normalized: SSAValue, nearest: bool) -> SSAValue:
        """The input coordinate of a grid value in [-1, 1], padded per the mode."""
        element = normalized.type
        one, half = b.constant(1.0, element), b.constant(0.5, element)
        shifted = b.add(normalized, one)
        if self.align_corners:
            x = b.mul(b.mul(shifted, half), float_value(b, self.last, element))
        else:
            x = b.mul(b.sub(b.mul(shifted, float_value(b, self.size, element)), one), half)
        if nearest:
            x = b.math(math.RoundEvenOp, x)
        if self.padding == "border":
            below = b.compare("lt", x, float_value(b, self.low, element))
            outside = b.binary("or", below, b.compare("gt", x, float_value(b, self.high, element)))
            return b.select(outside, clamp(b, x, 0.0, self.last), x)
        if self.padding == "reflection":
            return reflect(b, x, self.low, self.high)
        return x

    def tap(self, b: KernelBuilder, position: SSAValue, weight: SSAValue | None) -> Tap:
        """The tap at an integral float position, mapped into the input per the padding mode."""
        inside = None
        if self.padding == "zeros":
            inside = b.and_(
                b.compare("ge", position, b.constant(0.0, position.type)),
                b.compare("le", position, float_value(b, self.last, position.type)),
            )
        elif self.padding == "reflection":
            position = reflect(b, position, self.low, self.high)
        index = b.to_index(clamp(b, position, 0.0, self.last))
        return Tap(index, weight, inside)

    def taps(self, b: KernelBuilder, x: SSAValue, mode: str) -> list[Tap]:
        if mode == "nearest":
            return [self.tap(b, b.math(math.TruncOp, x), None)]
        left = b.math(math.FloorOp, x)
        t = b.sub(x, left)
        if mode == "linear":
            weights, first = [b.sub(b.constant(1.0, x.type), t), t], 0
        else:
            weights, first = _cubic_weights(b, t), -1
        return [self.tap(b, b.add(left, b.constant(float(first + k), x.type)), w) for k, w in enumerate(weights)]


def compute_type(element: Attribute) -> Attribute:
    """16-bit floats are interpolated in f32, as the reference implementations do."""
    return f32 if element.bitwidth == 16 else element


@lowers("GridSample", run_time_dims=True)
def lower_grid_sample(g: GraphLowering, op: OnnxOp) -> None:
    x, grid = g.input(op, 0), g.input(op, 1)
    element = g.element_type(op, op.input(0), ints=False)
    g.element_type(op, op.input(1), ints=False)
    out = g.result(op)
    mode_name = op.attr("mode")
    padding = op.attr("padding_mode")
    if mode_name not in MODES or padding not in PADDING_MODES:
        raise g.unsupported(op, f"GridSample mode '{mode_name}' with padding_mode '{padding}'")
    mode = MODES[mode_name]
    align_corners = bool(op.attr("align_corners"))
    (batch, channels, *sizes), out_shape = shape_of(x), shape_of(out)
    rank = len(sizes)
    if not dims_agree(shape_of(grid), (batch, *out_shape[2:], rank)) or not dims_agree(
        out_shape[:2], (batch, channels)
    ):
        shapes = (shape_text(shape_of(x)), shape_text(shape_of(grid)), shape_text(out_shape))
        raise g.shape_error(op, "input {}, grid {}, output {}".format(*shapes))
    compute = compute_type(element)
    axes = [SamplingAxis(g.top, size, align_corners, padding, compute) for size in sizes]

    ivs, b = g.top.loop_nest(out_shape)
    n, _, *position = ivs
    taps = []
    for dim, axis in enumerate(axes):
        # The grid lists coordinates innermost dim first: (x, y[, z]).
        normalized = b.convert(b.load(grid, [n, *position, rank - 1 - dim]), compute)
        taps.append(axis.taps(b, axis.coordinate(b, normalized, mode == "nearest"), mode))
    total = None
    zero = b.constant(0.0, compute)
    for combination in itertools.product(*taps):
        value = b.convert(b.load(x, [n, ivs[1], *(t.index for t in combination)]), compute)
        inside = [t.inside for t in combination if t.inside is not None]
        if inside:
            condition = inside[0]
            for other in inside[1:]:
                condition = b.and_(condition, other)
            value = b.select(condition, value, zero)
        for weight in (t.weight for t in combination if t.weight is not None):
            value = b.mul(weight, value)
        total = value if total is None else b.add(total, value)
    b.store(b.convert(total, element), out, ivs)


def base_coordinates(size: int, align_corners: bool) -> np.ndarray:
    """The normalized coordinate of each position along a dim of `size`: pixel
    centers in [-1, 1], the ends at the outer pixels' centers (align_corners)
    or edges (as PyTorch's affine_grid)."""
    if align_corners:
        return np.linspace(-1.0, 1.0, size)
    return (2 * np.arange(size) + 1) / size - 1


@lowers("AffineGrid", run_time_dims=True)
def lower_affine_grid(g: GraphLowering, op: OnnxOp) -> None:
    """grid[n, d..., i] = theta[n, i, :] . (x, y[, z], 1) at each output position,
    in f64. The output shape is the result's: `size` is not read. The batch may be
    known at run time only; the spatial sizes are static (shape inference gives no
    symbolic grid for a size computed at run time)."""
    theta, out = g.input(op, 0), g.result(op)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    batch, *sizes, rank = shape_of(out)
    if rank != len(sizes) or not dims_agree(shape_of(theta), (batch, rank, rank + 1)):
        raise g.shape_error(op, f"theta {shape_text(shape_of(theta))} for a grid of shape {shape_text(shape_of(out))}")
    if not all(isinstance(size, int) for size in sizes):
        raise g.unsupported(op, f"a grid of sizes known at run time only ({shape_text(sizes)})")
    align_corners = bool(op.attr("align_corners"))
    # Component j of a position is its coordinate along spatial dim rank - 1 - j.
    bases = [constant_buffer(g.top, base_coordinates(size, align_corners), f64) for size in reversed(sizes)]

    ivs, b = g.top.loop_nest([batch, *sizes])
    n, *position = ivs
    coordinates = [b.load(base, [position[rank - 1 - j]]) for j, base in enumerate(bases)]
    for i in range(rank):
        total = b.convert(b.load(theta, [n, i, rank]), f64)
        for j, coordinate in enumerate(coordinates):
            total = b.add(total, b.mul(b.convert(b.load(theta, [n, i, j]), f64), coordinate))
        b.store(b.convert(total, element), out, [*ivs, i])
