"""The graph function, and its loop nests outlined into kernel functions.

Each top-level loop nest of a graph function, and each one in the blocks of
its run-time branches and loops (scf.if, scf.while), becomes a separate
`noinline` function (a kernel): LLVM's loop passes slow down with the size of the
function holding the loops, so one function per nest compiles several times
faster than one function holding the whole graph. A nest that parallel.py
finds splittable runs on the thread pool through a trampoline (llvm_idioms).
Nests of one shape class share one kernel (kernel_sharing.py).
"""

from __future__ import annotations

from collections.abc import Hashable
from contextlib import nullcontext
from typing import TYPE_CHECKING

from llvmlite import ir
from xdsl.dialects import arith, func, memref, scf
from xdsl.ir import Block, Operation, SSAValue

from onnxc.codegen.arena import ARENA_ALIGNMENT, THREAD_ARENA, plan_arena
from onnxc.codegen.function_translator import FunctionTranslator
from onnxc.codegen.kernel_sharing import describe_weight_argument, is_weight, shape_class, shared_classes
from onnxc.codegen.llvm_idioms import (
    flat_types,
    flatten,
    internal_function,
    parallel_for,
    stack_struct,
    store_fields,
    thread_pool_slice,
    unflatten,
)
from onnxc.codegen.llvm_types import I32, I64, NULL, PTR, value_type
from onnxc.codegen.parallel import ParallelLoop, parallel_loop
from onnxc.codegen.private_scratch import privatize_scratch
from onnxc.codegen.run_time_dims import CheckedDimOps
from onnxc.dialects.krnl_int8 import QMatmulOp
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.errors import CompileError
from onnxc.runtime.abi import Status

if TYPE_CHECKING:
    from onnxc.codegen.llvm import ModuleTranslator


