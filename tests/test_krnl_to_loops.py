"""convert-krnl-to-loops, checked by running the lowered loops.

Each test builds one krnl.iterate whose body appends its induction variables
to a buffer, lowers it, runs it with xDSL's interpreter and compares the
visit sequence with the order the krnl docstring promises, written out as
plain Python loops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, MemRefType, ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Block, Operation, Region, SSAValue

from onnxc.dialects import make_context
from onnxc.dialects.krnl import BlockOp, DefineLoopsOp, IterateOp, PermuteOp, YieldOp
from onnxc.passes.convert_krnl_to_loops import ConvertKrnlToLoopsPass

# What may be left after the pass (docs/design.md, "Level 3"), besides arith.*, for these tests' IR.
LEVEL3_OPS = {"func.func", "func.return", "scf.for", "scf.yield", "memref.alloc", "memref.load", "memref.store"}

# schedule(ops, original_loops) appends its krnl.block/permute ops to `ops` and
# returns the optimized loops.
Schedule = Callable[[list[Operation], list[SSAValue]], list[SSAValue]]


@register_impls
class MinSIFunctions(InterpreterFunctions):
    """xDSL's interpreter has no arith.minsi, which the lowering uses to clamp partial tiles."""

    @impl(arith.MinSIOp)
    def run_minsi(self, interpreter: Interpreter, op: arith.MinSIOp, args: tuple[int, int]) -> tuple[int]:
        return (min(args),)


def index_constant(ops: list[Operation], value: int) -> SSAValue:
    constant = arith.ConstantOp.from_int_and_width(value, IndexType())
    ops.append(constant)
    return constant.result


def tracing_module(lower: Sequence[int], upper: Sequence[int], schedule: Schedule, capacity: int) -> ModuleOp:
    """func @trace() -> (visits, count): one krnl.iterate that appends each point it visits to `visits`."""
    rank = len(lower)
    visits_type = MemRefType(IndexType(), [capacity, rank])
    count_type = MemRefType(IndexType(), [1])
    ops: list[Operation] = []
    visits = memref.AllocOp.get(IndexType(), shape=[capacity, rank])
    count = memref.AllocOp.get(IndexType(), shape=[1])
    ops += [visits, count]
    c0, c1 = index_constant(ops, 0), index_constant(ops, 1)
    columns = [index_constant(ops, k) for k in range(rank)]
    define = DefineLoopsOp(rank)
    ops.append(define)
    optimized = schedule(ops, list(define.loops))
    iterate = IterateOp(optimized, define.loops, lower, upper)
    position = memref.LoadOp.get(count, [c0])
    next_position = arith.AddiOp(position, c1)
    iterate.body.block.add_ops(
        [position]
        + [memref.StoreOp.get(iv, visits, [position, column]) for iv, column in zip(iterate.induction_vars, columns)]
        + [next_position, memref.StoreOp.get(next_position, count, [c0]), YieldOp()]
    )
    ops += [iterate, func.ReturnOp(visits, count)]
    function = func.FuncOp("trace", ((), (visits_type, count_type)), Region(Block(ops)))
    return ModuleOp([function])


def run_schedule(lower: Sequence[int], upper: Sequence[int], schedule: Schedule) -> list[tuple[int, ...]]:
    """Lower and run one scheduled krnl.iterate; return the points its body visited, in order."""
    capacity = 2 * prod(max(u - l, 0) for l, u in zip(lower, upper)) + 1  # room to catch extra visits
    module = tracing_module(lower, upper, schedule, capacity)
    module.verify()
    ConvertKrnlToLoopsPass().apply(make_context(), module)
    module.verify()
    assert all(op.name in LEVEL3_OPS or op.name.startswith("arith.") for op in module.body.walk())

    interpreter = Interpreter(module)
    for functions in (ArithFunctions(), FuncFunctions(), MemRefFunctions(), ScfFunctions(), MinSIFunctions()):
        interpreter.register_implementations(functions)
    visits, count = interpreter.call_op("trace")
    rank = len(lower)
    values = visits.data[: count.data[0] * rank]
    return [tuple(values[k : k + rank]) for k in range(0, len(values), rank)]


def block(ops: list[Operation], loop: SSAValue, tile: int) -> tuple[SSAValue, SSAValue]:
    op = BlockOp(loop, tile)
    ops.append(op)
    return op.outer, op.inner


def permute(ops: list[Operation], loops: list[SSAValue], positions: list[int]) -> list[SSAValue]:
    ops.append(PermuteOp(loops, positions))
    return loops


def test_plain_nest_runs_in_listed_order():
    expected = [(i, j) for i in range(0, 3) for j in range(2, 5)]
    assert run_schedule([0, 2], [3, 5], lambda ops, loops: loops) == expected


def test_blocked_loop_covers_partial_tile():
    def schedule(ops, loops):
        i, j = loops
        return [i, *block(ops, j, 4)]

    expected = [(i, j) for i in range(2) for jo in range(0, 10, 4) for j in range(jo, min(jo + 4, 10))]
    assert run_schedule([0, 0], [2, 10], schedule) == expected


