"""Emitters of krnl.string_size and krnl.string_byte (dialects/krnl_strings.py):
a string element is the LLVM struct {ptr, i64} (llvm_types.value_type)."""

from __future__ import annotations

from onnxc.codegen.function_translator import FunctionTranslator, emits
from onnxc.codegen.llvm_types import I8
from onnxc.dialects.krnl_strings import StringByteOp, StringSizeOp


@emits(StringSizeOp)
def _emit_string_size(t: FunctionTranslator, op: StringSizeOp) -> None:
    t.set(op.result, t.builder.extract_value(t.get(op.string), 1))


@emits(StringByteOp)
def _emit_string_byte(t: FunctionTranslator, op: StringByteOp) -> None:
    b = t.builder
    data = b.extract_value(t.get(op.string), 0)
    t.set(op.result, b.load(b.gep(data, [t.get(op.position)], inbounds=True, source_etype=I8), typ=I8))
