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
- `krnl.block %l N` splits loop `%l` (bounds [lb, ub)) into an outer loop
  stepping by N and an inner loop over [outer, min(outer + N, ub)).
- `krnl.permute(%a, %b, ...) [p_a, p_b, ...]` puts loop %a at nest position
  p_a among the listed loops (0 = outermost).
- `krnl.iterate(optimized...) with (original...)`: the optimized loops are the
  leaves of the schedule, nested in the order given by the permutes (or listed
  order where there are none); the bounds belong to the original loops; the
  body's block arguments are the original loops' induction variables.

Constants are `krnl.global` ops referring to a weight handle; the function that
the runtime calls is named by `krnl.entry_point`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Block, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator
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


@irdl_op_definition
class DefineLoopsOp(IRDLOperation):
    name = "krnl.define_loops"

    num_loops = prop_def(IntegerAttr)
    loops = var_result_def(LoopType)

    def __init__(self, num_loops: int):
        super().__init__(
            properties={"num_loops": IntegerAttr(num_loops, i64)},
            result_types=[[LoopType()] * num_loops],
        )

    def verify_(self) -> None:
        if len(self.loops) != self.num_loops.value.data:
            raise VerifyException("krnl.define_loops: result count differs from num_loops")


@irdl_op_definition
class BlockOp(IRDLOperation):
    """Tile one loop: (outer stepping by tile_size, inner within the tile)."""

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


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """Reorder loops: loops[k] is placed at nest position map[k]."""

    name = "krnl.permute"

    loops = var_operand_def(LoopType)
    map = prop_def(ArrayAttr)

    def __init__(self, loops: Sequence[SSAValue], positions: Sequence[int]):
        super().__init__(operands=[list(loops)], properties={"map": _int_array(positions)})

    def verify_(self) -> None:
        positions = int_values(self.map)
        if sorted(positions) != list(range(len(self.loops))):
            raise VerifyException("krnl.permute: map must be a permutation of the loops")


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "krnl.yield"
    traits = traits_def(IsTerminator())


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
            properties={
                "lower_bounds": _int_array(lower_bounds),
                "upper_bounds": _int_array(upper_bounds),
            },
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


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """A constant buffer whose contents are a weight (or small inline dense value)."""

    name = "krnl.global"

    value = prop_def(AnyAttr())
    result = result_def(MemRefType)

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

    def __init__(self, func: str, input_names: Sequence[str], output_names: Sequence[str]):
        super().__init__(
            properties={
                "func": SymbolRefAttr(func),
                "input_names": ArrayAttr([StringAttr(n) for n in input_names]),
                "output_names": ArrayAttr([StringAttr(n) for n in output_names]),
            }
        )


KRNL = Dialect(
    "krnl",
    [DefineLoopsOp, BlockOp, PermuteOp, IterateOp, YieldOp, GlobalOp, EntryPointOp],
    [LoopType],
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
    "int_values",
]
