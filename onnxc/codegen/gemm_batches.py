"""The products of a krnl.matmul with several batch triples as one thread-pool job.

A grouped conv is one product per group (ResNeXt's 32 groups), attention over static
sizes one per head. Each product went to the pool by itself, its tiles split among the
threads: a join per product, most of them small (a ResNeXt-style block's grouped conv
ran slower on two threads than on one). Here the threads split one grid of products x
tiles instead, numbered product first: each takes a contiguous range, whole products
where there are at least as many as threads, so it also reads and writes the same
groups' channels from one nest to the next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from onnxc.codegen.gemm_plan import MatmulPlan
from onnxc.codegen.llvm_idioms import constant_global, counted_loop, parallel_for, store_fields, thread_pool_slice
from onnxc.codegen.llvm_types import I64
from onnxc.codegen.parallel import MIN_PARALLEL_WORK

if TYPE_CHECKING:
    from onnxc.codegen.gemm import MatmulEmitter


def batches_in_one_job(p: MatmulPlan) -> bool:
    """Whether the products of `p` go to the pool as one job: several, enough work together."""
    return len(p.batch) > 1 and 2 * p.m * p.n * p.k * len(p.batch) >= MIN_PARALLEL_WORK


def _pointers(p: MatmulPlan) -> int:
    """A product's pointer arguments, each moved by its offset: A, B, C and the bias if any."""
    return 3 + p.has_bias


def emit_batches(e: MatmulEmitter, arguments: list[ir.Value]) -> None:
    """Every product of `e`'s op, on the pool as one job; `arguments` are A, B and C (and the
    bias) where the op's offsets start, then the run-time sizes. The products' offsets are a
    table of the op's (its batch triples and bias offsets)."""
    b, p = e.b, e.p
    pointers = _pointers(p)
    offsets = [
        offset
        for (a, b_offset, c), bias in zip(p.batch, p.bias_offsets)
        for offset in (a, b_offset, c, bias)[:pointers]
    ]
    table_type = ir.ArrayType(I64, len(offsets))
    table = constant_global(e.module, e.module.get_unique_name(f"{e.name}.batches"), table_type)
    table.linkage = "private"
    table.initializer = ir.Constant(table_type, offsets)
    values = [*arguments, table]
    context_type = ir.LiteralStructType([value.type for value in values])
    if e.context is None:
        e.context = e.context_slot(context_type)
    store_fields(b, e.context, context_type, values)
    tiles = e.tile_count(b, e.sizes(arguments[pointers:]))
    count = b.mul(ir.Constant(I64, len(p.batch)), tiles)
    parallel_for(b, e.declare, _slice_function(e, context_type), e.context, count)


def _slice_function(e: MatmulEmitter, context_type: ir.LiteralStructType) -> ir.Function:
    """slice(context, begin, end): the tiles [begin, end) of the grid of products x tiles, one
    function per plan (the op's offsets table is in the context)."""
    if e.f.batches is not None:
        return e.f.batches
    p = e.p
    fn, b, fields, begin, end = thread_pool_slice(e.module, f"{e.name}.batches.slice", context_type)
    e.f.batches = fn
    *arguments, table = fields
    pointers = _pointers(p)
    tiles = e.tile_count(b, e.sizes(arguments[pointers:]))
    one = ir.Constant(I64, 1)
    first, last = b.udiv(begin, tiles), b.udiv(b.add(end, b.sub(tiles, one)), tiles)
    with counted_loop(b, first, last, 1, "product") as product:
        start = b.mul(product, tiles)
        from_ = b.sub(begin, start)
        from_ = b.select(b.icmp_signed("<", from_, ir.Constant(I64, 0)), ir.Constant(I64, 0), from_)
        to = b.sub(end, start)
        to = b.select(b.icmp_signed(">", to, tiles), tiles, to)
        row = b.mul(product, ir.Constant(I64, pointers))
        moved = [
            e.gep(b, pointer, b.load(b.gep(table, [b.add(row, ir.Constant(I64, k))], source_etype=I64), typ=I64))
            for k, pointer in enumerate(arguments[:pointers])
        ]
        e.tiles_of_product(b, [*moved, *arguments[pointers:]], from_, to)
    b.ret_void()
    return fn
