"""Conv, MatMul and Gemm as `krnl.matmul`: the register-blocked GEMM kernel.

Conv (2-D, constant weights) is C[M, OH*OW] = W[M, C*KH*KW] x im2col(X) per
image and group (groups of 8 or more output channels each), the products of one krnl.matmul
(of one plan over a run-time image): its weights are packed at compile time into the kernel's
row panels, group after group (see krnl.MatmulOp, a_layout "panels", and its bias_offsets), and
a 1x1 stride-1 unpadded conv
reads the image in place as the matrix [C, H*W]. Any other stride-1 conv (not accumulating)
reads its image in place too (b_access "window"): copied once into a zero-padded buffer (the
image itself if unpadded) of width
W', row (c, ky, kx) of B is that image from offset c*H'*W' + ky*W' + kx, and the kernel computes
(OH-1)*W' + OW columns: whole padded rows, whose first OW columns a last nest copies out. The
im2col copy it saves is KH*KW times the image, every column tile of which is packed once per
product; the padding copy is the image once, and the extra columns (W' - OW per row) are a few
percent at 56x56, 22% at 7x7. Where they are many (small images, see `lanes_apply`), the
product is transposed instead: the channels in the vector lanes, the pixels, and only they, as
rows read in place, the output stored transposed (conv_lanes.py). A conv whose windows read
mostly padding (dilated, on a small map) is one product per region of outputs reading the same
taps, over those taps only (see conv_regions.py).

Epilogue fusion, decided here and nowhere else, along a chain of single uses
(a value with one use is not a graph output: returning it would be a second
use, so no intermediate is lost):
1. a BatchNormalization with constant statistics (inference): its scale and
   shift are folded into the packed weights and the bias;
2. a residual Add/Sum of two values, the other one `r` computed already: the
   kernel accumulates into r's buffer (C starts as r), which is legal when r
   is a scratch buffer (not an input, constant or output, and holding no other
   values through views of a part of it: a Concat's output), r is not the
   Conv's input (threads would overwrite what others still read), and every
   other use of r, or of any value sharing its buffer (a Reshape's), comes
   before the Conv;
3. the store's epilogue: an activation (HardSwish, SiLU), then a Relu or a Clip with
   constant bounds (gemm_epilogue.py).
Fused ops are added to `GraphLowering.fused` (their lowering is skipped) and
the kernel writes the last fused op's result buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type, MemRefType, f32
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.krnl_matmul import (
    MATMUL_B_PANEL,
    MAX_WINDOW_OFFSET,
    ConvGeometryAttr,
    MatmulALayout,
    MatmulBAccess,
    MatmulOp,
)
from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import numpy_dtype_of
from onnxc.passes.helpers.affine import batch_norm_affine
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.run_time_dims import element_count, reshaped_view
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, dims_agree, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.conv_lanes import LANES_REDUCTION_BLOCK, conv_in_lanes, lanes_apply
from onnxc.passes.onnx_to_krnl.conv_regions import TapRegion, tap_regions
from onnxc.passes.onnx_to_krnl.gemm_epilogue import (
    GemmFusion,
    StoreEpilogue,
    claim_epilogue,
    residual_buffer,
    single_user,
)
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, SlidingWindow, sliding_windows

TILE_ROWS = 12
"""mr: rows of a register tile (the vectors per row are the target's, see codegen/gemm.py)."""
REDUCTION_BLOCK = 128
"""kc: reduction steps per pass over a tile; a kc x nr B tile (16 KB with AVX-512) stays in L1."""
COLUMN_BLOCK = 512
"""nc: columns per block; the kc x nc B block (512 KB) fits a 1 MB L2. A multiple of every nr."""
WASTED_WINDOW_COLUMNS = 1.5
"""A stride-1 conv reads its padded image in place (window access) unless the wide rows it then
computes exceed the output's columns this many times: a dilated conv's padding (DeepLabV3's
rate-12 and rate-18 3x3 convs at 28x28 compute 2.2x their outputs), where im2col packs only
the output's columns."""
MIN_GROUP_ROWS = 8
"""A grouped Conv becomes one product per group when each has this many output channels
(depthwise convs, one row per product, stay direct loop nests)."""


def weight_global(g: GraphLowering, op: OnnxOp, array: np.ndarray, hint: str, element: Attribute = f32) -> SSAValue:
    """A krnl.global for a weight of `element`s made at compile time (float32 by default)."""
    return weight_buffer(g, op, np.asarray(array, dtype=numpy_dtype_of(element)), element, hint)


def lower_conv_as_gemm(g: GraphLowering, op: OnnxOp) -> bool:
    """Lower a Conv (and the ops fused into it) to krnl.matmul; False if it does not apply."""
    x_value, w_value = op.input(0), op.input(1)
    weights = constant_array(w_value)
    bias = constant_array(op.input(2)) if op.input(2) is not None else np.zeros(0)
    group = op.attr("group", 1)
    x_shape, out_type_shape = shape_of(g.buffers[x_value]), tuple(op.results[0].type.get_shape())
    if (
        weights is None
        or bias is None
        or weights.dtype != np.float32
        or not isinstance(x_value.type.get_element_type(), Float32Type)
        or len(x_shape) != 4
        or weights.ndim != 4
        or len(out_type_shape) != 4
        or group < 1
        or x_shape[1] != weights.shape[1] * group
        or weights.shape[0] % group
        or (group > 1 and weights.shape[0] // group < MIN_GROUP_ROWS)
        or out_type_shape[1] != weights.shape[0]
        or op.attr("kernel_shape") not in (None, list(weights.shape[2:]))
        or bias.size not in (0, weights.shape[0])
        or 0 in (*x_shape, *weights.shape, *out_type_shape)
    ):
        return False
    batch, channels, height, width = x_shape
    out_channels, _, kernel_h, kernel_w = weights.shape
    run_time = not all(isinstance(d, int) for d in x_shape)
    out_sizes = g.tensor_shape(op, op.results[0])[2:] if run_time else out_type_shape[2:]
    window_y, window_x = sliding_windows(g, op, (height, width), out_sizes, (kernel_h, kernel_w))

    # Fusion: BatchNormalization, a residual Add, then the store's epilogue (activation, clamp).
    matrix = weights.reshape(out_channels, -1).astype(np.float64)
    shift = bias.astype(np.float64) if bias.size else np.zeros(out_channels)
    last, fused = op, []
    user = single_user(op.results[0])
    if user is not None and user.OP_TYPE == "BatchNormalization" and user.input(0) is op.results[0]:
        folded = batch_norm_affine(user)
        if folded is not None and folded[0].shape == (out_channels,):
            scale, offset = folded
            matrix, shift = matrix * scale[:, None], shift * scale + offset
            last, fused = user, [user]
    residual = None
    user = single_user(last.results[0])
    if user is not None:
        residual = residual_buffer(g, op, user, last.results[0])
        if residual is not None:
            last, fused = user, [*fused, user]
    epilogue, last, claimed = claim_epilogue(g, last)
    fused = [*fused, *claimed]
    g.fused.update(fused)

    if residual is None:
        out = g.result(last)
    else:
        out = residual
        g.alias(last.results[0], out)
    for value in (op.results[0], *(f.results[0] for f in fused)):
        g.alias(value, out)
    lanes = None if run_time else lanes_apply([window_y, window_x], g.top, channels, out_channels, group)
    if lanes is not None:
        name, block = op.node_name or "conv", min(LANES_REDUCTION_BLOCK, matrix.shape[1])
        panels = weight_global(g, op, _column_panels(matrix.T, block), f"{name}_lanes")
        bias_global, tile = weight_global(g, op, shift, f"{name}_bias"), [TILE_ROWS, block, COLUMN_BLOCK]
        conv_in_lanes(
            g, op, lanes, panels, bias_global, out, accumulate=residual is not None, epilogue=epilogue, tile=tile
        )
        return True
    block = min(REDUCTION_BLOCK, matrix.shape[1])
    group_channels = channels // group
    in_place = (kernel_h, kernel_w) == (1, 1) and all(
        w.stride == 1 and w.pad_begin == 0 and w.pad_end == 0 for w in (window_y, window_x)
    )
    if run_time:
        groups = _Groups.packed(g, op, matrix, shift, group, block)
        _conv_of_run_time_image(g, op, groups, out, residual is not None, epilogue, block, in_place)
        return True
    columns = window_y.output_size * window_x.output_size
    shifted = None if in_place or residual is not None else ShiftedRows.of([window_y, window_x], g.top)
    if shifted is not None and group_channels * shifted.height * shifted.width > MAX_WINDOW_OFFSET:
        shifted = None  # its row offsets would not fit the kernel's i32 table
    if shifted is not None and shifted.columns > WASTED_WINDOW_COLUMNS * columns:
        shifted = None  # mostly padding: im2col packs only the output's columns
    if not in_place and group == 1 and residual is None:
        regions = tap_regions([window_y, window_x], shifted.columns if shifted is not None else columns)
        if regions is not None:
            bias = weight_global(g, op, shift, f"{op.node_name or 'conv'}_bias")
            _conv_by_regions(g, op, matrix, bias, out, epilogue, [window_y, window_x], regions)
            return True
    groups = _Groups.packed(g, op, matrix, shift, group, block)
    panels, group_rows = groups.panels, out_channels // group
    output, kernel = (window_y.output_size, window_x.output_size), (kernel_h, kernel_w)
    dilation = (window_y.dilation, window_x.dilation)
    if in_place:
        image, b_access, ldb, conv = g.buffers[x_value], MatmulBAccess.ROWS, height * width, None
        plane, product_columns = height * width, columns
    elif shifted is not None:  # the padded image, read at stride 1
        image, b_access, ldb = shifted.planes(g, g.buffers[x_value]), MatmulBAccess.WINDOW, 0
        conv = ConvGeometryAttr(
            channels=group_channels,
            height=shifted.height,
            width=shifted.width,
            output=output,
            kernel=kernel,
            dilation=dilation,
        )
        plane, product_columns = shifted.height * shifted.width, shifted.columns
    else:
        image, b_access, ldb = g.buffers[x_value], MatmulBAccess.IM2COL, 0
        plane, product_columns = height * width, columns
        conv = ConvGeometryAttr(
            channels=group_channels,
            height=height,
            width=width,
            output=output,
            kernel=kernel,
            stride=(window_y.stride, window_x.stride),
            dilation=dilation,
            padding=(window_y.pad_begin, window_x.pad_begin),
        )
    # Shifted rows are computed as wide as the padded image: into a wide buffer, compacted after.
    wide = out if product_columns == columns else g.top.alloc(MemRefType(f32, [batch, out_channels, product_columns]))
    image_size, result = channels * plane, out_channels * product_columns
    products = [(n, k) for n in range(batch) for k in range(group)]  # per image and group: its rows of W, channels of X
    g.top.insert(
        MatmulOp(
            panels,
            image,
            wide,
            sizes=[group_rows, product_columns, matrix.shape[1]],
            tile=[TILE_ROWS, block, COLUMN_BLOCK],
            a_layout=MatmulALayout.PANELS,
            b_access=b_access,
            ldb=ldb,
            conv=conv,
            ldc=product_columns,
            batch=[
                v
                for n, k in products
                for v in (
                    k * groups.panel_size,
                    n * image_size + k * group_channels * plane,
                    n * result + k * group_rows * product_columns,
                )
            ],
            accumulate=residual is not None,
            activation=epilogue.activation,
            clip=epilogue.clip,
            pack=shifted is None,
            bias=groups.bias,
            bias_offsets=groups.bias_offsets(group_rows, batch),
        )
    )
    if wide is not out:
        shifted.compact(g, wide, out)
    return True


def _conv_by_regions(
    g: GraphLowering,
    op: OnnxOp,
    matrix: np.ndarray,
    bias: SSAValue,
    out: SSAValue,
    epilogue: StoreEpilogue,
    windows: list[SlidingWindow],
    regions: list[TapRegion],
) -> None:
    """One product per region of outputs reading the same taps (see conv_regions.py): its
    weights only those taps' columns of `matrix` (W [M, C*KH*KW], fused ops folded in), its B
    the region's im2col over those taps, packed from x, its C the region's outputs: straight
    into `out` for regions of whole output rows, else a buffer copied out."""
    x = g.buffers[op.input(0)]
    batch, channels, height, width = shape_of(x)
    out_channels, out_h, out_w = shape_of(out)[1:]
    name = op.node_name or "conv"
    for number, region in enumerate(regions):
        weights = region.weights(matrix, (windows[0].kernel, windows[1].kernel))
        block = min(REDUCTION_BLOCK, weights.shape[1])
        panels = weight_global(g, op, _row_panels(weights, block), f"{name}_region{number}_panels")
        geometry, first_read = region.image(windows, channels)
        whole_rows = region.width == out_w
        products = out if whole_rows else g.top.alloc(MemRefType(f32, [batch, out_channels, region.pixels]))
        ldc = out_h * out_w if whole_rows else region.pixels
        first = region.rows[0] * out_w if whole_rows else 0
        g.top.insert(
            MatmulOp(
                panels,
                x,
                products,
                sizes=[out_channels, region.pixels, weights.shape[1]],
                tile=[TILE_ROWS, block, COLUMN_BLOCK],
                a_layout=MatmulALayout.PANELS,
                b_access=MatmulBAccess.IM2COL,
                conv=geometry,
                ldc=ldc,
                batch=[
                    v
                    for n in range(batch)
                    for v in (0, n * channels * height * width + first_read, n * out_channels * ldc + first)
                ],
                activation=epilogue.activation,
                clip=epilogue.clip,
                pack=True,
                bias=bias,
            )
        )
        if not whole_rows:
            region.copy_out(g, products, out)


@dataclass(frozen=True)
class _Groups:
    """A grouped conv's weights: every group's row panels one after another, `panel_size`
    floats each, and the bias of all output channels."""

    panels: SSAValue
    bias: SSAValue
    count: int
    panel_size: int

    @staticmethod
    def packed(g: GraphLowering, op: OnnxOp, matrix: np.ndarray, shift: np.ndarray, count: int, block: int) -> _Groups:
        """W [M, C*KH*KW] as row panels of reduction blocks of `block`, group by group, and the bias `shift`."""
        name, rows = op.node_name or "conv", matrix.shape[0] // count
        group_panels = [_row_panels(matrix[k * rows : (k + 1) * rows], block) for k in range(count)]
        panels = weight_global(g, op, np.concatenate(group_panels), f"{name}_panels")
        return _Groups(panels, weight_global(g, op, shift, f"{name}_bias"), count, group_panels[0].size)

    def bias_offsets(self, group_rows: int, images: int = 1) -> list[int] | None:
        """Where each product's bias starts, products ordered (image, group); None for one group."""
        return [k * group_rows for _ in range(images) for k in range(self.count)] if self.count > 1 else None


RUN_TIME_COLUMNS_GUESS = 1024
"""The output pixels a Conv over a run-time image is scheduled for (32 x 32)."""


def _conv_of_run_time_image(
    g: GraphLowering,
    op: OnnxOp,
    groups: _Groups,
    out: SSAValue,
    accumulate: bool,
    epilogue: StoreEpilogue,
    block: int,
    in_place: bool,
) -> None:
    """One product per sample and group (one krnl.matmul each, of one plan) of an image whose batch, height or width is known at run time only (a
    detector's): N = OH*OW columns at run time, B read in place (1x1 convs) or packed
    by im2col from the run-time geometry; the offsets of the sample and group move
    at run time. The geometry attribute holds the sizes scheduled for."""
    b = g.top
    x = g.buffers[op.input(0)]
    batch, channels, height, width = shape_of(x)
    out_channels, group_channels, kernel_h, kernel_w = constant_array(op.input(1)).shape
    group_rows = out_channels // groups.count
    out_h, out_w = shape_of(out)[2:]
    window_y, window_x = sliding_windows(g, op, (height, width), (out_h, out_w), (kernel_h, kernel_w))
    columns, plane = b.index(b.mul(out_h, out_w)), b.mul(height, width)
    image_size, result_size = b.mul(channels, plane), b.mul(out_channels, columns)
    image, conv = [], None
    if not in_place:
        image = [b.index(v) for v in (height, width, out_h, out_w, window_y.pad_begin, window_x.pad_begin)]
        guess_h, guess_w = (RUN_TIME_COLUMNS_GUESS**0.5 * w.stride for w in (window_y, window_x))
        conv = ConvGeometryAttr(
            channels=group_channels,
            height=int(guess_h),
            width=int(guess_w),
            output=(int(RUN_TIME_COLUMNS_GUESS**0.5),) * 2,
            kernel=(kernel_h, kernel_w),
            stride=(window_y.stride, window_x.stride),
            dilation=(window_y.dilation, window_x.dilation),
        )
    (sample,), body = b.for_nest([(0, batch)])
    for index in range(groups.count):
        x_offset = body.add(body.mul(sample, image_size), body.mul(index * group_channels, plane))
        out_offset = body.add(body.mul(sample, result_size), body.mul(index * group_rows, columns))
        body.insert(
            MatmulOp(
                groups.panels,
                x,
                out,
                sizes=[group_rows, RUN_TIME_COLUMNS_GUESS, group_channels * kernel_h * kernel_w],
                tile=[TILE_ROWS, block, COLUMN_BLOCK],
                a_layout=MatmulALayout.PANELS,
                b_access=MatmulBAccess.ROWS if in_place else MatmulBAccess.IM2COL,
                conv=conv,
                ldc=0,
                accumulate=accumulate,
                activation=epilogue.activation,
                clip=epilogue.clip,
                pack=not in_place,
                batch=[index * groups.panel_size, 0, 0],
                bias=groups.bias,
                bias_offsets=[index * group_rows] if groups.count > 1 else None,
                columns=columns,
                offsets=[body.index(x_offset), body.index(out_offset)],
                image=image,
            )
        )


def _row_panels(matrix: np.ndarray, block: int) -> np.ndarray:
    """W [M, K] in the kernel's "panels" layout: row tiles of TILE_ROWS (zero-padded),
    each stored k-major, reduction block by reduction block (see krnl.MatmulOp)."""
    rows, reduction = matrix.shape
    tiles = -(-rows // TILE_ROWS)
    padded = np.zeros((tiles * TILE_ROWS, reduction))
    padded[:rows] = matrix
    panels = padded.reshape(tiles, TILE_ROWS, reduction).transpose(0, 2, 1)  # [tile, k, row]
    blocked = np.concatenate([panels[:, k : k + block].reshape(-1) for k in range(0, reduction, block)])
    return blocked.reshape(panels.shape)


def _batch_offsets(batch_shape, a_batch, b_batch, a_matrix: int, b_matrix: int, c_matrix: int) -> list[int]:
    """(a, b, c) element offsets of every matrix product of a broadcast batch:
    a_batch/b_batch are the operands' batch dims, right-aligned to batch_shape."""

    def strides(dims):
        dims = [1] * (len(batch_shape) - len(dims)) + list(dims)
        step, result = 1, [0] * len(dims)
        for axis in reversed(range(len(dims))):
            result[axis] = 0 if dims[axis] == 1 else step
            step *= dims[axis]
        return result

    a_strides, b_strides = strides(a_batch), strides(b_batch)
    offsets = []
    for position, index in enumerate(np.ndindex(*batch_shape) if batch_shape else [()]):
        a_index = sum(i * s for i, s in zip(index, a_strides))
        b_index = sum(i * s for i, s in zip(index, b_strides))
        offsets += [a_index * a_matrix, b_index * b_matrix, position * c_matrix]
    return offsets


def emit_matrix_product(
    g: GraphLowering,
    op: OnnxOp,
    a: SSAValue,
    b: SSAValue,
    out: SSAValue,
    sizes: tuple[int, int, int],
    a_strides: tuple[int, int],
    batch: list[int],
    *,
    b_constant: np.ndarray | None = None,
    b_scale: float = 1.0,
    accumulate: bool = False,
    ldb: int | None = None,
    ldc: int | None = None,
    at: KernelBuilder | None = None,
    rows: SSAValue | None = None,
    fusion: GemmFusion | None = None,
) -> None:
    """krnl.matmul for out[m*ldc + n] (+)= sum_k a[m*s0 + k*s1] * b[k*ldb + n], per batch
    triple (ldb and ldc default to N), inserted by `at` (default: at the top level);
    `rows`, if given, is M at run time (sizes[0] the M to schedule for); `fusion`'s bias per
    column and epilogue applied in the kernel's store.

    A constant B (`b_constant` times `b_scale`, [K, N], shared by the batch) is packed at compile
    time into column panels: no packing at run time, and each tile's B is a
    sequential stream; a product of a few rows (a matrix-vector product, which
    streams B once) then takes the whole reduction in one block. Otherwise B is
    packed at run time when several row tiles reuse it, else read in place."""
    m, n, k = sizes
    block = min(REDUCTION_BLOCK, k)
    if b_constant is not None:
        block = k if m <= TILE_ROWS else block
        panels = _column_panels(b_constant, block, b_scale)
        b = weight_global(g, op, panels, f"{op.node_name or op.OP_TYPE.lower()}_b_panels")
    fusion = fusion or GemmFusion()
    bias = None
    if fusion.bias is not None:
        bias = weight_global(g, op, fusion.bias, f"{op.node_name or op.OP_TYPE.lower()}_bias")
    (at or g.top).insert(
        MatmulOp(
            a,
            b,
            out,
            sizes=sizes,
            tile=[TILE_ROWS, block, COLUMN_BLOCK],
            a_layout=MatmulALayout.STRIDED,
            a_strides=a_strides,
            b_access=MatmulBAccess.ROWS if b_constant is None else MatmulBAccess.PANELS,
            ldb=n if ldb is None else ldb,
            ldc=n if ldc is None else ldc,
            batch=batch,
            accumulate=accumulate,
            bias_columns=bias is not None,
            activation=fusion.epilogue.activation,
            clip=fusion.epilogue.clip,
            pack=b_constant is None and m > TILE_ROWS,
            bias=bias,
            rows=rows,
        )
    )


RUN_TIME_ROWS_GUESS = 256
"""The M a product of rows known at run time only is scheduled for (a batch of
sequences has hundreds of rows; schedules differ only for a few)."""


def lower_matmul_of_run_time_rows(g: GraphLowering, op: OnnxOp, out: SSAValue, fusion: GemmFusion | None) -> bool:
    """MatMul of x[..., K] (leading dims known at run time) by a constant float32
    W[K, N], as one krnl.matmul of M = the product of x's leading dims: x and the
    result are contiguous [M, K] and [M, N] (views), W is packed in panels."""
    a_shape = shape_of(g.input(op, 0))
    weights = panel_weights(op, a_shape)
    if weights is None:
        return False
    (k, n), b = weights.shape, g.top
    rows = b.index(element_count(b, a_shape[:-1]))
    a = reshaped_view(b, g.input(op, 0), [rows, k])
    c = reshaped_view(b, out, [rows, n])
    emit_matrix_product(
        g, op, a, g.input(op, 1), c, (RUN_TIME_ROWS_GUESS, n, k), (k, 1), [0, 0, 0], b_constant=weights, rows=rows,
        fusion=fusion,
    )  # fmt: skip
    return True


def panel_weights(op: OnnxOp, a_shape: tuple) -> np.ndarray | None:
    """A MatMul's B as both GEMM lowerings of a constant B take it (packed in panels at
    compile time): a constant float32 [K, N], neither empty nor over PANEL_BYTES_LIMIT,
    by a float32 A of rank 2 or more, static K and no dim known to be 0."""
    weights = constant_array(op.input(1))
    if weights is None or weights.ndim != 2 or not is_f32(op.input(0), op.input(1)) or len(a_shape) < 2:
        return None
    if weights.nbytes > PANEL_BYTES_LIMIT or not isinstance(a_shape[-1], int) or 0 in weights.shape:
        return None
    return None if any(isinstance(d, int) and d == 0 for d in a_shape) else weights


def lower_matmul_of_run_time_products(g: GraphLowering, op: OnnxOp, out: SSAValue) -> bool:
    """MatMul of two run-time float32 operands [..., M, K] @ [..., K, N] with the same batch
    dims, M, N or the batch known at run time only and K static (attention's Q.K^T over a
    run-time sequence): one krnl.matmul of run-time rows and columns per batch index, in a
    run-time loop, A, B and C contiguous, B packed at run time."""
    a, b = g.input(op, 0), g.input(op, 1)
    a_shape, b_shape, out_shape = shape_of(a), shape_of(b), shape_of(out)
    if not is_f32(op.input(0), op.input(1)) or constant_array(op.input(1)) is not None:
        return False
    if len(a_shape) < 2 or len(a_shape) != len(b_shape) or not isinstance(a_shape[-1], int):
        return False
    if not dims_agree(a_shape[:-2], b_shape[:-2]) or 0 in (*a_shape, *b_shape):
        return False
    top = g.top
    rows, columns, k = top.index(a_shape[-2]), top.index(b_shape[-1]), a_shape[-1]
    (product,), body = top.for_nest([(0, element_count(top, out_shape[:-2]))])
    b_offset = body.mul(body.mul(product, k), columns)
    c_offset = body.mul(body.mul(product, rows), columns)
    body.insert(
        MatmulOp(
            a,
            b,
            out,
            sizes=[RUN_TIME_ROWS_GUESS, RUN_TIME_COLUMNS_GUESS, k],
            tile=[TILE_ROWS, min(REDUCTION_BLOCK, k), COLUMN_BLOCK],
            a_layout=MatmulALayout.STRIDED,
            a_strides=(k, 1),
            b_access=MatmulBAccess.ROWS,
            ldc=0,
            pack=True,
            rows=rows,
            columns=columns,
            offsets=[body.index(b_offset), body.index(c_offset)],
            first_row=body.index(body.mul(product, rows)),
        )
    )
    return True


PANEL_BYTES_LIMIT = 1 << 28
"""A constant B up to this size is packed into panels at compile time; a bigger one is
read in place, since its panel copy would double a huge weight's memory while compiling
(a Gemm's transposed or scaled B is copied anyway: into panels, whatever its size)."""


def _column_panels(matrix: np.ndarray, block: int, scale: float = 1.0) -> np.ndarray:
    """B [K, N] (any view, e.g. W.T) times `scale` as column panels of P columns (zero columns
    padding the last), reduction block by reduction block of `block` rows: the tiles of one
    block follow each other, so the kernel streams B in order (see krnl.MatmulOp)."""
    reduction, columns = matrix.shape
    panel_count = -(-columns // MATMUL_B_PANEL)
    padded = np.zeros((reduction, panel_count * MATMUL_B_PANEL), np.float32)
    padded[:, :columns] = matrix
    if scale != 1.0:
        padded *= np.float32(scale)
    panels = np.empty((panel_count, reduction, MATMUL_B_PANEL), np.float32)
    flat = panels.reshape(-1)
    for start in range(0, reduction, block):
        rows = padded[start : start + block]
        chunk = rows.reshape(len(rows), panel_count, MATMUL_B_PANEL).transpose(1, 0, 2)
        flat[start * panel_count * MATMUL_B_PANEL : (start + len(rows)) * panel_count * MATMUL_B_PANEL] = chunk.reshape(
            -1
        )
    return panels


def is_f32(*values: SSAValue) -> bool:
    return all(isinstance(v.type.get_element_type(), Float32Type) for v in values)


def lower_matmul_as_gemm(
    g: GraphLowering, op: OnnxOp, out: SSAValue, batch_rank: int, fusion: GemmFusion | None = None
) -> bool:
    """MatMul (numpy semantics, shapes already checked) on float32 into `out` as krnl.matmul."""
    if not is_f32(op.input(0), op.input(1)):
        return False
    a, b = g.input(op, 0), g.input(op, 1)
    a_shape, b_shape = shape_of(a), shape_of(b)
    out_shape = shape_of(out)
    m = a_shape[-2] if len(a_shape) > 1 else 1
    k = a_shape[-1]
    n = b_shape[-1] if len(b_shape) > 1 else 1
    if 0 in (m, n, k) or 0 in out_shape:
        return False  # an empty product: the loop nest's zero fill is all there is to do
    batch = _batch_offsets(out_shape[:batch_rank], a_shape[:-2], b_shape[:-2], m * k, k * n, m * n)
    weights = constant_array(op.input(1)) if len(b_shape) == 2 else None
    if weights is not None and weights.nbytes > PANEL_BYTES_LIMIT:
        weights = None
    emit_matrix_product(g, op, a, b, out, (m, n, k), (k, 1), batch, b_constant=weights, fusion=fusion)
    return True


def gemm_kernel_applies(g: GraphLowering, op: OnnxOp) -> bool:
    """Whether `lower_gemm_as_gemm` lowers the Gemm `op`: float32, static K and N, nothing empty;
    rows known at run time only with a constant B and an untransposed A; a transposed or scaled
    B constant."""
    if not is_f32(op.input(0), op.input(1)):
        return False
    a_shape, b_shape = shape_of(g.input(op, 0)), shape_of(g.input(op, 1))
    rows, reduction = reversed(a_shape) if op.attr("transA", 0) else a_shape
    columns = b_shape[0] if op.attr("transB", 0) else b_shape[1]
    if not isinstance(columns, int) or not isinstance(reduction, int) or 0 in (rows, columns, reduction):
        return False
    constant_b = constant_array(op.input(1)) is not None
    if not isinstance(rows, int) and (not constant_b or op.attr("transA", 0)):
        return False
    return constant_b or not (op.attr("transB", 0) or op.attr("alpha", 1.0) != 1.0)


def lower_gemm_as_gemm(
    g: GraphLowering, op: OnnxOp, out: SSAValue, accumulate: bool, fusion: GemmFusion | None = None
) -> bool:
    """Gemm's alpha * A' @ B' on float32 as krnl.matmul, accumulating into `out`
    (already holding beta * C) when `accumulate`, `fusion` in its store. B' must be a
    row-major [K, N] buffer: a transposed or scaled B must be constant (transposed and
    scaled at compile time, into panels as any constant B); a runtime A is read with the
    strides of A or A^T. Rows known at run time only (a batch) take a constant B
    and an untransposed A (see `lower_matmul_of_run_time_rows`)."""
    if not gemm_kernel_applies(g, op):
        return False
    alpha, transpose_a, transpose_b = op.attr("alpha", 1.0), op.attr("transA", 0), op.attr("transB", 0)
    a, b = g.input(op, 0), g.input(op, 1)
    rows, reduction = reversed(shape_of(a)) if transpose_a else shape_of(a)
    columns = shape_of(out)[1]
    weights = constant_array(op.input(1))
    run_time_rows = None if isinstance(rows, int) else g.top.index(rows)
    if weights is not None and (transpose_b or alpha != 1.0):
        weights = weights.T if transpose_b else weights  # a copy is made anyway: into panels, whatever its size
    elif weights is not None and weights.nbytes > PANEL_BYTES_LIMIT:
        weights = None
    a_strides = (1, rows) if transpose_a else (reduction, 1)
    sizes = (RUN_TIME_ROWS_GUESS if run_time_rows is not None else rows, columns, reduction)
    emit_matrix_product(
        g,
        op,
        a,
        b,
        out,
        sizes,
        a_strides,
        [0, 0, 0],
        b_constant=weights,
        b_scale=alpha,
        accumulate=accumulate,
        rows=run_time_rows,
        fusion=fusion,
    )
    return True
