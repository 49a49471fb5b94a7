"""`krnl.matmul`: the matrix product that dominates CNNs and transformers, as one op.

It names its operands' layouts (`#krnl<a_layout panels>`, `#krnl<b_access im2col>`),
a convolution's geometry where B is read from an image (`#krnl.conv<...>`), and
its schedule (register tile rows, reduction and column blocking, epilogue);
code generation emits the register-blocked SIMD kernel for it (codegen/gemm.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IndexType, IntAttr, IntegerAttr, MemRefType, UnitAttr, f64, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from onnxc.dialects.krnl import int_array, int_values, parse_int_list


def matmul_scratch_pitch(columns: int, column_block: int) -> int:
    """Floats per row of krnl.matmul's packed B block: whole 64-float groups (so
    tiles of any target's width fit and stay aligned) plus 16, so that rows do
    not all fall in the same cache sets."""
    return -(-min(columns, column_block) // 64) * 64 + 16


MAX_WINDOW_OFFSET = 2**31 - 1
"""Window access: the largest image (C*H*W elements) whose row offsets fit the kernel's i32 table."""
MATMUL_B_PANEL = 16
"""Columns per panel of a B packed at compile time: one 64-byte cache line per
row, and a multiple (or a divisor) of every target's register tile width."""


class MatmulALayout(StrEnum):
    """How krnl.matmul reads A (see MatmulOp)."""

    PANELS = "panels"
    STRIDED = "strided"
    WINDOW = "window"


class MatmulBAccess(StrEnum):
    """How krnl.matmul reads B (see MatmulOp)."""

    ROWS = "rows"
    IM2COL = "im2col"
    PANELS = "panels"
    WINDOW = "window"


class MatmulActivation(StrEnum):
    """An element-wise function of krnl.matmul's epilogue (see MatmulOp): the activation
    after a 1x1 conv of a mobile net, computed on the tile in registers instead of in a
    pass over the stored result."""

    HARD_SWISH = "hard_swish"
    """x * min(max(x / 6 + 1/2, 0), 1), as ONNX HardSwish"""
    SILU = "silu"
    """x * sigmoid(x), torch's SiLU as exported: Mul(x, Sigmoid(x))"""
    GELU = "gelu"
    """x/2 * (1 + erf(x / sqrt 2)), as ONNX Gelu (and torch's nn.GELU as exported)"""


@irdl_attr_definition
class MatmulALayoutAttr(EnumAttribute[MatmulALayout], SpacedOpaqueSyntaxAttribute):
    """`#krnl<a_layout panels>`: only the layouts codegen knows parse."""

    name = "krnl.a_layout"


@irdl_attr_definition
class MatmulBAccessAttr(EnumAttribute[MatmulBAccess], SpacedOpaqueSyntaxAttribute):
    """`#krnl<b_access im2col>`: only the access modes codegen knows parse."""

    name = "krnl.b_access"


@irdl_attr_definition
class MatmulActivationAttr(EnumAttribute[MatmulActivation], SpacedOpaqueSyntaxAttribute):
    """`#krnl<activation silu>`: only the functions codegen knows parse."""

    name = "krnl.activation"


_CONV_SCALARS = ("channels", "height", "width")
_CONV_PAIRS = ("output", "kernel", "stride", "dilation", "padding")


