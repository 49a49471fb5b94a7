"""Softmax and reductions along axes."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import math
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, normalized_axis, shape_of

# ---------------------------------------------------------------------------- Softmax


@lowers("Softmax")
def lower_softmax(g: GraphLowering, op: OnnxOp) -> None:
    """exp(x - max) / sum(exp(x - max)) over the softmax dims, for each position of
    the other dims. Since opset 13 the softmax dims are just `axis` (default -1);
    before, they are every dim from `axis` (default 1) on."""
    x = g.input(op, 0)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    out = g.result(op)
    shape = shape_of(x)
    rank = len(shape)
    per_axis = g.version(op) >= 13
    axis = op.attr("axis") if "axis" in op.attributes else (-1 if per_axis else 1)
    axis = normalized_axis(g, op, axis, rank)
    reduced = [axis] if per_axis else list(range(axis, rank))
    kept = [d for d in range(rank) if d not in reduced]
    ranges = [(0, shape[d]) for d in reduced]

    outer_ivs, body = g.top.loop_nest([shape[d] for d in kept])

    def index(inner_ivs: Sequence[Bound]) -> list[Bound]:
        by_dim = dict(zip(kept, outer_ivs)) | dict(zip(reduced, inner_ivs))
        return [by_dim[d] for d in range(rank)]

    maximum = body.reduce(ranges, body.lowest(element), lambda b, ivs, acc: b.max(acc, b.load(x, index(ivs))))

    def exponentiate(b: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
        exponential = b.math(math.ExpOp, b.sub(b.load(x, index(ivs)), maximum))
        b.store(exponential, out, index(ivs))
        return b.add(acc, exponential)

    total = body.reduce(ranges, body.constant(0.0, element), exponentiate)
    inner_ivs, inner = body.for_nest(ranges)
    inner.store(inner.div(inner.load(out, index(inner_ivs)), total), out, index(inner_ivs))
