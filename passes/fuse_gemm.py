"""fuse-gemm: `MatMul` + `Add` → `Gemm`, and `Gemm` + `Add` → `Gemm` with the bias in C.

Gemm computes `A·B + C` in one kernel, saving a pass over the output and a
buffer. Fusion needs 2-D operands, a MatMul result used only by the Add, and
an addend that broadcasts to the product's shape one way (Gemm's C may be
broadcast, the product may not). A Gemm's existing constant C absorbs a
constant addend when `beta` is 1.
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
    schema_attributes,
    single_use,
    static_shape,
)


@dataclass(frozen=True)
class FuseGemmPass(ModulePass):
    name = "fuse-gemm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_ops(op, {"Add": fuse_add})


def broadcasts_onto(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether `shape` broadcasts to exactly `target` (unidirectionally)."""
    if len(shape) > len(target):
        return False
    return all(d in (1, t) for d, t in zip(reversed(shape), reversed(target)))


def fuse_add(add: OnnxOp, opset: int) -> None:
    for product, addend in ((add.input(0), add.input(1)), (add.input(1), add.input(0))):
        producer = product.owner
        if not (isinstance(producer, OnnxOp) and producer.OP_TYPE in ("MatMul", "Gemm") and single_use(product)):
            continue
        out_shape, addend_shape = static_shape(product), static_shape(addend)
        if out_shape is None or addend_shape is None or len(out_shape) != 2:
            continue
        if static_shape(add.results[0]) != out_shape or not broadcasts_onto(addend_shape, out_shape):
            continue
        if producer.OP_TYPE == "MatMul":
            a, b = producer.input(0), producer.input(1)
            if len(static_shape(a) or ()) != 2 or len(static_shape(b) or ()) != 2:
                continue
            gemm = make_op("Gemm", [a, b, addend], {}, producer.node_name)
            new_ops = [gemm]
        else:
            new_ops = _gemm_with_bias(producer, addend)
            if not new_ops:
                continue
            gemm = new_ops[-1]
        insert_before(add, new_ops)
        infer_new_ops([gemm], opset)
        replace_results(add, [gemm.results[0]])
        return


def _gemm_with_bias(gemm: OnnxOp, addend) -> list[OnnxOp]:
    """A copy of `gemm` whose C also adds `addend` (empty if that cannot be expressed)."""
    attributes = schema_attributes(gemm)
    c = gemm.input(2)
    if c is None:
        attributes["beta"] = python_attribute(1.0)
        return [make_op("Gemm", [gemm.input(0), gemm.input(1), addend], attributes, gemm.node_name)]
    c_value, addend_value = constant_array(c), constant_array(addend)
    if c_value is None or addend_value is None or gemm.attr("beta") != 1.0:
        return []
    bias = make_constant(gemm, np.asarray(c_value + addend_value, dtype=c_value.dtype), f"{gemm.node_name}.bias")
    return [bias, make_op("Gemm", [gemm.input(0), gemm.input(1), bias.results[0]], attributes, gemm.node_name)]
