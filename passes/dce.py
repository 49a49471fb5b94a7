"""dce: erase onnx ops none of whose results is used (onnx ops have no side effects).

Weights no op refers to any more (inputs of folded constants, pre-fusion Conv
weights) are dropped from the module's WeightStore, freeing their memory.

Not xDSL's dead-code elimination: that keeps every op not known free of effects,
and the random ops are not `Pure` (so that no CSE merges two draws), yet an
unused draw changes nothing and goes too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from onnxc.dialects.onnx import WeightAttr, WeightStore
from onnxc.passes.helpers.graph import onnx_functions, onnx_ops


@dataclass(frozen=True)
class DCEPass(ModulePass):
    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in onnx_functions(op):
            for node in reversed(onnx_ops(function)):  # users before producers
                if all(r.first_use is None for r in node.results):
                    Rewriter.erase_op(node)
        store = WeightStore.of(op)
        live = {
            attr.ref.data for node in op.walk() for attr in node.attributes.values() if isinstance(attr, WeightAttr)
        }
        for name in [name for name in store.arrays if name not in live]:
            del store.arrays[name]
