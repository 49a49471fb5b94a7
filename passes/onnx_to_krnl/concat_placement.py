"""Concat without copies: which values are computed straight into their slice of a
Concat's output.

DenseNet concatenates a growing feature map with each new layer's output
(`concat_k = Concat(concat_{k-1}, conv_k)`), Inception and SqueezeNet the
outputs of parallel branches. Copying every input into the output costs as much
memory traffic as computing many of these layers. Knowing every shape before
the run, the compiler instead gives a Concat input's producer a `krnl.view` of
the input's slice of the Concat's buffer as its result buffer, so the Concat
has nothing left to copy. A Concat whose output is itself placed in a later
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

import math
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.types import is_low_precision


@dataclass(frozen=True)
class Placement:
    """A value computed into the elements [offset, offset + its size) of a Concat's result."""

    concat: SSAValue
    offset: int


def plan_concat_placements(graph: func.FuncOp, unplaceable: Collection[SSAValue]) -> dict[SSAValue, Placement]:
    """Where each placed value goes, for the graph's Concats in program order;
    `unplaceable` are values that need buffers of their own (graph outputs)."""
    placements: dict[SSAValue, Placement] = {}
    for op in graph.body.block.ops:
        if not isinstance(op, OnnxOp) or op.OP_TYPE != "Concat":
            continue
        out = op.results[0]
        shape = _static_shape(out)
        if shape is None:
            continue
        inputs = [v for v in onnx_inputs(op) if v is not None]
        rank = len(shape)
        axis = op.attr("axis")
        if axis is None or not -rank <= axis < rank or math.prod(shape[: axis % rank]) != 1:
            continue
        counts = Counter(inputs)
        offset = 0
        for value in inputs:
            value_shape = _static_shape(value)
            if value_shape is None or len(value_shape) != rank:
                break  # a malformed Concat: its lowering reports it
            if counts[value] == 1 and value not in placements and _placeable(value, out, unplaceable):
                placements[value] = Placement(out, offset)
            offset += math.prod(value_shape)
    return placements


def _static_shape(value: SSAValue) -> tuple[int, ...] | None:
    shape = getattr(value.type, "get_shape", lambda: None)()
    return None if shape is None or any(d < 0 for d in shape) else tuple(shape)


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
        and math.prod(value.type.get_shape()) > 0
    )
