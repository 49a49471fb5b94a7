"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the
integer contractions MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv.

Numerics follow onnx.reference (numpy): a value is quantized as
round-half-to-even(x / scale) + zero point, saturated to the target's range; a
float8/float4 target gets x / scale converted as Cast does (with `saturate`).
The integer contractions subtract the zero points and accumulate exactly in
int32 (through the MatMul and Conv loop nests, or a dot-product kernel for
constant weights); QLinear* requantize the int32 sums in float64 (numpy's
int32 * float), with the multiplier `a_scale * b_scale / y_scale` rounded in
the scales' type.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import Float4E2M1FNType, IntegerType, f32, f64, i16, i32
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float, is_low_precision, numpy_dtype_of
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder, is_unsigned
from onnxc.passes.helpers.run_time_dims import alloc_shaped, flat_view
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    broadcast,
    constant_array,
    dims_agree,
    lowers,
    normalized_axis,
    shape_of,
    shape_text,
    weight_buffer,
)
from onnxc.passes.onnx_to_krnl.conv import direct_conv
from onnxc.passes.onnx_to_krnl.matmul import matmul_batch_rank, matmul_nest
from onnxc.passes.onnx_to_krnl.quantized_depthwise import lower_conv_integer_depthwise, lower_qlinear_depthwise
from onnxc.passes.onnx_to_krnl.quantized_gemm import (
    lower_conv_integer_as_gemm,
    lower_matmul_integer_as_gemm,
    lower_qlinear_conv_as_gemm,
    lower_qlinear_matmul_as_gemm,
)

Loader = Callable[[KernelBuilder, Sequence[Bound]], SSAValue]
"""(builder in a nest over a tensor, the nest's ivs) -> the parameter (scale or
zero point) applying to that element."""

# ------------------------------------------------------------------------ parameters


