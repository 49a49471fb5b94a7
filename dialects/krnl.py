"""The `krnl` dialect: loop nests with schedules, over memrefs (after onnx-mlir's Krnl).

A kernel is written as the loops it needs (`krnl.define_loops`), a schedule
that transforms them (`krnl.block`, `krnl.permute`), and one `krnl.iterate`
whose body sees the induction variables of the *original* loops. The schedule
changes the order and tiling of iterations, never the body, so a lowering can
pick a schedule per op without rewriting the computation.

    %i, %j = krnl.define_loops 2
    %jo, %ji = krnl.block %j 8
    krnl.permute(%i, %jo, %ji) [1, 0, 2]        // nest: jo, i, ji
    krnl.iterate(%i, %jo, %ji) with (%i, %j) bounds [0, 0] to [4, 30] {
    ^bb0(%iv: index, %jv: index):
      ...                                        // memref.load/store, arith, math
      krnl.yield
    }

Semantics:
- `krnl.block %l N` splits loop `%l` (bounds [lb, ub), step s) into an outer
  loop over [lb, ub) stepping by s*N and an inner loop over
  [outer, min(outer + s*N, ub)) stepping by s. The inner loop's induction
  variable is `%l`'s, so blocking the inner loop again (nested blocking) or
  the outer one (two-level tiling) composes.
- `krnl.permute(%a, %b, ...) [p_a, p_b, ...]` rearranges the listed loops
  among the nest positions they would otherwise occupy: %a goes to the p_a-th
  of those positions (0 = outermost). Listing all of an iterate's loops makes
  p_a simply %a's depth.
- `krnl.iterate(optimized...) with (original...)`: the optimized loops are the
  leaves of the schedule, nested in the order given by the permutes (or listed
  order where there are none); the bounds belong to the original loops; the
  body's block arguments are the original loops' induction variables.

A schedule is well formed (checked by the verifiers) when every original loop
comes from `krnl.define_loops`, a loop is blocked at most once and permuted by
at most one permute, each loop belongs to one iterate, the optimized loops are
exactly the leaves of the original loops' blocks, and the outer loop of a block
is nested outside the loops of its inner half (whose bounds depend on it).

Matrix products that dominate CNNs and transformers are one `krnl.matmul` op
instead of a loop nest: it names its operands' layouts and its schedule
(register tile rows, reduction and column blocking, epilogue), and code
generation emits the register-blocked SIMD kernel for it (see the op).

Constants are `krnl.global` ops referring to a weight handle; the function that
the runtime calls is named by `krnl.entry_point`.

A graph output whose shape is known only at run time (NonZero, Unique...) is
an argument of type `memref<...x?x...>`: the lowering computes it into a
scratch buffer of its largest possible shape and ends with
`krnl.dynamic_output`, which hands the library-allocated result to the caller
(ABI version 2, runtime/onnxc.h).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    f64,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    opt_prop_def,
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

from onnxc.dialects.onnx import TensorValueAttr


@irdl_attr_definition
class LoopType(ParametrizedAttribute, TypeAttribute):
    """A loop handle: something a schedule can transform and an iterate can run."""

    name = "krnl.loop"


def _int_array(values: Sequence[int]) -> ArrayAttr[IntegerAttr]:
    return ArrayAttr([IntegerAttr(v, i64) for v in values])


def int_values(attr: ArrayAttr) -> list[int]:
    return [a.value.data for a in attr.data]


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(map(str, values)) + "]")


def _parse_int_list(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


def _parse_loop_list(parser: Parser) -> list[SSAValue]:
    """`(%a, %b, ...)`: loop handles, whose type is implied."""
    return parser.parse_comma_separated_list(Parser.Delimiter.PAREN, lambda: parser.parse_operand(LoopType()))


def _print_loop_list(printer: Printer, loops: Sequence[SSAValue]) -> None:
    with printer.in_parens():
        printer.print_list(loops, printer.print_ssa_value)


@irdl_op_definition
class DefineLoopsOp(IRDLOperation):
    """`%i, %j = krnl.define_loops 2`: the original loops of one iterate."""

    name = "krnl.define_loops"

    num_loops = prop_def(IntegerAttr)
    loops = var_result_def(LoopType)

    def __init__(self, num_loops: int):
        super().__init__(properties={"num_loops": IntegerAttr(num_loops, i64)}, result_types=[[LoopType()] * num_loops])

    def verify_(self) -> None:
        if len(self.loops) != self.num_loops.value.data:
            raise VerifyException("krnl.define_loops: result count differs from num_loops")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.num_loops.value.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> DefineLoopsOp:
        op = cls(parser.parse_integer(allow_boolean=False, allow_negative=False))
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class BlockOp(IRDLOperation):
    """`%outer, %inner = krnl.block %loop 8`: tile one loop."""

    name = "krnl.block"

    loop = operand_def(LoopType)
    tile_size = prop_def(IntegerAttr)
    outer = result_def(LoopType)
    inner = result_def(LoopType)

    def __init__(self, loop: SSAValue, tile_size: int):
        super().__init__(
            operands=[loop],
            properties={"tile_size": IntegerAttr(tile_size, i64)},
            result_types=[LoopType(), LoopType()],
        )

    def verify_(self) -> None:
        if self.tile_size.value.data < 1:
            raise VerifyException("krnl.block: tile size must be positive")
        if sum(isinstance(use.operation, BlockOp) for use in self.loop.uses) > 1:
            raise VerifyException("krnl.block: a loop can be blocked only once")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.loop)
        printer.print_string(f" {self.tile_size.value.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> BlockOp:
        loop = parser.parse_operand(LoopType())
        op = cls(loop, parser.parse_integer(allow_boolean=False))
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """`krnl.permute(%a, %b) [1, 0]`: loops[k] moves to the map[k]-th of the listed loops' positions."""

    name = "krnl.permute"

    loops = var_operand_def(LoopType)
    map = prop_def(ArrayAttr)

    def __init__(self, loops: Sequence[SSAValue], positions: Sequence[int]):
        super().__init__(operands=[list(loops)], properties={"map": _int_array(positions)})

    def verify_(self) -> None:
        positions = int_values(self.map)
        if sorted(positions) != list(range(len(self.loops))):
            raise VerifyException("krnl.permute: map must be a permutation of the loops")
        if len(set(self.loops)) != len(self.loops):
            raise VerifyException("krnl.permute: a loop is listed twice")
        for loop in self.loops:
            if any(isinstance(use.operation, PermuteOp) and use.operation is not self for use in loop.uses):
                raise VerifyException("krnl.permute: a loop can be permuted by only one krnl.permute")

    def print(self, printer: Printer) -> None:
        _print_loop_list(printer, self.loops)
        printer.print_string(" ")
        _print_int_list(printer, int_values(self.map))
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> PermuteOp:
        op = cls(_parse_loop_list(parser), _parse_int_list(parser))
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "krnl.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IterateOp)))
    assembly_format = "attr-dict"


