"""Buffers of a split loop nest's iterations as per-thread scratch (krnl.thread_scratch).

A nest that the thread pool splits (parallel.py) may hold buffers of its own,
allocated for the whole loop with one slice per iteration: a depthwise conv
in the lanes transposes each block of channels into a padded image and sums
its outputs in lanes (depthwise_lanes.py). In the arena those slices are
fresh memory for every iteration, and the next nest reusing the bytes writes
them from whichever thread its own split gives them to, pulling the lines from
the other core's cache: MobileNetV2's depthwise convs at 14x14 took as long on
two threads as on one (a 192-channel conv 19 -> 22 us; 12 us with buffers of
their own memory). Here such a buffer becomes one slice in each thread's
scratch, which every iteration the thread runs reuses from its cache.

A buffer qualifies when it has a static shape, is used only by loads and
stores in the split loop's body, and every one of them indexes it by the
loop's induction variable in one dim: then iteration i touches only slice i,
whatever it leaves there no other iteration reads, and slice i may as well be
the thread's one slice. Nests holding a GEMM are left alone: its packing uses
the same scratch.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from onnxc.codegen.llvm_types import memref_nbytes
from onnxc.codegen.parallel import parallel_loop
from onnxc.codegen.weights import align_up
from onnxc.dialects.krnl_int8 import QMatmulOp
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.dialects.krnl_scratch import SCRATCH_ALIGNMENT, ThreadScratchOp


def privatize_scratch(nests: Iterable[Operation]) -> None:
    """Turn the per-iteration buffers of each split nest of `nests` into thread scratch."""
    for nest in nests:
        if any(isinstance(op, MatmulOp | QMatmulOp) for op in nest.walk()):
            continue
        split = parallel_loop(nest)
        if split is None:
            continue
        offset = 0
        for alloc, dim in _iteration_buffers(split.loop):
            offset = align_up(offset, SCRATCH_ALIGNMENT)
            _to_scratch(alloc, dim, split.loop, offset)
            offset += memref_nbytes(alloc.memref.type)


def _iteration_buffers(loop: scf.ForOp) -> list[tuple[memref.AllocOp, int]]:
    """The buffers `loop`'s iterations each have a slice of (see the module docstring), with the
    dim their accesses index by the induction variable."""
    iv = loop.body.block.args[0]
    found = []
    for buffer in dict.fromkeys(op.memref for op in loop.walk() if isinstance(op, memref.LoadOp | memref.StoreOp)):
        alloc = buffer.owner
        if not isinstance(alloc, memref.AllocOp) or alloc.dynamic_sizes or loop.is_ancestor(alloc):
            continue
        accesses = [use.operation for use in buffer.uses]
        if not all(
            isinstance(op, memref.LoadOp | memref.StoreOp) and op.memref is buffer and loop.is_ancestor(op)
            for op in accesses
        ):
            continue
        dims = set.intersection(*({d for d, index in enumerate(op.indices) if index is iv} for op in accesses))
        if dims:
            found.append((alloc, min(dims)))
    return found


def _to_scratch(alloc: memref.AllocOp, dim: int, loop: scf.ForOp, offset: int) -> None:
    """Replace `alloc` by one iteration's slice of it at `offset` of the thread's scratch."""
    old_type = alloc.memref.type
    shape = [1 if d == dim else size for d, size in enumerate(old_type.get_shape())]
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    scratch = ThreadScratchOp(offset, MemRefType(old_type.element_type, shape))
    Rewriter.insert_op([zero, scratch], InsertPoint.at_start(loop.body.block))
    for use in list(alloc.memref.uses):
        op = use.operation
        indices = [zero.result if d == dim else index for d, index in enumerate(op.indices)]
        new: Operation = (
            memref.LoadOp.get(scratch.result, indices)
            if isinstance(op, memref.LoadOp)
            else memref.StoreOp.get(op.value, scratch.result, indices)
        )
        Rewriter.replace_op(op, new)
    Rewriter.erase_op(alloc)


def scratch_bytes(ops: Iterable[Operation]) -> int:
    """The thread scratch the `krnl.thread_scratch` ops among `ops` need."""
    return max(
        (op.offset.value.data + memref_nbytes(op.result.type) for op in ops if isinstance(op, ThreadScratchOp)),
        default=0,
    )
