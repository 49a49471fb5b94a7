"""Cast and CastLike between the numeric element types (floats, signed and
unsigned integers, bool), with ONNX semantics: float -> integer truncates toward
zero, anything -> bool is `!= 0`, bool -> number is 0 or 1."""

from __future__ import annotations

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.onnx_to_krnl.common import GraphLowering, Operand, elementwise, lowers


@lowers("Cast", "CastLike")
def lower_cast(g: GraphLowering, op: OnnxOp) -> None:
    source = op.input(0)
    g.element_type(op, source, bools=True)
    target = g.element_type(op, op.results[0], bools=True)
    out = g.result(op)
    elementwise(g.top, out, [Operand.whole(g.input(op, 0))], lambda b, xs: b.convert(xs[0], target))
