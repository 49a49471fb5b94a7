"""The com.microsoft quantized ops of onnxruntime's quantizer (frontend/microsoft.py): each
alone against onnxruntime, within one quantization step; the QOperator versions of the
int8 test models against onnxruntime; other ops of the domain refused by name."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import compile_and_run, value_info
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.errors import UnsupportedOpError
from onnxc.examples import quantized
from onnxc.tools.support import op_support

onnxruntime = pytest.importorskip("onnxruntime")

U8, I8, F32 = np.uint8, np.int8, np.float32
RNG = np.random.default_rng(11)


def u8(*shape: int) -> np.ndarray:
    return RNG.integers(0, 256, shape).astype(U8)


def contrib_model(op_type: str, inputs: dict, initializers: dict, node_inputs: list[str], **attributes):
    node = helper.make_node(op_type, node_inputs, ["y"], name="node0", domain="com.microsoft", **attributes)
    graph = helper.make_graph(
        [node],
        "contrib",
        [value_info(name, array.dtype, array.shape) for name, array in inputs.items()],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers.items()],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def scale(value: float) -> np.ndarray:
    return np.array(value, F32)


A_PARAMETERS = {"as": scale(0.05), "az": np.array(120, U8)}
B_PARAMETERS = {"bs": scale(0.02), "bz": np.array(7, U8)}
Y_PARAMETERS = {"ys": scale(0.07), "yz": np.array(128, U8)}
UNARY = ["x", "as", "az", "ys", "yz"]
BINARY = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]

CASES = {
    "QLinearAdd": ({"a": u8(2, 3, 4), "b": u8(3, 4)}, {**A_PARAMETERS, **B_PARAMETERS, **Y_PARAMETERS}, BINARY, {}),
    "QLinearMul": ({"a": u8(2, 3, 4), "b": u8(2, 1, 4)}, {**A_PARAMETERS, **B_PARAMETERS, **Y_PARAMETERS}, BINARY, {}),
    "QLinearSigmoid": ({"x": u8(4, 9)}, {**A_PARAMETERS, "ys": scale(1 / 256), "yz": np.array(0, U8)}, UNARY, {}),
    "QLinearLeakyRelu": ({"x": u8(4, 9)}, {**A_PARAMETERS, **Y_PARAMETERS}, UNARY, {"alpha": 0.2}),
    "QLinearGlobalAveragePool": ({"x": u8(1, 5, 6, 7)}, {**A_PARAMETERS, **Y_PARAMETERS}, UNARY, {"channels_last": 0}),
    "QLinearAveragePool": (
        {"x": u8(1, 3, 8, 8)},
        {**A_PARAMETERS, **Y_PARAMETERS},
        UNARY,
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 0},
    ),
    "QLinearConcat": (
        {"a": u8(1, 2, 3), "b": u8(1, 4, 3)},
        {**Y_PARAMETERS, **A_PARAMETERS, **B_PARAMETERS},
        ["ys", "yz", "a", "as", "az", "b", "bs", "bz"],
        {"axis": 1},
    ),
    "QLinearSoftmax": ({"x": u8(3, 10)}, {**A_PARAMETERS, "ys": scale(1 / 256), "yz": np.array(0, U8)}, UNARY,
                       {"axis": -1, "opset": 17}),  # fmt: skip
    "QGemm": (
        {"a": u8(3, 8)},
        {
            **A_PARAMETERS,
            "b": RNG.integers(-127, 128, (5, 8)).astype(I8),
            "bs": np.linspace(0.01, 0.03, 5).astype(F32),
            "bz": np.zeros(5, I8),
            "c": RNG.integers(-500, 500, 5).astype(np.int32),
            **Y_PARAMETERS,
        },
        ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"],
        {"transB": 1, "alpha": 1.0},
    ),
    "QGemm_float_output": (
        {"a": u8(3, 8)},
        {**A_PARAMETERS, "b": RNG.integers(-127, 128, (8, 5)).astype(I8), "bs": scale(0.02), "bz": np.array(0, I8)},
        ["a", "as", "az", "b", "bs", "bz"],
        {},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_contrib_op_matches_onnxruntime(name, tmp_path):
    inputs, initializers, node_inputs, attributes = CASES[name]
    model = contrib_model(name.split("_")[0], inputs, initializers, node_inputs, **attributes)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, inputs)
    (actual,) = compile_and_run(model, inputs, tmp_path)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype == F32:  # QGemm without y scale: the float Gemm of dequantized operands
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)
    else:
        assert np.abs(actual.astype(np.int32) - expected.astype(np.int32)).max() <= 1


def test_unsupported_contrib_op_is_refused_by_name(tmp_path):
    model = contrib_model("QLinearReduceMean", {"x": u8(2, 3)}, {**A_PARAMETERS, **Y_PARAMETERS}, UNARY)
    with pytest.raises(UnsupportedOpError) as error:
        onnxc.compile(model, tmp_path / "model.so")
    message = str(error.value)
    assert "com.microsoft" in message and "node0" in message and "QLinearReduceMean" in message
    assert not op_support("QLinearReduceMean", "com.microsoft").supported
    assert op_support("QLinearAdd", "com.microsoft").source == "onnxc/frontend/microsoft.py"


def test_channels_last_pooling_is_refused(tmp_path):
    inputs, initializers, node_inputs, _ = CASES["QLinearGlobalAveragePool"]
    model = contrib_model("QLinearGlobalAveragePool", inputs, initializers, node_inputs, channels_last=1)
    with pytest.raises(UnsupportedOpError, match="channels_last"):
        onnxc.compile(model, tmp_path / "model.so")


@pytest.mark.parametrize("name", ["resnet", "mobilenet", "bert", "lstm"])
def test_qoperator_model_matches_onnxruntime(name, tmp_path):
    """The QOperator model (QLinearConv/QLinearMatMul and contrib ops) gives onnxruntime's
    argmax, its outputs within a few quantization steps of the last quantized value (the
    output is float: one step of difference upstream moves it by a step's share)."""
    model = quantized.quantize(quantized.BUILDERS[name](), "qoperator", calibration_samples=2)
    assert any(node.domain == "com.microsoft" for node in model.graph.node)
    feeds = quantized.random_inputs(model, 7)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, feeds)
    (actual,) = compile_and_run(model, feeds, tmp_path)
    assert (actual.argmax(-1) == expected.argmax(-1)).mean() >= 0.9
    output_step = (expected.max() - expected.min()) / 255
    assert np.abs(actual - expected).max() <= 4 * output_step


