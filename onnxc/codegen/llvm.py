"""Translate loop-level IR (docs/design.md, "Level 3") directly into an `llvmlite.ir.Module`.

Each op class has an emitter (`_EMITTERS`); SSA values map to llvmlite values
through a dict. Memrefs become plain pointers: a load or store is a GEP with a
row-major linear index on a typed element pointer (GEP, not ptrtoint
arithmetic, so that LLVM's vectorizers see through it).

Scratch memory: every `memref.alloc` of a function gets an offset in one arena
per call, planned by liveness over the function's top-level ops; the arena is
allocated at entry and freed before returning. Constants (`krnl.global`) live
at offsets in one external hidden symbol defined by the weights object
(`weights.py`). The exported functions follow runtime/onnxc.h.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from xdsl.dialects import arith, func, math, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue, Use

from onnxc.codegen import vector_math
from onnxc.codegen.gemm import RESERVE_SCRATCH, MatmulEmitter, MatmulPlan
from onnxc.codegen.parallel import PARALLEL_FOR, ParallelLoop, parallel_loop
from onnxc.codegen.target import Target
from onnxc.codegen.weights import WEIGHT_ALIGNMENT, WEIGHTS_SYMBOL, WeightTable, align_up, uses_large_data
from onnxc.dialects.krnl import DynamicOutputOp, EntryPointOp, GlobalOp, MatmulOp, ViewOp
from onnxc.dialects.onnx import tensor_value
from onnxc.dialects.types import is_low_precision, numpy_dtype_of, onnx_type_of
from onnxc.errors import CompileError
from onnxc.runtime.abi import ABI_VERSION, DTYPE_NAMES, TENSOR_FIELDS, Status, tensor_field

ARENA_ALIGNMENT = 64
THREAD_ARENA = "onnxc_thread_arena"
"""Runtime support: the calling thread's arena of at least the given bytes (NULL if it cannot be had),
64-byte aligned at least, kept for the thread's later runs."""
DYNAMIC_DATA_OFFSET_ALIGNMENT = 16
"""A dynamic output's data follows its shape in one malloc block, at this alignment (malloc's)."""


I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
NULL = ir.Constant(PTR, None)
_LLVM_OF_C_TYPE = {"void *": PTR, "const int64_t *": PTR, "int64_t": I64, "int32_t": I32}
TENSOR = ir.LiteralStructType([_LLVM_OF_C_TYPE[c_type] for _, c_type in TENSOR_FIELDS])
_DATA, _SHAPE, _RANK, _DTYPE = (tensor_field(name) for name in ("data", "shape", "rank", "dtype"))


@dataclass
class Translation:
    """An LLVM module and the weights its code refers to (by offset in WEIGHTS_SYMBOL)."""

    module: ir.Module
    weights: WeightTable


# ----------------------------------------------------------------------------- types
#
# bfloat16 has no LLVM type usable on every target (LLVM 22 cannot select bf16
# arithmetic on ppc64le), so bf16 values are held in registers as f32 holding a
# value exactly representable in bf16, and in memory as their 16 raw bits.
# Every op producing a bf16 value rounds its f32 result to nearest even.
#
# The low-precision types (float8, float4, int4, int2) are i8 both in registers
# and in memory: their bits in the low bits of a byte, the rest zero (the
# ml_dtypes layout). Only loads, stores and same-width casts (which are free)
# see them; Cast's conversions work on the i8 bits (krnl_builder.convert).


def value_type(t: Attribute) -> ir.Type:
    """LLVM type of an SSA value of xDSL type `t`."""
    if isinstance(t, IndexType):
        return I64
    if is_low_precision(t):
        return I8
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    if isinstance(t, Float32Type | BFloat16Type):
        return ir.FloatType()
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    if isinstance(t, Float16Type):
        return ir.HalfType()
    if isinstance(t, MemRefType):
        return PTR
    raise CompileError(f"codegen: unsupported type {t}")


def memory_type(element: Attribute) -> ir.Type:
    """LLVM type of one element of a memref in memory."""
    return I16 if isinstance(element, BFloat16Type) else value_type(element)


def element_size(element: Attribute) -> int:
    return 8 if isinstance(element, IndexType) else numpy_dtype_of(element).itemsize


def static_shape_of(t: MemRefType) -> list[int]:
    """The shape of an identity-layout, static memref (the only kind codegen accepts)."""
    shape = list(t.get_shape())
    if any(d < 0 for d in shape) or not isinstance(t.layout, NoneAttr):
        raise CompileError(f"codegen: needs static, row-major memrefs, got {t}")
    return shape


def memref_nbytes(t: MemRefType) -> int:
    return int(np.prod(static_shape_of(t), dtype=np.int64)) * element_size(t.element_type)


def round_to_bfloat16(value: float) -> float:
    """`value` rounded to the nearest bfloat16 (ties to even), as a Python float."""
    bits = np.array(value, np.float32).view(np.uint32)
    if np.isnan(value):
        return value
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return float(rounded.view(np.float32))


def _int_constant(t: ir.IntType, value: int) -> ir.Constant:
    """An integer constant printed in LLVM's signed form (0xFF: i8 -1), i1 as true/false."""
    if t.width == 1:
        return ir.Constant(t, value & 1)
    value &= (1 << t.width) - 1
    if value >= 1 << (t.width - 1):
        value -= 1 << t.width
    return ir.Constant(t, value)


def _float_rank(t: ir.Type) -> int:
    return {ir.HalfType(): 16, ir.FloatType(): 32, ir.DoubleType(): 64}[t]


def _constant_global(module: ir.Module, name: str, value_type: ir.Type) -> ir.GlobalVariable:
    """A constant global, referred to through an opaque `ptr` (llvmlite would print `T*`)."""
    variable = ir.GlobalVariable(module, value_type, name)
    variable.global_constant = True
    variable.type = PTR
    return variable


class _LargeDataGlobal(ir.GlobalVariable):
    """A global in x86-64's large data model (`code_model "large"`): code reaches it
    with 64-bit offsets, so it may lie more than 2 GB away (see weights.uses_large_data)."""

    def descr(self, buf: list[str]) -> None:
        super().descr(buf)
        buf.insert(len(buf) - 1 if buf[-1] == "\n" else len(buf), ', code_model "large"')


