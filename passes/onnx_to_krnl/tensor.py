"""Data movement: pass-through, reshapes, Transpose, Concat, Split, Tile, Expand,
DepthToSpace/SpaceToDepth, Trilu/EyeLike, Compress, and values known at compile
time (constants, Shape, Size, Range)."""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, TensorType, i64
from xdsl.ir import SSAValue

from onnxc.dialects.krnl import GlobalOp, ViewOp
from onnxc.dialects.onnx import OnnxOp, WeightAttr, onnx_inputs, tensor_value
from onnxc.dialects.types import is_float, is_low_precision, is_string
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import element_count, reshaped_view
from onnxc.passes.onnx_to_krnl.common import (
    PASS_THROUGH,
    GraphLowering,
    Operand,
    broadcast,
    constant_array,
    constant_buffer,
    constant_result,
    copy_reshaped,
    elementwise,
    fill,
    has_static_shape,
    lowers,
    memref_type_of,
    normalized_axis,
    shape_of,
    strided_copy,
)
from onnxc.passes.onnx_to_krnl.selection import lower_compress_at_run_time
from onnxc.passes.onnx_to_krnl.string_results import lower_string_constant
from onnxc.passes.shape_inference import range_values

# ------------------------------------------------------------------ data movement ops


@lowers(*PASS_THROUGH, run_time_dims=True)
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


@lowers("Reshape", "Flatten", "Squeeze", "Unsqueeze", run_time_dims=True)
def lower_reshape(g: GraphLowering, op: OnnxOp) -> None:
    """The input's elements in row-major order, in the result type that shape inference
    computed: a view of the input's buffer (buffers are never overwritten, and a buffer
    lives as long as its views), or a copy where the result has a buffer of its own to
    write (a graph output, a slice of a Concat's output) or the shapes are not static.
    With run-time dims the view's dims are the result type's symbolic dims (the
    shape input, computed from the same dims, is not read)."""
    src, value = g.input(op, 0), op.results[0]
    result_type = value.type
    if not (has_static_shape(value) and has_static_shape(op.input(0))):
        if value in g.destinations or is_low_precision(result_type.get_element_type()):
            copy_reshaped(g.top, src, g.result(op))
        else:
            g.alias(value, reshaped_view(g.top, src, g.tensor_shape(op, value)))
        return
    if pymath.prod(shape_of(src)) != pymath.prod(result_type.get_shape()):
        raise g.shape_error(op, f"cannot reshape {list(shape_of(src))} to {list(result_type.get_shape())}")
    element = result_type.get_element_type()
    own_buffer = value in g.destinations or value in g.placements
    static = shape_of(src) == tuple(op.input(0).type.get_shape()) and has_static_shape(value)
    if own_buffer or not static or is_low_precision(element):
        copy_reshaped(g.top, src, g.result(op))
        return
    g.alias(value, g.top.insert(ViewOp(src, 0, memref_type_of(value, op))).result)


@lowers("Transpose", run_time_dims=True)
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


@lowers("Concat", run_time_dims=True)
def lower_concat(g: GraphLowering, op: OnnxOp) -> None:
    """One copy nest per input into its slice of the output along `axis`, except
    for inputs already computed there (a `krnl.view` of that slice, see concat_placement.py)."""
    out = g.result(op)
    shape = shape_of(out)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    offset: Bound = 0
    for value, src in zip((v for v in onnx_inputs(op) if v is not None), g.inputs(op)):
        placement = g.placements.get(value)
        placed = placement is not None and placement.concat is op.results[0] and placement.start == offset
        if not (placed and _is_view_of(src, out)):
            ivs, body = g.top.loop_nest(shape_of(src))
            dst_index = [body.add(iv, offset) if d == axis else iv for d, iv in enumerate(ivs)]
            body.store(body.load(src, ivs), out, dst_index)
        offset = g.top.add(offset, shape_of(src)[axis])
    if isinstance(offset, int) and isinstance(shape[axis], int) and offset != shape[axis]:
        raise g.shape_error(op, f"inputs add up to {offset} along axis {axis}, output has {shape[axis]}")


def _is_view_of(buffer: SSAValue, base: SSAValue) -> bool:
    """Whether `buffer` is a view of `base` (the one its placement made: concat_placement.py)."""
    view = buffer.owner
    return isinstance(view, ViewOp) and view.base is base


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
    if is_string(tensor_type.get_element_type()):
        lower_string_constant(g, op, tensor_value(op, value))
        return
    g.alias(op.results[0], g.top.insert(GlobalOp(value, result_type)).result)


