"""MaxPool, AveragePool, LpPool and the global pools over sliding windows."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects import math
from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, element_count, linearize, reshaped_view
from onnxc.passes.onnx_to_krnl.common import GraphLowering, dims_agree, lowers, shape_of
from onnxc.passes.onnx_to_krnl.windows import SlidingWindow, sliding_windows, statically_empty


def count_as_float(builder: KernelBuilder, ranges: Sequence[tuple[Bound, Bound]], element: Attribute) -> SSAValue:
    """Number of points in a box of index ranges, as a float scalar."""
    count: Bound = 1
    for low, high in ranges:
        count = builder.mul(count, builder.sub(high, low))
    if isinstance(count, int):
        return builder.constant(count, element)
    return builder.index_to_float(count, element)


def lower_pool(
    g: GraphLowering, op: OnnxOp, kind: str, windows: Sequence[SlidingWindow] | None = None, with_indices: bool = False
) -> None:
    """Max, average or Lp norm ("lp": (sum |x|^p)^(1/p), p from the op) over
    sliding windows of each (n, c) plane. `windows` defaults to those of the
    op's attributes (global pools pass whole planes). Padding never counts, except
    in the average's divisor with count_include_pad. `with_indices` (max): result 1
    is where each maximum is, see `_argmax_offset`."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=kind == "max")
    out = g.result(op)
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    if not input_sizes or not dims_agree(out_shape[:2], (batch, channels)):
        raise g.shape_error(op, f"input {list(shape_of(x))}, output {list(out_shape)}")
    if windows is None:
        kernel = op.attr("kernel_shape")
        if kernel is None or len(kernel) != len(input_sizes):
            raise g.shape_error(op, f"kernel_shape {kernel} for {len(input_sizes)} spatial dims")
        windows = sliding_windows(g, op, input_sizes, out_shape[2:], kernel, ceil_mode=bool(op.attr("ceil_mode")))

    # Max pools over small planes flat, else separably. The others row by row, unless strided
    # windows never reach past the input: then each output's window loops have constant bounds,
    # LLVM unrolls them, and the loop along the row vectorizes with interleaved loads (stride 2 row
    # by row: one strided load per loop, left scalar, 6x slower). Sizes known at run time only take
    # the same kernels where the windows' kernel and pads are constants (MaxPool 3x3 stride 2 of
    # 64 channels at 112x112: 6.1 ms one window at a time).
    strided_inside = windows[-1].stride > 1 and not any(w.clipped for w in windows)
    constant = all(isinstance(v, int) for w in windows for v in (w.kernel, w.pad_begin, w.pad_end))
    if (
        kind == "max"
        and constant
        and not with_indices
        and (_flat_max_pool(g, op, windows) or _separable_max_pool(g, op, windows))
    ):
        return
    if (
        constant and windows[-1].output_size != 1 and not with_indices and not strided_inside
    ):  # the row-wise kernel keeps no argmax
        pool_rows(g, op, kind, windows)
        return
    ivs, body = g.top.loop_nest(out_shape)
    n, c, *out_position = ivs
    starts = [w.start(body, o) for w, o in zip(windows, out_position)]
    ranges = [w.data_range(body, s) for w, s in zip(windows, starts)]
    combine = "max" if kind == "max" else "add"
    p = float(op.attr("p")) if kind == "lp" else None

    def accumulate(b: KernelBuilder, offsets: list[Bound], acc: SSAValue) -> SSAValue:
        positions = [w.position(b, s, k) for w, s, k in zip(windows, starts, offsets)]
        return b.binary(combine, acc, _powered(b, p, b.load(x, [n, c, *positions])))

    init = body.lowest(element) if kind == "max" else body.constant(0.0, element)
    result = body.reduce(ranges, init, accumulate)
    if kind == "average" and op.attr("count_include_pad"):
        ranges = [w.padded_range(body, s) for w, s in zip(windows, starts)]
    body.store(_finish(body, kind, p, result, ranges), out, ivs)
    if with_indices:
        offset = _argmax_offset(body, x, windows, starts, ranges, ivs, result, bool(op.attr("storage_order")))
        body.store(offset, g.result(op, 1), ivs)


def _powered(b: KernelBuilder, p: float | None, value: SSAValue) -> SSAValue:
    """|value|^p, the term an Lp pool sums (value itself for max and average)."""
    if p is None:
        return value
    return b.square(value) if p == 2 else b.math(math.PowFOp, b.abs(value), b.constant(p, value.type))


