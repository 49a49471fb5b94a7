"""Conv: a GEMM kernel (krnl.matmul) for 2-D convolutions with constant weights,
with a following BatchNormalization folded into the weights and a following
Relu/Clip applied in the kernel's store; a depthwise or grouped conv of few channels per
group along the shifted rows of its zero-padded (phase) planes, read straight from its input
at a stride, or (depthwise over small images) with its channels in the vector lanes
(depthwise_lanes.py), a following Relu/Clip or HardSwish (in lanes also SiLU) computed in
its store (conv_epilogue.py); otherwise a direct convolution,
row-vectorizable, padding by clipped loop ranges; float16/bfloat16 accumulate in float32."""

from __future__ import annotations

import math as pymath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects import math
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, f32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, reshaped_view
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    Operand,
    dims_agree,
    elementwise,
    lowers,
    shape_of,
    shape_text,
)
from onnxc.passes.onnx_to_krnl.conv_epilogue import Epilogue, conv_epilogue
from onnxc.passes.onnx_to_krnl.depthwise_lanes import depthwise_in_lanes, fits_lanes, lanes_of
from onnxc.passes.onnx_to_krnl.matmul_kernel import lower_conv_as_gemm
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, SlidingWindow, sliding_windows

MAX_GROUP_TERMS = 72
"""A grouped conv takes the shifted-rows path (its reads and weights in registers) when an output
sums at most this many products (ResNeXt's 3x3 groups of 8 channels); depthwise convs always do."""
OUTPUTS_PER_PASS = 4
"""Outputs of a group computed together, sharing their reads (registers for 4 sums and a read)."""
STRIDED_MIN_ROW = 20
STRIDED_MAX_KERNEL = 3
"""A strided conv of few channels per group reads x straight (`strided_grouped_conv`) when its output
rows are this long and its kernel this narrow: 144 channels of 40x40, 3x3 stride 2: 0.061 ->
0.028 ms; rows of 14 stay scalar (0.034 -> 0.090 ms); for 5x5 windows LLVM gathers part of the
stride-2 reads (72 channels of 56x56: 0.074 -> 0.088 ms)."""
VECTOR_COLUMNS = 16
"""Along wide rows, the loop runs over a multiple of this many columns (every vector width we
target divides it), reading zeros past the planes and writing columns the compaction drops:
LLVM's scalar remainder was most of the work for short planes (61 columns: 3 vectors and 13
scalar iterations of 25 taps)."""
SHORT_ROW = 32
"""Output rows up to this long take the depthwise conv along wide rows: row by row, their scalar
tails are much of the work (a 14-wide row: 0.048 -> 0.028 ms for 64 channels); longer rows
vectorize well as they are, and the compaction copy would cost more (112-wide: 0.33 -> 0.48 ms)."""
ROW_BLOCK = 4
"""Kernels of more than ROW_BY_ROW_MAX_TAPS taps go along the wide rows this many output rows
at a time, each read of a plane row serving the taps of every output row it lies under: a 7x7
kernel loads KH + 3 = 10 rows of 7 taps for 4 outputs instead of 4 x 49 loads, and reloads
its spilled weights once per 4 (96 channels of 56x56, one thread, against onnxruntime: 2.0 ->
1.35-1.45; 2 rows 1.63, 3 1.44, 6 1.40, 8 1.35; on AVX2 2.9 -> 1.76, 2 rows 2.09)."""
ROW_BY_ROW_MAX_TAPS = 9
"""Kernels of more taps take the wide rows at any row length: against 25-49 taps per output the
compaction is cheap, the scalar tails of rows are not (ConvNeXt's 7x7 over 40-wide rows:
0.338 -> 0.226 ms for 96 channels, 56-wide 0.860 -> 0.432)."""


