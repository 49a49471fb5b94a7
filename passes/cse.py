"""cse: merge onnx ops that compute the same thing.

Two ops are the same when they have the same op type, operands, attributes
and properties; small constants (up to `MAX_CONSTANT_KEY` elements) are the
same when their values are, so the many copies of `[0]` or `-1` an exporter
emits become one. The later op's uses move to the earlier one. Random ops are
never merged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.graph import constant_array, onnx_functions, onnx_ops, static_shape

MAX_CONSTANT_KEY = 4096
NONDETERMINISTIC = {
    "RandomNormal",
    "RandomUniform",
    "RandomNormalLike",
    "RandomUniformLike",
    "Multinomial",
    "Bernoulli",
}


@dataclass(frozen=True)
class CSEPass(ModulePass):
    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in onnx_functions(op):
            seen: dict[tuple, OnnxOp] = {}
            for node in onnx_ops(function):
                key = _key(node)
                if key is None:
                    continue
                earlier = seen.setdefault(key, node)
                if earlier is node or any(a.type != b.type for a, b in zip(earlier.results, node.results)):
                    continue
                for old, new in zip(node.results, earlier.results):
                    old.replace_all_uses_with(new)
                Rewriter.erase_op(node)


def _key(op: OnnxOp) -> tuple | None:
    if op.OP_TYPE in NONDETERMINISTIC:
        return None
    if op.OP_TYPE == "Constant":
        shape = static_shape(op.results[0])
        value = constant_array(op.results[0]) if shape is not None and math.prod(shape) <= MAX_CONSTANT_KEY else None
        if value is None:
            return None
        return ("Constant", value.dtype.str, value.shape, value.tobytes())
    attributes = tuple(sorted((k, v) for k, v in op.attributes.items()))
    properties = tuple(sorted((k, v) for k, v in op.properties.items()))
    return (op.name, tuple(op.operands), attributes, properties, tuple(r.type for r in op.results))
