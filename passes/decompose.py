"""decompose: rewrite ops that have no kernel into ops that have one.

An op with no lowering registered in `LOWERINGS` is replaced by its schema's
function body (`onnx.defs`: a fixed body, or a context-dependent one built from
the input types), with the caller's attributes substituted for the body's
attribute references; the training optimizers and BatchNormalization in training
mode by the bodies `written_bodies` writes from their spec formulas. Ops that gain a lowering later stop being decomposed
automatically.

New ops are named `<original node>/<body op>_<k>`, so an error in one of them
still names the node the user wrote, and are shape-inferred right away; they
are decomposed again in turn when they have no kernel either.
"""

from __future__ import annotations

from dataclasses import dataclass

import onnx
import onnx.defs
import onnx.reference
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from onnxc.dialects.onnx import OPS, SINCE_VERSION_ATTR, OnnxOp, onnx_inputs, onnx_outputs, op_schema
from onnxc.errors import OnnxcError
from onnxc.passes.constprop import Folder
from onnxc.passes.helpers.graph import (
    attribute_from_proto,
    insert_before,
    make_constant,
    make_op,
    module_opset,
    node_proto,
    onnx_functions,
    onnx_ops,
    op_opset,
    replace_results,
    update_function_types,
)
from onnxc.passes.helpers.written_bodies import needs_written_body, written_body
from onnxc.passes.shape_inference import type_proto

# Inlined bodies may contain ops without a kernel again; this bounds the nesting.
MAX_DEPTH = 8


def lowered_ops() -> set[str]:
    from onnxc.passes.convert_onnx_to_krnl import ConvertOnnxToKrnlPass  # noqa: F401  (registers the lowerings)
    from onnxc.passes.onnx_to_krnl.common import LOWERINGS

    return set(LOWERINGS)


@dataclass(frozen=True)
class DecomposePass(ModulePass):
    name = "decompose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opset = module_opset(op)
        kernels = lowered_ops()
        for function in onnx_functions(op):
            decompose_all(onnx_ops(function), opset, kernels)
        update_function_types(op)


def decompose_all(ops: list[OnnxOp], opset: int, kernels: set[str]) -> bool:
    """Decompose each of `ops` that has no kernel (`kernels`), and the ops that
    replace it in turn; whether any was. inline-control-flow calls it on the
    sub-graphs of the control flow it keeps, which this pass does not walk."""
    worklist = [(node, 0) for node in ops]
    changed = False
    while worklist:
        node, depth = worklist.pop(0)
        if (node.OP_TYPE in kernels and not needs_written_body(node)) or depth >= MAX_DEPTH:
            continue
        new_ops = decompose(node, op_opset(node, opset))
        changed |= bool(new_ops)
        worklist[:0] = [(new, depth + 1) for new in new_ops if isinstance(new, OnnxOp)]
    return changed


def decompose(op: OnnxOp, opset: int) -> list[OnnxOp]:
    """Replace `op` by an equivalent sub-graph; the new ops, or [] if there is none."""
    body = function_body(op, opset)
    if body is None:
        return []
    new_ops, result = _inline(op, body, op_schema(op.OP_TYPE, op.DOMAIN, opset))
    if new_ops is None:
        return []
    # The new ops are settled (typed, their shape arithmetic folded) before the original op's
    # uses move to them. Folding and inference give results new SSA values, so body outputs
    # are kept as (producer, index) and looked up afterwards.
    positions = [None if v is None else (v.owner, v.index) for v in result]
    insert_before(op, new_ops)
    folder = Folder(opset, integers_only=True)
    try:
        for new in new_ops:
            if new.parent is not None and new.OP_TYPE != "Constant":
                folder.settle(new)
    except OnnxcError:  # the body does not type here: keep the op (it is reported as having no kernel)
        _erase_unused(new_ops + [v.owner for values in folder.replaced.values() for v in values])
        return []
    replace_results(op, [None if p is None else _current(folder, *p) for p in positions])
    return [new for new in new_ops if new.parent is not None]


def _current(folder: Folder, owner: OnnxOp, index: int) -> SSAValue:
    return folder.replaced[owner][index] if owner in folder.replaced else owner.results[index]


