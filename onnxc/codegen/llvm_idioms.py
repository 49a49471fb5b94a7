"""LLVM idioms shared by the loop emitter and the GEMM emitter (gemm.py).

- Every function we make is internal with `noalias` pointer arguments.
- Every pointer is an opaque `ptr`: llvmlite types allocas and globals as
  `T*`, so those are retyped on creation.
- Work goes to the thread pool (runtime/support/onnxc_parallel.c) as a
  trampoline `slice(ptr context, i64 begin, i64 end)` and a context struct
  on the caller's stack holding the values the work needs; the trampoline
  loads them and calls the function doing the work, which thus keeps its
  `noalias` pointer arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from llvmlite import ir

from onnxc.codegen.llvm_types import I32, I64, PTR

PARALLEL_FOR = "onnxc_parallel_for"
"""Runtime support: `void onnxc_parallel_for(slice, ptr context, i64 begin, i64 end)` runs
slice(context, b, e) over [begin, end) in contiguous ranges, one per thread of the pool."""
THREAD_SCRATCH = "onnxc_thread_scratch"
"""Runtime support: the calling thread's scratch memory, as reserved (GEMM packing, krnl.thread_scratch)."""

Declare = Callable[[str, ir.Type, Sequence[ir.Type]], ir.Function]
"""The module's function `name`, declared on first use (llvm._ModuleTranslator.declare)."""


def internal_function(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
    """An internal function whose pointer arguments are `noalias`.

    That holds for every function we make: the ABI forbids outputs overlapping
    each other or inputs, the arena's live buffers are disjoint, and weights
    are never written.
    """
    function = ir.Function(module, fnty, name)
    function.linkage = "internal"
    function.attributes.add("nounwind")
    for arg in function.args:
        if arg.type == PTR:
            arg.add_attribute("noalias")
    return function


def c_size(b: ir.IRBuilder, size: ir.Value, pointer_bits: int) -> ir.Value:
    """The i64 byte count `size` as a C `size_t` argument (malloc's) on a target with `pointer_bits`-bit pointers.

    Truncating loses nothing: the code asks for copies of buffers it already holds, so on a
    32-bit target every size fits in 32 bits."""
    return size if pointer_bits == 64 else b.trunc(size, ir.IntType(pointer_bits))


def opaque(pointer: ir.Value) -> ir.Value:
    """`pointer` typed as an opaque `ptr`, like every other pointer (llvmlite would print `T*`)."""
    pointer.type = PTR
    return pointer


def constant_global(module: ir.Module, name: str, value_type: ir.Type) -> ir.GlobalVariable:
    """A constant global, referred to through an opaque `ptr`."""
    variable = ir.GlobalVariable(module, value_type, name)
    variable.global_constant = True
    return opaque(variable)


def field_pointer(b: ir.IRBuilder, pointer: ir.Value, struct: ir.LiteralStructType, index: int) -> ir.Value:
    """The address of field `index` of the `struct` at `pointer`."""
    indices = [ir.Constant(I32, 0), ir.Constant(I32, index)]
    return b.gep(pointer, indices, inbounds=True, source_etype=struct)


def stack_struct(b: ir.IRBuilder, struct: ir.LiteralStructType) -> ir.Value:
    """Room for one `struct` on the stack, here."""
    return opaque(b.alloca(struct))


def store_fields(b: ir.IRBuilder, pointer: ir.Value, struct: ir.LiteralStructType, values: Sequence[ir.Value]) -> None:
    for index, value in enumerate(values):
        b.store(value, field_pointer(b, pointer, struct, index))


def thread_pool_slice(
    module: ir.Module, name: str, context: ir.LiteralStructType
) -> tuple[ir.Function, ir.IRBuilder, list[ir.Value], ir.Value, ir.Value]:
    """A new trampoline `void name(ptr context, i64 begin, i64 end)` for `parallel_for`: the
    function, its builder (to go on with the work), the context's fields loaded, begin and end."""
    function = internal_function(module, module.get_unique_name(name), ir.FunctionType(ir.VoidType(), [PTR, I64, I64]))
    pointer, begin, end = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    fields = [b.load(field_pointer(b, pointer, context, i), typ=t) for i, t in enumerate(context.elements)]
    return function, b, fields, begin, end


def parallel_for(
    b: ir.IRBuilder, declare: Declare, slice_: ir.Function, context: ir.Value, iterations: int | ir.Value
) -> None:
    """Run `slice_(context, begin, end)` over the iterations [0, iterations) on the thread pool."""
    run = declare(PARALLEL_FOR, ir.VoidType(), [slice_.type, PTR, I64, I64])
    count = ir.Constant(I64, iterations) if isinstance(iterations, int) else iterations
    b.call(run, [slice_, context, ir.Constant(I64, 0), count])


def flat_types(value_type: ir.Type) -> list[ir.Type]:
    """A kernel's argument types for a value: a descriptor's fields one by one,
    so that its data pointer can be `noalias` (a struct argument cannot)."""
    return list(value_type.elements) if isinstance(value_type, ir.LiteralStructType) else [value_type]


def flatten(b: ir.IRBuilder, value: ir.Value) -> list[ir.Value]:
    """The arguments standing for `value` (see flat_types)."""
    if not isinstance(value.type, ir.LiteralStructType):
        return [value]
    return [b.extract_value(value, k) for k in range(len(value.type.elements))]


def unflatten(b: ir.IRBuilder, value_type: ir.Type, args: Iterator[ir.Value]) -> ir.Value:
    """The value that flatten turned into the next arguments of `args`."""
    if not isinstance(value_type, ir.LiteralStructType):
        return next(args)
    value = ir.Constant(value_type, ir.Undefined)
    for k in range(len(value_type.elements)):
        value = b.insert_value(value, next(args), k)
    return value


def not_unrolled(branch: ir.Instruction) -> None:
    """Mark the back edge `branch` as a loop LLVM must not unroll (`llvm.loop.unroll.disable`;
    the loop vectorizer still vectorizes and interleaves it). A loop ID is a node of its own
    that names itself first."""
    module = branch.parent.parent.module
    option = module.add_metadata([ir.MetaDataString(module, "llvm.loop.unroll.disable")])
    loop_id = ir.values.MDValue(module, [option], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, option)
    branch.set_metadata("llvm.loop", loop_id)


@contextmanager
def counted_loop(b: ir.IRBuilder, start: ir.Value, stop: ir.Value, step: int, name: str) -> Iterator[ir.Value]:
    """`for iv in range(start, stop, step)`: yields the induction variable, leaves b after the loop."""
    before = b.block
    header = b.append_basic_block(f"{name}.header")
    body = b.append_basic_block(f"{name}.body")
    exit_ = b.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(I64, name)
    iv.add_incoming(start, before)
    b.cbranch(b.icmp_signed("<", iv, stop), body, exit_)
    b.position_at_end(body)
    yield iv
    iv.add_incoming(b.add(iv, ir.Constant(I64, step), flags=["nsw"]), b.block)
    b.branch(header)
    b.position_at_end(exit_)
