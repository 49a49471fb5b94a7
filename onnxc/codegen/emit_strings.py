"""Emitters of the string ops (dialects/krnl_strings.py): a string element is
the LLVM struct {ptr, i64} (llvm_types.STRING); a string graph output is
copied out by runtime/support/onnxc_strings.c."""

from __future__ import annotations

from llvmlite import ir

from onnxc.codegen.function_translator import FunctionTranslator, emits
from onnxc.codegen.llvm_types import I8, I32, I64, STRING
from onnxc.dialects.krnl_strings import StringByteOp, StringMakeOp, StringOutputOp, StringSizeOp, StringSliceOp
from onnxc.runtime.abi import Status


@emits(StringSizeOp)
def _emit_string_size(t: FunctionTranslator, op: StringSizeOp) -> None:
    t.set(op.result, t.builder.extract_value(t.get(op.string), 1))


@emits(StringByteOp)
def _emit_string_byte(t: FunctionTranslator, op: StringByteOp) -> None:
    b = t.builder
    data = b.extract_value(t.get(op.string), 0)
    t.set(op.result, b.load(b.gep(data, [t.get(op.position)], inbounds=True, source_etype=I8), typ=I8))


@emits(StringMakeOp)
def _emit_string_make(t: FunctionTranslator, op: StringMakeOp) -> None:
    b = t.builder
    data = b.gep(t.pointer(op.bytes), [t.get(op.offset)], inbounds=True, source_etype=I8)
    string = b.insert_value(ir.Constant(STRING, ir.Undefined), data, 0)
    t.set(op.result, b.insert_value(string, t.get(op.size), 1))


@emits(StringSliceOp)
def _emit_string_slice(t: FunctionTranslator, op: StringSliceOp) -> None:
    b = t.builder
    string = t.get(op.string)
    data = b.gep(b.extract_value(string, 0), [t.get(op.offset)], inbounds=True, source_etype=I8)
    t.set(op.result, b.insert_value(b.insert_value(string, data, 0), t.get(op.size), 1))


@emits(StringOutputOp)
def _emit_string_output(t: FunctionTranslator, op: StringOutputOp) -> None:
    """onnxc_string_output(source, its dims, the output's dims, rank, &tensor): the
    output's dims are the source's, the one at `axis` clamped to `extent`."""
    b = t.builder
    bound = t.shape(op.source)
    shape = list(bound)
    if op.extent is not None:
        axis = op.axis.value.data
        extent = t.get(op.extent)
        shape[axis] = b.select(b.icmp_unsigned("<", extent, bound[axis]), extent, bound[axis])
    arrays = []
    for dims in (bound, shape):
        array = b.alloca(I64, size=ir.Constant(I64, max(len(dims), 1)))
        for position, dim in enumerate(dims):
            b.store(dim, b.gep(array, [ir.Constant(I64, position)], source_etype=I64), align=8)
        arrays.append(array)
    rank = ir.Constant(I64, len(shape))
    status = t.call("onnxc_string_output", I32, [t.pointer(op.source), *arrays, rank, t.get(op.output)])
    with b.if_then(b.icmp_signed("!=", status, ir.Constant(I32, int(Status.OK))), likely=False):
        t.return_status(status)
