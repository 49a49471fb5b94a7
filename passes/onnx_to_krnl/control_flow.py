"""If and Loop whose control is known only at run time (inline-control-flow keeps
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
as row `step` of a scratch buffer of trip-count rows (inline-control-flow
keeps scan outputs only under a constant trip count), the graph output given
the rows run (`krnl.dynamic_output`). The body's buffers are
allocated in the loop's region; the arena plans them for the whole loop op,
so every iteration reuses the same memory.
"""

from __future__ import annotations

import math

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, MemRefType, i1, i64
from xdsl.ir import Block, Region, SSAValue

from onnxc.dialects.krnl import ViewOp
from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.frontend.tensors import check_tensor_size
from onnxc.passes.helpers.graph import constant_array, result_dtype
from onnxc.passes.helpers.krnl_builder import KernelBuilder
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


@lowers("If", run_time_dims=True)
def lower_if(g: GraphLowering, op: OnnxOp) -> None:
    condition = scalar_flag(g, op, 0, "condition")
    results = [g.result(op, k) for k in range(len(op.results))]
    regions = []
    for name in ("then_branch", "else_branch"):
        graph, block = op.graph(name).block, Block()
        _write_results_directly(g, graph, results)
        outputs = lower_graph(g, graph, block)
        for output, result in zip(outputs, results):
            if output is not result:
                copy_reshaped(g.top.at_end(block), output, result)
        block.add_op(scf.YieldOp())
        regions.append(Region(block))
    g.top.insert(scf.IfOp(condition, [], *regions))


def _write_results_directly(g: GraphLowering, graph: Block, results: list[SSAValue]) -> None:
    """Let the branch's node computing each output (seen through Identity) write
    the If's result buffer, as graph outputs are (`GraphLowering.destinations`)."""
    claimed: set[SSAValue] = set()
    for value, result in zip(graph.last_op.operands, results):
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
    scans = [_scan_buffer(g, op, index) for index in range(len(carried), len(op.results))]
    for value, state in zip(carried, states):
        copy_reshaped(top, g.buffers[value], state)
    going = top.alloc(MemRefType(i1, []))
    top.store(top.constant(1, i1) if condition is None else scalar_flag(g, op, 1, "condition"), going, [])
    limit = None if trip_count is None else top.to_index(scalar_flag(g, op, 0, "trip count"))
    iteration = top.alloc(MemRefType(i64, []))

    before = Block(arg_types=[IndexType()])
    check = top.at_end(before)
    step = before.args[0]
    keep_going = check.load(going, [])
    if limit is not None:
        keep_going = check.and_(keep_going, check.compare_index("slt", step, limit))
    before.add_op(scf.ConditionOp(keep_going, step))

    after = Block(arg_types=[IndexType()])
    run = top.at_end(after)
    run.store(run.from_index(after.args[0], i64), iteration, [])
    for arg, buffer in zip(body.args, [iteration, going, *states]):
        g.buffers[arg] = buffer
    next_condition, *outputs = lower_graph(g, body, after)
    for scan, output in zip(scans, outputs[len(states) :]):
        ivs, nest = run.loop_nest(shape_of(output))
        nest.store(nest.load(output, ivs), scan, [after.args[0], *ivs])
    _update_state(run, [going, *states], [next_condition, *outputs[: len(states)]])
    after.add_op(scf.YieldOp(run.add(after.args[0], 1)))
    iterations = top.insert(scf.WhileOp([top.index(0)], [IndexType()], Region(before), Region(after))).results[0]
    for index in range(len(carried), len(op.results)):
        g.finish_dynamic_result(op, index, iterations)


def _scan_buffer(g: GraphLowering, op: OnnxOp, index: int) -> SSAValue:
    """The buffer collecting scan output `index`, one row per iteration up to the
    constant trip count (inline-control-flow keeps no Loop with scan outputs without one)."""
    trips = max(int(constant_array(op.input(0)).reshape(-1)[0]), 0)
    result = op.results[index]
    shape = [trips, *result.type.get_shape()[1:]]
    where = {"node": op.node_name, "op_type": op.OP_TYPE}
    check_tensor_size(shape, result_dtype(result).itemsize, f"the buffer of result {index} (a scan output)", **where)
    return g.dynamic_result(op, index, shape)


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