@lowers("ConstantOfShape", run_time_dims=True)
def lower_constant_of_shape(g: GraphLowering, op: OnnxOp) -> None:
    element = g.element_type(op, op.results[0], bools=True)
    value = op.attr("value")
    scalar = 0 if value is None else np.asarray(value).reshape(-1)[0].item()
    fill(g.top, g.result(op), g.top.constant(scalar, element))


@lowers("Split", run_time_dims=True)
def lower_split(g: GraphLowering, op: OnnxOp) -> None:
    """Each output a window of the input along `axis`. The part sizes (from the
    `split` input, the older attribute, or `num_outputs`) are in the result types
    shape inference computed."""
    src = g.input(op, 0)
    shape = shape_of(src)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    offset: Bound = 0
    for index in range(len(op.results)):
        out = g.result(op, index)
        strided_copy(g.top, src, out, [offset if d == axis else 0 for d in range(len(shape))], [1] * len(shape))
        offset = g.top.add(offset, shape_of(out)[axis])
    if isinstance(offset, int) and isinstance(shape[axis], int) and offset != shape[axis]:
        raise g.shape_error(op, f"parts add up to {offset} along axis {axis}, the input has {shape[axis]}")


@lowers("Shape", run_time_dims=True)
def lower_shape(g: GraphLowering, op: OnnxOp) -> None:
    """The input's shape (dims start:end, clamped as a Python slice): a constant where
    static, else stored at run time from the dims' index values."""
    shape = shape_of(g.input(op, 0))[op.attr("start") : op.attr("end")]
    if all(isinstance(d, int) for d in shape):
        constant_result(g, op, np.array(shape, np.int64))
        return
    out = g.result(op)
    for position, dim in enumerate(shape):
        g.top.store(g.top.from_index(dim, i64), out, [position])


@lowers("Size", run_time_dims=True)
def lower_size(g: GraphLowering, op: OnnxOp) -> None:
    """The element count: a constant, or computed at run time from dims known then only."""
    count = element_count(g.top, shape_of(g.input(op, 0)))
    if isinstance(count, int):
        constant_result(g, op, np.array(count, np.int64))
        return
    g.top.store(g.top.from_index(count, i64), g.result(op), [])


@lowers("Range", run_time_dims=True)
def lower_range(g: GraphLowering, op: OnnxOp) -> None:
    """With start, limit and delta known at compile time the sequence is a constant
    (computed as the spec does: start + i * delta, in the stash type for 16-bit
    floats); with a length of symbolic dims (arange(seq)), it is computed at run
    time, its length the result type's."""
    operands = [constant_array(op.input(k)) for k in range(3)]
    if all(v is not None for v in operands):
        constant_result(g, op, range_values(op, *operands, op.results[0].type.get_element_type()))
        return
    if has_static_shape(op.results[0]):
        raise g.unsupported(op, "Range with inputs that are not constants and a length not known from dims")
    element = g.element_type(op, op.results[0])
    if is_float(element) and element.bitwidth == 16:
        raise g.unsupported(op, f"Range of {element} with inputs known at run time only")
    start, delta = (g.top.load(g.input(op, k), []) for k in (0, 2))
    out = g.result(op)
    (iv,), body = g.top.loop_nest(shape_of(out))
    step = body.index_to_float(iv, element) if is_float(element) else body.from_index(iv, element)
    body.store(body.add(start, body.mul(step, delta)), out, [iv])


@lowers("Expand", run_time_dims=True)
def lower_expand(g: GraphLowering, op: OnnxOp) -> None:
    """numpy broadcasting of the input to the result shape."""
    out = g.result(op)
    elementwise(g.top, out, [broadcast(g, op, g.input(op, 0), shape_of(out))], lambda b, xs: xs[0])


@lowers("Tile", run_time_dims=True)
def lower_tile(g: GraphLowering, op: OnnxOp) -> None:
    """out[i...] = in[i % dim ...] (an empty dim has an empty output: no remainder by 0)."""
    src, out = g.input(op, 0), g.result(op)
    ivs, body = g.top.loop_nest(shape_of(out))
    index = [
        iv if size == out_size else body.rem(iv, size) for iv, size, out_size in zip(ivs, shape_of(src), shape_of(out))
    ]
    body.store(body.load(src, index), out, ivs)


def _diagonal_offset(b: KernelBuilder, ivs: Sequence[SSAValue]) -> Bound:
    """column - row of the last two dims of a nest."""
    return b.sub(ivs[-1], ivs[-2])


