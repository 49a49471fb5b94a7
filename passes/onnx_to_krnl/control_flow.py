"""If, Loop and Scan whose control is known only at run time (inline-control-flow keeps
them, their sub-graphs typed): lowered to a run-time branch or loop whose
regions hold the sub-graph's nodes, lowered by the same `GraphLowering`.

If: an `scf.if` on the loaded condition; each branch computes into the If's
result buffers (its last nodes write them directly where they can, else the
branch's outputs are copied there). Loop: an `scf.while` over the iteration
number; the loop-carried values live in the Loop's result buffers (the state),
the condition in a one-element buffer. Each iteration binds the body's
arguments to those buffers, runs the body, then copies its outputs into the
state: outputs that are themselves buffers of the state (a value carried
unchanged, two values swapped) are first copied aside, so that no copy reads
a state buffer another one has just overwritten. Each scan output is stored
as row `step` of a scratch buffer: in the arena, of trip-count rows, under a
constant trip count up to `MAX_PREALLOCATED_TRIPS`; else on the heap
(`krnl.grow`, carried by the scf.while), reallocated with twice the rows
whenever an iteration finds it full. One that continues a loop-carried value
(`appended_to`) starts with that value's rows and takes each iteration's rows
after them. The graph output is given the rows run (`krnl.dynamic_output`),
then a heap buffer is freed. Scan: an `scf.while` over the scan axis
(Scan-8: inside one over the batch axis), the states in its result buffers;
each iteration copies its step of every scan input into a buffer the body
reads, and stores each scan output at its step of the result (both sized at
entry: the length is a dim of the inputs). The body's buffers are
allocated in the loop's region; the arena plans them for the whole loop op,
so every iteration reuses the same memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, i1, i64
from xdsl.ir import Block, Region, SSAValue

from onnxc.dialects.krnl import ViewOp
from onnxc.dialects.krnl_growth import FreeOp, GrowOp
from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.frontend.tensors import check_tensor_size
from onnxc.passes.helpers.graph import constant_array, result_dtype
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.scan_layout import ScanLayout, appended_to
from onnxc.passes.onnx_to_krnl.common import GraphLowering, copy_reshaped, lowers, passes_through, shape_of


def lower_graph(g: GraphLowering, graph: Block, block: Block) -> list[SSAValue]:
    """Lower the nodes of a sub-graph (its block args bound in `g.buffers`) into
    `block`; returns the buffers of the values it yields. Dims first computed
    here are forgotten after: their values are defined in `block` only."""
    outer, known_dims = g.top, dict(g.dim_values)
    g.top = outer.at_end(block)
    try:
        for op in graph.ops:
            if op is not graph.last_op:  # the onnx.yield
                g.lower_op(op, block)
    finally:
        g.top, g.dim_values = outer, known_dims
    return [g.buffers[value] for value in graph.last_op.operands]


def scalar_flag(g: GraphLowering, op: OnnxOp, index: int, what: str) -> SSAValue:
    """The single element of input `index` (a condition or trip count), loaded at the top level."""
    buffer = g.input(op, index)
    shape = shape_of(buffer)
    if not all(isinstance(d, int) for d in shape) or math.prod(shape) != 1:
        raise g.shape_error(op, f"its {what} must have one element, not shape {op.input(index).type}")
    return g.top.load(buffer, [0] * len(shape))


@lowers("If", run_time_dims=True, dynamic=True)
def lower_if(g: GraphLowering, op: OnnxOp) -> None:
    condition = scalar_flag(g, op, 0, "condition")
    graphs = [op.graph(name).block for name in ("then_branch", "else_branch")]
    shapes = [[output.type.get_shape() for output in graph.last_op.operands] for graph in graphs]
    apart = [k for k, (then_shape, else_shape) in enumerate(zip(*shapes)) if then_shape != else_shape]
    _check_only_returned(g, op, apart, "its branches give it different shapes")
    results = [
        g.dynamic_result(op, k, [max(dims) for dims in zip(shapes[0][k], shapes[1][k])])
        if k in apart
        else g.result(op, k)
        for k in range(len(op.results))
    ]
    regions = []
    for graph in graphs:
        block = Block()
        _write_results_directly(g, graph, [None if k in apart else r for k, r in enumerate(results)])
        outputs = lower_graph(g, graph, block)
        end = g.top.at_end(block)
        extents = []
        for k, (output, result) in enumerate(zip(outputs, results)):
            if k in apart:  # into the first rows along the axis the branches differ in
                _copy_at(end, output, result, lambda ivs: ivs, lambda ivs: ivs)
                extents.append(end.index(shape_of(output)[_differing_axis(op, k)]))
            elif output is not result:
                copy_reshaped(end, output, result)
        block.add_op(scf.YieldOp(*extents))
        regions.append(Region(block))
    branch = g.top.insert(scf.IfOp(condition, [IndexType()] * len(apart), *regions))
    for k, extent in zip(apart, branch.results):
        g.finish_dynamic_result(op, k, extent)


def _check_only_returned(g: GraphLowering, op: OnnxOp, indices: Sequence[int], why: str) -> None:
    """Refuse results `indices`, whose shape the run decides, used other than as graph
    outputs: in a loop body or branch, which `GraphLowering` does not check for them."""
    for k in indices:
        result = op.results[k]
        if result.uses and result not in g.dynamic:
            raise g.unsupported(
                op, f"the shape of result {k} is decided at run time ({why}); it may only be a graph output"
            )


def _differing_axis(op: OnnxOp, index: int) -> int:
    """The axis of result `index` that the branch taken decides (its one dynamic dim)."""
    return op.results[index].type.get_shape().index(DYNAMIC_INDEX)


def _write_results_directly(g: GraphLowering, graph: Block, results: list[SSAValue | None]) -> None:
    """Let the branch's node computing each output (seen through Identity) write
    the If's result buffer, as graph outputs are (`GraphLowering.destinations`);
    not where the result is None (a buffer of another shape than the output's)."""
    claimed: set[SSAValue] = set()
    for value, result in zip(graph.last_op.operands, results):
        if result is None:
            continue
        while passes_through(value) and value.owner.parent is graph:
            value = value.owner.input(0)
        owner = value.owner
        mine = isinstance(owner, OnnxOp) and owner.parent is graph and owner.OP_TYPE != "Constant"
        if mine and value not in claimed:
            g.destinations[value] = result
            claimed.add(value)


@lowers("Loop", run_time_dims=True, dynamic=True)
def lower_loop(g: GraphLowering, op: OnnxOp) -> None:
    trip_count, condition, *carried = onnx_inputs(op)
    body = op.graph("body").block
    top = g.top
    states = [g.result(op, k) for k in range(len(carried))]
    scans = _scan_rows(op, states)
    _check_only_returned(g, op, [scan.index for scan in scans], "the iterations run decide it")
    trips = _preallocated_trips(op)
    buffers = [_scan_buffer(g, op, scan, trips) for scan in scans] if trips is not None else []
    for value, state in zip(carried, states):
        copy_reshaped(top, g.buffers[value], state)
    going = top.alloc(MemRefType(i1, []))
    top.store(top.constant(1, i1) if condition is None else scalar_flag(g, op, 1, "condition"), going, [])
    limit = None if trip_count is None else top.to_index(scalar_flag(g, op, 0, "trip count"))
    iteration = top.alloc(MemRefType(i64, []))
    grown = [] if trips is not None else _grown_buffers(g, op, scans, limit)
    for scan, buffer in zip(scans, buffers or grown[1:]):
        if scan.carried >= 0:
            _copy_at(top, states[scan.carried], buffer, lambda ivs: ivs, lambda ivs: ivs)

    def keep_going(check: KernelBuilder, step: SSAValue) -> SSAValue:
        flag = check.load(going, [])
        return flag if limit is None else check.and_(flag, check.compare_index("slt", step, limit))

    def run_body(run: KernelBuilder, block: Block, step: SSAValue) -> list[SSAValue]:
        run.store(run.from_index(step, i64), iteration, [])
        for arg, buffer in zip(body.args, [iteration, going, *states]):
            g.buffers[arg] = buffer
        next_condition, *outputs = lower_graph(g, body, block)
        room = _room_for_a_step(run, step, scans, list(block.args[1:])) if grown else []
        for scan, output, buffer in zip(scans, outputs[len(states) :], room[1:] or buffers):
            scan.store(run, output, buffer, step)
        _update_state(run, [going, *states], [next_condition, *outputs[: len(states)]])
        return room

    iterations, *final = _while_loop(top, keep_going, run_body, grown)
    for scan, buffer in zip(scans, final[1:] or buffers):
        g.buffers[op.results[scan.index]] = buffer
        g.finish_dynamic_result(op, scan.index, scan.rows(top, iterations))
    for buffer in final[1:]:
        top.insert(FreeOp(buffer))


@lowers("Scan", run_time_dims=True)
def lower_scan(g: GraphLowering, op: OnnxOp) -> None:
    layout = ScanLayout.of(op, g.opset, lambda why: g.unsupported(op, why))
    results = [g.result(op, k) for k in range(len(op.results))]
    initial = [g.buffers[value] for value in layout.states]
    sequences = [g.buffers[value] for value in layout.sequences]
    if not layout.batched:
        for value, result in zip(initial, results):
            copy_reshaped(g.top, value, result)
        _scan_loop(g, op, layout, sequences, results, [])
        return
    top = g.top
    states = [_alloc_without_dim(top, value, 0) for value in initial]
    batches = shape_of(sequences[0])[0]

    def run_batch(run: KernelBuilder, block: Block, batch: SSAValue) -> None:
        for value, state in zip(initial, states):
            _copy_at(run, value, state, lambda ivs: [batch, *ivs], lambda ivs: ivs)
        g.top = run
        try:
            _scan_loop(g, op, layout, sequences, [*states, *results[len(states) :]], [batch])
        finally:
            g.top = top
        for state, result in zip(states, results):
            _copy_at(run, state, result, lambda ivs: ivs, lambda ivs: [batch, *ivs])

    _while_loop(top, lambda check, batch: check.compare_index("slt", batch, batches), run_batch)


def _scan_loop(
    g: GraphLowering, op: OnnxOp, layout: ScanLayout, sequences: list[SSAValue], results: list[SSAValue], at: list
) -> None:
    """The Scan's body run over the scan axis, in `g.top`: `results` holds the
    states (initialized) then the scan outputs; `at` indexes the batch (Scan-8)
    in `sequences` and the scan outputs, which the states do not have."""
    body = op.graph("body").block
    states, scans = results[: len(layout.states)], results[len(layout.states) :]
    top = g.top
    length = shape_of(sequences[0])[len(at) + layout.input_axes[0]] if sequences else 0
    last = top.sub(length, 1)
    steps = [
        _alloc_without_dim(top, value, len(at) + axis, len(at)) for value, axis in zip(sequences, layout.input_axes)
    ]

    def run_body(run: KernelBuilder, block: Block, step: SSAValue) -> None:
        for value, buffer, axis, reverse in zip(sequences, steps, layout.input_axes, layout.input_reverse):
            where = run.sub(last, step) if reverse else step
            _copy_at(run, value, buffer, _placed(at, axis, where), lambda ivs: ivs)
        for arg, buffer in zip(body.args, [*states, *steps]):
            g.buffers[arg] = buffer
        outputs = lower_graph(g, body, block)
        for scan, output, axis, reverse in zip(
            scans, outputs[len(states) :], layout.output_axes, layout.output_reverse
        ):
            where = run.sub(last, step) if reverse else step
            axis %= len(shape_of(output)) + 1
            _copy_at(run, output, scan, lambda ivs: ivs, _placed(at, axis, where))
        _update_state(run, states, outputs[: len(states)])

    _while_loop(top, lambda check, step: check.compare_index("slt", step, length), run_body)


def _while_loop(
    top: KernelBuilder,
    keep_going: Callable[[KernelBuilder, SSAValue], SSAValue],
    run_body: Callable[[KernelBuilder, Block, SSAValue], list[SSAValue] | None],
    carried: Sequence[SSAValue] = (),
) -> Sequence[SSAValue]:
    """An `scf.while` over an index from 0, stepping by one while `keep_going`
    (given a builder in the check and the index) holds; `run_body` fills the
    iteration (given a builder at the end of its block, the block, the index)
    and returns the next values of `carried` (the block's arguments after the
    index). Returns the number of iterations run, then the final `carried`."""
    types = [IndexType(), *(value.type for value in carried)]
    before = Block(arg_types=types)
    check = top.at_end(before)
    before.add_op(scf.ConditionOp(keep_going(check, before.args[0]), *before.args))
    after = Block(arg_types=types)
    run = top.at_end(after)
    following = run_body(run, after, after.args[0]) or []
    after.add_op(scf.YieldOp(run.add(after.args[0], 1), *following))
    return top.insert(scf.WhileOp([top.index(0), *carried], types, Region(before), Region(after))).results


def _copy_at(
    builder: KernelBuilder,
    source: SSAValue,
    target: SSAValue,
    source_at: Callable[[list], list],
    target_at: Callable[[list], list],
) -> None:
    """target[target_at(ivs)] = source[source_at(ivs)] for every ivs in the shape of
    whichever of the two has fewer dims (a slice copied out of, or into, a larger buffer)."""
    rank = len(source.type.get_shape())
    shape = shape_of(source if rank <= len(target.type.get_shape()) else target)
    ivs, nest = builder.loop_nest(shape)
    nest.store(nest.load(source, source_at(ivs)), target, target_at(ivs))


def _placed(prefix: list, axis: int, where: SSAValue) -> Callable[[list], list]:
    """The index of a step's element: `prefix`, then its own ivs with `where` at `axis`."""
    return lambda ivs: [*prefix, *ivs[:axis], where, *ivs[axis:]]


def _alloc_without_dim(builder: KernelBuilder, buffer: SSAValue, axis: int, skip: int = 0) -> SSAValue:
    """A buffer shaped as `buffer` without dim `axis` and its first `skip` dims
    (one step of a scan input, or one batch's state)."""
    shape = [d for k, d in enumerate(shape_of(buffer)) if k != axis and k >= skip]
    memref = MemRefType(buffer.type.element_type, [d if isinstance(d, int) else DYNAMIC_INDEX for d in shape])
    return builder.alloc(memref, [builder.index(d) for d in shape if not isinstance(d, int)])


MAX_PREALLOCATED_TRIPS = 1 << 16
"""A Loop's scan outputs get buffers of all their rows up front (in the arena) under a
constant trip count up to this; beyond it, or under a run-time one, they grow."""
FIRST_GROWN_TRIPS = 16
"""The iterations a growing scan output's first buffer has room for (fewer if the trip count is less)."""


@dataclass(frozen=True)
class _ScanRows:
    """Where a Loop's scan output (result `index`) puts each iteration's value:
    stacked as row `step` (`carried` -1), or (`appended_to`) concatenated along
    axis 0 after the `prefix` rows of loop-carried value `carried`, `step_rows`
    rows per iteration."""

    index: int
    carried: int
    prefix: int
    step_rows: int

    def rows(self, builder: KernelBuilder, iterations: Bound) -> Bound:
        """The rows that many iterations fill."""
        return builder.add(self.prefix, builder.mul(iterations, self.step_rows))

    def store(self, builder: KernelBuilder, value: SSAValue, buffer: SSAValue, step: SSAValue) -> None:
        """Store the value of iteration `step` in `buffer`."""
        first = self.rows(builder, step)
        ivs, nest = builder.loop_nest(shape_of(value))
        at = [first, *ivs] if self.carried < 0 else [nest.add(first, ivs[0]), *ivs[1:]]
        nest.store(nest.load(value, ivs), buffer, at)


def _scan_rows(op: OnnxOp, states: list[SSAValue]) -> list[_ScanRows]:
    body_outputs = op.graph("body").block.last_op.operands[1 + len(states) :]
    scans = []
    for k, (carried, output) in enumerate(zip(appended_to(op), body_outputs)):
        if carried < 0:
            scans.append(_ScanRows(len(states) + k, -1, 0, 1))
        else:
            prefix, step_rows = shape_of(states[carried])[0], output.type.get_shape()[0]
            scans.append(_ScanRows(len(states) + k, carried, prefix, step_rows))
    return scans


def _preallocated_trips(op: OnnxOp) -> int | None:
    """The iterations every scan output's buffer has room for, allocated up front:
    the constant trip count, if there is one up to `MAX_PREALLOCATED_TRIPS`; else None (they grow)."""
    trips = constant_array(op.input(0)) if op.input(0) is not None else None
    if trips is None or int(trips.reshape(-1)[0]) > MAX_PREALLOCATED_TRIPS:
        return None
    return max(int(trips.reshape(-1)[0]), 0)


def _scan_buffer(g: GraphLowering, op: OnnxOp, scan: _ScanRows, trips: int) -> SSAValue:
    """The buffer collecting a scan output over `trips` iterations."""
    result = op.results[scan.index]
    shape = [scan.prefix + trips * scan.step_rows, *result.type.get_shape()[1:]]
    where = {"node": op.node_name, "op_type": op.OP_TYPE}
    check_tensor_size(shape, result_dtype(result).itemsize, f"the buffer of result {scan.index}", **where)
    return g.dynamic_result(op, scan.index, shape)


def _grown_buffers(g: GraphLowering, op: OnnxOp, scans: list[_ScanRows], limit: SSAValue | None) -> list[SSAValue]:
    """The iterations the scan outputs' buffers have room for (`FIRST_GROWN_TRIPS`,
    or the trip count if less, at least one), then those heap buffers (`krnl.grow`)."""
    if not scans:
        return []
    top = g.top
    trips = top.index(FIRST_GROWN_TRIPS) if limit is None else top.max(1, top.min(limit, FIRST_GROWN_TRIPS))
    buffers = []
    for scan in scans:
        result = op.results[scan.index]
        memref = MemRefType(result.type.get_element_type(), [DYNAMIC_INDEX, *result.type.get_shape()[1:]])
        buffers.append(top.insert(GrowOp(scan.rows(top, trips), memref)).result)
    return [trips, *buffers]


def _room_for_a_step(
    run: KernelBuilder, step: SSAValue, scans: list[_ScanRows], grown: list[SSAValue]
) -> list[SSAValue]:
    """`grown` (the iterations the buffers have room for, then the buffers) with room
    for iteration `step`: twice the iterations, reallocated, when `step` is past them."""
    trips, *buffers = grown
    full = run.compare_index("sge", step, trips)
    more = Block()
    grow = run.at_end(more)
    doubled = grow.mul(trips, 2)
    bigger = [grow.insert(GrowOp(scan.rows(grow, doubled), b.type, b)).result for scan, b in zip(scans, buffers)]
    more.add_op(scf.YieldOp(doubled, *bigger))
    same = Block()
    same.add_op(scf.YieldOp(trips, *buffers))
    return list(run.insert(scf.IfOp(full, [IndexType(), *(b.type for b in buffers)], [more], [same])).results)


def _update_state(builder: KernelBuilder, states: list[SSAValue], outputs: list[SSAValue]) -> None:
    """states[k] := outputs[k] for every k, as if all at once: an output that is a
    state buffer (or a view of one) is copied aside first."""
    staged = []
    for state, output in zip(states, outputs):
        if output is state:
            continue
        if _is_fresh(output, states):
            staged.append((output, state))
            continue
        aside = builder.alloc(output.type, [builder.index(d) for d in shape_of(output) if not isinstance(d, int)])
        copy_reshaped(builder, output, aside)
        staged.append((aside, state))
    for output, state in staged:
        copy_reshaped(builder, output, state)


def _is_fresh(buffer: SSAValue, states: list[SSAValue]) -> bool:
    """Whether a buffer is neither a state buffer nor a view of one."""
    while buffer not in states:
        if not isinstance(buffer.owner, ViewOp):
            return True
        buffer = buffer.owner.base
    return False
