"""Emitters of control flow and memory ops: scf, func.return, memref, krnl.global/view/dynamic_output, krnl.matmul."""

from __future__ import annotations

from collections.abc import Sequence

from llvmlite import ir
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import AnyFloat, BFloat16Type, IntegerType, i8
from xdsl.ir import Operation, SSAValue

from onnxc.codegen.function_translator import FunctionTranslator, emits
from onnxc.codegen.gemm import MatmulEmitter
from onnxc.codegen.gemm_plan import MatmulPlan
from onnxc.codegen.llvm_idioms import THREAD_SCRATCH, c_size, field_pointer, not_unrolled
from onnxc.codegen.llvm_types import (
    I1,
    I8,
    I32,
    I64,
    NULL,
    PTR,
    TENSOR,
    bfloat16_bits,
    bfloat16_from_bits,
    element_size,
    has_run_time_dims,
    memory_type,
    value_type,
)
from onnxc.codegen.parallel import trip_count
from onnxc.codegen.weights import align_up
from onnxc.dialects.krnl import DynamicOutputOp, GlobalOp, ViewOp
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.dialects.krnl_scratch import ThreadScratchOp
from onnxc.dialects.types import is_low_precision
from onnxc.errors import CompileError
from onnxc.runtime.abi import Status, tensor_field

DYNAMIC_DATA_OFFSET_ALIGNMENT = 16
"""A dynamic output's data follows its shape in one malloc block, at this alignment (malloc's)."""


# ------------------------------------------------------------------------------ control


@emits(MatmulOp)
def _emit_matmul(t: FunctionTranslator, op: MatmulOp) -> None:
    plan = MatmulPlan.of(op, t.parent.target)
    name = t.builder.function.name
    emitter = MatmulEmitter(t.parent.module, t.builder, plan, name, t.parent.declare, t.parent.gemm_kernels)
    bias = t.pointer(op.bias) if op.bias is not None else None
    sizes = [t.get(v) for v in (op.rows, op.columns, *op.image) if v is not None]
    offsets = [t.get(v) for v in op.offsets]
    first_row = t.get(op.first_row) if op.first_row is not None else None
    emitter.emit(t.pointer(op.a), t.pointer(op.b), t.pointer(op.c), bias, sizes, offsets, first_row)


@emits(func.ReturnOp)
def _emit_return(t: FunctionTranslator, op: func.ReturnOp) -> None:
    if op.operands:
        raise CompileError("codegen: func.return must have no operands")
    t.return_status(ir.Constant(I32, int(Status.OK)))


@emits(scf.ForOp)
def _emit_for(t: FunctionTranslator, op: scf.ForOp) -> None:
    b = t.builder
    (lower, upper), step = t.loop_bounds(op), t.get(op.step)
    before = b.block
    header, body, exit_ = _loop_blocks(t, "for")

    b.position_at_end(header)
    iv = b.phi(lower.type, "iv")
    iv.add_incoming(lower, before)
    carried = []
    for init in op.iter_args:
        phi = b.phi(value_type(init.type))
        phi.add_incoming(t.get(init), before)
        carried.append(phi)
    b.cbranch(b.icmp_signed("<", iv, upper), body, exit_)

    b.position_at_end(body)
    iv_arg, *carried_args = op.body.block.args
    t.set(iv_arg, iv)
    for arg, phi in zip(carried_args, carried):
        t.set(arg, phi)
    yielded = t.translate_block(op.body.block)
    latch = b.block
    iv.add_incoming(b.add(iv, step, flags=["nsw"]), latch)
    for phi, value in zip(carried, yielded):
        phi.add_incoming(value, latch)
    back_edge = b.branch(header)
    if _kept_from_full_unrolling(op):
        not_unrolled(back_edge)

    b.position_at_end(exit_)
    for result, phi in zip(op.results, carried):
        t.set(result, phi)


FULLY_UNROLLED_REDUCTIONS = (16, 256)
"""Innermost float reductions of a constant trip count in this range are kept from LLVM's full
unrolling, which runs before the loop vectorizer and left them scalar: a Softmax over rows of
64 ran its max and sum as 64 dependent scalar steps (14x onnxruntime's time; vectorized,
2.3x). Shorter ones gain little from vectors; longer ones are not fully unrolled anyway,
and are left to LLVM's own unrolling choices."""


