"""expand-depthwise-tiles: an inverted residual's expanding 1x1 Conv and the depthwise Conv
reading it run in groups of channels, so that each group's expanded planes are still in cache
when the depthwise conv reads them.

MobileNets and EfficientNets widen their channels 4-6x with a 1x1 conv whose output, the
block's largest tensor, a depthwise conv then reads once: written to memory and read back.
Cut into G groups of channels — per group the 1x1 conv's rows of weights, the element-wise
activation between, the depthwise conv of those channels and the activation after it — the
group's expanded planes stay in L2 between the two convs; a Concat joins the groups' outputs
(written in place: onnx_to_krnl/concat_placement.py). One thread, against the whole block:
16 -> 96 channels at 112x112 (stride 2) 0.775 -> 0.649 ms, 24 -> 144 at 56x56 0.628 -> 0.513,
32 -> 192 at 28x28 0.241 -> 0.197, 64 -> 384 at 14x14 0.144 -> 0.135.

Groups hold a multiple of 8 channels (the depthwise lanes' blocks), at least MIN_GROUP_CHANNELS
(the 1x1 conv's GEMM keeps whole row tiles busy); of those, the fewest groups whose expanded
planes fit GROUP_BYTES, else as many as allowed. The activations are chains of element-wise
ops whose other operands are scalar constants (Clip, HardSwish, x * Sigmoid(x), ...). Batch
and channels must be static (a batch the library loops over, sample by sample, is 1 by then);
an image of run-time height and width is grouped as it would be at ASSUMED_IMAGE_SIDE (the
Concat then joins its groups at run-time offsets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.symbolic import Dim
from onnxc.dialects.types import dim_params
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
)

GROUP_BYTES = 256 << 10
"""A group's expanded planes should fit this: half of a 512 KB-2 MB L2, beside the depthwise
conv's own buffers (32 -> 192 channels at 28x28: 4 groups of 150 KB 0.197 ms, 2 of 300 KB 0.212)."""
MIN_GROUP_CHANNELS = 32
"""Fewer channels per group cost more in the 1x1 conv's GEMM than the cache saves (16 -> 96
channels at 112x112: 2 groups of 48 0.649 ms, 8 of 12 0.702)."""
ELEMENTWISE = frozenset({
    "Abs", "Add", "Clip", "Div", "Elu", "Erf", "Exp", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Max",
    "Min", "Mul", "Neg", "Pow", "Relu", "Selu", "Sigmoid", "Softplus", "Sub", "Tanh",
})  # fmt: skip
"""Ops an activation chain may hold: each element of the result from the same element of the
chain's values (other operands scalar constants)."""
ASSUMED_IMAGE_SIDE = 224
"""Planes of run-time size are grouped as if every symbol of their dims were this (a classifier's
input): a stage's planes are then as large, against the others, as at any size, so that early,
large ones split and late, small ones stay whole. (MobileNetV2 of free height and width at
224x224, one thread: 6.4 -> 5.3 ms; static sizes 4.4.)"""


@dataclass(frozen=True)
class ExpandDepthwiseTilesPass(ModulePass):
    name = "expand-depthwise-tiles"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_ops(op, {"Conv": split_in_groups})


def _is_scalar_constant(value: SSAValue | None) -> bool:
    array = constant_array(value)
    return array is not None and array.size == 1


def _chain_op(op: object, shape: Attribute, chain: set[SSAValue]) -> bool:
    """Whether `op` is element-wise over values of `chain` (all of type `shape`) and scalar constants."""
    if not isinstance(op, OnnxOp) or op.OP_TYPE not in ELEMENTWISE or len(op.results) != 1:
        return False
    inputs = [v for v in onnx_inputs(op) if v is not None]
    return (
        op.results[0].type == shape
        and any(v in chain for v in inputs)
        and all(v in chain or _is_scalar_constant(v) for v in inputs)
    )


def _activation_before(dw: OnnxOp, shape: Attribute) -> tuple[OnnxOp, list[OnnxOp]] | None:
    """The 1x1 Conv whose output reaches `dw` through element-wise ops only, and those ops
    (in block order); their results read by nothing else."""
    expand, chain, pending = None, [], [dw.input(0)]
    while pending:
        value = pending.pop()
        producer = value.owner
        if isinstance(producer, OnnxOp) and producer.OP_TYPE == "Conv":
            if expand not in (None, producer):
                return None
            expand = producer
            continue
        if producer in chain:
            continue
        inputs = [v for v in onnx_inputs(producer) if v is not None] if isinstance(producer, OnnxOp) else []
        if not isinstance(producer, OnnxOp) or producer.OP_TYPE not in ELEMENTWISE or not inputs:
            return None
        chain.append(producer)
        pending += [v for v in inputs if not _is_scalar_constant(v)]
    if expand is None:
        return None
    readers = {*chain, dw}
    members = {expand.results[0], *(op.results[0] for op in chain)}
    if any(use.operation not in readers for value in members for use in value.uses):
        return None
    if not all(_chain_op(op, shape, members) for op in chain):
        return None
    return expand, sorted(chain, key=_block_index)


def _activation_after(dw: OnnxOp, shape: Attribute) -> tuple[SSAValue, list[OnnxOp]]:
    """The element-wise ops reading `dw`'s output (and each other) whose one value read elsewhere
    is their last: that value and the ops (block order); else `dw`'s output and none."""
    values, chain, pending = {dw.results[0]}, [], [dw.results[0]]
    while pending:  # a user whose other chain operand comes later is found again through it
        for use in pending.pop().uses:
            user = use.operation
            if user not in chain and _chain_op(user, shape, values):
                chain.append(user)
                values.add(user.results[0])
                pending.append(user.results[0])
    read_elsewhere = [v for v in values if any(use.operation not in chain for use in v.uses)]
    if len(read_elsewhere) != 1 or not chain:
        return dw.results[0], []
    chain.sort(key=_block_index)
    return (read_elsewhere[0], chain) if chain[-1].results[0] == read_elsewhere[0] else (dw.results[0], [])


