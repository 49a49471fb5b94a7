"""Write a small test model: `python make_model.py KIND OUT.onnx` (used by lit RUN lines)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnxc.examples.mnist import build_mnist_cnn


def symbolic_batch() -> onnx.ModelProto:
    """Dynamic batch dim 'N' flowing through Relu and Gemm."""
    w = numpy_helper.from_array(np.ones((3, 4), np.float32), "w")
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w"], ["y"], name="gemm", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "symbolic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def constant_forms() -> onnx.ModelProto:
    """Constant nodes in several attribute forms, an initializer listed as input, an empty optional input."""
    half = numpy_helper.from_array(np.full((2,), 0.5, np.float16), "half")
    nodes = [
        helper.make_node("Constant", [], ["c_float"], name="c1", value_float=2.0),
        helper.make_node("Constant", [], ["c_ints"], name="c2", value_ints=[1, 2]),
        helper.make_node("Constant", [], ["c_half"], name="c3", value=half),
        helper.make_node("Mul", ["x", "c_float"], ["m"], name="mul"),
        helper.make_node("Clip", ["m", "", "hi"], ["y"], name="clip"),
    ]
    hi = numpy_helper.from_array(np.array(3.0, np.float32), "hi")
    graph = helper.make_graph(
        nodes, "constants",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("hi", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [hi],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def old_opset() -> onnx.ModelProto:
    """Opset-11 forms whose attributes later became inputs."""
    nodes = [
        helper.make_node("Unsqueeze", ["x"], ["u"], name="unsqueeze", axes=[0]),
        helper.make_node("Clip", ["u"], ["c"], name="clip", min=0.0, max=6.0),
        helper.make_node("ReduceSum", ["c"], ["y"], name="sum", axes=[2], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])


def deprecated_ops() -> onnx.ModelProto:
    """Upsample-7, deprecated since opset 10, with its scales as an attribute."""
    nodes = [helper.make_node("Upsample", ["x"], ["y"], name="upsample", mode="linear", scales=[1.0, 2.0])]
    graph = helper.make_graph(
        nodes, "deprecated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])


KINDS = {"old_opset": old_opset, "deprecated": deprecated_ops, "mnist": build_mnist_cnn, "symbolic": symbolic_batch, "constants": constant_forms}

if __name__ == "__main__":
    onnx.save(KINDS[sys.argv[1]](), sys.argv[2])