@irdl_attr_definition
class ConvGeometryAttr(ParametrizedAttribute):
    """The image a krnl.matmul reads B from (im2col or window access), by name:

        #krnl.conv<channels = 2, height = 6, width = 6, output = [4, 4], kernel = [3, 3],
                   stride = [1, 1], dilation = [1, 1], padding = [1, 1]>

    [y, x] pairs; `padding` is the zero rows and columns read before the image's
    first (the im2col kernel reads zeros past its end too)."""

    name = "krnl.conv"

    channels: IntAttr
    height: IntAttr
    width: IntAttr
    output_h: IntAttr
    output_w: IntAttr
    kernel_h: IntAttr
    kernel_w: IntAttr
    stride_h: IntAttr
    stride_w: IntAttr
    dilation_h: IntAttr
    dilation_w: IntAttr
    pad_h: IntAttr
    pad_w: IntAttr

    def __init__(
        self,
        *,
        channels: int,
        height: int,
        width: int,
        output: Sequence[int],
        kernel: Sequence[int],
        stride: Sequence[int] = (1, 1),
        dilation: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
    ):
        values = [channels, height, width, *output, *kernel, *stride, *dilation, *padding]
        if len(values) != 13:
            raise ValueError("krnl.conv: output, kernel, stride, dilation and padding are [y, x] pairs")
        super().__init__(*(IntAttr(v) for v in values))

    @property
    def output(self) -> tuple[int, int]:
        return self.output_h.data, self.output_w.data

    @property
    def kernel(self) -> tuple[int, int]:
        return self.kernel_h.data, self.kernel_w.data

    @property
    def stride(self) -> tuple[int, int]:
        return self.stride_h.data, self.stride_w.data

    @property
    def dilation(self) -> tuple[int, int]:
        return self.dilation_h.data, self.dilation_w.data

    @property
    def padding(self) -> tuple[int, int]:
        return self.pad_h.data, self.pad_w.data

    def print_parameters(self, printer: Printer) -> None:
        fields = [f"{name} = {getattr(self, name).data}" for name in _CONV_SCALARS]
        fields += [f"{name} = [{', '.join(map(str, getattr(self, name)))}]" for name in _CONV_PAIRS]
        printer.print_string(f"<{', '.join(fields)}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        values: dict[str, int | list[int]] = {}
        with parser.in_angle_brackets():
            for index, name in enumerate(_CONV_SCALARS + _CONV_PAIRS):
                if index:
                    parser.parse_punctuation(",")
                parser.parse_keyword(name)
                parser.parse_punctuation("=")
                values[name] = parser.parse_integer() if name in _CONV_SCALARS else parse_int_list(parser)
        try:
            return list(cls(**values).parameters)  # type: ignore[arg-type]
        except ValueError as error:
            parser.raise_error(str(error))

    def verify(self) -> None:
        positive = [*(getattr(self, name).data for name in _CONV_SCALARS), *self.output]
        positive += [*self.kernel, *self.stride, *self.dilation]
        if min(positive) < 1 or min(self.padding) < 0:
            raise VerifyException("krnl.conv: sizes, strides and dilations must be positive, padding not negative")


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """`C[M, N] (+)= A[M, K] * B[K, N]`, then bias per row and a clamp, as one scheduled kernel.

    Operands are whole buffers; `batch` lists (a, b, c) element offsets, one
    product per triple. Layouts:
    - `a_layout = panels`: A was packed at compile time, reduction block by
      reduction block (kc rows of K, the last one shorter), each block as
      [ceil(M/mr), kc, mr] (zero rows pad the last panel): the micro-kernels of
      one block read A as one sequential stream. Its shape is [ceil(M/mr), K, mr]; `strided`: A[m, k] = a[m*s0 + k*s1]
      with `a_strides = [s0, s1]`; `window`: A is the transposed im2col matrix of
      the image `conv` of a stride-1 conv, padded already, read in place: row m
      = (oy, ox) of the output, A[m, k] = a[oy*W + ox + c*H*W + ky*DH*W + kx*DW]
      for k = (c, ky, kx) (M = output_h * output_w: the pixels, and only they;
      C then holds the conv's output transposed, pixels by channels, B its
      weights transposed, see passes/onnx_to_krnl/conv_lanes.py).
    - `b_access = rows`: B[k, n] = b[k*ldb + n] (`ldb`), read in place;
      `im2col`: B is the im2col matrix of the NCHW image `conv` (k = (c, ky,
      kx), n = (oy, ox), padding reads zero); `panels`: B was packed at compile
      time into column panels of P columns (P = MATMUL_B_PANEL, zero columns
      pad the last one), reduction block by reduction block (kc rows, the last
      one shorter), each block as [ceil(N/P), kc, P]: the tiles of a block are
      read as one sequential stream. Its shape is [ceil(N/P), K, P]; `window`:
      B is read in place from the image `conv` of a stride-1 conv, padded
      already (stride 1, padding 0): B[k, n] = b[c*H*W + ky*DH*W + kx*DW + n]
      for k = (c, ky, kx): the output columns n = oy*W + ox span the image's
      whole width W (the caller drops the columns ox >= OW; no packing, no
      im2col copy). With `pack` (required for im2col, not allowed with panels
      or window), B is packed at run time block by block into rows of
      `matmul_scratch_pitch` floats, kc rows per block, in scratch memory of
      the thread doing the packing (the runtime's, see
      runtime/support/onnxc_parallel.c: each thread packs the part of B its
      tiles read); without, B rows are read in place.
    - C[m, n] = c[m*ldc + n]; with `accumulate`, C's contents are added to. With
      `transposed_c` (a window A only), C[m, n] = c[n*ldc + m]: a conv's NCHW output,
      pixels m of channel n; the bias is then per column, bias[n].
    - `rows` (an index operand): M is known at run time only (a transformer's
      batch x sequence); sizes[0] is then the M the schedule is chosen for.
      A is strided, one batch triple, no bias. `first_row` (an index operand, with
      `rows` only) starts the product that many rows into A and C: at a + first_row*s0
      and c + first_row*ldc (one product of a batched MatMul over run-time sized matrices).
    - `columns` (an index operand): N is known at run time only (a conv's
      output pixels over a run-time image; with `rows` too, an attention score
      product Q.K^T over a run-time sequence); sizes[1] is the N the schedule is
      chosen for. B rows (access `rows`) and C rows are then `columns` apart
      (ldb and ldc are 0); one batch triple, whose B and C offsets `offsets`
      (two index operands, elements) move at run time (one sample of a
      run-time batch). With im2col access, `image` (six index operands:
      height, width, output height and width, padding before the first row
      and column) replaces the conv geometry's sizes and padding, which
      are then the ones scheduled for.

    Schedule (`tile = [mr, kc, nc]`): columns in blocks of nc, the reduction in
    blocks of kc (B block in cache), rows in register tiles of mr; each tile
    row of mr x nr accumulators lives in vector registers, nr being a number of
    vectors fitting the target's register file (chosen by code generation).
    Epilogue, applied in the kernel's store: + bias[m] (optional operand; with
    `bias_columns`, + bias[n]: a MatMul's bias, N static),
    then the `activation` (optional, MatmulActivation), then clamp to `clip = [lo, hi]`
    (Relu: [0, inf]). With `bias_offsets`, one per
    batch triple, product i adds bias[bias_offsets[i] + m] instead: the groups of a
    grouped conv are the products of one op (or of ops of one plan), each with its rows
    of the weights (its `a` offset into the panels of every group) and of the bias.
    """

    name = "krnl.matmul"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    bias = opt_operand_def(MemRefType)
    rows = opt_operand_def(IndexType)
    columns = opt_operand_def(IndexType)
    offsets = var_operand_def(IndexType)
    image = var_operand_def(IndexType)
    first_row = opt_operand_def(IndexType)

    sizes = prop_def(ArrayAttr)
    tile = prop_def(ArrayAttr)
    a_layout = prop_def(MatmulALayoutAttr)
    a_strides = prop_def(ArrayAttr)
    b_access = prop_def(MatmulBAccessAttr)
    ldb = prop_def(IntegerAttr)
    conv = opt_prop_def(ConvGeometryAttr)
    ldc = prop_def(IntegerAttr)
    batch = prop_def(ArrayAttr)
    bias_offsets = opt_prop_def(ArrayAttr)
    accumulate = opt_prop_def(UnitAttr)
    transposed_c = opt_prop_def(UnitAttr)
    bias_columns = opt_prop_def(UnitAttr)
    activation = opt_prop_def(MatmulActivationAttr)
    clip = prop_def(ArrayAttr)
    pack = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "$a `,` $b `into` $c (`bias` $bias^)? (`rows` $rows^)? (`columns` $columns^)?"
        " (`offsets` `(` $offsets^ `)`)? (`image` `(` $image^ `)`)? (`first_row` $first_row^)? attr-dict"
        " `:` type($a) `,` type($b) `,` type($c) (`,` type($bias)^)?"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        *,
        sizes: Sequence[int],
        tile: Sequence[int],
        a_layout: MatmulALayout,
        a_strides: Sequence[int] = (0, 0),
        b_access: MatmulBAccess,
        ldb: int = 0,
        conv: ConvGeometryAttr | None = None,
        ldc: int,
        batch: Sequence[int] = (0, 0, 0),
        accumulate: bool = False,
        transposed_c: bool = False,
        bias_columns: bool = False,
        activation: MatmulActivation | None = None,
        clip: Sequence[float] = (float("-inf"), float("inf")),
        pack: bool = False,
        bias: SSAValue | None = None,
        rows: SSAValue | None = None,
        columns: SSAValue | None = None,
        offsets: Sequence[SSAValue] = (),
        image: Sequence[SSAValue] = (),
        first_row: SSAValue | None = None,
        bias_offsets: Sequence[int] | None = None,
    ):
        properties = {
            "sizes": int_array(sizes),
            "tile": int_array(tile),
            "a_layout": MatmulALayoutAttr(a_layout),
            "a_strides": int_array(a_strides),
            "b_access": MatmulBAccessAttr(b_access),
            "ldb": IntegerAttr(ldb, i64),
            "conv": conv,
            "ldc": IntegerAttr(ldc, i64),
            "batch": int_array(batch),
            "bias_offsets": int_array(bias_offsets) if bias_offsets is not None else None,
            "accumulate": UnitAttr() if accumulate else None,
            "transposed_c": UnitAttr() if transposed_c else None,
            "bias_columns": UnitAttr() if bias_columns else None,
            "activation": MatmulActivationAttr(activation) if activation is not None else None,
            "clip": ArrayAttr([FloatAttr(float(v), f64) for v in clip]),
            "pack": UnitAttr() if pack else None,
        }
        properties = {name: value for name, value in properties.items() if value is not None}  # in printed order
        operands = [a, b, c, [bias] if bias else [], [rows] if rows else [], [columns] if columns else []]
        operands += [list(offsets), list(image), [first_row] if first_row else []]
        super().__init__(operands=operands, properties=properties)

    @property
    def clip_bounds(self) -> tuple[float, float]:
        low, high = (a.value.data for a in self.clip.data)
        return low, high

    def verify_(self) -> None:
        sizes, tile = int_values(self.sizes), int_values(self.tile)
        if len(sizes) != 3 or min(sizes) < 1 or len(tile) != 3 or min(tile) < 1:
            raise VerifyException("krnl.matmul: sizes [M, N, K] and tile [mr, kc, nc] must be positive")
        if len(int_values(self.batch)) % 3 or not int_values(self.batch):
            raise VerifyException("krnl.matmul: batch lists (a, b, c) offset triples")
        if len(self.clip.data) != 2 or len(int_values(self.a_strides)) != 2:
            raise VerifyException("krnl.matmul: clip is [lo, hi], a_strides [row, column]")
        m, n, k = sizes
        mr = tile[0]
        a_shape = list(self.a.type.get_shape())
        if self.a_layout.data == MatmulALayout.PANELS and (a_shape[1:] != [k, mr] or a_shape[0] % -(-m // mr)):
            raise VerifyException("krnl.matmul: packed A must have shape [ceil(M/mr) * products, K, mr]")
        access, packed = self.b_access.data, self.pack is not None
        if access == MatmulBAccess.PANELS and (
            list(self.b.type.get_shape()) != [-(-n // MATMUL_B_PANEL), k, MATMUL_B_PANEL] or packed
        ):
            raise VerifyException("krnl.matmul: B panels must have shape [ceil(N/P), K, P] and no pack")
        window_a = self.a_layout.data == MatmulALayout.WINDOW
        if (self.conv is not None) != (access in (MatmulBAccess.IM2COL, MatmulBAccess.WINDOW) or window_a):
            raise VerifyException("krnl.matmul: im2col and window access, and only they, need a conv geometry")
        if window_a and (access in (MatmulBAccess.IM2COL, MatmulBAccess.WINDOW) or self.rows is not None):
            raise VerifyException("krnl.matmul: a window A goes with a B of rows or panels, M static")
        if self.transposed_c is not None and not window_a:
            raise VerifyException("krnl.matmul: transposed_c needs a window A")
        if access == MatmulBAccess.IM2COL and not packed:
            raise VerifyException("krnl.matmul: im2col needs pack")
        if access == MatmulBAccess.WINDOW and packed:
            raise VerifyException("krnl.matmul: window access reads B in place: no pack")
        if self.conv is not None:
            self._verify_conv(access, m if window_a else n, k, window_a)
        self._verify_run_time_columns(access)
        if self.rows is not None and (
            self.a_layout.data != MatmulALayout.STRIDED
            or len(int_values(self.batch)) != 3
            or (self.bias is not None and self.bias_columns is None)
        ):
            raise VerifyException("krnl.matmul: run-time rows need a strided A, one batch triple and no bias per row")
        if self.first_row is not None and self.rows is None:
            raise VerifyException("krnl.matmul: first_row goes with run-time rows")
        self._verify_bias(n if self.transposed_c is not None or self.bias_columns is not None else m)

    def _verify_bias(self, m: int) -> None:
        """bias is [M] (`m`: N with transposed_c or bias_columns), or holds M values from each of
        `bias_offsets` (one per batch triple)."""
        if self.bias_columns is not None and (
            self.bias is None
            or self.transposed_c is not None
            or self.bias_offsets is not None
            or self.columns is not None
        ):
            raise VerifyException(
                "krnl.matmul: bias_columns needs a bias, static columns, no transposed_c or bias_offsets"
            )
        offsets = int_values(self.bias_offsets) if self.bias_offsets is not None else None
        if offsets is not None and (self.bias is None or len(offsets) * 3 != len(int_values(self.batch))):
            raise VerifyException("krnl.matmul: bias_offsets need a bias and one offset per batch triple")
        if self.bias is None:
            return
        (size,) = self.bias.type.get_shape()
        if (size != m) if offsets is None else (min(offsets) < 0 or max(offsets) + m > size):
            raise VerifyException("krnl.matmul: bias must have shape [M], or M values from each bias offset")

    def _verify_run_time_columns(self, access: MatmulBAccess) -> None:
        if self.columns is None:
            if self.offsets or self.image:
                raise VerifyException("krnl.matmul: run-time offsets and image need run-time columns")
            return
        if access not in (MatmulBAccess.ROWS, MatmulBAccess.IM2COL) or (
            self.rows is not None and access != MatmulBAccess.ROWS
        ):
            raise VerifyException(
                "krnl.matmul: run-time columns need rows or im2col access of B (rows access with run-time rows)"
            )
        if self.ldb.value.data or self.ldc.value.data or len(int_values(self.batch)) != 3:
            raise VerifyException("krnl.matmul: run-time columns set ldb and ldc (0 here), one batch triple")
        if len(self.offsets) not in (0, 2) or len(self.image) != (6 if access == MatmulBAccess.IM2COL else 0):
            raise VerifyException("krnl.matmul: offsets are (B, C); image (H, W, OH, OW, pads) with im2col")

    def _verify_conv(self, access: MatmulBAccess, n: int, k: int, window_a: bool) -> None:
        """The shape of the operand read from the image must be the geometry's: K = C*KH*KW;
        `n` the output's columns (B's, or with `window_a` A's rows)."""
        conv = self.conv
        channels, height, width = conv.channels.data, conv.height.data, conv.width.data
        (out_h, out_w), (kernel_h, kernel_w) = conv.output, conv.kernel
        if k != channels * kernel_h * kernel_w:
            raise VerifyException("krnl.matmul: K must be the conv's channels * kernel_h * kernel_w")
        if access == MatmulBAccess.IM2COL and n != out_h * out_w and not self.image:
            raise VerifyException("krnl.matmul: im2col needs N = output_h * output_w")
        if window_a:
            if conv.padding != (0, 0) or n != out_h * out_w:
                raise VerifyException("krnl.matmul: a window A needs padding 0, M = output_h * output_w")
            (stride_h, stride_w), (dilation_h, dilation_w) = conv.stride, conv.dilation
            last_y, last_x = (
                (out_h - 1) * stride_h + (kernel_h - 1) * dilation_h,
                (out_w - 1) * stride_w + (kernel_w - 1) * dilation_w,
            )
            if last_y >= height or last_x >= width:
                raise VerifyException("krnl.matmul: a window A's image must hold every window")
        if access == MatmulBAccess.WINDOW:
            if conv.stride != (1, 1) or conv.padding != (0, 0):
                raise VerifyException("krnl.matmul: window access needs stride 1 and an image padded already")
            if n != (out_h - 1) * width + out_w:
                raise VerifyException("krnl.matmul: window access needs N = (output_h - 1) * width + output_w")
            if channels * height * width > MAX_WINDOW_OFFSET:
                raise VerifyException("krnl.matmul: window access to an image of 2**31 elements or more")


OPS = [MatmulOp]
ATTRIBUTES = [MatmulALayoutAttr, MatmulBAccessAttr, MatmulActivationAttr, ConvGeometryAttr]
