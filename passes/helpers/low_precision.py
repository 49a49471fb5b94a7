"""Conversions of the low-precision storage types (float8, float4, e8m0, int4,
int2), emitted as integer code on their bits.

These types are one element per byte (the ml_dtypes layout, see
dialects/types.py) and nothing computes on them: `KernelBuilder.convert`
decodes them to f32 (exact for every one of them) or to i8/ui8, and encodes
f32 and integers into them. The rules are ONNX Cast's,
as `onnx.reference` implements them (f64 is rounded to f32 first, as there):

- float8: round to nearest even; with `saturate` an out-of-range value or an
  infinity becomes the largest finite value of its sign, without it an
  infinity (E5M2) or NaN (the FN/FNUZ types, which have no infinity); FNUZ
  types have no -0 (it becomes +0) and one NaN, 0x80.
- float4 E2M1 has neither infinity nor NaN: it always saturates, and NaN
  becomes a zero of the opposite sign (what ml_dtypes, the reference, does).
- float8 E8M0 (a power of two, no sign) keeps the float32 exponent, rounded
  by `round_mode` (up, down, nearest); NaN and infinity become NaN (0xFF).
- int4/uint4/int2/uint2 wrap: floats are truncated toward zero and the low
  bits kept; a value beyond int32 or NaN gives 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    IntegerType,
    Signedness,
    f32,
    i8,
    i32,
)
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.types import is_float

if TYPE_CHECKING:
    from onnxc.passes.helpers.krnl_builder import KernelBuilder

ROUND_MODES = ("up", "down", "nearest")


@dataclass(frozen=True)
class MiniFloat:
    """A sign-exponent-mantissa format of at most 8 bits and how it spends its top codes:
    "ieee" (all-ones exponent: infinity or NaN), "fn" (only the all-ones code is NaN),
    "fnuz" (0x80, the would-be -0, is the one NaN) or "finite" (no special values)."""

    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str

    @property
    def sign_bit(self) -> int:
        return 1 << (self.exponent_bits + self.mantissa_bits)

    @property
    def max_code(self) -> int:
        """The magnitude bits of the largest finite value."""
        all_ones = self.sign_bit - 1
        return {"ieee": all_ones - (1 << self.mantissa_bits), "fn": all_ones - 1}.get(self.specials, all_ones)

    @property
    def infinity_code(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits

    @property
    def nan_code(self) -> int:
        """Magnitude bits of the NaN made from a NaN (quiet for "ieee")."""
        if self.specials == "ieee":
            return self.infinity_code | 1 << (self.mantissa_bits - 1)
        return self.sign_bit - 1


MINIFLOATS: dict[type[Attribute], MiniFloat] = {
    Float8E4M3FNType: MiniFloat(4, 3, 7, "fn"),
    Float8E4M3FNUZType: MiniFloat(4, 3, 8, "fnuz"),
    Float8E5M2Type: MiniFloat(5, 2, 15, "ieee"),
    Float8E5M2FNUZType: MiniFloat(5, 2, 16, "fnuz"),
    Float4E2M1FNType: MiniFloat(2, 1, 1, "finite"),
}


def is_narrow_int(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element.width.data in (2, 4)


def to_wide(b: KernelBuilder, value: SSAValue) -> SSAValue:
    """A low-precision value as the smallest ordinary type holding it exactly:
    f32 for the floats, i8 or ui8 for the integers."""
    element = value.type
    bits = b.reinterpret(value, i8)
    if is_narrow_int(element):
        if element.signedness.data == Signedness.UNSIGNED:
            return b.reinterpret(bits, IntegerType(8, Signedness.UNSIGNED))
        shift = b.constant(8 - element.width.data, i8)
        return _op(b, arith.ShRSIOp, _op(b, arith.ShLIOp, bits, shift), shift)
    code = b.insert(arith.ExtUIOp(bits, i32)).result
    if isinstance(element, Float8E8M0FNUType):
        return _decode_e8m0(b, code)
    return _decode_minifloat(b, code, MINIFLOATS[type(element)])


def from_wide(
    b: KernelBuilder, value: SSAValue, element: Attribute, *, saturate: bool = True, round_mode: str = "up"
) -> SSAValue:
    """`value` (a float, integer or bool, not of a low-precision type) in a low-precision
    type, by the rules in the module docstring."""
    if is_narrow_int(element):
        bits = _wrapped_to_i8(b, value)
        low_bits = _op(b, arith.AndIOp, bits, b.constant((1 << element.width.data) - 1, i8))
        return b.reinterpret(low_bits, element)
    if isinstance(element, Float8E8M0FNUType):
        if round_mode not in ROUND_MODES:
            raise ValueError(f"round_mode '{round_mode}' is not one of {ROUND_MODES}")
        code = _encode_e8m0(b, b.convert(value, f32), saturate, round_mode)
    else:
        code = _encode_minifloat(b, b.convert(value, f32), MINIFLOATS[type(element)], saturate)
    return b.reinterpret(code, element)


# ----------------------------------------------------------------------------- decoding


def _decode_minifloat(b: KernelBuilder, code: SSAValue, fmt: MiniFloat) -> SSAValue:
    """The f32 of a minifloat's bits (an i32 below 256): exact."""
    m = fmt.mantissa_bits
    c = lambda v: b.constant(v, i32)  # noqa: E731
    magnitude = _op(b, arith.AndIOp, code, c(fmt.sign_bit - 1))
    exponent = _op(b, arith.ShRUIOp, magnitude, c(m))
    mantissa = _op(b, arith.AndIOp, magnitude, c((1 << m) - 1))
    # A normal value: rebias the exponent, left-align the mantissa.
    normal = _op(b, arith.AddiOp, _op(b, arith.ShLIOp, magnitude, c(23 - m)), c((127 - fmt.bias) << 23))
    # A subnormal one is mantissa * 2^(1 - bias - m), exact in f32.
    scale = b.constant(2.0 ** (1 - fmt.bias - m), f32)
    subnormal = b.mul(b.insert(arith.UIToFPOp(mantissa, f32)).result, scale)
    is_subnormal = b.compare_index("eq", exponent, c(0))
    bits = b.select(is_subnormal, b.insert(arith.BitcastOp(subnormal, i32)).result, normal)
    sign = _op(b, arith.ShLIOp, _op(b, arith.AndIOp, code, c(fmt.sign_bit)), c(31 - fmt.exponent_bits - m))
    bits = _op(b, arith.OrIOp, bits, sign)
    quiet_nan = _op(b, arith.OrIOp, c(0x7FC00000), sign)  # with its sign, as ml_dtypes
    if fmt.specials == "ieee":
        infinity = _op(b, arith.OrIOp, c(0x7F800000), sign)
        special = b.select(b.compare_index("eq", mantissa, c(0)), infinity, quiet_nan)
        all_ones = b.compare_index("eq", exponent, c((1 << fmt.exponent_bits) - 1))
        bits = b.select(all_ones, special, bits)
    elif fmt.specials == "fn":
        bits = b.select(b.compare_index("eq", magnitude, c(fmt.sign_bit - 1)), quiet_nan, bits)
    elif fmt.specials == "fnuz":
        bits = b.select(b.compare_index("eq", code, c(fmt.sign_bit)), quiet_nan, bits)
    return b.insert(arith.BitcastOp(bits, f32)).result


