"""Sequences a run-time loop collects: carried sequences turned into scan outputs.

TorchScript exports a Python list appended to in a loop (`values.append(v)`
in a `while`) as a Loop carrying a sequence: SequenceEmpty before it,
`SequenceInsert(s, v)` in its body, usually `ConcatFromSequence` after. The
importer resolves sequences while importing (sequences.py), which needs the
loop unrolled, so its trip count and conditions known then. When they are
not, such a sequence is a scan output in disguise: it starts empty and each
iteration appends one tensor and does nothing else with it. The Loop is
rewritten so (the appended tensor a scan output, the sequence no longer
carried) and imported as any run-time Loop; its sequence result is then the
scan output's rows (`CollectedRows`), which stacking along a new first axis
(`ConcatFromSequence(axis=0, new_axis=1)`, torch.stack) gives as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import onnx
from xdsl.ir import SSAValue

from onnxc.errors import UnsupportedOpError

if TYPE_CHECKING:
    from onnxc.frontend.importer import _GraphImporter


@dataclass(frozen=True)
class CollectedRows:
    """A sequence of run-time length: the rows of a Loop's scan output (`rows`)."""

    rows: SSAValue


def collect_into_scan_outputs(importer: "_GraphImporter", block, node: onnx.NodeProto, empty: list[bool]) -> list | None:
    """Import the Loop `node` with each carried sequence it only appends to (and
    that starts empty: `empty[k]` for carried value k) as a scan output; returns
    its outputs (a `CollectedRows` for each such sequence), or None when some
    carried sequence is used otherwise."""
    body = next(a.g for a in node.attribute if a.name == "body")
    carried = len(node.input) - 2
    appends = {}
    for k in range(carried):
        if not _is_sequence(body.input[2 + k]):
            continue
        insert = _only_append(body, body.input[2 + k].name, body.output[1 + k].name)
        if insert is None or not empty[k]:
            return None
        appends[k] = insert
    kept = [k for k in range(carried) if k not in appends]
    new_body = onnx.helper.make_graph(
        [n for n in body.node if all(n is not insert for insert in appends.values())],
        body.name,
        [*body.input[:2], *(body.input[2 + k] for k in kept)],
        [
            body.output[0],
            *(body.output[1 + k] for k in kept),
            *body.output[1 + carried :],
            *(_value_info(body, insert.input[1]) for insert in appends.values()),
        ],
        list(body.initializer),
        value_info=list(body.value_info),
    )
    # The rewritten Loop's outputs are named apart: the importer names the node's outputs after.
    renamed = {k: f"{node.name}.{k}.collected" if k in appends else f"{name}.kept" for k, name in enumerate(node.output)}
    kept_outputs = [*kept, *range(carried, len(node.output))]
    loop = onnx.helper.make_node(
        "Loop",
        [*node.input[:2], *(node.input[2 + k] for k in kept)],
        [*(renamed[k] if node.output[k] else "" for k in kept_outputs), *(renamed[k] for k in appends)],
        name=node.name,
        body=new_body,
    )
    importer._import_node(block, loop)
    return [
        CollectedRows(importer.values[renamed[k]]) if k in appends else importer.values.get(renamed[k])
        for k in range(len(node.output))
    ]


def stacked(node: onnx.NodeProto, sequence: CollectedRows, axis: int, new_axis: int) -> SSAValue:
    """ConcatFromSequence of collected rows: the rows themselves when stacked along a new first axis."""
    if new_axis and axis == 0:
        return sequence.rows
    raise UnsupportedOpError(
        f"a sequence a run-time loop collected can only be stacked along a new first axis, not with axis={axis},"
        f" new_axis={new_axis}",
        node=node.name,
        op_type=node.op_type,
    )


def _is_sequence(value_info: onnx.ValueInfoProto) -> bool:
    return value_info.type.HasField("sequence_type")


def _only_append(body: onnx.GraphProto, name: str, output: str) -> onnx.NodeProto | None:
    """The SequenceInsert (at the end) of one tensor into sequence `name` giving body
    output `output`, if that is the only use of either; else None."""
    users = [n for n in body.node if name in n.input or _in_sub_graphs(n, name)]
    if len(users) != 1 or users[0].op_type != "SequenceInsert" or len(users[0].input) != 2:
        return None
    insert = users[0]
    appended_used = any(insert.output[0] in n.input or _in_sub_graphs(n, insert.output[0]) for n in body.node)
    outputs = [vi.name for vi in body.output]
    if insert.input[0] != name or insert.output[0] != output or appended_used or outputs.count(output) != 1:
        return None
    return insert


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
