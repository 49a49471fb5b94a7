"""Elementwise math: arithmetic, activations, Pow and Clip, with numpy broadcasting."""

from __future__ import annotations

import functools
import math as pymath
from collections.abc import Callable

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import f32, f64
from xdsl.ir import Operation, SSAValue

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, ScalarFunction, constant_array
from onnxc.passes.onnx_to_krnl.fusion import (
    ScalarOp,
    broadcast_reads,
    elementwise_read,
    scalar_bound_reads,
    scalar_op,
    uniform_op,
)


def _fold(kind: str) -> ScalarFunction:
    """A binary arith operation folded over any number of operands (Sum, Max...)."""
    return lambda b, xs: functools.reduce(functools.partial(b.binary, kind), xs)


def _apply_math(op_class: type[Operation]) -> ScalarFunction:
    return lambda b, xs: b.math(op_class, xs[0])


def _sigmoid(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
    one = b.constant(1.0, xs[0].type)
    return b.div(one, b.add(one, b.math(math.ExpOp, b.neg(xs[0]))))


def _softplus(b: KernelBuilder, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)), as log1p(exp(x)) so that small exp(x) keep their digits."""
    return b.math(math.Log1pOp, b.math(math.ExpOp, x))


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
    "Acos": (_apply_math(math.AcosOp), False),
    "Acosh": (_apply_math(math.AcoshOp), False),
    "Asin": (_apply_math(math.AsinOp), False),
    "Asinh": (_apply_math(math.AsinhOp), False),
    "Atan": (_apply_math(math.AtanOp), False),
    "Atanh": (_apply_math(math.AtanhOp), False),
    "Cos": (_apply_math(math.CosOp), False),
    "Cosh": (_apply_math(math.CoshOp), False),
    "Sin": (_apply_math(math.SinOp), False),
    "Sinh": (_apply_math(math.SinhOp), False),
    "Tan": (_apply_math(math.TanOp), False),
    "Floor": (_apply_math(math.FloorOp), False),
    "Ceil": (_apply_math(math.CeilOp), False),
    "Round": (_apply_math(math.RoundEvenOp), False),
    "Erf": (_apply_math(math.ErfOp), False),
    "Reciprocal": (lambda b, xs: b.div(b.constant(1.0, xs[0].type), xs[0]), False),
    "Softplus": (lambda b, xs: _softplus(b, xs[0]), False),
    "Softsign": (lambda b, xs: b.div(xs[0], b.add(b.constant(1.0, xs[0].type), b.abs(xs[0]))), False),
    "Mish": (lambda b, xs: b.mul(xs[0], b.math(math.TanhOp, _softplus(b, xs[0]))), False),
    "Mean": (lambda b, xs: b.div(_fold("add")(b, xs), b.constant(len(xs), xs[0].type)), False),
}
"""op type -> (scalar function, whether integer element types are supported)."""


@scalar_op(*ELEMENTWISE)
def elementwise_op(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    compute, ints = ELEMENTWISE[op.OP_TYPE]
    return uniform_op(g, op, compute, ints=ints)


ActivationFunction = Callable[[KernelBuilder, SSAValue, Callable[[str], SSAValue]], SSAValue]
"""(builder, x, attribute name -> its value as a constant of x's type) -> f(x)."""


def _elu(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    negative = b.mul(a("alpha"), b.sub(b.math(math.ExpOp, x), b.constant(1.0, x.type)))
    return b.select(b.less_than(x, b.constant(0.0, x.type)), negative, x)


def _selu(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    negative = b.mul(a("alpha"), b.sub(b.math(math.ExpOp, x), b.constant(1.0, x.type)))
    return b.mul(a("gamma"), b.select(b.compare("le", x, b.constant(0.0, x.type)), negative, x))


def _celu(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    zero = b.constant(0.0, x.type)
    exponential = b.math(math.ExpOp, b.div(x, a("alpha")))
    negative = b.mul(a("alpha"), b.sub(exponential, b.constant(1.0, x.type)))
    return b.add(b.max(zero, x), b.min(zero, negative))


def _hard_sigmoid(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    linear = b.add(b.mul(a("alpha"), x), a("beta"))
    return b.max(b.constant(0.0, x.type), b.min(b.constant(1.0, x.type), linear))


def _hard_swish(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    linear = b.add(b.mul(b.constant(1 / 6, x.type), x), b.constant(0.5, x.type))
    return b.mul(x, b.max(b.constant(0.0, x.type), b.min(b.constant(1.0, x.type), linear)))


def _thresholded_relu(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    return b.select(b.compare("gt", x, a("alpha")), x, b.constant(0.0, x.type))


def _leaky_relu(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    scaled = b.mul(x, a("alpha"))
    return b.select(b.less_than(x, b.constant(0, x.type)), scaled, x)


def _swish(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    return b.mul(x, _sigmoid(b, [b.mul(a("alpha"), x)]))


def _shrink(b: KernelBuilder, x: SSAValue, a: Callable[[str], SSAValue]) -> SSAValue:
    lambd, bias = a("lambd"), a("bias")
    below = b.select(b.less_than(x, b.neg(lambd)), b.add(x, bias), b.constant(0, x.type))
    return b.select(b.compare("gt", x, lambd), b.sub(x, bias), below)


def _gelu(b: KernelBuilder, x: SSAValue, approximate: str) -> SSAValue:
    half, one = b.constant(0.5, x.type), b.constant(1.0, x.type)
    if approximate == "tanh":
        cubic = b.mul(b.constant(0.044715, x.type), b.mul(x, b.mul(x, x)))
        inner = b.mul(b.constant(pymath.sqrt(2 / pymath.pi), x.type), b.add(x, cubic))
        return b.mul(b.mul(half, x), b.add(one, b.math(math.TanhOp, inner)))
    scaled = b.mul(x, b.constant(1 / pymath.sqrt(2), x.type))
    return b.mul(b.mul(half, x), b.add(one, b.math(math.ErfOp, scaled)))


ACTIVATIONS: dict[str, tuple[ActivationFunction, bool]] = {
    "Elu": (_elu, False),
    "Selu": (_selu, False),
    "Celu": (_celu, False),
    "HardSigmoid": (_hard_sigmoid, False),
    "HardSwish": (_hard_swish, False),
    "ThresholdedRelu": (_thresholded_relu, False),
    "LeakyRelu": (_leaky_relu, False),
    "Swish": (_swish, False),
    "Shrink": (_shrink, True),
}
"""Unary ops with float attributes (defaults from the op schema): op -> (function, ints)."""


@scalar_op(*ACTIVATIONS)
def activation(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    function, ints = ACTIVATIONS[op.OP_TYPE]

    def compute(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x = xs[0]
        return function(b, x, lambda name: b.constant(op.attr(name), x.type))

    return uniform_op(g, op, compute, ints=ints)


@scalar_op("Gelu")
def gelu(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """x * Phi(x), exactly with erf or (approximate="tanh") with the tanh formula."""
    approximate = op.attr("approximate")
    if approximate not in ("none", "tanh"):
        raise g.unsupported(op, f"Gelu approximate='{approximate}'")
    return uniform_op(g, op, lambda b, xs: _gelu(b, xs[0], approximate), ints=False)


@scalar_op("PRelu")
def prelu(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """x < 0 ? slope * x : x, the slope broadcast to x."""

    def compute(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x, slope = xs
        return b.select(b.less_than(x, b.constant(0, x.type)), b.mul(x, slope), x)

    return uniform_op(g, op, compute, ints=True)


@scalar_op("Pow")
def power(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """X ** Y in X's type, for any numeric Y: computed in f64 for integer X (then
    truncated toward zero, as the reference's cast), in f32 at least for floats."""
    element = g.element_type(op, op.input(0))
    g.element_type(op, op.input(1))
    compute = f64 if not is_float(element) else (f32 if element.bitwidth == 16 else element)

    def raised(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        base, exponent = (b.convert(x, compute) for x in xs)
        return b.convert(b.math(math.PowFOp, base, exponent), element)

    def multiplied(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        base = b.convert(xs[0], compute)
        product = functools.reduce(b.mul, [base] * abs(power))
        return b.convert(b.div(b.constant(1.0, compute), product) if power < 0 else product, element)

    exponent = constant_array(op.input(1))
    power = _small_integer(exponent) if is_float(element) and exponent is not None else None
    return ScalarOp(broadcast_reads(g, op), raised if power is None else multiplied)


MULTIPLIED_POWERS = 4
"""A float raised to a constant integer up to this magnitude is multiplied out (GELU's x ** 3,
RMSNorm's x ** 2): powf, exp(y log x) per element, took 12 ns an element in GPT-2's GELU."""


def _small_integer(exponent: np.ndarray) -> int | None:
    """The exponent as an int if it is one value, a nonzero integer of at most MULTIPLIED_POWERS."""
    values = np.unique(exponent)
    if values.size != 1 or not np.isfinite(values[0]) or values[0] != np.round(values[0]):
        return None
    power = int(values[0])
    return power if 0 < abs(power) <= MULTIPLIED_POWERS else None


@scalar_op("Clip")
def clip(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """min(max(x, lo), hi): bounds are attributes before opset 11, optional scalar inputs since."""
    bounds_are_inputs = g.version(op) >= 11
    values = [v for v in onnx_inputs(op) if v is not None]
    element = g.same_element_type(op, [*values, op.results[0]], ints=bounds_are_inputs)
    x = elementwise_read(op, 0)
    if not bounds_are_inputs:
        low, high = op.attr("min"), op.attr("max")
        return ScalarOp([x], lambda b, xs: b.min(b.max(xs[0], b.constant(low, element)), b.constant(high, element)))
    has_low, has_high = (op.input(index) is not None for index in (1, 2))

    def compute(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        value, bounds = xs[0], iter(xs[1:])
        if has_low:
            value = b.max(value, next(bounds))
        return b.min(value, next(bounds)) if has_high else value

    return ScalarOp([x, *scalar_bound_reads(g, op, (1, 2))], compute)
