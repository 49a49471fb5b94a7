"""FlexAttention of the `ai.onnx.preview` domain, as the ai.onnx nodes of its function.

ONNX defines FlexAttention by a context-dependent function: Q·Kᵀ times the scale, the
`score_mod` sub-graph, Softmax (in `softmax_precision`), `prob_mod`, ·V, with K and V
repeated for grouped-query heads. `onnx.defs` builds that body for a node given its
inputs' types, the modifier sub-graphs inlined; the importer imports the body in the
node's place, so the attention runs on the MatMul and Softmax kernels like any other.
The domain's other ops are refused by name.
"""

from __future__ import annotations

import onnx
from xdsl.dialects.builtin import TensorType

from onnxc.dialects.types import onnx_type_of
from onnxc.errors import UnsupportedOpError

PREVIEW_DOMAIN = "ai.onnx.preview"
EXPANDED_OPS = frozenset({"FlexAttention"})


def function_graph(node: onnx.NodeProto, input_types: list[TensorType]) -> onnx.GraphProto:
    """The body of `node`'s function for inputs of `input_types`, as a graph whose inputs
    are the node's and whose outputs are the node's results."""
    where = {"node": node.name, "op_type": node.op_type}
    if node.op_type not in EXPANDED_OPS:
        raise UnsupportedOpError(f"operator '{node.op_type}' of domain '{PREVIEW_DOMAIN}' is not supported", **where)
    if not all(isinstance(t, TensorType) for t in input_types):
        raise UnsupportedOpError("its inputs must be tensors of known rank", **where)
    types = [
        onnx.helper.make_tensor_type_proto(onnx_type_of(t.element_type), [d if d >= 0 else None for d in t.get_shape()])
        for t in input_types
    ]
    schema = onnx.defs.get_schema(node.op_type, domain=PREVIEW_DOMAIN)
    body = onnx.FunctionProto()
    body.ParseFromString(
        schema.get_context_dependent_function(node.SerializeToString(), [t.SerializeToString() for t in types])
    )
    return onnx.helper.make_graph(
        list(body.node),
        f"{node.name or node.op_type}.body",
        [onnx.helper.make_value_info(name, t) for name, t in zip(body.input, types)],
        [onnx.ValueInfoProto(name=name) for name in body.output],
    )
