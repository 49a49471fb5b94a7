"""constprop: evaluate at compile time every onnx op whose inputs are all constants.

Exporters compute shapes at run time (`Shape → Gather → Unsqueeze → Concat →
Reshape`); once the graph inputs' shapes are pinned these are all constants,
and folding them is what gives the downstream ops static types. One forward
walk suffices: each op is shape-inferred again when an operand changed, so a
folded shape immediately types the op that consumes it (constprop and shape
inference reach their fixpoint together).

`Shape`/`Size` of a statically shaped value fold even if the value is not
constant. Everything else is evaluated by ONNX's reference implementation of
the single node (numpy underneath, exact for the ops it implements), except
for a few ops numpy does directly. Results larger than `MAX_FOLD_ELEMENTS` are
left alone. Normalization rules of onnx-mlir bring constants together so they
fold: `(x + c1) + c2 → x + (c1 + c2)`, and the same for Mul.

`fold-shapes` is the same walk restricted to shape arithmetic: integer
results, and float ones that feed a shape operand (a window's `Range(0,
Cast(size), 1)`): what lowering needs at -O0 without touching float math.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import onnx
import onnx.reference
from onnx.reference.ops.op_cast import cast_to
from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseIntOrFPElementsAttr, ModuleOp, TensorType, UnrankedTensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import OnnxOp, WeightAttr, numeric_value, onnx_inputs
from onnxc.dialects.types import dim_params, tensor_type_of
from onnxc.passes.helpers.graph import (
    constant_array,
    erase_dead,
    infer_new_ops,
    insert_before,
    is_constant,
    make_constant,
    make_op,
    module_opset,
    node_proto,
    onnx_functions,
    onnx_ops,
    op_opset,
    ops_feeding_shapes,
    replace_results,
    result_dtype,
    single_use,
    static_shape,
    update_function_types,
)
from onnxc.passes.shape_inference import infer_op

MAX_FOLD_ELEMENTS = 1 << 28
# Ops that are never folded: random or with side effects / sub-graphs.
NOT_FOLDABLE = {"Constant", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                "Bernoulli", "If", "Loop", "Scan"}  # fmt: skip
ASSOCIATIVE = ("Add", "Mul")


@dataclass(frozen=True)
class ConstPropPass(ModulePass):
    name = "constprop"
    integers_only: ClassVar[bool] = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opset = module_opset(op)
        for function in onnx_functions(op):
            Folder(opset, self.integers_only).run(onnx_ops(function))
        update_function_types(op)


@dataclass(frozen=True)
class FoldShapesPass(ConstPropPass):
    name = "fold-shapes"
    integers_only: ClassVar[bool] = True


def _has_unknown_dims(value: SSAValue) -> bool:
    """Unranked, or a dynamic dim without a symbolic expression."""
    if isinstance(value.type, UnrankedTensorType):
        return True
    return isinstance(value.type, TensorType) and any(
        d == DYNAMIC_INDEX and not p for d, p in zip(value.type.get_shape(), dim_params(value.type))
    )


class Folder:
    """Folds ops one at a time, in order; also used by decompose on the ops it inlines."""

    def __init__(self, opset: int, integers_only: bool):
        self.opset = opset
        self.integers_only = integers_only
        self.changed: set[SSAValue] = set()
        self.replaced: dict[OnnxOp, list[SSAValue]] = {}  # folded op -> its constants' values
        self.shape_arithmetic: set[OnnxOp] = set()  # folded whatever their element type

    def run(self, ops: list[OnnxOp]) -> None:
        if self.integers_only:
            self.shape_arithmetic = ops_feeding_shapes(ops)
        for op in ops:
            if op.parent is None or op.OP_TYPE == "Constant":
                continue
            if any(v in self.changed for v in op.operands) or any(map(_has_unknown_dims, op.results)):
                # A result left unknown may follow now that shape values folded (its operands' types
                # the same): a Reshape to Concat(Slice(Shape(x), starts), ...) once `starts` folds.
                before = [r.type for r in op.results]
                infer_op(op, op_opset(op, self.opset))
                self.changed.update(r for r, t in zip(op.results, before) if r.type != t)
            self.visit(op)

    def settle(self, op: OnnxOp) -> None:
        """Infer a new op's types, then fold it if it can be."""
        infer_op(op, op_opset(op, self.opset))
        self.visit(op)

    def visit(self, op: OnnxOp) -> None:
        if op.OP_TYPE in ("Shape", "Size"):
            value = self.shape_value(op)
            if value is not None:
                self.replace(op, [value])
            return
        if op.OP_TYPE in ASSOCIATIVE and not self.integers_only and self.reassociate(op):
            return
        inputs = onnx_inputs(op)
        if op.OP_TYPE in NOT_FOLDABLE or not all(v is None or is_constant(v) for v in inputs):
            return
        if not self.worth_folding(op):
            return
        values = self.evaluate(op, [_exact_array(v) for v in inputs])
        if values is not None:
            self.replace(op, values)

    def worth_folding(self, op: OnnxOp) -> bool:
        for result in op.results:
            shape = static_shape(result)
            if shape is None or math.prod(shape) > MAX_FOLD_ELEMENTS:
                return False
            dtype = result_dtype(result)
            integer = dtype is not None and dtype.kind in "iub"
            if dtype is None or (self.integers_only and not integer and op not in self.shape_arithmetic):
                return False
            if tensor_type_of(dtype, shape) != result.type:  # e.g. bfloat16, held as uint16
                return False
        return True  # bfloat16 inputs are computed on by value (`_exact_array`)

    def shape_value(self, op: OnnxOp) -> np.ndarray | None:
        shape = static_shape(op.input(0))
        if shape is None:
            return None
        if op.OP_TYPE == "Size":
            return np.array(math.prod(shape), dtype=np.int64)
        rank = len(shape)
        start, end = op.attr("start"), op.attr("end")
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = rank if end is None else min(max(end + rank if end < 0 else end, 0), rank)
        return np.array(shape[start:end], dtype=np.int64)

    def evaluate(self, op: OnnxOp, args: list[np.ndarray | None]) -> list[np.ndarray] | None:
        """The op's results computed from constant inputs, or None (left to run time) if that fails."""
        try:
            fast = _NUMPY_FOLDERS.get(op.OP_TYPE)
            if fast is not None and len(op.results) == 1:
                shape, dtype = static_shape(op.results[0]), result_dtype(op.results[0])
                outputs = [np.asarray(fast(op, args, shape, dtype)).astype(dtype, copy=False).reshape(shape)]
            else:
                node = node_proto(op)
                feeds = {name: value for name, value in zip(node.input, args) if name}
                evaluator = onnx.reference.ReferenceEvaluator(node, opsets={"": op_opset(op, self.opset)})
                outputs = evaluator.run([name for name in node.output if name], feeds)
        except Exception:  # noqa: BLE001  an op the reference cannot run, or invalid data (e.g. an index out of range)
            return None
        results = []
        for result, value in zip(op.results, outputs):
            array = np.asarray(value).astype(result_dtype(result), copy=False)
            if array.shape != static_shape(result):
                return None
            results.append(array)
        return results

    def reassociate(self, op: OnnxOp) -> bool:
        """`(x ∘ c1) ∘ c2 → x ∘ (c1 ∘ c2)` for an inner result used only here."""
        a, b = op.input(0), op.input(1)
        outer_const, inner = (b, a) if is_constant(b) else (a, b) if is_constant(a) else (None, None)
        if outer_const is None or is_constant(inner):
            return False
        producer = inner.owner
        if not (isinstance(producer, OnnxOp) and producer.OP_TYPE == op.OP_TYPE and single_use(inner)):
            return False
        x, c1 = producer.input(0), producer.input(1)
        if is_constant(x):
            x, c1 = c1, x
        if not is_constant(c1) or is_constant(x) or not isinstance(op.results[0].type, TensorType):
            return False
        combined_array = (
            constant_array(c1) + constant_array(outer_const)
            if op.OP_TYPE == "Add"
            else (constant_array(c1) * constant_array(outer_const))
        )
        combined = make_constant(op, combined_array.astype(constant_array(c1).dtype), f"{op.node_name}.folded")
        new = make_op(op.OP_TYPE, [x, combined.results[0]], name=op.node_name)
        insert_before(op, [combined, new])
        infer_new_ops([new], op_opset(op, self.opset))
        if new.results[0].type != op.results[0].type:
            erase_dead(new)
            return False
        replace_results(op, [new.results[0]])
        return True

    def replace(self, op: OnnxOp, arrays: list[np.ndarray]) -> None:
        constants = [
            make_constant(op, array, op.node_name if len(arrays) == 1 else f"{op.node_name}.{i}")
            for i, array in enumerate(arrays)
        ]
        insert_before(op, constants)
        for constant in constants:
            self.changed.add(constant.results[0])
        self.replaced[op] = [c.results[0] for c in constants]
        replace_results(op, [c.results[0] for c in constants])


