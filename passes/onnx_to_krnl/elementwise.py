"""Elementwise math: arithmetic, activations, Pow and Clip, with numpy broadcasting."""

from __future__ import annotations

import functools
import math as pymath

from xdsl.dialects import math
from xdsl.ir import Operation, SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.passes.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    Operand,
    ScalarFunction,
    broadcast_inputs,
    elementwise,
    lower_elementwise,
    lowers,
    shape_of,
)


def _fold(kind: str) -> ScalarFunction:
    """A binary arith operation folded over any number of operands (Sum, Max...)."""
    return lambda b, xs: functools.reduce(functools.partial(b.binary, kind), xs)


def _apply_math(op_class: type[Operation]) -> ScalarFunction:
    return lambda b, xs: b.math(op_class, xs[0])


def _sigmoid(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
    one = b.constant(1.0, xs[0].type)
    return b.div(one, b.add(one, b.math(math.ExpOp, b.neg(xs[0]))))


ELEMENTWISE: dict[str, tuple[ScalarFunction, bool]] = {
    "Add": (_fold("add"), True),
    "Sum": (_fold("add"), True),
    "Sub": (_fold("sub"), True),
    "Mul": (_fold("mul"), True),
    "Div": (_fold("div"), True),
    "Max": (_fold("max"), True),
    "Min": (_fold("min"), True),
    "Relu": (lambda b, xs: b.max(xs[0], b.constant(0, xs[0].type)), True),
    "Neg": (lambda b, xs: b.neg(xs[0]), True),
    "Abs": (lambda b, xs: b.abs(xs[0]), True),
    "Exp": (_apply_math(math.ExpOp), False),
    "Log": (_apply_math(math.LogOp), False),
    "Sqrt": (_apply_math(math.SqrtOp), False),
    "Tanh": (_apply_math(math.TanhOp), False),
    "Sigmoid": (_sigmoid, False),
}
"""op type -> (scalar function, whether integer element types are supported)."""


@lowers(*ELEMENTWISE)
def lower_elementwise_op(g: GraphLowering, op: OnnxOp) -> None:
    compute, ints = ELEMENTWISE[op.OP_TYPE]
    lower_elementwise(g, op, compute, ints=ints)


@lowers("LeakyRelu")
def lower_leaky_relu(g: GraphLowering, op: OnnxOp) -> None:
    alpha = op.attr("alpha", 0.01)

    def leaky_relu(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x = xs[0]
        scaled = b.mul(x, b.constant(alpha, x.type))
        return b.select(b.less_than(x, b.constant(0, x.type)), scaled, x)

    lower_elementwise(g, op, leaky_relu, ints=False)


@lowers("Pow")
def lower_pow(g: GraphLowering, op: OnnxOp) -> None:
    """X ** Y for float X; an integer or other float Y is converted to X's type."""
    base, exponent = op.input(0), op.input(1)
    element = g.element_type(op, base, ints=False)
    g.element_type(op, exponent)
    out = g.result(op)
    elementwise(
        g.top,
        out,
        broadcast_inputs(g, op, shape_of(out)),
        lambda b, xs: b.math(math.PowFOp, xs[0], b.convert(xs[1], element)),
    )


@lowers("Clip")
def lower_clip(g: GraphLowering, op: OnnxOp) -> None:
    """min(max(x, lo), hi): bounds are attributes before opset 11, optional scalar inputs since."""
    bounds_are_inputs = g.version(op) >= 11
    values = [v for v in onnx_inputs(op) if v is not None]
    element = g.same_element_type(op, [*values, op.results[0]], ints=bounds_are_inputs)
    out = g.result(op)
    bounds: list[SSAValue | None] = []
    if not bounds_are_inputs:
        bounds = [g.top.constant(op.attr(name), element) for name in ("min", "max")]
    else:
        for index in (1, 2):
            buffer = g.input(op, index)
            if buffer is not None and pymath.prod(shape_of(buffer)) != 1:
                raise g.shape_error(op, f"Clip bound of shape {list(shape_of(buffer))} is not a scalar")
            bounds.append(None if buffer is None else g.top.load(buffer, [0] * len(shape_of(buffer))))
    low, high = bounds

    def clip(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        value = xs[0] if low is None else b.max(xs[0], low)
        return value if high is None else b.min(value, high)

    elementwise(g.top, out, [Operand.whole(g.input(op, 0))], clip)
