"""fold-affine: per-channel affine steps folded into the op before them.

Exporters (Caffe2's inception_v2 and densenet121) write a scale and a shift per
channel as `Mul(x, m[C,1,1])`, `Add(x, a[C,1,1])` after a Conv or a
BatchNormalization; most networks put a BatchNormalization after a Conv, and
ArcFace-style ones a BatchNorm1d after their last Gemm. Each is a full pass over
memory, and it stands between the Conv and the Relu its GEMM epilogue could
clamp. A chain of such steps (Mul, Add or Sub by a constant, or an inference
BatchNormalization with constant parameters: `batch_norm_affine`), each the only
user of the value before it (so no intermediate is lost and none is a graph
output), computes `x·m + a`; composed in float64 and cast back, it is rewritten:

- after a Conv with constant W (and B): `W' = W·m[c]`, `B' = B·m + a`;
- after a Gemm with constant B (and C), its output [M, N] having its channels
  on axis 1: `B' = B·m[n]`, `C' = beta·C·m + a` (beta becomes 1); after a 2-D
  MatMul with constant B, likewise: a MatMul `A·B'`, or when there is a shift
  the Gemm `A·B' + a` (what fuse-gemm makes of MatMul + Add);
- after an inference BatchNormalization with constant parameters, when not
  itself folded into an op before it: `scale' = scale·m`, `bias' = bias·m + a`
  (its mean and variance stay);
- otherwise, when it has more ops than needed: one Mul and one Add (either
  dropped when it is the identity, both when the whole chain is).

A step's constant must broadcast over the channel axis (1) only: shape
[C,1,1], [1,C,1,1], a scalar... and never widen its input. Only float16, float32
and float64 are folded, and only when the new constants are finite.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.helpers.affine import batch_norm_affine
from onnxc.passes.helpers.graph import (
    constant_array,
    infer_new_ops,
    insert_before,
    make_constant,
    make_op,
    python_attribute,
    replace_results,
    result_dtype,
    rewrite_ops,
    single_use,
    static_shape,
)

FOLDABLE_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class FoldAffinePass(ModulePass):
    name = "fold-affine"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrites = {op_type: merge_chain for op_type in STEP_OPS}
        rewrites.update(
            Conv=fold_into_conv, Gemm=fold_into_gemm, MatMul=fold_into_gemm, BatchNormalization=fold_into_batch_norm
        )
        rewrite_ops(op, rewrites)


STEP_OPS = ("Mul", "Add", "Sub")
"""Binary steps (a BatchNormalization is a step too, but only its own rewrite starts at one)."""


@dataclass
class Chain:
    """Ops computing `source·scale + shift` per channel (float64 vectors over axis 1)."""

    source: SSAValue
    ops: list[OnnxOp]
    scale: np.ndarray
    shift: np.ndarray

    @staticmethod
    def empty(source: SSAValue) -> Chain:
        shape = static_shape(source) or ()
        channels = shape[1] if len(shape) >= 2 else 0  # such a chain stays empty: steps need a channel axis
        return Chain(source, [], np.ones(channels), np.zeros(channels))

    def append(self, op: OnnxOp, scale: np.ndarray, shift: np.ndarray) -> None:
        self.ops.append(op)
        self.scale, self.shift = self.scale * scale, self.shift * scale + shift

    def grow(self) -> Chain:
        """Append the steps that follow, each the only user of the value before it."""
        value = self.ops[-1].results[0] if self.ops else self.source
        while single_use(value):
            user = next(iter(value.uses)).operation
            step = affine_step(user, value)
            if step is None:
                break
            self.append(user, *step)
            value = user.results[0]
        return self


def channel_vector(constant: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """`constant` as a float64 value per channel of a tensor of `shape`, if it
    broadcasts onto it over the channel axis only."""
    if len(shape) < 2 or constant.ndim > len(shape) or not np.all(np.isfinite(constant)):
        return None
    padded = constant.reshape((1,) * (len(shape) - constant.ndim) + constant.shape)
    if any(d != 1 for axis, d in enumerate(padded.shape) if axis != 1) or padded.shape[1] not in (1, shape[1]):
        return None
    return np.broadcast_to(padded.reshape(-1).astype(np.float64), (shape[1],))


def affine_step(op: Operation, x: SSAValue) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, shift) per channel if `op` is `x·c`, `x + c`, `x − c` or `c − x` with
    a per-channel constant c, or an inference BatchNormalization of x with constant
    parameters, leaving x's shape and type as they are."""
    if not isinstance(op, OnnxOp) or op.OP_TYPE not in (*STEP_OPS, "BatchNormalization"):
        return None
    position = [index for index, value in enumerate(op.operands) if value is x]
    shape = static_shape(x)
    if len(position) != 1 or shape is None or op.results[0].type != x.type or result_dtype(x) not in FOLDABLE_DTYPES:
        return None
    if op.OP_TYPE == "BatchNormalization":
        affine = batch_norm_affine(op) if position == [0] and len(shape) >= 2 else None
        return affine if affine is not None and affine[0].shape == shape[1:2] else None
    if len(op.operands) != 2:
        return None
    constant = constant_array(op.operands[1 - position[0]])
    if constant is None or constant.dtype != result_dtype(x):
        return None
    vector = channel_vector(constant, shape)
    if vector is None:
        return None
    ones, zeros = np.ones(shape[1]), np.zeros(shape[1])
    if op.OP_TYPE == "Mul":
        return vector, zeros
    if op.OP_TYPE == "Add":
        return ones, vector
    return (ones, -vector) if position[0] == 0 else (-ones, vector)


