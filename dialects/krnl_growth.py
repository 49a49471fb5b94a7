"""Heap buffers that grow while a run-time loop runs: `krnl.grow`, `krnl.free`.

A Loop whose trip count is known only at run time (a while loop on the data)
collects its scan outputs, one row per iteration, into a buffer whose size
no one knows when the run starts, so it cannot live in the arena (planned at
compile time, sized at entry). `krnl.grow` reallocates it on the heap keeping
its rows (the lowering doubles the rows whenever an iteration finds it full,
so n iterations copy O(n) rows); `krnl.free` releases it once
`krnl.dynamic_output` has copied its rows into the graph output.

    %b0 = krnl.grow %c16 : memref<?x4xf32>            // fresh: 16 rows
    %b1 = krnl.grow %c32 from %b0 : memref<?x4xf32>   // 32 rows, %b0's 16 kept; %b0 is gone
    krnl.free %b1 : memref<?x4xf32>
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, MemRefType, NoneAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException


def check_grown_type(op_name: str, memref_type: MemRefType) -> None:
    """A grown buffer has run-time rows (dim 0) and static other dims, in the default memory space."""
    shape = memref_type.get_shape()
    if not shape or shape[0] >= 0 or any(d < 0 for d in shape[1:]) or memref_type.memory_space != NoneAttr():
        raise VerifyException(f"{op_name}: a grown buffer has a dynamic dim 0 and static other dims, not {memref_type}")


@irdl_op_definition
class GrowOp(IRDLOperation):
    """`%new = krnl.grow %rows [from %old]`: a heap buffer of `rows` rows holding
    the first rows of `%old` (which it replaces; absent: a fresh buffer)."""

    name = "krnl.grow"

    T: ClassVar = VarConstraint("T", BaseAttr(MemRefType))
    rows = operand_def(IndexType)
    source = opt_operand_def(T)
    result = result_def(T)

    assembly_format = "$rows (`from` $source^)? attr-dict `:` type($result)"

    def __init__(self, rows: SSAValue, result_type: MemRefType, source: SSAValue | None = None):
        super().__init__(operands=[rows, source], result_types=[result_type])

    def verify_(self) -> None:
        check_grown_type(self.name, self.result.type)


@irdl_op_definition
class FreeOp(IRDLOperation):
    """`krnl.free %buffer`: release a buffer `krnl.grow` made."""

    name = "krnl.free"

    buffer = operand_def(MemRefType)

    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue):
        super().__init__(operands=[buffer])

    def verify_(self) -> None:
        check_grown_type(self.name, self.buffer.type)


OPS = [GrowOp, FreeOp]
