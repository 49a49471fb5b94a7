"""Quantization ops, numerically: rounding ties (half to even, before or after
the zero point as onnx.reference does), saturation, per-axis and blocked
parameters, integer contractions with zero points, and a quantized model
against onnxruntime."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from helpers import Case, compile_and_run, ints, make_model, rand, run_case, value_info, with_output_types
from onnx import TensorProto, helper, numpy_helper

# Quotients that are ties (x.5) of both parities, beyond the int8 and uint8 range.
TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 126.5, 127.5, -128.5, 1e6, -1e6, 0.0], np.float32)
F32 = np.float32
# Rows of uint8 near 128 (small sums: ties of both parities) and far from it (saturating sums).
NEAR_ZERO_POINT_THEN_FAR = np.concatenate(
    [ints(2, 5, dtype=np.uint8, low=124, high=133), np.array([[255, 255, 0, 255, 255]], np.uint8)]
)


def scalar(value, dtype) -> np.ndarray:
    return np.array(value, dtype)


CASES: dict[str, Case] = {
    # QuantizeLinear rounds x / scale half to even, then adds the zero point (an odd
    # zero point shows the order), then saturates.
    "quantize_ties_uint8_odd_zero_point": Case(
        "QuantizeLinear", {"x": TIES}, initializers={"s": scalar(1, F32), "z": scalar(3, np.uint8)}, opset=13
    ),
    "quantize_ties_int8": Case(
        "QuantizeLinear", {"x": TIES * 2}, initializers={"s": scalar(2, F32), "z": scalar(-1, np.int8)}, opset=13
    ),
    "quantize_no_zero_point_is_uint8": Case(
        "QuantizeLinear", {"x": TIES}, initializers={"s": scalar(0.5, F32)}, node_inputs=["x", "s"], opset=10
    ),
    "quantize_int16_saturates": Case(
        "QuantizeLinear", {"x": TIES * 300}, initializers={"s": scalar(1, F32), "z": scalar(7, np.int16)}, opset=21
    ),
    "quantize_uint16_saturates": Case(
        "QuantizeLinear", {"x": TIES * 600}, initializers={"s": scalar(1, F32), "z": scalar(5, np.uint16)}, opset=21
    ),
    # Computed in float32 for 8- and 16-bit targets: ties beside a large zero point, and
    # quotients past 2^24 (where float32 has no halves) saturating.
    "quantize_uint16_large_zero_point_float32": Case(
        "QuantizeLinear",
        {"x": np.array([534.5, 535.5, -64999.5, -65000.5, -65001.5, 2.0**24 + 2, -(2.0**25)], F32)},
        initializers={"s": scalar(1, F32), "z": scalar(65000, np.uint16)},
        opset=21,
    ),
    "quantize_output_dtype_int8": Case(
        "QuantizeLinear",
        {"x": TIES},
        {"output_dtype": TensorProto.INT8},
        initializers={"s": scalar(1, F32)},
        node_inputs=["x", "s"],
        opset=21,
    ),
    "quantize_float16_ties": Case(
        "QuantizeLinear",
        {"x": TIES[:-3].astype(np.float16) * np.float16(3)},
        initializers={"s": scalar(3, np.float16), "z": scalar(1, np.uint8)},
        opset=19,
    ),
    # An int32 x (opset 10) is divided in float64, as numpy promotes int32 / float32.
    "quantize_int32_input": Case(
        "QuantizeLinear",
        {"x": np.array([-7, -3, 0, 3, 5, 7, 1000, -1000, 2**31 - 1], np.int32)},
        initializers={"s": scalar(2, F32), "z": scalar(1, np.int8)},
        opset=10,
    ),
    "quantize_precision_float16": Case(
        "QuantizeLinear",
        {"x": rand(4, 6) * 50},
        {"precision": TensorProto.FLOAT16},
        initializers={"s": scalar(0.3, F32), "z": scalar(9, np.uint8)},
        opset=23,
    ),
    "quantize_per_axis_negative_axis": Case(
        "QuantizeLinear",
        {"x": rand(2, 3, 4) * 100},
        {"axis": -2},
        initializers={"s": np.array([0.5, 1.0, 2.0], F32), "z": np.array([-3, 0, 5], np.int8)},
        opset=13,
    ),
    "quantize_blocked_remainder": Case(
        "QuantizeLinear",
        {"x": rand(3, 5) * 20},
        {"axis": 1, "block_size": 2},
        initializers={"s": rand(3, 3, low=0.1, high=1.0), "z": ints(3, 3, dtype=np.uint8, low=0, high=255)},
        opset=21,
    ),
    # Infinities saturate (onnx.reference casts them to int32 first: INT_MIN).
    "quantize_infinity_saturates": Case(
        "QuantizeLinear",
        {"x": np.array([np.inf, -np.inf, 1.0], F32)},
        initializers={"s": scalar(1, F32), "z": scalar(0, np.int8)},
        reference="onnxruntime",
    ),
    # DequantizeLinear: (x - zero point) * scale, int32 in float64 as numpy promotes.
    "dequantize_int32_zero_point": Case(
        "DequantizeLinear",
        {"x": np.array([2**31 - 1, -(2**31), 12345678, -7], np.int32)},
        initializers={"s": scalar(0.37, F32), "z": scalar(-(2**30), np.int32)},
        opset=19,
    ),
    "dequantize_uint16_axis0": Case(
        "DequantizeLinear",
        {"x": ints(3, 4, dtype=np.uint16, low=0, high=65535)},
        {"axis": 0},
        initializers={"s": np.array([0.5, 0.25, 3.0], F32), "z": np.array([1, 65535, 300], np.uint16)},
        opset=21,
    ),
    "dequantize_float16_scale": Case(
        "DequantizeLinear",
        {"x": ints(2, 4, dtype=np.int8, low=-128, high=127)},
        initializers={"s": scalar(0.1, np.float16), "z": scalar(-5, np.int8)},
        opset=19,
    ),
    "dequantize_output_dtype_float16": Case(
        "DequantizeLinear",
        {"x": ints(2, 4, dtype=np.uint8, low=0, high=255)},
        {"output_dtype": TensorProto.FLOAT16},
        initializers={"s": scalar(0.1, F32), "z": scalar(17, np.uint8)},
        opset=23,
    ),
    "dynamic_quantize_random": Case(
        "DynamicQuantizeLinear", {"x": rand(5, 7) * 3}, outputs=3, node_inputs=["x"], opset=11
    ),
    "dynamic_quantize_all_positive": Case(
        "DynamicQuantizeLinear", {"x": rand(4, 4, low=1.0, high=9.0)}, outputs=3, node_inputs=["x"], opset=11
    ),
    # QLinearMatMul rounds after adding the zero point (as onnx.reference): with the
    # multiplier 0.5, odd sums give ties.
    "qlinear_matmul_ties_saturation": Case(
        "QLinearMatMul",
        {"a": NEAR_ZERO_POINT_THEN_FAR, "b": ints(5, 4, dtype=np.uint8, low=123, high=132)},
        initializers={
            "as": scalar(0.5, F32),
            "az": scalar(128, np.uint8),
            "bs": scalar(0.25, F32),
            "bz": scalar(127, np.uint8),
            "ys": scalar(0.25, F32),
            "yz": scalar(129, np.uint8),
        },
        node_inputs=["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
        opset=10,
    ),
    "qlinear_matmul_int8_batched": Case(
        "QLinearMatMul",
        {"a": ints(2, 3, 6, dtype=np.int8, low=-128, high=127), "b": ints(6, 5, dtype=np.int8, low=-128, high=127)},
        initializers={
            "as": scalar(0.02, F32),
            "az": scalar(3, np.int8),
            "bs": scalar(0.01, F32),
            "bz": scalar(-2, np.int8),
            "ys": scalar(0.05, F32),
            "yz": scalar(-1, np.int8),
        },
        node_inputs=["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
        opset=10,
    ),
    # Constant 2-D weights take the dot-product kernel (B transposed at compile time).
    "qlinear_matmul_constant_weights_per_column": Case(
        "QLinearMatMul",
        {"a": ints(2, 3, 6, dtype=np.uint8, low=0, high=255)},
        initializers={
            "as": scalar(0.03, F32),
            "az": scalar(120, np.uint8),
            "b": ints(6, 5, dtype=np.int8, low=-128, high=127),
            "bs": np.array([0.01, 0.02, 0.03, 0.015, 0.005], F32),
            "bz": np.array([0, 1, -1, 3, 0], np.int8),
            "ys": scalar(0.1, F32),
            "yz": scalar(100, np.uint8),
        },
        node_inputs=["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
        opset=10,
    ),
    "matmul_integer_constant_weights_no_zero_point": Case(
        "MatMulInteger",
        {"a": ints(3, 7, dtype=np.int8, low=-128, high=127)},
        initializers={"b": ints(7, 4, dtype=np.uint8, low=0, high=255)},
        opset=10,
    ),
    "matmul_integer_vector_times_constant_weights": Case(
        "MatMulInteger",
        {"a": ints(7, dtype=np.uint8, low=0, high=255)},
        initializers={"b": ints(7, 4, dtype=np.uint8, low=0, high=255), "az": scalar(9, np.uint8)},
        opset=10,
    ),
    "conv_integer_group_stride_pads": Case(
        "ConvInteger",
        {"x": ints(1, 4, 6, 7, dtype=np.uint8, low=0, high=255)},
        {"group": 2, "strides": [2, 1], "pads": [1, 0, 1, 2]},
        initializers={
            "w": ints(6, 2, 3, 3, dtype=np.uint8, low=0, high=255),
            "xz": scalar(100, np.uint8),
            "wz": np.array([1, 2, 3, 4, 5, 6], np.uint8),
        },
        opset=10,
    ),
    "conv_integer_depthwise_long_rows": Case(  # the float depthwise conv, its sums stored as int32
        "ConvInteger",
        {"x": ints(1, 4, 5, 40, dtype=np.uint8, low=0, high=255)},
        {"group": 4, "pads": [1, 1, 1, 1]},
        initializers={
            "w": ints(4, 1, 3, 3, dtype=np.uint8, low=0, high=255),
            "xz": scalar(200, np.uint8),
            "wz": np.array([1, 2, 3, 4], np.uint8),
        },
        opset=10,
    ),
    "qlinear_conv_depthwise_5x5_long_rows": Case(  # 25 taps: the float depthwise conv along wide rows
        "QLinearConv",
        {"x": ints(1, 3, 6, 40, dtype=np.uint8, low=0, high=255)},
        {"group": 3, "pads": [2, 2, 2, 2]},
        initializers={
            "xs": scalar(0.05, F32),
            "xz": scalar(131, np.uint8),
            "w": ints(3, 1, 5, 5, dtype=np.int8, low=-128, high=127),
            "ws": np.array([0.01, 0.02, 0.005], F32),
            "wz": np.zeros(3, np.int8),
            "ys": scalar(0.5, F32),
            "yz": scalar(100, np.uint8),
            "b": ints(3, dtype=np.int32, low=-1000, high=1000),
        },
        opset=10,
        reference="onnxruntime",
    ),
    # QLinearConv against onnxruntime, bit for bit: both requantize in float32, where
    # onnx.reference multiplies in float64, so a product within an ulp of a rounding tie
    # lands one step apart (2 of 40 random draws of the case above).
    "qlinear_conv_bias_per_channel": Case(
        "QLinearConv",
        {"x": ints(2, 3, 5, 5, dtype=np.int8, low=-128, high=127)},
        {"pads": [1, 1, 1, 1]},
        initializers={
            "xs": scalar(0.05, F32),
            "xz": scalar(-3, np.int8),
            "w": ints(4, 3, 3, 3, dtype=np.int8, low=-128, high=127),
            "ws": np.array([0.01, 0.02, 0.005, 0.03], F32),
            "wz": np.zeros(4, np.int8),
            "ys": scalar(0.2, F32),
            "yz": scalar(5, np.int8),
            "b": ints(4, dtype=np.int32, low=-1000, high=1000),
        },
        opset=10,
        reference="onnxruntime",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_quantization_op(name, tmp_path):
    run_case(CASES[name], tmp_path)


def test_dequantize_is_exact(tmp_path):
    """One rounding, to the result type: bit-exact with the reference, not only close."""
    x = ints(64, dtype=np.int32, low=-(2**31), high=2**31 - 1).astype(np.int32)
    case = Case(
        "DequantizeLinear", {"x": x}, initializers={"s": scalar(0.0123, F32), "z": scalar(977, np.int32)}, opset=19
    )
    model = case.model()
    expected = onnx.reference.ReferenceEvaluator(model).run(None, case.inputs)
    (actual,) = compile_and_run(with_output_types(model, expected), case.inputs, tmp_path)
    assert actual.tobytes() == expected[0].tobytes()


def matmul_integer_by_spec(a, b, a_zero, b_zero) -> np.ndarray:
    """The spec's per-row (A) and per-column (B) zero points; onnx.reference broadcasts
    a 1-D zero point of A along its columns instead."""
    a32 = a.astype(np.int32) - (a_zero.reshape(-1, 1) if a_zero.ndim == 1 else a_zero).astype(np.int32)
    return a32 @ (b.astype(np.int32) - b_zero.astype(np.int32))


@pytest.mark.parametrize(
    "a_zero, b_zero",
    [
        (np.array([3, 200, 0, 17], np.uint8), np.array([-5, 0, 127], np.int8)),  # 1-D: per row, per column
        (np.array([[[9]], [[250]]], np.uint8), np.array(4, np.int8)),  # [D, 1, 1] broadcast, scalar
    ],
)
def test_matmul_integer_zero_points(a_zero, b_zero, tmp_path):
    a = ints(2, 4, 6, dtype=np.uint8, low=0, high=255)
    b = ints(6, 3, dtype=np.int8, low=-128, high=127)
    if a_zero.ndim == 1:
        a = a[0]
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    out_shape = (*a.shape[:-1], 3)
    graph = helper.make_graph(
        [node],
        "mmi",
        [value_info("a", a.dtype, a.shape)],
        [value_info("y", np.int32, out_shape)],
        [numpy_helper.from_array(b, "b"), numpy_helper.from_array(a_zero, "az"), numpy_helper.from_array(b_zero, "bz")],
    )
    (actual,) = compile_and_run(make_model(graph, 10), {"a": a}, tmp_path)
    np.testing.assert_array_equal(actual, matmul_integer_by_spec(a, b, a_zero, b_zero))


def small_cnn() -> onnx.ModelProto:
    """Conv → Relu → strided Conv → Reshape → MatMul, float32."""
    rng = np.random.default_rng(7)
    weights = {
        "w1": rng.standard_normal((8, 3, 3, 3)).astype(F32) * 0.3,
        "b1": rng.standard_normal(8).astype(F32) * 0.1,
        "w2": rng.standard_normal((4, 8, 3, 3)).astype(F32) * 0.2,
        "b2": rng.standard_normal(4).astype(F32) * 0.1,
        "shape": np.array([1, -1]),
        "wm": rng.standard_normal((36, 5)).astype(F32) * 0.2,
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2, 2]),
        helper.make_node("Reshape", ["c2", "shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "wm"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [value_info("x", F32, [1, 3, 8, 8])],
        [value_info("y", F32, [1, 5])],
        [numpy_helper.from_array(a, n) for n, a in weights.items()],
    )
    return make_model(graph, 13)


QUANTIZED_OPS = {
    "static_qoperator_per_channel": {"QuantizeLinear", "QLinearConv", "QLinearMatMul", "DequantizeLinear"},
    "static_qdq": {"QuantizeLinear", "DequantizeLinear", "Conv", "MatMul"},
    "dynamic": {"DynamicQuantizeLinear", "ConvInteger", "MatMulInteger"},
}


@pytest.mark.parametrize("quantization", list(QUANTIZED_OPS))
def test_quantized_model_matches_onnxruntime(quantization, tmp_path):
    """A model quantized by onnxruntime.quantization (QLinearConv/QLinearMatMul;
    Quantize/DequantizeLinear around float ops; DynamicQuantizeLinear with
    ConvInteger/MatMulInteger) gives onnxruntime's results, to within one output
    quantization step (they agree exactly today; a tie may round differently)."""
    quantization_tools = pytest.importorskip("onnxruntime.quantization")
    import onnxruntime

    float_path, quantized_path = tmp_path / "float.onnx", tmp_path / "quantized.onnx"
    onnx.save(small_cnn(), float_path)
    rng = np.random.default_rng(3)

    class Calibration(quantization_tools.CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([{"x": rng.standard_normal((1, 3, 8, 8)).astype(F32)} for _ in range(4)])

        def get_next(self):
            return next(self.feeds, None)

    if quantization == "dynamic":
        quantization_tools.quantize_dynamic(float_path, quantized_path)
    else:
        qoperator = quantization == "static_qoperator_per_channel"
        quantization_tools.quantize_static(
            float_path,
            quantized_path,
            Calibration(),
            quant_format=quantization_tools.QuantFormat.QOperator if qoperator else quantization_tools.QuantFormat.QDQ,
            per_channel=qoperator,
        )
    model = onnx.load(quantized_path)
    assert QUANTIZED_OPS[quantization] <= {n.op_type for n in model.graph.node}
    feeds = {"x": rng.standard_normal((1, 3, 8, 8)).astype(F32)}
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, feeds)
    (actual,) = compile_and_run(model, feeds, tmp_path)
    step = (expected.max() - expected.min()) / 255
    np.testing.assert_allclose(actual, expected, rtol=0, atol=step)


# The float8 / int4 / int2 forms (one element per byte, converted as Cast does).
LOW_PRECISION_CASES: dict[str, Case] = {
    "quantize_float8e4m3fn_saturate": Case(
        "QuantizeLinear",
        {"x": np.array([0.0, -0.0, 1.3, 500.0, -1000.0, np.inf, -np.inf, np.nan, 0.00048], F32)},
        initializers={"s": scalar(1, F32), "z": np.zeros((), ml_dtypes.float8_e4m3fn)},
        opset=21,
    ),
    "quantize_float8e5m2_no_saturate": Case(
        "QuantizeLinear",
        {"x": np.array([0.0, -0.0, 1.3, 1e5, -1e5, np.inf, -np.inf, np.nan, 3.1], F32)},
        {"saturate": 0},
        initializers={"s": scalar(2, F32), "z": np.zeros((), ml_dtypes.float8_e5m2)},
        opset=21,
    ),
    "quantize_int4_ties_saturation_per_axis": Case(
        "QuantizeLinear",
        {"x": np.stack([TIES, TIES * 3])},
        {"axis": 0},
        initializers={"s": np.array([1, 3], F32), "z": np.array([1, -2], ml_dtypes.int4)},
        opset=21,
    ),
    "quantize_uint2": Case(
        "QuantizeLinear", {"x": TIES}, initializers={"s": scalar(1, F32), "z": scalar(1, ml_dtypes.uint2)}, opset=25
    ),
    "dequantize_int4": Case(
        "DequantizeLinear",
        {"x": np.arange(-8, 8).astype(ml_dtypes.int4)},
        initializers={"s": scalar(0.5, F32), "z": scalar(-3, ml_dtypes.int4)},
        opset=21,
    ),
    "dequantize_float8e4m3fn_to_float16": Case(
        "DequantizeLinear",
        {"x": np.array([0.0, -0.0, 1.5, 448, -448, np.nan], F32).astype(ml_dtypes.float8_e4m3fn)},
        initializers={"s": scalar(3, np.float16)},
        opset=21,
    ),
}


@pytest.mark.parametrize("name", list(LOW_PRECISION_CASES))
def test_low_precision_quantization(name, tmp_path):
    """Bit for bit with the reference (NaN included: numpy cannot compare these NaNs)."""
    model = LOW_PRECISION_CASES[name].model()
    feeds = LOW_PRECISION_CASES[name].inputs
    (expected,) = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    (actual,) = compile_and_run(with_output_types(model, [expected]), feeds, tmp_path)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.view(np.uint8).tolist() == expected.view(np.uint8).tolist(), (actual, expected)
