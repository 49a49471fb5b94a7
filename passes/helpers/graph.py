"""Helpers shared by the onnx-level graph passes (constprop, simplify, fuse-gemm, decompose, cse, dce).

They build onnx ops in schema terms (inputs by ONNX position, None for an
absent optional), read constant operands as numpy arrays, turn ops back into
`NodeProto`s for ONNX's own evaluators, and re-run shape inference on ops a
rewrite created — so every pass leaves a fully typed graph behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnx.numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    NoneType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from onnxc.dialects.onnx import (
    OPS,
    SHAPE_ONLY_OPS,
    SHAPE_OPERANDS,
    OnnxOp,
    WeightAttr,
    WeightStore,
    attribute_of_proto,
    build_op,
    module_opset,
    onnx_inputs,
    onnx_outputs,
    op_opset,
    tensor_value,
)
from onnxc.dialects.types import numpy_dtype_of
from onnxc.passes.shape_inference import attribute_proto, infer_function, infer_op

UNKNOWN_TYPE = UnrankedTensorType(NoneType())
SCALAR_CONSTANT_FORMS = ("value_float", "value_floats", "value_int", "value_ints")


def onnx_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp)]


def onnx_ops(function: func.FuncOp) -> list[OnnxOp]:
    """A snapshot of the onnx ops of a function, in (topological) block order."""
    return [op for op in function.body.block.ops if isinstance(op, OnnxOp)]


def constant_array(value: SSAValue | None) -> np.ndarray | None:
    """The value of `value` if an onnx.Constant produces it, else None."""
    if value is None:
        return None
    op = value.owner
    if not (isinstance(op, OnnxOp) and op.OP_TYPE == "Constant"):
        return None
    attr = op.attributes.get("value")
    if isinstance(attr, WeightAttr | DenseIntOrFPElementsAttr):
        return tensor_value(op, attr)
    for form in SCALAR_CONSTANT_FORMS:
        if form in op.attributes:
            dtype = np.float32 if "float" in form else np.int64
            return np.asarray(op.attr(form), dtype=dtype)
    return None


def is_constant(value: SSAValue | None) -> bool:
    owner = value.owner if value is not None else None
    return isinstance(owner, OnnxOp) and owner.OP_TYPE == "Constant"


def static_shape(value: SSAValue) -> tuple[int, ...] | None:
    ttype = value.type
    if isinstance(ttype, TensorType) and all(d >= 0 for d in ttype.get_shape()):
        return tuple(ttype.get_shape())
    return None


def ops_feeding_shapes(ops: Iterable[OnnxOp]) -> set[OnnxOp]:
    """Ops whose results reach a shape operand (`SHAPE_OPERANDS`) of one of `ops`, through
    any ops but Shape and Size (which read no values): `Range(0, Cast(n), 1)`'s Cast."""
    pending = [v for op in ops for i in SHAPE_OPERANDS.get(op.OP_TYPE, ()) if (v := op.input(i)) is not None]
    found: set[OnnxOp] = set()
    while pending:
        producer = pending.pop().owner
        if not isinstance(producer, OnnxOp) or producer in found:
            continue
        found.add(producer)
        if producer.OP_TYPE not in SHAPE_ONLY_OPS:
            pending.extend(v for v in onnx_inputs(producer) if v is not None)
    return found


def single_use(value: SSAValue) -> bool:
    return value.has_one_use()


def set_name(op: Operation, name: str) -> Operation:
    op.location = NameLoc(StringAttr(name), NoneAttr())
    return op


def make_constant(anchor: Operation, array: np.ndarray, name: str) -> OnnxOp:
    """An onnx.Constant holding `array` as a new entry of the module's WeightStore."""
    handle = WeightStore.of(anchor).add(np.asarray(array), hint=name)
    return set_name(OPS["Constant"](attributes={"value": handle}, result_types=[handle.type]), name)


def schema_attributes(op: OnnxOp) -> dict[str, Attribute]:
    """`op`'s ONNX attributes (those of its schema, not the dialect's own), to build a copy."""
    return {name: value for name, value in op.attributes.items() if name in op.ATTR_TYPES}


def make_op(
    op_type: str,
    inputs: Sequence[SSAValue | None],
    attributes: dict[str, Attribute] | None = None,
    name: str = "",
    outputs: int | Sequence[bool] = 1,
    opset: int | None = None,
) -> OnnxOp:
    """An untyped onnx op from inputs in schema order; `outputs` says which results exist
    (`opset`: see `build_op`).

    Results get an unknown type: callers insert the op and call `infer_new_ops`.
    """
    op = build_op(op_type, inputs, UNKNOWN_TYPE, attributes, outputs, opset)
    return set_name(op, name)


def insert_before(anchor: Operation, ops: Iterable[Operation]) -> None:
    for new in ops:
        Rewriter.insert_op(new, InsertPoint.before(anchor))