@lowers("Conv", run_time_dims=True)
def lower_conv(g: GraphLowering, op: OnnxOp) -> None:
    """The GEMM kernel where it applies (see `lower_conv_as_gemm`; over an image of
    run-time size too; 1-D convs are 2-D ones by then, see passes/conv1d_as_2d.py), else for
    few channels per group the strided conv read straight from x (`_reads_strided`), a depthwise
    conv over a small image with its channels in the lanes (`lanes_of`), or the shifted-rows conv
    (along wide rows for short rows, decided at run time where the row length is known then
    only), else direct convolution."""
    if lower_conv_as_gemm(g, op):
        return
    g.same_element_type(op, [v for v in onnx_inputs(op) if v is not None], ints=False)
    x, weights, bias = g.input(op, 0), g.input(op, 1), g.input(op, 2)
    (_, channels, *input_sizes), (out_channels, group_channels, *kernel) = shape_of(x), shape_of(weights)
    group = op.attr("group")
    few_channels = (
        group > 1
        and all(isinstance(d, int) for d in (channels, out_channels, group_channels, *kernel))
        and channels == group * group_channels
        and out_channels % group == 0
        and (group_channels == 1 or group_channels * pymath.prod(kernel) <= MAX_GROUP_TERMS)
        and isinstance(op.results[0].type.get_element_type(), Float32Type)
        and len(kernel) == 2
        and (bias is None or shape_of(bias) == (out_channels,))
    )
    windows = sliding_windows(g, op, input_sizes, g.tensor_shape(op, op.results[0])[2:], kernel) if few_channels else []
    shifted = ShiftedRows.of(windows, g.top, strided=True) if few_channels else None
    if shifted is None:
        direct_conv(g, op, x, weights, bias, g.result(op))
        return
    # A following Relu/Clip, other element-wise op or SiLU is computed in the store (MobileNets'
    # ReLU6, HardSwish or SiLU after each depthwise conv).
    strided = _reads_strided(g.top, windows)
    lanes = lanes_of(g, op, windows) if strided is not True else None
    # Of a run-time size, strided: the lanes take what is not read straight (see MAX_ROW).
    in_lanes = False if lanes is None else not isinstance(strided, bool) or fits_lanes(g.top, x, windows)
    out, epilogue = conv_epilogue(g, op, math_functions=in_lanes is not False)
    # The strided conv's runs of outputs outside its branch, whose one op is then its nest.
    runs = None if isinstance(strided, bool) else [w.edge_runs(g.top) for w in windows]
    long_rows = not isinstance(in_lanes, bool) and all(w.stride == 1 for w in windows)  # short: in lanes
    paths = {
        "strided": lambda: strided_grouped_conv(g, x, weights, bias, out, windows, epilogue, runs),
        "lanes": lambda: depthwise_in_lanes(g, op, x, out, windows, lanes, epilogue),
        "shifted": lambda: _over_shifted_rows(g, x, weights, bias, out, shifted, epilogue, long_rows),
    }
    if isinstance(strided, bool) and isinstance(in_lanes, bool):
        paths["strided" if strided else "lanes" if in_lanes else "shifted"]()
        return
    first, condition = ("lanes", in_lanes) if isinstance(strided, bool) else ("strided", strided)
    rest = "lanes" if in_lanes is True else "shifted"
    for name, taken in ((first, condition), (rest, g.top.not_(condition))):
        with g.lowering_at(g.top.if_then(taken)):
            paths[name]()


def _over_shifted_rows(
    g: GraphLowering,
    x: SSAValue,
    weights: SSAValue,
    bias: SSAValue | None,
    out: SSAValue,
    shifted: ShiftedRows,
    epilogue: Epilogue | None,
    long_rows: bool = False,
) -> None:
    """The grouped conv over x's (phase) planes: row by row, or along the wide rows where
    they are short (decided at run time where the row length is known then only, unless the
    rows are `long_rows`: the short ones went to the lanes)."""
    kernel = shape_of(weights)[2:]
    # Row blocks read up to a run of VECTOR_COLUMNS past a last row wider than the planes'.
    slack = VECTOR_COLUMNS + kernel[1] if _row_blocks(shifted, kernel) else VECTOR_COLUMNS - 1
    planes = shifted.planes(g, x, slack=slack)
    row = shifted.window_x.output_size
    if isinstance(row, int) or long_rows or pymath.prod(kernel) > ROW_BY_ROW_MAX_TAPS:
        long_rows = long_rows or (isinstance(row, int) and row > SHORT_ROW)
        by_rows = long_rows and pymath.prod(kernel) <= ROW_BY_ROW_MAX_TAPS
        shifted_grouped_conv(g, planes, weights, bias, out, shifted, by_rows=by_rows, epilogue=epilogue)
        return
    short = g.top.compare_index("sle", row, SHORT_ROW)
    for by_rows, condition in ((False, short), (True, g.top.not_(short))):
        with g.lowering_at(g.top.if_then(condition)):
            shifted_grouped_conv(g, planes, weights, bias, out, shifted, by_rows=by_rows, epilogue=epilogue)