@irdl_op_definition
class IterateOp(IRDLOperation):
    """Run the body over the original loops' iteration space, in the scheduled order."""

    name = "krnl.iterate"

    optimized_loops = var_operand_def(LoopType)
    original_loops = var_operand_def(LoopType)
    lower_bounds = prop_def(ArrayAttr)
    upper_bounds = prop_def(ArrayAttr)
    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        optimized_loops: Sequence[SSAValue],
        original_loops: Sequence[SSAValue],
        lower_bounds: Sequence[int],
        upper_bounds: Sequence[int],
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * len(original_loops)))
        super().__init__(
            operands=[list(optimized_loops), list(original_loops)],
            properties={"lower_bounds": _int_array(lower_bounds), "upper_bounds": _int_array(upper_bounds)},
            regions=[body],
        )

    @property
    def induction_vars(self) -> tuple[SSAValue, ...]:
        return self.body.block.args

    def verify_(self) -> None:
        n = len(self.original_loops)
        if len(int_values(self.lower_bounds)) != n or len(int_values(self.upper_bounds)) != n:
            raise VerifyException("krnl.iterate: one lower and upper bound per original loop")
        if len(self.body.block.args) != n:
            raise VerifyException("krnl.iterate: one block argument per original loop")
        if any(not isinstance(arg.type, IndexType) for arg in self.body.block.args):
            raise VerifyException("krnl.iterate: block arguments must be of type index")
        nest_order(self)

    def print(self, printer: Printer) -> None:
        _print_loop_list(printer, self.optimized_loops)
        printer.print_string(" with ")
        _print_loop_list(printer, self.original_loops)
        printer.print_string(" bounds ")
        _print_int_list(printer, int_values(self.lower_bounds))
        printer.print_string(" to ")
        _print_int_list(printer, int_values(self.upper_bounds))
        printer.print_string(" ")
        printer.print_region(self.body)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> IterateOp:
        optimized = _parse_loop_list(parser)
        parser.parse_keyword("with")
        original = _parse_loop_list(parser)
        parser.parse_keyword("bounds")
        lower = _parse_int_list(parser)
        parser.parse_keyword("to")
        upper = _parse_int_list(parser)
        op = cls(optimized, original, lower, upper, parser.parse_region())
        op.attributes |= parser.parse_optional_attr_dict()
        return op


