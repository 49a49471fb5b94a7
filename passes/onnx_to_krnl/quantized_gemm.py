"""QLinearConv and QLinearMatMul with constant int8 weights as `krnl.qmatmul`.

The integer kernel (codegen/gemm_int8.py) multiplies uint8 activations by int8 weights in
groups of 4 bytes, accumulating exactly in int32, and requantizes in its epilogue. What it
needs is made here:
- the weights packed at compile time in its layout (Conv: the rows of A, one per output
  channel; MatMul: the columns of B);
- the zero-point compensation per output channel, also at compile time: sum (x - zx) w =
  sum x w - zx sum w (weights have zero point 0), folded with the bias into one int32
  offset per channel;
- the multiplier per channel x_scale * w_scale / y_scale in float32 (onnxruntime's MLAS
  requantizes the same way: results agree with it exactly, and with onnx.reference, which
  rounds in float64, to within one step at ties);
- the activations packed at run time by a loop nest (Conv: the im2col matrix, each group of 4
  rows interleaved, padding reading the zero point; MatMul: the rows in tiles of mr).
A Clip of the result with constant bounds (fuse-qdq's Relu/Clip) joins the epilogue.

Other cases (uint8 weights, weight zero points, int8 activations, grouped convs, a weight
not known at compile time) keep the generic lowerings of quantization.py.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import IntegerType, MemRefType, f32, i8, i32
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_int8 import QMatmulOp, padded_columns
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import is_unsigned
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, has_static_shape, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.windows import sliding_windows

ROW_TILE = 12
"""mr: rows of A per tile (a multiple of every target's rows per micro-kernel call)."""


def _scalar(value: SSAValue | None, dtype=None) -> float | int | None:
    array = constant_array(value) if value is not None else None
    if array is None or array.size != 1 or (dtype is not None and array.dtype != dtype):
        return None
    return array.reshape(-1)[0].item()


def _epilogue_clamp(g: GraphLowering, op: OnnxOp) -> tuple[OnnxOp, tuple[int, int]]:
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


def _requantization(
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


def lower_qlinear_conv_as_gemm(g: GraphLowering, op: OnnxOp) -> bool:
    """QLinearConv (2-D, group 1, uint8 x, int8 weights with zero point 0) as krnl.qmatmul."""
    x_value, out_shape = op.input(0), tuple(op.results[0].type.get_shape())
    weights = _int8_weights(op, 3, 5)
    if weights is None or weights.ndim != 4 or op.attr("group", 1) != 1 or not _is_unsigned(x_value):
        return False
    if not has_static_shape(x_value) or not has_static_shape(op.results[0]):
        return False  # the packed geometry is laid out at compile time
    bias = constant_array(op.input(8)) if op.input(8) is not None else np.zeros(weights.shape[0], np.int32)
    x_shape = shape_of(g.buffers[x_value])
    out_channels, channels, kernel_h, kernel_w = weights.shape
    requantization = _requantization(op, out_channels, 1, 4)
    if bias is None or requantization is None or len(x_shape) != 4 or x_shape[1] != channels or x_shape[0] != 1:
        return False  # batch 1: one packed image
    multipliers, y_zero, x_zero = requantization
    _, _, height, width = x_shape
    window_y, window_x = sliding_windows(g, op, (height, width), out_shape[2:], (kernel_h, kernel_w))
    matrix = weights.reshape(out_channels, -1)
    reduction, columns = matrix.shape[1], out_shape[2] * out_shape[3]
    groups = -(-reduction // 4)
    offsets = bias.astype(np.int64) - x_zero * matrix.astype(np.int64).sum(axis=1)

    last, clip = _epilogue_clamp(g, op)
    out = g.result(last)
    g.alias(op.results[0], out)
    name = op.node_name or "qlinearconv"
    a = weight_buffer(g, op, _row_tiles(matrix, groups), i8, f"{name}_panels")
    x_type = x_value.type.get_element_type()
    packed = g.top.alloc(MemRefType(x_type, [groups, padded_columns(columns), 4]))
    _pack_im2col(g, g.buffers[x_value], packed, (window_y, window_x), (kernel_h, kernel_w), reduction, x_zero)
    g.top.insert(
        QMatmulOp(
            a,
            packed,
            out,
            weight_buffer(g, op, offsets.astype(np.int32), i32, f"{name}_offsets"),
            weight_buffer(g, op, multipliers, f32, f"{name}_multipliers"),
            sizes=[out_channels, columns, groups],
            row_tile=ROW_TILE,
            ldc=columns,
            batch=[0, 0, 0],
            zero_point=y_zero,
            clip=clip,
            a_signed=True,
            per_column=False,
        )
    )
    return True


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


def _padded(g: GraphLowering, x: SSAValue, windows, x_zero: int) -> SSAValue:
    """Image 0 of x [1, C, H, W] as [C, H', W'] with every position the windows read, the
    padding holding the zero point (x itself, as [C, H, W], where no window reaches padding)."""
    channels, height, width = shape_of(x)[1:]
    window_y, window_x = windows
    if not (window_y.clipped or window_x.clipped):
        return x
    sizes = [w.pad_begin + max(w.input_size, w.last_position + 1) for w in windows]
    element = x.type.get_element_type()
    padded = g.top.alloc(MemRefType(element, [1, channels, *sizes]))
    ivs, body = g.top.loop_nest([channels, *sizes])
    c, py, px = ivs
    y, x_ = body.sub(py, window_y.pad_begin), body.sub(px, window_x.pad_begin)
    inside_y = body.and_(body.compare_index("sge", y, 0), body.compare_index("slt", y, height))
    inside_x = body.and_(body.compare_index("sge", x_, 0), body.compare_index("slt", x_, width))
    value = body.load(x, [0, c, body.min(body.max(y, 0), height - 1), body.min(body.max(x_, 0), width - 1)])
    body.store(body.select(body.and_(inside_y, inside_x), value, body.constant(x_zero, element)), padded, [0, *ivs])
    return padded


def _pack_im2col(g, x, packed, windows, kernel, reduction: int, x_zero: int) -> None:
    """packed[k4, oy*OW + ox, t] = x[0, c, oy*sy - py + ky*dy, ox*sx - px + kx*dx] for
    k = 4*k4 + t = (c, ky, kx); the zero point where that is padding, 0 past K. Read from
    the padded image, the innermost loop loads at the conv's stride without bounds checks."""
    window_y, window_x = windows
    kernel_h, kernel_w = kernel
    image = _padded(g, x, windows, x_zero)
    groups = shape_of(packed)[0]
    out_h, out_w = window_y.output_size, window_x.output_size
    element = x.type.get_element_type()
    ivs, body = g.top.loop_nest([groups, out_h, out_w])
    k4, oy, ox = ivs
    column = body.add(body.mul(oy, out_w), ox)
    shift = 0 if image is x else 1  # the padded image starts pad_begin before x
    for t in range(4):
        k = body.add(body.mul(k4, 4), t)
        inside_k = body.compare_index("slt", k, reduction)
        k = body.min(k, reduction - 1)
        c, offset = body.div(k, kernel_h * kernel_w), body.rem(k, kernel_h * kernel_w)
        ky, kx = body.div(offset, kernel_w), body.rem(offset, kernel_w)
        y = body.add(body.mul(oy, window_y.stride), body.mul(ky, window_y.dilation))
        x_ = body.add(body.mul(ox, window_x.stride), body.mul(kx, window_x.dilation))
        if not shift:
            y, x_ = body.sub(y, window_y.pad_begin), body.sub(x_, window_x.pad_begin)
        value = body.load(image, [0, c, y, x_])
        body.store(body.select(inside_k, value, body.constant(0, element)), packed, [k4, column, t])


def lower_qlinear_matmul_as_gemm(g: GraphLowering, op: OnnxOp) -> bool:
    """QLinearMatMul of uint8 a [..., M, K] by constant int8 b [K, N] (zero point 0) as krnl.qmatmul."""
    weights = _int8_weights(op, 3, 5)
    a_value = op.input(0)
    if weights is None or weights.ndim != 2 or not _is_unsigned(a_value):
        return False
    reduction, columns = weights.shape
    requantization = _requantization(op, columns, 1, 4)
    a_shape = shape_of(g.buffers[a_value])
    static = all(isinstance(d, int) for d in a_shape)  # the row tiles are laid out at compile time
    if requantization is None or len(a_shape) < 2 or a_shape[-1] != reduction or not static:
        return False
    multipliers, y_zero, a_zero = requantization
    rows = int(np.prod(a_shape[:-1]))
    groups, padded = -(-reduction // 4), padded_columns(columns)
    offsets = np.zeros(padded, np.int64)
    offsets[:columns] = -a_zero * weights.astype(np.int64).sum(axis=0)
    table = np.zeros(padded, np.float32)
    table[:columns] = multipliers
    panels = np.zeros((groups * 4, padded), np.int8)
    panels[:reduction, :columns] = weights

    last, clip = _epilogue_clamp(g, op)
    out = g.result(last)
    g.alias(op.results[0], out)
    name = op.node_name or "qlinearmatmul"
    b = weight_buffer(g, op, np.ascontiguousarray(panels.reshape(groups, 4, padded).transpose(0, 2, 1)), i8,
                      f"{name}_panels")  # fmt: skip
    tiles = -(-rows // ROW_TILE)
    a = g.top.alloc(MemRefType(a_value.type.get_element_type(), [tiles, groups, ROW_TILE, 4]))
    ivs, body = g.top.loop_nest([tiles, groups, ROW_TILE, 4])
    tile, k4, r, t = ivs
    row, k = body.add(body.mul(tile, ROW_TILE), r), body.add(body.mul(k4, 4), t)
    inside = body.and_(body.compare_index("slt", row, rows), body.compare_index("slt", k, reduction))
    value = body.load(g.buffers[a_value], [*_row_index(body, body.min(row, rows - 1), a_shape[:-1]), body.min(k, reduction - 1)])
    body.store(body.select(inside, value, body.constant(0, value.type)), a, ivs)
    g.top.insert(
        QMatmulOp(
            a,
            b,
            out,
            weight_buffer(g, op, offsets.astype(np.int32), i32, f"{name}_offsets"),
            weight_buffer(g, op, table, f32, f"{name}_multipliers"),
            sizes=[rows, columns, groups],
            row_tile=ROW_TILE,
            ldc=columns,
            batch=[0, 0, 0],
            zero_point=y_zero,
            clip=clip,
            a_signed=False,
            per_column=True,
        )
    )
    return True