def _lstm_weights(directions: int, rows: int, hidden: int, per_column: bool) -> dict:
    """8-bit weights [D, rows, 4H] with a scale and zero point per direction (or per column)."""
    shape = (directions, 4 * hidden) if per_column else (directions,)
    return {
        "q": RNG.integers(-127, 128, (directions, rows, 4 * hidden)).astype(I8),
        "scale": RNG.uniform(0.005, 0.02, shape).astype(F32),
        "zero": RNG.integers(-3, 4, shape).astype(I8),
    }


@pytest.mark.parametrize("direction, per_column", [("forward", False), ("bidirectional", True)])
def test_dynamic_quantize_lstm_is_the_lstm_of_its_dequantized_weights(direction, per_column, tmp_path):
    """DynamicQuantizeLSTM expands to LSTM on (W - zero point) * scale, transposed to LSTM's
    layout: onnxruntime's float LSTM on those weights gives the same outputs (Y, Y_h, Y_c)."""
    directions, features, hidden = (2 if direction == "bidirectional" else 1), 6, 5
    w = _lstm_weights(directions, features, hidden, per_column)
    r = _lstm_weights(directions, hidden, hidden, per_column)
    bias = RNG.standard_normal((directions, 8 * hidden)).astype(F32) * 0.1
    x = RNG.standard_normal((4, 2, features)).astype(F32)
    initializers = {
        "w": w["q"], "r": r["q"], "b": bias, "ws": w["scale"], "wz": w["zero"], "rs": r["scale"], "rz": r["zero"]
    }  # fmt: skip
    outputs = ["y", "y_h", "y_c"]
    node = helper.make_node(
        "DynamicQuantizeLSTM", ["x", "w", "r", "b", "", "", "", "", "ws", "wz", "rs", "rz"], outputs,
        name="lstm0", domain="com.microsoft", hidden_size=hidden, direction=direction,
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "dq_lstm", [value_info("x", F32, x.shape)], [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=8)

    def dequantized(p):
        scale, zero = (p[k].reshape(directions, 1, -1) for k in ("scale", "zero"))
        return ((p["q"].astype(F32) - zero.astype(F32)) * scale).transpose(0, 2, 1)

    lstm = helper.make_node("LSTM", ["x", "w", "r", "b"], outputs, hidden_size=hidden, direction=direction)
    float_graph = helper.make_graph(
        [lstm], "lstm", [value_info("x", F32, x.shape)], [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in {"w": dequantized(w), "r": dequantized(r), "b": bias}.items()],
    )  # fmt: skip
    float_model = helper.make_model(float_graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    session = onnxruntime.InferenceSession(float_model.SerializeToString(), providers=["CPUExecutionProvider"])
    for actual, expected in zip(compile_and_run(model, {"x": x}, tmp_path), session.run(None, {"x": x})):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_dynamic_lstm_tagger_is_close_to_onnxruntime(tmp_path):
    """The dynamic LSTM tagger (DynamicQuantizeLSTM, MatMulInteger): onnxruntime also quantizes
    the LSTM's input and hidden state at each step, onnxc does not, so the two differ by that
    rounding: by no more than onnxruntime's int8 model differs from the float model."""
    base = quantized.BUILDERS["lstm"]()
    model = quantized.quantize(base, "dynamic", calibration_samples=2)
    assert any(node.op_type == "DynamicQuantizeLSTM" for node in model.graph.node)
    feeds = quantized.random_inputs(model, 7)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds
    )
    (float_result,) = onnxruntime.InferenceSession(base.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, feeds
    )
    (actual,) = compile_and_run(model, feeds, tmp_path)
    assert np.abs(actual - expected).max() <= np.abs(expected - float_result).max()
    assert (actual.argmax(-1) == expected.argmax(-1)).mean() >= 0.9
