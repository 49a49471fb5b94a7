"""inline-control-flow: resolve If, Loop and Scan whose control is known at compile time.

The importer keeps sub-graphs as regions (If: `then_branch`/`else_branch`,
Loop/Scan: `body`, closed by `onnx.yield`), using outer values directly.
onnxc compiles for static shapes, and the control of most exported control
flow is a function of shapes and attributes: an If testing `align_corners`,
a Loop running `ceil((limit - start) / delta)` times, a Scan over a
statically sized axis. This pass walks the graph in order, typing and folding
each op (constprop's `Folder`) so that conditions and trip counts become
constants, and replaces each control-flow op by a copy of the region that
runs: the branch taken, or the body once per iteration (loop-carried values
threaded from one copy to the next, scan outputs stacked with
Unsqueeze + Concat, scan inputs sliced with Gather). Nested control flow is
resolved as its copies are walked. The result is a region-free graph the
rest of the pipeline already compiles.

An If or Loop whose control is known only at run time (a data-dependent
condition, a trip count fed by a graph input) stays, its sub-graphs typed
here (shape inference does not look into them), their ops with no kernel
decomposed (the decompose pass walks only the graph): convert-onnx-to-krnl lowers
it to a run-time branch or loop (onnx_to_krnl/control_flow.py). It needs
what that lowering takes: branches giving one type per result, loop-carried
values keeping their type, scan outputs of a static per-iteration shape (a
while loop on the data stays a loop once unrolling meets its condition).
A Scan stays, its body typed, when its length is known only at run time or
unrolling it would copy more than `MAX_UNROLLED_OPS` ops; its states must
keep their types. Anything else is refused with an UnsupportedOpError, as is
unrolling a Loop beyond `MAX_UNROLLED_OPS` copied ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from onnxc.dialects.onnx import OnnxOp, onnx_inputs
from onnxc.dialects.symbolic import Dim, DimCheck
from onnxc.dialects.types import dim_params
from onnxc.errors import UnsupportedOpError
from onnxc.passes.constprop import Folder
from onnxc.passes.decompose import decompose_all, lowered_ops
from onnxc.passes.helpers.graph import (
    constant_array,
    erase_dead,
    insert_before,
    make_constant,
    make_op,
    module_opset,
    onnx_functions,
    op_opset,
    python_attribute,
    replace_results,
    result_dtype,
    static_shape,
    update_function_types,
)
from onnxc.passes.helpers.scan_layout import ScanLayout, appended_to, drop_dim, insert_dim
from onnxc.passes.shape_inference import require_dims

CONTROL_FLOW = ("If", "Loop", "Scan")


class _RunTimeContinuation(Exception):
    """Unrolling met a Loop's continuation condition known only at run time."""


MAX_UNROLLED_OPS = 50_000


@dataclass(frozen=True)
class InlineControlFlowPass(ModulePass):
    name = "inline-control-flow"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opset = module_opset(op)
        for function in onnx_functions(op):
            block = function.body.block
            if any(isinstance(o, OnnxOp) and o.OP_TYPE in CONTROL_FLOW for o in block.walk()):
                _Inliner(opset).settle_from(block.first_op)
        update_function_types(op)


