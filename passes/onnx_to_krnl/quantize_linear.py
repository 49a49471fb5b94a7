"""QuantizeLinear and DequantizeLinear as element-wise ops, fused with their neighbours.

Between the integer layers of a quantized model, onnxruntime's quantizer leaves the ops it
does not quantize in float between a DequantizeLinear of their inputs and a QuantizeLinear
of their result: DequantizeLinear x2 -> Add -> Relu -> QuantizeLinear of a residual block,
each a nest of its own, each reading and writing a whole tensor (ResNet-w16: 0.15 ms of 5).
As element-wise ops of fusion.py (`scalar_op`), such a chain is one nest computing every
op in registers, its dims merged into one loop where the parameters allow. Numerics as in
quantization.py: a value is quantized as round-half-to-even(x / scale) + zero point,
saturated; dequantized as (x - zero point) * scale, rounded once to the result type.
A QuantizeLinear ends its nest (`ends_nest`): each nest runs from quantized tensors to the
next one. Fused through them, BERT's GELU (five Quantize/Dequantize pairs around
Div/Erf/Add/Mul) became one latency-bound nest of seven divisions and an erf per vector,
slower than the separate nests (0.064 against 0.046 ms at hidden 512).

A parameter is read per element as the fused nest reads any operand: one value, a 1-D
tensor along `axis`, or numpy broadcasting. Blocked parameters (`block_size`) and 1-D ones
of a length known at run time only along `axis` (read clamped) are first expanded to x's
shape by a nest of their own (`quantization.parameter`'s reads), which the fused nest reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IntegerType, f32, f64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import element_type_of_onnx, is_float, is_low_precision
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import GraphLowering, Operand, broadcast_axes, normalized_axis, shape_of
from onnxc.passes.onnx_to_krnl.fusion import Axes, ScalarOp, elementwise_read, scalar_op
from onnxc.passes.onnx_to_krnl.quantization import (
    division_type,
    float_input,
    one_value,
    parameter,
    quantization_target,
    quantized,
    rounded_op,
)

Formula = Callable[[KernelBuilder, SSAValue, SSAValue, SSAValue | None], SSAValue]
"""(builder, x, scale, zero point or None) -> an element of the result."""


@scalar_op("QuantizeLinear", ends_nest=True)
def quantize_linear(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """y = saturate(round(x / y_scale) + y_zero_point), the division in the type of
    `precision` if given (opset 23), else numpy's type of x / y_scale."""
    x_type = g.element_type(op, op.input(0))
    scale_type = float_input(g, op, 1)
    target = quantization_target(g, op)
    precision = op.attr("precision")
    divided = element_type_of_onnx(precision) if precision else division_type(x_type, scale_type)
    if divided is None or not is_float(divided):
        raise g.unsupported(op, f"precision {precision} is not supported")
    saturate = bool(op.attr("saturate"))

    def formula(b: KernelBuilder, x: SSAValue, scale: SSAValue, zero_point: SSAValue | None) -> SSAValue:
        quotient = rounded_op(b, "div", b.convert(x, divided), b.convert(scale, divided))
        return quantized(b, quotient, zero_point, target, saturate)

    return _element_wise(g, op, formula, with_zero_point=True)


@scalar_op("DequantizeLinear")
def dequantize_linear(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """y = (x - x_zero_point) * x_scale: x as float32, less the zero point (in float64
    for int32, where numpy promotes), times the scale, rounded once to the result
    type. A float x has no zero point to subtract (float8's is zero by the spec)."""
    x_type = op.input(0).type.get_element_type()
    if not isinstance(x_type, IntegerType) and not is_low_precision(x_type):
        raise g.unsupported(op, f"dequantization of {x_type} is not supported")
    float_input(g, op, 1)
    result_type = g.element_type(op, op.results[0], ints=False)
    integer = isinstance(x_type, IntegerType)
    wide = f64 if integer and op.input(2) is not None and x_type.width.data > 16 else f32

    def formula(b: KernelBuilder, x: SSAValue, scale: SSAValue, zero_point: SSAValue | None) -> SSAValue:
        value = b.convert(b.convert(x, f32), wide)
        if zero_point is not None:
            value = b.sub(value, b.convert(zero_point, wide))
        return b.convert(b.mul(value, b.convert(scale, wide)), result_type)

    return _element_wise(g, op, formula, with_zero_point=integer)


def _element_wise(g: GraphLowering, op: OnnxOp, formula: Formula, *, with_zero_point: bool) -> ScalarOp:
    """The op as an element of x (input 0) and of its parameters (scale, and zero point
    where present and `with_zero_point`), read as the fused nest reads operands where it
    can, else expanded to x's shape first (the module docstring)."""
    shape = g.tensor_shape(op, op.results[0])
    axis, block_size = op.attr("axis"), op.attr("block_size")
    reads: list[tuple[SSAValue, Axes] | Operand] = [elementwise_read(op, 0)]
    for index in [1, 2] if with_zero_point and op.input(2) is not None else [1]:
        buffer = g.input(op, index)
        loader = parameter(g, op, buffer, shape, axis, block_size)  # checks the shape
        read = _read(g, op, index, shape)
        if read is None:
            expanded = alloc_shaped(g.top, buffer.type.get_element_type(), shape)
            ivs, body = g.top.loop_nest(shape)
            body.store(loader(body, ivs), expanded, ivs)
            read = Operand.whole(expanded)
        reads.append(read)
    return ScalarOp(reads, lambda b, xs: formula(b, xs[0], xs[1], (xs[2:] or [None])[0]))


def _read(g: GraphLowering, op: OnnxOp, index: int, shape: Sequence[Bound]) -> tuple[SSAValue, Axes] | None:
    """Parameter `index` read at each element of x (of `shape`) by the fused nest, None
    where only `parameter` reads it (blocked, or 1-D of a run-time length along the axis)."""
    value = op.input(index)
    param_shape = shape_of(g.buffers[value])
    axis = op.attr("axis")
    if one_value(param_shape, len(shape), axis):
        return value, (None,) * len(param_shape)
    if op.attr("block_size"):
        return None
    if len(param_shape) == 1:
        return (value, (normalized_axis(g, op, axis, len(shape)),)) if isinstance(param_shape[0], int) else None
    return value, broadcast_axes(g, op, param_shape, shape)
