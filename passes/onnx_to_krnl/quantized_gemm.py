"""QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger with constant int8 weights as `krnl.qmatmul`.

The integer kernel (codegen/gemm_int8.py) multiplies uint8 activations by int8 weights in
groups of 4 bytes, accumulating exactly in int32, and requantizes in its epilogue (QLinear*)
or stores the int32 sums (*Integer: dynamic quantization). What it needs is made here:
- the weights packed at compile time in its layout (Conv: the rows of A, one per output
  channel; MatMul, and convs over small images, `_in_lanes`: the columns of B, in blocks);
- the zero-point compensation per output channel, also at compile time: sum (x - zx) w =
  sum x w - zx sum w (weights have zero point 0), folded with the bias into one int32
  offset per channel; where zx is known only at run time (DynamicQuantizeLinear's), a loop
  over the channels makes the offsets from the weight sums;
- the multiplier per channel x_scale * w_scale / y_scale in float32 (onnxruntime's MLAS
  requantizes the same way: results agree with it exactly, and with onnx.reference, which
  rounds in float64, to within one step at ties);
- the activations packed at run time by a loop nest (Conv: the im2col matrix, each group of 4
  rows interleaved, padding reading the zero point; MatMul: the rows in tiles of mr).
A Clip of the result with constant bounds (fuse-qdq's Relu/Clip) joins the epilogue.

Other cases (uint8 weights, weight zero points, int8 activations, activation zero points per
row, grouped convs, a weight not known at compile time) keep the generic lowerings of
quantization.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import IntegerType, MemRefType, f32, i8, i32
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_int8 import QMATMUL_COLUMN_PAD, QMatmulOp, padded_columns, panel_pitch
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import is_unsigned
from onnxc.passes.helpers.run_time_dims import reshaped_view
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, has_static_shape, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.windows import ShiftedRows, sliding_windows

ROW_TILE = 12
"""mr: rows of A per tile (a multiple of every target's rows per micro-kernel call)."""


def _scalar(value: SSAValue | None, dtype=None) -> float | int | None:
    array = constant_array(value) if value is not None else None
    if array is None or array.size != 1 or (dtype is not None and array.dtype != dtype):
        return None
    return array.reshape(-1)[0].item()


def epilogue_clamp(g: GraphLowering, op: OnnxOp) -> tuple[OnnxOp, tuple[int, int]]:
    """The last op the kernel computes (op, or a Clip of its result with constant bounds it
    then fuses) and the clamp of the stored bytes."""
    info = np.iinfo(np.uint8 if is_unsigned(op.results[0].type.get_element_type()) else np.int8)
    low, high = int(info.min), int(info.max)
    uses = list(op.results[0].uses)
    if len(uses) == 1 and isinstance(uses[0].operation, OnnxOp) and uses[0].operation.OP_TYPE == "Clip":
        clip = uses[0].operation
        bounds = [_scalar(clip.input(k)) if clip.input(k) is not None else None for k in (1, 2)]
        present = [clip.input(k) is not None for k in (1, 2)]
        if clip.input(0) is op.results[0] and all(b is not None or not p for b, p in zip(bounds, present)):
            low = max(low, bounds[0]) if bounds[0] is not None else low
            high = min(high, bounds[1]) if bounds[1] is not None else high
            g.fused.add(clip)
            return clip, (low, high)
    return op, (low, high)


def _is_unsigned(value: SSAValue) -> bool:
    element = value.type.get_element_type()
    return isinstance(element, IntegerType) and element.width.data == 8 and is_unsigned(element)


def _int8_weights(op: OnnxOp, index: int, zero_index: int) -> np.ndarray | None:
    weights = constant_array(op.input(index))
    zeros = constant_array(op.input(zero_index)) if op.input(zero_index) is not None else np.zeros(1, np.int8)
    if weights is None or weights.dtype != np.int8 or zeros is None or np.any(zeros):
        return None
    return weights


def requantization(
    op: OnnxOp, channels: int, x_scale_index: int, w_scale_index: int
) -> tuple[np.ndarray, int, float] | None:
    """(float32 multiplier per channel, y zero point, x zero point), or None where a
    parameter is not a compile-time constant of the expected form."""
    x_scale, y_scale = _scalar(op.input(x_scale_index), np.float32), _scalar(op.input(6), np.float32)
    w_scale = constant_array(op.input(w_scale_index))
    x_zero, y_zero = _scalar(op.input(x_scale_index + 1)), _scalar(op.input(7))
    if None in (x_scale, y_scale, x_zero, y_zero) or w_scale is None or w_scale.dtype != np.float32:
        return None
    if w_scale.size not in (1, channels):
        return None
    product = np.float32(x_scale) * np.broadcast_to(w_scale.reshape(-1), (channels,)).astype(np.float32)
    return (product / np.float32(y_scale)).astype(np.float32), int(y_zero), int(x_zero)


def scalar_zero_point(g: GraphLowering, op: OnnxOp, index: int) -> int | SSAValue | None:
    """A zero point of one value: the value where known at compile time (0 where absent),
    else its buffer, read at run time (DynamicQuantizeLinear's); None for any other shape."""
    value = op.input(index)
    if value is None:
        return 0
    known = _scalar(value)
    if known is not None:
        return int(known)
    buffer = g.input(op, index)
    shape = shape_of(buffer)
    return buffer if all(isinstance(d, int) for d in shape) and int(np.prod(shape)) == 1 else None


def zero_value(b, zero: int | SSAValue, element) -> SSAValue:
    """The zero point as an `element` in the builder `b`."""
    return b.constant(zero, element) if isinstance(zero, int) else b.load(zero, [0] * len(shape_of(zero)))


def _offsets(g: GraphLowering, op: OnnxOp, weight_sums: np.ndarray, bias: np.ndarray, zero: int | SSAValue, hint: str):
    """bias - zero * weight_sums, the int32 offset per row or column of the zero-point
    compensation: made at compile time for a known zero point, else by a loop at run time."""
    if isinstance(zero, int):
        return weight_buffer(g, op, (bias - zero * weight_sums).astype(np.int32), i32, hint)
    sums = weight_buffer(g, op, weight_sums.astype(np.int32), i32, f"{hint}_weight_sums")
    biases = weight_buffer(g, op, bias.astype(np.int32), i32, f"{hint}_bias") if np.any(bias) else None
    offsets = g.top.alloc(MemRefType(i32, [weight_sums.size]))
    (i,), body = g.top.loop_nest([weight_sums.size])
    product = body.mul(body.convert(zero_value(body, zero, zero.type.get_element_type()), i32), body.load(sums, [i]))
    base = body.load(biases, [i]) if biases is not None else body.constant(0, i32)
    body.store(body.sub(base, product), offsets, [i])
    return offsets


@dataclass(frozen=True)
class _Epilogue:
    """What krnl.qmatmul does with the sums: requantize them by `multipliers` (float32 per
    row or column) to bytes with `zero_point` and `clip`, or (no multipliers) store int32."""

    multipliers: np.ndarray | None = None
    zero_point: int = 0
    clip: tuple[int, int] = (int(np.iinfo(np.int32).min), int(np.iinfo(np.int32).max))


def _fits_conv_kernel(g: GraphLowering, op: OnnxOp, weights: np.ndarray | None) -> bool:
    """A 2-D group-1 conv of a uint8 batch-1 image with static shapes and int8 weights."""
    x_value = op.input(0)
    if weights is None or weights.ndim != 4 or op.attr("group", 1) != 1 or not _is_unsigned(x_value):
        return False
    if not has_static_shape(x_value) or not has_static_shape(op.results[0]):
        return False  # the packed geometry is laid out at compile time
    x_shape = shape_of(g.buffers[x_value])
    return len(x_shape) == 4 and x_shape[1] == weights.shape[1] and x_shape[0] == 1  # batch 1: one packed image


def lower_qlinear_conv_as_gemm(g: GraphLowering, op: OnnxOp) -> bool:
    """QLinearConv (2-D, group 1, uint8 x, int8 weights with zero point 0) as krnl.qmatmul."""
    weights = _int8_weights(op, 3, 5)
    if not _fits_conv_kernel(g, op, weights):
        return False
    bias = constant_array(op.input(8)) if op.input(8) is not None else np.zeros(weights.shape[0], np.int32)
    parameters = requantization(op, weights.shape[0], 1, 4)
    if bias is None or parameters is None:
        return False
    multipliers, y_zero, x_zero = parameters
    last, clip = epilogue_clamp(g, op)
    out = g.result(last)
    g.alias(op.results[0], out)
    _conv_as_gemm(g, op, weights, bias, x_zero, out, _Epilogue(multipliers, y_zero, clip))
    return True


def lower_conv_integer_as_gemm(g: GraphLowering, op: OnnxOp, out: SSAValue) -> bool:
    """ConvInteger (2-D, group 1, uint8 x with one zero point, int8 weights with zero
    point 0) as krnl.qmatmul into the int32 `out`."""
    weights, x_zero = _int8_weights(op, 1, 3), scalar_zero_point(g, op, 2)
    if x_zero is None or not _fits_conv_kernel(g, op, weights):
        return False
    _conv_as_gemm(g, op, weights, np.zeros(weights.shape[0], np.int32), x_zero, out, _Epilogue())
    return True


def _conv_as_gemm(g, op, weights, bias, x_zero: int | SSAValue, out: SSAValue, epilogue: _Epilogue) -> None:
    """krnl.qmatmul of the weights (rows) by the im2col matrix of x (input 0) into out, or
    (`_in_lanes`) of the im2col matrix read as rows by the weights (columns), stored transposed."""
    x_value, out_shape = op.input(0), tuple(op.results[0].type.get_shape())
    out_channels, _, kernel_h, kernel_w = weights.shape
    _, _, height, width = shape_of(g.buffers[x_value])
    window_y, window_x = sliding_windows(g, op, (height, width), out_shape[2:], (kernel_h, kernel_w))
    matrix = weights.reshape(out_channels, -1)
    reduction, columns = matrix.shape[1], out_shape[2] * out_shape[3]
    groups = -(-reduction // 4)
    name = op.node_name or op.OP_TYPE.lower()
    lanes = _in_lanes(out_channels, columns, reduction)
    if lanes:
        panels, sums = column_panels(matrix.T)
        column_bias = np.zeros(sums.size, np.int64)
        column_bias[:out_channels] = bias
        offsets = _offsets(g, op, sums, column_bias, x_zero, f"{name}_offsets")
    else:
        panels = _row_tiles(matrix, groups)
        offsets = _offsets(g, op, matrix.astype(np.int64).sum(axis=1), bias.astype(np.int64), x_zero, f"{name}_offsets")
    weights = weight_buffer(g, op, panels, i8, f"{name}_panels")
    packed = g.top.alloc(MemRefType(x_value.type.get_element_type(), [groups, panel_pitch(columns), 4]))
    _pack_im2col(g, g.buffers[x_value], packed, (window_y, window_x), (kernel_h, kernel_w), reduction, x_zero)
    if lanes:
        sizes = (columns, out_channels, groups)
        _insert_qmatmul(g, op, packed, weights, out, offsets, epilogue, sizes, a_signed=False, transposed=True)
    else:
        _insert_qmatmul(g, op, weights, packed, out, offsets, epilogue, (out_channels, columns, groups), a_signed=True)


LANES = 16
"""Columns of krnl.qmatmul per vector on the widest target (AVX-512): the rounding of its columns."""
MIN_WASTED_COLUMNS = 1.05
"""A conv goes to the lanes (its output channels the columns, in the vector lanes, its pixels the
rows, stored transposed) where its pixels as the columns would compute this many times the
outputs its channels would: 7x7 images (49 pixels in 64 columns; 3x3 512 -> 512: 454 -> 387 us,
1x1 2048 -> 512: 184 -> 151 us) and 14x14 (196 in 208; 3x3 256 -> 256: 366 -> 354 us), not 28x28
(784 columns, none wasted; in the lanes 3x3 128 -> 128: 369 -> 414 us)."""
MIN_LANES_REDUCTION = 64
"""... and where the reduction repays the transposed store (a scatter per vector and 4 rows)."""


def _in_lanes(channels: int, pixels: int, reduction: int) -> bool:
    """Whether a conv's product has its output channels in the vector lanes (see MIN_WASTED_COLUMNS)."""

    def waste(n: int) -> float:
        return -(-n // LANES) * LANES / n

    return reduction >= MIN_LANES_REDUCTION and waste(pixels) >= MIN_WASTED_COLUMNS * waste(channels)


def _insert_qmatmul(g, op, a, b, out, offsets, epilogue: _Epilogue, sizes, *, a_signed: bool, transposed=False) -> None:
    """krnl.qmatmul of A by B into out, the tables per row of a signed A, per column of a
    signed B; A in panels and C transposed (`transposed`: a conv's pixels as the rows), else
    A in row tiles and C's rows contiguous."""
    multipliers = None
    if epilogue.multipliers is not None:
        table = epilogue.multipliers
        if not a_signed:
            table = np.zeros(padded_columns(sizes[1]), np.float32)
            table[: sizes[1]] = epilogue.multipliers
        multipliers = weight_buffer(g, op, table, f32, f"{op.node_name or op.OP_TYPE.lower()}_multipliers")
    g.top.insert(
        QMatmulOp(
            a,
            b,
            out,
            offsets,
            multipliers,
            sizes=sizes,
            row_tile=ROW_TILE,
            ldc=sizes[0] if transposed else sizes[1],
            batch=[0, 0, 0],
            zero_point=epilogue.zero_point,
            clip=epilogue.clip,
            a_signed=a_signed,
            per_column=not a_signed,
            a_panels=transposed,
            b_blocked=not a_signed,
            transposed_c=transposed,
        )
    )


def _row_index(b, row, dims) -> list:
    """The indices of a row of a [..., K] tensor from its number among rows of dims."""
    indices = []
    for dim in reversed(dims):
        indices.insert(0, b.rem(row, dim))
        row = b.div(row, dim)
    return indices


def _row_tiles(matrix: np.ndarray, groups: int) -> np.ndarray:
    """W [M, K] as [ceil(M/mr), K4, mr, 4], zero-padded (krnl.qmatmul's A)."""
    rows, reduction = matrix.shape
    tiles = -(-rows // ROW_TILE)
    padded = np.zeros((tiles * ROW_TILE, groups * 4), np.int8)
    padded[:rows, :reduction] = matrix
    return np.ascontiguousarray(padded.reshape(tiles, ROW_TILE, groups, 4).transpose(0, 2, 1, 3))


def column_panels(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 W [K, N] as krnl.qmatmul's B in blocks, [Np/64, K4, 64, 4] zero-padded, and its
    column sums (Np, int64)."""
    reduction, columns = weights.shape
    groups, padded = -(-reduction // 4), padded_columns(columns)
    sums = np.zeros(padded, np.int64)
    sums[:columns] = weights.astype(np.int64).sum(axis=0)
    panels = np.zeros((groups * 4, padded), np.int8)
    panels[:reduction, :columns] = weights
    blocks = panels.reshape(groups, 4, padded // QMATMUL_COLUMN_PAD, QMATMUL_COLUMN_PAD)
    return np.ascontiguousarray(blocks.transpose(2, 0, 3, 1)), sums


def _padded(g: GraphLowering, x: SSAValue, windows, x_zero: int | SSAValue) -> SSAValue:
    """Image 0 of x [1, C, H, W] as [C, H', W'] with every position the windows read, the
    padding holding the zero point (x itself, as [C, H, W], where no window reaches padding)."""
    channels, height, width = shape_of(x)[1:]
    window_y, window_x = windows
    if not (window_y.clipped or window_x.clipped):
        return x
    sizes = [w.pad_begin + max(w.input_size, w.last_position + 1) for w in windows]
    element = x.type.get_element_type()
    shifted = ShiftedRows.of(windows, g.top) if all(w.dilation == 1 for w in windows) else None
    if shifted is not None and [shifted.height, shifted.width] == sizes:
        # The padded planes of the depthwise conv: each row copied once, the padding stored (a nest
        # over every position with a select and clamped reads: 45 -> 3 us for 64 channels 56x56).
        planes = shifted.planes(g, x, pad=zero_value(g.top, x_zero, element))
        return reshaped_view(g.top, planes, [1, channels, *sizes])
    padded = g.top.alloc(MemRefType(element, [1, channels, *sizes]))
    ivs, body = g.top.loop_nest([channels, *sizes])
    c, py, px = ivs
    y, x_ = body.sub(py, window_y.pad_begin), body.sub(px, window_x.pad_begin)
    inside_y = body.and_(body.compare_index("sge", y, 0), body.compare_index("slt", y, height))
    inside_x = body.and_(body.compare_index("sge", x_, 0), body.compare_index("slt", x_, width))
    value = body.load(x, [0, c, body.min(body.max(y, 0), height - 1), body.min(body.max(x_, 0), width - 1)])
    body.store(body.select(body.and_(inside_y, inside_x), value, zero_value(body, x_zero, element)), padded, [0, *ivs])
    return padded


def _pack_im2col(g, x, packed, windows, kernel, reduction: int, x_zero: int | SSAValue) -> None:
    """packed[k4, oy*OW + ox, t] = x[0, c, oy*sy - py + ky*dy, ox*sx - px + kx*dx] for
    k = 4*k4 + t = (c, ky, kx); the zero point where that is padding, 0 past K. Read from
    the padded image, the innermost loop loads at the conv's stride without bounds checks.
    A pointwise conv (1x1, stride 1, no padding) reads x as [C, H*W] instead, along whole
    planes: LLVM fully unrolled the 8- to 16-wide rows of mobile nets, then left them scalar
    (the packing of a 512-channel 16x16 image: 17.6 us)."""
    window_y, window_x = windows
    kernel_h, kernel_w = kernel
    groups = shape_of(packed)[0]
    out_h, out_w = window_y.output_size, window_x.output_size
    if _same_width(windows):
        _pack_same_width(g, x, packed, windows, kernel, reduction, x_zero)
        return
    image = _padded(g, x, windows, x_zero)
    if image is x and (kernel_h, kernel_w, window_y.stride, window_x.stride) == (1, 1, 1, 1):
        planes = reshaped_view(g.top, x, [reduction, out_h * out_w])
        (k4, column), body = g.top.loop_nest([groups, out_h * out_w])
        _store_groups(body, packed, k4, column, reduction, lambda k: body.load(planes, [k, column]))
        return
    (k4, oy, ox), body = g.top.loop_nest([groups, out_h, out_w])
    shift = 0 if image is x else 1  # the padded image starts pad_begin before x

    def load(k: SSAValue) -> SSAValue:
        c, offset = body.div(k, kernel_h * kernel_w), body.rem(k, kernel_h * kernel_w)
        ky, kx = body.div(offset, kernel_w), body.rem(offset, kernel_w)
        y = body.add(body.mul(oy, window_y.stride), body.mul(ky, window_y.dilation))
        x_ = body.add(body.mul(ox, window_x.stride), body.mul(kx, window_x.dilation))
        if not shift:
            y, x_ = body.sub(y, window_y.pad_begin), body.sub(x_, window_x.pad_begin)
        return body.load(image, [0, c, y, x_])

    _store_groups(body, packed, k4, body.add(body.mul(oy, out_w), ox), reduction, load)


def _same_width(windows) -> bool:
    """Whether the output rows are as wide as x's (stride 1 along both axes, the columns'
    padding the kernel's reach, a kernel of more than one tap): `_pack_same_width` applies.
    The sizes are static (`_fits_conv_kernel`)."""
    window_y, window_x = windows
    if (window_y.stride, window_x.stride) != (1, 1):
        return False
    return window_x.output_size == window_x.input_size and window_x.kernel * window_y.kernel > 1


def _pack_same_width(g, x, packed, windows, kernel, reduction: int, x_zero: int | SSAValue) -> None:
    """The im2col matrix of a stride-1 conv whose output rows are x's width W (ResNet's 3x3
    convs): column j = oy*W + ox of row k = (c, ky, kx) is x's plane c, flat, at j + (ky*dy -
    py)*W + kx*dx - px, so that each group of rows is packed by a loop over all the columns
    at unit stride, as a pointwise conv's. x is first copied into planes with zero-point rows
    above and below (and one slack run before and after: the reads of padding columns); the
    few columns ox < px or ox >= W - px' whose windows reach into the padding are then
    rewritten with the zero point. Packing rows of 14 and 7 column by column, LLVM unrolled
    them fully and left them scalar (a 256-channel 3x3 QLinearConv at 14x14: 0.46 -> 0.41
    ms, 512 at 7x7 0.49 -> 0.47, 128 at 28x28 0.43 -> 0.40)."""
    window_y, window_x = windows
    kernel_h, kernel_w = kernel
    channels, height, width = shape_of(x)[1:]
    top, left = window_y.pad_begin, window_x.pad_begin
    right = (kernel_w - 1) * window_x.dilation - left  # the padding the last windows read
    rows = max(top + height, window_y.output_size + (kernel_h - 1) * window_y.dilation)
    slack = left + right
    first, end = slack + top * width, slack + (top + height) * width
    size = 2 * slack + rows * width
    b, element = g.top, x.type.get_element_type()
    zero = zero_value(b, x_zero, element)
    planes = b.alloc(MemRefType(element, [channels, size]))
    flat = reshaped_view(b, x, [channels, height * width])
    (c,), outer = b.loop_nest([channels])
    for span in ((0, first), (end, size)):
        (q,), body = outer.for_nest([span])
        body.store(zero, planes, [c, q])
    (q,), body = outer.for_nest([(first, end)])
    body.store(body.load(flat, [c, body.sub(q, first)]), planes, [c, q])

    def reader(body, column):
        def load(k: SSAValue) -> SSAValue:
            c, offset = body.div(k, kernel_h * kernel_w), body.rem(k, kernel_h * kernel_w)
            ky, kx = body.div(offset, kernel_w), body.rem(offset, kernel_w)
            shift = body.add(body.mul(ky, window_y.dilation * width), body.mul(kx, window_x.dilation))
            return body.load(planes, [c, body.add(column, body.add(shift, slack - left))])

        return load

    columns = window_y.output_size * width
    (k4, column), body = b.loop_nest([shape_of(packed)[0], columns])
    _store_groups(body, packed, k4, column, reduction, reader(body, column))
    low = min(left, width)  # columns [0, low) and [high, W) have windows reaching into padding
    high = max(width - right, low)
    if low + width - high == 0:
        return
    (k4, oy, e), body = b.loop_nest([shape_of(packed)[0], window_y.output_size, low + width - high])
    ox = body.select_index(body.compare_index("slt", e, low), e, body.add(e, high - low))
    read = reader(body, body.add(body.mul(oy, width), ox))

    def edge(k: SSAValue) -> SSAValue:
        kx = body.rem(k, kernel_w)
        at = body.sub(body.add(ox, body.mul(kx, window_x.dilation)), left)
        inside = body.and_(body.compare_index("sge", at, 0), body.compare_index("slt", at, width))
        return body.select(inside, read(k), zero)

    _store_groups(body, packed, k4, body.add(body.mul(oy, width), ox), reduction, edge)


def _store_groups(body, packed: SSAValue, k4, column, reduction: int, load) -> None:
    """packed[k4, column, t] = load(k) for k = 4*k4 + t below `reduction` (K), else 0."""
    element = packed.type.get_element_type()
    for t in range(4):
        k = body.add(body.mul(k4, 4), t)
        inside_k = body.compare_index("slt", k, reduction)
        value = load(body.min(k, reduction - 1))
        body.store(body.select(inside_k, value, body.constant(0, element)), packed, [k4, column, t])


def _fits_matmul_kernel(g: GraphLowering, op: OnnxOp, weights: np.ndarray | None) -> bool:
    """uint8 a [..., M, K] of a static shape (the row tiles are laid out at compile time)
    by int8 weights [K, N]."""
    if weights is None or weights.ndim != 2 or not _is_unsigned(op.input(0)):
        return False
    a_shape = shape_of(g.buffers[op.input(0)])
    return all(isinstance(d, int) for d in a_shape) and len(a_shape) >= 2 and a_shape[-1] == weights.shape[0]


def lower_qlinear_matmul_as_gemm(g: GraphLowering, op: OnnxOp) -> bool:
    """QLinearMatMul of uint8 a [..., M, K] by constant int8 b [K, N] (zero point 0) as krnl.qmatmul."""
    weights = _int8_weights(op, 3, 5)
    parameters = requantization(op, weights.shape[1], 1, 4) if _fits_matmul_kernel(g, op, weights) else None
    if parameters is None:
        return False
    multipliers, y_zero, a_zero = parameters
    last, clip = epilogue_clamp(g, op)
    out = g.result(last)
    g.alias(op.results[0], out)
    _matmul_as_gemm(g, op, weights, a_zero, out, _Epilogue(multipliers, y_zero, clip))
    return True


def lower_matmul_integer_as_gemm(g: GraphLowering, op: OnnxOp, out: SSAValue) -> bool:
    """MatMulInteger of uint8 a (one zero point) by constant int8 b [K, N] (zero point 0)
    as krnl.qmatmul into the int32 `out`."""
    weights, a_zero = _int8_weights(op, 1, 3), scalar_zero_point(g, op, 2)
    if a_zero is None or not _fits_matmul_kernel(g, op, weights):
        return False
    _matmul_as_gemm(g, op, weights, a_zero, out, _Epilogue())
    return True


def _matmul_as_gemm(g, op, weights, a_zero: int | SSAValue, out: SSAValue, epilogue: _Epilogue) -> None:
    """krnl.qmatmul of a (input 0, packed in row tiles at run time) by the weights (columns)."""
    a_value = op.input(0)
    reduction, columns = weights.shape
    a_shape = shape_of(g.buffers[a_value])
    rows = int(np.prod(a_shape[:-1]))
    groups = -(-reduction // 4)
    panels, sums = column_panels(weights)
    name = op.node_name or op.OP_TYPE.lower()
    offsets = _offsets(g, op, sums, np.zeros(sums.size, np.int64), a_zero, f"{name}_offsets")
    b = weight_buffer(g, op, panels, i8, f"{name}_panels")
    tiles = -(-rows // ROW_TILE)
    a = g.top.alloc(MemRefType(a_value.type.get_element_type(), [tiles, groups, ROW_TILE, 4]))
    ivs, body = g.top.loop_nest([tiles, groups, ROW_TILE, 4])
    tile, k4, r, t = ivs
    row, k = body.add(body.mul(tile, ROW_TILE), r), body.add(body.mul(k4, 4), t)
    inside = body.and_(body.compare_index("slt", row, rows), body.compare_index("slt", k, reduction))
    at = [*_row_index(body, body.min(row, rows - 1), a_shape[:-1]), body.min(k, reduction - 1)]
    value = body.load(g.buffers[a_value], at)
    body.store(body.select(inside, value, body.constant(0, value.type)), a, ivs)
    _insert_qmatmul(g, op, a, b, out, offsets, epilogue, (rows, columns, groups), a_signed=False)
