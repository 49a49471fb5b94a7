"""convert-onnx-to-krnl: lower `@main_graph` from onnx ops on tensors to krnl loops on memrefs.

The graph is walked once, in order, with a map from every tensor to the memref
holding it. Each op type has one lowering function (registered in `LOWERINGS`)
that emits its loop nests at the function's top level, next to the
`memref.alloc` of its result. Shared helpers (broadcast indexing, the
elementwise generator, sliding windows, reshaping copies) keep every op's
lowering down to what is particular to it. Chains of element-wise ops are one
nest each (onnx_to_krnl/fusion.py). docs/design.md, "Level 2", is the
contract for the output.

Graph outputs are computed directly into the output arguments when the
producing op writes a fresh buffer; otherwise (a graph input, a constant, a
value returned twice) they are copied there at the end.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, f32
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from onnxc.dialects.krnl import EntryPointOp
from onnxc.dialects.onnx import (
    BATCH_SYMBOL_ATTR,
    BATCHED_INPUTS_ATTR,
    DIM_CHECKS_ATTR,
    OUTPUT_MAP_KEYS_ATTR,
    OUTPUT_SEQUENCE_AXES_ATTR,
)
from onnxc.dialects.symbolic import DimCheck
from onnxc.errors import InvalidModelError, ShapeError
from onnxc.passes import onnx_to_krnl  # noqa: F401  (registers the lowerings)
from onnxc.passes.onnx_to_krnl.common import GRAPH_NAME, GraphLowering


class ConvertOnnxToKrnlPass(ModulePass):
    """Lower the onnx graph function to krnl loop nests and add the krnl entry point."""

    name = "convert-onnx-to-krnl"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graph = next((f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == GRAPH_NAME), None)
        if graph is None:
            raise InvalidModelError(f"no function @{GRAPH_NAME} to lower")
        map_keys = graph.attributes.get(OUTPUT_MAP_KEYS_ATTR)
        if map_keys is not None:
            _check_map_outputs(graph, map_keys)
        lowering = GraphLowering(op, graph)
        lowered = lowering.run()
        batch = graph.attributes.get(BATCH_SYMBOL_ATTR)
        batched = graph.attributes.get(BATCHED_INPUTS_ATTR)
        checks = graph.attributes.get(DIM_CHECKS_ATTR)
        entry_point = EntryPointOp(
            GRAPH_NAME,
            lowering.input_names,
            lowering.output_names,
            batch_symbol=batch.data if batch is not None else None,
            batched_inputs=[flag.value.data for flag in batched.data] if batched is not None else (),
            dims=lowering.argument_dims(),
            checks=[DimCheck.from_strings(*(s.data for s in c.data)) for c in checks.data] if checks else (),
            map_keys=map_keys,
            sequence_axes=graph.attributes.get(OUTPUT_SEQUENCE_AXES_ATTR),
        )
        Rewriter.replace_op(graph, [lowered, entry_point], new_results=[])


def _check_map_outputs(graph: func.FuncOp, map_keys: ArrayAttr) -> None:
    """A sequence-of-maps output (ZipMap) is a float32 tensor [N, keys] or [keys], as in onnxruntime."""
    values = graph.body.block.last_op.operands
    names = graph.attributes["onnx.output_names"].data
    for value, name, keys in zip(values, names, map_keys.data):
        shape = value.type.get_shape() if keys.data else None
        if shape is None:
            continue
        if value.type.get_element_type() != f32 or len(shape) not in (1, 2) or shape[-1] not in (len(keys), -1):
            raise ShapeError(
                f"ZipMap output '{name.data}' maps {len(keys)} keys, but its values are {value.type} "
                "(a float32 tensor [N, keys] or [keys] is expected)",
                op_type="ZipMap",
            )