def _blocking_of(loop: SSAValue) -> BlockOp | None:
    """The krnl.block that splits `loop`, if any (a verified loop has at most one)."""
    for use in loop.uses:
        if isinstance(use.operation, BlockOp):
            return use.operation
    return None


def iv_leaf(loop: SSAValue) -> SSAValue:
    """The leaf loop whose induction variable is `loop`'s (a blocked loop's lives on in its inner loop)."""
    while (block := _blocking_of(loop)) is not None:
        loop = block.inner
    return loop


def _leaves_and_blocks(loop: SSAValue, leaves: list[SSAValue], blocks: list[BlockOp]) -> None:
    if (block := _blocking_of(loop)) is None:
        leaves.append(loop)
        return
    blocks.append(block)
    _leaves_and_blocks(block.outer, leaves, blocks)
    _leaves_and_blocks(block.inner, leaves, blocks)


def _check_loop_operands(iterate: IterateOp) -> None:
    optimized, original = list(iterate.optimized_loops), list(iterate.original_loops)
    if len(set(optimized)) != len(optimized) or len(set(original)) != len(original):
        raise VerifyException("krnl.iterate: a loop is listed twice")
    for loop in optimized + original:
        if any(isinstance(use.operation, IterateOp) and use.operation is not iterate for use in loop.uses):
            raise VerifyException("krnl.iterate: a loop is used by more than one krnl.iterate")
    if not all(isinstance(loop.owner, DefineLoopsOp) for loop in original):
        raise VerifyException("krnl.iterate: original loops must come from krnl.define_loops")
    for k, loop in enumerate(optimized):
        if _blocking_of(loop) is not None:
            raise VerifyException(
                f"krnl.iterate: optimized loop {k} is blocked; iterate the loops krnl.block made of it"
            )


def _apply_permutes(listed_order: list[SSAValue]) -> list[SSAValue]:
    position = {loop: k for k, loop in enumerate(listed_order)}
    permutes = {  # each once, in a deterministic order
        use.operation: None for loop in listed_order for use in loop.uses if isinstance(use.operation, PermuteOp)
    }
    order = list(listed_order)
    for permute in permutes:
        if any(loop not in position for loop in permute.loops):
            raise VerifyException("krnl.permute: lists loops that its krnl.iterate does not iterate")
        slots = sorted(position[loop] for loop in permute.loops)
        for loop, rank in zip(permute.loops, int_values(permute.map), strict=True):
            order[slots[rank]] = loop
    return order


def nest_order(iterate: IterateOp) -> list[SSAValue]:
    """The iterate's optimized loops from outermost to innermost, as its schedule says.

    Raises VerifyException on a malformed schedule; the verifier and the lowering
    share this so that whatever verifies also lowers.
    """
    _check_loop_operands(iterate)
    leaves: list[SSAValue] = []
    blocks: list[BlockOp] = []
    for loop in iterate.original_loops:
        _leaves_and_blocks(loop, leaves, blocks)
    if set(leaves) != set(iterate.optimized_loops):
        raise VerifyException(
            "krnl.iterate: the optimized loops must be exactly the leaves of the original loops' blocks"
        )
    order = _apply_permutes(list(iterate.optimized_loops))
    depth = {loop: k for k, loop in enumerate(order)}
    for block in blocks:
        inner_leaves: list[SSAValue] = []
        _leaves_and_blocks(block.inner, inner_leaves, [])
        if any(depth[leaf] < depth[iv_leaf(block.outer)] for leaf in inner_leaves):
            raise VerifyException("krnl.iterate: the inner loop of a block must be nested inside its outer loop")
    return order


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """A constant buffer whose contents are a weight (or small inline dense value)."""

    name = "krnl.global"

    value = prop_def(AnyAttr())
    result = result_def(MemRefType)

    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value: TensorValueAttr, result_type: MemRefType):
        super().__init__(properties={"value": value}, result_types=[result_type])


