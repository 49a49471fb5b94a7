"""The ops after a GEMM-lowered op that its kernel computes (krnl.matmul's epilogue), so that
their results never make a pass over memory of their own: a conv's residual Add accumulated in
place (`residual_buffer`, rules in matmul_kernel.py), a MatMul's bias Add or a Gemm's vector C
as a bias per column, and in the store, along a chain of single uses:
1. an activation: HardSwish; x * HardSigmoid(x) with HardSwish's constants (its form before
   opset 14); x * Sigmoid(x) (SiLU, as torch exports it); Gelu, or its erf formula as torch
   exports nn.GELU (x * (1 + erf(x / sqrt 2)) * 0.5, or 0.5 * x first). These are MobileNetV3's
   and EfficientNet's activations after each 1x1 conv (0.69 ms of a 4.6 ms MobileNetV3-style
   model as passes of their own, none in onnxruntime's: its NCHWc convs fuse them) and a
   transformer MLP's after its first MatMul.
2. a Relu or a Clip with constant bounds: the clamp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import memref
from xdsl.ir import SSAValue

from onnxc.dialects.krnl import ViewOp
from onnxc.dialects.krnl_matmul import MatmulActivation
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array

UNCLAMPED = (float("-inf"), float("inf"))


@dataclass(frozen=True)
class StoreEpilogue:
    """What the kernel applies to each total (bias added) before storing it."""

    activation: MatmulActivation | None = None
    clip: tuple[float, float] = UNCLAMPED


def single_user(value: SSAValue) -> OnnxOp | None:
    """The op that is `value`'s only use, if it is an onnx op of the same block
    (not one of a run-time branch or loop body, which must not run here)."""
    users = _users(value)
    return users[0] if users is not None and len(users) == 1 else None


def _users(value: SSAValue) -> list[OnnxOp] | None:
    """The ops using `value`, once per use, if all are onnx ops of its block."""
    users = [use.operation for use in value.uses]
    if all(isinstance(user, OnnxOp) and user.parent is value.owner.parent for user in users):
        return users
    return None


def clip_bounds(g: GraphLowering, op: OnnxOp) -> tuple[float, float] | None:
    """The clamp of a Relu or a Clip with constant (or absent) bounds."""
    if op.OP_TYPE == "Relu":
        return 0.0, float("inf")
    if op.OP_TYPE != "Clip":
        return None
    if g.version(op) < 11:
        return float(op.attr("min", float("-inf"))), float(op.attr("max", float("inf")))
    bounds = []
    for index, default in ((1, float("-inf")), (2, float("inf"))):
        value = op.input(index)
        if value is None:
            bounds.append(default)
            continue
        array = constant_array(value)
        if array is None or array.size != 1:
            return None
        bounds.append(float(array.reshape(-1)[0]))
    return bounds[0], bounds[1]


def _is_hard_swish_gate(op: OnnxOp) -> bool:
    """A HardSigmoid computing HardSwish's factor min(max(x / 6 + 1/2, 0), 1)."""
    alpha, beta = np.float32(op.attr("alpha", 0.2)), np.float32(op.attr("beta", 0.5))
    return op.OP_TYPE == "HardSigmoid" and alpha == np.float32(1 / 6) and beta == np.float32(0.5)


def _scalar(value: SSAValue) -> float | None:
    """The value of a constant of one element."""
    array = constant_array(value)
    return float(array.reshape(-1)[0]) if array is not None and array.size == 1 else None


def _product_with(op: OnnxOp | None, op_type: str, value: SSAValue, constant: float) -> bool:
    """Whether `op` is `op_type`(value, c) (either order for Mul/Add) with c = `constant`
    as a float32 rounds it."""
    if op is None or op.OP_TYPE != op_type or len(op.operands) != 2:
        return False
    pairs = [tuple(op.operands)] if op_type == "Div" else [tuple(op.operands), tuple(op.operands)[::-1]]
    return any(
        x is value and _scalar(c) is not None and np.float32(_scalar(c)) == np.float32(constant) for x, c in pairs
    )


