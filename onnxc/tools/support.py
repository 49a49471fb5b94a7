"""Whether onnxc can compile an op, and why not: the question `onnxc inspect` answers
per op type, before any compile is tried.

An op is supported when the importer accepts it (ai.onnx domain, an op of the
model's opset) and convert-onnx-to-krnl has a lowering registered for it.
Element types and attribute values are checked when the op is lowered, so a
supported op can still be refused for a particular node, always at compile time.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx.defs

from onnxc.frontend.importer import ONNX_DOMAINS


@dataclass(frozen=True)
class Support:
    supported: bool
    reason: str


def op_support(op_type: str, domain: str = "", opset: int | None = None) -> Support:
    """Whether the op `op_type` of `domain` at `opset` (default: newest) has a way
    through the compiler, with the reason in words."""
    from onnxc.passes import onnx_to_krnl  # noqa: F401  (registers the lowerings)
    from onnxc.passes.onnx_to_krnl.common import LOWERINGS

    if domain not in ONNX_DOMAINS:
        return Support(False, f"operator domain '{domain}' is not supported")
    opset = opset or onnx.defs.onnx_opset_version()
    try:
        onnx.defs.get_schema(op_type, opset)
    except onnx.defs.SchemaError:
        return Support(False, f"not an operator of ai.onnx opset {opset}")
    lowering = LOWERINGS.get(op_type)
    if lowering is None:
        return Support(False, "no lowering registered in convert-onnx-to-krnl")
    family = lowering.__module__.rsplit(".", 1)[-1]
    return Support(True, f"lowered by onnx_to_krnl/{family}.py")
