"""Emitters of krnl.grow and krnl.free (dialects/krnl_growth.py): realloc and free.

A grown buffer's descriptor is its data pointer and its rows, like any memref
with a run-time dim. A request beyond half the address space (a while loop
collecting rows without end) and a failed realloc both return ONNXC_ERR_NOMEM,
the old buffer freed first, so the caller sees a typed error and nothing leaks.
"""

from __future__ import annotations

from llvmlite import ir

from onnxc.codegen.function_translator import FunctionTranslator, emits
from onnxc.codegen.llvm_idioms import c_size
from onnxc.codegen.llvm_types import I32, I64, NULL, PTR, element_size, value_type
from onnxc.dialects.krnl_growth import FreeOp, GrowOp
from onnxc.runtime.abi import Status


@emits(GrowOp)
def _emit_grow(t: FunctionTranslator, op: GrowOp) -> None:
    b = t.builder
    memref_type = op.result.type
    row_bytes = element_size(memref_type.element_type)
    for dim in memref_type.get_shape()[1:]:
        row_bytes *= dim
    row_bytes = max(row_bytes, 1)  # rows of no elements: still a valid pointer
    bits = t.parent.target.pointer_bits
    rows = t.get(op.rows)
    old = NULL if op.source is None else t.pointer(op.source)

    def out_of_memory(failed: ir.Value) -> None:
        with b.if_then(failed, likely=False):
            if op.source is not None:
                t.call("free", ir.VoidType(), [old])
            t.return_status(ir.Constant(I32, int(Status.ERR_NOMEM)))

    out_of_memory(b.icmp_unsigned(">", rows, ir.Constant(I64, (1 << (bits - 1)) // row_bytes)))
    size = b.mul(rows, ir.Constant(I64, row_bytes), flags=["nuw"])
    grown = t.call("realloc", PTR, [old, c_size(b, size, bits)])
    out_of_memory(b.icmp_unsigned("==", grown, NULL))
    descriptor = b.insert_value(ir.Constant(value_type(memref_type), ir.Undefined), grown, 0)
    t.set(op.result, b.insert_value(descriptor, rows, 1))


@emits(FreeOp)
def _emit_free(t: FunctionTranslator, op: FreeOp) -> None:
    t.call("free", ir.VoidType(), [t.pointer(op.buffer)])
