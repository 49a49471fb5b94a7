"""A corpus of generated models, each repeating one exporter's idiom block after block.

What exporters write around the real work (shape arithmetic, layout transposes,
masks, branches on sizes) is where compile time went exponential before (issue
#21: a DAG of shared shape arithmetic re-evaluated per path). Each model chains
`blocks` copies of its idiom, every block reading the shapes of the ones before,
so that a path costing more than linear time shows at a few dozen blocks.

- torchscript: `torch.onnx.export` (TorchScript): Shape -> Gather -> Unsqueeze ->
  Concat -> Reshape for every view, sizes multiplied through Mul/Div on scalars.
- dynamo: `torch.onnx.export(dynamo=True)`: Shape with start/end, sizes as 1-D
  tensors through Squeeze, Mul and Concat, Expand of a broadcast.
- paddle: paddle2onnx: a batch dim of -1, Reshape with 0 (copy) and -1 dims,
  Conv + BatchNormalization, `scale` as Mul + Add.
- keras_nhwc: tf2onnx from Keras: NHWC input, Transpose to NCHW around each Conv and
  back, ReLU6 as Clip.
- mask: attention masks: Equal -> Where(-inf), the mask Expanded to the scores'
  shape computed from Shape, ConstantOfShape.
- if_static: If on a size known once shapes are inferred (TorchScript's Python
  conditionals on sizes), both branches real subgraphs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class _Graph:
    """Nodes and initializers of one model, named in order."""

    def __init__(self, seed: int = 0):
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.rng = np.random.default_rng(seed)

    def const(self, name: str, value) -> str:
        array = np.asarray(value)
        array = array.astype(np.float32) if array.dtype.kind == "f" else array
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], output: str) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            name,
            inputs,
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
            self.initializers,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def torchscript(blocks: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x [2, 8, 16]: per block a Linear, then a split of the last dim into heads and back,
    each view's shape computed from the previous block's output."""
    g = _Graph(1)
    g.const("i0", np.array(0, np.int64))
    g.const("i1", np.array(1, np.int64))
    g.const("i2", np.array(2, np.int64))
    g.const("heads", np.array([4], np.int64))
    g.const("axis0", np.array([0], np.int64))
    x = "x"
    for b in range(blocks):
        w = g.const(f"w{b}", g.rng.standard_normal((16, 16)) / 4)
        h = g.node("MatMul", [x, w], f"mm{b}")
        shape = g.node("Shape", [h], f"shape{b}")
        batch = g.node("Gather", [shape, "i0"], f"batch{b}", axis=0)
        seq = g.node("Gather", [shape, "i1"], f"seq{b}", axis=0)
        width = g.node("Gather", [shape, "i2"], f"width{b}", axis=0)
        head = g.node("Div", [width, g.const(f"four{b}", np.array(4, np.int64))], f"head{b}")
        dims = [g.node("Unsqueeze", [d, "axis0"], f"{d}.u") for d in (batch, seq, head)]
        split = g.node("Concat", [dims[0], dims[1], "heads", dims[2]], f"split{b}", axis=0)
        heads = g.node("Reshape", [h, split], f"heads{b}")
        merged = g.node("Concat", [dims[0], dims[1], g.node("Mul", [dims[2], "heads"], f"w{b}.u")], f"merge{b}", axis=0)
        x = g.node("Tanh", [g.node("Reshape", [heads, merged], f"merged{b}")], f"act{b}")
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 16])]
    return g.model("torchscript", inputs, x), {"x": g.rng.standard_normal((2, 8, 16)).astype(np.float32)}


def dynamo(blocks: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x [3, 12]: per block a bias Expanded to x's shape (from Shape with start/end and
    1-D size arithmetic) and a Reshape to [rows * 2, -1] and back."""
    g = _Graph(2)
    g.const("two", np.array([2], np.int64))
    g.const("minus1", np.array([-1], np.int64))
    x = "x"
    for b in range(blocks):
        rows = g.node("Shape", [x], f"rows{b}", start=0, end=1)
        cols = g.node("Shape", [x], f"cols{b}", start=-1)
        full = g.node("Concat", [rows, cols], f"full{b}", axis=0)
        bias = g.node("Expand", [g.const(f"bias{b}", g.rng.standard_normal((1, 12)) / 4), full], f"expanded{b}")
        added = g.node("Add", [x, bias], f"add{b}")
        doubled = g.node("Concat", [g.node("Mul", [rows, "two"], f"rows2_{b}"), "minus1"], f"shape2_{b}", axis=0)
        folded = g.node("Reshape", [g.node("Sin", [added], f"sin{b}"), doubled], f"fold{b}")
        x = g.node("Reshape", [folded, full], f"unfold{b}")
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 12])]
    return g.model("dynamo", inputs, x), {"x": g.rng.standard_normal((3, 12)).astype(np.float32)}


def paddle(blocks: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x [-1, 4, 6, 6] (batch 2 at run time): per block Conv + BatchNormalization, `scale`
    as Mul + Add, a flatten to [0, -1] and back to [0, 4, 6, 6] (0: copy the input's dim)."""
    g = _Graph(3)
    g.const("flat", np.array([0, -1], np.int64))
    g.const("image", np.array([0, 4, 6, 6], np.int64))
    x = "x"
    for b in range(blocks):
        conv = g.node("Conv", [x, g.const(f"w{b}", g.rng.standard_normal((4, 4, 3, 3)) / 6)], f"conv{b}", pads=[1] * 4)
        stats = [g.const(f"bn{b}.{k}", v) for k, v in enumerate(
            [1 + 0.1 * g.rng.standard_normal(4), 0.1 * g.rng.standard_normal(4),
             0.1 * g.rng.standard_normal(4), 1 + 0.1 * g.rng.random(4)])]  # fmt: skip
        normalized = g.node("BatchNormalization", [conv, *stats], f"bn{b}")
        scaled = g.node(
            "Add", [g.node("Mul", [normalized, g.const(f"s{b}", 0.5)], f"mul{b}"), g.const(f"o{b}", 0.1)], f"scale{b}"
        )
        flat = g.node("Reshape", [g.node("Relu", [scaled], f"relu{b}"), "flat"], f"flat{b}")
        x = g.node("Reshape", [flat, "image"], f"image{b}")
    declared = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])
    declared.type.tensor_type.shape.dim[0].dim_value = -1  # paddle2onnx's unknown batch
    return g.model("paddle", [declared], x), {"x": g.rng.standard_normal((2, 4, 6, 6)).astype(np.float32)}


