"""Normalization lowerings against onnxruntime or ONNX's reference where the node tests do
not reach: optional outputs by schema position, BatchNormalization in training mode."""

import numpy as np
import onnx.reference
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from onnxc.backend import prepare


def test_layer_normalization_inv_std_dev_without_mean():
    """Y and InvStdDev requested, Mean absent: the empty output name must not shift
    InvStdDev into Mean's place (in shape inference or in the lowering)."""
    node = helper.make_node("LayerNormalization", ["x", "s"], ["y", "", "inv"], axis=1, epsilon=1e-3)
    graph = helper.make_graph(
        [node],
        "ln",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, [3, 4]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4]),
            helper.make_tensor_value_info("inv", TensorProto.FLOAT, [2, 1, 1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale = rng.standard_normal((3, 4)).astype(np.float32)
    got = prepare(model).run([x, scale])
    expected = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x, "s": scale})
    for value, reference in zip(got, expected):
        assert value.shape == reference.shape
        np.testing.assert_allclose(value, reference, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5)])
@pytest.mark.parametrize("opset", [15, 18])
def test_batch_normalization_training_mode(tmp_path, shape, opset):
    """training_mode=1: Y normalized with the batch's statistics (over every dim but 1), and
    the running mean/var updated with momentum, as ONNX's reference computes them."""
    names = ("x", "s", "bias", "mean", "var")
    channel = [shape[1]]
    node = helper.make_node(
        "BatchNormalization", list(names), ["y", "running_mean", "running_var"], training_mode=1, momentum=0.8
    )
    graph = helper.make_graph(
        [node],
        "bn",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape) if n == "x" else channel) for n in names],
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape) if n == "y" else channel)
            for n in node.output
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    rng = np.random.default_rng(1)
    feeds = {n: rng.standard_normal(shape if n == "x" else channel).astype(np.float32) for n in names}
    feeds["var"] = np.abs(feeds["var"]) + 0.5
    got = prepare(model, cache_dir=tmp_path).run(feeds)
    expected = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    for value, reference in zip(got, expected):
        np.testing.assert_allclose(value, reference, rtol=1e-5, atol=1e-6)
