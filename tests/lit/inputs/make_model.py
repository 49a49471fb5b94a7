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


def non_zero() -> onnx.ModelProto:
    """NonZero: an output whose shape depends on the input's values."""
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"], name="nz")], "non_zero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def deprecated_ops() -> onnx.ModelProto:
    """Upsample-7, deprecated since opset 10, with its scales as an attribute."""
    nodes = [helper.make_node("Upsample", ["x"], ["y"], name="upsample", mode="linear", scales=[1.0, 2.0])]
    graph = helper.make_graph(
        nodes, "deprecated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])


def control_flow() -> onnx.ModelProto:
    """A Loop running Size(x) times (known after folding, not at import) with an If on
    the iteration number nested in its body; a sequence built and read back."""
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["acc", "x"], ["t"], name="then_add")],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Mul", ["acc", "x"], ["e"], name="else_mul")],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    )
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond"], ["cond_out"], name="keep_going"),
            helper.make_node("Equal", ["i", "zero"], ["first"], name="first"),
            helper.make_node("If", ["first"], ["step"], name="branch", then_branch=then_graph, else_branch=else_graph),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("step", TensorProto.FLOAT, [2]),
        ],
    )
    nodes = [
        helper.make_node("Size", ["x"], ["n"], name="n"),
        helper.make_node("Loop", ["n", "", "x"], ["y"], name="loop", body=body),
        helper.make_node("SequenceConstruct", ["x", "y"], ["seq"], name="seq"),
        helper.make_node("SequenceAt", ["seq", "zero"], ["z"], name="at"),
    ]
    graph = helper.make_graph(
        nodes,
        "control",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [2]),
        ],
        [zero],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run_time_sequence() -> onnx.ModelProto:
    """SplitToSequence along a run-time dim M of [2, M]: a sequence of run-time length,
    its length, an item at a run-time position, the items stacked along axis 0, and the
    sequence itself as a graph output."""
    sequence = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=0, name="split"),
        helper.make_node("SequenceLength", ["s"], ["n"], name="length"),
        helper.make_node("SequenceAt", ["s", "p"], ["item"], name="at"),
        helper.make_node("ConcatFromSequence", ["s"], ["stacked"], axis=0, new_axis=1, name="stack"),
    ]
    graph = helper.make_graph(
        nodes, "run_time_sequence",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "M"]),
         helper.make_tensor_value_info("p", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("item", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("stacked", TensorProto.FLOAT, ["M", 2]),
         helper.make_value_info("s", sequence)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


KINDS = {"run_time_sequence": run_time_sequence, "control_flow": control_flow, "old_opset": old_opset, "deprecated": deprecated_ops, "mnist": build_mnist_cnn, "symbolic": symbolic_batch, "constants": constant_forms, "non_zero": non_zero}

if __name__ == "__main__":
    onnx.save(KINDS[sys.argv[1]](), sys.argv[2])
