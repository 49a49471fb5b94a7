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
generation emits the register-blocked SIMD kernel for it (krnl_matmul.py).

Constants are `krnl.global` ops referring to a weight handle; the function that
the runtime calls is named by `krnl.entry_point`.

A graph output whose shape depends on input values (NonZero, Unique...) is an
argument of type `memref<...x?x..., "onnxc_tensor">` (`library_allocated_type`):
the lowering computes it into a scratch buffer of its largest possible shape
and ends with `krnl.dynamic_output`, which hands the library-allocated result
to the caller (ABI version 2, runtime/onnxc.h). Any other `?` dim is a
symbolic dim known when the run starts (see passes/helpers/run_time_dims.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, MemRefType, StringAttr, SymbolRefAttr, i64
from xdsl.ir import Attribute, Block, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
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
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

from onnxc.dialects.onnx import TensorValueAttr
from onnxc.dialects.symbolic import DimCheck


@irdl_attr_definition
class LoopType(ParametrizedAttribute, TypeAttribute):
    """A loop handle: something a schedule can transform and an iterate can run."""

    name = "krnl.loop"


LIBRARY_ALLOCATED = StringAttr("onnxc_tensor")
"""Memory space of a graph output argument that is the ABI's tensor, which the library allocates."""


def library_allocated_type(element: Attribute, shape: Sequence[int]) -> MemRefType:
    return MemRefType(element, shape, memory_space=LIBRARY_ALLOCATED)


def is_library_allocated(memref_type: Attribute) -> bool:
    return isinstance(memref_type, MemRefType) and memref_type.memory_space == LIBRARY_ALLOCATED


DYNAMIC_BOUND = -1
"""An entry of `krnl.iterate`'s upper_bounds standing for an index operand."""


def int_array(values: Sequence[int]) -> ArrayAttr[IntegerAttr]:
    return ArrayAttr([IntegerAttr(v, i64) for v in values])


def int_values(attr: ArrayAttr) -> list[int]:
    return [a.value.data for a in attr.data]


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(map(str, values)) + "]")


def parse_int_list(parser: Parser) -> list[int]:
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
        super().__init__(operands=[list(loops)], properties={"map": int_array(positions)})

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
        op = cls(_parse_loop_list(parser), parse_int_list(parser))
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "krnl.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(IterateOp)))
    assembly_format = "attr-dict"


@irdl_op_definition
class IterateOp(IRDLOperation):
    """Run the body over the original loops' iteration space, in the scheduled order.

    An upper bound known only at run time (a dim of a tensor with symbolic
    dims) is an index operand: it prints in place (`to [%n, 30]`) and is
    `DYNAMIC_BOUND` in the `upper_bounds` property, the operands filling
    those entries in order, as MLIR's static/dynamic mixed lists do.
    """

    name = "krnl.iterate"

    optimized_loops = var_operand_def(LoopType)
    original_loops = var_operand_def(LoopType)
    dynamic_upper_bounds = var_operand_def(IndexType)
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
        upper_bounds: Sequence[int | SSAValue],
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=[IndexType()] * len(original_loops)))
        static = [b if isinstance(b, int) else DYNAMIC_BOUND for b in upper_bounds]
        dynamic = [b for b in upper_bounds if not isinstance(b, int)]
        super().__init__(
            operands=[list(optimized_loops), list(original_loops), dynamic],
            properties={"lower_bounds": int_array(lower_bounds), "upper_bounds": int_array(static)},
            regions=[body],
        )

    @property
    def induction_vars(self) -> tuple[SSAValue, ...]:
        return self.body.block.args

    def upper_bound_values(self) -> list[int | SSAValue]:
        """The upper bounds, an operand where the bound is known at run time only."""
        dynamic = iter(self.dynamic_upper_bounds)
        return [next(dynamic) if b == DYNAMIC_BOUND else b for b in int_values(self.upper_bounds)]

    def verify_(self) -> None:
        n = len(self.original_loops)
        if len(int_values(self.lower_bounds)) != n or len(int_values(self.upper_bounds)) != n:
            raise VerifyException("krnl.iterate: one lower and upper bound per original loop")
        if int_values(self.upper_bounds).count(DYNAMIC_BOUND) != len(self.dynamic_upper_bounds):
            raise VerifyException("krnl.iterate: one operand per dynamic upper bound")
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
        printer.print_string(" to [")
        printer.print_list(
            self.upper_bound_values(),
            lambda b: printer.print_string(str(b)) if isinstance(b, int) else printer.print_ssa_value(b),
        )
        printer.print_string("] ")
        printer.print_region(self.body)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> IterateOp:
        optimized = _parse_loop_list(parser)
        parser.parse_keyword("with")
        original = _parse_loop_list(parser)
        parser.parse_keyword("bounds")
        lower = parse_int_list(parser)
        parser.parse_keyword("to")
        upper = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, lambda: _parse_bound(parser))
        op = cls(optimized, original, lower, upper, parser.parse_region())
        op.attributes |= parser.parse_optional_attr_dict()
        return op


