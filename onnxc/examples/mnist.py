"""An MNIST-style CNN (opset 13), built in code with seeded random weights, for tests and benchmarks.

Architecture of the classic ONNX model-zoo MNIST net: Conv 5x5 (8) → Relu →
MaxPool 2 → Conv 5x5 (16) → Relu → MaxPool 3 → Reshape → MatMul → Add.
`digit_image` draws a digit to feed it. `python -m onnxc.examples.mnist OUT.onnx`
writes it. Its outputs mean nothing; the quick-start model with trained
weights is `onnxc.examples.digits`.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _weight(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    values = rng.standard_normal(shape).astype(np.float32) * np.float32(np.sqrt(2.0 / fan_in))
    return numpy_helper.from_array(values, name)


def build_mnist_cnn(seed: int = 0, batch: int = 1) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    initializers = [
        _weight(rng, "conv1.weight", (8, 1, 5, 5)),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32) * 0.1, "conv1.bias"),
        _weight(rng, "conv2.weight", (16, 8, 5, 5)),
        numpy_helper.from_array(rng.standard_normal(16).astype(np.float32) * 0.1, "conv2.bias"),
        numpy_helper.from_array(np.array([batch, 256], dtype=np.int64), "flatten.shape"),
        _weight(rng, "fc.weight", (256, 10)),
        numpy_helper.from_array(rng.standard_normal((1, 10)).astype(np.float32) * 0.1, "fc.bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[5, 5], auto_pad="SAME_UPPER"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2",
                         kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[3, 3], strides=[3, 3]),
        helper.make_node("Reshape", ["p2", "flatten.shape"], ["flat"], name="flatten"),
        helper.make_node("MatMul", ["flat", "fc.weight"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fc.bias"], ["logits"], name="fc.add"),
    ]
    graph = helper.make_graph(
        nodes,
        "mnist_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 1, 28, 28])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 10])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxc")
    onnx.checker.check_model(model)
    return model


def digit_image(digit: int = 7) -> np.ndarray:
    """A crude 28x28 drawing of a digit, as a [1, 1, 28, 28] float32 input."""
    strokes = {
        0: [(slice(6, 22), slice(8, 10)), (slice(6, 22), slice(18, 20)), (slice(6, 8), slice(8, 20)), (slice(20, 22), slice(8, 20))],
        1: [(slice(5, 23), slice(13, 15))],
        7: [(slice(6, 8), slice(7, 21)), (slice(6, 23), slice(19, 21))],
    }
    image = np.zeros((1, 1, 28, 28), dtype=np.float32)
    for rows, cols in strokes.get(digit, strokes[7]):
        image[0, 0, rows, cols] = 1.0
    return image


if __name__ == "__main__":
    if len(sys.argv) > 2:
        sys.exit("usage: python -m onnxc.examples.mnist [OUT.onnx] (random weights: the model with trained weights "
                 "and --predict is onnxc.examples.digits)")
    out = sys.argv[1] if len(sys.argv) > 1 else "mnist.onnx"
    onnx.save(build_mnist_cnn(), out)
    print(f"wrote {out}")
