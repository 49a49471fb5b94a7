"""Models with several symbolic dims compile once and run at any shape (batch x sequence).

Transformers export batch and sequence as dynamic axes; the library takes both
at run time (passes/helpers/run_time_dims.py, the entry point binds them).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxc
from onnxc.errors import InputError

ort = pytest.importorskip("onnxruntime")

MODELS = Path(__file__).parent / "models"
VOCAB, HIDDEN, HEADS, MAX_POSITIONS = 50, 16, 2, 32


def _gpt2_style() -> onnx.ModelProto:
    """A GPT-2-style decoder block as torch exports it: position ids from Range over
    the sequence length, a causal mask sliced from a constant [1, 1, 32, 32] by the
    run-time length and applied with Where, heads split by Shape -> Concat -> Reshape,
    tanh GELU with Pow, logits tied to the token embedding."""
    rng = np.random.default_rng(1)

    def weight(name, *shape):
        return nh.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    def ints(name, values):
        return nh.from_array(np.array(values, np.int64), name)

    head = HIDDEN // HEADS
    causal = np.tril(np.ones((MAX_POSITIONS, MAX_POSITIONS), bool)).reshape(1, 1, MAX_POSITIONS, MAX_POSITIONS)
    initializers = [
        weight("wte", VOCAB, HIDDEN), weight("wpe", MAX_POSITIONS, HIDDEN),
        weight("ln_s", HIDDEN), weight("ln_b", HIDDEN), weight("w_qkv", HIDDEN, 3 * HIDDEN), weight("b_qkv", 3 * HIDDEN),
        weight("w_o", HIDDEN, HIDDEN), weight("b_o", HIDDEN), weight("w_up", HIDDEN, 4 * HIDDEN), weight("b_up", 4 * HIDDEN),
        weight("w_down", 4 * HIDDEN, HIDDEN), weight("b_down", HIDDEN), nh.from_array(causal, "causal"),
        ints("i0", 0), ints("i1", 1), ints("zero", [0]), ints("one", 1), ints("axes23", [2, 3]), ints("axis0", [0]),
        ints("split", [HIDDEN] * 3), ints("tail", [HEADS, head]), ints("hidden", [HIDDEN]),
        nh.from_array(np.array(head**-0.5, np.float32), "scale"), nh.from_array(np.array(-1e9, np.float32), "masked"),
        nh.from_array(np.array(3.0, np.float32), "three"), nh.from_array(np.array(0.044715, np.float32), "c"),
        nh.from_array(np.array(np.sqrt(2 / np.pi), np.float32), "gelu_k"), nh.from_array(np.array(0.5, np.float32), "half"),
        nh.from_array(np.array(1.0, np.float32), "unit"), weight("wte_t", HIDDEN, VOCAB),
    ]  # fmt: skip
    nodes = [
        h.make_node("Shape", ["ids"], ["ids_shape"]),
        h.make_node("Gather", ["ids_shape", "i0"], ["batch"], axis=0),
        h.make_node("Gather", ["ids_shape", "i1"], ["seq"], axis=0),
        h.make_node("Range", ["i0", "seq", "one"], ["positions"]),
        h.make_node("Unsqueeze", ["positions", "axis0"], ["positions2"]),
        h.make_node("Gather", ["wte", "ids"], ["tokens"]),
        h.make_node("Gather", ["wpe", "positions2"], ["places"]),
        h.make_node("Add", ["tokens", "places"], ["x0"]),
        h.make_node("LayerNormalization", ["x0", "ln_s", "ln_b"], ["x1"], axis=-1),
        h.make_node("MatMul", ["x1", "w_qkv"], ["qkv0"]),
        h.make_node("Add", ["qkv0", "b_qkv"], ["qkv"]),
        h.make_node("Split", ["qkv", "split"], ["q", "k", "v"], axis=2),
        h.make_node("Unsqueeze", ["batch", "axis0"], ["batch1"]),
        h.make_node("Unsqueeze", ["seq", "axis0"], ["seq1"]),
        h.make_node("Concat", ["batch1", "seq1", "tail"], ["heads_shape"], axis=0),
        *[h.make_node("Reshape", [t, "heads_shape"], [f"{t}4"]) for t in "qkv"],
        h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        h.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
        h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        h.make_node("MatMul", ["qh", "kh"], ["scores0"]),
        h.make_node("Mul", ["scores0", "scale"], ["scores1"]),
        h.make_node("Concat", ["seq1", "seq1"], ["mask_end"], axis=0),
        h.make_node("Slice", ["causal", "zero2", "mask_end", "axes23"], ["mask"]),
        h.make_node("Where", ["mask", "scores1", "masked"], ["scores"]),
        h.make_node("Softmax", ["scores"], ["probs"], axis=-1),
        h.make_node("MatMul", ["probs", "vh"], ["context0"]),
        h.make_node("Transpose", ["context0"], ["context1"], perm=[0, 2, 1, 3]),
        h.make_node("Concat", ["batch1", "seq1", "hidden"], ["merged_shape"], axis=0),
        h.make_node("Reshape", ["context1", "merged_shape"], ["context"]),
        h.make_node("MatMul", ["context", "w_o"], ["attn0"]),
        h.make_node("Add", ["attn0", "b_o"], ["attn"]),
        h.make_node("Add", ["x0", "attn"], ["x2"]),
        h.make_node("MatMul", ["x2", "w_up"], ["up0"]),
        h.make_node("Add", ["up0", "b_up"], ["up"]),
        h.make_node("Pow", ["up", "three"], ["cube"]),
        h.make_node("Mul", ["cube", "c"], ["cube_c"]),
        h.make_node("Add", ["up", "cube_c"], ["inner0"]),
        h.make_node("Mul", ["inner0", "gelu_k"], ["inner"]),
        h.make_node("Tanh", ["inner"], ["t"]),
        h.make_node("Add", ["t", "unit"], ["t1"]),
        h.make_node("Mul", ["up", "half"], ["half_up"]),
        h.make_node("Mul", ["half_up", "t1"], ["gelu"]),
        h.make_node("MatMul", ["gelu", "w_down"], ["down0"]),
        h.make_node("Add", ["down0", "b_down"], ["down"]),
        h.make_node("Add", ["x2", "down"], ["x3"]),
        h.make_node("MatMul", ["x3", "wte_t"], ["logits"]),
    ]
    initializers.append(ints("zero2", [0, 0]))
    graph = h.make_graph(
        nodes,
        "gpt2_style",
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "sequence"])],
        [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "sequence", VOCAB])],
        initializers,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> tuple[onnx.ModelProto, onnxc.Session]:
    model = _gpt2_style()
    path = tmp_path_factory.mktemp("gpt2") / "gpt2.onnx"
    onnx.save(model, path)
    return model, onnxc.Session(onnxc.compile(str(path), path.with_suffix(".so")))


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> tuple[onnx.ModelProto, onnxc.Session]:
    path = MODELS / "bert_tiny.onnx"
    library = onnxc.compile(str(path), tmp_path_factory.mktemp("bert") / "bert_tiny.so")
    return onnx.load(path), onnxc.Session(library)


def _ids(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, VOCAB, shape).astype(np.int64)


def _check(model: onnx.ModelProto, session: onnxc.Session, shapes) -> None:
    reference = ort.InferenceSession(model.SerializeToString())
    name = session.get_inputs()[0].name
    for shape in shapes:
        feed = {name: _ids(shape, seed=shape[1])}
        (got,) = session.run(None, feed)
        (want,) = reference.run(None, feed)
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max(), shape


def test_bert_one_library_every_batch_and_length(bert):
    model, session = bert
    assert session.get_inputs()[0].shape == ("batch", "seq")
    assert session.get_outputs()[0].shape == ("batch", "seq", 64)
    _check(model, session, [(1, 7), (2, 16), (4, 3), (1, 7)])


def test_gpt2_causal_mask_sliced_at_run_time(gpt2):
    model, session = gpt2
    assert session.get_outputs()[0].shape == ("batch", "sequence", VOCAB)
    _check(model, session, [(1, 1), (1, 7), (2, 32), (3, 12), (1, 7)])


def test_shapes_from_threads_at_once(gpt2):
    """Concurrent runs at different shapes: each thread's arena is its own."""
    model, session = gpt2
    reference = ort.InferenceSession(model.SerializeToString())
    shapes = [(1, 5), (2, 17), (3, 32), (1, 1)]
    expected = {shape: reference.run(None, {"ids": _ids(shape)})[0] for shape in shapes}
    failures = []

    def run(shape):
        for _ in range(10):
            (got,) = session.run(None, {"ids": _ids(shape)})
            if got.shape != expected[shape].shape or np.abs(got - expected[shape]).max() > 1e-4:
                failures.append(shape)

    threads = [threading.Thread(target=run, args=(shape,)) for shape in shapes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures


def test_bad_dims_are_input_errors(bert):
    _, session = bert
    with pytest.raises(InputError, match=r"input 'input_ids': dim 1 \(seq\) is 0, outside \[1, 2147483647\]"):
        session.run(None, {"input_ids": np.zeros((1, 0), np.int64)})
    with pytest.raises(InputError, match=r"dim 0 \(batch\) is 1099511627776, outside"):
        huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.int64), (2**40, 1), (8, 8))  # never read
        session.run(None, {"input_ids": huge})


