"""Emitters of arithmetic: arith and math ops, casts.

Most are table driven: LLVM instructions, intrinsics overloaded on their
operand type, libm functions, and vector_math's inlinable f32 polynomials
(which LLVM's vectorizer can widen, unlike a libm call).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, FloatAttr, IntegerAttr, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue

from onnxc.codegen import vector_math
from onnxc.codegen.function_translator import EMITTERS, Emitter, FunctionTranslator, emits
from onnxc.codegen.llvm_types import (
    I1,
    bfloat16_bits,
    bfloat16_from_bits,
    float_rank,
    int_constant,
    round_to_bfloat16,
    value_type,
)
from onnxc.errors import CompileError


def _fastmath(op: Operation) -> list[str]:
    """LLVM's fast-math flags for the op's `fastmath` property (all seven: `fast`)."""
    attr = op.properties.get("fastmath")
    if attr is None:
        return []
    flags = sorted(str(getattr(flag, "value", flag)) for flag in attr.data)
    return ["fast"] if len(flags) == 7 else flags


@emits(arith.ConstantOp)
def _emit_constant(t: FunctionTranslator, op: arith.ConstantOp) -> None:
    attr, rtype = op.value, op.result.type
    ty = value_type(rtype)
    if isinstance(attr, IntegerAttr):
        t.set(op.result, int_constant(ty, attr.value.data))
    elif isinstance(attr, FloatAttr):
        value = attr.value.data
        if isinstance(rtype, BFloat16Type):
            value = round_to_bfloat16(value)
        t.set(op.result, ir.Constant(ty, value))
    else:
        raise CompileError(f"codegen: unsupported constant {attr}")


_INT_BINARY = {
    arith.AddiOp: "add",
    arith.SubiOp: "sub",
    arith.MuliOp: "mul",
    arith.DivSIOp: "sdiv",
    arith.DivUIOp: "udiv",
    arith.RemSIOp: "srem",
    arith.RemUIOp: "urem",
    arith.AndIOp: "and_",
    arith.OrIOp: "or_",
    arith.XOrIOp: "xor",
    arith.ShLIOp: "shl",
    arith.ShRUIOp: "lshr",
    arith.ShRSIOp: "ashr",
}
_FLOAT_BINARY = {arith.AddfOp: "fadd", arith.SubfOp: "fsub", arith.MulfOp: "fmul", arith.DivfOp: "fdiv"}
# Ops that are LLVM intrinsics overloaded on their operand type: op class -> intrinsic.
_INTRINSIC_OPS = {
    arith.MinSIOp: "smin",
    arith.MaxSIOp: "smax",
    arith.MinUIOp: "umin",
    arith.MaxUIOp: "umax",
    arith.MinimumfOp: "minimum",
    arith.MaximumfOp: "maximum",
    arith.MinnumfOp: "minnum",
    arith.MaxnumfOp: "maxnum",
    math.PowFOp: "pow",
    math.CopySignOp: "copysign",
    math.FmaOp: "fma",
    math.SqrtOp: "sqrt",
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.AbsFOp: "fabs",
    math.FloorOp: "floor",
    math.CeilOp: "ceil",
    math.TruncOp: "trunc",
    math.RoundOp: "round",
    math.RoundEvenOp: "rint",  # nearest, ties to even in the default FP environment; roundeven is a libm call glibc < 2.25 lacks
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.CtPopOp: "ctpop",
}
# Integer intrinsics with a trailing i1 "poison on 0 / INT_MIN" flag; false: defined everywhere.
_INT_INTRINSIC_WITH_FLAG = {math.AbsIOp: "abs", math.CountLeadingZerosOp: "ctlz", math.CountTrailingZerosOp: "cttz"}
# Float functions called from libm (`name` for f64, `namef` otherwise).
_LIBM_OPS = {
    math.TanhOp: "tanh",
    math.ErfOp: "erf",
    math.TanOp: "tan",
    math.AtanOp: "atan",
    math.Atan2Op: "atan2",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.CbrtOp: "cbrt",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
}


# Float32 functions with inlinable, vectorizable definitions (vector_math.py).
_VECTOR_MATH_OPS = {math.ExpOp: "exp", math.LogOp: "log", math.TanhOp: "tanh", math.ErfOp: "erf"}


def _widen(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fpext(x, ir.FloatType()) if x.type == ir.HalfType() else x


def _narrow(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    return b.fptrunc(x, ty) if ty != x.type else x


def _result(op: Operation) -> SSAValue:
    (result,) = op.results
    return result


def _register_table_emitters() -> None:
    def int_binary(method: str) -> Emitter:
        def emit(t: FunctionTranslator, op: Operation) -> None:
            lhs, rhs = (t.get(v) for v in op.operands)
            t.set(_result(op), getattr(t.builder, method)(lhs, rhs))

        return emit

    def float_binary(method: str) -> Emitter:
        def emit(t: FunctionTranslator, op: Operation) -> None:
            lhs, rhs = (t.get(v) for v in op.operands)
            value = getattr(t.builder, method)(lhs, rhs, flags=_fastmath(op))
            t.set(_result(op), t.round_if_bfloat16(value, _result(op).type))

        return emit

    def intrinsic(base: str, extra: tuple[ir.Value, ...] = ()) -> Emitter:
        def emit(t: FunctionTranslator, op: Operation) -> None:
            args = [t.get(v) for v in op.operands]
            value = t.intrinsic(base, args, _fastmath(op), extra)
            t.set(_result(op), t.round_if_bfloat16(value, _result(op).type))

        return emit

    def libm(name: str) -> Emitter:
        def emit(t: FunctionTranslator, op: Operation) -> None:
            b = t.builder
            args = [t.get(v) for v in op.operands]
            ty = args[0].type
            # Half precision goes through the f32 function.
            compute = ir.DoubleType() if ty == ir.DoubleType() else ir.FloatType()
            if ty != compute:
                args = [b.fpext(a, compute) for a in args]
            value = t.call(name if compute == ir.DoubleType() else name + "f", compute, args, _fastmath(op))
            if ty != compute:
                value = b.fptrunc(value, ty)
            t.set(_result(op), t.round_if_bfloat16(value, _result(op).type))

        return emit

    for op_class, method in _INT_BINARY.items():
        EMITTERS[op_class] = int_binary(method)
    for op_class, method in _FLOAT_BINARY.items():
        EMITTERS[op_class] = float_binary(method)
    for op_class, base in _INTRINSIC_OPS.items():
        EMITTERS[op_class] = intrinsic(base)
    for op_class, base in _INT_INTRINSIC_WITH_FLAG.items():
        EMITTERS[op_class] = intrinsic(base, (ir.Constant(I1, 0),))
    for op_class, name in _LIBM_OPS.items():
        EMITTERS[op_class] = libm(name)

    def vectorizable(name: str, wide: Emitter) -> Emitter:
        """Float types up to f32 through vector_math's inlined polynomial, f64 through `wide`."""

        def emit(t: FunctionTranslator, op: Operation) -> None:
            (x,) = (t.get(v) for v in op.operands)
            if x.type == ir.DoubleType():
                return wide(t, op)
            b = t.builder
            target = t.parent.target
            function = vector_math.float32_function(t.parent.module, name, vector_ldexp=target.has_vector_ldexp)
            value = b.call(function, [_widen(b, x)])
            t.set(_result(op), t.round_if_bfloat16(_narrow(b, value, x.type), _result(op).type))

        return emit

    for op_class, name in _VECTOR_MATH_OPS.items():
        EMITTERS[op_class] = vectorizable(name, EMITTERS[op_class])


