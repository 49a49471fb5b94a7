"""LSTM, GRU and RNN against onnxruntime, per attribute family: directions,
activations with their alpha/beta, clip, input_forget, linear_before_reset,
layout, sequence_lens, initial states, peepholes, optional outputs, constant
(initializer) weights and float64."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc.backend import prepare
from onnxc.errors import UnsupportedOpError

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
INPUTS = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
OUTPUTS = ("Y", "Y_h", "Y_c")


def _case(
    op_type: str,
    *,
    seq: int = 5,
    batch: int = 3,
    input_size: int = 4,
    hidden: int = 6,
    direction: str = "forward",
    layout: int = 0,
    optional: tuple[str, ...] = ("B",),
    outputs: tuple[str, ...] = ("Y", "Y_h"),
    lengths: list[int] | None = None,
    constant_weights: bool = False,
    dtype: type = np.float32,
    seed: int = 0,
    **attributes,
):
    """A one-node model and its feeds; `optional` names the optional inputs given,
    `outputs` the outputs requested (the others are empty names)."""
    rng = np.random.default_rng(seed)
    dirs = 2 if direction == "bidirectional" else 1
    gates = GATES[op_type]
    state = [batch, dirs, hidden] if layout else [dirs, batch, hidden]
    shapes = {
        "X": [batch, seq, input_size] if layout else [seq, batch, input_size],
        "W": [dirs, gates * hidden, input_size],
        "R": [dirs, gates * hidden, hidden],
        "B": [dirs, 2 * gates * hidden],
        "initial_h": state,
        "initial_c": state,
        "P": [dirs, 3 * hidden],
    }
    values = {name: (rng.standard_normal(shape) * 0.5).astype(dtype) for name, shape in shapes.items()}
    if lengths is not None:
        values["sequence_lens"] = np.array(lengths, dtype=np.int32)
        optional = (*optional, "sequence_lens")
    given = ("X", "W", "R", *optional)
    names = [name if name in given else "" for name in INPUTS[: 8 if op_type == "LSTM" else 6]]
    while not names[-1]:
        names.pop()
    output_count = 3 if op_type == "LSTM" else 2
    node_outputs = [name if name in outputs else "" for name in OUTPUTS[:output_count]]
    while not node_outputs[-1]:
        node_outputs.pop()
    node = helper.make_node(
        op_type, names, node_outputs, hidden_size=hidden, direction=direction, layout=layout, **attributes
    )
    y_shape = [batch, seq, dirs, hidden] if layout else [seq, dirs, batch, hidden]
    output_shapes = {"Y": y_shape, "Y_h": state, "Y_c": state}
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    weights = {"W", "R", "B", "P"} if constant_weights else set()
    graph_inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT32 if n == "sequence_lens" else elem, list(values[n].shape))
        for n in names
        if n and n not in weights
    ]
    initializers = [numpy_helper.from_array(values[n], n) for n in names if n in weights]
    graph = helper.make_graph(
        [node],
        "recurrent",
        graph_inputs,
        [helper.make_tensor_value_info(n, elem, output_shapes[n]) for n in node_outputs if n],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)
    feeds = {vi.name: values[vi.name] for vi in graph_inputs}
    return model, feeds


def _onnxruntime(model, feeds) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _assert_close(got, expected, rtol: float = 1e-4):
    """Within rtol of max|reference|, output by output."""
    assert len(got) == len(expected)
    for value, reference in zip(got, expected):
        assert value.shape == reference.shape
        scale = max(np.abs(reference).max(), 1e-6)
        assert np.abs(value - reference).max() <= rtol * scale


def _compare(model, feeds):
    _assert_close(prepare(model).run(feeds), _onnxruntime(model, feeds))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_directions_with_initial_state(op_type, direction):
    optional = ("B", "initial_h", "initial_c") if op_type == "LSTM" else ("B", "initial_h")
    outputs = ("Y", "Y_h", "Y_c") if op_type == "LSTM" else ("Y", "Y_h")
    _compare(*_case(op_type, direction=direction, optional=optional, outputs=outputs))


ACTIVATION_SETS = [
    (["Relu", "Tanh", "Softsign"], [], []),
    (["HardSigmoid", "Softplus", "Elu"], [0.3, 0.8], [0.4]),
    (["LeakyRelu", "ScaledTanh", "Affine"], [0.2, 1.5, 0.7], [0.6, 0.1]),
    (["Sigmoid", "ThresholdedRelu", "Tanh"], [0.1], []),
    (["HardSigmoid", "Elu", "LeakyRelu"], [], []),  # every parameter at its default
]


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("activations, alphas, betas", ACTIVATION_SETS)
def test_activations(op_type, activations, alphas, betas):
    count = {"LSTM": 3, "GRU": 2, "RNN": 1}[op_type]
    attributes = {"activations": activations[:count]}
    if alphas:
        attributes["activation_alpha"] = alphas
    if betas:
        attributes["activation_beta"] = betas
    _compare(*_case(op_type, **attributes))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU"])
def test_activations_per_direction(op_type):
    count = {"LSTM": 3, "GRU": 2}[op_type]
    names = ["Sigmoid", "Tanh", "Tanh"][:count] + ["HardSigmoid", "Softsign", "Relu"][:count]
    _compare(*_case(op_type, direction="bidirectional", activations=names, activation_alpha=[0.25]))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_clip(op_type):
    _compare(*_case(op_type, clip=0.3, seed=2))


def test_lstm_input_forget_and_peepholes():
    _compare(*_case("LSTM", input_forget=1, optional=("B", "initial_c", "P"), outputs=("Y", "Y_h", "Y_c")))


@pytest.mark.parametrize("bias", [True, False])
def test_gru_linear_before_reset(bias):
    _compare(*_case("GRU", linear_before_reset=1, optional=("B",) if bias else (), direction="bidirectional"))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens(op_type, direction):
    """Y is zero past each row's length; Y_h (and Y_c) hold the last valid step."""
    outputs = ("Y", "Y_h", "Y_c") if op_type == "LSTM" else ("Y", "Y_h")
    optional = ("B", "initial_h")
    _compare(*_case(op_type, direction=direction, lengths=[5, 2, 3], optional=optional, outputs=outputs))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_optional_outputs_by_position(op_type):
    """Only the last state requested: Y is an empty name before it."""
    last = "Y_c" if op_type == "LSTM" else "Y_h"
    _compare(*_case(op_type, outputs=(last,), direction="bidirectional"))


