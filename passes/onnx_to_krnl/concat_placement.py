"""Concat without copies: which values are computed straight into their slice of a
Concat's output.

DenseNet concatenates a growing feature map with each new layer's output
(`concat_k = Concat(concat_{k-1}, conv_k)`), Inception and SqueezeNet the
outputs of parallel branches (so do detectors' and segmenters' feature pyramids,
at image sizes known at run time only). Copying every input into the output costs
as much memory traffic as computing many of these layers. The compiler instead
gives a Concat input's producer a `krnl.view` of the input's slice of the
Concat's buffer as its result buffer, so the Concat has nothing left to copy: its
offset the channels before it times the height and width, computed at run time
where they are known then only. A Concat whose output is itself placed in a later
Concat gets a view too: a DenseNet dense block fills one buffer.

A slice is a contiguous range of the output only when every dim before the
axis is 1 (batch 1 and axis 1, as in those models); other Concats copy. Buffers
are written once, so a placed value may have any number of other readers; it
only must not need a buffer of its own: graph inputs, constants and graph
outputs are not placed, and a value is placed in one Concat at most (the first
reading it), once. Whether a producer really wrote into its view is checked
when the Concat is lowered (a producer may alias its result to another buffer,
as Identity does): an input found elsewhere is copied.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from onnxc.dialects.krnl import ViewOp
from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.types import is_low_precision
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder


@dataclass(frozen=True)
class Placement:
    """A value computed into a Concat's result from index `start` along its `axis` (the
    dims before it all 1): from element `start` times the product of the result's dims after
    the axis, which may be known at run time only (an image's height and width)."""

    concat: SSAValue
    axis: int
    start: int


def plan_concat_placements(graph: func.FuncOp, unplaceable: Collection[SSAValue]) -> dict[SSAValue, Placement]:
    """Where each placed value goes, for the graph's Concats in program order;
    `unplaceable` are values that need buffers of their own (graph outputs)."""
    placements: dict[SSAValue, Placement] = {}
    for op in graph.body.block.ops:
        if not isinstance(op, OnnxOp) or op.OP_TYPE != "Concat":
            continue
        out = op.results[0]
        shape = _shape(out)
        axis = op.attr("axis")
        if shape is None or axis is None or not -len(shape) <= axis < len(shape):
            continue
        axis %= len(shape)
        if any(d != 1 for d in shape[:axis]) or shape[axis] < 0:
            continue
        inputs = [v for v in onnx_inputs(op) if v is not None]
        counts = Counter(inputs)
        start = 0
        for value in inputs:
            value_shape = _shape(value)
            if value_shape is None or len(value_shape) != len(shape) or value_shape[axis] < 0:
                break  # a malformed Concat: its lowering reports it
            if counts[value] == 1 and value not in placements and _placeable(value, out, unplaceable):
                placements[value] = Placement(out, axis, start)
            start += value_shape[axis]
    return placements


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    """The type's dims, -1 for those known at run time only."""
    shape = getattr(value.type, "get_shape", lambda: None)()
    return None if shape is None else tuple(shape)


def _placeable(value: SSAValue, concat: SSAValue, unplaceable: Collection[SSAValue]) -> bool:
    """Whether an op computes `value` into a buffer that may be part of `concat`'s."""
    owner = value.owner
    element = value.type.get_element_type()
    return (
        isinstance(owner, OnnxOp)
        and owner.OP_TYPE != "Constant"
        and value not in unplaceable
        and element == concat.type.get_element_type()
        and not is_low_precision(element)
        and 0 not in value.type.get_shape()
    )


def placed_view(
    b: KernelBuilder,
    placement: Placement,
    base: SSAValue,
    memref_type: MemRefType,
    concat_dims: Sequence[Bound],
    dims: Sequence[Bound],
) -> SSAValue:
    """A placed value's buffer: its slice of the Concat's buffer `base` (`concat_dims` the Concat
    result's dims and `dims` the value's, ints or index values), at a run-time offset where the
    dims after the axis are known at run time only (a first input's is 0 still)."""
    offset: Bound = placement.start
    for dim in concat_dims[placement.axis + 1 :]:
        offset = b.mul(offset, dim)
    sizes = [b.index(d) for d in dims if not isinstance(d, int)]
    if isinstance(offset, int):
        return b.insert(ViewOp(base, offset, memref_type, sizes)).result
    return b.insert(ViewOp(base, 0, memref_type, sizes, b.index(offset))).result
