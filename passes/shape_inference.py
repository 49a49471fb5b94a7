"""shape-inference: give every onnx value a ranked tensor type.

Per node, the operator's own ONNX inference function (the C++ one behind
`onnx.shape_inference.infer_node_outputs`) is called with the input types and,
for small constant inputs, their values — so `Reshape` with a constant shape,
`ConstantOfShape`, `Resize` scales and the like get static shapes. Using the
schema's function keeps inference in step with the spec for every op and
opset. Symbolic dims travel as dim names in the tensor type's encoding
(`tensor<?x10xf32, ["N", ""]>`).

A result whose rank depends on values not yet constant (ReduceMean over axes
computed as `Range(0, Size(Shape(x)), 1)` in a function body) stays unranked,
with its element type, and so do its consumers; constprop/fold-shapes infer
them again once the values fold. One still unranked at lowering is refused
there, naming the op that produced it.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    NoneType,
    StringAttr,
    TensorType,
    UnrankedTensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from onnxc.dialects.onnx import (
    DIM_CHECKS_ATTR,
    ML_DOMAIN,
    OPSET_ATTR,
    SINCE_VERSION_ATTR,
    OnnxOp,
    WeightAttr,
    attribute_to_python,
    onnx_inputs,
    onnx_outputs,
    op_schema,
    tensor_value,
)
from onnxc.dialects.symbolic import Dim, DimCheck
from onnxc.dialects.types import dim_params, element_type_of_onnx, numpy_dtype_of, onnx_type_of, symbolic_tensor_type
from onnxc.dtypes import numpy_dtype
from onnxc.errors import ShapeError, UnsupportedOpError
from onnxc.frontend.tensors import check_tensor_size
from onnxc.passes.helpers.ml_shapes import ml_result_dims
from onnxc.passes.helpers.symbolic_shapes import BROADCASTING_OPS, required_checks, symbolic_result_dims

# Operand ranks the ONNX inference functions leave unchecked (Conv given `kernel_shape`
# never looks at the weights' rank): (op type, operand) -> the operand whose rank it must have.
SAME_RANK_AS = {("Conv", 1): 0, ("ConvTranspose", 1): 0}

# Ops whose ONNX schema (in some opsets) infers no shape, though the output has
# the shape of input 0 (GroupNormalization-18 infers only the element type).
SHAPE_OF_FIRST_INPUT = frozenset({"GroupNormalization"})


# Result 0's shape, where ONNX inference leaves it open but constant input
# values fix it: (op, constant value of each input or None) -> shape or None.
def _compress_shape(op: OnnxOp, values: list) -> list[int] | None:
    data, condition = op.input(0), values[1] if len(values) > 1 else None
    if condition is None or not isinstance(data.type, TensorType) or DYNAMIC_INDEX in data.type.get_shape():
        return None
    shape = list(data.type.get_shape())
    axis = op.attributes.get("axis")
    if axis is None:
        return [int(np.count_nonzero(condition.reshape(-1)[: int(np.prod(shape))]))]
    axis = axis.value.data % len(shape)
    shape[axis] = int(np.count_nonzero(condition.reshape(-1)[: shape[axis]]))
    return shape


def _max_unpool_shape(op: OnnxOp, values: list) -> list[int] | None:
    output_shape = values[2] if len(values) > 2 else None
    return None if output_shape is None else [int(d) for d in output_shape.reshape(-1)]


SHAPE_FROM_VALUES = {"Compress": _compress_shape, "MaxUnpool": _max_unpool_shape}


# Scalar operands that models (ONNX's own AffineGrid function body among them) pass as
# one-element 1-D tensors; the reference runtime accepts them, the inference functions
# do not, so they are described to those as scalars.
SCALAR_OPERANDS = {"Range": (0, 1, 2)}

# Attributes whose schema default ONNX's inference function does not apply, given
# to it explicitly when absent: STFT infers a two-sided output without `onesided`,
# though the default (and the reference implementation) is one-sided.
EXPLICIT_DEFAULTS = {"STFT": ("onesided",)}

# Constant inputs up to this many elements are handed to the inference functions
# (shape-like operands); big weights never are, to avoid copying them.
MAX_INFERENCE_DATA = 4096


@dataclass(frozen=True)
class ShapeInferencePass(ModulePass):
    name = "shape-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        opset = op.attributes.get(OPSET_ATTR)
        opset_version = opset.value.data if isinstance(opset, IntegerAttr) else onnx.defs.onnx_opset_version()
        for function in op.ops:
            if isinstance(function, func.FuncOp):
                infer_function(function, opset_version)


def infer_function(function: func.FuncOp, opset: int) -> None:
    checks: list[DimCheck] = []
    for op in list(function.body.walk()):
        if isinstance(op, OnnxOp):
            infer_op(op, opset, checks)
    substitution = unify_symbols([(c.lhs, c.rhs) for c in checks if c.relation == "=="])
    if substitution:  # an input dim is another's, or a constant: say so on the inputs and infer again
        for arg in function.body.block.args:
            if isinstance(arg.type, TensorType):
                _set_type(arg, substitute_dims(arg.type, substitution))
        function.function_type = func.FunctionType.from_lists(
            [a.type for a in function.body.block.args], function.function_type.outputs.data
        )
        for op in list(function.body.walk()):
            if isinstance(op, OnnxOp):
                infer_op(op, opset)
    _record_dim_checks(function, [c.substitute(substitution) for c in checks], substitution)
    returns = [o for o in function.body.block.ops if isinstance(o, func.ReturnOp)]
    if returns:
        function.function_type = func.FunctionType.from_lists(
            function.function_type.inputs.data, [v.type for v in returns[0].arguments]
        )


def _record_dim_checks(function: func.FuncOp, checks: list[DimCheck], substitution: dict | None = None) -> None:
    """Keep the checks only a run can decide on the function (DIM_CHECKS_ATTR, with
    those recorded before, in the inputs' symbols after `substitution`: a folded
    node's requirement still stands); one that can never hold is the model's error."""
    recorded = function.attributes.get(DIM_CHECKS_ATTR)
    known = [DimCheck.from_strings(*(s.data for s in c.data)) for c in recorded.data] if recorded else []
    if substitution:
        known = [c.substitute(substitution) for c in known]
        known = [c for k, c in enumerate(known) if c.outcome() is None and c not in known[:k]]
    for check in checks:
        outcome = check.outcome()
        if outcome is False:
            raise ShapeError(
                f"needs {check.lhs} {check.relation} {check.rhs}, which never holds",
                node=check.node,
                op_type=check.op_type,
            )
        if outcome is None and check not in known:
            known.append(check)
    if known:
        function.attributes[DIM_CHECKS_ATTR] = ArrayAttr(
            [ArrayAttr([StringAttr(t) for t in c.strings()]) for c in known]
        )
    elif recorded:
        del function.attributes[DIM_CHECKS_ATTR]


def infer_op(op: OnnxOp, opset: int, checks: list[DimCheck] | None = None) -> None:
    """Set the result types of one op from its operands' types (and small constant values);
    dims ONNX leaves unknown get symbolic expressions where `symbolic_result_dims` knows
    them. What the op requires of its dims at run time (broadcast dims equal, a Reshape's
    element count kept, a computed dim not negative) is added to `checks`."""
    if op.OP_TYPE in ("If", "Loop", "Scan"):
        return  # kept for run time by inline-control-flow, which types them from their sub-graphs
    if op.OP_TYPE == "Constant":
        value = op.attributes.get("value")
        if isinstance(value, WeightAttr | DenseIntOrFPElementsAttr):
            _set_type(op.results[0], value.get_type())
        return
    where = {"node": op.node_name, "op_type": op.OP_TYPE}
    since = op.attributes.get(SINCE_VERSION_ATTR)
    if isinstance(since, IntegerAttr):
        opset = max(opset, since.value.data)
    try:
        schema = op_schema(op.OP_TYPE, op.DOMAIN, opset)
    except onnx.defs.SchemaError:
        raise UnsupportedOpError(f"operator does not exist in opset {opset}", **where) from None

    node = onnx.NodeProto(op_type=op.OP_TYPE, name=op.node_name, domain=op.DOMAIN)
    input_types: dict[str, onnx.TypeProto] = {}
    input_data: dict[str, onnx.TensorProto] = {}
    constants: list[np.ndarray | None] = []
    for index, value in enumerate(onnx_inputs(op)):
        constants.append(None if value is None else _small_constant(value))
        if value is None:
            node.input.append("")
            continue
        name = f"in{index}"
        node.input.append(name)
        input_types[name] = type_proto(value, where)
        as_scalar = index in SCALAR_OPERANDS.get(op.OP_TYPE, ()) and _single_element(value)
        if as_scalar:
            input_types[name].tensor_type.ClearField("shape")
            input_types[name].tensor_type.shape.SetInParent()
        _check_rank(op, index, where)
        constant = constants[index]
        if constant is not None:
            input_data[name] = onnx.numpy_helper.from_array(constant.reshape(()) if as_scalar else constant, name)
    while node.input and not node.input[-1]:
        node.input.pop()  # older schemas reject trailing absent inputs
    # Outputs by schema position: an absent optional output (an empty name) must
    # not shift the ones after it.
    outputs = onnx_outputs(op)
    node.output.extend("" if value is None else f"out{index}" for index, value in enumerate(outputs))
    while node.output and not node.output[-1]:
        node.output.pop()
    for attr_name, attr in op.attributes.items():
        if attr_name in op.ATTR_TYPES:
            node.attribute.append(attribute_proto(op, attr_name, attr))
    for attr_name in EXPLICIT_DEFAULTS.get(op.OP_TYPE, ()):
        if attr_name not in op.attributes and attr_name in schema.attributes:
            node.attribute.append(schema.attributes[attr_name].default_value)

    try:
        inferred = onnx.shape_inference.infer_node_outputs(
            schema, node, input_types, input_data, opset_imports=opset_imports(op, opset)
        )
    except Exception as exc:  # onnx raises InferenceError, ValidationError or RuntimeError
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ShapeError(f"shape inference failed: {message}", **where) from None

    own = [DimCheck(a, relation, b, op.node_name or "", op.OP_TYPE) for a, relation, b in required_checks(op)]
    for index, result in ((i, v) for i, v in enumerate(outputs) if v is not None):
        proto = inferred.get(f"out{index}")
        if proto is None or not proto.HasField("tensor_type"):
            raise UnsupportedOpError("no type could be inferred for its output (sequence/map or unknown)", **where)
        ttype = _tensor_type(proto.tensor_type, where)
        ml_dims = ml_result_dims(op, index) if op.DOMAIN == ML_DOMAIN else None
        if ml_dims is not None:
            ttype = symbolic_tensor_type(ttype.get_element_type(), *map(list, zip(*ml_dims)))
        first = op.input(0)
        if op.OP_TYPE == "Tokenizer" and isinstance(first.type, TensorType):  # onnx infers no shape for it
            dims, params = [*first.type.get_shape(), DYNAMIC_INDEX], [*dim_params(first.type), ""]
            ttype = symbolic_tensor_type(ttype.get_element_type(), dims, params)  # tokens: a width of run time
        if isinstance(ttype, UnrankedTensorType) and op.OP_TYPE in SHAPE_OF_FIRST_INPUT and first is not None:
            if isinstance(first.type, TensorType):
                ttype = TensorType(ttype.element_type, first.type.get_shape(), first.type.encoding)
        if isinstance(ttype, TensorType) and DYNAMIC_INDEX in ttype.get_shape() and op.OP_TYPE == "Range":
            ttype = _range_type(op, ttype)
        from_values = SHAPE_FROM_VALUES.get(op.OP_TYPE) if index == 0 else None
        if from_values and not (isinstance(ttype, TensorType) and DYNAMIC_INDEX not in ttype.get_shape()):
            shape = from_values(op, constants)
            if shape is not None:
                ttype = TensorType(ttype.get_element_type(), shape)
        if isinstance(ttype, UnrankedTensorType) or DYNAMIC_INDEX in ttype.get_shape():
            ttype = _with_symbolic_dims(op, ttype, index, own)
        if isinstance(ttype, TensorType) and DYNAMIC_INDEX not in ttype.get_shape():
            itemsize = numpy_dtype_of(ttype.get_element_type()).itemsize
            check_tensor_size(ttype.get_shape(), itemsize, f"output #{index}", **where)
        _set_type(result, ttype)
    if checks is not None:
        checks += own
    elif any(check.outcome() is not True for check in own):  # inferred again later (decompose, constprop)
        function = _enclosing_function(op)
        if function is not None:
            _record_dim_checks(function, own)


def _with_symbolic_dims(
    op: OnnxOp, ttype: TensorType | UnrankedTensorType, index: int, checks: list[DimCheck]
) -> TensorType | UnrankedTensorType:
    """Fill the dynamic dims ONNX named nothing (or named with a symbol no input has)
    from the symbolic rules, and the rank where ONNX left it open; a dim that becomes
    constant becomes static. A computed dim that may be negative gets a check."""
    known = input_symbols(op)
    computed = symbolic_result_dims(op, index=index)
    if isinstance(ttype, UnrankedTensorType):
        if computed is None or any(d is None or not d.symbols() <= known for d in computed):
            return ttype
        dims, params = [DYNAMIC_INDEX] * len(computed), [""] * len(computed)
    else:
        dims, params = list(ttype.get_shape()), dim_params(ttype)
    for axis, (dim, param) in enumerate(zip(dims, params)):
        if dim != DYNAMIC_INDEX:
            continue
        expression = _known_expression(param, known)
        rule = computed[axis] if computed is not None and axis < len(computed) else None
        if rule is not None and rule.symbols() <= known and (expression is None or op.OP_TYPE in BROADCASTING_OPS):
            expression = rule
            if not rule.never_negative():
                checks.append(DimCheck(rule, ">=", Dim.const(0), op.node_name or "", op.OP_TYPE))
        if expression is not None and expression.constant is not None:
            dims[axis], params[axis] = expression.constant, ""
        else:
            params[axis] = "" if expression is None else str(expression)
    return symbolic_tensor_type(ttype.get_element_type(), dims, params)


def _known_expression(param: str, known: set[str]) -> Dim | None:
    try:
        expression = Dim.parse(param) if param else None
    except ValueError:
        return None
    return expression if expression is not None and expression.symbols() <= known else None


def input_symbols(op: Operation) -> set[str]:
    """The symbols of the graph inputs' dims, which an expression may use."""
    function = _enclosing_function(op)
    if function is None:
        return set()
    names: set[str] = set()
    for arg in function.body.block.args:
        if isinstance(arg.type, TensorType):
            names |= {p for p in dim_params(arg.type) if p}
    return names


def require_dims(op: Operation, checks: list[DimCheck]) -> None:
    """Record on `op`'s function what it requires of the inputs' dims, for a pass
    that types an op itself (inline-control-flow: a loop-carried value's dims)."""
    function = _enclosing_function(op)
    if function is not None:
        _record_dim_checks(function, checks)


def _enclosing_function(op: Operation) -> func.FuncOp | None:
    function = op.parent_op()
    while function is not None and not isinstance(function, func.FuncOp):
        function = function.parent_op()
    return function


def unify_symbols(equalities: list[tuple[Dim, Dim]]) -> dict[str, Dim]:
    """Symbol -> what it equals, from equalities between a symbol and a constant or
    another symbol (union-find; the other kinds are not used)."""
    parent: dict[str, Dim] = {}

    def find(d: Dim) -> Dim:
        while len(d.atoms()) == 1 and d.split_coefficient() == (1, d) and str(d) in parent:
            d = parent[str(d)]
        return d

    for a, b in equalities:
        a, b = find(a), find(b)
        if a == b:
            continue
        symbol_a, symbol_b = str(a) in a.symbols(), str(b) in b.symbols()  # one symbol alone, not min(32, S)
        if symbol_b and (a.constant is not None or symbol_a):  # the second becomes the first
            parent[str(b)] = a
        elif symbol_a and b.constant is not None:
            parent[str(a)] = b
    return {name: find(Dim.parse(name)) for name in parent}


def substitute_dims(ttype: TensorType, substitution: dict[str, Dim]) -> TensorType:
    dims, params = list(ttype.get_shape()), dim_params(ttype)
    for axis, param in enumerate(params):
        if param in substitution:
            value = substitution[param]
            dims[axis], params[axis] = (
                (value.constant, "") if value.constant is not None else (DYNAMIC_INDEX, str(value))
            )
    return symbolic_tensor_type(ttype.get_element_type(), dims, params)


def opset_imports(op: OnnxOp, opset: int) -> list[onnx.OperatorSetIdProto]:
    """What a one-node model of `op` imports: ai.onnx, and the op's own domain."""
    imports = [onnx.helper.make_opsetid("", opset)]
    if op.DOMAIN:
        imports.append(onnx.helper.make_opsetid(op.DOMAIN, op_schema(op.OP_TYPE, op.DOMAIN, opset).since_version))
    return imports


def _check_rank(op: OnnxOp, index: int, where: dict) -> None:
    other = SAME_RANK_AS.get((op.OP_TYPE, index))
    if other is None:
        return
    operands = onnx_inputs(op)
    this, that = operands[index], operands[other] if other < len(operands) else None
    if that is None or not isinstance(this.type, TensorType) or not isinstance(that.type, TensorType):
        return
    if this.type.get_num_dims() != that.type.get_num_dims():
        raise ShapeError(
            f"input #{index} has rank {this.type.get_num_dims()} (shape {list(this.type.get_shape())}), "
            f"input #{other} rank {that.type.get_num_dims()}: they must be equal",
            **where,
        )


def _single_element(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and list(value.type.get_shape()) == [1]


def range_values(op: OnnxOp, start: np.ndarray, limit: np.ndarray, delta: np.ndarray, element: Attribute) -> np.ndarray:
    """Range's output from its constant inputs (bfloat16 held as uint16 bits, in and out):
    float16 and bfloat16 are computed in the precision `stash_type` names (Range-27)."""
    dtype = np.dtype(ml_dtypes.bfloat16) if isinstance(element, BFloat16Type) else numpy_dtype_of(element)
    start, limit, delta = (_real(v, element).reshape(-1)[0] for v in (start, limit, delta))
    compute = dtype
    if dtype in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)) and "stash_type" in op.ATTR_TYPES:
        compute = np.dtype(numpy_dtype(op.attr("stash_type")))
    start, limit, delta = (np.asarray(v).astype(compute) for v in (start, limit, delta))
    count = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
    values = (start + np.arange(count, dtype=compute) * delta).astype(dtype)
    return values.view(np.uint16) if isinstance(element, BFloat16Type) else values


