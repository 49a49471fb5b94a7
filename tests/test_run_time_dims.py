"""Models with several symbolic dims compile once and run at any shape (batch x sequence).

Transformers export batch and sequence as dynamic axes; the library takes both
at run time (passes/helpers/run_time_dims.py, the entry point binds them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import run_from_threads
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxc
from onnxc.errors import InputError
from onnxc.examples.transformers import gpt2_style, t5_style_encoder

ort = pytest.importorskip("onnxruntime")

MODELS = Path(__file__).parent / "models"
VOCAB, HIDDEN, HEADS, MAX_POSITIONS = 50, 16, 2, 32


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> tuple[onnx.ModelProto, onnxc.Session]:
    model = gpt2_style(VOCAB, HIDDEN, HEADS, MAX_POSITIONS)
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


def test_t5_relative_position_bias_at_run_time(tmp_path):
    """The relative position buckets (Range, Sub, Abs, Log, Cast, Min, Where, Gather) over
    the run-time length, RMS norms with ReduceMean over an axes input."""
    model = t5_style_encoder(VOCAB, HIDDEN, HEADS)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "t5.so"))
    _check(model, session, [(1, 1), (2, 9), (3, 40)])


def test_cnn_of_free_height_and_width(tmp_path):
    """Detectors and OCR models leave H and W free: strided, depthwise SAME convs and
    max, padded average and global pooling over run-time spatial dims."""
    rng = np.random.default_rng(0)

    def weight(name, *shape):
        return nh.from_array(rng.standard_normal(shape).astype(np.float32), name)

    nodes = [
        h.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        h.make_node("Relu", ["c1"], ["r1"]),
        h.make_node("Conv", ["r1", "w2"], ["c2"], group=8, auto_pad="SAME_UPPER"),
        h.make_node("MaxPool", ["c2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("AveragePool", ["p"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        h.make_node("GlobalAveragePool", ["a"], ["y"]),
    ]
    graph = h.make_graph(
        nodes,
        "free_hw",
        [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"])],
        [h.make_tensor_value_info("a", T.FLOAT, None), h.make_tensor_value_info("y", T.FLOAT, ["N", 8, 1, 1])],
        [weight("w1", 8, 3, 3, 3), weight("b1", 8), weight("w2", 8, 1, 3, 3)],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    session = onnxc.Session(onnxc.compile(model, tmp_path / "free_hw.so"))
    assert session.get_inputs()[0].shape == ("N", 3, "H", "W")
    reference = ort.InferenceSession(model.SerializeToString())
    for shape in [(1, 3, 16, 16), (2, 3, 23, 31), (1, 3, 8, 40)]:
        x = rng.standard_normal(shape).astype(np.float32)
        for got, want in zip(session.run(None, {"x": x}), reference.run(None, {"x": x})):
            assert got.shape == want.shape
            assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


def test_shapes_from_threads_at_once(gpt2):
    """Concurrent runs at different shapes: each thread's arena is its own."""
    model, session = gpt2
    reference = ort.InferenceSession(model.SerializeToString())
    shapes = [(1, 5), (2, 17), (3, 32), (1, 1)]
    expected = {shape: reference.run(None, {"ids": _ids(shape)})[0] for shape in shapes}
    assert not run_from_threads(session, {shape: {"ids": _ids(shape)} for shape in shapes}, expected)


def test_empty_sequence(bert):
    """A zero dim is an empty tensor, as in onnxruntime."""
    model, session = bert
    ids = np.zeros((2, 0), np.int64)
    (got,) = session.run(None, {"input_ids": ids})
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, {"input_ids": ids})
    assert got.shape == want.shape == (2, 0, 64)


def test_huge_dim_is_an_input_error(bert):
    _, session = bert
    with pytest.raises(InputError, match=r"dim 0 \(batch\) is 1099511627776, outside \[0, 2147483647\]"):
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
