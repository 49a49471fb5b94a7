"""Floating-point operation counts per ONNX node, from static shapes, under the
rule in COUNTING_RULE (which `onnxc inspect --help` prints). A node whose
needed shapes are unknown or symbolic has no count (None).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper

COUNTING_RULE = (
    "FLOPs: Conv, ConvTranspose, Gemm, MatMul count 2 x multiply-accumulates (bias adds not counted); "
    "MaxPool/AveragePool/LpPool count output elements x kernel size; global pools, reductions and "
    "ArgMax/ArgMin count input elements; data movement (Reshape, Transpose, Concat, Slice, Gather, Pad, "
    "Cast, ...) counts 0; every other op counts its output elements."
)

DATA_MOVEMENT = frozenset(
    "Cast CastLike Concat Constant ConstantOfShape DepthToSpace Dropout Expand EyeLike Flatten Gather "
    "GatherElements GatherND Identity NonZero OneHot Pad Range Reshape ScatterElements ScatterND Shape Size "
    "Slice SpaceToDepth Split Squeeze Tile Transpose Unsqueeze".split()
)
WINDOWED = frozenset(("MaxPool", "AveragePool", "LpPool"))
PER_INPUT_ELEMENT = frozenset(
    "GlobalAveragePool GlobalMaxPool GlobalLpPool ArgMax ArgMin ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp "
    "ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare".split()
)

Shape = Sequence[int]
ShapeOf = Callable[[str], Shape | None]
"""Static shape of a value by name, None when unknown or symbolic."""


def node_flops(node: onnx.NodeProto, shape_of: ShapeOf) -> int | None:
    """FLOPs of one node under the counting rule above."""
    op = node.op_type
    if op in DATA_MOVEMENT:
        return 0
    output = shape_of(node.output[0]) if node.output and node.output[0] else None
    if op in ("Conv", "ConvTranspose", "Gemm", "MatMul"):
        macs = _macs(node, output, shape_of)
        return None if macs is None else 2 * macs
    if op in WINDOWED:
        kernel = _attribute(node, "kernel_shape")
        return None if output is None or kernel is None else _size(output) * _size(kernel)
    if op in PER_INPUT_ELEMENT:
        data = shape_of(node.input[0])
        return None if data is None else _size(data)
    return None if output is None else _size(output)


def _macs(node: onnx.NodeProto, output: Shape | None, shape_of: ShapeOf) -> int | None:
    op = node.op_type
    if op == "Conv":  # each output element sums over C/group x kernel
        weight = shape_of(node.input[1])
        return None if output is None or weight is None else _size(output) * _size(weight[1:])
    if op == "ConvTranspose":  # each input element scatters into (M/group) x kernel outputs
        data, weight = shape_of(node.input[0]), shape_of(node.input[1])
        return None if data is None or weight is None else _size(data) * _size(weight[1:])
    a = shape_of(node.input[0])
    if output is None or a is None:
        return None
    if op == "Gemm":
        depth = a[0] if _attribute(node, "transA", 0) else a[1]
    else:  # MatMul: the reduction runs over the last dim of A (its only one if 1-D)
        depth = a[-1]
    return _size(output) * depth


def _attribute(node: onnx.NodeProto, name: str, default=None):
    for attr in node.attribute:
        if attr.name == name:
            return helper.get_attribute_value(attr)
    return default


def _size(shape: Shape) -> int:
    return int(np.prod(shape, dtype=np.int64))
