"""How loop-level IR's types are held in LLVM: the one mapping every emitter uses.

bfloat16 has no LLVM type usable on every target (LLVM 22 cannot select bf16
arithmetic on ppc64le), so bf16 values are held in registers as f32 holding a
value exactly representable in bf16, and in memory as their 16 raw bits.
Every op producing a bf16 value rounds its f32 result to nearest even.

The low-precision types (float8, float4, int4, int2) are i8 both in registers
and in memory: their bits in the low bits of a byte, the rest zero (the
ml_dtypes layout). Only loads, stores and same-width casts (which are free)
see them; Cast's conversions work on the i8 bits (krnl_builder.convert).

A memref with static dims is an opaque pointer (`ptr`); one with dims known
at run time only is a descriptor `{ptr, i64...}`: its data and those dims,
in order (`descriptor_type`). A library-allocated output is a pointer to the
ABI's tensor. `index` is i64.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Attribute

from onnxc.dialects.krnl import is_library_allocated
from onnxc.dialects.types import STRING_ELEMENT_BYTES, is_low_precision, is_string, numpy_dtype_of
from onnxc.errors import CompileError
from onnxc.runtime.abi import TENSOR_FIELDS

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32 = ir.FloatType()
PTR = ir.PointerType()
NULL = ir.Constant(PTR, None)
_LLVM_OF_C_TYPE = {"void *": PTR, "const int64_t *": PTR, "int64_t": I64, "int32_t": I32}
TENSOR = ir.LiteralStructType([_LLVM_OF_C_TYPE[c_type] for _, c_type in TENSOR_FIELDS])
"""struct onnxc_tensor of the ABI (see onnxc.runtime.abi.tensor_field for its fields' positions)."""
STRING = ir.LiteralStructType([PTR, I64])
"""struct onnxc_string of the ABI: a string element, its UTF-8 bytes and their count."""


def value_type(t: Attribute) -> ir.Type:
    """LLVM type of an SSA value of xDSL type `t`."""
    if isinstance(t, IndexType):
        return I64
    if is_low_precision(t):
        return I8
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    if isinstance(t, Float32Type | BFloat16Type):
        return F32
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    if isinstance(t, Float16Type):
        return ir.HalfType()
    if isinstance(t, MemRefType):
        return descriptor_type(t) if has_run_time_dims(t) else PTR
    if is_string(t):
        return STRING
    raise CompileError(f"codegen: unsupported type {t}")


def has_run_time_dims(t: MemRefType) -> bool:
    """A memref held as a descriptor: dims known at run time only, not a library-allocated output."""
    return any(d < 0 for d in t.get_shape()) and not is_library_allocated(t)


def descriptor_type(t: MemRefType) -> ir.LiteralStructType:
    return ir.LiteralStructType([PTR] + [I64] * sum(d < 0 for d in t.get_shape()))


def memory_type(element: Attribute) -> ir.Type:
    """LLVM type of one element of a memref in memory."""
    return I16 if isinstance(element, BFloat16Type) else value_type(element)


def element_size(element: Attribute) -> int:
    if is_string(element):
        return STRING_ELEMENT_BYTES
    return 8 if isinstance(element, IndexType) else numpy_dtype_of(element).itemsize


def static_shape_of(t: MemRefType) -> list[int]:
    """The shape of an identity-layout, static memref (the only kind codegen accepts)."""
    shape = list(t.get_shape())
    if any(d < 0 for d in shape) or not isinstance(t.layout, NoneAttr):
        raise CompileError(f"codegen: needs static, row-major memrefs, got {t}")
    return shape


def memref_nbytes(t: MemRefType) -> int:
    return int(np.prod(static_shape_of(t), dtype=np.int64)) * element_size(t.element_type)


def int_constant(t: ir.IntType, value: int) -> ir.Constant:
    """An integer constant printed in LLVM's signed form (0xFF: i8 -1), i1 as true/false."""
    if t.width == 1:
        return ir.Constant(t, value & 1)
    value &= (1 << t.width) - 1
    if value >= 1 << (t.width - 1):
        value -= 1 << t.width
    return ir.Constant(t, value)


def float_rank(t: ir.Type) -> int:
    return {ir.HalfType(): 16, F32: 32, ir.DoubleType(): 64}[t]


def round_to_bfloat16(value: float) -> float:
    """`value` rounded to the nearest bfloat16 (ties to even), as a Python float."""
    bits = np.array(value, np.float32).view(np.uint32)
    if np.isnan(value):
        return value
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return float(rounded.view(np.float32))


def bfloat16_bits(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """The 16 bits of a bf16 value held (exactly) in an f32."""
    return b.trunc(b.lshr(b.bitcast(value, I32), ir.Constant(I32, 16)), I16)


def bfloat16_from_bits(b: ir.IRBuilder, bits: ir.Value) -> ir.Value:
    """The f32 holding the bf16 value of these 16 bits."""
    return b.bitcast(b.shl(b.zext(bits, I32), ir.Constant(I32, 16)), F32)