def _kept_from_full_unrolling(op: scf.ForOp) -> bool:
    """An innermost loop carrying a float, widening bytes to floats (the taps of an int8
    depthwise conv: 56-wide rows left scalar, 3x slower than 112-wide ones), copying bytes
    (`_copies_bytes`) or taking float maxima (unrolled, SLP left llvm.maximum scalar: MaxPool
    3x3 of 192x28x28 0.49 -> 0.15 ms), with a constant trip count in FULLY_UNROLLED_REDUCTIONS."""
    widens_bytes = any(
        isinstance(inner, arith.UIToFPOp | arith.SIToFPOp) and inner.input.type == i8 for inner in op.body.walk()
    ) or _copies_bytes(op)
    takes_maxima = any(isinstance(inner, arith.MaximumfOp) for inner in op.body.walk())
    if not widens_bytes and not takes_maxima and not any(isinstance(arg.type, AnyFloat) for arg in op.iter_args):
        return False
    if any(isinstance(inner, scf.ForOp | scf.WhileOp) for inner in op.body.walk()):
        return False
    steps = trip_count(op)
    return steps is not None and FULLY_UNROLLED_REDUCTIONS[0] <= steps <= FULLY_UNROLLED_REDUCTIONS[1]


@emits(scf.IfOp)
def _emit_if(t: FunctionTranslator, op: scf.IfOp) -> None:
    b = t.builder
    then_block = b.append_basic_block("if.then")
    has_else = bool(op.false_region.blocks)
    else_block = b.append_basic_block("if.else") if has_else else None
    merge = b.append_basic_block("if.end")
    b.cbranch(t.get(op.cond), then_block, else_block or merge)

    incoming = []
    for llvm_block, region in ((then_block, op.true_region), (else_block, op.false_region)):
        if llvm_block is None:
            continue
        b.position_at_end(llvm_block)
        values = t.translate_block(region.block)
        incoming.append((values, b.block))
        b.branch(merge)

    b.position_at_end(merge)
    for i, result in enumerate(op.results):
        phi = b.phi(value_type(result.type))
        for values, pred in incoming:
            phi.add_incoming(values[i], pred)
        t.set(result, phi)


def _loop_blocks(t: FunctionTranslator, kind: str) -> tuple[ir.Block, ir.Block, ir.Block]:
    """A loop's header, body and exit blocks, the current block branching to the header."""
    blocks = tuple(t.builder.append_basic_block(f"{kind}.{part}") for part in ("header", "body", "exit"))
    t.builder.branch(blocks[0])
    return blocks


@emits(scf.WhileOp)
def _emit_while(t: FunctionTranslator, op: scf.WhileOp) -> None:
    """The before-region as the loop header (its scf.condition decides), the after-region as the body."""
    b = t.builder
    entry = b.block
    header, body, exit_ = _loop_blocks(t, "while")

    b.position_at_end(header)
    phis = []
    for arg, init in zip(op.before_region.block.args, op.arguments):
        phi = b.phi(value_type(arg.type))
        phi.add_incoming(t.get(init), entry)
        t.set(arg, phi)
        phis.append(phi)
    *computed, condition = op.before_region.block.ops
    for inner in computed:
        t.emit(inner)
    passed = [t.get(v) for v in condition.args]
    b.cbranch(t.get(condition.condition), body, exit_)

    b.position_at_end(body)
    for arg, value in zip(op.after_region.block.args, passed):
        t.set(arg, value)
    yielded = t.translate_block(op.after_region.block)
    for phi, value in zip(phis, yielded):
        phi.add_incoming(value, b.block)
    b.branch(header)

    b.position_at_end(exit_)
    for result, value in zip(op.results, passed):
        t.set(result, value)


# ------------------------------------------------------------------------------- memory


def _descriptor(t: FunctionTranslator, result: SSAValue, pointer: ir.Value, sizes: Sequence[SSAValue]) -> ir.Value:
    """A memref value: the pointer, or with run-time dims the descriptor of pointer and `sizes`."""
    if not has_run_time_dims(result.type):
        return pointer
    value = t.builder.insert_value(ir.Constant(value_type(result.type), ir.Undefined), pointer, 0)
    for position, size in enumerate(sizes, start=1):
        value = t.builder.insert_value(value, t.get(size), position)
    return value