@dataclass(frozen=True)
class _GroupPass:
    """The body of a nest over (n, group, pass) of a grouped conv: the up to OUTPUTS_PER_PASS
    output channels it computes, its group's input channels, their taps (c, ky, kx) and each
    output's weights for them (loaded once), and each output's bias."""

    n: SSAValue
    body: KernelBuilder
    outputs: list[Bound]
    inputs: list[Bound]
    taps: list[tuple[int, int, int]]
    tap_weights: list[list[SSAValue]]
    biases: list[SSAValue]

    @staticmethod
    def nest(g: GraphLowering, batch: Bound, channels: int, weights: SSAValue, bias: SSAValue | None) -> _GroupPass:
        out_channels, group_channels, kernel_h, kernel_w = shape_of(weights)
        groups = channels // group_channels
        per_group = out_channels // groups
        per_pass = max(d for d in range(1, OUTPUTS_PER_PASS + 1) if per_group % d == 0)
        passes = per_group // per_pass
        (n, group, *part), body = g.top.loop_nest([batch, groups, *([passes] if passes > 1 else [])])
        first = body.mul(group, per_group)
        if part:
            first = body.add(first, body.mul(part[0], per_pass))
        outputs = [body.add(first, j) for j in range(per_pass)]
        taps = [(c, ky, kx) for c in range(group_channels) for ky in range(kernel_h) for kx in range(kernel_w)]
        first_input = body.mul(group, group_channels)
        inputs = [body.add(first_input, c) for c in range(group_channels)]
        tap_weights = [[body.load(weights, [m, *tap]) for tap in taps] for m in outputs]
        biases = [body.load(bias, [m]) if bias is not None else body.constant(0.0, f32) for m in outputs]
        return _GroupPass(n, body, outputs, inputs, taps, tap_weights, biases)

    @property
    def channels(self) -> range:
        """The indices into `inputs` of the group's input channels."""
        return range(len(self.inputs))

    def sums(
        self, point: KernelBuilder, reads: Iterable[tuple[int, SSAValue]], totals: list[SSAValue] | None = None
    ) -> list[SSAValue]:
        """Each output's `totals` (default: its bias) plus its taps' products, `reads` yielding
        (tap index, value) as each read is made, by fused multiply-adds in tap order, the
        outputs sharing each read (partial sums, to shorten a chain of 49 dependent FMAs, ran
        slower: the weights spill)."""
        totals = self.biases if totals is None else totals
        for k, read in reads:
            totals = [point.math(math.FmaOp, read, w[k], total) for total, w in zip(totals, self.tap_weights)]
        return totals

    def store(
        self, point: KernelBuilder, totals: list[SSAValue], target: SSAValue, at, epilogue: Epilogue | None = None
    ) -> None:
        """Each output's total, through `epilogue` if given, at `at(m)`."""
        for m, total in zip(self.outputs, totals):
            point.store(epilogue(point, total, m) if epilogue is not None else total, target, at(m))


def _row_blocks(shifted: ShiftedRows, kernel: Sequence[Bound]) -> bool:
    """Whether the wide rows go ROW_BLOCK output rows at a time (see `shifted_grouped_conv`):
    kernels of many taps over undilated stride-1 planes of known size with columns to drop
    (each row is computed over a multiple of VECTOR_COLUMNS columns, into those the
    compaction drops), where that rounding adds at most half to the row (192 channels of
    20x20, rows of 26 computed 32 wide: 2.42 -> 1.79 of onnxruntime's time; 480 of 14x14
    under 5x5, rows of 18 computed 32 wide, 1.30 -> 1.53)."""
    sizes = (shifted.height, shifted.width, shifted.window_y.output_size)
    return (
        shifted.phases == 1
        and shifted.window_y.dilation == 1
        and shifted.drops_columns
        and pymath.prod(kernel) > ROW_BY_ROW_MAX_TAPS
        and all(isinstance(v, int) for v in sizes)
        and shifted.window_y.output_size >= ROW_BLOCK
        and -shifted.width % VECTOR_COLUMNS * 2 <= shifted.width
    )


