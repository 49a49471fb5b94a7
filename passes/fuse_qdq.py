"""fuse-qdq: `DequantizeLinear → Conv/MatMul → (Relu/Clip) → QuantizeLinear` → QLinearConv/QLinearMatMul;
`DequantizeLinear → MaxPool → QuantizeLinear` of one scale and zero point → MaxPool of the bytes;
`DequantizeLinear → Gemm` → MatMulInteger, scaled to float (`fuse_gemm`).

A QDQ model (onnxruntime's quantizer's default format, and what the importer makes of the
com.microsoft ops) computes every int8 layer in float between a DequantizeLinear of its
operands and a QuantizeLinear of its result. Where the float op is a Conv or a MatMul with
constant quantized weights, the pattern is the integer op QLinearConv/QLinearMatMul, whose
lowering accumulates in int32 and requantizes in its epilogue (onnx_to_krnl/quantized_gemm.py).
This pass must run before constprop, which would fold the weights' DequantizeLinear.

Matched: a DequantizeLinear of an 8-bit activation with scalar scale and zero point; one of
constant 8-bit weights (per tensor, or per output channel: axis 0 for Conv, the last axis for
MatMul's 2-D B); for Conv, no bias or the DequantizeLinear of a constant int32 bias whose
scale is x scale * w scale (what the quantizer writes) and zero point 0; results used once;
a QuantizeLinear with a scalar scale and zero point. A Relu or a Clip with constant bounds
between the op and the QuantizeLinear becomes a Clip of the integer result to the quantized
bounds, exactly: quantization is monotonic, so it commutes with clamping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.graph import (
    constant_array,
    infer_new_ops,
    insert_before,
    make_constant,
    make_op,
    python_attribute,
    replace_results,
    result_dtype,
    rewrite_ops,
    schema_attributes,
    single_use,
)

EIGHT_BITS = (np.dtype(np.uint8), np.dtype(np.int8))


@dataclass(frozen=True)
class FuseQDQPass(ModulePass):
    name = "fuse-qdq"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_ops(op, {"QuantizeLinear": fuse_quantize, "Gemm": fuse_gemm})


@dataclass
class _Dequantized:
    """A DequantizeLinear's operand, scale and zero point (as values), and the arrays known."""

    x: SSAValue
    scale: SSAValue
    zero_point: SSAValue | None
    scale_array: np.ndarray
    zero_array: np.ndarray


def _dequantized(value: SSAValue, axis: int | None, constant: bool = False) -> _Dequantized | None:
    """`value` as the DequantizeLinear of an 8-bit tensor (constant if `constant`) with a
    scalar scale and zero point, or (given an `axis`) ones along that axis."""
    op = value.owner
    if not isinstance(op, OnnxOp) or op.OP_TYPE != "DequantizeLinear" or op.attr("block_size", 0):
        return None
    x, scale, zero_point = op.input(0), op.input(1), op.input(2)
    x_array = constant_array(x)
    scale_array = constant_array(scale)
    element = x_array.dtype if x_array is not None else result_dtype(x)
    zero_array = constant_array(zero_point) if zero_point is not None else np.zeros((), element)
    if scale_array is None or zero_array is None or scale_array.dtype != np.float32 or (constant and x_array is None):
        return None
    if element not in EIGHT_BITS or zero_array.dtype != element:
        return None
    if scale_array.size != 1:
        rank = x_array.ndim if x_array is not None else -1
        if axis is None or scale_array.ndim != 1 or rank < 1 or op.attr("axis", 1) % rank != axis % rank:
            return None
        if scale_array.shape[0] != x_array.shape[axis] or zero_array.shape not in ((), scale_array.shape):
            return None
    return _Dequantized(x, scale, zero_point, scale_array, zero_array)


def _clamp(op: OnnxOp) -> tuple[float, float] | None:
    """The bounds of a Relu, or of a Clip with constant (or absent) bounds."""
    if op.OP_TYPE == "Relu":
        return 0.0, float("inf")
    if op.OP_TYPE != "Clip" or len(op.operands) < 1:
        return None
    bounds = []
    for index, default in ((1, float("-inf")), (2, float("inf"))):
        value = op.input(index) if index < len(op.operands) else None
        array = constant_array(value) if value is not None else np.array(default)
        if array is None or array.size != 1:
            return None
        bounds.append(float(array.reshape(-1)[0]))
    return bounds[0], bounds[1]


def _quantized_bound(bound: float, scale: float, zero_point: int, dtype: np.dtype) -> int:
    info = np.iinfo(dtype)
    if np.isinf(bound):
        return info.min if bound < 0 else info.max
    return int(np.clip(np.rint(np.float32(bound) / np.float32(scale)) + zero_point, info.min, info.max))