def _real(array: np.ndarray, element: Attribute) -> np.ndarray:
    """Values of a constant; bfloat16 is stored as its uint16 bits."""
    return array.view(ml_dtypes.bfloat16) if isinstance(element, BFloat16Type) else array


def _range_type(op: OnnxOp, inferred: TensorType) -> TensorType:
    """ONNX's Range inference gives no length for float16/bfloat16 constant inputs; compute it."""
    operands = [_small_constant(v) if v is not None else None for v in onnx_inputs(op)]
    if any(v is None for v in operands):
        return inferred
    length = len(range_values(op, *operands, inferred.get_element_type()))
    return TensorType(inferred.get_element_type(), [length])


def _set_type(value: SSAValue, new_type: Attribute) -> None:
    if value.type != new_type:
        Rewriter.replace_value_with_new_type(value, new_type)


def type_proto(value: SSAValue, where: dict) -> onnx.TypeProto:
    ttype = value.type
    if isinstance(ttype, UnrankedTensorType) and not isinstance(ttype.element_type, NoneType):
        # Not yet ranked (a rank that depends on values constprop may still fold): ONNX
        # infers what it can without a shape; lowering names the op if it stays unranked.
        return onnx.helper.make_tensor_type_proto(onnx_type_of(ttype.element_type), None)
    if not isinstance(ttype, TensorType):
        raise ShapeError(f"an input has unknown type {ttype} (is an earlier node unsupported?)", **where)
    params = dim_params(ttype)
    shape = [p if d == DYNAMIC_INDEX else d for d, p in zip(ttype.get_shape(), params)]
    shape = [None if s == "" else s for s in shape]
    return onnx.helper.make_tensor_type_proto(onnx_type_of(ttype.get_element_type()), shape)


