"""Scratch memory: one arena per graph function, planned by liveness at compile time.

Every `memref.alloc` of the function gets an offset in the arena; buffers
whose live ranges overlap get disjoint ranges. The graph function takes the
calling thread's arena from the runtime (`THREAD_ARENA`), sized here, so a run
allocates nothing (outlining.py).
"""

from __future__ import annotations

from xdsl.dialects import func, memref
from xdsl.ir import Operation, SSAValue, Use

from onnxc.codegen.llvm_types import memref_nbytes
from onnxc.codegen.weights import align_up
from onnxc.dialects.krnl import DynamicOutputOp, ViewOp
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.errors import CompileError

ARENA_ALIGNMENT = 64
THREAD_ARENA = "onnxc_thread_arena"
"""Runtime support: the calling thread's arena of at least the given bytes (NULL if it cannot be had),
64-byte aligned at least, kept for the thread's later runs."""


def plan_arena(function: func.FuncOp) -> tuple[dict[memref.AllocOp, int], int]:
    """Offsets of the function's allocs in one arena, and the arena's size.

    A buffer is live from its alloc to its last use, or the last use of a view
    of it (`krnl.view`, a Concat input computed into the Concat's buffer), all
    counted at their top-level ancestor op; buffers whose live ranges overlap
    get disjoint 64-byte aligned ranges (first fit, in program order).
    """
    body = function.body.block
    position = {op: i for i, op in enumerate(body.ops)}

    def top_level_position(op: Operation) -> int:
        while op.parent_block() is not body:
            op = op.parent_op()
        return position[op]

    placed: list[tuple[int, int, int, int]] = []  # (first, last, offset, size)
    offsets: dict[memref.AllocOp, int] = {}
    for alloc in function.walk():
        if not isinstance(alloc, memref.AllocOp):
            continue
        first = top_level_position(alloc)
        last = first
        for use in _uses_through_views(alloc.memref):
            if not isinstance(use.operation, memref.LoadOp | memref.StoreOp | MatmulOp | DynamicOutputOp):
                raise CompileError(f"codegen: a buffer may only be loaded and stored, not used by {use.operation.name}")
            last = max(last, top_level_position(use.operation))
        size = align_up(memref_nbytes(alloc.memref.type), ARENA_ALIGNMENT)
        offset = 0
        overlapping = sorted((o, o + s) for f, l, o, s in placed if f <= last and first <= l)
        for start, end in overlapping:
            if offset + size <= start:
                break
            offset = max(offset, end)
        placed.append((first, last, offset, size))
        offsets[alloc] = offset
    return offsets, max((o + s for _, _, o, s in placed), default=0)


def _uses_through_views(buffer: SSAValue) -> list[Use]:
    """The uses of a buffer and of the views of it (and of theirs), but not the views' own."""
    uses, pending = [], [buffer]
    while pending:
        for use in pending.pop().uses:
            if isinstance(use.operation, ViewOp):
                pending.append(use.operation.result)
            else:
                uses.append(use)
    return uses