@lowers("Trilu", run_time_dims=True)
def lower_trilu(g: GraphLowering, op: OnnxOp) -> None:
    """Keep the elements on and above (upper) or below (lower) diagonal k of the
    last two dims, zero the others; k is an optional scalar input."""
    src, out = g.input(op, 0), g.result(op)
    k_buffer = g.input(op, 1)
    k: Bound = 0 if k_buffer is None else g.top.to_index(g.top.load(k_buffer, [0] * len(shape_of(k_buffer))))
    keep_predicate = "sge" if op.attr("upper") else "sle"
    zero = g.top.constant(0, out.type.get_element_type())
    ivs, b = g.top.loop_nest(shape_of(out))
    keep = b.compare_index(keep_predicate, b.index(_diagonal_offset(b, ivs)), k)
    b.store(b.select(keep, b.load(src, ivs), zero), out, ivs)


@lowers("EyeLike", run_time_dims=True)
def lower_eye_like(g: GraphLowering, op: OnnxOp) -> None:
    """Ones on diagonal k (column - row == k), zeros elsewhere, in the result's type."""
    out = g.result(op)
    element = out.type.get_element_type()
    one, zero = (g.top.constant(v, element) for v in (1, 0))
    ivs, b = g.top.loop_nest(shape_of(out))
    on_diagonal = b.compare_index("eq", b.index(_diagonal_offset(b, ivs)), op.attr("k"))
    b.store(b.select(on_diagonal, one, zero), out, ivs)


@lowers("DepthToSpace", "SpaceToDepth", run_time_dims=True)
def lower_depth_space(g: GraphLowering, op: OnnxOp) -> None:
    """Move blocks of b x b pixels between the channel dim and the spatial dims of
    NCHW. The channel of a pixel in a block (bh, bw) of channel c (of C) is
    (bh * b + bw) * C + c in DCR mode, c * b * b + bh * b + bw in CRD mode."""
    src, out = g.input(op, 0), g.result(op)
    block = op.attr("blocksize")
    crd = op.attr("mode") == "CRD"
    to_space = op.OP_TYPE == "DepthToSpace"
    space, depth = (out, src) if to_space else (src, out)
    channels = shape_of(space)[1]
    ivs, b = g.top.loop_nest(shape_of(out))
    n = ivs[0]
    if to_space:
        c, h, w = ivs[1:]
        bh, bw = b.rem(h, block), b.rem(w, block)
        space_index = (c, h, w)
        pixel = (b.div(h, block), b.div(w, block))
    else:
        channel, h, w = ivs[1:]
        c = b.div(channel, block * block) if crd else b.rem(channel, channels)
        offset = b.rem(channel, block * block) if crd else b.div(channel, channels)
        bh, bw = b.div(offset, block), b.rem(offset, block)
        space_index = (c, b.add(b.mul(h, block), bh), b.add(b.mul(w, block), bw))
        pixel = (h, w)
    block_offset = b.add(b.mul(bh, block), bw)
    if crd:
        depth_channel = b.add(b.mul(c, block * block), block_offset)
    else:
        depth_channel = b.add(b.mul(block_offset, channels), c)
    if to_space:
        b.store(b.load(depth, [n, depth_channel, *pixel]), out, ivs)
    else:
        b.store(b.load(space, [n, *space_index]), out, ivs)


@lowers("Compress", dynamic=True, run_time_dims=True)
def lower_compress(g: GraphLowering, op: OnnxOp) -> None:
    """With a constant condition, the kept positions are known: a gather of them
    along `axis` (or of the flattened input without one). Otherwise the result's
    shape depends on the condition (selection.py)."""
    condition = constant_array(op.input(1))
    if condition is None:
        lower_compress_at_run_time(g, op)
        return
    if not has_static_shape(op.input(0)):
        raise g.unsupported(op, f"Compress of {op.input(0).type} by a constant condition (pin the dims with --shape)")
    src, out = g.input(op, 0), g.result(op)
    axis = op.attr("axis")
    if axis is None:
        flat = g.top.alloc(MemRefType(src.type.get_element_type(), [pymath.prod(shape_of(src))]))
        copy_reshaped(g.top, src, flat)
        src, axis = flat, 0
    axis = normalized_axis(g, op, axis, len(shape_of(src)))
    kept = np.flatnonzero(condition.reshape(-1)[: shape_of(src)[axis]])
    if len(kept) != shape_of(out)[axis]:
        raise g.shape_error(op, f"{len(kept)} positions kept, the result has {shape_of(out)[axis]}")
    positions = constant_buffer(g.top, kept, i64)
    ivs, b = g.top.loop_nest(shape_of(out))
    src_index = list(ivs)
    src_index[axis] = b.to_index(b.load(positions, [ivs[axis]]))
    b.store(b.load(src, src_index), out, ivs)