def _parse_bound(parser: Parser) -> int | SSAValue:
    """An integer, or else an index operand."""
    value = parser.parse_optional_integer(allow_boolean=False)
    return parser.parse_operand(IndexType()) if value is None else value


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
    dims = opt_prop_def(ArrayAttr)
    """Per input, then per output, the expression of each dim (`"N*S"`, "" where
    static): the symbolic dims the entry point binds from the inputs and checks."""
    checks = opt_prop_def(ArrayAttr)
    """What the nodes need of the bound dims beyond that (symbolic.DimCheck, each
    [lhs, relation, rhs, node, op type]), checked by the entry point too."""
    map_keys = opt_prop_def(ArrayAttr)
    """Per output, the keys of an output that is a sequence of maps (ZipMap: row n of
    the tensor is map n, column c the value of key c), empty for a tensor."""
    sequence_axes = opt_prop_def(ArrayAttr)
    """Per output, [axis, keepdims, size] of an output that is a sequence of run-time
    length (its items the tensor's slices of `size` along axis, the last maybe shorter;
    keepdims 0: slices of one without the axis), empty for a tensor."""

    assembly_format = "attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        func: str,
        input_names: Sequence[str],
        output_names: Sequence[str],
        batch_symbol: str | None = None,
        batched_inputs: Sequence[bool] = (),
        dims: Sequence[Sequence[str]] = (),
        checks: Sequence[DimCheck] = (),
        map_keys: ArrayAttr | None = None,
        sequence_axes: ArrayAttr | None = None,
    ):
        properties = {
            "func": SymbolRefAttr(func),
            "input_names": ArrayAttr([StringAttr(n) for n in input_names]),
            "output_names": ArrayAttr([StringAttr(n) for n in output_names]),
        }
        if batch_symbol is not None:
            properties["batch_symbol"] = StringAttr(batch_symbol)
            properties["batched_inputs"] = ArrayAttr([IntegerAttr(int(b), i64) for b in batched_inputs])
        if any(any(tensor) for tensor in dims):
            properties["dims"] = ArrayAttr([ArrayAttr([StringAttr(d) for d in tensor]) for tensor in dims])
        if checks:
            properties["checks"] = ArrayAttr([ArrayAttr([StringAttr(t) for t in c.strings()]) for c in checks])
        if map_keys is not None:
            properties["map_keys"] = map_keys
        if sequence_axes is not None:
            properties["sequence_axes"] = sequence_axes
        super().__init__(properties=properties)

    def dim_expressions(self) -> list[list[str]]:
        """`dims` as lists of strings, empty if no dim is symbolic."""
        return [[d.data for d in tensor.data] for tensor in self.dims.data] if self.dims is not None else []

    def output_map_keys(self) -> list[list[int | str]]:
        """`map_keys` as Python lists (empty for every output if absent)."""
        if self.map_keys is None:
            return [[] for _ in self.output_names.data]
        return [
            [k.data if isinstance(k, StringAttr) else k.value.data for k in keys.data] for keys in self.map_keys.data
        ]

    def output_sequence_axes(self) -> list[tuple[int, bool, int] | None]:
        """`sequence_axes` as (axis, keepdims, size) per output, None for a tensor."""
        if self.sequence_axes is None:
            return [None for _ in self.output_names.data]
        return [
            (axes.data[0].value.data, bool(axes.data[1].value.data), axes.data[2].value.data) if axes.data else None
            for axes in self.sequence_axes.data
        ]

    def dim_checks(self) -> list[DimCheck]:
        if self.checks is None:
            return []
        return [DimCheck.from_strings(*(s.data for s in check.data)) for check in self.checks.data]

    def verify_(self) -> None:
        try:
            self.dim_checks()
        except (TypeError, ValueError) as exc:
            raise VerifyException(f"krnl.entry_point: bad dim check: {exc}") from None
        if (self.batch_symbol is None) != (self.batched_inputs is None):
            raise VerifyException("krnl.entry_point: batch_symbol and batched_inputs go together")
        if self.batched_inputs is not None and len(self.batched_inputs.data) != len(self.input_names.data):
            raise VerifyException("krnl.entry_point: one batched_inputs flag per input")
        if self.dims is not None and len(self.dims.data) != len(self.input_names.data) + len(self.output_names.data):
            raise VerifyException("krnl.entry_point: one dims list per input and output")


