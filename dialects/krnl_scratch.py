"""Per-thread scratch buffers: `krnl.thread_scratch`.

A loop nest that the thread pool splits by its outer loop may hold buffers of
its own, one slice per iteration (a depthwise conv's transposed image per
block of channels). Placed in the arena, every slice has its own memory: an
iteration writes it cold, and the next nest that reuses those bytes writes
them from another thread, moving the lines between cores. One slice per
thread instead, reused by the iterations the thread runs, stays in its cache.

    %s = krnl.thread_scratch [4096] : memref<1x1x4096xf32>

is that slice: the calling thread's scratch memory (the runtime's, reserved
for every thread before the graph runs) from byte `offset`, valid within one
iteration of the loop holding it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, MemRefType, i64
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

SCRATCH_ALIGNMENT = 64
"""Bytes: the runtime's scratch is aligned so, and so is every offset in it."""


@irdl_op_definition
class ThreadScratchOp(IRDLOperation):
    """`%s = krnl.thread_scratch [offset] : memref<...>`: the calling thread's scratch from byte `offset`."""

    name = "krnl.thread_scratch"

    offset = prop_def(IntegerAttr)
    result = result_def(MemRefType)

    assembly_format = "`[` $offset `]` attr-dict `:` type($result)"

    def __init__(self, offset: int, result_type: MemRefType):
        super().__init__(properties={"offset": IntegerAttr(offset, i64)}, result_types=[result_type])

    def verify_(self) -> None:
        if any(d < 0 for d in self.result.type.get_shape()):
            raise VerifyException("krnl.thread_scratch: a scratch buffer has a static shape")
        offset = self.offset.value.data
        if offset < 0 or offset % SCRATCH_ALIGNMENT:
            raise VerifyException(f"krnl.thread_scratch: offset {offset} is not a multiple of {SCRATCH_ALIGNMENT}")


OPS = [ThreadScratchOp]
