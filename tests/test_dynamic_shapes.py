"""Symbolic dims: the Dim algebra, symbolic shape inference, and batch-loop
libraries that run any batch size (compared with onnxruntime)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import run_from_threads
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxc
from onnxc.dialects.symbolic import Dim, DimOps
from onnxc.errors import InputError, UnsupportedOpError
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass

ort = pytest.importorskip("onnxruntime")

N, S, H = Dim.symbol("N"), Dim.symbol("S"), Dim.symbol("H")


# ----------------------------------------------------------------------------- the algebra


@pytest.mark.parametrize(
    "expression",
    [N * S * 12, (H - 3) // 2 + 1, N.minimum(512), N.ceil_div(4), 2 * N - 1, (N * S) // S, N // (S * H), Dim.const(7)],
)
def test_dim_text_round_trips(expression):
    assert Dim.parse(str(expression)) == expression


def test_dim_canonical_and_exact():
    assert N * S * 12 == S * 12 * N
    assert (N * S * 12) // (S * 3) == 4 * N  # exact division stays a polynomial
    assert (4 * N + 8) // 4 == N + 2
    assert ((H - 3) // 2 + 1).evaluate(lambda name: 11, DimOps()) == 5
    assert N.ceil_div(2).evaluate(lambda name: 7, DimOps()) == 4
    assert ((H - 1) // 2).symbols() == {"H"}
    with pytest.raises(ValueError):
        Dim.parse("N ** 2")


# ----------------------------------------------------------------------------- shape inference


def _types(model: onnx.ModelProto) -> dict[str, str]:
    module = import_model(model)
    get_pass("shape-inference")().apply(None, module)
    return {op.node_name: str(op.results[0].type) for op in module.walk() if hasattr(op, "node_name")}


def _cnn(batch="N", height=16, width=16) -> onnx.ModelProto:
    """Conv+BatchNorm+Relu, a residual block, MaxPool, global pooling, Flatten, Gemm."""
    rng = np.random.default_rng(0)

    def weight(name, *shape, scale=0.3):
        return nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        weight("w1", 8, 3, 3, 3), weight("b1", 8), weight("w2", 8, 8, 3, 3), weight("fc", 10, 8), weight("fcb", 10),
        nh.from_array(np.abs(rng.standard_normal(8)).astype(np.float32) + 0.5, "var"),
        weight("mean", 8), weight("gamma", 8), weight("beta", 8),
    ]  # fmt: skip
    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv1"),
        h.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"], name="bn1"),
        h.make_node("Relu", ["bn"], ["r1"], name="relu1"),
        h.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        h.make_node("Add", ["c2", "r1"], ["res"], name="residual"),
        h.make_node("MaxPool", ["res"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
        h.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        h.make_node("Flatten", ["g"], ["f"], name="flatten"),
        h.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1, name="fc"),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [batch, 3, height, width])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    graph = h.make_graph(nodes, "cnn", [x], [y], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def _encoder(batch="batch") -> onnx.ModelProto:
    """A transformer block as exporters write it: LayerNorm, attention through
    Shape/Gather/Concat/Reshape arithmetic on the batch, Transpose, Softmax, MatMul, Gelu."""
    rng = np.random.default_rng(1)
    seq, hidden, heads = 7, 16, 2
    inits = [
        nh.from_array((rng.standard_normal((hidden, 3 * hidden)) * 0.2).astype(np.float32), "wqkv"),
        nh.from_array((rng.standard_normal((hidden, hidden)) * 0.2).astype(np.float32), "wo"),
        nh.from_array(np.ones(hidden, np.float32), "ln_g"),
        nh.from_array(np.zeros(hidden, np.float32), "ln_b"),
        nh.from_array(np.array([0], np.int64), "i0"),
        nh.from_array(np.array([seq, 3, heads, hidden // heads], np.int64), "qkv_tail"),
        nh.from_array(np.array([seq, hidden], np.int64), "out_tail"),
        nh.from_array(np.array([0], np.int64), "k0"),
        nh.from_array(np.array([1], np.int64), "k1"),
        nh.from_array(np.array([2], np.int64), "k2"),
        nh.from_array(np.array([3], np.int64), "k3"),
        nh.from_array(np.array(1 / np.sqrt(hidden // heads), np.float32), "scale"),
        nh.from_array(np.array([2], np.int64), "two"),
    ]
    nodes = [
        h.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], axis=-1, name="ln"),
        h.make_node("MatMul", ["ln", "wqkv"], ["qkv"], name="qkv"),
        h.make_node("Shape", ["x"], ["shape"], name="shape"),
        h.make_node("Gather", ["shape", "i0"], ["b"], axis=0, name="batch"),
        h.make_node("Concat", ["b", "qkv_tail"], ["qkv_shape"], axis=0, name="qkv_shape"),
        h.make_node("Reshape", ["qkv", "qkv_shape"], ["qkv4"], name="split_heads"),
        h.make_node("Transpose", ["qkv4"], ["qkvt"], perm=[0, 2, 3, 1, 4], name="heads_first"),
        h.make_node("Split", ["qkvt"], ["q", "k", "v"], axis=1, num_outputs=3, name="qkv_split"),
        h.make_node("Squeeze", ["q", "k1"], ["q3"], name="q"),
        h.make_node("Squeeze", ["k", "k1"], ["k3_"], name="k"),
        h.make_node("Squeeze", ["v", "k1"], ["v3"], name="v"),
        h.make_node("Transpose", ["k3_"], ["kt"], perm=[0, 1, 3, 2], name="kt"),
        h.make_node("MatMul", ["q3", "kt"], ["scores"], name="scores"),
        h.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale"),
        h.make_node("Softmax", ["scaled"], ["probs"], axis=-1, name="softmax"),
        h.make_node("MatMul", ["probs", "v3"], ["ctx"], name="context"),
        h.make_node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3], name="merge_heads"),
        h.make_node("Concat", ["b", "out_tail"], ["out_shape"], axis=0, name="out_shape"),
        h.make_node("Reshape", ["ctxt", "out_shape"], ["merged"], name="merge"),
        h.make_node("MatMul", ["merged", "wo"], ["proj"], name="proj"),
        h.make_node("Add", ["proj", "x"], ["res"], name="residual"),
        h.make_node("Gelu", ["res"], ["y"], name="gelu"),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [batch, seq, hidden])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    graph = h.make_graph(nodes, "encoder", [x], [y], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 20)])


def test_symbolic_dims_through_windows_and_reshape():
    types = _types(_cnn(batch="N", height="H", width="W"))
    assert types["conv1"] == 'tensor<?x8x?x?xf32, ["N", "", "((H - 1) // 2) + 1", "((W - 1) // 2) + 1"]>'
    assert types["fc"] == 'tensor<?x10xf32, ["N", ""]>'
    encoder = _types(_encoder())
    assert encoder["split_heads"] == 'tensor<?x7x3x2x8xf32, ["batch", "", "", "", ""]>'
    assert encoder["merge"] == 'tensor<?x7x16xf32, ["batch", "", ""]>'


def test_unnamed_and_minus_one_dims_become_symbols():
    model = _cnn(batch="N")
    dim = model.graph.input[0].type.tensor_type.shape.dim[0]
    dim.Clear()
    dim.dim_value = -1  # paddle2onnx's spelling of an unknown dim
    assert _types(model)["fc"] == 'tensor<?x10xf32, ["x_d0", ""]>'


# ----------------------------------------------------------------------------- batch loops


def _compile(model: onnx.ModelProto, tmp_path, name: str, **options) -> onnxc.Session:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    library = onnxc.compile(str(path), tmp_path / f"{name}.so", **options)
    return onnxc.Session(library)


def _check_batches(session: onnxc.Session, model: onnx.ModelProto, batches, tail) -> None:
    reference = ort.InferenceSession(model.SerializeToString())
    for batch in batches:
        x = np.random.default_rng(batch).standard_normal((batch, *tail)).astype(np.float32)
        (got,) = session.run(None, {"x": x})
        (want,) = reference.run(None, {"x": x})
        assert got.shape == want.shape
        if batch:
            assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("batch", ["N", -1])
def test_cnn_one_library_every_batch(tmp_path, batch):
    model = _cnn()
    if batch == -1:
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -1
    session = _compile(model, tmp_path, "cnn")
    symbol = "N" if batch == "N" else "x_d0"
    assert session.get_inputs()[0].shape == (symbol, 3, 16, 16)
    assert session.get_outputs()[0].shape == (symbol, 10)
    _check_batches(session, model, [1, 3, 8, 3, 1, 0], (3, 16, 16))


def test_encoder_one_library_every_batch(tmp_path):
    model = _encoder()
    session = _compile(model, tmp_path, "encoder")
    assert session.get_inputs()[0].shape == ("batch", 7, 16)
    _check_batches(session, model, [1, 2, 5], (7, 16))


def test_batches_from_threads_at_once(tmp_path):
    model = _cnn()
    session = _compile(model, tmp_path, "cnn")
    reference = ort.InferenceSession(model.SerializeToString())
    inputs = {batch: np.random.default_rng(batch).standard_normal((batch, 3, 16, 16)).astype(np.float32) for batch in (1, 2, 5, 7)}
    expected = {batch: reference.run(None, {"x": x})[0] for batch, x in inputs.items()}
    assert not run_from_threads(session, {batch: {"x": x} for batch, x in inputs.items()}, expected, repeat=20)


def test_inputs_sharing_a_symbol_must_agree(tmp_path):
    model = _cnn()
    model.graph.input.append(h.make_tensor_value_info("z", T.FLOAT, ["N", 10]))
    add = h.make_node("Add", ["y", "z"], ["y2"], name="plus_z")
    model.graph.node.append(add)
    model.graph.output[0].name = "y2"
    session = _compile(model, tmp_path, "two_inputs")
    x = np.zeros((3, 3, 16, 16), np.float32)
    with pytest.raises(InputError, match=r"input 'z': dim 0 \(N\) is 2, but input 'x' has N = 3"):
        session.run(None, {"x": x, "z": np.zeros((2, 10), np.float32)})
    (y,) = session.run(None, {"x": x, "z": np.ones((3, 10), np.float32)})
    assert y.shape == (3, 10)


def test_a_dim_that_contradicts_the_model_is_refused(tmp_path):
    session = _compile(_cnn(), tmp_path, "cnn")
    with pytest.raises(InputError, match=r"input 'x': dim 2 is 15, expected 16"):
        session.run(None, {"x": np.zeros((2, 3, 15, 16), np.float32)})


def test_pinning_the_symbol_by_name(tmp_path):
    session = _compile(_cnn(), tmp_path, "pinned", shapes={"N": [2]})
    assert session.get_inputs()[0].shape == (2, 3, 16, 16)


def test_a_model_mixing_samples_takes_the_batch_at_run_time(tmp_path):
    """A sum over the batch is no batch loop: every op of the CNN takes the batch as a
    run-time dim instead."""
    model = _cnn()
    model.graph.node.append(h.make_node("ReduceSum", ["y"], ["total"], keepdims=0, name="sum_over_batch"))
    model.graph.output[0].name = "total"
    _check_batches(_compile(model, tmp_path, "mixing"), model, [1, 3, 8], (3, 16, 16))


def test_a_model_mixing_samples_names_the_node(tmp_path):
    """Where an op does not take run-time dims (ai.onnx.ml's Scaler, for now), the refusal
    says why a batch loop does not apply either, naming the node that mixes samples."""
    nodes = [
        h.make_node("Scaler", ["x"], ["d"], domain="ai.onnx.ml", scale=[2.0] * 8, offset=[1.0] * 8, name="scale"),
        h.make_node("ReduceSum", ["d"], ["total"], keepdims=0, name="sum_over_batch"),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["N", 8])
    total = h.make_tensor_value_info("total", T.FLOAT, None)
    opsets = [h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 3)]
    model = h.make_model(h.make_graph(nodes, "mixing", [x], [total]), opset_imports=opsets)
    with pytest.raises(UnsupportedOpError, match=r"batch loop .* does not apply.*node 'sum_over_batch' \(ReduceSum\)"):
        _compile(model, tmp_path, "mixing")