def test_two_inputs_disagreeing_on_a_symbol(tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq"])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq"])
    z = h.make_tensor_value_info("z", T.FLOAT, ["batch", "seq"])
    model = h.make_model(
        h.make_graph([h.make_node("Add", ["x", "y"], ["z"])], "add", [x, y], [z]),
        opset_imports=[h.make_opsetid("", 17)],
    )
    session = onnxc.Session(onnxc.compile(model, tmp_path / "add.so"))
    a, b = np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)
    with pytest.raises(InputError, match=r"input 'y': dim 1 \(seq\) is 4, but input 'x' has seq = 3"):
        session.run(None, {"x": a, "y": b})
    (z,) = session.run(None, {"x": a, "y": a})
    np.testing.assert_array_equal(z, a + a)


def test_a_dim_contradicting_a_weight(tmp_path):
    """[batch, seq] @ [8, 4]: shape inference makes seq = 8, so the input's dim is static."""
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq"])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", 4])
    w = nh.from_array(np.ones((8, 4), np.float32), "w")
    model = h.make_model(
        h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"])], "mm", [x], [y], [w]),
        opset_imports=[h.make_opsetid("", 17)],
    )
    session = onnxc.Session(onnxc.compile(model, tmp_path / "mm.so"))
    assert session.get_inputs()[0].shape == ("batch", 8)
    with pytest.raises(InputError, match=r"input 'x'"):
        session.run(None, {"x": np.ones((2, 5), np.float32)})
    (got,) = session.run(None, {"x": np.ones((3, 8), np.float32)})
    np.testing.assert_array_equal(got, np.full((3, 4), 8, np.float32))