def _fastmath(op: Operation) -> list[str]:
    attr = op.properties.get("fastmath")
    if attr is None:
        return []
    flags = sorted(str(getattr(flag, "value", flag)) for flag in attr.data)
    return ["fast"] if len(flags) == 7 else flags


# ---------------------------------------------------------------------- arena planning


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


# ------------------------------------------------------------------------- functions

Emitter = Callable[["_FunctionTranslator", Operation], None]
_EMITTERS: dict[type[Operation], Emitter] = {}


def _emits(*op_classes: type[Operation]) -> Callable[[Emitter], Emitter]:
    def register(emitter: Emitter) -> Emitter:
        for op_class in op_classes:
            _EMITTERS[op_class] = emitter
        return emitter

    return register


def _internal_function(module: ir.Module, name: str, fnty: ir.FunctionType) -> ir.Function:
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


class _FunctionTranslator:
    """Emits ops into one LLVM function; SSA values map to LLVM values through `values`."""

    def __init__(self, parent: "_ModuleTranslator", function: ir.Function, values: dict[SSAValue, ir.Value]):
        self.parent = parent
        self.builder = ir.IRBuilder(function.append_basic_block("entry"))
        self.values = values
        self.arena: ir.Value | None = None
        self.arena_offsets: dict[memref.AllocOp, int] = {}
        # A loop run for iterations [begin, end) only: the slice of one thread (see call_parallel_kernel).
        self.split_loop: tuple[scf.ForOp, ir.Value, ir.Value] | None = None

    # -- helpers used by emitters

    def get(self, value: SSAValue) -> ir.Value:
        return self.values[value]

    def set(self, value: SSAValue, llvm_value: ir.Value) -> None:
        self.values[value] = llvm_value

    def call(self, name: str, ret: ir.Type, args: Sequence[ir.Value], fastmath=()) -> ir.Value:
        fn = self.parent.declare(name, ret, [a.type for a in args])
        return self.builder.call(fn, args, fastmath=fastmath)

    def intrinsic(self, base: str, args: Sequence[ir.Value], fastmath=(), extra=()) -> ir.Value:
        """Call `llvm.<base>.<type of args[0]>`; `extra` are trailing non-overloaded args."""
        ty = args[0].type
        return self.call(f"llvm.{base}.{ty.intrinsic_name}", ty, [*args, *extra], fastmath)

    def round_if_bfloat16(self, value: ir.Value, t: Attribute) -> ir.Value:
        """Round an f32 holding a bf16 result to bf16 precision (ties to even, NaN kept quiet)."""
        if not isinstance(t, BFloat16Type):
            return value
        b = self.builder
        bits = b.bitcast(value, I32)
        lsb = b.and_(b.lshr(bits, ir.Constant(I32, 16)), ir.Constant(I32, 1))
        rounded = b.add(bits, b.add(lsb, ir.Constant(I32, 0x7FFF)))
        is_nan = b.fcmp_unordered("uno", value, value)
        quiet_nan = b.or_(bits, ir.Constant(I32, 0x400000))
        chosen = b.select(is_nan, quiet_nan, rounded)
        return b.bitcast(b.and_(chosen, _int_constant(I32, 0xFFFF0000)), ir.FloatType())

    def element_pointer(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> ir.Value:
        """Address of buffer[indices]: one GEP with the row-major linear index."""
        t = buffer.type
        shape = static_shape_of(t)
        base = self.get(buffer)
        if not indices:
            return base
        b = self.builder
        linear = self.get(indices[0])
        for dim, index in zip(shape[1:], indices[1:]):
            scaled = b.mul(linear, ir.Constant(I64, dim), flags=["nsw"])
            linear = b.add(scaled, self.get(index), flags=["nsw"])
        return b.gep(base, [linear], inbounds=True, source_etype=memory_type(t.element_type))

    def return_status(self, status: ir.Value) -> None:
        raise CompileError("codegen: func.return inside a loop nest")

    def loop_bounds(self, op: scf.ForOp) -> tuple[ir.Value, ir.Value]:
        lower, upper = self.get(op.lb), self.get(op.ub)
        if self.split_loop is None or self.split_loop[0] is not op:
            return lower, upper
        _, begin, end = self.split_loop
        b, step = self.builder, self.get(op.step)
        return (b.add(lower, b.mul(begin, step, flags=["nsw"]), flags=["nsw"]),
                b.add(lower, b.mul(end, step, flags=["nsw"]), flags=["nsw"]))  # fmt: skip

    # -- translation

    def emit(self, op: Operation) -> None:
        emitter = _EMITTERS.get(type(op))
        if emitter is None:
            raise CompileError(f"codegen: unsupported op '{op.name}'")
        emitter(self, op)

    def translate_block(self, block: Block) -> list[ir.Value]:
        """Emit the block's ops; return the values its scf.yield passes on."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                return [self.get(v) for v in op.operands]
            self.emit(op)
        return []


class _GraphFunctionTranslator(_FunctionTranslator):
    """A func.func as an internal `i32 @name(ptr...)` returning a Status.

    It owns the arena of its allocs. Each top-level loop nest becomes a
    separate `noinline` function (a kernel): LLVM's loop passes slow down with
    the size of the function holding the loops, so one function per nest
    compiles several times faster than one function holding the whole graph.
    """

    def __init__(self, parent: "_ModuleTranslator", function: func.FuncOp):
        if function.function_type.outputs.data:
            raise CompileError(f"codegen: @{function.sym_name.data} must return no results")
        self.name = function.sym_name.data
        self.body = function.body.block
        arg_types = [value_type(t) for t in function.function_type.inputs.data]
        llvm_function = _internal_function(parent.module, self.name, ir.FunctionType(I32, arg_types))
        super().__init__(parent, llvm_function, dict(zip(self.body.args, llvm_function.args)))
        self.arena_offsets, self.arena_size = plan_arena(function)

    def translate(self) -> None:
        if self.arena_size:
            self.allocate_arena()
        for position, op in enumerate(self.body.ops):
            if _is_loop_nest(op):
                self.call_kernel(op, f"{self.name}.nest{position}")
            else:
                self.emit(op)

    def allocate_arena(self) -> None:
        """The calling thread's arena, kept by the runtime across runs (runtime/support/onnxc_parallel.c)."""
        b = self.builder
        arena_of_thread = self.parent.declare(THREAD_ARENA, PTR, [I64])
        arena_of_thread.return_value.add_attribute("noalias")  # no other pointer reaches it during the run
        self.arena = b.call(arena_of_thread, [ir.Constant(I64, self.arena_size)])
        failed = b.icmp_unsigned("==", self.arena, NULL)
        with b.if_then(failed, likely=False):
            b.ret(ir.Constant(I32, int(Status.ERR_NOMEM)))

    def return_status(self, status: ir.Value) -> None:
        self.builder.ret(status)

    def call_kernel(self, nest: Operation, name: str) -> None:
        """Emit `nest` as the function `name` and call it here.

        Values the nest uses from outside are passed as arguments, except
        constants and weights, which are re-emitted inside so that LLVM still
        sees constant trip counts and the weights' alignment.
        """
        outside = _values_from_outside(nest)
        rematerialized = [v for v in outside if isinstance(v.owner, arith.ConstantOp | GlobalOp)]
        passed = [v for v in outside if v not in rematerialized]
        parallel = parallel_loop(nest)
        if parallel is not None:
            self.call_parallel_kernel(nest, name, parallel, passed, rematerialized)
            return
        fnty = ir.FunctionType(ir.VoidType(), [value_type(v.type) for v in passed])
        kernel_function = _internal_function(self.parent.module, name, fnty)
        kernel_function.attributes.add("noinline")
        arguments = dict(zip(passed, kernel_function.args))
        kernel = _FunctionTranslator(self.parent, kernel_function, arguments)
        for value in rematerialized:
            kernel.emit(value.owner)
        kernel.emit(nest)
        kernel.builder.ret_void()
        self.builder.call(kernel_function, [self.get(v) for v in passed])

    def call_parallel_kernel(
        self, nest: Operation, name: str, parallel: ParallelLoop, passed: list[SSAValue], rematerialized: list[SSAValue]
    ) -> None:
        """Emit `nest` as the function `name(passed..., i64 begin, i64 end)` running iterations
        [begin, end) of `parallel.loop`, and have the thread pool (runtime/support) call it
        through `name.slice(ptr context, i64 begin, i64 end)`, the context holding `passed`.
        The kernel keeps its `noalias` pointer arguments that way."""
        arg_types = [value_type(v.type) for v in passed]
        kernel_function = _internal_function(
            self.parent.module, name, ir.FunctionType(ir.VoidType(), [*arg_types, I64, I64])
        )
        kernel_function.attributes.add("noinline")
        *arguments, begin, end = kernel_function.args
        kernel = _FunctionTranslator(self.parent, kernel_function, dict(zip(passed, arguments)))
        for value in rematerialized:
            kernel.emit(value.owner)
        kernel.split_loop = (parallel.loop, begin, end)
        kernel.emit(nest)
        kernel.builder.ret_void()

        context_type = ir.LiteralStructType(arg_types)
        slice_function = _internal_function(
            self.parent.module, f"{name}.slice", ir.FunctionType(ir.VoidType(), [PTR, I64, I64])
        )
        context, begin, end = slice_function.args
        b = ir.IRBuilder(slice_function.append_basic_block("entry"))
        fields = [_field_pointer(b, context, context_type, index) for index in range(len(arg_types))]
        b.call(kernel_function, [*(b.load(f, typ=t) for f, t in zip(fields, arg_types)), begin, end])
        b.ret_void()

        b = self.builder
        stored = b.alloca(context_type)
        stored.type = PTR  # an opaque pointer, like every other (llvmlite would print `T*`)
        for index, value in enumerate(passed):
            b.store(self.get(value), _field_pointer(b, stored, context_type, index))
        trip_count = ir.Constant(I64, parallel.trip_count)
        self.call(PARALLEL_FOR, ir.VoidType(), [slice_function, stored, ir.Constant(I64, 0), trip_count])


def _field_pointer(b: ir.IRBuilder, pointer: ir.Value, struct: ir.LiteralStructType, index: int) -> ir.Value:
    indices = [ir.Constant(I32, 0), ir.Constant(I32, index)]
    return b.gep(pointer, indices, inbounds=True, source_etype=struct)


def _is_loop_nest(op: Operation) -> bool:
    """A top-level op worth a function of its own: a kernel, or an op with
    regions, no results and no allocs."""
    return isinstance(op, MatmulOp) or (
        bool(op.regions) and not op.results and not any(isinstance(inner, memref.AllocOp) for inner in op.walk())
    )


def _values_from_outside(op: Operation) -> list[SSAValue]:
    """The values `op`'s nested ops use but that are defined outside `op`, in first-use order."""
    found: dict[SSAValue, None] = {}
    for inner in op.walk():
        for operand in inner.operands:
            owner = operand.owner
            defining_op = owner.parent_op() if isinstance(owner, Block) else owner
            if defining_op is None or not op.is_ancestor(defining_op):
                found.setdefault(operand)
    return list(found)


# --------------------------------------------------------------------- emitters: control


@_emits(MatmulOp)
def _emit_matmul(t: _FunctionTranslator, op: MatmulOp) -> None:
    plan = MatmulPlan.of(op, t.parent.target)
    name = t.builder.function.name
    emitter = MatmulEmitter(t.parent.module, t.builder, plan, name, t.parent.declare, t.parent.gemm_kernels)
    emitter.emit(t.get(op.a), t.get(op.b), t.get(op.c), t.get(op.bias) if op.bias is not None else None)


@_emits(func.ReturnOp)
def _emit_return(t: _FunctionTranslator, op: func.ReturnOp) -> None:
    if op.operands:
        raise CompileError("codegen: func.return must have no operands")
    t.return_status(ir.Constant(I32, int(Status.OK)))


@_emits(scf.ForOp)
def _emit_for(t: _FunctionTranslator, op: scf.ForOp) -> None:
    b = t.builder
    (lower, upper), step = t.loop_bounds(op), t.get(op.step)
    before = b.block
    header = b.append_basic_block("for.header")
    body = b.append_basic_block("for.body")
    exit_ = b.append_basic_block("for.exit")
    b.branch(header)

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
    b.branch(header)

    b.position_at_end(exit_)
    for result, phi in zip(op.results, carried):
        t.set(result, phi)


@_emits(scf.IfOp)
def _emit_if(t: _FunctionTranslator, op: scf.IfOp) -> None:
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


# ---------------------------------------------------------------------- emitters: memory


@_emits(memref.AllocOp)
def _emit_alloc(t: _FunctionTranslator, op: memref.AllocOp) -> None:
    if t.arena is None:  # only zero-sized buffers, never dereferenced
        t.set(op.memref, NULL)
        return
    offset = ir.Constant(I64, t.arena_offsets[op])
    t.set(op.memref, t.builder.gep(t.arena, [offset], inbounds=True, source_etype=ir.IntType(8)))


@_emits(ViewOp)
def _emit_view(t: _FunctionTranslator, op: ViewOp) -> None:
    element = op.result.type.element_type
    if is_low_precision(element):  # several elements to a byte, or an odd bit width
        raise CompileError(f"codegen: no krnl.view of {element} elements")
    offset = ir.Constant(I64, op.offset.value.data)
    t.set(op.result, t.builder.gep(t.get(op.base), [offset], inbounds=True, source_etype=memory_type(element)))


@_emits(GlobalOp)
def _emit_global(t: _FunctionTranslator, op: GlobalOp) -> None:
    if not op.result.uses:  # e.g. a Conv's weights once their packed copy replaced them
        return
    offset = ir.Constant(I64, t.parent.weight_offset(op))
    weights = t.parent.weights_symbol()
    t.set(op.result, t.builder.gep(weights, [offset], inbounds=True, source_etype=ir.IntType(8)))


@_emits(memref.LoadOp)
def _emit_load(t: _FunctionTranslator, op: memref.LoadOp) -> None:
    b = t.builder
    element = op.memref.type.element_type
    pointer = t.element_pointer(op.memref, op.indices)
    value = b.load(pointer, typ=memory_type(element), align=element_size(element))
    if isinstance(element, BFloat16Type):
        value = b.bitcast(b.shl(b.zext(value, I32), ir.Constant(I32, 16)), ir.FloatType())
    t.set(op.res, value)


@_emits(memref.StoreOp)
def _emit_store(t: _FunctionTranslator, op: memref.StoreOp) -> None:
    b = t.builder
    element = op.memref.type.element_type
    value = t.get(op.value)
    if isinstance(element, BFloat16Type):
        value = _bfloat16_bits(b, value)
    b.store(value, t.element_pointer(op.memref, op.indices), align=element_size(element))


@_emits(DynamicOutputOp)
def _emit_dynamic_output(t: _FunctionTranslator, op: DynamicOutputOp) -> None:
    """Allocate the output tensor's shape and data in one malloc block (shape first,
    data at the next 16-byte boundary) and copy the source's prefix along `axis`
    into it; ONNXC_ERR_NOMEM if malloc fails (the wrapper resets the tensor)."""
    b = t.builder
    source_shape = static_shape_of(op.source.type)
    axis, rank = op.axis.value.data, len(source_shape)
    element = element_size(op.source.type.element_type)
    outer = int(np.prod(source_shape[:axis], dtype=np.int64))
    inner_bytes = int(np.prod(source_shape[axis + 1 :], dtype=np.int64)) * element
    bound = source_shape[axis]
    extent = t.get(op.extent)
    extent = b.select(b.icmp_unsigned("<", extent, ir.Constant(I64, bound)), extent, ir.Constant(I64, bound))
    data_offset = align_up(rank * 8, DYNAMIC_DATA_OFFSET_ALIGNMENT)
    row_bytes = b.mul(extent, ir.Constant(I64, inner_bytes), flags=["nuw"])
    data_bytes = b.mul(row_bytes, ir.Constant(I64, outer), flags=["nuw"])
    block = t.call("malloc", PTR, [b.add(data_bytes, ir.Constant(I64, data_offset), flags=["nuw"])])
    with b.if_then(b.icmp_unsigned("==", block, NULL), likely=False):
        t.return_status(ir.Constant(I32, int(Status.ERR_NOMEM)))
    tensor = t.get(op.output)
    data = b.gep(block, [ir.Constant(I64, data_offset)], inbounds=True, source_etype=ir.IntType(8))
    b.store(data, _field_pointer(b, tensor, TENSOR, _DATA))
    b.store(block, _field_pointer(b, tensor, TENSOR, _SHAPE))
    for position, dim in enumerate(source_shape):
        dim_pointer = b.gep(block, [ir.Constant(I64, position)], inbounds=True, source_etype=I64)
        b.store(extent if position == axis else ir.Constant(I64, dim), dim_pointer, align=8)
    # One memcpy per row of the dims before `axis` (row r: extent * inner elements).
    source = t.get(op.source)
    before = b.block
    header, body, done = (b.append_basic_block(f"dynamic_output.{n}") for n in ("header", "body", "done"))
    b.branch(header)
    b.position_at_end(header)
    row = b.phi(I64, "row")
    row.add_incoming(ir.Constant(I64, 0), before)
    b.cbranch(b.icmp_unsigned("<", row, ir.Constant(I64, outer)), body, done)
    b.position_at_end(body)
    to = b.gep(data, [b.mul(row_bytes, row, flags=["nuw"])], source_etype=ir.IntType(8))
    from_offset = b.mul(row, ir.Constant(I64, bound * inner_bytes), flags=["nuw"])
    from_ = b.gep(source, [from_offset], source_etype=ir.IntType(8))
    t.call("llvm.memcpy.p0.p0.i64", ir.VoidType(), [to, from_, row_bytes, ir.Constant(I1, 0)])
    row.add_incoming(b.add(row, ir.Constant(I64, 1), flags=["nuw"]), b.block)
    b.branch(header)
    b.position_at_end(done)


def _bfloat16_bits(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """The 16 bits of a bf16 value held (exactly) in an f32."""
    return b.trunc(b.lshr(b.bitcast(value, I32), ir.Constant(I32, 16)), I16)


# ----------------------------------------------------------------------- emitters: arith


@_emits(arith.ConstantOp)
def _emit_constant(t: _FunctionTranslator, op: arith.ConstantOp) -> None:
    attr, rtype = op.value, op.result.type
    ty = value_type(rtype)
    if isinstance(attr, IntegerAttr):
        t.set(op.result, _int_constant(ty, attr.value.data))
    elif isinstance(attr, FloatAttr):
        value = attr.value.data
        if isinstance(rtype, BFloat16Type):
            value = round_to_bfloat16(value)
        t.set(op.result, ir.Constant(ty, value))
    else:
        raise CompileError(f"codegen: unsupported constant {attr}")


_INT_BINARY = {
    arith.AddiOp: "add",
    arith.SubiOp: "sub",
    arith.MuliOp: "mul",
    arith.DivSIOp: "sdiv",
    arith.DivUIOp: "udiv",
    arith.RemSIOp: "srem",
    arith.RemUIOp: "urem",
    arith.AndIOp: "and_",
    arith.OrIOp: "or_",
    arith.XOrIOp: "xor",
    arith.ShLIOp: "shl",
    arith.ShRUIOp: "lshr",
    arith.ShRSIOp: "ashr",
}
_FLOAT_BINARY = {arith.AddfOp: "fadd", arith.SubfOp: "fsub", arith.MulfOp: "fmul", arith.DivfOp: "fdiv"}
# Ops that are LLVM intrinsics overloaded on their operand type: op class -> intrinsic.
_INTRINSIC_OPS = {
    arith.MinSIOp: "smin",
    arith.MaxSIOp: "smax",
    arith.MinUIOp: "umin",
    arith.MaxUIOp: "umax",
    arith.MinimumfOp: "minimum",
    arith.MaximumfOp: "maximum",
    arith.MinnumfOp: "minnum",
    arith.MaxnumfOp: "maxnum",
    math.PowFOp: "pow",
    math.CopySignOp: "copysign",
    math.FmaOp: "fma",
    math.SqrtOp: "sqrt",
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.AbsFOp: "fabs",
    math.FloorOp: "floor",
    math.CeilOp: "ceil",
    math.TruncOp: "trunc",
    math.RoundOp: "round",
    math.RoundEvenOp: "rint",  # nearest, ties to even in the default FP environment; roundeven is a libm call glibc < 2.25 lacks
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.CtPopOp: "ctpop",
}
# Integer intrinsics with a trailing i1 "poison on 0 / INT_MIN" flag; false: defined everywhere.
_INT_INTRINSIC_WITH_FLAG = {math.AbsIOp: "abs", math.CountLeadingZerosOp: "ctlz", math.CountTrailingZerosOp: "cttz"}
# Float functions called from libm (`name` for f64, `namef` otherwise).
_LIBM_OPS = {
    math.TanhOp: "tanh",
    math.ErfOp: "erf",
    math.TanOp: "tan",
    math.AtanOp: "atan",
    math.Atan2Op: "atan2",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
    math.CbrtOp: "cbrt",
    math.ExpM1Op: "expm1",
    math.Log1pOp: "log1p",
}


# Float32 functions with inlinable, vectorizable definitions (vector_math.py).
_VECTOR_MATH_OPS = {math.ExpOp: "exp", math.LogOp: "log", math.TanhOp: "tanh", math.ErfOp: "erf"}


def _widen(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fpext(x, ir.FloatType()) if x.type == ir.HalfType() else x


def _narrow(b: ir.IRBuilder, x: ir.Value, ty: ir.Type) -> ir.Value:
    return b.fptrunc(x, ty) if ty != x.type else x


def _result(op: Operation) -> SSAValue:
    (result,) = op.results
    return result


def _register_table_emitters() -> None:
    def int_binary(method: str) -> Emitter:
        def emit(t: _FunctionTranslator, op: Operation) -> None:
            lhs, rhs = (t.get(v) for v in op.operands)
            t.set(_result(op), getattr(t.builder, method)(lhs, rhs))

        return emit

    def float_binary(method: str) -> Emitter:
        def emit(t: _FunctionTranslator, op: Operation) -> None:
            lhs, rhs = (t.get(v) for v in op.operands)
            value = getattr(t.builder, method)(lhs, rhs, flags=_fastmath(op))
            t.set(_result(op), t.round_if_bfloat16(value, _result(op).type))

        return emit

    def intrinsic(base: str, extra: tuple[ir.Value, ...] = ()) -> Emitter:
        def emit(t: _FunctionTranslator, op: Operation) -> None:
            args = [t.get(v) for v in op.operands]
            value = t.intrinsic(base, args, _fastmath(op), extra)
            t.set(_result(op), t.round_if_bfloat16(value, _result(op).type))

        return emit

    def libm(name: str) -> Emitter:
        def emit(t: _FunctionTranslator, op: Operation) -> None:
            b = t.builder
            args = [t.get(v) for v in op.operands]
            ty = args[0].type
            # Half precision goes through the f32 function.
            compute = ir.DoubleType() if ty == ir.DoubleType() else ir.FloatType()
            if ty != compute:
                args = [b.fpext(a, compute) for a in args]
            value = t.call(name if compute == ir.DoubleType() else name + "f", compute, args, _fastmath(op))
            if ty != compute:
                value = b.fptrunc(value, ty)
            t.set(_result(op), t.round_if_bfloat16(value, _result(op).type))

        return emit

    for op_class, method in _INT_BINARY.items():
        _EMITTERS[op_class] = int_binary(method)
    for op_class, method in _FLOAT_BINARY.items():
        _EMITTERS[op_class] = float_binary(method)
    for op_class, base in _INTRINSIC_OPS.items():
        _EMITTERS[op_class] = intrinsic(base)
    for op_class, base in _INT_INTRINSIC_WITH_FLAG.items():
        _EMITTERS[op_class] = intrinsic(base, (ir.Constant(I1, 0),))
    for op_class, name in _LIBM_OPS.items():
        _EMITTERS[op_class] = libm(name)

    def vectorizable(name: str, wide: Emitter) -> Emitter:
        """Float types up to f32 through vector_math's inlined polynomial, f64 through `wide`."""

        def emit(t: _FunctionTranslator, op: Operation) -> None:
            (x,) = (t.get(v) for v in op.operands)
            if x.type == ir.DoubleType():
                return wide(t, op)
            b = t.builder
            value = b.call(vector_math.float32_function(t.parent.module, name), [_widen(b, x)])
            t.set(_result(op), t.round_if_bfloat16(_narrow(b, value, x.type), _result(op).type))

        return emit

    for op_class, name in _VECTOR_MATH_OPS.items():
        _EMITTERS[op_class] = vectorizable(name, _EMITTERS[op_class])


_register_table_emitters()


@_emits(arith.NegfOp)
def _emit_negf(t: _FunctionTranslator, op: arith.NegfOp) -> None:
    t.set(op.result, t.builder.fneg(t.get(op.operand), flags=_fastmath(op)))


@_emits(math.RsqrtOp)
def _emit_rsqrt(t: _FunctionTranslator, op: math.RsqrtOp) -> None:
    x = t.get(op.operand)
    flags = _fastmath(op)
    root = t.intrinsic("sqrt", [x], flags)
    value = t.builder.fdiv(ir.Constant(x.type, 1.0), root, flags=flags)
    t.set(op.result, t.round_if_bfloat16(value, op.result.type))


@_emits(math.FPowIOp)
def _emit_fpowi(t: _FunctionTranslator, op: math.FPowIOp) -> None:
    base, exponent = t.get(op.lhs), t.get(op.rhs)
    name = f"llvm.powi.{base.type.intrinsic_name}.{exponent.type.intrinsic_name}"
    value = t.call(name, base.type, [base, exponent], _fastmath(op))
    t.set(op.result, t.round_if_bfloat16(value, op.result.type))


@_emits(arith.FloorDivSIOp, arith.CeilDivSIOp, arith.CeilDivUIOp)
def _emit_rounding_division(t: _FunctionTranslator, op: Operation) -> None:
    """Division rounding to -inf (floordivsi) or +inf (ceildiv*i): adjust the truncated quotient."""
    b = t.builder
    lhs, rhs = (t.get(v) for v in op.operands)
    zero = ir.Constant(lhs.type, 0)
    if isinstance(op, arith.CeilDivUIOp):
        quotient, remainder = b.udiv(lhs, rhs), b.urem(lhs, rhs)
        adjust = b.icmp_unsigned("!=", remainder, zero)
        t.set(_result(op), b.add(quotient, b.zext(adjust, lhs.type)))
        return
    quotient, remainder = b.sdiv(lhs, rhs), b.srem(lhs, rhs)
    inexact = b.icmp_signed("!=", remainder, zero)
    remainder_negative, divisor_negative = (b.icmp_signed("<", v, zero) for v in (remainder, rhs))
    same_sign = b.icmp_unsigned("==", remainder_negative, divisor_negative)
    if isinstance(op, arith.FloorDivSIOp):
        adjust = b.and_(inexact, b.not_(same_sign))
        t.set(_result(op), b.sub(quotient, b.zext(adjust, lhs.type)))
    else:
        adjust = b.and_(inexact, same_sign)
        t.set(_result(op), b.add(quotient, b.zext(adjust, lhs.type)))


_ICMP = {
    "eq": ("icmp_signed", "=="),
    "ne": ("icmp_signed", "!="),
    "slt": ("icmp_signed", "<"),
    "sle": ("icmp_signed", "<="),
    "sgt": ("icmp_signed", ">"),
    "sge": ("icmp_signed", ">="),
    "ult": ("icmp_unsigned", "<"),
    "ule": ("icmp_unsigned", "<="),
    "ugt": ("icmp_unsigned", ">"),
    "uge": ("icmp_unsigned", ">="),
}


@_emits(arith.CmpiOp)
def _emit_cmpi(t: _FunctionTranslator, op: arith.CmpiOp) -> None:
    method, predicate = _ICMP[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
    t.set(op.result, getattr(t.builder, method)(predicate, t.get(op.lhs), t.get(op.rhs)))


@_emits(arith.CmpfOp)
def _emit_cmpf(t: _FunctionTranslator, op: arith.CmpfOp) -> None:
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    # llvmlite passes LLVM's own predicate names (oeq, ult, ...) through unchanged.
    t.set(op.result, t.builder.fcmp_ordered(predicate, t.get(op.lhs), t.get(op.rhs), flags=_fastmath(op)))


@_emits(arith.SelectOp)
def _emit_select(t: _FunctionTranslator, op: arith.SelectOp) -> None:
    t.set(op.result, t.builder.select(t.get(op.cond), t.get(op.lhs), t.get(op.rhs)))


# ------------------------------------------------------------------------ emitters: casts


def _cast_operand(op: Operation) -> SSAValue:
    (operand,) = op.operands
    return operand


@_emits(arith.ExtFOp, arith.TruncFOp)
def _emit_float_cast(t: _FunctionTranslator, op: Operation) -> None:
    b = t.builder
    value, result = t.get(_cast_operand(op)), _result(op)
    target = value_type(result.type)
    if _float_rank(target) > _float_rank(value.type):
        value = b.fpext(value, target)
    elif _float_rank(target) < _float_rank(value.type):
        value = b.fptrunc(value, target)
    t.set(result, t.round_if_bfloat16(value, result.type))


@_emits(arith.TruncIOp, arith.ExtSIOp, arith.ExtUIOp, arith.IndexCastOp)
def _emit_int_cast(t: _FunctionTranslator, op: Operation) -> None:
    b = t.builder
    value, result = t.get(_cast_operand(op)), _result(op)
    target = value_type(result.type)
    if target.width < value.type.width:
        value = b.trunc(value, target)
    elif target.width > value.type.width:
        value = b.zext(value, target) if isinstance(op, arith.ExtUIOp) else b.sext(value, target)
    t.set(result, value)


@_emits(arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp)
def _emit_int_float_cast(t: _FunctionTranslator, op: Operation) -> None:
    method = {arith.SIToFPOp: "sitofp", arith.UIToFPOp: "uitofp", arith.FPToSIOp: "fptosi", arith.FPToUIOp: "fptoui"}[
        type(op)
    ]
    result = _result(op)
    value = getattr(t.builder, method)(t.get(_cast_operand(op)), value_type(result.type))
    t.set(result, t.round_if_bfloat16(value, result.type))


@_emits(arith.BitcastOp)
def _emit_bitcast(t: _FunctionTranslator, op: arith.BitcastOp) -> None:
    b = t.builder
    operand, result = _cast_operand(op), _result(op)
    value = t.get(operand)
    if isinstance(operand.type, BFloat16Type):
        value = _bfloat16_bits(b, value)
    if isinstance(result.type, BFloat16Type):
        value = b.bitcast(b.shl(b.zext(value, I32), ir.Constant(I32, 16)), ir.FloatType())
    else:
        value = b.bitcast(value, value_type(result.type))
    t.set(result, value)


@_emits(UnrealizedConversionCastOp)
def _emit_unrealized_cast(t: _FunctionTranslator, op: UnrealizedConversionCastOp) -> None:
    """A cast between types with one LLVM type (ui8 <-> i8: how unsigned values reach arith)."""
    for operand, result in zip(op.inputs, op.outputs, strict=True):
        value = t.get(operand)
        if value.type != value_type(result.type):
            raise CompileError(f"codegen: cannot cast {operand.type} to {result.type}")
        t.set(result, value)


# --------------------------------------------------------------------------- the module


class _ModuleTranslator:
    def __init__(self, module: ModuleOp, target: Target, model_name: str):
        self.source = module
        self.target = target
        self.model_name = model_name
        self.module = ir.Module(name=model_name)
        self.module.triple = target.triple
        self.module.data_layout = str(target.target_machine().target_data)
        self.weights = WeightTable()
        self._weight_offsets: dict[Attribute, int] = {}
        self._weights_symbol: ir.GlobalVariable | None = None
        self.gemm_kernels: dict = {}  # see gemm.MatmulEmitter.micro_kernel

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """The function `name` of the module, declared on first use."""
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        fn.attributes.add("nounwind")
        return fn

    def weight_offset(self, op: GlobalOp) -> int:
        return self._weight_offsets[op.value]

    def weights_symbol(self) -> ir.GlobalVariable:
        assert self._weights_symbol is not None
        return self._weights_symbol

    def collect_weights(self) -> None:
        """Lay out every used krnl.global value (each distinct value once) and declare the symbol."""
        for op in self.source.walk():
            if not isinstance(op, GlobalOp) or op.value in self._weight_offsets or not op.result.uses:
                continue
            array = tensor_value(op, op.value)
            element = op.result.type.element_type
            if array.dtype != numpy_dtype_of(element) or list(array.shape) != static_shape_of(op.result.type):
                raise CompileError(
                    f"codegen: krnl.global value {array.dtype}{list(array.shape)} does not "
                    f"match its type {op.result.type}"
                )
            self._weight_offsets[op.value] = self.weights.add(array)
        if self._weight_offsets:
            blob = ir.ArrayType(ir.IntType(8), self.weights.size)
            symbol = _constant_global(self.module, WEIGHTS_SYMBOL, blob)
            if uses_large_data(self.target, self.weights.size):
                symbol.__class__ = _LargeDataGlobal
            symbol.linkage = "external"
            symbol.visibility = "hidden"
            symbol.align = WEIGHT_ALIGNMENT
            self._weights_symbol = symbol

    def translate(self) -> Translation:
        entry = self.entry_point()
        self.collect_weights()
        functions = {}
        for op in self.source.ops:
            if isinstance(op, func.FuncOp):
                _GraphFunctionTranslator(self, op).translate()
                functions[op.sym_name.data] = op
            elif not isinstance(op, EntryPointOp):
                raise CompileError(f"codegen: unexpected top-level op '{op.name}'")
        graph = functions.get(entry.func.root_reference.data)
        if graph is None:
            raise CompileError(f"codegen: entry point function {entry.func} is not defined")
        _WrapperBuilder(self, graph, entry).build()
        return Translation(self.module, self.weights)

    def entry_point(self) -> EntryPointOp:
        entries = [op for op in self.source.ops if isinstance(op, EntryPointOp)]
        if len(entries) != 1:
            raise CompileError(f"codegen: expected one krnl.entry_point, found {len(entries)}")
        return entries[0]


@dataclass
class _TensorSpec:
    name: str
    memref: MemRefType

    @property
    def dtype(self) -> int:
        return onnx_type_of(self.memref.element_type)

    @property
    def dynamic(self) -> bool:
        """An output whose dims (-1 where unknown) are set at run time: the library allocates it."""
        return any(d < 0 for d in self.memref.get_shape())

    @property
    def shape(self) -> list[int]:
        if self.dynamic:  # -1 for a dim known at run time only
            return [max(d, -1) for d in self.memref.get_shape()]
        return static_shape_of(self.memref)

    def signature(self) -> dict:
        entry = {"name": self.name, "dtype": DTYPE_NAMES[self.dtype], "shape": self.shape}
        return entry | {"dynamic": True} if self.dynamic else entry


class _WrapperBuilder:
    """The exported functions of runtime/onnxc.h around the graph function."""

    def __init__(self, parent: _ModuleTranslator, graph: func.FuncOp, entry: EntryPointOp):
        self.parent = parent
        self.module = parent.module
        self.graph = parent.module.globals[graph.sym_name.data]
        input_names = [n.data for n in entry.input_names.data]
        output_names = [n.data for n in entry.output_names.data]
        arg_types = list(graph.function_type.inputs.data)
        if len(arg_types) != len(input_names) + len(output_names) or not all(
            isinstance(t, MemRefType) for t in arg_types
        ):
            raise CompileError(
                f"codegen: @{graph.sym_name.data} must take {len(input_names)} input and "
                f"{len(output_names)} output memrefs"
            )
        self.inputs = [_TensorSpec(n, t) for n, t in zip(input_names, arg_types)]
        output_types = arg_types[len(input_names) :]
        self.outputs = [_TensorSpec(n, t) for n, t in zip(output_names, output_types)]

    def build(self) -> None:
        self.build_run_main_graph()
        self.build_signature()
        self.build_abi_version()
        self.build_free_tensor()

    def exported(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.IRBuilder:
        fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        fn.attributes.add("nounwind")
        return ir.IRBuilder(fn.append_basic_block("entry"))

    def build_run_main_graph(self) -> None:
        """Check the counts and every tensor (see onnxc.h), then run the graph function."""
        b = self.builder = self.exported("run_main_graph", I32, [PTR, I64, PTR, I64])
        self.failures: dict[Status, ir.Block] = {}
        inputs, num_inputs, outputs, num_outputs = b.function.args
        self.fail_unless_equal(num_inputs, len(self.inputs), Status.ERR_ARITY)
        self.fail_unless_equal(num_outputs, len(self.outputs), Status.ERR_ARITY)
        arguments = []
        for array, specs in ((inputs, self.inputs), (outputs, self.outputs)):
            if specs:
                self.fail_if(b.icmp_unsigned("==", array, NULL), Status.ERR_NULL)
            for index, spec in enumerate(specs):
                arguments.append(None if spec.dynamic else self.check_tensor(array, index, spec))
        dynamic = [index for index, spec in enumerate(self.outputs) if spec.dynamic]
        for index in dynamic:  # not checked: the library fills in every field
            spec = self.outputs[index]
            tensor = b.gep(outputs, [ir.Constant(I64, index)], inbounds=True, source_etype=TENSOR)
            fields = [NULL, NULL, ir.Constant(I64, len(spec.shape)), ir.Constant(I32, spec.dtype), ir.Constant(I32, 0)]
            for number, value in enumerate(fields):
                b.store(value, _field_pointer(b, tensor, TENSOR, number))
            arguments[len(self.inputs) + index] = tensor
        self.reserve_scratch()
        status = b.call(self.graph, arguments)
        if dynamic:  # on failure, no dynamic output keeps memory: each is reset to NULL
            with b.if_then(b.icmp_unsigned("!=", status, ir.Constant(I32, int(Status.OK))), likely=False):
                for index in dynamic:
                    tensor = b.gep(outputs, [ir.Constant(I64, index)], inbounds=True, source_etype=TENSOR)
                    self.release(b, tensor)
        b.ret(status)

        for status, block in self.failures.items():
            b.position_at_end(block)
            b.ret(ir.Constant(I32, int(status)))

    def reserve_scratch(self) -> None:
        """Have the runtime reserve the calling thread's GEMM packing scratch (see gemm.py); ERR_NOMEM if it cannot."""
        target = self.parent.target
        plans = (MatmulPlan.of(op, target) for op in self.parent.source.walk() if isinstance(op, MatmulOp))
        needed = max((plan.scratch_bytes for plan in plans), default=0)
        if needed:
            reserve = self.parent.declare(RESERVE_SCRATCH, I32, [I64])
            status = self.builder.call(reserve, [ir.Constant(I64, needed)])
            self.fail_if(self.builder.icmp_signed("!=", status, ir.Constant(I32, 0)), Status.ERR_NOMEM)

    def release(self, b: ir.IRBuilder, tensor: ir.Value) -> None:
        """Free a dynamic output's block (its shape pointer; free(NULL) is harmless) and NULL its pointers."""
        shape_field = _field_pointer(b, tensor, TENSOR, _SHAPE)
        b.call(self.parent.declare("free", ir.VoidType(), [PTR]), [b.load(shape_field, typ=PTR)])
        b.store(NULL, shape_field)
        b.store(NULL, _field_pointer(b, tensor, TENSOR, _DATA))

    def build_free_tensor(self) -> None:
        """void onnxc_free_tensor(onnxc_tensor *): release a dynamic output (NULL or already freed: no-op)."""
        b = self.exported("onnxc_free_tensor", ir.VoidType(), [PTR])
        (tensor,) = b.function.args
        with b.if_then(b.icmp_unsigned("!=", tensor, NULL)):
            self.release(b, tensor)
        b.ret_void()

    def fail_if(self, condition: ir.Value, status: Status) -> None:
        """Return `status` if `condition` holds, else go on in a new block."""
        b = self.builder
        if status not in self.failures:
            self.failures[status] = b.function.append_basic_block(f"fail.{status.name.lower()}")
        passed = b.function.append_basic_block("checked")
        b.cbranch(condition, self.failures[status], passed)
        b.position_at_end(passed)

    def fail_unless_equal(self, actual: ir.Value, expected: int, status: Status) -> None:
        differs = self.builder.icmp_signed("!=", actual, ir.Constant(actual.type, expected))
        self.fail_if(differs, status)

    def check_tensor(self, array: ir.Value, index: int, spec: _TensorSpec) -> ir.Value:
        """Compare tensor `array[index]` with `spec`; return its data pointer."""
        b = self.builder

        def field(number: int, ty: ir.Type, align: int) -> ir.Value:
            indices = [ir.Constant(I64, index), ir.Constant(I32, number)]
            address = b.gep(array, indices, inbounds=True, source_etype=TENSOR)
            return b.load(address, typ=ty, align=align)

        data, shape = field(_DATA, PTR, 8), field(_SHAPE, PTR, 8)
        self.fail_if(b.icmp_unsigned("==", data, NULL), Status.ERR_NULL)
        self.fail_if(b.icmp_unsigned("==", shape, NULL), Status.ERR_NULL)
        self.fail_unless_equal(field(_DTYPE, I32, 4), spec.dtype, Status.ERR_DTYPE)
        self.fail_unless_equal(field(_RANK, I64, 8), len(spec.shape), Status.ERR_RANK)
        for axis, dim in enumerate(spec.shape):
            pointer = b.gep(shape, [ir.Constant(I64, axis)], inbounds=True, source_etype=I64)
            self.fail_unless_equal(b.load(pointer, typ=I64, align=8), dim, Status.ERR_SHAPE)
        return data

    def build_signature(self) -> None:
        document = (
            json.dumps(
                {
                    "abi_version": ABI_VERSION,
                    "model": self.parent.model_name,
                    "target": self.parent.target.triple,
                    "byte_order": self.parent.target.byte_order,
                    "inputs": [spec.signature() for spec in self.inputs],
                    "outputs": [spec.signature() for spec in self.outputs],
                }
            ).encode()
            + b"\0"
        )
        text_type = ir.ArrayType(ir.IntType(8), len(document))
        text = _constant_global(self.module, "onnxc_signature_json", text_type)
        text.initializer = ir.Constant(text_type, bytearray(document))
        text.linkage = "private"
        text.unnamed_addr = True
        b = self.exported("onnxc_signature", PTR, [])
        b.ret(text)

    def build_abi_version(self) -> None:
        b = self.exported("onnxc_abi_version", I32, [])
        b.ret(ir.Constant(I32, ABI_VERSION))


def translate_module(module: ModuleOp, target: Target, model_name: str = "model") -> Translation:
    """Loop-level `module` as an LLVM module for `target`, plus the weights it refers to."""
    return _ModuleTranslator(module, target, model_name).translate()