@irdl_op_definition
class DynamicOutputOp(IRDLOperation):
    """`krnl.dynamic_output %src[%extent] into %out {axis = 1}`: the graph output
    `%out` (an argument with one dynamic dim, `axis`) becomes the first `extent`
    entries of `%src` along `axis`, in a fresh allocation the caller frees.

    `%src` has the output's shape with its largest possible dim at `axis`; an
    extent above that dim is clamped to it, so no read leaves `%src`. The
    output's other dims are the source's: static, or `?` in both (run-time
    dims, read from the source, as may be the source's dim at `axis`).
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
        other_dims_equal = all(o == d for k, (o, d) in enumerate(zip(output, source)) if k != axis)
        if output[axis] >= 0 or not other_dims_equal:
            raise VerifyException(
                "krnl.dynamic_output: the output must have the source shape with a dynamic dim at axis"
            )
        if self.source.type.element_type != self.output.type.element_type:
            raise VerifyException("krnl.dynamic_output: source and output element types differ")
        if not is_library_allocated(self.output.type):
            raise VerifyException("krnl.dynamic_output: the output must be a library-allocated tensor argument")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """`%v = krnl.view %base[256] : memref<1x64x4x4xf32> to memref<1x16x4x4xf32>`: a
    row-major buffer that is the contiguous range of `%base` starting at element
    `offset`; writing it writes `%base`. A producer writes its result straight
    into its slice of a Concat's output this way (see `concat_placement`), and a
    Reshape views its input. The buffer behind a view lives as long as any view
    of it is used.

    A view with run-time dims (`krnl.view %x[0] (%n) : memref<?x8xf32> to
    memref<?x2x4xf32>`) takes them as index operands, in order; it starts at
    offset 0 (a reshape), its element count being the base's, or at a run-time
    element offset (`krnl.view %x[0] + %o (%h, %w) : memref<1x8x?x?xf32> to
    memref<1x2x?x?xf32>`: a Concat input's slice of an image of run-time size)."""

    name = "krnl.view"

    base = operand_def(MemRefType)
    sizes = var_operand_def(IndexType)
    dynamic_offset = opt_operand_def(IndexType)
    offset = prop_def(IntegerAttr)
    result = result_def(MemRefType)

    assembly_format = (
        "$base `[` $offset `]` (`+` $dynamic_offset^)? (`(` $sizes^ `)`)? attr-dict `:` type($base) `to` type($result)"
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    def __init__(
        self,
        base: SSAValue,
        offset: int,
        result_type: MemRefType,
        sizes: Sequence[SSAValue] = (),
        dynamic_offset: SSAValue | None = None,
    ):
        super().__init__(
            operands=[base, list(sizes), [dynamic_offset] if dynamic_offset is not None else []],
            properties={"offset": IntegerAttr(offset, i64)},
            result_types=[result_type],
        )

    @property
    def starts_at_zero(self) -> bool:
        """Whether the view starts where its base does (a reshape of all or a first part of it)."""
        return self.dynamic_offset is None and self.offset.value.data == 0

    def verify_(self) -> None:
        base, view = self.base.type, self.result.type
        if base.element_type != view.element_type:
            raise VerifyException("krnl.view: base and view element types differ")
        if sum(d < 0 for d in view.get_shape()) != len(self.sizes):
            raise VerifyException("krnl.view: one size operand per dynamic dim of the view")
        offset = self.offset.value.data
        if self.dynamic_offset is not None and offset:
            raise VerifyException("krnl.view: a run-time offset, or a static one, not both")
        if any(d < 0 for t in (base, view) for d in t.get_shape()):
            if offset:
                raise VerifyException("krnl.view: a view with dynamic dims starts at offset 0 or a run-time offset")
            return
        if offset < 0 or offset + view.element_count() > base.element_count():
            raise VerifyException(
                f"krnl.view: elements [{offset}, {offset + view.element_count()}) exceed the base's {base.element_count()}"
            )


OPS = [DefineLoopsOp, BlockOp, PermuteOp, IterateOp, YieldOp, GlobalOp, EntryPointOp, DynamicOutputOp, ViewOp]
ATTRIBUTES = [LoopType]
