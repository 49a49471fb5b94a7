"""Normalization lowerings against onnxruntime where the node tests do not reach:
optional outputs by schema position."""

import numpy as np
import onnxruntime as ort
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