def _multiplies(op: OnnxOp | None, a: SSAValue, b: SSAValue) -> bool:
    """Whether `op` is Mul(a, b) or Mul(b, a)."""
    return op is not None and op.OP_TYPE == "Mul" and {id(v) for v in op.operands} == {id(a), id(b)} and a is not b


def _gelu_of_erf(value: SSAValue, users: list[OnnxOp]) -> list[OnnxOp] | None:
    """The ops of x/2 * (1 + erf(x / sqrt 2)) as exporters write it, x = `value` used by `users`."""
    for scale, other in (users, users[::-1]):
        if not (_product_with(scale, "Div", value, np.sqrt(2)) or _product_with(scale, "Mul", value, 1 / np.sqrt(2))):
            continue
        erf = single_user(scale.results[0])
        if erf is None or erf.OP_TYPE != "Erf":
            continue
        add = single_user(erf.results[0])
        if not _product_with(add, "Add", erf.results[0], 1.0):
            continue
        one_plus, final = add.results[0], single_user(other.results[0])
        if _product_with(other, "Mul", value, 0.5):  # (x * 0.5) * (1 + erf)
            product = final if _multiplies(final, other.results[0], one_plus) else None
        else:  # (x * (1 + erf)) * 0.5
            product = (
                other
                if _multiplies(other, value, one_plus) and _product_with(final, "Mul", other.results[0], 0.5)
                else None
            )
        if product is not None and single_user(one_plus) is product:
            return [scale, erf, add, other, final]
    return None


def _activation(value: SSAValue) -> tuple[MatmulActivation, list[OnnxOp]] | None:
    """The activation of `value` (see the module docstring) and its ops, the last one's result
    being the activation's."""
    users = _users(value)
    if users is None or len(users) not in (1, 2):
        return None
    if len(users) == 1:
        (user,) = users
        if user.OP_TYPE == "Gelu" and user.attr("approximate", "none") == "none":
            return MatmulActivation.GELU, [user]
        return (MatmulActivation.HARD_SWISH, [user]) if user.OP_TYPE == "HardSwish" else None
    gelu = _gelu_of_erf(value, users)
    if gelu is not None:
        return MatmulActivation.GELU, gelu
    for gate, product in (users, users[::-1]):
        if (
            gate.input(0) is value
            and product.OP_TYPE == "Mul"
            and {id(v) for v in product.operands} == {id(value), id(gate.results[0])}
            and single_user(gate.results[0]) is product
        ):
            if gate.OP_TYPE == "Sigmoid":
                return MatmulActivation.SILU, [gate, product]
            if _is_hard_swish_gate(gate):
                return MatmulActivation.HARD_SWISH, [gate, product]
    return None


@dataclass(frozen=True)
class GemmFusion:
    """What a GEMM-lowered op's kernel computes besides the product: a bias per column (a
    MatMul's bias Add, a Gemm's vector C), then the store's epilogue; `last` is the op whose
    result the kernel writes, `fused` the ops it computes (their lowerings skipped)."""

    bias: np.ndarray | None = None
    epilogue: StoreEpilogue = StoreEpilogue()
    last: OnnxOp | None = None
    fused: tuple[OnnxOp, ...] = ()


def claim_fusion(g: GraphLowering, op: OnnxOp, columns: int, bias: np.ndarray | None = None) -> GemmFusion | None:
    """The fusion of `op` (a MatMul or Gemm whose GEMM lowering is certain, of `columns` output
    columns; `bias` a Gemm's C as a bias per column) with the ops after it, those added to
    `g.fused`; None when there is nothing besides the product. A MatMul claims a following bias
    Add first."""
    last, fused = op, []
    if op.OP_TYPE == "MatMul":
        added = claim_column_bias(op, columns)
        if added is not None:
            bias, last, fused = added[0], added[1], [added[1]]
    epilogue, last, claimed = claim_epilogue(g, last)
    fused += claimed
    if not fused and bias is None:
        return None
    g.fused.update(fused)
    return GemmFusion(bias, epilogue, last, tuple(fused))