def infer_new_ops(ops: Iterable[Operation], opset: int) -> None:
    for op in ops:
        if isinstance(op, OnnxOp):
            infer_op(op, opset)


def replace_results(op: Operation, values: Sequence[SSAValue | None]) -> None:
    """Rewire every use of op's results to `values` (None: the result must be unused) and erase op."""
    for result, value in zip(op.results, values):
        if value is not None:
            result.replace_all_uses_with(value)
    erase_dead(op)


def erase_dead(op: Operation) -> None:
    """Erase `op`, then any onnx producer of its operands left without uses."""
    worklist = [op]
    while worklist:
        current = worklist.pop()
        if current.parent is None or any(r.first_use is not None for r in current.results):
            continue
        producers = [v.owner for v in current.operands if isinstance(v.owner, OnnxOp)]
        Rewriter.erase_op(current)
        worklist.extend(producers)


NodeRewrite = Callable[[OnnxOp, int], None]
"""(op, the opset it follows) -> None; may replace or erase the op."""


def rewrite_ops(module: ModuleOp, rewrites: Mapping[str, NodeRewrite]) -> None:
    """Apply the rewrite registered for each live onnx op's type, in order, then
    refresh the function types (a rewrite may change result types)."""
    opset = module_opset(module)
    for function in onnx_functions(module):
        for node in onnx_ops(function):
            rewrite = rewrites.get(node.OP_TYPE)
            if rewrite is not None and node.parent is not None:  # not erased by an earlier rewrite
                rewrite(node, op_opset(node, opset))
    update_function_types(module)


def rewrite_and_infer(module: ModuleOp, op_type: str, rewrite: Callable[[OnnxOp, int], bool]) -> None:
    """Apply `rewrite` (op, its opset) -> whether it rewrote, to each live op of `op_type`;
    shape inference runs again over a function where one did (the types after it change)."""
    opset = module_opset(module)
    for function in onnx_functions(module):
        rewritten = False
        for node in onnx_ops(function):
            if node.OP_TYPE == op_type and node.parent is not None:
                rewritten |= rewrite(node, op_opset(node, opset))
        if rewritten:
            infer_function(function, opset)
    update_function_types(module)


def update_function_types(module: ModuleOp) -> None:
    """Function signatures follow their return values' (possibly refined) types."""
    for function in onnx_functions(module):
        returns = [o for o in function.body.block.ops if isinstance(o, func.ReturnOp)]
        if returns:
            function.function_type = func.FunctionType.from_lists(
                function.function_type.inputs.data, [v.type for v in returns[0].arguments]
            )


def node_proto(op: OnnxOp) -> onnx.NodeProto:
    """`op` as a NodeProto with inputs in0.. and outputs out0.. by schema position (""=absent)."""
    node = onnx.NodeProto(op_type=op.OP_TYPE, name=op.node_name, domain=op.DOMAIN)
    node.input.extend("" if v is None else f"in{i}" for i, v in enumerate(onnx_inputs(op)))
    while node.input and not node.input[-1]:
        node.input.pop()
    node.output.extend("" if v is None else f"out{i}" for i, v in enumerate(onnx_outputs(op)))
    while node.output and not node.output[-1]:
        node.output.pop()
    for attr_name, attr in op.attributes.items():
        if attr_name in op.ATTR_TYPES:
            node.attribute.append(attribute_proto(op, attr_name, attr))
    return node


def attribute_from_proto(anchor: Operation, op_type: str, proto: onnx.AttributeProto, hint: str) -> Attribute:
    """An ONNX attribute as the xDSL attribute the onnx dialect uses (tensors into the WeightStore)."""
    value = attribute_of_proto(proto, lambda t: WeightStore.of(anchor).add(onnx.numpy_helper.to_array(t), hint=hint))
    if value is not None:
        return value
    kind = onnx.AttributeProto
    raise TypeError(f"attribute '{proto.name}' of {op_type} has unsupported type {kind.AttributeType.Name(proto.type)}")


def python_attribute(value: Any) -> Attribute:
    """A plain Python int / float / list of ints as an onnx-dialect attribute."""
    if isinstance(value, bool | int | np.integer):
        return IntegerAttr(int(value), i64)
    if isinstance(value, float | np.floating):
        return FloatAttr(float(value), f32)
    if isinstance(value, list | tuple):
        return ArrayAttr([python_attribute(v) for v in value])
    raise TypeError(f"no attribute form for {value!r}")


def result_dtype(value: SSAValue) -> np.dtype | None:
    ttype = value.type
    if isinstance(ttype, TensorType | UnrankedTensorType) and not isinstance(ttype.get_element_type(), NoneType):
        try:
            return numpy_dtype_of(ttype.get_element_type())
        except (KeyError, ValueError, TypeError):
            return None
    return None
