"""Cast and CastLike between the numeric element types (floats, signed and
unsigned integers, bool, and the low-precision float8/float4/int4/int2 types),
with ONNX semantics: float -> integer truncates toward zero, anything -> bool is
`!= 0`, bool -> number is 0 or 1; `saturate` and `round_mode` for the float8
targets (KernelBuilder.convert has the rules). BitCast keeps the bits."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i1, i8
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float, is_low_precision
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.low_precision import ROUND_MODES
from onnxc.passes.onnx_to_krnl.common import GraphLowering
from onnxc.passes.onnx_to_krnl.fusion import ScalarOp, elementwise_read, scalar_op


@scalar_op("Cast", "CastLike")
def cast(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    source = op.input(0)
    g.element_type(op, source, bools=True, low_precision=True)
    target = g.element_type(op, op.results[0], bools=True, low_precision=True)
    saturate = bool(op.attr("saturate"))
    round_mode = op.attr("round_mode")
    if round_mode not in ROUND_MODES:
        raise g.unsupported(op, f"round_mode '{round_mode}'")
    return ScalarOp(
        [elementwise_read(op, 0)], lambda b, xs: b.convert(xs[0], target, saturate=saturate, round_mode=round_mode)
    )


@scalar_op("BitCast")
def bitcast(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """The input's bits as another type of the same width."""
    source = g.element_type(op, op.input(0), bools=True, low_precision=True)
    target = g.element_type(op, op.results[0], bools=True, low_precision=True)
    if bit_width(source) != bit_width(target):
        raise g.unsupported(op, f"BitCast from {source} to {target}, which differ in width")
    if target == i1 and source != i1:
        raise g.unsupported(op, "BitCast to bool (a byte other than 0 or 1 is no bool)")
    return ScalarOp([elementwise_read(op, 0)], lambda b, xs: _from_bits(b, _bits(b, xs[0]), target))


def bit_width(element: Attribute) -> int:
    """Bits of an element as ONNX counts them (bool is a byte)."""
    if element == i1:
        return 8
    return element.width.data if isinstance(element, IntegerType) else element.bitwidth


def _bits(b: KernelBuilder, value: SSAValue) -> SSAValue:
    """A value's bits as the signless integer of its storage (i8 for the low-precision types)."""
    element = value.type
    if is_low_precision(element):
        return b.reinterpret(value, i8)
    if element == i1:
        return b.insert(arith.ExtUIOp(value, i8)).result
    if is_float(element):
        return b.insert(arith.BitcastOp(value, IntegerType(element.bitwidth))).result
    return b.as_signless(value)


def _from_bits(b: KernelBuilder, bits: SSAValue, element: Attribute) -> SSAValue:
    if is_float(element):
        return b.insert(arith.BitcastOp(bits, element)).result
    return b.reinterpret(bits, element)