def bias_per_column(value: SSAValue | None, columns: int, rank: int) -> np.ndarray | None:
    """`value` as a bias per column: a constant float32 of `columns` values along its last dim,
    the others (at most rank - 1 of them) of size 1."""
    bias = constant_array(value) if value is not None else None
    if bias is None or bias.dtype != np.float32 or bias.ndim > rank or bias.shape[-1:] != (columns,):
        return None
    return bias.reshape(columns) if all(d == 1 for d in bias.shape[:-1]) else None


def claim_column_bias(last: OnnxOp, columns: int) -> tuple[np.ndarray, OnnxOp] | None:
    """A following Add of a bias per column (a MatMul's bias, [N]) that keeps `last`'s result
    type, as (the bias, the Add)."""
    value = last.results[0]
    add = single_user(value)
    if add is None or add.OP_TYPE != "Add" or add.results[0].type != value.type or len(add.operands) != 2:
        return None
    others = [v for v in add.operands if v is not value]
    bias = bias_per_column(others[0], columns, len(value.type.get_shape())) if others else None
    return (bias, add) if bias is not None else None


def claim_epilogue(g: GraphLowering, last: OnnxOp) -> tuple[StoreEpilogue, OnnxOp, list[OnnxOp]]:
    """The epilogue of the ops after `last` (a GEMM-lowered op or one fused into it already),
    the op whose result the kernel then stores, and the ops claimed (to add to `g.fused`)."""
    claimed: list[OnnxOp] = []
    activation = _activation(last.results[0])
    if activation is not None:
        claimed = activation[1]
        last = claimed[-1]
    clip = UNCLAMPED
    user = single_user(last.results[0])
    if user is not None and user.input(0) is last.results[0]:
        bounds = clip_bounds(g, user)
        if bounds is not None:
            clip, last, claimed = bounds, user, [*claimed, user]
    return StoreEpilogue(activation[0] if activation else None, clip), last, claimed


def _whole_views(buffer: SSAValue) -> list[SSAValue] | None:
    """`buffer` and the views of all of it (a Reshape of the value, a kernel reading it in
    another shape), recursively; None if a view is a part of it (a slice of a Concat's output,
    holding another value)."""
    found, pending = [], [buffer]
    while pending:
        current = pending.pop()
        found.append(current)
        count = int(np.prod(current.type.get_shape()))
        for use in current.uses:
            view = use.operation
            if not isinstance(view, ViewOp):
                continue
            shape = view.result.type.get_shape()
            if not view.starts_at_zero or (-1 not in shape and int(np.prod(shape)) != count):
                return None
            pending.append(view.result)
    return found


def residual_buffer(g: GraphLowering, conv: OnnxOp, add: OnnxOp, value: SSAValue) -> SSAValue | None:
    """The buffer of the other addend of `add` (an Add/Sum of `value` and r) if the
    kernel of `conv` may accumulate into it in place (see matmul_kernel.py's docstring)."""
    operands = list(add.operands)
    if add.OP_TYPE not in ("Add", "Sum") or len(operands) != 2 or operands.count(value) != 1:
        return None
    (other,) = [v for v in operands if v is not value]
    buffer = g.buffers.get(other)
    if (
        buffer is None
        or not isinstance(buffer.owner, memref.AllocOp)
        or other.type != value.type
        or add.results[0] in g.destinations
    ):
        return None
    aliases = _whole_views(buffer)
    if aliases is None or any(g.buffers.get(conv.input(0)) is a for a in aliases):
        return None  # it holds other values too; threads would write C while others still pack B from it
    block = conv.parent_block()
    position = block.get_operation_index(conv)
    for shared in [v for v, b in g.buffers.items() if any(b is a for a in aliases)]:  # values in r's buffer
        for use in shared.uses:
            user = use.operation
            if user is not add and (user.parent_block() is not block or block.get_operation_index(user) > position):
                return None
    return buffer
