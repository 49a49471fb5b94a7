"""cdist-scan: the Scan skl2onnx writes for squared distances between rows (its
`onnx_cdist`, in kNN models) becomes array ops.

The Scan carries the samples X [N, F] unchanged as its state and scans the rows C
[M, F] (the training set); each step yields ReduceSumSquare(X - C[m], axis 1), so its
scan output is [M, N]. That is ReduceSumSquare(Unsqueeze(X, 1) - C, axis 2)
transposed, and skl2onnx transposes it back at once: the rewrite gives the
Transpose's users the [N, M] distances directly. Unrolled by inline-control-flow
instead, the Scan was M ops per step and kept N off the leading dim of its result,
so a kNN model could not be compiled for a symbolic batch (batch_separable.py).
Runs before inline-control-flow, on untyped ops (shape inference types the new ones).
Any other Scan is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import SINCE_VERSION_ATTR, OnnxOp, YieldOp, onnx_inputs
from onnxc.passes.helpers.graph import (
    constant_array,
    erase_dead,
    insert_before,
    make_constant,
    make_op,
    python_attribute,
    rewrite_ops,
    single_use,
)


@dataclass(frozen=True)
class CdistScanPass(ModulePass):
    name = "cdist-scan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_ops(op, {"Scan": rewrite_cdist_scan})


def rewrite_cdist_scan(scan: OnnxOp, opset: int) -> None:
    operands = onnx_inputs(scan)
    if (
        opset < 9
        or len(operands) != 2
        or len(scan.results) != 2
        or scan.attr("num_scan_inputs") != 1
        or any(scan.attr(name) not in (None, [0]) for name in ("scan_input_axes", "scan_output_axes"))
        or any(scan.attr(name) not in (None, [0]) for name in ("scan_input_directions", "scan_output_directions"))
        or not _squared_distances_body(scan)
    ):
        return
    samples, rows = operands
    name = scan.node_name
    axes_1 = make_constant(scan, np.array([1], np.int64), f"{name}.samples_axis")
    axes_2 = make_constant(scan, np.array([2], np.int64), f"{name}.feature_axis")
    expanded = make_op("Unsqueeze", [samples, axes_1.results[0]], {}, f"{name}.samples", opset=opset)
    differences = make_op("Sub", [expanded.results[0], rows], {}, f"{name}.differences")
    distances = make_op(
        "ReduceSumSquare",
        [differences.results[0], axes_2.results[0]],
        {"keepdims": python_attribute(0)},
        f"{name}.distances",
    )
    if opset < 18:  # axes as an input, as the importer writes a Reduce* of an older model
        distances.attributes[SINCE_VERSION_ATTR] = IntegerAttr(18, i64)
    new_ops = [axes_1, axes_2, expanded, differences, distances]
    per_row = scan.results[1]
    user = per_row.first_use.operation if single_use(per_row) else None
    if isinstance(user, OnnxOp) and user.OP_TYPE == "Transpose" and list(user.attr("perm") or []) == [1, 0]:
        insert_before(scan, new_ops)
        user.results[0].replace_all_uses_with(distances.results[0])
        erase_dead(user)
    else:
        perm = {"perm": python_attribute([1, 0])}
        transposed = make_op("Transpose", [distances.results[0]], perm, f"{name}.per_row")
        insert_before(scan, [*new_ops, transposed])
        per_row.replace_all_uses_with(transposed.results[0])
    scan.results[0].replace_all_uses_with(samples)
    erase_dead(scan)


def _squared_distances_body(scan: OnnxOp) -> bool:
    """Whether the body passes its state [N, F] through and yields the squared distances of
    its rows to the scanned row [F]: Identity(x), ReduceSumSquare(x - row, axis 1 or -1,
    keepdims 0), Identity or not around each, constants aside."""
    block = scan.graph("body").block
    if len(block.args) != 2 or not all(isinstance(a.type, TensorType) for a in block.args):
        return False
    state, row = block.args
    if (state.type.get_num_dims(), row.type.get_num_dims()) != (2, 1):
        return False
    terminator = block.last_op
    if not isinstance(terminator, YieldOp) or len(terminator.operands) != 2:
        return False
    passed, distances = (_through_identities(v) for v in terminator.operands)
    reduce = distances.owner
    if passed is not state or not (isinstance(reduce, OnnxOp) and reduce.OP_TYPE == "ReduceSumSquare"):
        return False
    axes = reduce.attr("axes")
    if axes is None:
        inputs = onnx_inputs(reduce)
        axes = constant_array(inputs[1]) if len(inputs) > 1 else None
    if (
        axes is None
        or [int(a) for a in np.asarray(axes).reshape(-1)] not in ([1], [-1])
        or reduce.attr("keepdims") != 0
    ):
        return False
    difference = onnx_inputs(reduce)[0].owner
    if not (isinstance(difference, OnnxOp) and difference.OP_TYPE == "Sub"):
        return False
    if {_through_identities(v) for v in onnx_inputs(difference)} != {state, row}:
        return False
    return all(op.OP_TYPE in ("Identity", "Constant", "Sub", "ReduceSumSquare") for op in _onnx_ops(block))


def _through_identities(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, OnnxOp) and value.owner.OP_TYPE == "Identity":
        value = value.owner.input(0)
    return value


def _onnx_ops(block) -> list[OnnxOp]:
    return [op for op in block.ops if isinstance(op, OnnxOp)]