def _finish(
    b: KernelBuilder, kind: str, p: float | None, total: SSAValue, ranges: Sequence[tuple[Bound, Bound]]
) -> SSAValue:
    """A window's result from its max or sum: the average over the points of `ranges`, the p-th root."""
    if kind == "average":
        return b.div(total, count_as_float(b, ranges, total.type))
    if p is not None:
        return b.math(math.SqrtOp, total) if p == 2 else b.math(math.PowFOp, total, b.constant(1 / p, total.type))
    return total


def _argmax_offset(
    b: KernelBuilder,
    x: SSAValue,
    windows: Sequence[SlidingWindow],
    starts: Sequence[Bound],
    ranges: Sequence[tuple[Bound, Bound]],
    ivs: Sequence[SSAValue],
    maximum: SSAValue,
    column_major: bool,
) -> SSAValue:
    """The i64 offset in x of the first window element equal to `maximum` (-1 if
    none is, as for a NaN maximum): row-major over the whole tensor, or with
    storage_order 1 the (n, c) plane's offset plus a column-major offset in the plane."""
    batch, channels, *sizes = shape_of(x)
    n, c = ivs[:2]
    plane = b.mul(b.add(b.mul(n, channels), c), element_count(b, sizes))

    def first_hit(inner: KernelBuilder, offsets: list[Bound], found: SSAValue) -> SSAValue:
        positions = [w.position(inner, s, k) for w, s, k in zip(windows, starts, offsets)]
        hit = inner.and_(
            inner.compare("eq", inner.load(x, [n, c, *positions]), maximum),
            inner.compare("lt", found, inner.constant(0, i64)),
        )
        order = (positions[::-1], sizes[::-1]) if column_major else (positions, sizes)
        offset = inner.from_index(inner.add(plane, linearize(inner, *order)), i64)
        return inner.select(hit, offset, found)

    return b.reduce(ranges, b.constant(-1, i64), first_hit)


def pool_rows(g: GraphLowering, op: OnnxOp, kind: str, windows: Sequence[SlidingWindow]) -> None:
    """The pool of `lower_pool`, one output row at a time, so that it vectorizes:
    the row starts at the identity; per kernel offset (padding skipped by clipped
    ranges, as in the direct Conv) one loop along the row combines an input row
    (unit or constant stride) into it; a last pass along the row divides (average)
    or takes the root (Lp). Every output combines the same inputs in the same order
    as the one-window-at-a-time loop."""
    x, out = g.input(op, 0), g.buffers[op.results[0]]
    element = out.type.get_element_type()
    *outer_windows, row_window = windows
    row_ivs, body = g.top.loop_nest(shape_of(out)[:-1])
    n, c, *outer_position = row_ivs
    combine = "max" if kind == "max" else "add"
    p = float(op.attr("p")) if kind == "lp" else None
    init = body.lowest(element) if kind == "max" else body.constant(0.0, element)
    (column,), row_start = body.for_nest([(0, row_window.output_size)])
    row_start.store(init, out, [*row_ivs, column])

    starts = [w.start(body, o) for w, o in zip(outer_windows, outer_position)]
    ranges = [w.data_range(body, s) for w, s in zip(outer_windows, starts)]
    (*offsets, row_offset), tap = body.for_nest([*ranges, (0, row_window.kernel)])
    positions = [w.position(tap, s, k) for w, s, k in zip(outer_windows, starts, offsets)]
    shift = row_window.shift(tap, row_offset)
    (column,), point = tap.for_nest([row_window.output_range(tap, shift)])
    value = point.load(x, [n, c, *positions, point.sub(point.mul(column, row_window.stride), shift)])
    if p is not None:
        value = point.square(value) if p == 2 else point.math(math.PowFOp, point.abs(value), point.constant(p, element))
    partial = point.load(out, [*row_ivs, column])
    point.store(point.binary(combine, partial, value), out, [*row_ivs, column])
    if kind == "max":
        return

    (column,), end = body.for_nest([(0, row_window.output_size)])
    result = end.load(out, [*row_ivs, column])
    if kind == "average":
        column_start = row_window.start(end, column)
        if op.attr("count_include_pad"):
            counted = [w.padded_range(end, s) for w, s in zip(windows, [*starts, column_start])]
        else:
            counted = [*ranges, row_window.data_range(end, column_start)]
        result = end.div(result, count_as_float(end, counted, element))
    else:
        result = (
            end.math(math.SqrtOp, result) if p == 2 else end.math(math.PowFOp, result, end.constant(1 / p, element))
        )
    end.store(result, out, [*row_ivs, column])


