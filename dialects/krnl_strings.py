"""String elements: `krnl.string_size`, `krnl.string_byte`, `krnl.string_make`,
`krnl.string_slice`, and string graph outputs, `krnl.string_output`.

A string element (`!onnx.string`, loaded from a memref like any element) is a
(pointer, byte length) pair pointing at UTF-8 bytes that live for the whole
call: the caller's input bytes (see docs/abi.md), a constant's, or a byte
buffer a lowering filled (a `krnl.grow` buffer freed when the call ends). The
string ops of `convert-onnx-to-krnl` read strings byte by byte and make new
ones from byte buffers; everything else (loops, tables, comparisons) is
ordinary krnl, scf and arith.

    %n = krnl.string_size %s : index
    %c = krnl.string_byte %s[%i] : i8                              // 0 <= %i < %n
    %t = krnl.string_make %bytes[%offset, %n] : memref<?xi8>       // bytes offset..offset+n
    %u = krnl.string_slice %s[%offset, %n]                          // bytes of %s, offset..offset+n
    krnl.string_output %strings into %y : memref<2x?x!onnx.string>, memref<2x?x!onnx.string, "onnxc_tensor">
    krnl.string_output %strings[%extent] into %y {axis = 1} : ...  // the first extent along axis 1
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, MemRefType, i8, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from onnxc.dialects.krnl import is_library_allocated
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


@irdl_op_definition
class StringMakeOp(IRDLOperation):
    """`%t = krnl.string_make %bytes[%offset, %size]`: the string of `size` bytes
    of the byte buffer `%bytes` (memref of i8) from `offset` on."""

    name = "krnl.string_make"

    bytes = operand_def(MemRefType)
    offset = operand_def(IndexType)
    size = operand_def(IndexType)
    result = result_def(StringType)

    assembly_format = "$bytes `[` $offset `,` $size `]` attr-dict `:` type($bytes)"

    def __init__(self, buffer: SSAValue, offset: SSAValue, size: SSAValue):
        super().__init__(operands=[buffer, offset, size], result_types=[StringType()])

    def verify_(self) -> None:
        if self.bytes.type.element_type != i8 or len(self.bytes.type.get_shape()) != 1:
            raise VerifyException(f"krnl.string_make: the bytes are a memref of i8 of rank 1, not {self.bytes.type}")


@irdl_op_definition
class StringSliceOp(IRDLOperation):
    """`%u = krnl.string_slice %s[%offset, %size]`: `size` bytes of the string
    from `offset` on (within it), sharing its bytes."""

    name = "krnl.string_slice"

    string = operand_def(StringType)
    offset = operand_def(IndexType)
    size = operand_def(IndexType)
    result = result_def(StringType)

    assembly_format = "$string `[` $offset `,` $size `]` attr-dict"

    def __init__(self, string: SSAValue, offset: SSAValue, size: SSAValue):
        super().__init__(operands=[string, offset, size], result_types=[StringType()])


@irdl_op_definition
class StringOutputOp(IRDLOperation):
    """`krnl.string_output %src into %out`: the graph output `%out` (a
    library-allocated string tensor) becomes a copy of the strings of `%src` and
    their bytes, in one block the caller frees; with `[%extent]` and `axis`, of
    the first `extent` entries of `%src` along `axis` (a string output whose
    shape depends on input values, as krnl.dynamic_output)."""

    name = "krnl.string_output"

    source = operand_def(MemRefType)
    extent = opt_operand_def(IndexType)
    output = operand_def(MemRefType)
    axis = opt_prop_def(IntegerAttr)

    assembly_format = "$source (`[` $extent^ `]`)? `into` $output attr-dict `:` type($source) `,` type($output)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, source: SSAValue, output: SSAValue, extent: SSAValue | None = None, axis: int | None = None):
        properties = {} if axis is None else {"axis": IntegerAttr(axis, i64)}
        super().__init__(operands=[source, extent, output], properties=properties)

    def verify_(self) -> None:
        source, output = self.source.type, self.output.type
        if not (isinstance(source.element_type, StringType) and source.element_type == output.element_type):
            raise VerifyException("krnl.string_output: source and output are string tensors")
        if not is_library_allocated(output) or len(source.get_shape()) != len(output.get_shape()):
            raise VerifyException("krnl.string_output: the output is a library-allocated tensor of the source's rank")
        if (self.extent is None) != (self.axis is None):
            raise VerifyException("krnl.string_output: an extent goes with an axis")


OPS = [StringSizeOp, StringByteOp, StringMakeOp, StringSliceOp, StringOutputOp]
