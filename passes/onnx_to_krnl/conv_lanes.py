"""Convs over small images, and strided ones, with the output channels in the vector lanes.

The GEMM kernel's vectors run along its columns. For a conv read as shifted rows (b_access
"window", see matmul_kernel.py) the columns are the pixels of the zero-padded image's whole
rows: (OH-1)*W' + OW of them for OH*OW outputs, so a 3x3 conv over 7x7 computes 61 columns
(64 with AVX-512's 32-wide tiles) for 49 pixels, over 14x14 222 (224) for 196. Here the product
is transposed instead, Cᵀ[pixels, channels] = im2col(X)ᵀ Wᵀ: the output channels are the
columns, in the lanes (the weights, transposed, packed at compile time into column panels), and
the pixels the rows, each broadcast from the padded image read in place (a_layout "window": a
tile's rows are one run of an output row, or whole rows, so that no padding column is computed).
A strided conv reads its padded image so too, at its stride (the other path packs im2col).
The kernel stores Cᵀ transposed, into the NCHW output (`transposed_c`), with the epilogue: the
bias (per channel: per column now), the residual's accumulation, the clamp. onnxruntime's NCHWc
kernels put the channels in the lanes too, and reorder the tensors at the graph's edges.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.ir import SSAValue

from onnxc.dialects.krnl_matmul import MAX_WINDOW_OFFSET, ConvGeometryAttr, MatmulALayout, MatmulBAccess, MatmulOp
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, shape_of
from onnxc.passes.onnx_to_krnl.gemm_epilogue import StoreEpilogue
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, SlidingWindow

LANE_WIDTH = 16
"""Channels per vector on the widest target (AVX-512): the rounding the lanes may waste."""
TILE_COLUMNS = 32
"""Columns of a register tile on the widest target (AVX-512: 2 vectors): the rounding the pixels
of a 1x1 conv waste, as B's columns."""
MIN_REDUCTION = 256
"""The lanes store a tile lane by lane, a scatter per vector, which a reduction of this many
steps repays (a 3x3 conv of 3 channels would spend most of its time in them)."""
MIN_WASTED_COLUMNS = 1.03
"""A conv read as shifted rows goes to the lanes when those compute this many times the output's
pixels: 7x7 1.24x, 14x14 1.13x, 28x28 1.07x, 56x56 1.035x (64 -> 64 channels: 1.10 -> 1.05 of
onnxruntime's time); not 112x112's 1.018x (1.06 either way)."""
MIN_WASTED_PIXELS = 1.2
"""A 1x1 conv (any stride) goes to the lanes only where its pixels fill the other path's 32-wide
tiles badly: 7x7 (49 of 64: 2048 -> 512 channels 1.13 -> 0.93 of onnxruntime's time; stride 2
from 14x14, 1024 -> 2048: 1.02 -> 0.92). Over 14x14 (196 of 224) and 28x28 its pixels read in
place (or strided, packed) run faster: in the lanes each reduction step reads another channel's
plane (stride 1, 256 -> 1024 at 14x14: 0.89 -> 1.02; stride 2 to 28x28: 0.83 -> 1.05). Strided
convs of wider kernels always go to the lanes, which read the padded image in place where the
other path packs im2col (3x3 stride 2, 128 channels to 28x28: 1.24 -> 0.99; 256 to 14x14: 1.00
-> 0.92; 512 to 7x7: 1.07 -> 0.96)."""
LANES_REDUCTION_BLOCK = 512
"""kc of a product in the lanes: fewer passes over its few pixel tiles, each storing and reloading
their partial sums (the B tile, 64 KB with AVX-512, streams from L2): 512 -> 512 channels at 7x7
0.965 -> 0.93 of onnxruntime's time; 14x14, 28x28 unchanged (within 1%)."""
MAX_TILE_ROWS = 14
"""A tile's rows are a divisor of the output's width or whole output rows, up to this many on the
targets of 32 vector registers (see gemm_plan.window_tile_rows) ..."""
MIN_TILE_ROWS = 12
"""... and the lanes need this many (on those targets; 24 accumulators or more): 7x7 outputs take
tiles of 14 (two rows), 14, 28 and 56 of 14; 32 or 64 wide outputs would take tiles of 8 and ran
slower (3x3 128 -> 128 at 32x32: 1.11 -> 1.22 of onnxruntime's time; stride 2, 64 -> 128 to
32x32: 1.22 -> 1.42; 32 -> 64 to 64x64: 1.12 -> 1.91)."""