_register_table_emitters()


@emits(arith.NegfOp)
def _emit_negf(t: FunctionTranslator, op: arith.NegfOp) -> None:
    t.set(op.result, t.builder.fneg(t.get(op.operand), flags=_fastmath(op)))


@emits(math.RsqrtOp)
def _emit_rsqrt(t: FunctionTranslator, op: math.RsqrtOp) -> None:
    x = t.get(op.operand)
    flags = _fastmath(op)
    root = t.intrinsic("sqrt", [x], flags)
    value = t.builder.fdiv(ir.Constant(x.type, 1.0), root, flags=flags)
    t.set(op.result, t.round_if_bfloat16(value, op.result.type))


@emits(math.FPowIOp)
def _emit_fpowi(t: FunctionTranslator, op: math.FPowIOp) -> None:
    base, exponent = t.get(op.lhs), t.get(op.rhs)
    name = f"llvm.powi.{base.type.intrinsic_name}.{exponent.type.intrinsic_name}"
    value = t.call(name, base.type, [base, exponent], _fastmath(op))
    t.set(op.result, t.round_if_bfloat16(value, op.result.type))


@emits(arith.FloorDivSIOp, arith.CeilDivSIOp, arith.CeilDivUIOp)
def _emit_rounding_division(t: FunctionTranslator, op: Operation) -> None:
    """Division rounding to -inf (floordivsi) or +inf (ceildiv*i): adjust the truncated quotient."""
    b = t.builder
    lhs, rhs = (t.get(v) for v in op.operands)
    zero = ir.Constant(lhs.type, 0)
    if isinstance(op, arith.CeilDivUIOp):
        quotient, remainder = b.udiv(lhs, rhs), b.urem(lhs, rhs)
        adjust = b.icmp_unsigned("!=", remainder, zero)
        t.set(_result(op), b.add(quotient, b.zext(adjust, lhs.type)))
        return
    quotient, remainder = b.sdiv(lhs, rhs), b.srem(lhs, rhs)
    inexact = b.icmp_signed("!=", remainder, zero)
    remainder_negative, divisor_negative = (b.icmp_signed("<", v, zero) for v in (remainder, rhs))
    same_sign = b.icmp_unsigned("==", remainder_negative, divisor_negative)
    if isinstance(op, arith.FloorDivSIOp):
        adjust = b.and_(inexact, b.not_(same_sign))
        t.set(_result(op), b.sub(quotient, b.zext(adjust, lhs.type)))
    else:
        adjust = b.and_(inexact, same_sign)
        t.set(_result(op), b.add(quotient, b.zext(adjust, lhs.type)))