class GraphFunctionTranslator(FunctionTranslator):
    """A func.func as an internal `i32 @name(ptr...)` returning a Status; it owns the arena of its allocs."""

    def __init__(self, parent: ModuleTranslator, function: func.FuncOp):
        if function.function_type.outputs.data:
            raise CompileError(f"codegen: @{function.sym_name.data} must return no results")
        self.name = function.sym_name.data
        self.body = function.body.block
        arg_types = [value_type(t) for t in function.function_type.inputs.data]
        llvm_function = internal_function(parent.module, self.name, ir.FunctionType(I32, arg_types))
        super().__init__(parent, llvm_function, dict(zip(self.body.args, llvm_function.args)))
        privatize_scratch(_nest_names(self.body, self.name))
        self.plan = plan_arena(function)
        self.nest_names = _nest_names(self.body, self.name)  # (again: privatize_scratch took allocs out)
        self.shape_classes = {nest: shape_class(nest, _values_from_outside(nest)) for nest in self.nest_names}
        self.shared_classes = shared_classes(self.shape_classes.values())
        # A shared kernel, and its thread pool trampoline if its nest runs there, by shape class.
        self.shared_kernels: dict[Hashable, tuple[ir.Function, ir.Function | None]] = {}

    def translate(self) -> None:
        if self.plan.size or self.plan.regions:
            self.allocate_arena()
        for op in self.body.ops:
            if op.results and all(result in self.values for result in op.results):
                continue  # computed early, for the arena's run-time sizes
            self.emit(op)

    def emit(self, op: Operation) -> None:
        """Emit `op`, as a call of its kernel if it is a loop nest (also in a run-time branch's or loop's block)."""
        name = self.nest_names.get(op)
        if name is None:
            super().emit(op)
            return
        profiler = self.parent.profiler
        with profiler.timed(self.parent, self.builder, op, name) if profiler else nullcontext():
            self.call_kernel(op, name)

    def allocate_arena(self) -> None:
        """The calling thread's arena, kept by the runtime across runs (runtime/support/onnxc_parallel.c)."""
        b = self.builder
        offsets: dict[memref.AllocOp, ir.Value] = {a: ir.Constant(I64, o) for a, o in self.plan.offsets.items()}
        size: ir.Value = ir.Constant(I64, self.plan.size)
        dim_ops = CheckedDimOps(b, self.parent.declare)
        slot_sizes: dict[int, ir.Value] = {}
        base = None
        for region in self.plan.regions:  # after the static part, by slot, each at run-time size
            if region.slot not in slot_sizes:  # the slot begins after the ones before it
                base = dim_ops.align_up(size if base is None else dim_ops.add(base, slot_sizes[region.slot - 1]),
                                        ARENA_ALIGNMENT)  # fmt: skip
            unit = dim_ops.evaluate(region.unit, lambda name: self.materialize(self.plan.leaves[name]))
            for alloc, offset in region.offsets.items():
                offsets[alloc] = b.add(base, b.mul(ir.Constant(I64, offset), unit))
            region_size = dim_ops.mul(ir.Constant(I64, region.size), unit)
            largest = slot_sizes.get(region.slot)
            slot_sizes[region.slot] = region_size if largest is None else _larger(b, largest, region_size)
        if base is not None:
            size = dim_ops.add(base, slot_sizes[max(slot_sizes)])
        with b.if_then(dim_ops.overflowed, likely=False):
            b.ret(ir.Constant(I32, int(Status.ERR_NOMEM)))
        self.arena_offsets = offsets
        arena_of_thread = self.parent.declare(THREAD_ARENA, PTR, [I64])
        arena_of_thread.return_value.add_attribute("noalias")  # no other pointer reaches it during the run
        self.arena = b.call(arena_of_thread, [size])
        failed = b.icmp_unsigned("==", self.arena, NULL)
        with b.if_then(failed, likely=False):
            b.ret(ir.Constant(I32, int(Status.ERR_NOMEM)))

    def materialize(self, value: SSAValue) -> ir.Value:
        """The LLVM value of an index value, emitting the arithmetic computing it
        from the arguments' dims now if it has not been (the arena needs it first)."""
        if value not in self.values:
            op = value.owner
            if not isinstance(op, arith.ConstantOp | arith.AddiOp | arith.MuliOp | arith.DivSIOp | arith.MinSIOp
                              | arith.MaxSIOp | arith.SubiOp | arith.RemSIOp | arith.CmpiOp | arith.SelectOp | arith.AndIOp
                              | memref.DimOp):  # fmt: skip
                raise CompileError(f"codegen: a buffer's size depends on {value}, not only on its arguments' dims")
            for operand in op.operands:
                self.materialize(operand)
            self.emit(op)
        return self.values[value]

    def return_status(self, status: ir.Value) -> None:
        self.builder.ret(status)

    def call_kernel(self, nest: Operation, name: str) -> None:
        """Emit `nest` as the function `name` and call it here, or have the thread pool call it;
        a nest of a shared shape class (kernel_sharing.py) calls the kernel of the first.

        Values the nest uses from outside are passed as arguments, except
        constants, and weights of a kernel not shared, which are re-emitted
        inside so that LLVM still sees constant trip counts and the weights' alignment.
        """
        outside = _values_from_outside(nest)
        key = self.shape_classes.get(nest)
        shared = key is not None and key in self.shared_classes
        rematerialized = [v for v in outside if isinstance(v.owner, arith.ConstantOp) or (is_weight(v) and not shared)]
        passed = [v for v in outside if v not in rematerialized]
        parallel = parallel_loop(nest)
        # Nests of one shape class may still differ in whether they go to the thread pool
        # (run-time trip counts estimated from different dims): each way has its own kernel.
        key = (key, parallel is not None)
        if shared and key in self.shared_kernels:
            kernel, trampoline = self.shared_kernels[key]
        else:
            kernel = self.kernel(nest, name, passed, rematerialized, parallel)
            trampoline = None if parallel is None else self.thread_pool_trampoline(kernel, name, passed)
            if shared:
                self.shared_kernels[key] = kernel, trampoline
        if trampoline is None:
            self.builder.call(kernel, [f for v in passed for f in flatten(self.builder, self.get(v))])
        else:
            self.call_on_thread_pool(trampoline, passed, self.trip_count(parallel))

    def kernel(
        self,
        nest: Operation,
        name: str,
        passed: list[SSAValue],
        rematerialized: list[SSAValue],
        parallel: ParallelLoop | None,
    ) -> ir.Function:
        """`nest` as the function `name(passed...)`, or for a `parallel` nest
        `name(passed..., i64 begin, i64 end)` running iterations [begin, end) of its loop."""
        arg_types = [t for v in passed for t in flat_types(value_type(v.type))]
        arg_types += [I64, I64] if parallel is not None else []
        function = internal_function(self.parent.module, name, ir.FunctionType(ir.VoidType(), arg_types))
        function.attributes.add("noinline")
        kernel = FunctionTranslator(self.parent, function, {})
        args = iter(function.args)
        for value in passed:
            kernel.set(value, unflatten(kernel.builder, value_type(value.type), args))
            if is_weight(value):
                describe_weight_argument(kernel.get(value), value)
        for value in rematerialized:
            kernel.emit(value.owner)
        if parallel is not None:
            begin, end = function.args[-2:]
            kernel.split_loop = (parallel.loop, begin, end)
        kernel.emit(nest)
        kernel.builder.ret_void()
        return function

    def trip_count(self, parallel: ParallelLoop) -> int | ir.Value:
        """The split loop's iterations: known, or computed here from its bounds (run-time dims)."""
        if parallel.trip_count is not None:
            return parallel.trip_count
        b, loop = self.builder, parallel.loop
        span = b.sub(self.get(loop.ub), self.get(loop.lb))
        step = self.get(loop.step)
        count = b.sdiv(b.add(span, b.sub(step, ir.Constant(I64, 1))), step)
        return b.select(b.icmp_signed(">", count, ir.Constant(I64, 0)), count, ir.Constant(I64, 0))

    def thread_pool_trampoline(self, kernel: ir.Function, name: str, passed: list[SSAValue]) -> ir.Function:
        """The trampoline `name.slice(ptr context, i64 begin, i64 end)` through which the thread pool
        calls `kernel`, the context holding `passed`: the kernel keeps its `noalias` pointer arguments."""
        context_type = ir.LiteralStructType([value_type(v.type) for v in passed])
        slice_function, b, fields, begin, end = thread_pool_slice(self.parent.module, f"{name}.slice", context_type)
        b.call(kernel, [*(f for field in fields for f in flatten(b, field)), begin, end])
        b.ret_void()
        return slice_function

    def call_on_thread_pool(self, trampoline: ir.Function, passed: list[SSAValue], iterations: int | ir.Value) -> None:
        """Have the thread pool run `trampoline` over `iterations` with a context holding `passed`."""
        context_type = ir.LiteralStructType([value_type(v.type) for v in passed])
        context = stack_struct(self.builder, context_type)
        store_fields(self.builder, context, context_type, [self.get(v) for v in passed])
        parallel_for(self.builder, self.parent.declare, trampoline, context, iterations)


def _nest_names(block: Block, name: str) -> dict[Operation, str]:
    """The loop nests to outline, by kernel name: those of the function's block
    (`name.nest<position>`), and those in the blocks of the run-time branches
    and loops there (`name.nest<position>.<region>.nest<position>`)."""
    names = {}
    for position, op in enumerate(block.ops):
        if _is_loop_nest(op):
            names[op] = f"{name}.nest{position}"
        elif isinstance(op, scf.IfOp | scf.WhileOp):
            for index, region in enumerate(op.regions):
                for inner in region.blocks:
                    names.update(_nest_names(inner, f"{name}.nest{position}.{index}"))
    return names


def _is_loop_nest(op: Operation) -> bool:
    """A top-level op worth a function of its own: a kernel, or an op with
    regions, no results and no allocs."""
    return isinstance(op, MatmulOp | QMatmulOp) or (
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


def _larger(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_unsigned(">", x, y), x, y)