@dataclass(frozen=True)
class Lanes:
    """A conv with its channels in the lanes: its windows, and its image's zero-padded planes
    (as the shifted rows of the stride-1 windows of the same padding: one plane per channel,
    read at the conv's stride)."""

    windows: list[SlidingWindow]
    padded: ShiftedRows


def lanes_apply(
    windows: list[SlidingWindow], b: KernelBuilder, channels: int, out_channels: int, group: int
) -> Lanes | None:
    """The lanes of a conv (static sizes, undilated, one group) that computes faster with its
    channels in the lanes, else None."""
    if group != 1 or not all(w.static and w.dilation == 1 for w in windows):  # dilated ones keep their paths
        return None
    unit = [replace(w, stride=1, output_size=w.input_size + w.pad_begin + w.pad_end - w.kernel + 1) for w in windows]
    padded = ShiftedRows.of(unit, b)
    if padded is None or channels * padded.height * padded.width > MAX_WINDOW_OFFSET:
        return None
    window_y, window_x = windows
    pixels, out_w = window_y.output_size * window_x.output_size, window_x.output_size
    divisors = [d for d in range(1, min(MAX_TILE_ROWS, out_w) + 1) if out_w % d == 0]
    rows = max(divisors + list(range(out_w, MAX_TILE_ROWS + 1, out_w)))  # as gemm_plan.window_tile_rows
    if rows < MIN_TILE_ROWS or channels * window_y.kernel * window_x.kernel < MIN_REDUCTION:
        return None
    lane_waste = -(-out_channels // LANE_WIDTH) * LANE_WIDTH / out_channels
    if window_y.kernel == window_x.kernel == 1:
        wasted = -(-pixels // TILE_COLUMNS) * TILE_COLUMNS / pixels / MIN_WASTED_PIXELS
    elif window_y.stride > 1 or window_x.stride > 1:  # the other path packs im2col, block by block
        wasted = float("inf")
    else:  # the shifted rows' padding columns
        wasted = padded.columns / pixels
    if wasted < MIN_WASTED_COLUMNS or lane_waste > wasted:
        return None
    return Lanes(windows, padded)


def conv_in_lanes(
    g: GraphLowering,
    op: OnnxOp,
    lanes: Lanes,
    panels: SSAValue,
    bias: SSAValue,
    out: SSAValue,
    *,
    accumulate: bool,
    epilogue: StoreEpilogue,
    tile: list[int],
) -> None:
    """The conv `op` (its input padded into `lanes.padded`'s planes) as Cᵀ = im2col(X)ᵀ Wᵀ, `panels`
    holding Wᵀ as the kernel's column panels, then out = epilogue(Cᵀᵀ + bias (+ out if `accumulate`));
    `tile` is the schedule [mr, kc, nc] (mr: code generation's, see gemm_plan.window_tile_rows)."""
    x = g.buffers[op.input(0)]
    batch, channels = shape_of(x)[:2]
    _, out_channels, out_h, out_w = shape_of(out)
    (window_y, window_x), shifted = lanes.windows, lanes.padded
    planes = shifted.planes(g, x)
    image_size, pixels = channels * shape_of(planes)[2], out_h * out_w
    reduction = channels * window_y.kernel * window_x.kernel
    g.top.insert(
        MatmulOp(
            planes,
            panels,
            out,
            sizes=[pixels, out_channels, reduction],
            tile=tile,
            a_layout=MatmulALayout.WINDOW,
            b_access=MatmulBAccess.PANELS,
            conv=ConvGeometryAttr(
                channels=channels,
                height=shifted.height,
                width=shifted.width,
                output=(out_h, out_w),
                kernel=(window_y.kernel, window_x.kernel),
                stride=(window_y.stride, window_x.stride),
                dilation=(window_y.dilation, window_x.dilation),
            ),
            ldc=pixels,
            transposed_c=True,
            batch=[v for n in range(batch) for v in (n * image_size, 0, n * pixels * out_channels)],
            accumulate=accumulate,
            activation=epilogue.activation,
            clip=epilogue.clip,
            bias=bias,
        )
    )