def _decode_e8m0(b: KernelBuilder, code: SSAValue) -> SSAValue:
    """2^(code - 127) as f32 (code 0 is the subnormal 2^-127), 0xFF is NaN."""
    c = lambda v: b.constant(v, i32)  # noqa: E731
    bits = b.select(b.compare_index("eq", code, c(0)), c(0x400000), _op(b, arith.ShLIOp, code, c(23)))
    bits = b.select(b.compare_index("eq", code, c(0xFF)), c(0x7FC00000), bits)
    return b.insert(arith.BitcastOp(bits, f32)).result


# ----------------------------------------------------------------------------- encoding


def _encode_minifloat(b: KernelBuilder, value: SSAValue, fmt: MiniFloat, saturate: bool) -> SSAValue:
    """The minifloat bits (as i8) of an f32, rounded to nearest even. (An f64 is rounded
    to f32 first, as onnx.reference and onnxruntime do.)"""
    c = lambda v: b.constant(v, i32)  # noqa: E731
    m = fmt.mantissa_bits
    bits = b.insert(arith.BitcastOp(value, i32)).result
    sign = _op(b, arith.ShRUIOp, bits, c(31))
    magnitude = _op(b, arith.AndIOp, bits, c(0x7FFFFFFF))
    is_nan = b.compare_index("ugt", magnitude, c(0x7F800000))

    # Normal in the target: the magnitude rebiased is (exponent << m | mantissa).
    rebias = 127 - fmt.bias
    is_normal = b.compare_index("uge", magnitude, c((rebias + 1) << 23))
    normal = _op(b, arith.SubiOp, magnitude, c(rebias << 23))
    # Subnormal in the target: the full significand, shifted further by how far the
    # exponent is below the target's smallest; every shift of 31 or more gives 0.
    exponent = _op(b, arith.ShRUIOp, magnitude, c(23))
    implicit = b.select(b.compare_index("eq", exponent, c(0)), c(0), c(1 << 23))
    significand = _op(b, arith.OrIOp, _op(b, arith.AndIOp, magnitude, c((1 << 23) - 1)), implicit)
    below = _op(b, arith.SubiOp, c(rebias + 1 + 23 - m), exponent)
    shift = b.select(is_normal, c(23 - m), _op(b, arith.MinUIOp, below, c(31)))
    unrounded = b.select(is_normal, normal, significand)
    # Round to nearest even: add half - 1, plus 1 when the kept lsb is odd.
    lsb = _op(b, arith.AndIOp, _op(b, arith.ShRUIOp, unrounded, shift), c(1))
    half_minus_one = _op(b, arith.SubiOp, _op(b, arith.ShLIOp, c(1), _op(b, arith.SubiOp, shift, c(1))), c(1))
    rounded = _op(b, arith.AddiOp, _op(b, arith.AddiOp, unrounded, half_minus_one), lsb)
    code = _op(b, arith.ShRUIOp, rounded, shift)

    overflow_code = {"ieee": fmt.infinity_code, "fn": fmt.nan_code, "fnuz": fmt.sign_bit}.get(fmt.specials)
    if saturate or overflow_code is None:
        overflow_code = fmt.max_code
    overflows = b.compare_index("ugt", code, c(fmt.max_code))
    code = b.select(overflows, c(overflow_code), code)
    if fmt.specials == "finite":  # NaN: a zero of the opposite sign
        sign = b.select(is_nan, _op(b, arith.XOrIOp, sign, c(1)), sign)
        code = b.select(is_nan, c(0), code)
    else:
        code = b.select(is_nan, c(fmt.sign_bit if fmt.specials == "fnuz" else fmt.nan_code), code)
    signed = _op(b, arith.OrIOp, code, _op(b, arith.ShLIOp, sign, c(fmt.exponent_bits + m)))
    if fmt.specials == "fnuz":  # no -0 (NaN, 0x80, has the sign bit set already)
        signed = b.select(b.compare_index("eq", code, c(0)), code, signed)
    return b.insert(arith.TruncIOp(signed, i8)).result