def fuse_quantize(quantize: OnnxOp, opset: int) -> None:
    y_scale, y_zero = (
        constant_array(quantize.input(1)),
        constant_array(quantize.input(2)) if quantize.input(2) else None,
    )
    if opset < 13 or y_scale is None or y_scale.size != 1 or (quantize.input(2) and y_zero is None):
        return
    y_dtype = y_zero.dtype if y_zero is not None else np.dtype(np.uint8)
    if y_dtype not in EIGHT_BITS or quantize.attr("output_dtype", 0) not in (0, None):
        return
    producer = quantize.input(0).owner
    if not isinstance(producer, OnnxOp) or not single_use(quantize.input(0)):
        return
    clamp = _clamp(producer)
    if clamp is not None:
        producer = producer.input(0).owner
        if not isinstance(producer, OnnxOp) or not single_use(producer.results[0]):
            return
    y_zero_value = quantize.input(2)
    made = []
    if y_zero_value is None:
        made = [make_constant(quantize, np.zeros((), np.uint8), f"{producer.node_name}.y_zero_point")]
        y_zero_value = made[0].results[0]
    new_ops = _integer_op(producer, quantize.input(1), y_zero_value)
    if not new_ops:
        return
    new_ops = made + new_ops
    insert_before(quantize, new_ops)
    infer_new_ops(new_ops, opset)
    integer = new_ops[-1]
    result = integer.results[0]
    if clamp is not None:
        zero_point = int(y_zero.reshape(-1)[0]) if y_zero is not None else 0
        low, high = (_quantized_bound(b, float(y_scale.reshape(-1)[0]), zero_point, y_dtype) for b in clamp)
        info = np.iinfo(y_dtype)
        if (low, high) != (info.min, info.max):
            lows = make_constant(quantize, np.array(low, y_dtype), f"{producer.node_name}.low")
            highs = make_constant(quantize, np.array(high, y_dtype), f"{producer.node_name}.high")
            clip = make_op("Clip", [result, lows.results[0], highs.results[0]], {}, f"{producer.node_name}/clip")
            insert_before(quantize, [lows, highs, clip])
            infer_new_ops([clip], opset)
            result = clip.results[0]
    replace_results(quantize, [result])


def _integer_op(producer: OnnxOp, y_scale: SSAValue, y_zero: SSAValue) -> list[OnnxOp]:
    """The QLinearConv/QLinearMatMul computing `producer` quantized by (y_scale, y_zero),
    after the constants it needs; [] if the pattern does not match."""
    if producer.OP_TYPE == "Conv":
        return _qlinear_conv(producer, y_scale, y_zero)
    if producer.OP_TYPE == "MatMul":
        return _qlinear_matmul(producer, y_scale, y_zero)
    if producer.OP_TYPE == "MaxPool":
        return _byte_max_pool(producer, y_scale, y_zero)
    return []


def _zero_point(anchor: OnnxOp, side: _Dequantized, name: str) -> tuple[list[OnnxOp], SSAValue]:
    """The zero point value of `side`, made (zeros of its type) where the model leaves it out."""
    if side.zero_point is not None:
        return [], side.zero_point
    constant = make_constant(anchor, np.zeros(side.scale_array.shape, side.zero_array.dtype), name)
    return [constant], constant.results[0]


def _qlinear_conv(conv: OnnxOp, y_scale: SSAValue, y_zero: SSAValue) -> list[OnnxOp]:
    x = _dequantized(conv.input(0), None)
    w = _dequantized(conv.input(1), 0, constant=True)
    if x is None or w is None:
        return []
    inputs = [x.x, x.scale, None, w.x, w.scale, None, y_scale, y_zero]
    if conv.input(2) is not None:
        bias = _int32_bias(conv.input(2), x, w)
        if bias is None:
            return []
        inputs.append(bias)
    name = conv.node_name
    made_x, inputs[2] = _zero_point(conv, x, f"{name}.x_zero_point")
    made_w, inputs[5] = _zero_point(conv, w, f"{name}.w_zero_point")
    attributes = schema_attributes(conv)
    return [*made_x, *made_w, make_op("QLinearConv", inputs, attributes, name)]


def _int32_bias(bias: SSAValue, x: _Dequantized, w: _Dequantized) -> SSAValue | None:
    """The int32 constant of `bias` where it is the DequantizeLinear of one with scale x scale
    * w scale (per channel where w's is) and zero point 0, as the quantizer writes it."""
    b = bias.owner
    if not isinstance(b, OnnxOp) or b.OP_TYPE != "DequantizeLinear":
        return None
    values, scale = constant_array(b.input(0)), _constant_product(b.input(1))
    zero = constant_array(b.input(2)) if b.input(2) is not None else np.zeros(1, np.int32)
    expected = (x.scale_array.reshape(-1)[0] * w.scale_array).reshape(-1)
    if values is None or values.dtype != np.int32 or scale is None or zero is None or np.any(zero):
        return None
    if not np.allclose(np.broadcast_to(scale.reshape(-1), expected.shape), expected, rtol=1e-6, atol=0):
        return None
    return b.input(0)


