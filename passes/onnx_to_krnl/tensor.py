"""Data movement: pass-through, reshapes, Transpose, Concat, constants."""

from __future__ import annotations

import math as pymath

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType

from onnxc.dialects.krnl import GlobalOp
from onnxc.dialects.onnx import OnnxOp, WeightAttr
from onnxc.passes.onnx_to_krnl.common import (
    PASS_THROUGH,
    GraphLowering,
    Operand,
    constant_array,
    copy_reshaped,
    elementwise,
    fill,
    lowers,
    memref_type_of,
    normalized_axis,
    shape_of,
)

# ------------------------------------------------------------------ data movement ops


@lowers(*PASS_THROUGH)
def lower_pass_through(g: GraphLowering, op: OnnxOp) -> None:
    """Identity, and Dropout in inference: the output is the input (mask: all true)."""
    if op.OP_TYPE == "Dropout":
        training = op.input(2)
        if training is not None:
            flag = constant_array(training)
            if flag is None or flag.any():
                raise g.unsupported(op, "Dropout in training mode (or a non-constant training_mode)")
        if len(op.results) > 1 and op.results[1].uses:
            mask_element = g.element_type(op, op.results[1], ints=False, bools=True)  # bool, or T before opset 10
            fill(g.top, g.result(op, 1), g.top.constant(1, mask_element))
    g.alias(op.results[0], g.input(op, 0))


@lowers("Reshape", "Flatten", "Squeeze", "Unsqueeze")
def lower_reshape(g: GraphLowering, op: OnnxOp) -> None:
    """A row-major copy to the result type that shape inference computed."""
    src, out = g.input(op, 0), g.result(op)
    if pymath.prod(shape_of(src)) != pymath.prod(shape_of(out)):
        raise g.shape_error(op, f"cannot reshape {list(shape_of(src))} to {list(shape_of(out))}")
    copy_reshaped(g.top, src, out)


@lowers("Transpose")
def lower_transpose(g: GraphLowering, op: OnnxOp) -> None:
    """A nest over the output reading the input at permuted indices."""
    src = g.input(op, 0)
    rank = len(shape_of(src))
    perm = op.attr("perm") or list(reversed(range(rank)))
    if sorted(perm) != list(range(rank)):
        raise g.shape_error(op, f"perm {perm} is not a permutation of {rank} dims")
    out = g.result(op)
    # Output dim d is input dim perm[d]: input dim p is indexed by output iv perm.index(p).
    elementwise(g.top, out, [Operand(src, tuple(perm.index(p) for p in range(rank)))], lambda b, xs: xs[0])


@lowers("Concat")
def lower_concat(g: GraphLowering, op: OnnxOp) -> None:
    """One copy nest per input, into its slice of the output along `axis`."""
    sources = g.inputs(op)
    out = g.result(op)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape_of(out)))
    offset = 0
    for src in sources:
        ivs, body = g.top.loop_nest(shape_of(src))
        dst_index = [body.add(iv, offset) if d == axis else iv for d, iv in enumerate(ivs)]
        body.store(body.load(src, ivs), out, dst_index)
        offset += shape_of(src)[axis]
    if offset != shape_of(out)[axis]:
        raise g.shape_error(op, f"inputs add up to {offset} along axis {axis}, output has {shape_of(out)[axis]}")


@lowers("Constant")
def lower_constant(g: GraphLowering, op: OnnxOp) -> None:
    """A krnl.global holding the weight handle (or inline dense value)."""
    result_type = memref_type_of(op.results[0], op, name="the constant")
    tensor_type = TensorType(result_type.get_element_type(), result_type.get_shape())
    value = op.attributes.get("value")
    if value is None:
        scalars = ("value_float", "value_floats", "value_int", "value_ints")
        name = next((n for n in scalars if n in op.attributes), None)
        if name is None:
            raise g.unsupported(op, f"Constant with attributes {sorted(op.attributes)}")
        data = np.asarray(op.attr(name)).reshape(-1).tolist()
        value = DenseIntOrFPElementsAttr.from_list(tensor_type, data)
    if not isinstance(value, WeightAttr | DenseIntOrFPElementsAttr):
        raise g.unsupported(op, f"Constant value {type(value).__name__}")
    if value.get_type() != tensor_type:
        raise g.shape_error(op, f"value of type {value.get_type()} for a result of type {tensor_type}")
    g.alias(op.results[0], g.top.insert(GlobalOp(value, result_type)).result)


@lowers("ConstantOfShape")
def lower_constant_of_shape(g: GraphLowering, op: OnnxOp) -> None:
    element = g.element_type(op, op.results[0], bools=True)
    value = op.attr("value")
    scalar = 0 if value is None else np.asarray(value).reshape(-1)[0].item()
    fill(g.top, g.result(op), g.top.constant(scalar, element))