def keras_nhwc(blocks: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x [1, 8, 8, 4] NHWC: per block Transpose to NCHW, Conv, ReLU6 (Clip), Transpose back."""
    g = _Graph(4)
    g.const("zero", 0.0)
    g.const("six", 6.0)
    x = "x"
    for b in range(blocks):
        nchw = g.node("Transpose", [x], f"nchw{b}", perm=[0, 3, 1, 2])
        conv = g.node("Conv", [nchw, g.const(f"w{b}", g.rng.standard_normal((4, 4, 3, 3)) / 3),
                               g.const(f"b{b}", 0.1 * g.rng.standard_normal(4))], f"conv{b}", pads=[1] * 4)  # fmt: skip
        relu6 = g.node("Clip", [conv, "zero", "six"], f"relu6_{b}")
        x = g.node("Transpose", [relu6], f"nhwc{b}", perm=[0, 2, 3, 1])
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 4])]
    return g.model("keras_nhwc", inputs, x), {"x": g.rng.standard_normal((1, 8, 8, 4)).astype(np.float32)}


def mask(blocks: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """scores [2, 2, 5, 5] and a key mask [2, 5] of 0/1: per block the mask Expanded to the
    scores' shape (from Shape), Where(mask == 0, -inf, scores), Softmax, and a matrix product."""
    g = _Graph(5)
    g.const("axes", np.array([1, 2], np.int64))
    g.const("zero", np.array(0, np.int64))
    g.const("minus_inf", np.array(-np.inf, np.float32))
    g.const("one_shape", np.array([1], np.int64))
    blocked = g.node("Equal", [g.node("Unsqueeze", ["key_mask", "axes"], "key_mask_4d"), "zero"], "blocked")
    x = "scores"
    for b in range(blocks):
        shape = g.node("Shape", [x], f"shape{b}")
        expanded = g.node("Expand", [blocked, shape], f"mask{b}")
        masked = g.node("Where", [expanded, "minus_inf", x], f"masked{b}")
        probabilities = g.node("Softmax", [masked], f"softmax{b}", axis=-1)
        ones = g.node("ConstantOfShape", [g.node("Shape", [probabilities], f"pshape{b}")], f"ones{b}",
                      value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]))  # fmt: skip
        x = g.node("MatMul", [g.node("Add", [probabilities, ones], f"shifted{b}"),
                              g.const(f"v{b}", g.rng.standard_normal((5, 5)) / 3)], f"scores{b}")  # fmt: skip
    key_mask = np.ones((2, 5), np.int64)
    key_mask[0, 3:] = key_mask[1, 4:] = 0
    inputs = [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 2, 5, 5]),
              helper.make_tensor_value_info("key_mask", TensorProto.INT64, [2, 5])]  # fmt: skip
    feeds = {"scores": g.rng.standard_normal((2, 2, 5, 5)).astype(np.float32), "key_mask": key_mask}
    return g.model("mask", inputs, x), feeds


def if_static(blocks: int) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """x [4, 6]: per block an If on (rows of x > 2), its branches a Mul and a Neg, the
    condition computed from Shape -> Gather -> Greater as TorchScript writes it."""
    g = _Graph(6)
    g.const("i0", np.array(0, np.int64))
    g.const("two", np.array(2, np.int64))
    x = "x"
    for b in range(blocks):
        rows = g.node("Gather", [g.node("Shape", [x], f"shape{b}"), "i0"], f"rows{b}", axis=0)
        condition = g.node("Greater", [rows, "two"], f"cond{b}")
        scale = numpy_helper.from_array(np.array(0.5 + 0.01 * b, np.float32), f"k{b}")
        then_out, else_out = f"then{b}", f"else{b}"
        then_branch = helper.make_graph(
            [helper.make_node("Constant", [], [f"k{b}.c"], value=scale),
             helper.make_node("Mul", [x, f"k{b}.c"], [then_out])], f"then{b}", [],
            [helper.make_tensor_value_info(then_out, TensorProto.FLOAT, None)])  # fmt: skip
        else_branch = helper.make_graph(
            [helper.make_node("Neg", [x], [else_out])], f"else{b}", [],
            [helper.make_tensor_value_info(else_out, TensorProto.FLOAT, None)])  # fmt: skip
        chosen = g.node("If", [condition], f"if{b}", then_branch=then_branch, else_branch=else_branch)
        x = g.node("Sin", [g.node("Add", [chosen, x], f"sum{b}")], f"sin{b}")
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])]
    return g.model("if_static", inputs, x), {"x": g.rng.standard_normal((4, 6)).astype(np.float32)}


IDIOMS: dict[str, Callable[[int], tuple[onnx.ModelProto, dict[str, np.ndarray]]]] = {
    "torchscript": torchscript,
    "dynamo": dynamo,
    "paddle": paddle,
    "keras_nhwc": keras_nhwc,
    "mask": mask,
    "if_static": if_static,
}