def _block_index(op: OnnxOp) -> int:
    return op.parent.get_operation_index(op)


def _pointwise(conv: OnnxOp, channels: int) -> bool:
    """A 1x1 Conv of constant weights (and bias), stride 1, no padding, to `channels` outputs."""
    weights, bias = constant_array(conv.input(1)), conv.input(2)
    return (
        weights is not None
        and weights.shape[0] == channels
        and weights.shape[2:] == (1, 1)
        and (bias is None or constant_array(bias) is not None)
        and (conv.attr("group") or 1) == 1
        and all(v == 1 for v in conv.attr("strides") or [1])
        and all(v == 0 for v in conv.attr("pads") or [0])
        and conv.attr("auto_pad") in (None, "NOTSET")
    )


def group_count(channels: int, plane_bytes: int) -> int:
    """Groups of channels (see the module's docstring): 1 leaves the pair whole."""
    counts = [
        g for g in range(1, channels + 1)
        if channels % g == 0 and (channels // g) % 8 == 0 and channels // g >= MIN_GROUP_CHANNELS
    ]  # fmt: skip
    if not counts:
        return 1
    return next((g for g in counts if channels // g * plane_bytes <= GROUP_BYTES), counts[-1])


def _plane_bytes(value: SSAValue) -> int | None:
    """Bytes of a float32 image's planes (batch x height x width x 4), symbols at ASSUMED_IMAGE_SIDE."""
    sizes = []
    for size, name in zip(value.type.get_shape()[2:], dim_params(value.type)[2:]):
        if size < 0:
            dim = Dim.parse(name) if name else None
            size = dim.substitute({s: Dim.const(ASSUMED_IMAGE_SIDE) for s in dim.symbols()}).constant if dim else None
            if size is None or size < 1:
                return None
        sizes.append(size)
    return value.type.get_shape()[0] * math.prod(sizes) * 4


def split_in_groups(dw: OnnxOp, opset: int) -> None:
    x_type, y_type = dw.input(0).type, dw.results[0].type
    if not (isinstance(x_type, TensorType) and isinstance(y_type, TensorType)):
        return
    shape = x_type.get_shape()
    weights, bias = constant_array(dw.input(1)), dw.input(2)
    if (
        len(shape) != 4
        or min(shape[:2]) < 1
        or not isinstance(x_type.get_element_type(), Float32Type)
        or weights is None
        or weights.shape[:2] != (shape[1], 1)
        or dw.attr("group") != shape[1]
        or (bias is not None and constant_array(bias) is None)
    ):
        return
    before = _activation_before(dw, x_type)
    if before is None or not _pointwise(before[0], shape[1]):
        return
    expand, pre = before
    channels, plane_bytes = shape[1], _plane_bytes(dw.input(0))
    groups = group_count(channels, plane_bytes) if plane_bytes is not None else 1
    if groups == 1:
        return
    sink, post = _activation_after(dw, y_type)
    last = post[-1] if post else dw
    per_group, new_ops, outputs = channels // groups, [], []
    arrays = {"expand": constant_array(expand.input(1)), "dw": weights}
    biases = {"expand": constant_array(expand.input(2)), "dw": constant_array(bias)}
    for g in range(groups):
        rows = slice(g * per_group, (g + 1) * per_group)
        name = f"{dw.node_name}/group{g}"

        def conv(original: OnnxOp, key: str, x: SSAValue, attributes: dict, rows=rows, name=name) -> OnnxOp:
            w = make_constant(original, arrays[key][rows], f"{name}/{key}_weights")
            b = make_constant(original, biases[key][rows], f"{name}/{key}_bias") if biases[key] is not None else None
            new_ops.extend(c for c in (w, b) if c is not None)
            made = make_op("Conv", [x, w.results[0], b.results[0] if b else None], attributes, f"{name}/{key}")
            new_ops.append(made)
            return made

        mapping = {expand.results[0]: conv(expand, "expand", expand.input(0), schema_attributes(expand)).results[0]}
        _clone(pre, mapping, name, new_ops, opset)
        dw_attributes = schema_attributes(dw) | {"group": python_attribute(per_group)}
        mapping[dw.results[0]] = conv(dw, "dw", mapping[dw.input(0)], dw_attributes).results[0]
        _clone(post, mapping, name, new_ops, opset)
        outputs.append(mapping[sink])
    joined = make_op("Concat", outputs, {"axis": python_attribute(1)}, f"{dw.node_name}/Concat")
    new_ops.append(joined)
    insert_before(last, new_ops)
    infer_new_ops(new_ops, opset)
    replace_results(last, [joined.results[0]])


def _clone(ops: list[OnnxOp], mapping: dict, name: str, new_ops: list, opset: int) -> None:
    """Copies of `ops` (in order) reading `mapping`'s values for the originals', added to it."""
    for op in ops:
        inputs = [mapping.get(v, v) if v is not None else None for v in onnx_inputs(op)]
        copy = make_op(op.OP_TYPE, inputs, schema_attributes(op), f"{name}/{op.node_name}", opset=opset)
        new_ops.append(copy)
        mapping[op.results[0]] = copy.results[0]
