"""`krnl.qmatmul`: the int8 matrix product with int32 accumulation (and requantization).

One of the files whose OPS make up the `krnl` dialect (dialects/__init__.py), as
krnl_matmul.py is for the float kernel; emitted by codegen/gemm_int8.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, IntegerType, MemRefType, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

QMATMUL_COLUMN_PAD = 64
"""B's columns are padded to a multiple of this (every target's column tile divides it)."""


def _ints(values: Sequence[int]) -> ArrayAttr:
    return ArrayAttr([IntegerAttr(int(v), i64) for v in values])


def _values(attr: ArrayAttr) -> list[int]:
    return [a.value.data for a in attr.data]


PANEL_SKEW = 16
"""Columns a panel [K4, pitch, 4] packed at run time has past padded_columns: its K4 steps then
lie an odd number of 64-byte lines apart and spread over the cache's sets. With N = 1024 (a
32x32 image) they were 4096 bytes apart, all in one set of L1 (and few of L2): 256 channels,
3x3 at 32x32, 3.9 ms against onnxruntime's 1.7."""


def padded_columns(n: int) -> int:
    return -(-n // QMATMUL_COLUMN_PAD) * QMATMUL_COLUMN_PAD


def panel_pitch(n: int) -> int:
    """The columns of a panel of n columns packed at run time (see PANEL_SKEW)."""
    return padded_columns(n) + PANEL_SKEW


@irdl_op_definition
class QMatmulOp(IRDLOperation):
    """`C[m, n] = requantize(sum_k A[m, k] * B[k, n] + offset[.])` over bytes, per batch triple.

    The reduction goes in groups of 4 (K4 = ceil(K / 4) groups, zero-padded): the layout of
    integer dot-product instructions (vpdpbusd: 4 byte products summed into each int32 lane).
    - A: [ceil(M/mr), K4, mr, 4]: row tiles of mr rows, each group of 4 bytes of a row
      contiguous (one broadcast per row and group); rows past M are zero. With `a_panels`,
      A is laid out as B, [K4, panel_pitch(M), 4]: a conv's im2col matrix packed for the
      other orientation, read in place with its pixels as the rows.
    - B: [K4, panel_pitch(N), 4] (N padded to QMATMUL_COLUMN_PAD, and PANEL_SKEW): each
      column's group of 4 contiguous, a vector of V columns is 4V consecutive bytes (Np below:
      N padded to QMATMUL_COLUMN_PAD, the tables' length). With `b_blocked`, B is
      [Np/64, K4, 64, 4], blocks of 64 columns (weights packed at compile time): a column
      tile's K4 steps 256 bytes apart, in a block of its own, rather than 4 Np (N of 512 and
      more: 2 KB and more, a stride that maps the steps to few cache sets).
    - C: C[m, n] = c[m * ldc + n], bytes; with `transposed_c` c[n * ldc + m] (a conv's NCHW
      output when its output channels are the columns, in the vector lanes).
    Exactly one of A and B is signed (`a_signed`): the products are u8 x s8, exact in int32.
    Epilogue: v = acc + offsets[i] (int32), y = round_half_even(float(v) * multipliers[i])
    (float32) + zero_point, clamped to `clip` = [lo, hi] and stored as a byte; i is the row
    m, or the column n with `per_column` (then both tables have Np entries). A C of int32
    (MatMulInteger, ConvInteger) takes v itself: no multipliers, zero_point and clip unused.
    Batch offsets count bytes of A and B and elements of C.
    """

    name = "krnl.qmatmul"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    offsets = operand_def(MemRefType)
    multipliers = opt_operand_def(MemRefType)

    sizes = prop_def(ArrayAttr)
    row_tile = prop_def(IntegerAttr)
    ldc = prop_def(IntegerAttr)
    batch = prop_def(ArrayAttr)
    zero_point = prop_def(IntegerAttr)
    clip = prop_def(ArrayAttr)
    a_signed = opt_prop_def(UnitAttr)
    per_column = opt_prop_def(UnitAttr)
    a_panels = opt_prop_def(UnitAttr)
    b_blocked = opt_prop_def(UnitAttr)
    transposed_c = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$a `,` $b `into` $c `offsets` $offsets (`multipliers` $multipliers^)? attr-dict `:` "
        "type($a) `,` type($b) `,` type($c) `,` type($offsets) (`,` type($multipliers)^)?"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        offsets: SSAValue,
        multipliers: SSAValue | None,
        *,
        sizes: Sequence[int],
        row_tile: int,
        ldc: int,
        batch: Sequence[int],
        zero_point: int,
        clip: Sequence[int],
        a_signed: bool,
        per_column: bool,
        a_panels: bool = False,
        b_blocked: bool = False,
        transposed_c: bool = False,
    ):
        properties = {
            "sizes": _ints(sizes),
            "row_tile": IntegerAttr(row_tile, i64),
            "ldc": IntegerAttr(ldc, i64),
            "batch": _ints(batch),
            "zero_point": IntegerAttr(zero_point, i64),
            "clip": _ints(clip),
            "a_signed": UnitAttr() if a_signed else None,
            "per_column": UnitAttr() if per_column else None,
            "a_panels": UnitAttr() if a_panels else None,
            "b_blocked": UnitAttr() if b_blocked else None,
            "transposed_c": UnitAttr() if transposed_c else None,
        }
        properties = {name: value for name, value in properties.items() if value is not None}
        super().__init__(operands=[a, b, c, offsets, [multipliers] if multipliers else []], properties=properties)

    @property
    def int32_result(self) -> bool:
        element = self.c.type.get_element_type()
        return isinstance(element, IntegerType) and element.width.data == 32

    @property
    def m_n_k4(self) -> tuple[int, int, int]:
        m, n, k4 = _values(self.sizes)
        return m, n, k4

    @property
    def batch_triples(self) -> list[tuple[int, int, int]]:
        offsets = _values(self.batch)
        return [tuple(offsets[i : i + 3]) for i in range(0, len(offsets), 3)]

    @property
    def clip_bounds(self) -> tuple[int, int]:
        low, high = _values(self.clip)
        return low, high

    def verify_(self) -> None:
        sizes = _values(self.sizes)
        mr = self.row_tile.value.data
        if len(sizes) != 3 or min(sizes) < 1 or mr < 1:
            raise VerifyException("krnl.qmatmul: sizes [M, N, K4] and row_tile must be positive")
        m, n, k4 = sizes
        if self.a_panels is not None and list(self.a.type.get_shape()) != [k4, panel_pitch(m), 4]:
            raise VerifyException("krnl.qmatmul: A in panels must have shape [K4, panel_pitch(M), 4]")
        if self.a_panels is None and list(self.a.type.get_shape()) != [-(-m // mr), k4, mr, 4]:
            raise VerifyException("krnl.qmatmul: A must have shape [ceil(M/mr), K4, mr, 4]")
        blocks = padded_columns(n) // QMATMUL_COLUMN_PAD
        if self.b_blocked is not None and list(self.b.type.get_shape()) != [blocks, k4, QMATMUL_COLUMN_PAD, 4]:
            raise VerifyException("krnl.qmatmul: B in blocks must have shape [Np/64, K4, 64, 4]")
        if self.b_blocked is None and list(self.b.type.get_shape()) != [k4, panel_pitch(n), 4]:
            raise VerifyException("krnl.qmatmul: B must have shape [K4, panel_pitch(N), 4]")
        entries = padded_columns(n) if self.per_column is not None else m
        if (self.multipliers is None) != self.int32_result:
            raise VerifyException("krnl.qmatmul: multipliers requantize a C of bytes; a C of int32 has none")
        for table in (self.offsets, self.multipliers):
            if table is not None and list(table.type.get_shape()) != [entries]:
                raise VerifyException(f"krnl.qmatmul: offsets and multipliers must have {entries} entries")
        if len(_values(self.batch)) % 3 or not _values(self.batch) or len(_values(self.clip)) != 2:
            raise VerifyException("krnl.qmatmul: batch lists (a, b, c) offset triples; clip is [lo, hi]")


OPS = [QMatmulOp]