@emits(memref.AllocOp)
def _emit_alloc(t: FunctionTranslator, op: memref.AllocOp) -> None:
    if t.arena is None:  # only zero-sized buffers, never dereferenced
        t.set(op.memref, _descriptor(t, op.memref, NULL, op.dynamic_sizes))
        return
    pointer = t.builder.gep(t.arena, [t.arena_offsets[op]], inbounds=True, source_etype=I8)
    t.set(op.memref, _descriptor(t, op.memref, pointer, op.dynamic_sizes))


@emits(ViewOp)
def _emit_view(t: FunctionTranslator, op: ViewOp) -> None:
    element = op.result.type.element_type
    if is_low_precision(element) and op.offset.value.data:  # several elements to a byte, or an odd bit width
        raise CompileError(f"codegen: no krnl.view of {element} elements at an offset")
    if is_low_precision(element) and op.dynamic_offset is not None:
        raise CompileError(f"codegen: no krnl.view of {element} elements at an offset")
    offset = ir.Constant(I64, op.offset.value.data) if op.dynamic_offset is None else t.get(op.dynamic_offset)
    pointer = t.builder.gep(t.pointer(op.base), [offset], inbounds=True, source_etype=memory_type(element))
    t.set(op.result, _descriptor(t, op.result, pointer, op.sizes))


@emits(ThreadScratchOp)
def _emit_thread_scratch(t: FunctionTranslator, op: ThreadScratchOp) -> None:
    """The scratch is taken once, at the function's entry (one thread runs a kernel's slice), and
    no other pointer reaches it: LLVM vectorized the depthwise lanes' transposes into it only so
    (an efficientnet's strided depthwise convs took 4-6x as long as from the arena)."""
    if t.thread_scratch is None:
        entry = t.builder.function.entry_basic_block
        take = t.parent.declare(THREAD_SCRATCH, PTR, [])
        take.return_value.add_attribute("noalias")
        at_entry = ir.IRBuilder(entry)
        at_entry.position_at_start(entry)
        t.thread_scratch = at_entry.call(take, [])
    offset = ir.Constant(I64, op.offset.value.data)
    t.set(op.result, t.builder.gep(t.thread_scratch, [offset], inbounds=True, source_etype=I8))


@emits(memref.DimOp)
def _emit_dim(t: FunctionTranslator, op: memref.DimOp) -> None:
    axis = t.get(op.index)
    if not isinstance(axis, ir.Constant):
        raise CompileError("codegen: memref.dim takes a constant axis")
    t.set(op.result, t.shape(op.source)[axis.constant])


@emits(GlobalOp)
def _emit_global(t: FunctionTranslator, op: GlobalOp) -> None:
    if not op.result.uses:  # e.g. a Conv's weights once their packed copy replaced them
        return
    offset = ir.Constant(I64, t.parent.weight_offset(op))
    weights = t.parent.weights_symbol()
    t.set(op.result, t.builder.gep(weights, [offset], inbounds=True, source_etype=I8))


@emits(memref.LoadOp)
def _emit_load(t: FunctionTranslator, op: memref.LoadOp) -> None:
    b = t.builder
    element = op.memref.type.element_type
    pointer = t.element_pointer(op.memref, op.indices)
    value = b.load(pointer, typ=memory_type(element), align=element_size(element))
    if isinstance(element, BFloat16Type):
        value = bfloat16_from_bits(b, value)
    t.set(op.res, value)


@emits(memref.StoreOp)
def _emit_store(t: FunctionTranslator, op: memref.StoreOp) -> None:
    b = t.builder
    element = op.memref.type.element_type
    value = t.get(op.value)
    if isinstance(element, BFloat16Type):
        value = bfloat16_bits(b, value)
    b.store(value, t.element_pointer(op.memref, op.indices), align=element_size(element))


