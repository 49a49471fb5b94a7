"""Stride-1 convs over small images with the output channels in the vector lanes.

The GEMM kernel's vectors run along its columns. For a conv read as shifted rows (b_access
"window", see matmul_kernel.py) the columns are the pixels of the zero-padded image's whole
rows: (OH-1)*W' + OW of them for OH*OW outputs, so a 3x3 conv over 7x7 computes 61 columns
(64 with AVX-512's 32-wide tiles) for 49 pixels, over 14x14 222 (224) for 196. Here the product
is transposed instead, Cᵀ[pixels, channels] = im2col(X)ᵀ Wᵀ: the output channels are the
columns, in the lanes (the weights, transposed, packed at compile time into column panels), and
the pixels the rows, each broadcast from the padded image read in place (a_layout "window": a
tile's rows are one run of an output row, or whole rows, so that no padding column is computed).
The kernel stores Cᵀ transposed, into the NCHW output (`transposed_c`), with the epilogue: the
bias (per channel: per column now), the residual's accumulation, the clamp. onnxruntime's NCHWc
kernels put the channels in the lanes too, and reorder the tensors at the graph's edges.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from onnxc.dialects.krnl_matmul import MAX_WINDOW_OFFSET, ConvGeometryAttr, MatmulALayout, MatmulBAccess, MatmulOp
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, shape_of
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, SlidingWindow

LANE_WIDTH = 16
"""Channels per vector on the widest target (AVX-512): the rounding the lanes may waste."""
MIN_WASTED_COLUMNS = 1.05
"""Channels go to the lanes when the shifted rows compute this many times the output's pixels
(and more than the lanes waste rounding up the channels): 7x7 1.24x, 14x14 1.13x, 28x28 1.07x;
56x56's 1.035x is not worth the transposing store."""
MAX_TILE_ROWS = 14
"""A tile's rows are a divisor of the output's width (or whole rows), up to this many on the targets
of 32 vector registers (see gemm_plan.window_tile_rows) ..."""
MIN_TILE_ROWS = 7
"""... and at least this many, or the whole row: fewer rows reload the weights' vectors too often
(a 17-wide output, say, keeps the shifted rows)."""


def lanes_apply(
    windows: list[SlidingWindow], b: KernelBuilder, channels: int, out_channels: int, group: int
) -> ShiftedRows | None:
    """The shifted rows of a conv (static sizes, stride 1, undilated, one group) that computes faster
    with its channels in the lanes, else None."""
    plain = group == 1 and all(w.static and w.dilation == 1 for w in windows)  # (dilated convs: see windows.py)
    shifted = ShiftedRows.of(windows, b) if plain else None
    if shifted is None or channels * shifted.height * shifted.width > MAX_WINDOW_OFFSET:
        return None
    out_w = shifted.window_x.output_size
    pixels = shifted.window_y.output_size * out_w
    rows = max(d for d in range(1, min(MAX_TILE_ROWS, out_w) + 1) if out_w % d == 0)
    wasted = shifted.columns / pixels
    lane_waste = -(-out_channels // LANE_WIDTH) * LANE_WIDTH / out_channels
    if rows < min(MIN_TILE_ROWS, out_w) or wasted < MIN_WASTED_COLUMNS or lane_waste >= wasted:
        return None
    return shifted


def conv_in_lanes(
    g: GraphLowering,
    op: OnnxOp,
    shifted: ShiftedRows,
    panels: SSAValue,
    bias: SSAValue,
    out: SSAValue,
    *,
    accumulate: bool,
    clip: tuple[float, float],
    tile: list[int],
) -> None:
    """The conv `op` (its input padded into `shifted`'s planes) as Cᵀ = im2col(X)ᵀ Wᵀ, `panels`
    holding Wᵀ as the kernel's column panels, then out = clamp(Cᵀᵀ + bias (+ out if `accumulate`));
    `tile` is the schedule [mr, kc, nc] (mr: code generation's, see gemm_plan.window_tile_rows)."""
    x = g.buffers[op.input(0)]
    batch, channels = shape_of(x)[:2]
    _, out_channels, out_h, out_w = shape_of(out)
    window_y, window_x = shifted.window_y, shifted.window_x
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
                dilation=(window_y.dilation, window_x.dilation),
            ),
            ldc=pixels,
            transposed_c=True,
            batch=[v for n in range(batch) for v in (n * image_size, 0, n * pixels * out_channels)],
            accumulate=accumulate,
            clip=clip,
            bias=bias,
        )
    )
