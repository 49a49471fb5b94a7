"""Whether onnxc can compile an op, and why not: the question `onnxc inspect` answers
per op type, before any compile is tried.

An op is supported when the importer accepts it (ai.onnx or ai.onnx.preview.training
domain, an op of the model's opset; the com.microsoft ops frontend/microsoft.py expands) and the pipeline has a way through for it, the
first that applies of:

- the importer rewrites a deprecated op (Scatter, Upsample) as its replacement;
- the importer resolves sequence and optional ops (frontend/sequences.py), and the
  inline-control-flow pass If, Loop and Scan, when their control is known at compile time;
- convert-onnx-to-krnl has a lowering registered for it (an element-wise op's is
  defined where its scalar function is, e.g. onnx_to_krnl/elementwise.py);
- the decompose pass inlines its function body, and every op of that body is
  supported in turn. Bodies built from the node (context-dependent functions,
  the training optimizers) are built here for default attributes and static
  inputs of rank 1 to 4, of float32 where the op allows it.

Any other op compiles only where constprop folds it (its inputs all constant;
random ops never are).

Element types and attribute values are checked when the op is lowered, so a
supported op can still be refused for a particular node, always at compile time.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

import onnx
import onnx.defs
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block

import onnxc
from onnxc.dialects.microsoft import MICROSOFT_OPS
from onnxc.dialects.onnx import DOMAINS, OPS, op_schema
from onnxc.dialects.types import element_type_of_onnx
from onnxc.frontend import microsoft, preview, sequences
from onnxc.frontend.importer import DEPRECATED_REPLACEMENTS, ONNX_DOMAINS
from onnxc.frontend.microsoft import MICROSOFT_DOMAIN

# The inputs bodies are built for: each required input of rank 1 to 4, every dim 2 (some bodies
# need static dims, e.g. a kernel size); a variadic one 12 times, whole groups for the training
# optimizers (3 or 4 tensors per group).
BODY_RANKS = (1, 2, 3, 4)
BODY_DIM = 2
VARIADIC_INPUTS = 12


@dataclass(frozen=True)
class Support:
    supported: bool
    reason: str
    source: str | None = None
    """The file that lowers, inlines or rewrites the op, relative to the repository
    (to site-packages for an installed onnxc); None where the op has no way through."""


def op_support(op_type: str, domain: str = "", opset: int | None = None) -> Support:
    """Whether the op `op_type` of `domain` at `opset` (default: newest) has a way
    through the compiler, with the reason in words."""
    dialect_domain = "" if domain in ONNX_DOMAINS else domain
    if domain == MICROSOFT_DOMAIN:
        return _microsoft_support(op_type)
    if domain == preview.PREVIEW_DOMAIN:
        if op_type not in preview.EXPANDED_OPS:
            return Support(False, f"{domain} operator not supported")
        source = _source(preview.__name__)
        return Support(True, f"imported by {source} as the nodes of its ONNX function", source)
    if dialect_domain not in DOMAINS:
        return Support(False, f"operator domain '{domain}' is not supported")
    opset = opset or onnx.defs.onnx_opset_version()
    try:
        op_schema(op_type, dialect_domain, opset)
    except onnx.defs.SchemaError:
        return Support(False, f"not an operator of {domain or 'ai.onnx'} opset {opset}")
    return _support(op_type, dialect_domain, opset, frozenset())


def _microsoft_support(op_type: str) -> Support:
    """A com.microsoft op is supported when the importer expands it into ai.onnx ops (or,
    DynamicQuantizeLSTM, keeps it for its integer kernels), or (Tokenizer) when
    fuse-tokenizer fuses it into the TfIdfVectorizer it feeds."""
    if op_type in MICROSOFT_OPS and op_type not in microsoft.EXPANSIONS:
        from onnxc.passes import fuse_tokenizer

        source = _source(fuse_tokenizer.__name__)
        return Support(True, f"fused by {source} into the TfIdfVectorizer it feeds", source)
    if op_type not in microsoft.EXPANSIONS:
        return Support(False, f"{MICROSOFT_DOMAIN} operator not supported")
    source = _source(microsoft.__name__)
    if op_type in MICROSOFT_OPS:
        reason = f"imported by {source}: kept for integer kernels where its weights allow, else a float LSTM"
        return Support(True, reason, source)
    return Support(True, f"imported by {source} as its float op between Dequantize/QuantizeLinear", source)


def _support(op_type: str, domain: str, opset: int, seen: frozenset[str]) -> Support:
    from onnxc.passes import inline_control_flow, onnx_to_krnl  # noqa: F401  (onnx_to_krnl registers the lowerings)
    from onnxc.passes.onnx_to_krnl.common import LOWERINGS
    from onnxc.passes.onnx_to_krnl.fusion import SCALAR_OPS

    if domain == "" and op_type in DEPRECATED_REPLACEMENTS:
        if onnx.defs.get_schema(op_type, opset).deprecated:
            return Support(False, f"deprecated in ai.onnx opset {opset}")
        replacement, since = DEPRECATED_REPLACEMENTS[op_type]
        inner = _support(replacement, domain, since, seen)
        return Support(inner.supported, f"imported as {replacement}-{since}, {inner.reason}", inner.source)
    if op_type not in OPS or OPS[op_type].DOMAIN != domain:
        return Support(False, "no op in the onnx dialect")
    if op_type in inline_control_flow.CONTROL_FLOW:
        source = _source(inline_control_flow.__name__)
        return Support(True, f"inlined by {source} when its control is known at compile time", source)
    if op_type in sequences.COMPILE_TIME_OPS and op_type not in LOWERINGS:
        source = _source(sequences.__name__)
        return Support(True, f"resolved by {source} when known at compile time", source)
    lowering = SCALAR_OPS.get(op_type) or LOWERINGS.get(op_type)
    if lowering is not None:
        source = _source(lowering.__module__)
        return Support(True, f"lowered by {source}", source)
    return _decomposed(op_type, domain, opset, seen | {op_type})


def _decomposed(op_type: str, domain: str, opset: int, seen: frozenset[str]) -> Support:
    """Support through the function body decompose inlines, checked op by op."""
    from onnxc.passes.constprop import NOT_FOLDABLE
    from onnxc.passes.decompose import decompose

    bodies = _bodies(op_type, domain, opset)
    if not bodies:
        folded = "" if op_type in NOT_FOLDABLE else ": compiled only where constprop folds it (inputs all constant)"
        return Support(False, f"no lowering and no function body{folded}")
    body_ops = sorted({node.op_type for body in bodies for node in body.node})
    reason = f"decomposed into {', '.join(body_ops)}"
    for body in bodies:
        # Body ops follow the body's opset; a written body's (no opset) follows the model's.
        body_opset = next((o.version for o in body.opset_import if o.domain in ONNX_DOMAINS), None)
        for node in body.node:
            inner = (
                Support(False, "recursive function body")
                if node.op_type in seen
                else _support(node.op_type, "", body_opset or opset, seen)
            )
            if not inner.supported:
                return Support(False, f"{reason}, but {node.op_type}: {inner.reason}")
    return Support(True, reason, _source(decompose.__module__))


def _bodies(op_type: str, domain: str, opset: int) -> list[onnx.FunctionProto]:
    """The bodies decompose inlines for nodes of this op with default attributes and
    every required input, of each rank in BODY_RANKS (context-dependent bodies differ)."""
    from onnxc.passes.decompose import function_body
    from onnxc.passes.helpers.graph import make_op

    schema = op_schema(op_type, domain, opset)
    required = [p for p in schema.inputs if p.option != onnx.defs.OpSchema.FormalParameterOption.Optional]
    if required and required[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
        required[-1:] = required[-1:] * VARIADIC_INPUTS
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    elements = [_element_type(allowed.get(p.type_str, [p.type_str])) for p in required]
    if None in elements:
        return []
    bodies = []
    for rank in BODY_RANKS:
        block = Block(arg_types=[TensorType(element, [BODY_DIM] * rank) for element in elements])
        body = function_body(make_op(op_type, list(block.args), opset=opset), opset)
        if body is not None:
            bodies.append(body)
    return bodies


def _element_type(type_strs: list[str]):
    """float32 where allowed, else the first tensor type allowed; None for non-tensor types."""
    type_str = "tensor(float)" if "tensor(float)" in type_strs else type_strs[0]
    if not type_str.startswith("tensor("):
        return None
    return element_type_of_onnx(onnx.TensorProto.DataType.Value(type_str[len("tensor(") : -1].upper()))


def _source(module_name: str) -> str:
    """The file of a module, relative to the directory holding the onnxc package."""
    module = importlib.import_module(module_name)
    return Path(module.__file__).resolve().relative_to(Path(onnxc.__file__).resolve().parents[1]).as_posix()
