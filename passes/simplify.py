"""simplify: inference-time rewrites that remove whole ops.

- `Identity`, and `Dropout` in inference mode (its mask, if used, is all true
  and left alone), are replaced by their input.
- `Cast` to the type its input already has is removed; a chain of reshapes
  (`Reshape`/`Flatten`/`Squeeze`/`Unsqueeze` of one) becomes one `Reshape` of
  the first input to the final static shape, or nothing if shapes match.
- `Transpose(Transpose(x, p1), p2)` becomes one Transpose with perm
  `p1[p2[d]]`, or `x` itself when that is the identity.

Reshapes of constants are constprop's job (it evaluates any all-constant op);
a BatchNormalization after a Conv, Gemm or MatMul is fold-affine's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.graph import (
    constant_array,
    infer_new_ops,
    insert_before,
    make_constant,
    make_op,
    python_attribute,
    replace_results,
    rewrite_ops,
    static_shape,
)


@dataclass(frozen=True)
class SimplifyPass(ModulePass):
    name = "simplify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_ops(op, _REWRITES)


def remove_identity(op: OnnxOp, opset: int) -> None:
    if op.results[0].type == op.input(0).type:
        replace_results(op, [op.input(0)])


def remove_dropout(op: OnnxOp, opset: int) -> None:
    training = op.input(2)
    if training is not None:
        flag = constant_array(training)
        if flag is None or flag.any():
            return
    if len(op.results) > 1 and op.results[1].first_use is not None:
        return
    if op.results[0].type == op.input(0).type:
        replace_results(op, [op.input(0)] + [None] * (len(op.results) - 1))


def remove_noop_cast(op: OnnxOp, opset: int) -> None:
    if op.results[0].type == op.input(0).type:
        replace_results(op, [op.input(0)])


RESHAPES = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


def collapse_reshapes(op: OnnxOp, opset: int) -> None:
    source, shape = op.input(0), static_shape(op.results[0])
    if shape is None:
        return
    while isinstance(source.owner, OnnxOp) and source.owner.OP_TYPE in RESHAPES:
        source = source.owner.input(0)
    if source.type == op.results[0].type:
        replace_results(op, [source])
    elif source is not op.input(0):
        target = make_constant(op, np.array(shape, dtype=np.int64), f"{op.node_name}.shape")
        reshape = make_op("Reshape", [source, target.results[0]], {}, op.node_name)
        insert_before(op, [target, reshape])
        infer_new_ops([reshape], opset)
        replace_results(op, [reshape.results[0]])


def compose_transposes(op: OnnxOp, opset: int) -> None:
    inner = op.input(0).owner
    if not (isinstance(inner, OnnxOp) and inner.OP_TYPE == "Transpose"):
        return
    source = inner.input(0)
    rank = len(source.type.get_shape()) if hasattr(source.type, "get_shape") else None
    if rank is None:
        return
    p1 = inner.attr("perm") or list(reversed(range(rank)))
    p2 = op.attr("perm") or list(reversed(range(rank)))
    perm = [p1[d] for d in p2]
    if perm == list(range(rank)):
        if source.type == op.results[0].type:
            replace_results(op, [source])
        return
    composed = make_op("Transpose", [source], {"perm": python_attribute(perm)}, op.node_name)
    insert_before(op, [composed])
    infer_new_ops([composed], opset)
    replace_results(op, [composed.results[0]])


_REWRITES = {
    "Identity": remove_identity,
    "Cast": remove_noop_cast,
    **{op_type: collapse_reshapes for op_type in RESHAPES},
    "Dropout": remove_dropout,
    "Transpose": compose_transposes,
}