class _Inliner:
    def __init__(self, opset: int):
        self.opset = opset
        self.folder = Folder(opset, integers_only=False)
        self.copied = 0

    def settle_from(self, op: Operation | None, stop: Operation | None = None) -> None:
        """Type and fold every op from `op` up to (not including) `stop`, expanding control flow."""
        while op is not None and op is not stop:
            following = op.next_op
            if isinstance(op, OnnxOp) and op.OP_TYPE != "Constant":
                if op.OP_TYPE in CONTROL_FLOW:
                    self.expand(op)
                else:
                    self.folder.settle(op)
            op = following

    def expand(self, op: OnnxOp) -> None:
        if op.OP_TYPE == "If" and constant_array(op.input(0)) is None:
            self.keep_if(op)
            return
        if op.OP_TYPE == "Loop" and not all(v is None or constant_array(v) is not None for v in onnx_inputs(op)[:2]):
            self.keep_loop(op)
            return
        if op.OP_TYPE == "Scan":
            layout = ScanLayout.of(op, self.opset, lambda why: self.refusal(op, why))
            if self.scan_stays(op, layout):
                self.keep_scan(op, layout)
                return
        expand = {"If": self.expand_if, "Loop": self.expand_loop, "Scan": self.expand_scan}[op.OP_TYPE]
        exits: list[Operation] = []
        before = op.prev_op
        try:
            results = expand(op, exits)
        except _RunTimeContinuation:
            self.undo_expansion(before, op)
            self.keep_loop(op)
            return
        replace_results(op, results)
        for exit_ in exits:
            erase_dead(exit_)

    def copy_region(self, op: OnnxOp, graph: str, bindings: list[SSAValue], exits: list[Operation]) -> list[SSAValue]:
        """Copy the sub-graph before `op` with its arguments bound, settle the copy, return its outputs.

        The copied onnx.yield (appended to `exits`) stays until the whole op is expanded:
        typing and folding replace values and its operands follow them, and it keeps an
        earlier iteration's outputs alive while later ones fold."""
        block: Block = op.graph(graph).block
        if len(bindings) != len(block.args):
            raise self.refusal(op, f"its '{graph}' sub-graph takes {len(block.args)} inputs, {len(bindings)} given")
        mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, bindings))
        copies = [inner.clone(value_mapper=mapping) for inner in block.ops]
        insert_before(op, copies)
        self.copied += len(copies)
        if self.copied > MAX_UNROLLED_OPS:
            raise self.refusal(op, f"unrolling it would copy more than {MAX_UNROLLED_OPS} ops")
        exit_ = copies[-1]
        exits.append(exit_)
        self.settle_from(copies[0], exit_)
        return list(exit_.operands)

    def undo_expansion(self, before: Operation | None, op: OnnxOp) -> None:
        """Erase the copies (and their folded constants) made before `op` since `before`."""
        copies = []
        current = before.next_op if before is not None else op.parent_block().first_op
        while current is not op:
            copies.append(current)
            current = current.next_op
        for copy in reversed(copies):  # users before the values they use
            Rewriter.erase_op(copy)

    def refusal(self, op: OnnxOp, why: str) -> UnsupportedOpError:
        dtypes = sorted({str(d) for d in (result_dtype(v) for v in op.results) if d is not None})
        return UnsupportedOpError(
            f"{op.OP_TYPE} (opset {op_opset(op, self.opset)}, outputs {', '.join(dtypes) or 'untyped'}): {why}",
            node=op.node_name,
            op_type=op.OP_TYPE,
        )

    def known(self, op: OnnxOp, value: SSAValue | None, what: str) -> np.ndarray:
        array = constant_array(value)
        if array is None:
            raise self.refusal(op, f"its {what} is known only at run time (run-time control flow is not supported)")
        return array

    def constant(self, op: OnnxOp, array: np.ndarray, suffix: str) -> SSAValue:
        constant = make_constant(op, array, f"{op.node_name}.{suffix}")
        insert_before(op, [constant])
        return constant.results[0]

    def stack(self, anchor: OnnxOp, items: list[SSAValue], axis: int) -> SSAValue:
        """`items` stacked along a new axis `axis` (Unsqueeze each, Concat)."""
        axes = self.constant(anchor, np.array([axis], dtype=np.int64), "axes")
        expanded = [self.new_op(anchor, "Unsqueeze", [item, axes]) for item in items]
        concat = self.new_op(anchor, "Concat", [e.results[0] for e in expanded], axis=axis)
        # Settled only once all exist: folding one erases operands (`axes`) left unused.
        self.settle_from(expanded[0], anchor)
        return self.folder.replaced.get(concat, concat.results)[0]

    def concat(self, anchor: OnnxOp, items: list[SSAValue]) -> SSAValue:
        """`items` concatenated along axis 0."""
        concat = self.new_op(anchor, "Concat", items, axis=0)
        self.folder.settle(concat)
        return self.folder.replaced.get(concat, concat.results)[0]

    def gather(self, anchor: OnnxOp, value: SSAValue, index: int, axis: int) -> SSAValue:
        """`value[index]` along `axis`, the axis removed."""
        index_value = self.constant(anchor, np.array(index, dtype=np.int64), "t")
        gather = self.new_op(anchor, "Gather", [value, index_value], axis=axis)
        self.folder.settle(gather)
        return self.folder.replaced.get(gather, gather.results)[0]

    def new_op(self, anchor: OnnxOp, op_type: str, inputs: list, **attributes) -> OnnxOp:
        attrs = {k: python_attribute(v) for k, v in attributes.items()}
        new = make_op(op_type, inputs, attrs, name=anchor.node_name, opset=self.opset)
        insert_before(anchor, [new])
        return new

    # ---------------------------------------------------- control known at run time

    def settle_graph(self, op: OnnxOp, graph: str, argument_types: list) -> list[SSAValue]:
        """Type the sub-graph `graph` of an op that stays, its arguments of
        `argument_types`, expanding the control flow in it; returns its outputs."""
        block: Block = op.graph(graph).block
        if len(block.args) != len(argument_types):
            raise self.refusal(
                op, f"its '{graph}' sub-graph takes {len(block.args)} inputs, {len(argument_types)} given"
            )
        for arg, argument_type in zip(list(block.args), argument_types):
            if arg.type != argument_type:
                Rewriter.replace_value_with_new_type(arg, argument_type)
        self.settle_from(block.first_op, block.last_op)
        # The decompose pass walks only the graph: ops with no kernel are replaced here, typed.
        ops = [o for o in block.ops if isinstance(o, OnnxOp)]
        if decompose_all(ops, self.opset, lowered_ops()):
            self.settle_from(block.first_op, block.last_op)
        return list(block.last_op.operands)

    def check_carried(self, op: OnnxOp, what: str, carried: Attribute, output: Attribute) -> None:
        """A value carried from one iteration to the next keeps its type: the body
        gives it back as it took it, or with a static dim where it has a symbolic
        one (a count the body knows), which the run then checks the input has."""
        checks = []
        if isinstance(carried, TensorType) and isinstance(output, TensorType) and carried != output:
            same_kind = carried.get_element_type() == output.get_element_type()
            if same_kind and carried.get_num_dims() == output.get_num_dims():
                for (dim, param), given in zip(_dims(carried), _dims(output)):
                    if dim < 0 and given[0] >= 0 and param:
                        checks.append(DimCheck(Dim.parse(param), "==", Dim.const(given[0]), op.node_name, op.OP_TYPE))
                    elif (dim, param) != given:
                        checks = []
                        break
        if carried != output and not checks:
            raise self.refusal(op, f"{what} changes type from {carried} to {output}")
        require_dims(op, checks)

    def keep_if(self, op: OnnxOp) -> None:
        """An If on a run-time condition: both branches typed; each result takes
        the one type both branches give it, or, where their static shapes differ
        in one dim, their type with that dim dynamic and unnamed (the branch
        taken decides it: the lowering then needs the result to be a graph output)."""
        then_outputs = self.settle_graph(op, "then_branch", [])
        else_outputs = self.settle_graph(op, "else_branch", [])
        for index, (result, then_value, else_value) in enumerate(zip(op.results, then_outputs, else_outputs)):
            result_type = then_value.type
            if then_value.type != else_value.type:
                result_type = _one_dim_apart(then_value, else_value)
            if result_type is None:
                raise self.refusal(
                    op,
                    f"its condition is known only at run time and its branches give result {index} types"
                    f" ({then_value.type}, {else_value.type}) that differ in more than one static dim",
                )
            if result.type != result_type:
                Rewriter.replace_value_with_new_type(result, result_type)

    def keep_loop(self, op: OnnxOp) -> None:
        """A Loop whose trip count or condition is known only at run time: its body
        typed with the loop-carried values' types, which must stay the same. Each
        scan output is `[?, per-iteration shape]`, the `?` the iterations run; one
        continuing a carried value (`appended_to`) is `[?, its rows' shape]`."""
        _, _, *carried = onnx_inputs(op)
        index_type, condition_type = (block_arg.type for block_arg in op.graph("body").block.args[:2])
        outputs = self.settle_graph(op, "body", [index_type, condition_type, *(v.type for v in carried)])
        why = "it runs a number of iterations known only at run time"
        for index, (initial, output, result) in enumerate(zip(carried, outputs[1:], op.results)):
            self.check_carried(op, f"{why} and loop-carried value {index}", initial.type, output.type)
            if result.type != initial.type:
                Rewriter.replace_value_with_new_type(result, initial.type)
        scans = zip(outputs[1 + len(carried) :], op.results[len(carried) :], appended_to(op))
        for output, result, continued in scans:
            shape = static_shape(output)
            if shape is None:
                raise self.refusal(op, f"{why} and a scan output's per-iteration shape is {output.type}")
            if continued >= 0:  # rows concatenated after a carried value's
                initial = static_shape(carried[continued])
                if not shape or initial is None or initial[1:] != shape[1:]:
                    raise self.refusal(
                        op, f"{why} and it appends {output.type} to a value of type {carried[continued].type}"
                    )
                shape = shape[1:]
            scan_type = TensorType(output.type.get_element_type(), [DYNAMIC_INDEX, *shape])
            if result.type != scan_type:
                Rewriter.replace_value_with_new_type(result, scan_type)

    def scan_stays(self, op: OnnxOp, layout: ScanLayout) -> bool:
        """Whether a Scan runs as a loop: its length is known only at run time, or
        unrolling it would copy more than `MAX_UNROLLED_OPS` ops in all."""
        shapes = [static_shape(v) for v in layout.sequences]
        if not shapes or any(shape is None for shape in shapes):
            return bool(shapes)
        batches = shapes[0][0] if layout.batched else 1
        steps = shapes[0][layout.batched + layout.input_axes[0]]
        return self.copied + batches * steps * len(op.graph("body").block.ops) > MAX_UNROLLED_OPS

    def scan_length(self, op: OnnxOp, layout: ScanLayout) -> tuple[int, str]:
        """The length of a kept Scan's scan inputs (a dim: size, symbolic name): the
        first's, which the run checks the others' named dims equal."""
        lengths = [_dim(layout.per_batch(v.type), a) for v, a in zip(layout.sequences, layout.input_axes)]
        checks = []
        for size, param in lengths[1:]:
            if (size, param) == lengths[0]:
                continue
            if (size < 0 and not param) or (lengths[0][0] < 0 and not lengths[0][1]) or min(size, lengths[0][0]) >= 0:
                raise self.refusal(op, f"its scan inputs have lengths {lengths}, which cannot be checked equal")
            first, other = (Dim.parse(p) if d < 0 else Dim.const(d) for d, p in (lengths[0], (size, param)))
            checks.append(DimCheck(first, "==", other, op.node_name, op.OP_TYPE))
        require_dims(op, checks)
        return lengths[0]

    def keep_scan(self, op: OnnxOp, layout: ScanLayout) -> None:
        """A Scan run as a loop over its scan axis: its body typed with the states'
        types and one step of each scan input; the states must keep their types.
        Each scan output stacks its per-iteration values along a dim of the scan
        inputs' length (named as theirs is), after the batch dim in Scan-8."""
        for value in [*layout.states, *layout.sequences]:
            if not isinstance(value.type, TensorType) or (layout.batched and not value.type.get_num_dims()):
                raise self.refusal(op, f"an input of type {value.type} cannot be scanned")
        state_types = [layout.per_batch(v.type) for v in layout.states]
        step_types = [drop_dim(layout.per_batch(v.type), a) for v, a in zip(layout.sequences, layout.input_axes)]
        outputs = self.settle_graph(op, "body", [*state_types, *step_types])
        length = self.scan_length(op, layout)
        for index, (state_type, output, result) in enumerate(zip(state_types, outputs, op.results)):
            self.check_carried(op, f"state {index}", state_type, output.type)
            if result.type != layout.states[index].type:
                Rewriter.replace_value_with_new_type(result, layout.states[index].type)
        scans = zip(outputs[len(state_types) :], op.results[len(state_types) :], layout.output_axes)
        for index, (output, result, axis) in enumerate(scans):
            if not isinstance(output.type, TensorType) or "" in _dim_names(output.type):
                raise self.refusal(op, f"scan output {index} has a per-iteration type {output.type} of unnamed dims")
            scan_type = insert_dim(output.type, axis % (output.type.get_num_dims() + 1), *length)
            if layout.batched:
                batch = layout.sequences[0].type
                scan_type = insert_dim(scan_type, 0, batch.get_shape()[0], dim_params(batch)[0])
            if result.type != scan_type:
                Rewriter.replace_value_with_new_type(result, scan_type)

    # ------------------------------------------------------------------ the ops

    def expand_if(self, op: OnnxOp, exits: list[Operation]) -> list[SSAValue]:
        condition = self.known(op, op.input(0), "condition")
        branch = "then_branch" if bool(condition.reshape(-1)[0]) else "else_branch"
        return self.copy_region(op, branch, [], exits)

    def expand_loop(self, op: OnnxOp, exits: list[Operation]) -> list[SSAValue]:
        trip_count, condition, *carried = onnx_inputs(op)
        if trip_count is None and condition is None:
            raise self.refusal(op, "it has neither a trip count nor a condition (an infinite loop)")
        limit = None if trip_count is None else int(self.known(op, trip_count, "trip count").reshape(-1)[0])
        going = True if condition is None else bool(self.known(op, condition, "condition").reshape(-1)[0])
        initial = carried
        iteration = 0
        while going and (limit is None or iteration < limit):
            index = self.constant(op, np.array(iteration, dtype=np.int64), f"i{iteration}")
            true = self.constant(op, np.array(True), f"cond{iteration}")
            outputs = self.copy_region(op, "body", [index, true, *carried], exits)
            continuation = constant_array(outputs[0])
            if continuation is None:
                raise _RunTimeContinuation  # a while loop on the data: it stays a loop
            going = bool(self.known(op, outputs[0], "loop-continuation condition").reshape(-1)[0])
            carried = outputs[1 : 1 + len(carried)]
            iteration += 1
        if any(continued < 0 for continued in appended_to(op)) and not exits:
            raise self.refusal(op, "it runs zero times, so the shapes of its scan outputs are unknown")
        scans = [list(exit_.operands)[1 + len(carried) :] for exit_ in exits]
        results = []
        for k, continued in enumerate(appended_to(op)):
            rows = [s[k] for s in scans]
            results.append(self.stack(op, rows, 0) if continued < 0 else self.concat(op, [initial[continued], *rows]))
        return [*carried, *results]

    def expand_scan(self, op: OnnxOp, exits: list[Operation]) -> list[SSAValue]:
        layout = ScanLayout.of(op, self.opset, lambda why: self.refusal(op, why))
        if not layout.batched:
            return self.scan(op, layout, layout.states, layout.sequences, exits)
        batches = []
        for b in range(static_shape(layout.sequences[0])[0] if layout.sequences else 0):
            states = [self.gather(op, v, b, 0) for v in layout.states]
            sequences = [self.gather(op, v, b, 0) for v in layout.sequences]
            batches.append(self.scan(op, layout, states, sequences, exits))
        return [self.stack(op, [outputs[k] for outputs in batches], 0) for k in range(len(op.results))]

    def scan(self, op, layout: ScanLayout, states, sequences, exits):
        """The body run over the scan axis (of one batch's `sequences`): final
        states, then scan outputs stacked."""
        lengths = {static_shape(value)[axis] for value, axis in zip(sequences, layout.input_axes)}
        if len(lengths) != 1:
            raise self.refusal(op, f"its scan inputs have different lengths {sorted(lengths)}")
        length = lengths.pop()
        steps: list[Operation] = []
        for step in range(length):
            slices = []
            for value, axis, reverse in zip(sequences, layout.input_axes, layout.input_reverse):
                slices.append(self.gather(op, value, length - 1 - step if reverse else step, axis))
            states = self.copy_region(op, "body", [*states, *slices], steps)[: len(states)]
        exits.extend(steps)
        if layout.scan_count and not steps:
            raise self.refusal(op, "its scan axis is empty, so the shapes of its scan outputs are unknown")
        scans = [list(exit_.operands)[len(states) :] for exit_ in steps]
        stacked = []
        for k, (axis, reverse) in enumerate(zip(layout.output_axes, layout.output_reverse)):
            items = [s[k] for s in scans]
            rank = len(static_shape(items[0]) or ())
            stacked.append(self.stack(op, items[::-1] if reverse else items, axis % (rank + 1)))
        return [*states, *stacked]