def test_whole_tiles_without_clamp():
    def schedule(ops, loops):
        i, j = loops
        io, ii = block(ops, i, 8)
        iio, iii = block(ops, ii, 4)
        return permute(ops, [io, iio, iii, j], [0, 2, 3, 1])  # nest: io, j, iio, iii

    expected = [
        (i, j) for io in range(0, 24, 8) for j in range(3) for iio in range(io, io + 8, 4) for i in range(iio, iio + 4)
    ]
    assert run_schedule([0, 0], [24, 3], schedule) == expected


def test_blocked_loop_with_nonzero_lower_bound():
    def schedule(ops, loops):
        return list(block(ops, loops[0], 5))

    assert run_schedule([3], [20], schedule) == [(i,) for i in range(3, 20)]


def test_permute_all_loops():
    def schedule(ops, loops):
        return permute(ops, loops, [2, 0, 1])  # a at depth 2, b at 0, c at 1

    expected = [(a, b, c) for b in range(3) for c in range(4) for a in range(2)]
    assert run_schedule([0, 0, 0], [2, 3, 4], schedule) == expected


def test_permute_some_loops_keeps_the_others_in_place():
    def schedule(ops, loops):
        a, b, c = loops
        permute(ops, [a, c], [1, 0])
        return loops

    expected = [(a, b, c) for c in range(4) for b in range(3) for a in range(2)]
    assert run_schedule([0, 0, 0], [2, 3, 4], schedule) == expected


def test_block_and_permute_as_in_docstring():
    def schedule(ops, loops):
        i, j = loops
        jo, ji = block(ops, j, 8)
        return permute(ops, [i, jo, ji], [1, 0, 2])  # nest: jo, i, ji

    expected = [(i, j) for jo in range(0, 30, 8) for i in range(4) for j in range(jo, min(jo + 8, 30))]
    assert run_schedule([0, 0], [4, 30], schedule) == expected


def test_nested_blocking_of_the_inner_loop():
    def schedule(ops, loops):
        i, j = loops
        io, ii = block(ops, i, 8)
        iio, iii = block(ops, ii, 3)
        return permute(ops, [io, iio, iii, j], [0, 2, 3, 1])  # nest: io, j, iio, iii

    expected = [
        (i, j)
        for io in range(0, 30, 8)
        for j in range(2)
        for iio in range(io, min(io + 8, 30), 3)
        for i in range(iio, min(iio + 3, io + 8, 30))
    ]
    assert run_schedule([0, 0], [30, 2], schedule) == expected


def test_two_level_tiling_blocks_the_outer_loop():
    def schedule(ops, loops):
        io, ii = block(ops, loops[0], 4)
        ioo, ioi = block(ops, io, 3)
        return [ioo, ioi, ii]

    expected = [
        (i,)
        for ioo in range(0, 30, 12)
        for ioi in range(ioo, min(ioo + 12, 30), 4)
        for i in range(ioi, min(ioi + 4, 30))
    ]
    assert run_schedule([0], [30], schedule) == expected


def test_tiles_of_two_loops_interleaved():
    def schedule(ops, loops):
        i, j = loops
        io, ii = block(ops, i, 2)
        jo, ji = block(ops, j, 3)
        return permute(ops, [io, ii, jo, ji], [0, 2, 1, 3])  # nest: io, jo, ii, ji

    expected = [
        (i, j)
        for io in range(0, 5, 2)
        for jo in range(0, 7, 3)
        for i in range(io, min(io + 2, 5))
        for j in range(jo, min(jo + 3, 7))
    ]
    assert run_schedule([0, 0], [5, 7], schedule) == expected


def test_resnet_sized_module_lowers():
    """~100 scheduled iterates with ~10k ops in all lower completely (their speed is
    reported by `onnxc -v` and the benchmarks, not asserted by a timed test)."""
    ops: list[Operation] = []
    buffer = memref.AllocOp.get(IndexType(), shape=[64, 64])
    ops.append(buffer)
    for _ in range(100):
        define = DefineLoopsOp(2)
        i, j = define.loops
        blocking = BlockOp(j, 16)
        order = [i, blocking.outer, blocking.inner]
        iterate = IterateOp(order, [i, j], [0, 0], [64, 60])
        body = [arith.AddiOp(*iterate.induction_vars) for _ in range(95)]
        store = memref.StoreOp.get(body[-1], buffer, iterate.induction_vars)
        iterate.body.block.add_ops([*body, store, YieldOp()])
        ops += [define, blocking, PermuteOp(order, [1, 0, 2]), iterate]
    ops.append(func.ReturnOp())
    module = ModuleOp([func.FuncOp("many", ((), ()), Region(Block(ops)))])

    ConvertKrnlToLoopsPass().apply(make_context(), module)

    assert sum(isinstance(op, IterateOp) for op in module.walk()) == 0
    assert sum(isinstance(op, arith.AddiOp) for op in module.walk()) >= 100 * 95