FLAT_MAX_WIDTH = 64
"""Stride-1 max pools over planes up to this wide go flat (`_flat_max_pool`), without the row
by row kernel's scalar remainders; 3x3, pads 1, one thread, ms (by rows -> flat, onnxruntime):
832 channels of 7x7 0.146 -> 0.051 (0.040), 528 of 14x14 0.360 -> 0.067 (0.089), 192 of 28x28
0.154 -> 0.068 (0.122), 64 of 56x56 0.127 -> 0.112 (0.162). Wider planes keep a row buffer in L1."""


def _flat_max_pool(g: GraphLowering, op: OnnxOp, windows: Sequence[SlidingWindow]) -> bool:
    """A 2-D max pool of stride 1 whose output has the input's static size (pads summing to the
    kernel's extent less one) over planes up to FLAT_MAX_WIDTH wide, as separable passes along
    each flat H*W plane: down the window's rows, each kernel row's outputs a flat span of a
    plane shifted by whole rows; then along them, each kernel column's a span shifted by
    columns, wrapping around the rows' ends, after which the columns whose windows reach the
    padding (pads per row) are computed again over their valid taps. Every pass is a unit-stride
    loop over the plane, vectorized without per-row remainders. False where it does not apply."""
    if len(windows) != 2 or not all(w.static and w.stride == 1 and w.pad_begin % w.dilation == 0 for w in windows):
        return False  # (a begin padding of whole taps: one tap reads each window's own row and column)
    window_y, window_x = windows
    height, width = window_y.input_size, window_x.input_size
    if (window_y.output_size, window_x.output_size) != (height, width) or width > FLAT_MAX_WIDTH:
        return False
    x, out = g.input(op, 0), g.result(op)
    batch, channels = shape_of(x)[:2]
    plane = height * width
    b = g.top
    rows_max = alloc_shaped(b, out.type.get_element_type(), [batch, channels, plane])
    flat_x, flat_out = (reshaped_view(b, buffer, [batch, channels, plane]) for buffer in (x, out))
    (n, c), body = b.loop_nest([batch, channels])

    def combine(source: SSAValue, target: SSAValue, shifts: list[int]) -> None:
        """target[j] = source[j + shift] for the first shift (0: the whole plane), then its
        maximum with source[j + shift] for each other shift, over the j where that is in the plane."""
        for number, shift in enumerate(shifts):
            (j,), point = body.for_nest([(max(0, -shift), min(plane, plane - shift))])
            value = point.load(source, [n, c, point.add(j, shift)])
            if number:
                value = point.pool_max(point.load(target, [n, c, j]), value)
            point.store(value, target, [n, c, j])

    # The tap reading the window's own row (column) first: its span is the whole plane.
    row_taps = sorted(range(window_y.kernel), key=lambda ky: ky * window_y.dilation != window_y.pad_begin)
    column_taps = sorted(range(window_x.kernel), key=lambda kx: kx * window_x.dilation != window_x.pad_begin)
    combine(flat_x, rows_max, [(ky * window_y.dilation - window_y.pad_begin) * width for ky in row_taps])
    combine(rows_max, flat_out, [kx * window_x.dilation - window_x.pad_begin for kx in column_taps])
    for low, high, taps in window_x.runs():
        if taps == (0, window_x.kernel):
            continue  # every tap in the row: the flat pass got it right
        (oy, ox), point = body.for_nest([(0, height), (low, high)])
        start = point.add(point.mul(oy, width), ox)
        reads = [
            point.load(rows_max, [n, c, point.add(start, kx * window_x.dilation - window_x.pad_begin)])
            for kx in range(*taps)
        ]
        point.store(functools.reduce(point.pool_max, reads), flat_out, [n, c, start])
    return True


