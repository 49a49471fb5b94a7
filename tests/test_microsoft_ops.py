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
    assert "integer kernels" in op_support("DynamicQuantizeLSTM", "com.microsoft").reason


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


def _lstm_weights(directions: int, rows: int, hidden: int, per_column: bool, dtype=I8, zero: int = 0) -> dict:
    """8-bit weights [D, rows, 4H] with a scale and zero point per direction (or per column):
    int8 in [-127, 127] with `zero` (onnxruntime's symmetric weights: 0), or uint8."""
    shape = (directions, 4 * hidden) if per_column else (directions,)
    low, high = (-127, 128) if dtype == I8 else (0, 256)
    return {
        "q": RNG.integers(low, high, (directions, rows, 4 * hidden)).astype(dtype),
        "scale": RNG.uniform(0.005, 0.02, shape).astype(F32),
        "zero": np.full(shape, zero, dtype),
    }


def _dynamic_quantize_lstm(
    x_shape, hidden: int, direction: str, w: dict, r: dict, optional=(), outputs=None, **attributes
):
    """A model of one DynamicQuantizeLSTM of X (of `x_shape`, its dims ints or names), with
    B, the weights of `w` and `r`, and the graph inputs named in `optional` (sequence_lens,
    initial_h, initial_c, peepholes) as its inputs 4 to 7."""
    directions = 2 if direction == "bidirectional" else 1
    bias = RNG.standard_normal((directions, 8 * hidden)).astype(F32) * 0.1
    initializers = {
        "w": w["q"], "r": r["q"], "b": bias, "ws": w["scale"], "wz": w["zero"], "rs": r["scale"], "rz": r["zero"]
    }  # fmt: skip
    inputs = ["x", "w", "r", "b"] + [n if n in optional else "" for n in ("lens", "h0", "c0", "p")]
    inputs += ["ws", "wz", "rs", "rz"]
    outputs = outputs or ["y", "y_h", "y_c"]
    node = helper.make_node(
        "DynamicQuantizeLSTM", inputs, outputs, name="lstm0", domain="com.microsoft", hidden_size=hidden,
        direction=direction, **attributes,
    )  # fmt: skip
    batch = x_shape[1]
    types = {"lens": (np.int32, [batch]), "h0": (F32, [directions, batch, hidden])}
    types |= {"c0": types["h0"], "p": (F32, [directions, 3 * hidden])}
    graph_inputs = [value_info("x", F32, x_shape)] + [value_info(n, *types[n]) for n in optional]
    graph = helper.make_graph(
        [node], "dq_lstm", graph_inputs, [helper.make_empty_tensor_value_info(o) for o in outputs if o],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def _onnxruntime(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """onnxruntime's results at one intra-op thread (with more, it quantizes the hidden
    state of each thread's batch rows apart)."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _assert_as_onnxruntime(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    """onnxc computes onnxruntime's integer products exactly; its float sums add the bias
    before the recurrent product, onnxruntime after: outputs differ by float rounding, unless
    a sum lands across a rounding boundary of the next step's quantization, which moves one
    element of h by one step of its range / 255 times a weight scale (~1e-4 here): at most
    1e-3 of the largest output."""
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-3 * np.abs(want).max()


def _krnl_text(model: onnx.ModelProto, tmp_path) -> str:
    return onnxc.compile(model, tmp_path / "model.krnl.mlir", emit="krnl").read_text()


DYNAMIC_LSTM_CASES = {
    "forward": dict(direction="forward", x_shape=(5, 1, 6)),
    "reverse": dict(direction="reverse", x_shape=(5, 2, 6)),
    "bidirectional": dict(direction="bidirectional", x_shape=(4, 2, 6), per_column=True),
    "batch 3, initial states": dict(direction="forward", x_shape=(4, 3, 6), optional=("h0", "c0")),
    "sequence_lens": dict(direction="bidirectional", x_shape=(6, 3, 6), optional=("lens", "h0", "c0")),
    "sequence_lens, no Y": dict(direction="forward", x_shape=(6, 3, 6), optional=("lens",), outputs=["", "y_h"]),
    "per column": dict(direction="forward", x_shape=(5, 2, 6), per_column=True),
    "symbolic sequence and batch": dict(direction="bidirectional", x_shape=("seq", "batch", 6), run_shape=(7, 3, 6)),
    "long symbolic sequence": dict(direction="forward", x_shape=("seq", 1, 6), run_shape=(110, 1, 6)),
    "uint8 weights": dict(direction="forward", x_shape=(5, 2, 6), dtype=U8, zero=128),
    "peepholes, clip, input_forget": dict(
        direction="forward", x_shape=(5, 2, 6), optional=("p",), clip=0.7, input_forget=1
    ),
}


@pytest.mark.parametrize("case", DYNAMIC_LSTM_CASES)
def test_dynamic_quantize_lstm_matches_onnxruntime_on_integer_kernels(case, tmp_path):
    """DynamicQuantizeLSTM of 8-bit weights whose differences from their zero point fit int8
    takes the integer kernels (krnl.qmatmul), quantizing X and h as onnxruntime does; the
    float gate math (peepholes, clip, input_forget) is the LSTM's."""
    spec = dict(DYNAMIC_LSTM_CASES[case])
    hidden, features = 5, spec["x_shape"][2]
    directions = 2 if spec["direction"] == "bidirectional" else 1
    kinds = {k: spec.pop(k) for k in ("per_column", "dtype", "zero") if k in spec}
    per_column = kinds.pop("per_column", False)
    w, r = (_lstm_weights(directions, rows, hidden, per_column, **kinds) for rows in (features, hidden))
    run_shape = spec.pop("run_shape", spec["x_shape"])
    model = _dynamic_quantize_lstm(hidden=hidden, w=w, r=r, **spec)
    sequence, batch = run_shape[:2]
    feeds = {"x": RNG.standard_normal(run_shape).astype(F32)}
    feeds |= {"lens": RNG.integers(1, sequence + 1, batch).astype(np.int32)}
    feeds |= {n: RNG.standard_normal((directions, batch, hidden)).astype(F32) for n in ("h0", "c0")}
    feeds |= {"p": RNG.standard_normal((directions, 3 * hidden)).astype(F32)}
    feeds = {n: v for n, v in feeds.items() if n == "x" or n in spec.get("optional", ())}
    # One per direction and product, more where chunks of run-time rows take several sizes.
    assert _krnl_text(model, tmp_path).count("krnl.qmatmul") >= 2 * directions
    _assert_as_onnxruntime(compile_and_run(model, feeds, tmp_path), _onnxruntime(model, feeds))


def test_dynamic_quantize_lstm_of_wide_weights_is_the_float_lstm(tmp_path):
    """Weights whose differences from their zero point do not fit int8 (uint8 of zero point 3)
    keep the float expansion: LSTM on (W - zero point) * scale, transposed to LSTM's layout,
    as onnxruntime's float LSTM on those weights computes it (Y, Y_h, Y_c)."""
    directions, features, hidden = 2, 6, 5
    w, r = (_lstm_weights(directions, rows, hidden, True, dtype=U8, zero=3) for rows in (features, hidden))
    model = _dynamic_quantize_lstm((4, 2, features), hidden, "bidirectional", w, r)
    x = RNG.standard_normal((4, 2, features)).astype(F32)
    assert "krnl.qmatmul" not in _krnl_text(model, tmp_path)

    def dequantized(p):
        scale, zero = (p[k].reshape(directions, 1, -1) for k in ("scale", "zero"))
        return ((p["q"].astype(F32) - zero.astype(F32)) * scale).transpose(0, 2, 1)

    bias = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "b"))
    outputs = ["y", "y_h", "y_c"]
    lstm = helper.make_node("LSTM", ["x", "w", "r", "b"], outputs, hidden_size=hidden, direction="bidirectional")
    float_graph = helper.make_graph(
        [lstm], "lstm", [value_info("x", F32, x.shape)], [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in {"w": dequantized(w), "r": dequantized(r), "b": bias}.items()],
    )  # fmt: skip
    float_model = helper.make_model(float_graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    for actual, expected in zip(compile_and_run(model, {"x": x}, tmp_path), _onnxruntime(float_model, {"x": x})):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "change, error",
    [
        ("w_shape", r"lstm0.*DynamicQuantizeLSTM.*input 1 has shape \[1, 7, 20\], expected \[1, 6, 20\]"),
        ("scale_shape", r"lstm0.*DynamicQuantizeLSTM.*scale of input 2: float32 \[3\], expected float32 \[1\]"),
    ],
)
def test_malformed_dynamic_quantize_lstm_is_refused_naming_it(change, error, tmp_path):
    """Weights of the wrong shape, or scales of neither [D] nor [D, 4H], are refused by a
    typed error naming the node and the op."""
    w, r = (_lstm_weights(1, rows, 5, False) for rows in (7 if change == "w_shape" else 6, 5))
    if change == "scale_shape":
        r["scale"] = np.full(3, 0.01, F32)
    model = _dynamic_quantize_lstm((4, 2, 6), 5, "forward", w, r)
    with pytest.raises(onnxc.errors.OnnxcError, match=error):
        onnxc.compile(model, tmp_path / "model.so")