def shifted_grouped_conv(
    g: GraphLowering,
    planes: SSAValue,
    weights: SSAValue,
    bias: SSAValue | None,
    out: SSAValue,
    shifted: ShiftedRows,
    *,
    by_rows: bool,
    epilogue: Epilogue | None = None,
) -> None:
    """A conv of few input channels per group (depthwise ones: one; ResNeXt's: 4 to 8)
    over the zero-padded planes of its input (see ShiftedRows; phase planes for a stride):
    each output sums its group's KH*KW shifted reads of each channel, each times its
    weight, in registers, with unit stride and no padding branches; up to
    OUTPUTS_PER_PASS outputs of a group share the reads. Short rows go along the wide rows
    of a plane (row by row, the 7- to 28-wide rows of mobile nets left much of the work to
    scalar tails; kernels of many taps ROW_BLOCK rows at a time), long ones row by row,
    straight into `out`. The sums of `direct_conv` in its order, each product added by a
    fused multiply-add (rounded once, as onnxruntime's kernels do); then `epilogue` (of a total
    and its output channel: the element stored, of `out`'s type; the wide rows are of it too)."""
    batch, channels = shape_of(planes)[:2]
    out_channels, _, kernel_h, kernel_w = shape_of(weights)
    out_h, out_w = shape_of(out)[2:]
    wide, columns, width = None, shifted.columns, shifted.width
    blocks = not by_rows and _row_blocks(shifted, (kernel_h, kernel_w))
    if not by_rows:  # without columns to drop, the wide rows are out itself
        compact = shifted.drops_columns
        if compact and isinstance(columns, int) and _slack(planes, shifted) >= -columns % VECTOR_COLUMNS:
            columns += -columns % VECTOR_COLUMNS
        block_width = width + -width % VECTOR_COLUMNS if blocks else 0
        wide_shape = [batch, out_channels, (out_h - 1) * width + block_width if blocks else columns]
        element = out.type.get_element_type()
        wide = alloc_shaped(g.top, element, wide_shape) if compact else reshaped_view(g.top, out, wide_shape)
    group_pass = _GroupPass.nest(g, batch, channels, weights, bias)
    body, n = group_pass.body, group_pass.n
    rows = ROW_BLOCK if blocks else 1
    plane_rows = [(ky, kx) for ky in range(kernel_h + rows - 1) for kx in range(kernel_w)]
    offsets = {(ky, kx): shifted.offset(body, ky, kx) for ky, kx in plane_rows}
    if by_rows:
        (oy, ox), point = body.for_nest([(0, out_h), (0, out_w)])
        first = point.add(point.mul(oy, width), ox)
    elif blocks:
        # Output rows from first on (a last block past the end starts ROW_BLOCK rows before it,
        # recomputing some): each read of plane row ky serves the taps of row ky - row of
        # output row first + row (KH + ROW_BLOCK - 1 rows of loads for ROW_BLOCK outputs).
        (block, column), point = body.for_nest([(0, -(-out_h // ROW_BLOCK)), (0, block_width)])
        first_row = point.min(point.mul(block, ROW_BLOCK), out_h - ROW_BLOCK)
        first = point.add(point.mul(first_row, width), column)
    else:
        (first,), point = body.for_nest([(0, columns)])
    tap_index = {tap: k for k, tap in enumerate(group_pass.taps)}
    totals = [group_pass.biases] * rows
    for c in group_pass.channels:
        for ky, kx in plane_rows:
            read = point.load(planes, [n, group_pass.inputs[c], point.add(first, offsets[ky, kx])])
            for row in range(rows):
                if 0 <= ky - row < kernel_h:
                    totals[row] = group_pass.sums(point, [(tap_index[c, ky - row, kx], read)], totals[row])
    for row, row_totals in enumerate(totals):
        if by_rows:
            group_pass.store(point, row_totals, out, lambda m: [n, m, oy, ox], epilogue)
        else:
            column = point.add(first, row * width) if row else first
            group_pass.store(point, row_totals, wide, lambda m, column=column: [n, m, column], epilogue)
    if not by_rows and shifted.drops_columns:
        shifted.compact(g, wide, out)


def _reads_strided(b: KernelBuilder, windows: Sequence[SlidingWindow]) -> bool | SSAValue:
    """Whether `strided_grouped_conv` is the faster path (see STRIDED_MIN_ROW): for an output row
    of run-time length, whether it is that long, a condition decided at run time."""
    window_y, window_x = windows
    if not (
        all(w.constant_geometry and w.dilation == 1 for w in windows)
        and (window_y.stride > 1 or window_x.stride > 1)
        and window_x.kernel <= STRIDED_MAX_KERNEL
    ):
        return False
    if isinstance(window_x.output_size, int):
        return window_x.output_size >= STRIDED_MIN_ROW and all(w.static for w in windows)
    return b.compare_index("sge", window_x.output_size, STRIDED_MIN_ROW)


def _slack(planes: SSAValue, shifted: ShiftedRows) -> int:
    """How many elements the planes hold past each channel's phase planes (zeros, see
    ShiftedRows.planes); 0 where sizes are known at run time only."""
    size = shape_of(planes)[2]
    if not all(isinstance(v, int) for v in (size, shifted.height, shifted.width)):
        return 0
    return size - shifted.height * shifted.width * shifted.phases


def strided_grouped_conv(
    g: GraphLowering,
    x: SSAValue,
    weights: SSAValue,
    bias: SSAValue | None,
    out: SSAValue,
    windows: Sequence[SlidingWindow],
    epilogue: Epilogue | None = None,
    runs: list[list] | None = None,
) -> None:
    """A strided conv of few input channels per group read straight from x:
    the outputs are split into runs of rows and of columns whose windows read the same
    kernel offsets (the edges, whose others fall in the padding, and the inside), and each
    run's outputs sum those taps in registers as `shifted_grouped_conv` does; along the
    inside columns the reads have the conv's stride (interleaved loads). Phase planes cost
    a copy of x, more than the conv itself (144 channels of 56x56 at stride 2: 70 us of
    104). `epilogue` as in `shifted_grouped_conv`."""
    batch, channels = shape_of(x)[:2]
    window_y, window_x = windows
    static = all(w.static for w in windows)
    row_runs, column_runs = runs or [(w.runs() if static else w.edge_runs(g.top)) for w in windows]
    zero = g.top.constant(0.0, f32)
    group_pass = _GroupPass.nest(g, batch, channels, weights, bias)
    body, n = group_pass.body, group_pass.n
    for row_low, row_high, row_reads, *row_checked in row_runs:
        for column_low, column_high, column_reads, *column_checked in column_runs:
            (oy, ox), point = body.for_nest([(row_low, row_high), (column_low, column_high)])
            top, left = window_y.start(point, oy), window_x.start(point, ox)
            rows = {ky: _Read.of(point, window_y, top, ky, row_checked) for ky in range(*row_reads)}
            columns = {kx: _Read.of(point, window_x, left, kx, column_checked) for kx in range(*column_reads)}
            reads = (
                (k, _Read.load(point, x, [n, group_pass.inputs[c]], rows[ky], columns[kx], zero))
                for k, (c, ky, kx) in enumerate(group_pass.taps)
                if ky in rows and kx in columns
            )
            group_pass.store(
                point, group_pass.sums(point, reads), out, lambda m, oy=oy, ox=ox: [n, m, oy, ox], epilogue
            )


@dataclass(frozen=True)
class _Read:
    """A tap's input position along one axis; for a checked run (see SlidingWindow.edge_runs)
    clamped into the input, with whether the unclamped one lies inside."""

    position: Bound
    inside: SSAValue | None

    @staticmethod
    def of(b: KernelBuilder, window: SlidingWindow, start: Bound, offset: int, checked: list[bool]) -> _Read:
        position = window.position(b, start, offset)
        if not (checked and checked[0]):
            return _Read(position, None)
        inside = b.and_(b.compare_index("sge", position, 0), b.compare_index("slt", position, window.input_size))
        return _Read(b.max(b.min(position, b.sub(window.input_size, 1)), 0), inside)

    @staticmethod
    def load(b: KernelBuilder, x: SSAValue, image: list[Bound], row: _Read, column: _Read, zero: SSAValue):
        """x at (row, column) of `image`: 0 (the padding) where either position is outside."""
        value = b.load(x, [*image, row.position, column.position])
        checks = [read.inside for read in (row, column) if read.inside is not None]
        if not checks:
            return value
        inside = checks[0] if len(checks) == 1 else b.and_(*checks)
        return b.select(inside, value, zero)


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
    operands are converted (the integer convolutions accumulate in int32), or in
    float32 for a float16/bfloat16 `out`."""
    (batch, channels, *input_sizes), out_shape = shape_of(x), shape_of(out)
    out_channels, group_channels, *kernel = shape_of(weights)
    group = op.attr("group")
    grouped_channels = group_channels * group if isinstance(group_channels, int) else group_channels
    uneven = isinstance(out_channels, int) and out_channels % group
    if not input_sizes or not dims_agree([channels], [grouped_channels]) or uneven:
        raise g.shape_error(
            op, f"input {shape_text(shape_of(x))}, weights {shape_text(shape_of(weights))}, group {group}"
        )
    if op.attr("kernel_shape") is not None and not dims_agree(op.attr("kernel_shape"), kernel):
        raise g.shape_error(
            op, f"kernel_shape {op.attr('kernel_shape')} differs from the weights' {shape_text(kernel)}"
        )
    if bias is not None and not dims_agree(shape_of(bias), [out_channels]):
        raise g.shape_error(op, f"bias of shape {shape_text(shape_of(bias))}")
    if not dims_agree(out_shape[:2], (batch, out_channels)):
        raise g.shape_error(op, f"output shape {list(out_shape)}")
    *outer_windows, row_window = sliding_windows(g, op, input_sizes, out_shape[2:], kernel)

    # float16/bfloat16 sums accumulate in a float32 copy of the output, rounded once at the
    # end (as in MatMul, and as ONNX's reference and onnxruntime do).
    element = out.type.get_element_type()
    result, wide = out, f32 if isinstance(element, Float16Type | BFloat16Type) else None
    if wide is not None:
        out = alloc_shaped(g.top, wide, out_shape)
    accumulated = out.type.get_element_type()

    row_ivs, body = g.top.loop_nest(out_shape[:-1])
    n, m, *outer_position = row_ivs
    init = body.convert(body.load(bias, [m]), accumulated) if bias is not None else body.constant(0, accumulated)
    (init_column,), row_start = body.for_nest([(0, row_window.output_size)])
    row_start.store(init, out, [*row_ivs, init_column])

    first_channel = 0 if group == 1 else body.mul(body.div(m, body.div(out_channels, group)), group_channels)
    starts = [w.start(body, o) for w, o in zip(outer_windows, outer_position)]
    ranges = [(0, group_channels), *(w.data_range(body, s) for w, s in zip(outer_windows, starts))]
    (c, *offsets, row_offset), tap = body.for_nest([*ranges, (0, row_window.kernel)])
    channel = tap.add(first_channel, c)
    positions = [w.position(tap, s, k) for w, s, k in zip(outer_windows, starts, offsets)]
    weight = tap.convert(tap.load(weights, [m, c, *offsets, row_offset]), accumulated)
    shift = row_window.shift(tap, row_offset)
    (column,), point = tap.for_nest([row_window.output_range(tap, shift)])
    input_column = point.sub(point.mul(column, row_window.stride), shift)
    pixel = point.convert(point.load(x, [n, channel, *positions, input_column]), accumulated)
    partial = point.load(out, [*row_ivs, column])
    point.store(point.add(partial, point.mul(pixel, weight)), out, [*row_ivs, column])
    if wide is not None:
        elementwise(g.top, result, [Operand.whole(out)], lambda b, xs: b.convert(xs[0], element))
