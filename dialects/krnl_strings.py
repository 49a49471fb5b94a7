"""Reading string elements: `krnl.string_size`, `krnl.string_byte`.

A string element (`!onnx.string`, loaded from a memref like any element) is a
(pointer, byte length) pair pointing at UTF-8 bytes that live for the whole
call (the caller's input bytes, see docs/abi.md). The string ops of
`convert-onnx-to-krnl` read it byte by byte with these two ops; everything else
(the loops, tables, comparisons) is ordinary krnl, scf and arith.

    %n = krnl.string_size %s : index
    %c = krnl.string_byte %s[%i] : i8     // 0 <= %i < %n
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerType, i8
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def

from onnxc.dialects.types import StringType


@irdl_op_definition
class StringSizeOp(IRDLOperation):
    """`%n = krnl.string_size %s`: the string's length in bytes."""

    name = "krnl.string_size"

    string = operand_def(StringType)
    result = result_def(IndexType)

    assembly_format = "$string attr-dict `:` type($result)"

    def __init__(self, string: SSAValue):
        super().__init__(operands=[string], result_types=[IndexType()])


@irdl_op_definition
class StringByteOp(IRDLOperation):
    """`%c = krnl.string_byte %s[%i]`: byte `i` of the string (i below its size)."""

    name = "krnl.string_byte"

    string = operand_def(StringType)
    position = operand_def(IndexType)
    result = result_def(IntegerType)

    assembly_format = "$string `[` $position `]` attr-dict `:` type($result)"

    def __init__(self, string: SSAValue, position: SSAValue):
        super().__init__(operands=[string, position], result_types=[i8])


OPS = [StringSizeOp, StringByteOp]