_ICMP = {
    "eq": ("icmp_signed", "=="),
    "ne": ("icmp_signed", "!="),
    "slt": ("icmp_signed", "<"),
    "sle": ("icmp_signed", "<="),
    "sgt": ("icmp_signed", ">"),
    "sge": ("icmp_signed", ">="),
    "ult": ("icmp_unsigned", "<"),
    "ule": ("icmp_unsigned", "<="),
    "ugt": ("icmp_unsigned", ">"),
    "uge": ("icmp_unsigned", ">="),
}


@emits(arith.CmpiOp)
def _emit_cmpi(t: FunctionTranslator, op: arith.CmpiOp) -> None:
    method, predicate = _ICMP[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
    t.set(op.result, getattr(t.builder, method)(predicate, t.get(op.lhs), t.get(op.rhs)))


@emits(arith.CmpfOp)
def _emit_cmpf(t: FunctionTranslator, op: arith.CmpfOp) -> None:
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    # llvmlite passes LLVM's own predicate names (oeq, ult, ...) through unchanged.
    t.set(op.result, t.builder.fcmp_ordered(predicate, t.get(op.lhs), t.get(op.rhs), flags=_fastmath(op)))


@emits(arith.SelectOp)
def _emit_select(t: FunctionTranslator, op: arith.SelectOp) -> None:
    t.set(op.result, t.builder.select(t.get(op.cond), t.get(op.lhs), t.get(op.rhs)))


# ---------------------------------------------------------------------------------- casts


def _cast_operand(op: Operation) -> SSAValue:
    (operand,) = op.operands
    return operand


@emits(arith.ExtFOp, arith.TruncFOp)
def _emit_float_cast(t: FunctionTranslator, op: Operation) -> None:
    b = t.builder
    value, result = t.get(_cast_operand(op)), _result(op)
    target = value_type(result.type)
    if float_rank(target) > float_rank(value.type):
        value = b.fpext(value, target)
    elif float_rank(target) < float_rank(value.type):
        value = b.fptrunc(value, target)
    t.set(result, t.round_if_bfloat16(value, result.type))


@emits(arith.TruncIOp, arith.ExtSIOp, arith.ExtUIOp, arith.IndexCastOp)
def _emit_int_cast(t: FunctionTranslator, op: Operation) -> None:
    b = t.builder
    value, result = t.get(_cast_operand(op)), _result(op)
    target = value_type(result.type)
    if target.width < value.type.width:
        value = b.trunc(value, target)
    elif target.width > value.type.width:
        value = b.zext(value, target) if isinstance(op, arith.ExtUIOp) else b.sext(value, target)
    t.set(result, value)


@emits(arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp)
def _emit_int_float_cast(t: FunctionTranslator, op: Operation) -> None:
    method = {arith.SIToFPOp: "sitofp", arith.UIToFPOp: "uitofp", arith.FPToSIOp: "fptosi", arith.FPToUIOp: "fptoui"}[
        type(op)
    ]
    result = _result(op)
    value = getattr(t.builder, method)(t.get(_cast_operand(op)), value_type(result.type))
    t.set(result, t.round_if_bfloat16(value, result.type))


@emits(arith.BitcastOp)
def _emit_bitcast(t: FunctionTranslator, op: arith.BitcastOp) -> None:
    b = t.builder
    operand, result = _cast_operand(op), _result(op)
    value = t.get(operand)
    if isinstance(operand.type, BFloat16Type):
        value = bfloat16_bits(b, value)
    if isinstance(result.type, BFloat16Type):
        value = bfloat16_from_bits(b, value)
    else:
        value = b.bitcast(value, value_type(result.type))
    t.set(result, value)


@emits(UnrealizedConversionCastOp)
def _emit_unrealized_cast(t: FunctionTranslator, op: UnrealizedConversionCastOp) -> None:
    """A cast between types with one LLVM type (ui8 <-> i8: how unsigned values reach arith)."""
    for operand, result in zip(op.inputs, op.outputs, strict=True):
        value = t.get(operand)
        if value.type != value_type(result.type):
            raise CompileError(f"codegen: cannot cast {operand.type} to {result.type}")
        t.set(result, value)
