"""Emitter of krnl.check_indices (dialects/krnl_checks.py): a scan of the indices.

One pass over the indices ORs together whether each lies outside [-size, size)
(as one unsigned comparison: `index + size >= 2 * size` also catches the values
whose sum wraps) and branches once at the end, so the loop has no early exit
and vectorizes. A failure returns ONNXC_ERR_INDEX with 1 + the check's place
in the signature's `index_sites` in bits 8 and up, so that the caller can name
the node (docs/abi.md).
"""

from __future__ import annotations

from llvmlite import ir

from onnxc.codegen.function_translator import FunctionTranslator, emits
from onnxc.codegen.llvm_types import I1, I32, I64, memory_type
from onnxc.dialects.krnl_checks import CheckIndicesOp
from onnxc.runtime.abi import INDEX_SITE_SHIFT, Status


@emits(CheckIndicesOp)
def _emit_check_indices(t: FunctionTranslator, op: CheckIndicesOp) -> None:
    b = t.builder
    sizes = [t.get(size) for size in op.sizes]
    spans = [b.shl(size, ir.Constant(I64, 1)) for size in sizes]
    count = _count(b, t.shape(op.indices))
    rows = b.udiv(count, ir.Constant(I64, len(sizes)))
    data = t.pointer(op.indices)
    element = memory_type(op.indices.type.element_type)

    before = b.block
    loop = b.append_basic_block("check.indices")
    done = b.append_basic_block("check.done")
    b.cbranch(b.icmp_unsigned("!=", rows, ir.Constant(I64, 0)), loop, done)
    b.position_at_end(loop)
    row = b.phi(I64)
    outside = b.phi(I1)
    any_outside = outside
    for k, (size, span) in enumerate(zip(sizes, spans)):
        position = b.add(b.mul(row, ir.Constant(I64, len(sizes))), ir.Constant(I64, k))
        index = b.load(b.gep(data, [position], inbounds=True, source_etype=element), typ=element)
        index = b.sext(index, I64) if element.width < 64 else index
        any_outside = b.or_(any_outside, b.icmp_unsigned(">=", b.add(index, size), span))
    next_row = b.add(row, ir.Constant(I64, 1))
    row.add_incoming(ir.Constant(I64, 0), before)
    row.add_incoming(next_row, loop)
    outside.add_incoming(ir.Constant(I1, 0), before)
    outside.add_incoming(any_outside, loop)
    b.cbranch(b.icmp_unsigned("!=", next_row, rows), loop, done)
    b.position_at_end(done)
    failed = b.phi(I1)
    failed.add_incoming(ir.Constant(I1, 0), before)
    failed.add_incoming(any_outside, loop)
    site = t.parent.index_sites.index(op)
    with b.if_then(failed, likely=False):
        t.return_status(ir.Constant(I32, int(Status.ERR_INDEX) | (site + 1) << INDEX_SITE_SHIFT))


def _count(b: ir.IRBuilder, dims: list[ir.Value]) -> ir.Value:
    count = ir.Constant(I64, 1)
    for dim in dims:
        count = b.mul(count, dim)
    return count
