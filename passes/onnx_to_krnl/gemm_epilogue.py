"""The element-wise ops after a GEMM-lowered op that its kernel's store computes (krnl.matmul's
epilogue), so that their results never make a pass over memory of their own.

After the product (and a folded BatchNormalization or a residual Add, see matmul_kernel.py),
along a chain of single uses:
1. an activation: HardSwish; x * HardSigmoid(x) with HardSwish's constants (its form before
   opset 14); x * Sigmoid(x) (SiLU, as torch exports it). These are MobileNetV3's and
   EfficientNet's activations after each 1x1 conv: 0.69 ms of a 4.6 ms MobileNetV3-style
   model as passes of their own, none in onnxruntime's (its NCHWc convs fuse them).
2. a Relu or a Clip with constant bounds: the clamp.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

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


def _activation(value: SSAValue) -> tuple[MatmulActivation, list[OnnxOp]] | None:
    """The activation of `value` (see the module docstring) and its ops, the last one's result
    being the activation's."""
    users = _users(value)
    if users is None or len(users) not in (1, 2):
        return None
    if len(users) == 1:
        (user,) = users
        return (MatmulActivation.HARD_SWISH, [user]) if user.OP_TYPE == "HardSwish" else None
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