def _tensor_type(proto: onnx.TypeProto.Tensor, where: dict) -> TensorType | UnrankedTensorType:
    """The inferred type; unranked where ONNX cannot tell (lowering rejects those if used)."""
    element = element_type_of_onnx(proto.elem_type)
    if element is None:
        raise UnsupportedOpError(f"inferred element type {proto.elem_type} is not supported", **where)
    if not proto.HasField("shape"):
        return UnrankedTensorType(element)
    dims, params = [], []
    for dim in proto.shape.dim:
        if dim.HasField("dim_value"):
            dims.append(dim.dim_value)
            params.append("")
        else:
            dims.append(DYNAMIC_INDEX)
            params.append(dim.dim_param)
    return symbolic_tensor_type(element, dims, params)


def _small_constant(value: SSAValue) -> np.ndarray | None:
    producer = value.owner
    if not (isinstance(producer, OnnxOp) and producer.OP_TYPE == "Constant"):
        return None
    attr = producer.attributes.get("value")
    ttype = attr.get_type() if isinstance(attr, WeightAttr | DenseIntOrFPElementsAttr) else None
    if ttype is None or int(np.prod(ttype.get_shape(), dtype=np.int64)) > MAX_INFERENCE_DATA:
        return None
    return tensor_value(producer, attr)


def attribute_proto(op: OnnxOp, name: str, attr: Attribute) -> onnx.AttributeProto:
    """Back from xDSL to protobuf, typed by the schema (so [] keeps its INTS/FLOATS type)."""
    attr_type = op.ATTR_TYPES[name]
    kind = onnx.AttributeProto
    if attr_type == kind.TENSOR:
        return onnx.helper.make_attribute(name, onnx.numpy_helper.from_array(tensor_value(op, attr)))
    return onnx.helper.make_attribute(name, attribute_to_python(op, attr), attr_type=attr_type)
