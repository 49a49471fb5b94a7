"""Translating ops into one LLVM function: the emitter registry and the state emitters share.

Each op class has an emitter (`EMITTERS`, filled by `@emits` in
emit_memory.py and emit_arith.py); SSA values map to llvmlite values through
a dict. Memrefs are plain pointers: a load or store is a GEP with a row-major
linear index on a typed element pointer (GEP, not ptrtoint arithmetic, so
that LLVM's vectorizers see through it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from llvmlite import ir
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import BFloat16Type
from xdsl.ir import Attribute, Block, Operation, SSAValue

from onnxc.codegen.llvm_types import I32, I64, has_run_time_dims, int_constant, memory_type, static_shape_of
from onnxc.errors import CompileError

if TYPE_CHECKING:
    from onnxc.codegen.llvm import ModuleTranslator

Emitter = Callable[["FunctionTranslator", Operation], None]
EMITTERS: dict[type[Operation], Emitter] = {}


def emits(*op_classes: type[Operation]) -> Callable[[Emitter], Emitter]:
    def register(emitter: Emitter) -> Emitter:
        for op_class in op_classes:
            EMITTERS[op_class] = emitter
        return emitter

    return register


class FunctionTranslator:
    """Emits ops into one LLVM function; SSA values map to LLVM values through `values`."""

    def __init__(self, parent: ModuleTranslator, function: ir.Function, values: dict[SSAValue, ir.Value]):
        self.parent = parent
        self.builder = ir.IRBuilder(function.append_basic_block("entry"))
        self.values = values
        self.arena: ir.Value | None = None
        self.arena_offsets: dict[memref.AllocOp, int] = {}
        self.thread_scratch: ir.Value | None = None  # the calling thread's scratch, taken at entry
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
        return b.bitcast(b.and_(chosen, int_constant(I32, 0xFFFF0000)), ir.FloatType())

    def pointer(self, buffer: SSAValue) -> ir.Value:
        """The data pointer of a memref value (a descriptor's first field)."""
        value = self.get(buffer)
        return self.builder.extract_value(value, 0) if has_run_time_dims(buffer.type) else value

    def shape(self, buffer: SSAValue) -> list[ir.Value]:
        """A memref's dims as i64 values: constants, or a descriptor's fields."""
        value, dynamic = self.get(buffer), 0
        dims = []
        for dim in buffer.type.get_shape():
            if dim >= 0:
                dims.append(ir.Constant(I64, dim))
            else:
                dynamic += 1
                dims.append(self.builder.extract_value(value, dynamic))
        return dims

    def element_pointer(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> ir.Value:
        """Address of buffer[indices]: one GEP with the row-major linear index."""
        t = buffer.type
        if not has_run_time_dims(t):
            static_shape_of(t)  # codegen takes row-major memrefs only
        base = self.pointer(buffer)
        if not indices:
            return base
        b = self.builder
        linear = self.get(indices[0])
        for dim, index in zip(self.shape(buffer)[1:], indices[1:]):
            scaled = b.mul(linear, dim, flags=["nsw"])
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
        emitter = EMITTERS.get(type(op))
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