def _exact_array(value: SSAValue | None) -> np.ndarray | None:
    """A constant operand as numpy computes on it (bfloat16 by value, see `numeric_value`)."""
    array = constant_array(value)
    owner = value.owner if array is not None else None
    attr = owner.attributes.get("value") if isinstance(owner, OnnxOp) else None
    return numeric_value(owner, attr) if isinstance(attr, WeightAttr | DenseIntOrFPElementsAttr) else array


def _constant_of_shape(op: OnnxOp, args, shape, dtype) -> np.ndarray:
    value = op.attr("value")
    return np.full(shape, 0 if value is None else np.asarray(value).reshape(-1)[0], dtype=dtype)


def _gather(op: OnnxOp, args, shape, dtype) -> np.ndarray:
    data, indices = args
    axis = op.attr("axis")
    return np.take(data, np.where(indices < 0, indices + data.shape[axis], indices), axis=axis)


# Cheap ops numpy computes exactly as ONNX defines them; the result's inferred
# shape and dtype (already known) finish the job, e.g. for the reshape family.
_NUMPY_FOLDERS = {
    "ConstantOfShape": _constant_of_shape,
    "Gather": _gather,
    "Add": lambda op, args, shape, dtype: args[0] + args[1],
    "Sub": lambda op, args, shape, dtype: args[0] - args[1],
    "Mul": lambda op, args, shape, dtype: args[0] * args[1],
    "Concat": lambda op, args, shape, dtype: np.concatenate(args, axis=op.attr("axis")),
    "Cast": lambda op, args, shape, dtype: cast_to(args[0], op.attr("to"), op.attr("saturate"), op.attr("round_mode")),
    "Reshape": lambda op, args, shape, dtype: args[0],
    "Flatten": lambda op, args, shape, dtype: args[0],
    "Squeeze": lambda op, args, shape, dtype: args[0],
    "Unsqueeze": lambda op, args, shape, dtype: args[0],
    "Identity": lambda op, args, shape, dtype: args[0],
}