def test_dynamic_lstm_tagger_matches_onnxruntime(tmp_path):
    """The dynamic LSTM tagger (DynamicQuantizeLSTM, then DynamicQuantizeLinear and
    MatMulInteger for the tags): onnxc's integer products are onnxruntime's, the same tags
    (argmax) and logits within float rounding (see `_assert_as_onnxruntime`)."""
    base = quantized.BUILDERS["lstm"]()
    model = quantized.quantize(base, "dynamic", calibration_samples=2)
    assert any(node.op_type == "DynamicQuantizeLSTM" for node in model.graph.node)
    feeds = quantized.random_inputs(model, 7)
    expected = _onnxruntime(model, feeds)
    actual = compile_and_run(model, feeds, tmp_path)
    _assert_as_onnxruntime(actual, expected)
    assert np.array_equal(actual[0].argmax(-1), expected[0].argmax(-1))


def _foreign_case() -> tuple[onnx.ModelProto, dict]:
    """A bidirectional DynamicQuantizeLSTM of per-column scales, sequence_lens and a
    reduction (input 70) longer than a vector's groups of 4."""
    w, r = (_lstm_weights(2, rows, 9, True) for rows in (70, 9))
    model = _dynamic_quantize_lstm((6, 3, 70), 9, "bidirectional", w, r, optional=("lens",))
    feeds = {"x": RNG.standard_normal((6, 3, 70)).astype(F32), "lens": np.array([6, 2, 5], np.int32)}
    return model, feeds


def test_dynamic_quantize_lstm_portable_kernel_matches_vnni(tmp_path):
    """An x86-64-v3 build (AVX2: the portable dot product) gives the host build's results:
    the same integer sums, the float gate math within rounding (see `_assert_as_onnxruntime`)."""
    model, feeds = _foreign_case()
    host = compile_and_run(model, feeds, tmp_path)
    portable = onnxc.Session(onnxc.compile(model, tmp_path / "v3.so", cpu="x86-64-v3")).run(None, feeds)
    _assert_as_onnxruntime(portable, host)


@pytest.mark.parametrize("target", ["ppc64le", "s390x"])
def test_dynamic_quantize_lstm_on_foreign_targets_matches_x86(target, tmp_path):
    """The portable integer kernel on ppc64le and big-endian s390x (weights packed in the
    target's byte order), under qemu: the x86 build's results within float rounding."""
    from test_cross import require_emulator

    from onnxc.tools.emulation import EmulatedSession

    require_emulator(target)
    model, feeds = _foreign_case()
    host = compile_and_run(model, feeds, tmp_path)
    library = onnxc.compile(model, tmp_path / f"{target}.so", target=target)
    _assert_as_onnxruntime(EmulatedSession(library).run(None, feeds), host)
