"""RoiAlign: each output bin of each region of interest averages (or takes the
max of) bilinear samples on a regular grid inside the bin, as in Mask R-CNN.

The regions are input values, so the sample positions, and with
sampling_ratio 0 the number of samples per bin (ceil of the bin size), are
computed at run time; coordinates and weights are f64, as in the reference.
Input sizes known at run time only enter as f64 values computed before the loops.
"""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.dialects.builtin import f64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of
from onnxc.passes.onnx_to_krnl.grid_sample import Scalar, clamp, float_offset, float_value


class _Region:
    """One region's geometry along one axis (h or w), in input pixels."""

    def __init__(self, b: KernelBuilder, start: SSAValue, end: SSAValue, bins: Bound, half_pixel: bool, ratio: int):
        size = b.sub(end, start)
        if not half_pixel:  # malformed regions are forced to 1 pixel
            size = b.max(size, b.constant(1.0, f64))
        self.start = start
        self.bin_size = b.div(size, b.number(bins, f64))
        if ratio > 0:
            self.samples_float = b.constant(float(ratio), f64)
            self.samples: Bound = ratio
        else:
            samples = b.max(b.math(math.CeilOp, self.bin_size), b.constant(0.0, f64))
            self.samples_float = samples
            self.samples = b.to_index(samples)

    def coordinate(self, b: KernelBuilder, bin_index: SSAValue, sample: Bound) -> SSAValue:
        """start + bin * bin_size + (sample + 0.5) * bin_size / samples."""
        offset = b.add(b.index_to_float(b.index(sample), f64), b.constant(0.5, f64))
        within = b.div(b.mul(offset, self.bin_size), self.samples_float)
        return b.add(b.add(self.start, b.mul(b.index_to_float(bin_index, f64), self.bin_size)), within)


def _taps(b: KernelBuilder, position: SSAValue, last_pixel: Scalar) -> list[tuple[SSAValue, SSAValue]]:
    """The two (index, weight) taps of a position in [0, size] (clipped at 0; past
    the last pixel, at `last_pixel` = size - 1, both taps are the last pixel)."""
    position = b.max(position, b.constant(0.0, f64))
    last = float_value(b, last_pixel, f64)
    past_end = b.compare("ge", b.math(math.FloorOp, position), last)
    low = b.select(past_end, last, b.math(math.FloorOp, position))
    high = b.select(past_end, last, b.add(low, b.constant(1.0, f64)))
    fraction = b.sub(b.select(past_end, last, position), low)
    one = b.constant(1.0, f64)
    as_index = [b.to_index(clamp(b, v, 0.0, last_pixel)) for v in (low, high)]
    return [(as_index[0], b.sub(one, fraction)), (as_index[1], fraction)]


@lowers("RoiAlign", run_time_dims=True)
def lower_roi_align(g: GraphLowering, op: OnnxOp) -> None:
    x, rois, batch_indices, out = g.input(op, 0), g.input(op, 1), g.input(op, 2), g.result(op)
    element = g.same_element_type(op, [op.input(0), op.input(1), op.results[0]], ints=False)
    mode = op.attr("mode")
    # Not the schema's default before opset 16: RoiAlign-10 has no such attribute and
    # samples as output_half_pixel does (the attribute came with a different default).
    default_transformation = "half_pixel" if g.version(op) >= 16 else "output_half_pixel"
    transformation = op.attributes.get("coordinate_transformation_mode")
    transformation = op.attr("coordinate_transformation_mode") if transformation else default_transformation
    if mode not in ("avg", "max") or transformation not in ("half_pixel", "output_half_pixel"):
        raise g.unsupported(op, f"RoiAlign mode '{mode}' with coordinate_transformation_mode '{transformation}'")
    half_pixel = transformation == "half_pixel"
    ratio = int(op.attr("sampling_ratio"))
    scale = float(op.attr("spatial_scale"))
    batch, _, height, width = shape_of(x)
    _, _, out_height, out_width = shape_of(out)
    # Sizes as f64: constants, or values computed once where known at run time only.
    height_f, width_f, batch_f = (
        float(size) if isinstance(size, int) else g.top.index_to_float(size, f64) for size in (height, width, batch)
    )
    last_row, last_column = (float_offset(g.top, size, -1.0, f64) for size in (height_f, width_f))
    last_image = float_offset(g.top, batch_f, -1.0, f64)

    ivs, b = g.top.loop_nest(shape_of(out))
    n, c, bin_y, bin_x = ivs
    offset = b.constant(0.5 if half_pixel else 0.0, f64)

    def corner(k: int) -> SSAValue:
        return b.sub(b.mul(b.convert(b.load(rois, [n, k]), f64), b.constant(scale, f64)), offset)

    rows = _Region(b, corner(1), corner(3), out_height, half_pixel, ratio)
    columns = _Region(b, corner(0), corner(2), out_width, half_pixel, ratio)
    image = b.to_index(clamp(b, b.convert(b.load(batch_indices, [n]), f64), 0.0, last_image))
    zero = b.constant(0.0, f64)

    def sample(inner: KernelBuilder, offsets: list[Bound], acc: SSAValue) -> SSAValue:
        y = rows.coordinate(inner, bin_y, offsets[0])
        x_position = columns.coordinate(inner, bin_x, offsets[1])
        outside = inner.binary(
            "or",
            inner.binary(
                "or",
                inner.compare("lt", y, inner.constant(-1.0, f64)),
                inner.compare("gt", y, float_value(inner, height_f, f64)),
            ),
            inner.binary(
                "or",
                inner.compare("lt", x_position, inner.constant(-1.0, f64)),
                inner.compare("gt", x_position, float_value(inner, width_f, f64)),
            ),
        )
        terms = []
        for row, row_weight in _taps(inner, y, last_row):
            for column, column_weight in _taps(inner, x_position, last_column):
                pixel = inner.convert(inner.load(x, [image, c, row, column]), f64)
                terms.append(inner.mul(inner.mul(row_weight, column_weight), pixel))
        combine = "add" if mode == "avg" else "max"
        value = terms[0]
        for term in terms[1:]:
            value = inner.binary(combine, value, term)
        value = inner.select(outside, zero, value)
        return inner.binary(combine, acc, value)

    init = zero if mode == "avg" else b.constant(float("-inf"), f64)
    result = b.reduce([(0, rows.samples), (0, columns.samples)], init, sample)
    count = b.mul(rows.samples_float, columns.samples_float)
    if mode == "avg":
        result = b.div(result, b.max(count, b.constant(1.0, f64)))
    else:  # no samples: 0
        result = b.select(b.compare("gt", count, zero), result, zero)
    b.store(b.convert(result, element), out, ivs)
