"""Is a model separable along a symbolic batch dim?

A model whose only symbolic dim is a leading batch dim `N`, and whose every op
computes each sample from that sample alone, gives for a batch of N what N runs
of the model at batch 1 give, one sample each. The compiler then specializes
the graph for batch 1 (every other dim static, so every kernel keeps its
static-shape code) and the entry point loops over the samples of whatever
batch it is given: one library serves every batch size.

`separable_batch_symbol` decides it conservatively on the shape-inferred onnx
function with symbolic dims: every value carrying N carries it as dim 0 only;
an op reading such a value writes such values (it may not reduce, concatenate,
transpose, slice, pad or normalize along dim 0, nor reshape N into another
dim); values computed from N as data (`Shape(x)` and its arithmetic) may only
end in the shape operand of Reshape/Expand/ConstantOfShape/Tile whose result
again has N as dim 0. Anything else — sub-graphs, random ops, training-mode
BatchNormalization, ops unknown to these rules — answers None, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import SSAValue

from onnxc.dialects.microsoft import TOKENIZE_ATTR
from onnxc.dialects.onnx import OnnxOp, onnx_inputs, onnx_outputs
from onnxc.dialects.types import dim_params, is_string
from onnxc.passes.helpers.symbolic_values import symbolic_value

SHAPE_ARITHMETIC = frozenset(
    {"Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Cast", "Add", "Sub", "Mul", "Div", "Identity"}
    | {"Max", "Min", "Reshape", "Flatten"}
)
"""Ops that may compute on values derived from N (their results stay derived from N)."""

SHAPE_CONSUMERS = {"Reshape": 1, "Expand": 1, "ConstantOfShape": 0, "Tile": 1}
"""Op -> the operand that may be a shape derived from N (the result must then carry N as dim 0)."""

MIXING_OPS = frozenset(
    {"Einsum", "NonZero", "Unique", "Compress", "NonMaxSuppression", "Range"}
    | {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
    | {"If", "Loop", "Scan", "CumSum", "CumProd", "ReverseSequence", "SequenceInsert", "SplitToSequence"}
    | {"RNN", "LSTM", "GRU", "Pad", "MaxUnpool", "RoiAlign", "StringNormalizer"}
)
"""Ops whose samples can interact, or whose batch semantics these rules do not check
(BatchNormalization mixes samples only in training mode, checked apart)."""

ALL_AXES_BY_DEFAULT = frozenset(
    {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2"}
    | {"ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Slice"}
)
"""Ops that act on every axis when none are given."""


@dataclass(frozen=True)
class Separability:
    symbol: str | None
    reason: str = ""


def separable_batch_symbol(function: func.FuncOp) -> Separability:
    """The batch symbol the model is separable along, or None and why not."""
    inputs = list(function.body.block.args)
    symbols = {p for arg in inputs if isinstance(arg.type, TensorType) for p in dim_params(arg.type) if p}
    if len(symbols) != 1:
        return Separability(None, f"the inputs have {len(symbols)} symbolic dims {sorted(symbols)}, not one batch dim")
    (symbol,) = symbols
    checker = _Checker(symbol)
    for arg in inputs:
        if not checker.batched(arg) and checker.mentions(arg):
            return Separability(None, f"symbol {symbol} is not the leading dim of every input carrying it")
    for op in function.body.block.ops:
        if isinstance(op, func.ReturnOp):
            if not all(checker.batched(v) for v in op.arguments):
                return Separability(None, f"an output does not have {symbol} as its leading dim")
            if any(is_string(v.type.get_element_type()) for v in op.arguments):
                return Separability(None, "a string output is allocated by the library, which a batch loop does not do")
            continue
        reason = checker.check(op) if isinstance(op, OnnxOp) else f"op {op.name} is not an onnx op"
        if reason:
            name = op.node_name if isinstance(op, OnnxOp) else op.name
            return Separability(None, f"node '{name}' ({getattr(op, 'OP_TYPE', op.name)}): {reason}")
    return Separability(symbol)


class _Checker:
    def __init__(self, symbol: str):
        self.symbol = symbol
        self.derived: set[SSAValue] = set()
        """Values whose contents (not shape) depend on the batch size."""
        self.memo: dict = {}

    def mentions(self, value: SSAValue) -> bool:
        return isinstance(value.type, TensorType) and self.symbol in dim_params(value.type)

    def batched(self, value: SSAValue) -> bool:
        """Whether the value has N as dim 0 and every other dim static."""
        if not isinstance(value.type, TensorType):
            return False
        shape, params = value.type.get_shape(), dim_params(value.type)
        return len(shape) > 0 and params[0] == self.symbol and all(d != DYNAMIC_INDEX for d in shape[1:])

    def check(self, op: OnnxOp) -> str:
        operands = [v for v in onnx_inputs(op) if v is not None]
        results = [v for v in onnx_outputs(op) if v is not None]
        for value in [*operands, *results]:
            if not isinstance(value.type, TensorType):
                return "a value has no ranked type"
            if DYNAMIC_INDEX in value.type.get_shape() and not self.batched(value):
                return f"a value of type {value.type} has {self.symbol} elsewhere than as its leading dim"
        batched_in = [v for v in operands if self.batched(v)]
        derived_in = [k for k, v in enumerate(onnx_inputs(op)) if v is not None and v in self.derived]
        if op.regions:
            return "it has sub-graphs"
        if op.OP_TYPE in ("Shape", "Size") and batched_in:
            self.derived.update(results)
            return ""
        if derived_in:
            consumer = SHAPE_CONSUMERS.get(op.OP_TYPE)
            if op.OP_TYPE in SHAPE_ARITHMETIC and not batched_in and not any(self.batched(r) for r in results):
                self.derived.update(results)
                return ""
            if consumer is None or derived_in != [consumer] or not all(self.batched(r) for r in results):
                return "it computes with the batch size as data"
        if not batched_in:
            return ""
        if op.OP_TYPE in MIXING_OPS:
            return "its samples may interact"
        tokenize = op.attributes.get(TOKENIZE_ATTR)
        if tokenize is not None and tokenize.data["padding_counts"].value.data:
            return "its padding tokens are counted, and the widest sample decides how many"
        if op.OP_TYPE == "BatchNormalization" and (
            ("training_mode" in op.ATTR_TYPES and op.attr("training_mode")) or len(results) > 1
        ):
            return "training-mode statistics are taken over the batch"
        if not all(self.batched(r) for r in results):
            return f"a result does not keep {self.symbol} as its leading dim"
        return self.axis_reason(op, batched_in)

    def axis_reason(self, op: OnnxOp, batched_in: list[SSAValue]) -> str:
        rank = batched_in[0].type.get_num_dims()
        first = op.input(0)
        if "axis" in op.ATTR_TYPES and op.OP_TYPE != "Flatten" and first is not None and self.batched(first):
            axis = op.attr("axis")
            if isinstance(axis, int) and axis % rank == 0:
                return "it works along the batch axis"
        axes = op.attr("axes") if "axes" in op.ATTR_TYPES else None
        if axes is None and op.OP_TYPE in ALL_AXES_BY_DEFAULT:
            axes = self.axes_operand(op)
            if axes is None:
                return "its axes are not known to leave the batch axis alone"
        if axes is not None and any(int(a) % rank == 0 for a in axes):
            return "it works along the batch axis"
        if op.OP_TYPE == "Transpose":
            perm = op.attr("perm")
            if perm is None or perm[0] != 0:
                return "it moves the batch axis"
        if op.OP_TYPE in ("MatMul", "MatMulInteger") and (
            rank < 2 or _rank(op.input(1)) < 3 and self.batched(op.input(1))
        ):
            return "it reduces over the batch axis"
        if op.OP_TYPE == "Gemm" and (op.attr("transA") or self.batched(op.input(1))):
            return "it reduces over the batch axis"
        return ""

    def axes_operand(self, op: OnnxOp) -> list[int] | None:
        """Axes given as an operand (Reduce* from opset 18, Slice): known values, else None.
        Absent axes mean all axes, and so does an empty list unless noop_with_empty_axes."""
        index = 3 if op.OP_TYPE == "Slice" else 1
        inputs = onnx_inputs(op)
        value = inputs[index] if len(inputs) > index else None
        if value is None:
            return None
        known = symbolic_value(value, self.memo)
        if known is None or any(d.constant is None for d in known.reshape(-1)):
            return None
        axes = [int(d.constant) for d in np.asarray(known).reshape(-1)]
        return axes if axes else None


def _rank(value: SSAValue | None) -> int:
    return value.type.get_num_dims() if value is not None and isinstance(value.type, TensorType) else 0
