"""cse: merge onnx ops that compute the same thing.

Small constants (up to `MAX_CONSTANT_KEY` elements) are the same when their
values are, so the many copies of `[0]` or `-1` an exporter emits become one;
xDSL's CSE, which compares attributes (a weight handle by its name), would
keep them apart. Everything else is xDSL's CSE: two ops are the same when
they have the same op type, operands, attributes, properties, result types
and sub-graphs, and it merges only `Pure` ones (not the random ops, see
`dialects/onnx.py`). The later op's uses move to the earlier one; like any
xDSL CSE it also erases the pure ops nothing uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.common_subexpression_elimination import cse

from onnxc.passes.helpers.graph import constant_array, onnx_functions, onnx_ops, static_shape

MAX_CONSTANT_KEY = 4096


@dataclass(frozen=True)
class CSEPass(ModulePass):
    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in onnx_functions(op):
            merge_equal_constants(function)
            cse(function.body)


def merge_equal_constants(function: func.FuncOp) -> None:
    seen = {}
    for node in onnx_ops(function):
        if node.OP_TYPE != "Constant":
            continue
        shape = static_shape(node.results[0])
        value = constant_array(node.results[0]) if shape is not None and math.prod(shape) <= MAX_CONSTANT_KEY else None
        if value is None:
            continue
        earlier = seen.setdefault((value.dtype.str, value.shape, value.tobytes()), node)
        if earlier is not node and earlier.results[0].type == node.results[0].type:
            node.results[0].replace_all_uses_with(earlier.results[0])
            Rewriter.erase_op(node)