def parameter(
    g: GraphLowering, op: OnnxOp, buffer: SSAValue | None, shape: Sequence[Bound], axis: int | None, block_size: int = 0
) -> Loader | None:
    """How to read a scale or zero point for each element of a tensor of `shape`:
    one value (any shape of one element); a 1-D tensor along `axis`; with
    `block_size`, one value per block of `axis` (the parameter has the tensor's
    shape but that dim, divided rounding up); otherwise numpy broadcasting
    (MatMulInteger's [..., M, 1] zero points). None where the input is absent.
    A 1-D parameter whose length is known at run time only is read at
    min(i, length - 1): per axis, or its one element for a whole tensor."""
    if buffer is None:
        return None
    param_shape = shape_of(buffer)
    if one_value(param_shape, len(shape), axis):
        return lambda b, ivs: b.load(buffer, [0] * len(param_shape))
    if axis is not None and (block_size > 0 or len(param_shape) == 1):
        axis = normalized_axis(g, op, axis, len(shape))
    if block_size > 0 and axis is not None:
        expected = [-(-d // block_size) if k == axis and isinstance(d, int) else d for k, d in enumerate(shape)]
        if not dims_agree(param_shape, expected):
            raise g.shape_error(
                op, f"blocked parameter of shape {shape_text(param_shape)}, expected {shape_text(expected)}"
            )
        return lambda b, ivs: b.load(buffer, [b.div(iv, block_size) if k == axis else iv for k, iv in enumerate(ivs)])
    if len(param_shape) == 1 and axis is not None:
        (length,) = param_shape
        if not isinstance(length, int):
            return lambda b, ivs: b.load(buffer, [b.min(ivs[axis], b.sub(length, 1))])
        if length == shape[axis] or not isinstance(shape[axis], int):
            return lambda b, ivs: b.load(buffer, [ivs[axis]])
    if len(param_shape) == len(shape) > 1:
        operand = broadcast(g, op, buffer, shape)
        return lambda b, ivs: operand.load(b, list(ivs))
    raise g.shape_error(op, f"parameter of shape {shape_text(param_shape)} for a tensor of shape {shape_text(shape)}")


def one_value(param_shape: Sequence[Bound], rank: int, axis: int | None) -> bool:
    """Whether `parameter` reads one value of a parameter of `param_shape` for a tensor of
    `rank`: it has one element, or is 1-D of a length known at run time only and no axis applies."""
    if all(isinstance(d, int) for d in param_shape):
        return pymath.prod(param_shape) == 1
    return len(param_shape) == 1 and not (axis is not None and -rank <= axis < rank)


def integer_range(element: IntegerType) -> tuple[int, int]:
    """The smallest and largest value of an integer type (signless is signed)."""
    width = element.width.data
    if is_unsigned(element):
        return 0, 2**width - 1
    return -(2 ** (width - 1)), 2 ** (width - 1) - 1


def clamp(b: KernelBuilder, value: SSAValue, low: float, high: float) -> SSAValue:
    """value limited to [low, high]; NaN goes to `low`."""
    low_value, high_value = b.constant(low, value.type), b.constant(high, value.type)
    value = b.select(b.compare("gt", value, low_value), value, low_value)
    return b.select(b.compare("lt", value, high_value), value, high_value)


def to_integer(
    b: KernelBuilder, value: SSAValue, zero_point: SSAValue | None, target: IntegerType, *, round_first: bool
) -> SSAValue:
    """value rounded half to even, plus zero_point, saturated to the range of
    `target`; in float64 (exact for every value and zero point of the types
    involved), or in float32 for a float32 (or narrower) value and a target of
    up to 16 bits: rounding is exact there, and so is adding a zero point to a
    rounded value below 2^24 - 2^16 in magnitude, a larger one saturating either
    way (twice the lanes, no conversions: QuantizeLinear ran at 7 GFLOP/s in
    float64). The order matters at ties with an odd zero point: QuantizeLinear
    rounds before adding it (`round_first`), QLinearMatMul/Conv after."""
    narrow = value.type != f64 and target.width.data <= 16 and round_first
    value = b.convert(value, f32 if narrow else f64)
    if round_first:
        value = b.math(math.RoundEvenOp, value)
    if zero_point is not None:
        value = b.add(value, b.convert(zero_point, value.type))
    if not round_first:
        value = b.math(math.RoundEvenOp, value)
    rounded = clamp(b, value, *integer_range(target))
    return b.convert(b.convert(rounded, i32), target)


def to_low_precision_float(
    b: KernelBuilder, value: SSAValue, zero_point: SSAValue | None, target: Attribute, saturate: bool
) -> SSAValue:
    """value as a float8 or float4 `target`, by Cast's rules (`saturate` clamps to
    the largest finite value for float8; float4 has no infinity and always
    does). float4 adds its zero point as the reference does; float8's is 0 by
    the spec (and adding +0 would turn -0 into +0)."""
    if zero_point is not None and isinstance(target, Float4E2M1FNType):
        value = b.add(value, b.convert(zero_point, value.type))
    return b.convert(value, target, saturate=saturate)


def rounded_op(b: KernelBuilder, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """lhs <kind> rhs rounded once to their (float) type: 16-bit floats are computed
    in f32 (exact for a product; correctly rounded for a quotient)."""
    element = lhs.type
    if element.bitwidth > 16:
        return b.binary(kind, lhs, rhs)
    return b.convert(b.binary(kind, b.convert(lhs, f32), b.convert(rhs, f32)), element)


def division_type(x_type: Attribute, scale_type: Attribute) -> Attribute:
    """numpy's type of x / scale: theirs if they agree, else the wider, f32 for f16
    with bf16 and f64 for an int32 x."""
    if not is_float(x_type):
        return f64
    if x_type == scale_type:
        return x_type
    return f64 if max(x_type.bitwidth, scale_type.bitwidth) == 64 else f32


def quantized(
    b: KernelBuilder, value: SSAValue, zero_point: SSAValue | None, target: Attribute, saturate: bool = True
) -> SSAValue:
    """`value` (a float, already divided by the scale) quantized to `target`."""
    if isinstance(target, IntegerType):
        return to_integer(b, value, zero_point, target, round_first=True)
    return to_low_precision_float(b, value, zero_point, target, saturate)


def quantization_target(g: GraphLowering, op: OnnxOp, *, floats: bool = True) -> Attribute:
    """The element type of a quantized result: an integer (int4 and int2 included),
    or (if `floats`) a float8 or float4."""
    target = op.results[0].type.get_element_type()
    if isinstance(target, IntegerType) and target.width.data > 1 or (floats and is_low_precision(target)):
        return target
    raise g.unsupported(op, f"quantization to {target} is not supported")


def float_input(g: GraphLowering, op: OnnxOp, index: int) -> Attribute:
    element = op.input(index).type.get_element_type()
    if not is_float(element):
        raise g.unsupported(op, f"input {index} of element type {element} is not supported")
    return element


# ------------------------------------------------------------- DynamicQuantizeLinear


@lowers("DynamicQuantizeLinear", run_time_dims=True)
def lower_dynamic_quantize_linear(g: GraphLowering, op: OnnxOp) -> None:
    """uint8 quantization over the range [min(0, min x), max(0, max x)]:
    scale = (max - min) / 255 (1 / 255 for an empty range), zero point =
    round(clamp(-min / scale, 0, 255)), y = saturate(round(x / scale) + zero point)."""
    x = g.input(op, 0)
    if float_input(g, op, 0) != f32:
        raise g.unsupported(op, f"element type {x.type.get_element_type()} is not supported")
    target = quantization_target(g, op)
    y, scale_out, zero_out = (g.result(op, k) for k in range(3))
    top = g.top
    if len(shape_of(x)) > 1:  # one loop along all elements, for the reductions and the quantization
        x, y = flat_view(top, x), flat_view(top, y)
    shape = shape_of(x)
    everything = [(0, d) for d in shape]
    zero = top.constant(0.0, f32)
    highest = top.reduce(everything, zero, lambda b, ivs, acc: b.max(acc, b.load(x, ivs)))
    lowest = top.reduce(everything, zero, lambda b, ivs, acc: b.min(acc, b.load(x, ivs)))
    scale, zero_point = dynamic_parameters(top, lowest, highest, target)
    top.store(scale, scale_out, [])
    top.store(top.convert(zero_point, target), zero_out, [])

    ivs, body = top.loop_nest(shape)
    quotient = body.div(body.load(x, ivs), scale)
    body.store(to_integer(body, quotient, zero_point, target, round_first=True), y, ivs)


def dynamic_parameters(
    b: KernelBuilder, lowest: SSAValue, highest: SSAValue, target: IntegerType
) -> tuple[SSAValue, SSAValue]:
    """DynamicQuantizeLinear's scale and zero point (a float32 of an integral value) for
    values in [lowest, highest] (float32, a range including 0)."""
    low, high = integer_range(target)
    span = b.select(b.compare("eq", highest, lowest), b.constant(1.0, f32), b.sub(highest, lowest))
    scale = b.div(span, b.constant(float(high - low), f32))
    initial_zero_point = b.sub(b.constant(float(low), f32), b.div(lowest, scale))
    return scale, b.math(math.RoundEvenOp, clamp(b, initial_zero_point, low, high))


# ------------------------------------------------------------------- integer contractions


def integer_operand(g: GraphLowering, op: OnnxOp, index: int) -> Attribute:
    element = op.input(index).type.get_element_type()
    if not isinstance(element, IntegerType) or element.width.data not in (8, 16, 32):
        raise g.unsupported(op, f"input {index} of element type {element} is not supported")
    return element


def difference_type(element: IntegerType) -> Attribute:
    """What holds an integer less a zero point: int16 for 8-bit values, else int32."""
    return i16 if element.width.data == 8 else i32


def constant_less_zero_point(
    g: GraphLowering, op: OnnxOp, index: int, zero_index: int, axis: int | None
) -> tuple[np.ndarray, Attribute] | None:
    """Constant input `index` less its constant zero point (as `minus_zero_point`),
    with its element type; None unless both are known at compile time."""
    values = constant_array(op.input(index))
    element = integer_operand(g, op, index)
    if values is None or op.input(zero_index) is None:
        return None if values is None else (values, element)
    zeros = constant_array(op.input(zero_index))
    if zeros is None:
        return None
    parameter(g, op, g.input(op, zero_index), values.shape, axis)  # checks the shape
    if zeros.size == 1:
        zeros = zeros.reshape(())
    elif zeros.ndim == 1:
        zeros = zeros.reshape([-1 if d == axis else 1 for d in range(values.ndim)])
    difference = difference_type(element)
    return (values.astype(np.int64) - zeros.astype(np.int64)).astype(numpy_dtype_of(difference)), difference


def minus_zero_point(g: GraphLowering, op: OnnxOp, index: int, zero_index: int, axis: int | None) -> SSAValue:
    """Input `index` less its zero point (input `zero_index`, read along `axis` as
    `parameter` does): the input itself where there is none (the contractions
    widen their operands as they load them), else a new tensor, made at compile
    time for constants (weights). The difference of 8-bit values is held in
    int16, halving what the contraction loads."""
    element = integer_operand(g, op, index)
    x, zero_buffer = g.input(op, index), g.input(op, zero_index)
    if zero_buffer is None:
        return x
    constant = constant_less_zero_point(g, op, index, zero_index, axis)
    if constant is not None:
        array, difference = constant
        return weight_buffer(g, op, array, difference, f"{op.node_name or op.OP_TYPE}_{index}_less_zero_point")
    shape = shape_of(x)
    zero_point = parameter(g, op, zero_buffer, shape, axis)
    difference = difference_type(element)
    out = alloc_shaped(g.top, difference, shape)
    ivs, body = g.top.loop_nest(shape)
    value = body.sub(body.convert(body.load(x, ivs), i32), body.convert(zero_point(body, ivs), i32))
    body.store(body.convert(value, difference), out, ivs)
    return out


def integer_matmul(g: GraphLowering, op: OnnxOp, indices: tuple[int, int, int, int], out: SSAValue) -> None:
    """out (int32) = (A - a zero point) @ (B - b zero point), with the input indices
    (a, a zero point, b, b zero point); A's zero point per row (1-D of A's row
    count, or [..., M, 1]), B's per column ([N] or [..., 1, N]).

    Constant 2-D weights B are stored transposed (less their zero points) at
    compile time: each output is then a dot product of contiguous rows of A and
    B^T, a reduction LLVM vectorizes (pmaddwd on x86 for int16 differences).
    Otherwise the MatMul nest."""
    a_index, a_zero_index, b_index, b_zero_index = indices
    a_rank, b_rank = len(shape_of(g.input(op, a_index))), len(shape_of(g.input(op, b_index)))
    a = minus_zero_point(g, op, a_index, a_zero_index, a_rank - 2 if a_rank > 1 else None)
    weights = constant_less_zero_point(g, op, b_index, b_zero_index, b_rank - 1) if b_rank == 2 else None
    if weights is None:
        matmul_nest(g, op, a, minus_zero_point(g, op, b_index, b_zero_index, b_rank - 1), out)
        return
    matmul_batch_rank(g, op, a, g.input(op, b_index), out)
    array, element = weights
    hint = f"{op.node_name or op.OP_TYPE}_{b_index}_transposed"
    transposed = weight_buffer(g, op, np.ascontiguousarray(array.T), element, hint)
    ivs, body = g.top.loop_nest(shape_of(out))
    *rows, column = ivs

    def multiply_add(b: KernelBuilder, ks: list[Bound], total: SSAValue) -> SSAValue:
        left = b.convert(b.load(a, [*rows, ks[0]]), i32)
        return b.add(total, b.mul(left, b.convert(b.load(transposed, [column, ks[0]]), i32)))

    body.store(body.reduce([(0, array.shape[0])], body.constant(0, i32), multiply_add), out, ivs)


def conv_operands(g: GraphLowering, op: OnnxOp, indices: tuple[int, int, int, int]) -> tuple[SSAValue, SSAValue]:
    """The operands (input indices x, x zero point, w, w zero point) of an integer
    convolution less their zero points: one for x, one per output channel (or
    one) for the weights."""
    x_index, x_zero_index, w_index, w_zero_index = indices
    return minus_zero_point(g, op, x_index, x_zero_index, None), minus_zero_point(g, op, w_index, w_zero_index, 0)


def int32_result(g: GraphLowering, op: OnnxOp) -> SSAValue:
    element = op.results[0].type.get_element_type()
    if element != i32:
        raise g.unsupported(op, f"result type {element} is not supported")
    return g.result(op)


@lowers("MatMulInteger", run_time_dims=True)
def lower_matmul_integer(g: GraphLowering, op: OnnxOp) -> None:
    """int32 (A - a_zero_point) @ (B - b_zero_point)."""
    out = int32_result(g, op)
    if not lower_matmul_integer_as_gemm(g, op, out):
        integer_matmul(g, op, (0, 2, 1, 3), out)


@lowers("ConvInteger", run_time_dims=True)
def lower_conv_integer(g: GraphLowering, op: OnnxOp) -> None:
    """int32 Conv of (x - x_zero_point) and (w - w_zero_point); padding is the zero point."""
    out = int32_result(g, op)
    if lower_conv_integer_as_gemm(g, op, out) or lower_conv_integer_depthwise(g, op, out):
        return
    x, w = conv_operands(g, op, (0, 2, 1, 3))
    direct_conv(g, op, x, w, None, out)


def requantize(
    g: GraphLowering,
    op: OnnxOp,
    sums: SSAValue,
    out: SSAValue,
    input_scales: tuple[Loader, Loader],
    y_scale: Loader,
    y_zero_point: Loader | None,
) -> None:
    """out = saturate(round(sums * (scale_a * scale_b / y_scale) + y_zero_point))."""
    target = out.type.get_element_type()
    ivs, body = g.top.loop_nest(shape_of(out))
    first, second = (scale(body, ivs) for scale in input_scales)
    multiplier = rounded_op(body, "div", rounded_op(body, "mul", first, second), y_scale(body, ivs))
    value = body.mul(body.convert(body.load(sums, ivs), f64), body.convert(multiplier, f64))
    zero = y_zero_point(body, ivs) if y_zero_point is not None else None
    body.store(to_integer(body, value, zero, target, round_first=False), out, ivs)


def check_scales(g: GraphLowering, op: OnnxOp, indices: Sequence[int]) -> None:
    """The scale inputs must share one float type."""
    g.same_element_type(op, [op.input(k) for k in indices], ints=False)


@lowers("QLinearMatMul", run_time_dims=True)
def lower_qlinear_matmul(g: GraphLowering, op: OnnxOp) -> None:
    """MatMulInteger of a and b, requantized with a's scale per row, b's per column
    and one y scale and zero point."""
    check_scales(g, op, [1, 4, 6])
    quantization_target(g, op, floats=False)
    if lower_qlinear_matmul_as_gemm(g, op):
        return
    out = g.result(op)
    out_shape = shape_of(out)
    sums = alloc_shaped(g.top, i32, out_shape)
    integer_matmul(g, op, (0, 2, 3, 5), sums)
    a_shape, b_shape = shape_of(g.input(op, 0)), shape_of(g.input(op, 3))
    rows = matmul_batch_rank(g, op, g.input(op, 0), g.input(op, 3), out) if len(a_shape) > 1 else None
    columns = len(out_shape) - 1 if len(b_shape) > 1 else None
    a_scale = parameter(g, op, g.input(op, 1), out_shape, rows)
    b_scale = parameter(g, op, g.input(op, 4), out_shape, columns)
    y_scale = parameter(g, op, g.input(op, 6), out_shape, None)
    y_zero = parameter(g, op, g.input(op, 7), out_shape, None)
    requantize(g, op, sums, out, (a_scale, b_scale), y_scale, y_zero)


@lowers("QLinearConv", run_time_dims=True)
def lower_qlinear_conv(g: GraphLowering, op: OnnxOp) -> None:
    """ConvInteger of x and w plus the int32 bias, requantized with one x scale,
    w's scale per output channel, and one y scale and zero point."""
    check_scales(g, op, [1, 4, 6])
    quantization_target(g, op, floats=False)
    if lower_qlinear_conv_as_gemm(g, op) or lower_qlinear_depthwise(g, op):
        return
    x, w = conv_operands(g, op, (0, 2, 3, 5))
    bias = g.input(op, 8)
    if bias is not None and bias.type.get_element_type() != i32:
        raise g.unsupported(op, f"bias of element type {bias.type.get_element_type()} is not supported")
    out = g.result(op)
    out_shape = shape_of(out)
    sums = alloc_shaped(g.top, i32, out_shape)
    direct_conv(g, op, x, w, bias, sums)
    x_scale = parameter(g, op, g.input(op, 1), out_shape, None)
    w_scale = parameter(g, op, g.input(op, 4), out_shape, 1)
    y_scale = parameter(g, op, g.input(op, 6), out_shape, None)
    y_zero = parameter(g, op, g.input(op, 7), out_shape, None)
    requantize(g, op, sums, out, (x_scale, w_scale), y_scale, y_zero)