def _encode_e8m0(b: KernelBuilder, value: SSAValue, saturate: bool, round_mode: str) -> SSAValue:
    """The e8m0 bits (as i8) of an f32: its exponent field, rounded by `round_mode`;
    as onnx.numpy_helper.to_float8e8m0, the sign is ignored."""
    c = lambda v: b.constant(v, i32)  # noqa: E731
    bits = b.insert(arith.BitcastOp(value, i32)).result
    exponent = _op(b, arith.AndIOp, _op(b, arith.ShRUIOp, bits, c(23)), c(0xFF))
    is_special = b.compare_index("eq", exponent, c(0xFF))

    def any_bits(mask: int) -> SSAValue:
        return b.compare_index("ne", _op(b, arith.AndIOp, bits, c(mask)), c(0))

    if round_mode == "up":
        round_up = any_bits(0x7FFFFF)
    elif round_mode == "nearest":  # guard and (round or sticky or exponent > 0), as the reference
        rest = _op(b, arith.OrIOp, any_bits(0x200000), any_bits(0x1FFFFF))
        rest = _op(b, arith.OrIOp, rest, b.compare_index("ugt", exponent, c(0)))
        round_up = _op(b, arith.AndIOp, any_bits(0x400000), rest)
    else:
        round_up = None
    if round_up is not None:
        if saturate:
            below_max = b.compare_index("ne", exponent, c(0xFE))
            round_up = _op(b, arith.AndIOp, round_up, below_max)
        exponent = _op(b, arith.AddiOp, exponent, b.insert(arith.ExtUIOp(round_up, i32)).result)
    exponent = b.select(is_special, c(0xFF), exponent)
    return b.insert(arith.TruncIOp(exponent, i8)).result


def _wrapped_to_i8(b: KernelBuilder, value: SSAValue) -> SSAValue:
    """An integer, bool or float as i8 keeping the low bits: floats truncated toward
    zero through int32, 0 for NaN and beyond the int32 range (as ml_dtypes, the
    reference, does on x86, where such a conversion gives INT32_MIN)."""
    if is_float(value.type) and value.type.bitwidth == 16:  # exact in f32, which holds 2^31
        value = b.convert(value, f32)
    source = value.type
    if is_float(source):
        in_range = b.less_than(b.abs(value), b.constant(2.0**31, source))
        truncated = b.insert(arith.FPToSIOp(value, i32)).result
        value = b.select(in_range, truncated, b.constant(0, i32))
    return b.convert(value, i8)


def _op(b: KernelBuilder, op_class: type, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return b.insert(op_class(lhs, rhs)).result