@emits(DynamicOutputOp)
def _emit_dynamic_output(t: FunctionTranslator, op: DynamicOutputOp) -> None:
    """Allocate the output tensor's shape and data in one malloc block (shape first,
    data at the next 16-byte boundary) and copy the source's prefix along `axis`
    into it; ONNXC_ERR_NOMEM if malloc fails (the wrapper resets the tensor).
    The source's run-time dims are read from its descriptor (constants folded)."""
    b = t.builder
    source_shape = t.shape(op.source)
    axis, rank = op.axis.value.data, len(source_shape)
    element = element_size(op.source.type.element_type)
    outer = _product(b, source_shape[:axis])
    inner_bytes = _product(b, source_shape[axis + 1 :], element)
    bound = source_shape[axis]
    extent = t.get(op.extent)
    extent = b.select(b.icmp_unsigned("<", extent, bound), extent, bound)
    data_offset = align_up(rank * 8, DYNAMIC_DATA_OFFSET_ALIGNMENT)
    row_bytes = b.mul(extent, inner_bytes, flags=["nuw"])
    data_bytes = b.mul(row_bytes, outer, flags=["nuw"])
    size = b.add(data_bytes, ir.Constant(I64, data_offset), flags=["nuw"])
    block = t.call("malloc", PTR, [c_size(b, size, t.parent.target.pointer_bits)])
    with b.if_then(b.icmp_unsigned("==", block, NULL), likely=False):
        t.return_status(ir.Constant(I32, int(Status.ERR_NOMEM)))
    tensor = t.get(op.output)
    data = b.gep(block, [ir.Constant(I64, data_offset)], inbounds=True, source_etype=I8)
    b.store(data, field_pointer(b, tensor, TENSOR, tensor_field("data")))
    b.store(block, field_pointer(b, tensor, TENSOR, tensor_field("shape")))
    for position, dim in enumerate(source_shape):
        dim_pointer = b.gep(block, [ir.Constant(I64, position)], inbounds=True, source_etype=I64)
        b.store(extent if position == axis else dim, dim_pointer, align=8)
    # One memcpy per row of the dims before `axis` (row r: extent * inner elements).
    source = t.pointer(op.source)
    before = b.block
    header, body, done = (b.append_basic_block(f"dynamic_output.{n}") for n in ("header", "body", "done"))
    b.branch(header)
    b.position_at_end(header)
    row = b.phi(I64, "row")
    row.add_incoming(ir.Constant(I64, 0), before)
    b.cbranch(b.icmp_unsigned("<", row, outer), body, done)
    b.position_at_end(body)
    to = b.gep(data, [b.mul(row_bytes, row, flags=["nuw"])], source_etype=I8)
    from_offset = b.mul(row, _product(b, source_shape[axis:], element), flags=["nuw"])
    from_ = b.gep(source, [from_offset], source_etype=I8)
    t.call("llvm.memcpy.p0.p0.i64", ir.VoidType(), [to, from_, row_bytes, ir.Constant(I1, 0)])
    row.add_incoming(b.add(row, ir.Constant(I64, 1), flags=["nuw"]), b.block)
    b.branch(header)
    b.position_at_end(done)


def _product(b: ir.IRBuilder, dims: Sequence[ir.Value], scale: int = 1) -> ir.Value:
    """`scale` times the product of i64 dims, the constant ones multiplied at compile time."""
    product = None
    for dim in dims:
        if isinstance(dim, ir.Constant):
            scale *= dim.constant
        else:
            product = dim if product is None else b.mul(product, dim, flags=["nuw"])
    if product is None:
        return ir.Constant(I64, scale)
    return product if scale == 1 else b.mul(product, ir.Constant(I64, scale), flags=["nuw"])


def _copies_bytes(op: scf.ForOp) -> bool:
    """Whether every value the loop stores is a byte it loads (padding constants aside), stored
    at unit stride (the last index the loop's variable plus an invariant): the phase planes of
    a strided int8 depthwise conv, 28-wide rows split into 2 phases of 14, ran fully unrolled,
    scalar (144 channels at 56x56: 172 us; vectorized, 58). Not stores of groups interleaved
    at a stride (an im2col matrix's groups of 4: 92 -> 183 us vectorized)."""
    iv = op.body.block.args[0]
    stores = [inner for inner in op.body.walk() if isinstance(inner, memref.StoreOp)]
    loaded = [store for store in stores if not isinstance(store.value.owner, arith.ConstantOp)]
    return bool(loaded) and all(
        isinstance(store.value.owner, memref.LoadOp)
        and isinstance(store.value.type, IntegerType)
        and store.value.type.width.data == 8
        and _unit_stride(store.indices[-1], iv, op)
        for store in loaded
    )


def _unit_stride(index: SSAValue, iv: SSAValue, loop: scf.ForOp) -> bool:
    """index is iv, or iv plus a value defined outside `loop`."""
    if index is iv:
        return True
    owner = index.owner
    if not isinstance(owner, arith.AddiOp):
        return False
    other = owner.rhs if owner.lhs is iv else owner.lhs if owner.rhs is iv else None
    if other is None:
        return False
    definer = other.owner if isinstance(other.owner, Operation) else other.owner.parent_op()
    return definer is not None and not loop.is_ancestor(definer)