@irdl_op_definition
class EntryPointOp(IRDLOperation):
    """Names the function run_main_graph calls and the model's input/output names.

    The function takes the inputs, then the output buffers (destination
    passing), and returns nothing.
    """

    name = "krnl.entry_point"

    func = prop_def(SymbolRefAttr)
    input_names = prop_def(ArrayAttr)
    output_names = prop_def(ArrayAttr)
    batch_symbol = opt_prop_def(StringAttr)
    """Set for a batch loop: the function computes one sample (batch 1) and
    run_main_graph calls it once per sample of the batch it is given."""
    batched_inputs = opt_prop_def(ArrayAttr)
    """With batch_symbol: per input, 1 if its leading dim is the batch (else it is
    passed whole to every sample). Every output is batched."""

    assembly_format = "attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        func: str,
        input_names: Sequence[str],
        output_names: Sequence[str],
        batch_symbol: str | None = None,
        batched_inputs: Sequence[bool] = (),
    ):
        properties = {
            "func": SymbolRefAttr(func),
            "input_names": ArrayAttr([StringAttr(n) for n in input_names]),
            "output_names": ArrayAttr([StringAttr(n) for n in output_names]),
        }
        if batch_symbol is not None:
            properties["batch_symbol"] = StringAttr(batch_symbol)
            properties["batched_inputs"] = ArrayAttr([IntegerAttr(int(b), i64) for b in batched_inputs])
        super().__init__(properties=properties)

    def verify_(self) -> None:
        if (self.batch_symbol is None) != (self.batched_inputs is None):
            raise VerifyException("krnl.entry_point: batch_symbol and batched_inputs go together")
        if self.batched_inputs is not None and len(self.batched_inputs.data) != len(self.input_names.data):
            raise VerifyException("krnl.entry_point: one batched_inputs flag per input")


@irdl_op_definition
class DynamicOutputOp(IRDLOperation):
    """`krnl.dynamic_output %src[%extent] into %out {axis = 1}`: the graph output
    `%out` (an argument with one dynamic dim, `axis`) becomes the first `extent`
    entries of `%src` along `axis`, in a fresh allocation the caller frees.

    `%src` has the output's shape with its largest possible dim at `axis`; an
    extent above that dim is clamped to it, so no read leaves `%src`.
    """

    name = "krnl.dynamic_output"

    source = operand_def(MemRefType)
    extent = operand_def(IndexType)
    output = operand_def(MemRefType)
    axis = prop_def(IntegerAttr)

    assembly_format = "$source `[` $extent `]` `into` $output attr-dict `:` type($source) `,` type($output)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, source: SSAValue, extent: SSAValue, output: SSAValue, axis: int):
        super().__init__(operands=[source, extent, output], properties={"axis": IntegerAttr(axis, i64)})

    def verify_(self) -> None:
        axis = self.axis.value.data
        source, output = list(self.source.type.get_shape()), list(self.output.type.get_shape())
        if not 0 <= axis < len(source) or len(source) != len(output):
            raise VerifyException("krnl.dynamic_output: source and output need one rank, and axis within it")
        dynamic = [k for k, d in enumerate(output) if d < 0]
        static_dims_equal = all(o == d for k, (o, d) in enumerate(zip(output, source)) if k != axis)
        if dynamic != [axis] or not static_dims_equal or any(d < 0 for d in source):
            raise VerifyException(
                "krnl.dynamic_output: the output must have the static source shape with a dynamic dim at axis"
            )
        if self.source.type.element_type != self.output.type.element_type:
            raise VerifyException("krnl.dynamic_output: source and output element types differ")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """`%v = krnl.view %base[256] : memref<1x64x4x4xf32> to memref<1x16x4x4xf32>`: a
    row-major buffer that is the contiguous range of `%base` starting at element
    `offset`; writing it writes `%base`. A producer writes its result straight
    into its slice of a Concat's output this way (see `concat_placement`). The
    buffer behind a view lives as long as any view of it is used."""

    name = "krnl.view"

    base = operand_def(MemRefType)
    offset = prop_def(IntegerAttr)
    result = result_def(MemRefType)

    assembly_format = "$base `[` $offset `]` attr-dict `:` type($base) `to` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, base: SSAValue, offset: int, result_type: MemRefType):
        super().__init__(operands=[base], properties={"offset": IntegerAttr(offset, i64)}, result_types=[result_type])

    def verify_(self) -> None:
        base, view = self.base.type, self.result.type
        if base.element_type != view.element_type:
            raise VerifyException("krnl.view: base and view element types differ")
        if any(d < 0 for t in (base, view) for d in t.get_shape()):
            raise VerifyException("krnl.view: base and view need static shapes")
        offset = self.offset.value.data
        if offset < 0 or offset + view.element_count() > base.element_count():
            raise VerifyException(
                f"krnl.view: elements [{offset}, {offset + view.element_count()}) exceed the base's {base.element_count()}"
            )


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


