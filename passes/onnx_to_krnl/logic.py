"""Comparisons, boolean and bitwise logic, Mod, Where and the float class tests
(IsNaN, IsInf, Sign), with numpy broadcasting."""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.dialects.builtin import i1
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float, is_string
from onnxc.passes.helpers.krnl_builder import KernelBuilder, is_unsigned, unsigned
from onnxc.passes.onnx_to_krnl.common import GraphLowering
from onnxc.passes.onnx_to_krnl.fusion import ScalarOp, broadcast_reads, scalar_op, uniform_op
from onnxc.passes.onnx_to_krnl.strings import string_equality

COMPARISONS = {"Equal": "eq", "Greater": "gt", "Less": "lt", "GreaterOrEqual": "ge", "LessOrEqual": "le"}


@scalar_op(*COMPARISONS)
def comparison(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    kind = COMPARISONS[op.OP_TYPE]
    if kind == "eq" and is_string(op.input(0).type.get_element_type()):
        return string_equality(g, op)
    return uniform_op(g, op, lambda b, xs: b.compare(kind, xs[0], xs[1]), ints=True, bools=True, same_result=False)


BOOLEAN = {"And": "and", "Or": "or", "Xor": "xor", "BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor"}


@scalar_op(*BOOLEAN)
def boolean(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """And/Or/Xor on bool, their Bitwise forms on integers: the same arith ops."""
    kind = BOOLEAN[op.OP_TYPE]
    bitwise = op.OP_TYPE.startswith("Bitwise")
    if not bitwise:
        g.same_element_type(op, [op.input(0), op.input(1)], ints=False, bools=True)
    return uniform_op(g, op, lambda b, xs: b.binary(kind, xs[0], xs[1]), ints=bitwise, bools=not bitwise)


def _all_ones(b: KernelBuilder, element) -> SSAValue:
    width = element.width.data
    return b.constant(2**width - 1 if is_unsigned(element) or width == 1 else -1, element)


@scalar_op("Not", "BitwiseNot")
def negation(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    if op.OP_TYPE == "Not":
        g.same_element_type(op, [op.input(0)], ints=False, bools=True)
    return uniform_op(
        g, op, lambda b, xs: b.binary("xor", xs[0], _all_ones(b, xs[0].type)), ints=True, bools=op.OP_TYPE == "Not"
    )


@scalar_op("BitShift")
def bit_shift(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """Shifts; right shifts of signed integers are arithmetic. A shift by a negative
    amount or by the width or more gives what the sign fill alone gives (-1 or 0)."""
    direction = op.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise g.unsupported(op, f"BitShift direction '{direction}'")
    kind = "shl" if direction == "LEFT" else "shr"

    def shift(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x, y = xs
        width = x.type.width.data
        as_unsigned = unsigned(x.type)
        too_far = b.compare("ge", b.reinterpret(y, as_unsigned), b.constant(width, as_unsigned))
        fill = b.binary(kind, x, b.constant(width - 1, x.type)) if kind == "shr" else b.constant(0, x.type)
        if is_unsigned(x.type):
            fill = b.constant(0, x.type)
        return b.select(too_far, fill, b.binary(kind, x, y))

    return uniform_op(g, op, shift, ints=True)


@scalar_op("Mod")
def mod(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """fmod=1: remainder with the dividend's sign (C fmod); fmod=0: with the
    divisor's sign (Python %, numpy.mod), also for floats."""
    c_fmod = bool(op.attr("fmod"))

    def mod(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x, y = xs
        if is_unsigned(x.type):
            return b.rem(x, y)
        remainder = _float_fmod(b, x, y) if is_float(x.type) else b.rem(x, y)
        if c_fmod:
            return remainder
        zero = b.constant(0, x.type)
        signs_differ = b.binary("xor", b.less_than(remainder, zero), b.less_than(y, zero))
        adjust = b.binary("and", signs_differ, b.compare("ne", remainder, zero))
        result = b.select(adjust, b.add(remainder, y), remainder)
        if is_float(x.type):  # a zero remainder takes the divisor's sign
            result = b.select(b.compare("eq", result, zero), b.math(math.CopySignOp, result, y), result)
        return result

    return uniform_op(g, op, mod, ints=True)


def _float_fmod(b: KernelBuilder, x: SSAValue, y: SSAValue) -> SSAValue:
    """C fmod: x - trunc(x / y) * y with one rounding (fma), x itself for a finite x
    and infinite y, and a zero result with the sign of x."""
    quotient = b.math(math.TruncOp, b.div(x, y))
    remainder = b.math(math.FmaOp, b.neg(quotient), y, x)
    infinity = b.constant(float("inf"), x.type)
    keep_x = b.binary("and", b.compare("eq", b.abs(y), infinity), b.compare("ne", b.abs(x), infinity))
    remainder = b.select(keep_x, x, remainder)
    zero = b.constant(0, x.type)
    return b.select(b.compare("eq", remainder, zero), b.math(math.CopySignOp, remainder, x), remainder)


@scalar_op("Where")
def where(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    condition = op.input(0).type.get_element_type()
    if condition != i1:
        raise g.unsupported(op, f"Where condition of type {condition}")
    g.same_element_type(op, [op.input(1), op.input(2), op.results[0]], ints=True, bools=True)
    return ScalarOp(broadcast_reads(g, op), lambda b, xs: b.select(*xs))


@scalar_op("IsNaN")
def is_nan(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    return uniform_op(g, op, lambda b, xs: b.is_nan(xs[0]), ints=False, same_result=False)


@scalar_op("IsInf")
def is_inf(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    positive, negative = op.attr("detect_positive"), op.attr("detect_negative")

    def is_inf(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x = xs[0]
        result = b.constant(0, i1)
        for detect, infinity in ((positive, float("inf")), (negative, float("-inf"))):
            if detect:
                result = b.binary("or", result, b.compare("eq", x, b.constant(infinity, x.type)))
        return result

    return uniform_op(g, op, is_inf, ints=False, same_result=False)


@scalar_op("Sign")
def sign(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """-1, 0 or 1 (NaN stays NaN: it is neither below nor above zero)."""

    def sign(b: KernelBuilder, xs: list[SSAValue]) -> SSAValue:
        x = xs[0]
        zero, one = b.constant(0, x.type), b.constant(1, x.type)
        below = b.neg(one) if not is_unsigned(x.type) else zero
        return b.select(b.compare("gt", x, zero), one, b.select(b.less_than(x, zero), below, x))

    return uniform_op(g, op, sign, ints=True)
