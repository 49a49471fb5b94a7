"""Values a run-time loop collects, one piece per iteration, turned into scan outputs.

TorchScript exports a Python list appended to in a loop (`values.append(v)`
in a `while`) as a Loop carrying a sequence: SequenceEmpty before it,
`SequenceInsert(s, v)` in its body, usually `ConcatFromSequence` after; and a
tensor grown in a loop (`tokens = torch.cat([tokens, token])` in a greedy
decoder) as a loop-carried value whose shape changes every iteration. Neither
compiles as it stands: the importer resolves sequences by unrolling, which
needs the trip count and conditions known at import, and a run-time loop's
carried values keep their types. When the body does nothing with such a value
but append to it, it is a scan output in disguise. The Loop is rewritten so
and imported as any run-time Loop:

- a sequence that starts empty and only has one tensor appended per iteration
  (SequenceInsert at the end) is no longer carried; the appended tensor is a
  scan output, and the sequence result is its rows (a `SlicedSequence`), which
  stacking along a new first axis (`ConcatFromSequence(axis=0, new_axis=1)`,
  torch.stack) gives as they are;
- a tensor only concatenated with one tensor along axis 0 (`Concat(s, t)`)
  is carried unchanged (the body yields it as it took it) and `t` is a scan
  output whose rows follow the carried value's initial rows, concatenated
  along axis 0, not stacked: the Loop's `APPENDED_TO_ATTR` names, per scan
  output, the carried value it continues (-1: none, a plain scan output).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import onnx
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, i64

from onnxc.dialects.onnx import APPENDED_TO_ATTR
from onnxc.frontend.sequence_values import SlicedSequence

if TYPE_CHECKING:
    from onnxc.frontend.importer import _GraphImporter


def collect_into_scan_outputs(
    importer: _GraphImporter, block, node: onnx.NodeProto, empty: list[bool | None]
) -> list | None:
    """Import the Loop `node` with the values it only appends to as scan outputs;
    `empty[k]` tells whether carried value k is a sequence starting empty (None:
    a tensor). Returns the Loop's outputs, or None when there is nothing to
    rewrite or a carried sequence is used otherwise."""
    body = next(a.g for a in node.attribute if a.name == "body")
    carried = len(node.input) - 2
    appends: dict[int, onnx.NodeProto] = {}
    for k in range(carried):
        arg, output = body.input[2 + k].name, body.output[1 + k].name
        if empty[k] is None:
            concat = _only_use(body, arg, output, "Concat")
            if concat is not None and concat.input[0] == arg and _attribute(concat, "axis") == 0:
                appends[k] = concat
            continue
        insert = _only_use(body, arg, output, "SequenceInsert")
        if insert is None or insert.input[0] != arg or not empty[k]:
            return None
        appends[k] = insert
    if not appends:
        return None
    kept = [k for k in range(carried) if empty[k] is None]  # sequences are no longer carried
    scan_inputs = [appended.input[1] for appended in appends.values()]
    new_body = onnx.helper.make_graph(
        [n for n in body.node if all(n is not appended for appended in appends.values())],
        body.name,
        [*body.input[:2], *(body.input[2 + k] for k in kept)],
        [
            body.output[0],
            *(body.input[2 + k] if k in appends else body.output[1 + k] for k in kept),
            *body.output[1 + carried :],
            *(_value_info(body, name) for name in scan_inputs),
        ],
        list(body.initializer),
        value_info=list(body.value_info),
    )
    # The rewritten Loop's outputs are named apart: the importer names the node's outputs after.
    own_scans = list(range(carried, len(node.output)))
    kept_names = [f"{node.name}.{k}.kept" for k in kept + own_scans]
    collected_names = {k: f"{node.name}.{k}.collected" for k in appends}
    loop = onnx.helper.make_node(
        "Loop",
        [*node.input[:2], *(node.input[2 + k] for k in kept)],
        [*kept_names, *collected_names.values()],
        name=node.name,
        body=new_body,
    )
    importer._import_node(block, loop)
    continued = [-1] * len(own_scans) + [kept.index(k) if empty[k] is None else -1 for k in appends]
    block.last_op.attributes[APPENDED_TO_ATTR] = ArrayAttr([IntegerAttr(c, i64) for c in continued])
    outputs = dict(zip(kept + own_scans, (importer.values[name] for name in kept_names)))
    for k, name in collected_names.items():
        outputs[k] = (
            importer.values[name] if empty[k] is None else SlicedSequence(importer.values[name], 0, keepdims=False)
        )
    return [outputs[k] for k in range(len(node.output))]


def _only_use(body: onnx.GraphProto, name: str, output: str, op_type: str) -> onnx.NodeProto | None:
    """The one node of `op_type` with two inputs that uses body input `name`, if its
    result is body output `output` and used nowhere else, and `name` nowhere else."""
    users = [n for n in body.node if name in n.input or _in_sub_graphs(n, name)]
    if len(users) != 1 or users[0].op_type != op_type or len(users[0].input) != 2 or users[0].output[0] != output:
        return None
    result_used = any(output in n.input or _in_sub_graphs(n, output) for n in body.node)
    outputs = [vi.name for vi in body.output]
    return None if result_used or outputs.count(output) != 1 or users[0].input[1] == name else users[0]


def _attribute(node: onnx.NodeProto, name: str) -> int | None:
    return next((onnx.helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


def _in_sub_graphs(node: onnx.NodeProto, name: str) -> bool:
    """Whether a sub-graph of `node` reads `name` (from the scope around it)."""
    for attr in node.attribute:
        for graph in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
            if any(name in n.input or _in_sub_graphs(n, name) for n in graph.node):
                return True
    return False


def _value_info(body: onnx.GraphProto, name: str) -> onnx.ValueInfoProto:
    """The body's declared type of `name`, or an untyped value info (shape inference types it)."""
    declared = [vi for vi in body.value_info if vi.name == name]
    return declared[0] if declared else onnx.ValueInfoProto(name=name)