class MatmulBAccess(StrEnum):
    """How krnl.matmul reads B (see MatmulOp)."""

    ROWS = "rows"
    IM2COL = "im2col"
    PANELS = "panels"
    WINDOW = "window"


@irdl_attr_definition
class MatmulALayoutAttr(EnumAttribute[MatmulALayout], SpacedOpaqueSyntaxAttribute):
    """`#krnl<a_layout panels>`: only the layouts codegen knows parse."""

    name = "krnl.a_layout"


@irdl_attr_definition
class MatmulBAccessAttr(EnumAttribute[MatmulBAccess], SpacedOpaqueSyntaxAttribute):
    """`#krnl<b_access im2col>`: only the access modes codegen knows parse."""

    name = "krnl.b_access"


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
                values[name] = parser.parse_integer() if name in _CONV_SCALARS else _parse_int_list(parser)
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
      with `a_strides = [s0, s1]`.
    - `b_access = rows`: B[k, n] = b[k*ldb + n] (`ldb`), read in place;
      `im2col`: B is the im2col matrix of the NCHW image `conv` (k = (c, ky,
      kx), n = (oy, ox), padding reads zero); `panels`: B was packed at compile
      time into column panels [ceil(N/P), K, P] (P = MATMUL_B_PANEL, zero
      columns pad the last one), each read as one sequential stream; `window`:
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
    - C[m, n] = c[m*ldc + n]; with `accumulate`, C's contents are added to.

    Schedule (`tile = [mr, kc, nc]`): columns in blocks of nc, the reduction in
    blocks of kc (B block in cache), rows in register tiles of mr; each tile
    row of mr x nr accumulators lives in vector registers, nr being a number of
    vectors fitting the target's register file (chosen by code generation).
    Epilogue, applied in the kernel's store: + bias[m] (optional operand),
    then clamp to `clip = [lo, hi]` (Relu: [0, inf]).
    """

    name = "krnl.matmul"

    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    bias = opt_operand_def(MemRefType)

    sizes = prop_def(ArrayAttr)
    tile = prop_def(ArrayAttr)
    a_layout = prop_def(MatmulALayoutAttr)
    a_strides = prop_def(ArrayAttr)
    b_access = prop_def(MatmulBAccessAttr)
    ldb = prop_def(IntegerAttr)
    conv = opt_prop_def(ConvGeometryAttr)
    ldc = prop_def(IntegerAttr)
    batch = prop_def(ArrayAttr)
    accumulate = opt_prop_def(UnitAttr)
    clip = prop_def(ArrayAttr)
    pack = opt_prop_def(UnitAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$a `,` $b `into` $c (`bias` $bias^)? attr-dict `:` type($a) `,` type($b) `,` type($c) (`,` type($bias)^)?"
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
        clip: Sequence[float] = (float("-inf"), float("inf")),
        pack: bool = False,
        bias: SSAValue | None = None,
    ):
        properties = {
            "sizes": _int_array(sizes),
            "tile": _int_array(tile),
            "a_layout": MatmulALayoutAttr(a_layout),
            "a_strides": _int_array(a_strides),
            "b_access": MatmulBAccessAttr(b_access),
            "ldb": IntegerAttr(ldb, i64),
            "conv": conv,
            "ldc": IntegerAttr(ldc, i64),
            "batch": _int_array(batch),
            "accumulate": UnitAttr() if accumulate else None,
            "clip": ArrayAttr([FloatAttr(float(v), f64) for v in clip]),
            "pack": UnitAttr() if pack else None,
        }
        properties = {name: value for name, value in properties.items() if value is not None}  # in printed order
        super().__init__(operands=[a, b, c, [bias] if bias else []], properties=properties)

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
        if self.a_layout.data == MatmulALayout.PANELS and list(self.a.type.get_shape()) != [-(-m // mr), k, mr]:
            raise VerifyException("krnl.matmul: packed A must have shape [ceil(M/mr), K, mr]")
        access, packed = self.b_access.data, self.pack is not None
        if access == MatmulBAccess.PANELS and (
            list(self.b.type.get_shape()) != [-(-n // MATMUL_B_PANEL), k, MATMUL_B_PANEL] or packed
        ):
            raise VerifyException("krnl.matmul: B panels must have shape [ceil(N/P), K, P] and no pack")
        if (self.conv is not None) != (access in (MatmulBAccess.IM2COL, MatmulBAccess.WINDOW)):
            raise VerifyException("krnl.matmul: im2col and window access, and only they, need a conv geometry")
        if access == MatmulBAccess.IM2COL and not packed:
            raise VerifyException("krnl.matmul: im2col needs pack")
        if access == MatmulBAccess.WINDOW and packed:
            raise VerifyException("krnl.matmul: window access reads B in place: no pack")
        if self.conv is not None:
            self._verify_conv(access, n, k)
        if self.bias is not None and list(self.bias.type.get_shape()) != [m]:
            raise VerifyException("krnl.matmul: bias must have shape [M]")

    def _verify_conv(self, access: MatmulBAccess, n: int, k: int) -> None:
        """B's shape [K, N] must be the geometry's: K = C*KH*KW; N the output's columns."""
        conv = self.conv
        channels, height, width = conv.channels.data, conv.height.data, conv.width.data
        (out_h, out_w), (kernel_h, kernel_w) = conv.output, conv.kernel
        if k != channels * kernel_h * kernel_w:
            raise VerifyException("krnl.matmul: K must be the conv's channels * kernel_h * kernel_w")
        if access == MatmulBAccess.IM2COL and n != out_h * out_w:
            raise VerifyException("krnl.matmul: im2col needs N = output_h * output_w")
        if access == MatmulBAccess.WINDOW:
            if conv.stride != (1, 1) or conv.padding != (0, 0):
                raise VerifyException("krnl.matmul: window access needs stride 1 and an image padded already")
            if n != (out_h - 1) * width + out_w:
                raise VerifyException("krnl.matmul: window access needs N = (output_h - 1) * width + output_w")
            if channels * height * width > MAX_WINDOW_OFFSET:
                raise VerifyException("krnl.matmul: window access to an image of 2**31 elements or more")


KRNL = Dialect(
    "krnl",
    [DefineLoopsOp, BlockOp, PermuteOp, IterateOp, YieldOp, GlobalOp, EntryPointOp, MatmulOp, DynamicOutputOp, ViewOp],
    [LoopType, MatmulALayoutAttr, MatmulBAccessAttr, ConvGeometryAttr],
)

__all__ = [
    "KRNL",
    "LoopType",
    "DefineLoopsOp",
    "BlockOp",
    "PermuteOp",
    "IterateOp",
    "YieldOp",
    "GlobalOp",
    "EntryPointOp",
    "MatmulOp",
    "MatmulALayout",
    "MatmulALayoutAttr",
    "MatmulBAccess",
    "MatmulBAccessAttr",
    "ConvGeometryAttr",
    "DynamicOutputOp",
    "ViewOp",
    "matmul_scratch_pitch",
    "int_values",
    "nest_order",
    "iv_leaf",
]