def test_lstm_without_bias_with_cell_state_only_and_constant_weights():
    _compare(*_case("LSTM", optional=("P",), outputs=("Y_c",), constant_weights=True))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_constant_weights(op_type):
    """Initializer weights: W and R are transposed at compile time."""
    _compare(*_case(op_type, direction="bidirectional", constant_weights=True, seq=7, batch=2, hidden=16))


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_float64(op_type):
    """onnxruntime has no float64 kernels: against the ONNX reference implementation."""
    model, feeds = _case(op_type, direction="bidirectional", dtype=np.float64, optional=("B", "initial_h"))
    _assert_close(prepare(model).run(feeds), ReferenceEvaluator(model).run(None, feeds), rtol=1e-9)


@pytest.mark.parametrize("op_type", ["LSTM", "GRU", "RNN"])
def test_layout_batchwise(op_type):
    """layout=1 (which onnxruntime refuses) gives the layout-0 results of onnxruntime,
    batch dim first; with sequence_lens and initial states, both directions."""
    lstm = op_type == "LSTM"
    settings = dict(
        direction="bidirectional",
        optional=("B", "initial_h", "initial_c") if lstm else ("B", "initial_h"),
        outputs=OUTPUTS if lstm else OUTPUTS[:2],
        lengths=[5, 2, 3],
    )
    model, feeds = _case(op_type, **settings)
    batchwise, _ = _case(op_type, layout=1, **settings)
    states = ("X", "initial_h", "initial_c")
    batchwise_feeds = {n: v.transpose(1, 0, 2) if n in states else v for n, v in feeds.items()}
    y, *final_states = _onnxruntime(model, feeds)
    expected = [y.transpose(2, 0, 1, 3), *(s.transpose(1, 0, 2) for s in final_states)]
    _assert_close(prepare(batchwise).run(batchwise_feeds), expected)


@pytest.mark.parametrize(
    "op_type, settings, message",
    [
        ("LSTM", {"dtype": np.float16}, "float32 and float64 only"),
        ("GRU", {"activations": ["Sigmoid", "Gelu"]}, "activation function 'Gelu'"),
    ],
)
def test_unsupported_is_refused_at_compile_time(tmp_path, op_type, settings, message):
    model, _ = _case(op_type, **settings)
    with pytest.raises(UnsupportedOpError, match=message):
        onnxc.compile(model, tmp_path / "model.so")


MODELS = Path(__file__).parent / "models"


@pytest.mark.parametrize("name", ["lstm_tiny", "gru_tiny"])
def test_pytorch_export_matches_onnxruntime(tmp_path, name):
    """The PyTorch-exported 2-layer bidirectional batch_first LSTM / GRU with a Linear
    head (tests/models/export_lstm.py), at a batch size other than the export's."""
    path = MODELS / f"{name}.onnx"
    shapes = {"sequence": [3, 20, 16]}
    session = onnxc.Session(onnxc.compile(path, tmp_path / f"{name}.so", shapes=shapes))
    x = np.random.default_rng(0).standard_normal(shapes["sequence"]).astype(np.float32)
    (got,) = session.run(None, {"sequence": x})
    _assert_close([got], _onnxruntime(onnx.load(path), {"sequence": x}))


def test_sequence_lens_past_the_sequence_stay_in_bounds():
    """A length past seq_length (onnxruntime refuses it) reads no memory out of bounds:
    the row runs the whole sequence, as with its true maximum."""
    model, feeds = _case("GRU", direction="bidirectional", lengths=[5, 1000, 3], optional=("B", "initial_h"))
    clamped = dict(feeds, sequence_lens=np.array([5, 5, 3], np.int32))
    _assert_close(prepare(model).run(feeds), _onnxruntime(model, clamped))