def fold_into_conv(conv: OnnxOp, opset: int) -> None:
    chain = Chain.empty(conv.results[0]).grow()
    weight = constant_array(conv.input(1))
    if not chain.ops or weight is None or weight.dtype not in FOLDABLE_DTYPES or weight.shape[:1] != chain.scale.shape:
        return
    bias = constant_array(conv.input(2)) if conv.input(2) is not None else np.zeros_like(chain.scale, weight.dtype)
    if bias is None or bias.shape != chain.scale.shape:
        return
    channel_scale = chain.scale.reshape(-1, *[1] * (weight.ndim - 1))
    rebuild(
        conv,
        chain,
        {1: ("weight", scaled(weight, channel_scale)), 2: ("bias", scaled(bias, chain.scale, chain.shift))},
        opset,
    )


def fold_into_gemm(op: OnnxOp, opset: int) -> None:
    """The chain after a Gemm, or a MatMul of two matrices, with a constant B (and C)."""
    chain = Chain.empty(op.results[0]).grow()
    weight = constant_array(op.input(1))
    if not chain.ops or weight is None or weight.dtype not in FOLDABLE_DTYPES or weight.ndim != 2:
        return
    if len(static_shape(op.results[0])) != 2 or len(static_shape(op.input(0)) or ()) != 2:
        return
    columns = chain.scale.reshape(-1, 1) if op.OP_TYPE == "Gemm" and op.attr("transB") else chain.scale
    replaced = {1: ("weight", scaled(weight, columns))}
    attributes = dict(op.attributes)
    c = op.input(2) if op.OP_TYPE == "Gemm" else None
    if c is not None or np.any(chain.shift):
        c_value = np.zeros(chain.shift.shape, weight.dtype) if c is None else constant_array(c)
        if c_value is None:
            return
        replaced[2] = ("bias", scaled(c_value, chain.scale * (1.0 if c is None else op.attr("beta")), chain.shift))
        if op.OP_TYPE == "Gemm":
            attributes["beta"] = python_attribute(1.0)
    rebuild(op, chain, replaced, opset, "Gemm" if 2 in replaced else op.OP_TYPE, attributes)


def fold_into_batch_norm(norm: OnnxOp, opset: int) -> None:
    chain = Chain.empty(norm.results[0]).grow()
    if not chain.ops or affine_step(norm, norm.input(0)) is None:
        return
    scale, bias = constant_array(norm.input(1)), constant_array(norm.input(2))
    rebuild(
        norm,
        chain,
        {1: ("scale", scaled(scale, chain.scale)), 2: ("bias", scaled(bias, chain.scale, chain.shift))},
        opset,
    )


def merge_chain(op: OnnxOp, opset: int) -> None:
    """Replace the chain starting at `op` by at most one Mul and one Add if that is fewer ops."""
    for source in op.operands:
        step = affine_step(op, source)
        if step is None:
            continue
        chain = Chain.empty(source)
        chain.append(op, *step)
        chain.grow()
        needed = [(kind, vector) for kind, vector, neutral in (("Mul", chain.scale, 1), ("Add", chain.shift, 0))
                  if np.any(vector != neutral)]  # fmt: skip
        if len(needed) >= len(chain.ops):
            return
        last, value, new_ops = chain.ops[-1], source, []
        for kind, vector in needed:
            uniform = np.all(vector == vector[0])
            shape = () if uniform else (-1, *[1] * (len(static_shape(source)) - 2))
            array = (vector[:1] if uniform else vector).reshape(shape).astype(result_dtype(source))
            constant = make_constant(op, array, f"{last.node_name}.{kind.lower()}_affine")
            new_ops += [constant, make_op(kind, [value, constant.results[0]], {}, last.node_name)]
            value = new_ops[-1].results[0]
        insert_before(last, new_ops)
        infer_new_ops(new_ops, opset)  # gives the new ops new (typed) results
        replace_results(last, [new_ops[-1].results[0] if new_ops else source])
        return


def scaled(array: np.ndarray, scale: np.ndarray, shift: np.ndarray | float = 0.0) -> np.ndarray | None:
    """`array·scale + shift` computed in float64, in array's dtype; None if not finite there."""
    with np.errstate(over="ignore"):
        result = (array.astype(np.float64) * scale + shift).astype(array.dtype)
    return result if np.all(np.isfinite(result)) else None


def rebuild(
    op: OnnxOp,
    chain: Chain,
    replaced: dict[int, tuple[str, np.ndarray | None]],
    opset: int,
    op_type: str | None = None,
    attributes: dict | None = None,
) -> None:
    """A copy of `op` (its attributes unless given; of `op_type` if given) with inputs
    replaced by new constants {position: (name, value)}, in place of the chain's end;
    nothing if a value is None."""
    if any(array is None for _, array in replaced.values()):
        return
    inputs = onnx_inputs(op)
    inputs += [None] * (max(replaced) + 1 - len(inputs))
    constants = []
    for position, (name, array) in replaced.items():
        constants.append(make_constant(op, array, f"{op.node_name}.{name}_affine"))
        inputs[position] = constants[-1].results[0]
    new = make_op(
        op_type or op.OP_TYPE, inputs, dict(op.attributes) if attributes is None else attributes, op.node_name
    )
    insert_before(chain.ops[-1], [*constants, new])
    infer_new_ops([new], opset)
    replace_results(chain.ops[-1], [new.results[0]])