def _separable_max_pool(g: GraphLowering, op: OnnxOp, windows: Sequence[SlidingWindow]) -> bool:
    """A 2-D max pool as two 1-D ones, per output row: the maxima down the window's input rows
    into a row buffer of the padded width (its padding columns the lowest value, set once per
    plane), then each output the maximum of its KW reads of that row. The input is read once
    and nothing of its size is written (ResNet's 3x3 stride 2 over 64x112x112 copied its input
    into phase planes first: 0.64 ms, memory-bound; onnxruntime 0.19), and a window costs
    KH + KW maxima, not KH*KW. The row loops have unit stride (the column reads a constant
    one), so they vectorize. False where it does not apply (a kernel or begin padding known at
    run time only)."""
    if len(windows) != 2 or not all(w.constant_geometry for w in windows):
        return False
    window_y, window_x = windows
    x, out = g.input(op, 0), g.result(op)
    element = out.type.get_element_type()
    batch, channels, _, width = shape_of(x)
    out_h, out_w = shape_of(out)[2:]
    b = g.top
    lowest = b.lowest(element)
    # Buffer column j holds input column j - pad_begin; the last output's last tap reads
    # column (out_w - 1)*stride + (kernel - 1)*dilation of it (past the end padding with ceil_mode).
    image_end = b.add(width, window_x.pad_begin)
    reach = b.add(b.mul(b.sub(out_w, 1), window_x.stride), (window_x.kernel - 1) * window_x.dilation + 1)
    row_width = b.max(reach, image_end)
    rows = alloc_shaped(b, element, [batch, channels, row_width])
    (n, c), plane = b.loop_nest([batch, channels])
    for span in ((0, window_x.pad_begin), (image_end, row_width)):
        if statically_empty(span):
            continue
        (column,), fill = plane.for_nest([span])
        fill.store(lowest, rows, [n, c, column])
    (oy,), row = plane.for_nest([(0, out_h)])
    (column,), clear = row.for_nest([(0, width)])
    clear.store(lowest, rows, [n, c, clear.add(column, window_x.pad_begin)])
    start = window_y.start(row, oy)
    (ky,), tap = row.for_nest([window_y.data_range(row, start)])
    iy = window_y.position(tap, start, ky)
    (column,), point = tap.for_nest([(0, width)])
    at = [n, c, point.add(column, window_x.pad_begin)]
    point.store(point.pool_max(point.load(rows, at), point.load(x, [n, c, iy, column])), rows, at)
    (ox,), point = row.for_nest([(0, out_w)])
    first = point.mul(ox, window_x.stride)
    reads = [point.load(rows, [n, c, point.add(first, kx * window_x.dilation)]) for kx in range(window_x.kernel)]
    point.store(functools.reduce(point.pool_max, reads), out, [n, c, oy, ox])
    return True


@lowers("MaxPool", run_time_dims=True)
def lower_max_pool(g: GraphLowering, op: OnnxOp) -> None:
    lower_pool(g, op, "max", with_indices=len(op.results) > 1 and bool(op.results[1].uses))


@lowers("AveragePool", run_time_dims=True)
def lower_average_pool(g: GraphLowering, op: OnnxOp) -> None:
    lower_pool(g, op, "average")


@lowers("LpPool", run_time_dims=True)
def lower_lp_pool(g: GraphLowering, op: OnnxOp) -> None:
    lower_pool(g, op, "lp")


GLOBAL_POOL_KINDS = {"GlobalMaxPool": "max", "GlobalAveragePool": "average", "GlobalLpPool": "lp"}


@lowers(*GLOBAL_POOL_KINDS, run_time_dims=True)
def lower_global_pool(g: GraphLowering, op: OnnxOp) -> None:
    """A pool whose one window is the whole plane: each (n, c) plane reduced as one row of its
    H*W elements, its sum reassociable (`running_sum`), so that LLVM vectorizes along the row
    (nested loops over H and W with an in-order sum stayed scalar: 3.5x onnxruntime's time)."""
    x, out = g.input(op, 0), g.result(op)
    kind = GLOBAL_POOL_KINDS[op.OP_TYPE]
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=kind == "max")
    (batch, channels, *sizes), out_shape = shape_of(x), shape_of(out)
    if not sizes or not dims_agree(out_shape[:2], (batch, channels)):
        raise g.shape_error(op, f"input {list(shape_of(x))}, output {list(out_shape)}")
    plane = element_count(g.top, sizes)
    rows = reshaped_view(g.top, x, [batch, channels, plane])
    results = reshaped_view(g.top, out, [batch, channels])
    (n, c), body = g.top.loop_nest([batch, channels])
    p = float(op.attr("p")) if kind == "lp" else None

    def accumulate(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        value = _powered(b, p, b.load(rows, [n, c, ivs[0]]))
        return b.max(acc, value) if kind == "max" else b.running_sum(acc, value)

    init = body.lowest(element) if kind == "max" else body.constant(0.0, element)
    total = body.reduce([(0, plane)], init, accumulate)
    body.store(_finish(body, kind, p, total, [(0, plane)]), results, [n, c])
