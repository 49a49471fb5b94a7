"""convert-krnl-to-loops: replace every krnl schedule by nested scf.for loops.

Each `krnl.iterate` becomes one `scf.for` per optimized loop, nested in the
order `krnl.nest_order` gives, with the iterate's body moved into the
innermost loop and its block arguments replaced by the loops that carry the
original induction variables. The pass walks the module once and rebuilds each
nest directly instead of going through pattern rewriting: schedules are tiny
but models have hundreds of them. `krnl.global` and `krnl.entry_point` stay for
codegen.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from onnxc.dialects.krnl import BlockOp, DefineLoopsOp, IterateOp, PermuteOp, int_values, iv_leaf, nest_order


@dataclass(frozen=True)
class ConvertKrnlToLoopsPass(ModulePass):
    name = "convert-krnl-to-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        iterates: list[IterateOp] = []
        schedule_ops: list[Operation] = []
        for nested in op.walk():
            if isinstance(nested, IterateOp):
                iterates.append(nested)
            elif isinstance(nested, DefineLoopsOp | BlockOp | PermuteOp):
                schedule_ops.append(nested)
        for iterate in iterates:
            _NestBuilder(iterate).replace_iterate()
        # Users come after their definitions in walk order: erase backwards.
        for schedule_op in reversed(schedule_ops):
            Rewriter.erase_op(schedule_op)


class _NestBuilder:
    """Builds the scf.for nest of one krnl.iterate, from the outermost loop inwards.

    Every new loop goes at the current insertion point, which then moves into
    its body, so whatever was emitted earlier dominates whatever comes later;
    that is what lets bound values be computed once and reused.
    """

    def __init__(self, iterate: IterateOp):
        self.iterate = iterate
        self.original_bounds = {
            loop: (lower, upper)
            for loop, lower, upper in zip(
                iterate.original_loops,
                int_values(iterate.lower_bounds),
                iterate.upper_bound_values(),
                strict=True,
            )
        }
        self.point = InsertPoint.before(iterate)
        self.constant_point = InsertPoint.before(iterate)  # in front of the whole nest
        self.constants: dict[int, SSAValue] = {}
        self.upper_bounds: dict[SSAValue, SSAValue] = {}
        self.induction_vars: dict[SSAValue, SSAValue] = {}  # leaf loop handle -> scf.for IV

    def replace_iterate(self) -> None:
        for leaf in nest_order(self.iterate):
            self._emit_loop(leaf)
        body = self.iterate.body.block
        original_ivs = [self._iv(loop) for loop in self.iterate.original_loops]
        for iv, body_arg in zip(original_ivs, body.args, strict=True):
            iv.name_hint = body_arg.name_hint
        Rewriter.erase_op(body.last_op)  # krnl.yield
        Rewriter.inline_block(body, self.point, original_ivs)
        Rewriter.erase_op(self.iterate)

    def _emit_loop(self, leaf: SSAValue) -> None:
        loop = scf.ForOp(
            self._lower_bound(leaf),
            self._upper_bound(leaf),
            self._constant(self._step(leaf)),
            [],
            Region(Block([scf.YieldOp()], arg_types=[IndexType()])),
        )
        Rewriter.insert_op(loop, self.point)
        if not self.induction_vars:
            self.constant_point = InsertPoint.before(loop)
        self.induction_vars[leaf] = loop.body.block.args[0]
        self.point = InsertPoint.before(loop.body.block.last_op)

    def _iv(self, loop: SSAValue) -> SSAValue:
        """The induction variable of `loop`, carried by the scf.for of its iv_leaf."""
        return self.induction_vars[iv_leaf(loop)]

    def _lower_bound(self, loop: SSAValue) -> SSAValue:
        block = loop.owner
        if isinstance(block, DefineLoopsOp):
            return self._constant(self.original_bounds[loop][0])
        assert isinstance(block, BlockOp)
        return self._lower_bound(block.loop) if loop is block.outer else self._iv(block.outer)

    def _upper_bound(self, loop: SSAValue) -> SSAValue:
        if loop not in self.upper_bounds:
            self.upper_bounds[loop] = self._compute_upper_bound(loop)
        return self.upper_bounds[loop]

    def _compute_upper_bound(self, loop: SSAValue) -> SSAValue:
        block = loop.owner
        if isinstance(block, DefineLoopsOp):
            upper = self.original_bounds[loop][1]
            return self._constant(upper) if isinstance(upper, int) else upper
        assert isinstance(block, BlockOp)
        if loop is block.outer:
            return self._upper_bound(block.loop)
        tile_end = self._emit(arith.AddiOp(self._iv(block.outer), self._constant(self._tile_span(block))))
        if self._tiles_are_full(block):
            return tile_end
        return self._emit(arith.MinSIOp(tile_end, self._upper_bound(block.loop)))

    def _step(self, loop: SSAValue) -> int:
        block = loop.owner
        if isinstance(block, DefineLoopsOp):
            return 1
        assert isinstance(block, BlockOp)
        return self._tile_span(block) if loop is block.outer else self._step(block.loop)

    def _tile_span(self, block: BlockOp) -> int:
        """How far the outer loop of `block` advances per step."""
        return self._step(block.loop) * block.tile_size.value.data

    def _extents(self, loop: SSAValue) -> set[int] | None:
        """Every length (ub - lb) that `loop`'s range can have, to know where tiles
        may be partial; None where a bound is known at run time only."""
        block = loop.owner
        if isinstance(block, DefineLoopsOp):
            lower, upper = self.original_bounds[loop]
            return {max(upper - lower, 0)} if isinstance(upper, int) else None
        assert isinstance(block, BlockOp)
        if loop is block.outer:
            return self._extents(block.loop)
        span = self._tile_span(block)
        inner_extents = self._extents(block.loop)
        if inner_extents is None:
            return None
        extents = set()
        for extent in inner_extents:
            if extent >= span:
                extents.add(span)
            if extent % span:
                extents.add(extent % span)
        return extents

    def _tiles_are_full(self, block: BlockOp) -> bool:
        """True if the blocked loop's range is always a whole number of tiles (no min needed)."""
        span, extents = self._tile_span(block), self._extents(block.loop)
        return extents is not None and all(extent % span == 0 for extent in extents)

    def _constant(self, value: int) -> SSAValue:
        if value not in self.constants:
            constant = arith.ConstantOp.from_int_and_width(value, IndexType())
            constant.result.name_hint = f"c{value}"
            Rewriter.insert_op(constant, self.constant_point)
            self.constants[value] = constant.result
        return self.constants[value]

    def _emit(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, self.point)
        return op.results[0]