def _one_dim_apart(first: SSAValue, second: SSAValue) -> TensorType | None:
    """The type of two values of static shapes with the one dim they differ in
    dynamic (unnamed), if they differ in one dim only."""
    shapes = [static_shape(first), static_shape(second)]
    element = first.type.get_element_type() if isinstance(first.type, TensorType) else None
    if None in shapes or len(shapes[0]) != len(shapes[1]) or element != second.type.get_element_type():
        return None
    apart = [axis for axis, (a, b) in enumerate(zip(*shapes)) if a != b]
    if len(apart) != 1:
        return None
    return TensorType(element, [DYNAMIC_INDEX if k in apart else d for k, d in enumerate(shapes[0])])


def _dim(ttype: TensorType, axis: int) -> tuple[int, str]:
    """Dim `axis` of a type: its size (negative where dynamic) and its symbolic name."""
    return _dims(ttype)[axis]


def _dims(ttype: TensorType) -> list[tuple[int, str]]:
    """The dims of a type: each its size (negative where dynamic) and its symbolic name."""
    return list(zip(ttype.get_shape(), dim_params(ttype)))


def _dim_names(ttype: TensorType) -> list[str]:
    """Per dim, "-" where static, else its symbolic name ("" for an unnamed one)."""
    return ["-" if d >= 0 else p for d, p in zip(ttype.get_shape(), dim_params(ttype))]
