"""Windows of a tensor: Slice, Pad and CenterCropPad.

Their geometry (starts, pads, target shape) is bound at compile time, so each
output dim reads input position `iv * step + start` (Slice) or `iv - begin`
mapped back into the input by the pad mode (Pad, CenterCropPad); a Slice of
run-time dims computes its starts at run time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.symbolic_values import symbolic_value
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    constant_array,
    fill,
    lowers,
    normalized_axis,
    shape_of,
    strided_copy,
)


def _constant_operand(g: GraphLowering, op: OnnxOp, index: int, name: str) -> np.ndarray | None:
    """An optional operand that must be known at compile time, as an array."""
    value = op.input(index)
    if value is None:
        return None
    array = constant_array(value)
    if array is None:
        raise g.unsupported(op, f"{op.OP_TYPE} with a '{name}' input that is not a constant")
    return array


def _axes(g: GraphLowering, op: OnnxOp, index: int, rank: int, count: int) -> list[int]:
    """The `axes` operand (default: the first `count` dims), normalized."""
    axes = _constant_operand(g, op, index, "axes")
    axes = range(count) if axes is None else axes.reshape(-1).tolist()
    return [normalized_axis(g, op, int(a), rank) for a in axes]


@lowers("Slice", run_time_dims=True)
def lower_slice(g: GraphLowering, op: OnnxOp) -> None:
    """out[i] = in[start + i * step] per dim; starts and ends are clamped as in
    numpy (Python's `slice.indices`), which is what the spec says."""
    src, out = g.input(op, 0), g.result(op)
    shape = shape_of(src)
    if not all(isinstance(d, int) for d in shape) or any(constant_array(op.input(k)) is None for k in (1, 2)):
        _lower_slice_at_run_time(g, op, src, out)
        return
    starts, ends = (_constant_operand(g, op, k, name).reshape(-1) for k, name in ((1, "starts"), (2, "ends")))
    axes = _axes(g, op, 3, len(shape), len(starts))
    steps = _constant_operand(g, op, 4, "steps")
    steps = [1] * len(starts) if steps is None else steps.reshape(-1).tolist()
    first, stride = [0] * len(shape), [1] * len(shape)
    for axis, start, end, step in zip(axes, starts.tolist(), ends.tolist(), steps):
        if step == 0:
            raise g.shape_error(op, "a Slice step is 0")
        first[axis], stop, stride[axis] = slice(start, end, step).indices(shape[axis])
        if len(range(first[axis], stop, stride[axis])) != shape_of(out)[axis]:
            raise g.shape_error(op, f"slice of axis {axis} does not match the result shape {list(shape_of(out))}")
    strided_copy(g.top, src, out, first, stride)


def _lower_slice_at_run_time(g: GraphLowering, op: OnnxOp, src: SSAValue, out: SSAValue) -> None:
    """Slice of run-time dims, or with starts computed from them (x[:, :seq]): each
    start is normalized and clamped at run time; the result's dims are its type's."""
    shape = shape_of(src)
    starts = symbolic_value(op.input(1))
    if starts is None:
        raise g.unsupported(op, "Slice with starts that depend on input values")
    axes = _axes(g, op, 3, len(shape), len(starts))
    steps = _constant_operand(g, op, 4, "steps")
    steps = [1] * len(starts) if steps is None else steps.reshape(-1).tolist()
    b = g.top
    first: list[Bound] = [0] * len(shape)
    stride = [1] * len(shape)
    for axis, start, step in zip(axes, starts.reshape(-1).tolist(), steps):
        if step == 0:
            raise g.shape_error(op, "a Slice step is 0")
        dim = b.index(shape[axis])
        start = b.index(g.dim_value(op, start))
        from_end = b.select_index(b.compare_index("slt", start, 0), b.add(start, dim), start)
        low, high = (0, dim) if step > 0 else (-1, b.sub(dim, 1))
        first[axis], stride[axis] = b.max(b.min(from_end, high), low), step
    strided_copy(b, src, out, first, stride)


def _source_index(b: KernelBuilder, position: Bound, size: Bound, mode: str) -> tuple[Bound, SSAValue | None]:
    """Where output position `position` (relative to the input's start, possibly
    outside [0, size)) reads the input, and for constant mode whether it is inside."""
    position = b.index(position)
    if mode == "edge":
        return b.max(b.min(position, b.sub(size, 1)), 0), None
    if mode == "reflect":  # mirror without repeating the edge: -1 -> 1, size -> size - 2
        last = b.sub(size, 1)
        mirrored = b.sub(last, b.abs(b.sub(last, b.abs(position))))
        return b.max(mirrored, 0), None
    if mode == "wrap":
        return b.rem(b.add(b.rem(position, size), size), size), None
    inside = b.and_(b.compare_index("sge", position, 0), b.compare_index("slt", position, size))
    return b.max(b.min(position, b.sub(size, 1)), 0), inside


def pad_copy(
    g: GraphLowering, op: OnnxOp, src: SSAValue, out: SSAValue, begins: Sequence[Bound], mode: str, value: SSAValue
) -> None:
    """out[i] = in[i - begins] per dim, positions outside the input filled by `mode`:
    `value` (constant), the nearest edge, the mirror image or the other end. Over
    dims known at run time only, which may be empty, the input is read only where
    inside it (constant), or only if no dim is empty (the other modes: else zeros,
    their positions computed over sizes of at least 1, no remainder by 0)."""
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise g.unsupported(op, f"pad mode '{mode}'")
    shape = shape_of(src)
    if not all(isinstance(d, int) for d in (*shape, *begins)):
        ivs, b = g.top.loop_nest(shape_of(out))
        index, inside = [], None
        for iv, begin, size in zip(ivs, begins, shape):
            safe = size if mode == "constant" or isinstance(size, int) else b.max(size, 1)
            position, within = _source_index(b, b.sub(iv, begin), safe, mode)
            if within is None and not isinstance(size, int):
                within = b.compare_index("sgt", size, 0)
            index.append(position)
            if within is not None:
                inside = within if inside is None else b.and_(inside, within)
        b.store(value if mode == "constant" else b.constant(0, value.type), out, ivs)
        read = b if inside is None else b.if_then(inside)
        read.store(read.load(src, index), out, ivs)
        return
    if 0 in shape:  # nothing to read: only the fill value
        if mode != "constant":
            raise g.unsupported(op, f"{mode} padding of an empty tensor")
        fill(g.top, out, value)
        return
    ivs, b = g.top.loop_nest(shape_of(out))
    index, inside = [], None
    for iv, begin, size, out_size in zip(ivs, begins, shape, shape_of(out)):
        if begin == 0 and out_size <= size:  # only cropped at the end, if at all
            index.append(iv)
            continue
        position, within = _source_index(b, b.sub(iv, begin), size, mode)
        index.append(position)
        if within is not None:
            inside = within if inside is None else b.and_(inside, within)
    loaded = b.load(src, index)
    b.store(loaded if inside is None else b.select(inside, loaded, value), out, ivs)


@lowers("Pad", run_time_dims=True)
def lower_pad(g: GraphLowering, op: OnnxOp) -> None:
    """pads (begins then ends, over `axes`) are constants or computed from dims
    (a kv cache padded to a run-time length); negative pads crop. The fill value
    is an optional scalar input (0 if absent)."""
    src, out = g.input(op, 0), g.result(op)
    rank = len(shape_of(src))
    if op.input(1) is None:
        raise g.unsupported(op, "Pad without pads")
    pads = constant_array(op.input(1))
    if pads is None:
        pads = symbolic_value(op.input(1))
        if pads is None:
            raise g.unsupported(op, "Pad with pads that depend on input values")
    pads = pads.reshape(-1).tolist()
    axes = _axes(g, op, 3, rank, len(pads) // 2)
    begins: list[Bound] = [0] * rank
    for axis, begin in zip(axes, pads[: len(axes)]):
        begins[axis] = begin if isinstance(begin, int) else g.dim_value(op, begin)
    element = out.type.get_element_type()
    fill_buffer = g.input(op, 2)
    if fill_buffer is None:
        value = g.top.constant(0, element)
    else:
        value = g.top.load(fill_buffer, [0] * len(shape_of(fill_buffer)))
    pad_copy(g, op, src, out, begins, op.attr("mode"), value)


@lowers("CenterCropPad", run_time_dims=True)
def lower_center_crop_pad(g: GraphLowering, op: OnnxOp) -> None:
    """Center the input in the target shape along `axes`: crop (extra goes to the
    end) or pad with zeros (extra goes to the end): the input starts at
    -trunc((size - target) / 2) of the output, whichever is larger."""
    src, out = g.input(op, 0), g.result(op)
    shape, out_shape = shape_of(src), shape_of(out)
    begins = [g.top.sub(0, g.top.div(g.top.sub(size, target), 2)) for size, target in zip(shape, out_shape)]
    pad_copy(g, op, src, out, begins, "constant", g.top.constant(0, out.type.get_element_type()))