def _erase_unused(ops: list[OnnxOp]) -> None:
    pending = [op for op in ops if op.parent is not None]
    while pending:
        erasable = [op for op in pending if all(r.first_use is None for r in op.results)]
        for op in erasable:
            Rewriter.erase_op(op)
        pending = [op for op in pending if op.parent is not None]
        if not erasable:
            break


def function_body(op: OnnxOp, opset: int) -> onnx.FunctionProto | None:
    body = written_body(op)
    if body is not None or op.DOMAIN:
        return body
    try:
        schema = onnx.defs.get_schema(op.OP_TYPE, opset)
    except onnx.defs.SchemaError:
        return None
    if schema.has_function:
        data = schema.get_function_with_opset_version(_body_version(schema.function_opset_versions, opset))
    elif schema.has_context_dependent_function:
        values = [v for v in onnx_inputs(op)]
        if any(v is not None and not hasattr(v.type, "get_shape") for v in values):
            return None
        types = [
            b"" if v is None else type_proto(v, {"node": op.node_name, "op_type": op.OP_TYPE}).SerializeToString()
            for v in values
        ]
        try:
            data = schema.get_context_dependent_function_with_opset_version(
                _body_version(schema.context_dependent_function_opset_versions, opset),
                node_proto(op).SerializeToString(),
                types,
            )
        except Exception:  # noqa: BLE001  onnx refuses to build a body for these inputs
            return None
    else:
        return None
    if not data:
        return None
    body = onnx.FunctionProto()
    body.ParseFromString(data)
    return body


def _body_version(versions: list[int], opset: int) -> int:
    """The body written for the newest opset up to ours; else the oldest one (a schema's bodies
    all describe that schema's semantics; body ops carry their own opset as since_version)."""
    older = [v for v in versions if v <= opset]
    return max(older) if older else min(versions)


def _inline(op: OnnxOp, body: onnx.FunctionProto, schema: onnx.defs.OpSchema) -> tuple[list[OnnxOp] | None, list]:
    """The body's nodes as ops on op's operands (None where a node cannot be expressed)."""
    values: dict[str, SSAValue | None] = {"": None}
    for formal, actual in zip(body.input, onnx_inputs(op)):
        values[formal] = actual
    for formal in body.input[len(onnx_inputs(op)) :]:
        values[formal] = None
    caller = {name: a.default_value for name, a in schema.attributes.items() if a.default_value.name}
    caller.update({a.name: a for a in node_proto(op).attribute})
    body_opset = next((o.version for o in body.opset_import if o.domain in ("", "ai.onnx")), None)
    new_ops: list[OnnxOp] = []
    for k, node in enumerate(body.node):
        if node.domain not in ("", "ai.onnx") or node.op_type not in OPS or any(i not in values for i in node.input):
            return None, []
        name = f"{op.node_name}/{node.op_type}_{k}"
        attributes = {}
        for attr in node.attribute:
            if attr.ref_attr_name:
                if attr.ref_attr_name not in caller:
                    continue  # an optional attribute the caller left out
                resolved = onnx.AttributeProto()
                resolved.CopyFrom(caller[attr.ref_attr_name])
                resolved.name = attr.name
                attr = resolved
            if attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                return None, []
            attributes[attr.name] = attr
        if node.op_type == "Constant":
            new = _constant(op, attributes, name)
            if new is None:
                return None, []
        else:
            new = make_op(
                node.op_type,
                [values[i] for i in node.input],
                {n: attribute_from_proto(op, node.op_type, a, f"{name}.{n}") for n, a in attributes.items()},
                name,
                [bool(o) for o in node.output],
            )
            if body_opset is not None:
                new.attributes[SINCE_VERSION_ATTR] = IntegerAttr(body_opset, i64)
        new_ops.append(new)
        for output, result in zip([o for o in node.output if o], new.results):
            values[output] = result
    present = [i for i, value in enumerate(onnx_outputs(op)) if value is not None]  # op.results, by position
    results = [values.get(body.output[i]) if i < len(body.output) else None for i in present]
    return new_ops, results


def _constant(anchor: OnnxOp, attributes: dict[str, onnx.AttributeProto], name: str) -> OnnxOp | None:
    if len(attributes) != 1:
        return None
    (attr,) = attributes.values()
    node = onnx.helper.make_node("Constant", [], ["out"])
    node.attribute.append(attr)
    try:
        value = onnx.reference.ReferenceEvaluator(node).run(None, {})[0]
    except Exception:
        return None
    return make_constant(anchor, value, name)