def _constant_product(value: SSAValue) -> np.ndarray | None:
    """A constant, or the Mul of two (the scale of QGemm's bias, as the importer writes it)."""
    op = value.owner
    if constant_array(value) is not None or not isinstance(op, OnnxOp) or op.OP_TYPE != "Mul":
        return constant_array(value)
    left, right = constant_array(op.input(0)), constant_array(op.input(1))
    return left * right if left is not None and right is not None else None


def fuse_gemm(gemm: OnnxOp, opset: int) -> None:
    """`DequantizeLinear → Gemm` (alpha and beta 1, A not transposed, constant int8 weights of
    zero point 0, an int32 bias or none) → MatMulInteger of the bytes by the weights as [K, N],
    plus the bias, in int32, then times x scale * w scale (per column) in float: the int8
    kernel in place of a float Gemm of float weights (a float or quantized result: a
    QuantizeLinear after stays an element-wise op). ResNet's classifier (QGemm, or the QDQ
    Gemm) read 8 MB of float weights: one row by 2048x1000 ran 262 us, now 44 (onnxruntime
    57), its result onnxruntime's exactly."""
    if opset < 13 or gemm.attr("transA", 0) or gemm.attr("alpha", 1.0) != 1.0 or gemm.attr("beta", 1.0) != 1.0:
        return
    transposed = gemm.attr("transB", 0)
    a = _dequantized(gemm.input(0), None)
    w = _dequantized(gemm.input(1), 0 if transposed else 1, constant=True)
    if a is None or w is None or w.zero_array.dtype != np.int8 or np.any(w.zero_array):
        return
    bias = _int32_bias(gemm.input(2), a, w) if gemm.input(2) is not None else None
    if gemm.input(2) is not None and bias is None:
        return
    name, weights = gemm.node_name, constant_array(w.x)
    columns = make_constant(gemm, np.ascontiguousarray(weights.T if transposed else weights), f"{name}.weights")
    scale = make_constant(gemm, np.float32(a.scale_array.reshape(-1)[0]) * w.scale_array, f"{name}.scale")
    made_a, a_zero = _zero_point(gemm, a, f"{name}.a_zero_point")
    made = [*made_a, columns, scale, make_op("MatMulInteger", [a.x, columns.results[0], a_zero], {}, f"{name}/integer")]
    if bias is not None:
        made.append(make_op("Add", [made[-1].results[0], bias], {}, f"{name}/bias"))
    made.append(make_op("Cast", [made[-1].results[0]], {"to": python_attribute(1)}, f"{name}/float"))
    made.append(make_op("Mul", [made[-1].results[0], scale.results[0]], {}, f"{name}/scaled"))
    insert_before(gemm, made)
    infer_new_ops(made, opset)
    replace_results(gemm, [made[-1].results[0]])


def _qlinear_matmul(matmul: OnnxOp, y_scale: SSAValue, y_zero: SSAValue) -> list[OnnxOp]:
    a = _dequantized(matmul.input(0), None)
    b = _dequantized(matmul.input(1), 1, constant=True)
    if a is None or b is None or constant_array(b.x).ndim != 2:
        return []
    name = matmul.node_name
    made_a, a_zero = _zero_point(matmul, a, f"{name}.a_zero_point")
    made_b, b_zero = _zero_point(matmul, b, f"{name}.b_zero_point")
    inputs = [a.x, a.scale, a_zero, b.x, b.scale, b_zero, y_scale, y_zero]
    return [*made_a, *made_b, make_op("QLinearMatMul", inputs, {}, name)]


def _byte_max_pool(pool: OnnxOp, y_scale: SSAValue, y_zero: SSAValue) -> list[OnnxOp]:
    """The MaxPool of the bytes themselves where x is dequantized and the result quantized
    with the same (positive) scale and zero point, as the quantizer writes it: dequantizing
    is monotonic, so the maximum commutes with it, and quantizing a dequantized byte gives
    it back (k * s / s rounds to k for |k| <= 255)."""
    x = _dequantized(pool.input(0), None)
    scale, zero = constant_array(y_scale), constant_array(y_zero)
    if x is None or scale is None or zero is None or any(result.uses for result in pool.results[1:]):
        return []
    if zero.dtype != x.zero_array.dtype or zero.reshape(-1)[0] != x.zero_array.reshape(-1)[0]:
        return []
    if scale.reshape(-1)[0] != x.scale_array.reshape(-1)[0] or not x.scale_array.reshape(-1)[0] > 0:
        return []
    attributes = schema_attributes(pool)
    return [make_op("MaxPool", [x.x], attributes, pool.node_name)]
