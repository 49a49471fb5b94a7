"""Symbolic dims computed in LLVM IR: the entry point's checks and the arena's run-time sizes."""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from onnxc.codegen.llvm_types import I1, I64
from onnxc.dialects.symbolic import Dim, DimOps


class LLVMDimOps(DimOps):
    """`Dim.evaluate` on i64 values, with Python's floor division (a numerator
    such as S - 3 may be negative for a small S)."""

    def __init__(self, builder: ir.IRBuilder):
        self.b = builder

    def const(self, value: int) -> ir.Value:
        return ir.Constant(I64, value)

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.add(a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.mul(a, b)

    def floordiv(self, a: ir.Value, b: ir.Value) -> ir.Value:
        zero = ir.Constant(I64, 0)
        by_zero = None if isinstance(b, ir.Constant) else self.b.icmp_signed("==", b, zero)
        if by_zero is not None:  # x // 0 is 0 in a dim expression: never a trap
            b = self.b.select(by_zero, ir.Constant(I64, 1), b)
        quotient, remainder = self.b.sdiv(a, b), self.b.srem(a, b)
        inexact = self.b.icmp_signed("!=", remainder, zero)
        signs_differ = self.b.icmp_signed("!=", self.b.icmp_signed("<", a, zero), self.b.icmp_signed("<", b, zero))
        floor = self.b.sub(quotient, self.b.zext(self.b.and_(inexact, signs_differ), I64))
        return floor if by_zero is None else self.b.select(by_zero, zero, floor)

    def eq(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.zext(self.b.icmp_signed("==", a, b), I64)

    def lt(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.zext(self.b.icmp_signed("<", a, b), I64)

    def min(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.select(self.b.icmp_signed("<", a, b), a, b)

    def max(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.b.select(self.b.icmp_signed(">", a, b), a, b)


def evaluate(builder: ir.IRBuilder, dim: Dim, value_of: Callable[[str], ir.Value]) -> ir.Value:
    """The i64 value of `dim`, its symbols' values given by `value_of`."""
    return dim.evaluate(value_of, LLVMDimOps(builder))


class CheckedDimOps(LLVMDimOps):
    """LLVMDimOps whose additions and multiplications record signed overflow in
    `overflowed` (an i1): a size computed from huge dims fails instead of wrapping."""

    def __init__(self, builder: ir.IRBuilder, declare: Callable[[str, ir.Type, list[ir.Type]], ir.Function]):
        super().__init__(builder)
        self.declare = declare
        self.overflowed: ir.Value = ir.Constant(I1, 0)

    def _checked(self, operation: str, a: ir.Value, b: ir.Value) -> ir.Value:
        result_type = ir.LiteralStructType([I64, I1])
        function = self.declare(f"llvm.s{operation}.with.overflow.i64", result_type, [I64, I64])
        pair = self.b.call(function, [a, b])
        self.overflowed = self.b.or_(self.overflowed, self.b.extract_value(pair, 1))
        return self.b.extract_value(pair, 0)

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._checked("add", a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._checked("mul", a, b)

    def align_up(self, value: ir.Value, alignment: int) -> ir.Value:
        return self.b.and_(self.add(value, ir.Constant(I64, alignment - 1)), ir.Constant(I64, -alignment))

    def evaluate(self, dim: Dim, value_of: Callable[[str], ir.Value]) -> ir.Value:
        return dim.evaluate(value_of, self)
