"""The `onnx` dialect: one xDSL op per ai.onnx operator, generated from `onnx.defs`.

Ops are not written by hand. For every operator schema we build an IRDL op
class whose operands, results and attributes follow the schema: optional and
variadic inputs/outputs become optional/variadic operands/results (with segment
sizes), attributes keep their ONNX names. Attributes are the union over every
version of the operator, so models of older opsets import too; the module's
opset (attribute `onnx.opset`) says which semantics apply.

A required GRAPH attribute (If's `then_branch`/`else_branch`, the `body` of
Loop, Scan and SequenceMap) is a region instead, in the schema's attribute
order (alphabetical: If has `else_branch` first): one block whose arguments
are the sub-graph's inputs, closed by `onnx.yield` with its outputs; values
of the enclosing graph are used directly. The only hand-written op is that
terminator.

Weights never enter the IR as data: a TENSOR attribute holds a `WeightAttr`
handle naming an entry of the module's `WeightStore`, a side table of numpy
arrays. Small hand-written tests may use builtin `dense<...>` instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import ml_dtypes
import numpy as np
import onnx
import onnx.defs
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    bf16,
    f32,
    i64,
)
from xdsl.ir import Attribute, Data, Dialect, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    IRDLOperation,
    OptOperandDef,
    OptResultDef,
    VarOperandDef,
    VarResultDef,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_operand_def,
    opt_result_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect

from onnxc.dialects.microsoft import MICROSOFT_DOMAIN  # registers the schemas of its ops
from onnxc.dialects.types import StringType, numpy_dtype_of, tensor_type_of

OPSET_ATTR = "onnx.opset"
TRAINING_DOMAIN = "ai.onnx.preview.training"
ML_DOMAIN = "ai.onnx.ml"
DOMAINS = ("", TRAINING_DOMAIN, ML_DOMAIN, MICROSOFT_DOMAIN)
"""Operator domains with ops in the dialect: ai.onnx (""), the training optimizers
(Adagrad, Adam, Momentum), classic machine learning (ai.onnx.ml) and the few contrib
ops of onnxruntime registered in dialects/microsoft.py, whose names no ai.onnx op shares."""
ML_OPS = frozenset(
    {"LinearClassifier", "LinearRegressor", "Scaler", "Normalizer", "Binarizer", "Imputer"}
    | {"ArrayFeatureExtractor", "OneHotEncoder", "FeatureVectorizer"}
    | {"TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble", "SVMClassifier", "SVMRegressor"}
    | {"ZipMap", "LabelEncoder", "CategoryMapper"}
)
"""The ai.onnx.ml ops onnxc compiles (ZipMap only as a graph output, see
frontend/sequences.py; LabelEncoder and CategoryMapper from strings, not to them);
the importer refuses the others of that domain by name (the map and sequence ops
among them)."""
WEIGHTS_ATTR = "onnx.weights"
# On @main_graph: per graph output, the keys of a sequence-of-maps output (ZipMap's
# class labels, integers or strings), an empty array for a tensor; absent if none is one.
OUTPUT_MAP_KEYS_ATTR = "onnx.output_map_keys"
# On @main_graph: per graph output, [axis, keepdims, size] of a sequence of run-time length
# returned as the tensor it slices (frontend/sequence_values.py), [] for a tensor;
# absent if none is one.
OUTPUT_SEQUENCE_AXES_ATTR = "onnx.output_sequence_axes"
# On an op: the schema version it follows when newer than the module's opset
# (the importer rewrites old attribute forms, e.g. Unsqueeze axes, into inputs).
SINCE_VERSION_ATTR = "onnx.since_version"
# On a Loop whose scan outputs continue loop-carried values (frontend/collected_rows.py): per scan
# output, the carried value whose initial rows it follows, concatenated along axis 0 (-1: stacked).
APPENDED_TO_ATTR = "onnx.appended_to"
# On @main_graph, for a batch loop (passes/helpers/batch_separable.py): the batch
# symbol, and per input whether its leading dim is that batch.
BATCH_SYMBOL_ATTR = "onnx.batch_symbol"
BATCHED_INPUTS_ATTR = "onnx.batched_inputs"
# On @main_graph with symbolic dims that no batch loop takes: why (for the error lowering gives).
NOT_SEPARABLE_ATTR = "onnx.not_batch_separable"
# On @main_graph: what its nodes need of the inputs' dims beyond the dims themselves
# (symbolic.DimCheck), as [lhs, relation, rhs, node, op type] strings.
DIM_CHECKS_ATTR = "onnx.dim_checks"


# --------------------------------------------------------------------------- weights


class WeightStore:
    """Numpy arrays referenced from the IR by name; owned by one module."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._counter = itertools.count()

    def add(self, array: np.ndarray, hint: str = "const", element: Attribute | None = None) -> "WeightAttr":
        """Store `array` under a fresh name and return the handle to it. `element`
        overrides the element type numpy's dtype implies (bfloat16 is held as uint16)."""
        name = hint or "const"
        while name in self.arrays:
            name = f"{hint}_{next(self._counter)}"
        array = np.require(array, requirements="C")
        array.setflags(write=False)
        self.arrays[name] = array
        tensor_type = tensor_type_of(array.dtype, array.shape)
        if element is not None:
            tensor_type = TensorType(element, tensor_type.get_shape())
        return WeightAttr(StringAttr(name), tensor_type)

    def get(self, handle: "WeightAttr") -> np.ndarray:
        name = handle.ref.data
        if name not in self.arrays:
            raise KeyError(
                f"weight '{name}' has no data (textual IR carries no weights; "
                "write small constants as dense<...> instead)"
            )
        return self.arrays[name]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())

    @staticmethod
    def of(op: Operation) -> "WeightStore":
        """The store of the module that contains `op` (created on first use)."""
        module = op if isinstance(op, ModuleOp) else op.get_toplevel_object()
        assert isinstance(module, ModuleOp), "op is not inside a module"
        attr = module.attributes.get(WEIGHTS_ATTR)
        if not isinstance(attr, WeightStoreAttr):
            attr = WeightStoreAttr(WeightStore())
            module.attributes[WEIGHTS_ATTR] = attr
        return attr.data


@irdl_attr_definition
class WeightStoreAttr(Data[WeightStore]):
    """Module attribute carrying the weight side table; prints only a summary."""

    name = "onnx.weights"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> WeightStore:
        parser.parse_punctuation("<")
        parser.parse_str_literal()
        parser.parse_punctuation(">")
        return WeightStore()

    def print_parameter(self, printer: Printer) -> None:
        store = self.data
        printer.print_string(f'<"{len(store.arrays)} arrays, {store.nbytes} bytes">')

    def __hash__(self) -> int:
        return id(self.data)


@irdl_attr_definition
class WeightAttr(ParametrizedAttribute):
    """Handle to a numpy array in the module's WeightStore: `#onnx.weight<"name", type>`."""

    name = "onnx.weight"

    ref: StringAttr
    type: TensorType

    def get_type(self) -> TensorType:
        return self.type


TensorValueAttr = WeightAttr | DenseIntOrFPElementsAttr


def numeric_value(op: Operation, attr: Attribute) -> np.ndarray:
    """`tensor_value` for computing on: bfloat16, held as its uint16 bit patterns, is
    viewed as ml_dtypes.bfloat16, so that numpy and onnx see values, not bits."""
    array = tensor_value(op, attr)
    if attr.get_type().get_element_type() == bf16:
        import ml_dtypes

        return array.view(ml_dtypes.bfloat16)
    return array


def tensor_value(op: Operation, attr: Attribute) -> np.ndarray:
    """The numpy value of a TENSOR attribute (handle or inline dense); bfloat16 as its
    uint16 bits, though a dense attribute holds bfloat16 as values."""
    if isinstance(attr, WeightAttr):
        return WeightStore.of(op).get(attr)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        ttype = attr.get_type()
        if isinstance(ttype.get_element_type(), BFloat16Type):  # real values in, raw bits out
            values = np.array(attr.get_values(), dtype=ml_dtypes.bfloat16).view(np.uint16)
        else:
            values = np.array(attr.get_values(), dtype=numpy_dtype_of(ttype.get_element_type()))
        return values.reshape(ttype.get_shape())
    raise TypeError(f"not a tensor attribute: {attr}")


# --------------------------------------------------------------------- op generation


class OnnxOp(IRDLOperation):
    """Base of every generated onnx op: knows its schema and attribute defaults."""

    OP_TYPE: ClassVar[str]
    DOMAIN: ClassVar[str]
    INPUTS: ClassVar[tuple[str, ...]]
    OUTPUTS: ClassVar[tuple[str, ...]]
    ATTR_TYPES: ClassVar[dict[str, int]]
    # GRAPH attributes held as regions (If's branches, Loop's and Scan's body), in schema order.
    GRAPHS: ClassVar[tuple[str, ...]]
    ATTR_DEFAULTS: ClassVar[dict[str, Any]]
    # Attributes whose schema default changed over the versions (Softmax's axis: 1, then -1
    # since opset 13): (since_version, default) per version that has one, newest first.
    VERSIONED_DEFAULTS: ClassVar[dict[str, tuple[tuple[int, Any], ...]]]

    @property
    def node_name(self) -> str:
        """The ONNX node name, carried as the op's location (for error messages)."""
        location = self.location
        return location.desc.data if isinstance(location, NameLoc) else ""

    @property
    def opset(self) -> int:
        """The ai.onnx opset whose semantics the op follows (see `op_opset`)."""
        module = self.get_toplevel_object()
        return op_opset(self, module_opset(module) if isinstance(module, ModuleOp) else onnx.defs.onnx_opset_version())

    def attr(self, name: str, default: Any = None) -> Any:
        """An attribute as a Python value (int, float, str, list, ndarray); when absent,
        the default of the schema the op follows (`opset`), or of the newest schema that
        has one where that version gives none (Clip-1's bounds, Split-1's axis), else
        `default` (for values no schema has: a size read from the weights)."""
        value = self.attributes.get(name)
        if value is not None:
            return attribute_to_python(self, value)
        versions = self.VERSIONED_DEFAULTS.get(name)
        if versions is not None:
            opset = self.opset
            for since, versioned in versions:
                if since <= opset:
                    return versioned
        return self.ATTR_DEFAULTS.get(name, default)

    def input(self, index: int) -> SSAValue | None:
        """The index-th ONNX input, or None where an optional input is absent."""
        values = onnx_inputs(self)
        return values[index] if index < len(values) else None

    def graph(self, name: str) -> Region:
        """The region holding the sub-graph of GRAPH attribute `name`."""
        return self.regions[self.GRAPHS.index(name)]


def module_opset(module: ModuleOp) -> int:
    """The module's ai.onnx opset (`onnx.opset`); hand-written IR without it means the newest."""
    attr = module.attributes.get(OPSET_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else onnx.defs.onnx_opset_version()


def op_opset(op: Operation, opset: int) -> int:
    """The opset whose semantics `op` follows in a module of `opset`: newer after an importer
    upgrade or a decomposition (`onnx.since_version`)."""
    since = op.attributes.get(SINCE_VERSION_ATTR)
    return max(opset, since.value.data) if isinstance(since, IntegerAttr) else opset


def attribute_of_proto(
    proto: onnx.AttributeProto, store_tensor: Callable[[onnx.TensorProto], WeightAttr]
) -> Attribute | None:
    """An ONNX attribute in the form the onnx dialect holds it (ints as i64, floats as
    f32, strings decoded); a TENSOR goes through `store_tensor`, which puts its array in
    a WeightStore. None for kinds the dialect has no form for (graphs, sparse tensors, types)."""
    kind = onnx.AttributeProto
    forms: dict[int, Callable[[], Attribute]] = {
        kind.INT: lambda: IntegerAttr(proto.i, i64),
        kind.FLOAT: lambda: FloatAttr(proto.f, f32),
        kind.STRING: lambda: StringAttr(proto.s.decode("utf-8", errors="replace")),
        kind.INTS: lambda: _number_list(proto.ints, i64, IntegerAttr),
        kind.FLOATS: lambda: _number_list(proto.floats, f32, FloatAttr),
        kind.STRINGS: lambda: ArrayAttr([StringAttr(v.decode("utf-8", errors="replace")) for v in proto.strings]),
        kind.TENSOR: lambda: store_tensor(proto.t),
    }
    form = forms.get(proto.type)
    return None if form is None else form()


LONG_LIST = 64
"""INTS and FLOATS attributes longer than this are one dense array attribute, not an
array of element attributes: a tree ensemble's node lists (hundreds of thousands of
values) took seconds to build element by element, and as long to hash (cse)."""


def _number_list(values: Sequence[int | float], element: Attribute, form: type) -> Attribute:
    if len(values) > LONG_LIST:
        return DenseArrayBase.from_list(element, list(values))
    return ArrayAttr([form(v, element) for v in values])


def attribute_to_python(op: Operation, value: Attribute) -> Any:
    if isinstance(value, IntegerAttr):
        return value.value.data
    if isinstance(value, FloatAttr):
        return value.value.data
    if isinstance(value, StringAttr):
        return value.data
    if isinstance(value, ArrayAttr):
        return [attribute_to_python(op, v) for v in value.data]
    if isinstance(value, DenseArrayBase):
        return list(value.get_values())
    if isinstance(value, WeightAttr | DenseIntOrFPElementsAttr):
        return tensor_value(op, value)
    return value


def onnx_inputs(op: OnnxOp) -> list[SSAValue | None]:
    """ONNX inputs in schema order, with None for absent optionals."""
    result: list[SSAValue | None] = []
    for name, _ in op.get_irdl_definition().operands:
        value = getattr(op, name)
        if isinstance(value, SSAValue):
            result.append(value)
        elif value is None:
            result.append(None)
        else:
            result.extend(value)
    return result


def onnx_outputs(op: OnnxOp) -> list[SSAValue | None]:
    """ONNX outputs in schema order, with None for absent optionals."""
    result: list[SSAValue | None] = []
    for name, _ in op.get_irdl_definition().results:
        value = getattr(op, name)
        if isinstance(value, SSAValue) or value is None:
            result.append(value)
        else:
            result.extend(value)
    return result


_RESERVED = set(dir(IRDLOperation)) | {"name", "attr", "input", "node_name", "opset"}


def _field_name(name: str, taken: set[str]) -> str:
    field = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not field or field[0].isdigit():
        field = "v_" + field
    while field in _RESERVED or field in taken:
        field += "_"
    taken.add(field)
    return field


def _python_default(attr: onnx.defs.OpSchema.Attribute) -> Any:
    proto = attr.default_value
    if proto is None or not proto.name:
        return None
    return _decode_strings(onnx.helper.get_attribute_value(proto))


def _decode_strings(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [_decode_strings(v) for v in value]
    return value


def op_schema(op_type: str, domain: str, opset: int) -> onnx.defs.OpSchema:
    """The schema an op follows: an ai.onnx op's at the model's opset, another domain's
    newest that is not deprecated (the module's opset is ai.onnx's; ai.onnx.ml's
    TreeEnsembleClassifier/Regressor are deprecated by TreeEnsemble in ai.onnx.ml 5,
    their newer versions only adding attributes). Raises onnx.defs.SchemaError."""
    if domain in ("", "ai.onnx"):
        return onnx.defs.get_schema(op_type, opset)
    latest = onnx.defs.get_schema(op_type, domain=domain)
    if latest.deprecated and latest.since_version > 1:
        return onnx.defs.get_schema(op_type, latest.since_version - 1, domain)
    return latest


def _schema_versions(op_type: str, domain: str) -> list[onnx.defs.OpSchema]:
    latest = op_schema(op_type, domain, onnx.defs.onnx_opset_version())
    versions = []
    version = latest.since_version
    while True:
        schema = onnx.defs.get_schema(op_type, version, domain)
        versions.append(schema)
        if schema.since_version <= 1:
            break
        try:
            version = schema.since_version - 1
            onnx.defs.get_schema(op_type, version, domain)
        except onnx.defs.SchemaError:
            break
    return versions


def _make_op_class(schema: onnx.defs.OpSchema) -> type[OnnxOp]:
    option = onnx.defs.OpSchema.FormalParameterOption
    body: dict[str, Any] = {"name": f"onnx.{schema.name}"}
    taken: set[str] = set()

    def io_fields(params, single, optional, variadic) -> tuple[tuple[str, ...], bool]:
        names = []
        segmented = False
        for param in params:
            field = _field_name(param.name, taken)
            names.append(field)
            if param.option == option.Optional:
                body[field] = optional(AnyAttr())
                segmented = True
            elif param.option == option.Variadic:
                body[field] = variadic(AnyAttr())
                segmented = True
            else:
                body[field] = single(AnyAttr())
        return tuple(names), segmented

    inputs, seg_in = io_fields(schema.inputs, operand_def, opt_operand_def, var_operand_def)
    outputs, seg_out = io_fields(schema.outputs, result_def, opt_result_def, var_result_def)
    options = []
    if seg_in:
        options.append(AttrSizedOperandSegments(as_property=True))
    if seg_out:
        options.append(AttrSizedResultSegments(as_property=True))
    if options:
        body["irdl_options"] = tuple(options)

    attr_types: dict[str, int] = {}
    defaults: dict[str, Any] = {}
    versioned: dict[str, list[tuple[int, Any]]] = {}
    graphs: list[str] = []
    for version in _schema_versions(schema.name, schema.domain):  # newest first
        for attr_name, attr in version.attributes.items():
            default = _python_default(attr)
            if default is not None:
                versioned.setdefault(attr_name, []).append((version.since_version, default))
            if attr_name in attr_types:
                continue
            attr_types[attr_name] = int(attr.type)
            if attr.type == onnx.AttributeProto.GRAPH and attr.required:
                graphs.append(attr_name)
            if default is not None:
                defaults[attr_name] = default
    for attr_name in attr_types:
        field = _field_name(attr_name, taken)
        body[field] = region_def() if attr_name in graphs else opt_attr_def(AnyAttr(), attr_name=attr_name)
    # Pure (no side effects, same results for the same operands: xDSL's CSE and DCE may
    # merge and erase it) unless it draws random numbers, which every op with a `seed`
    # attribute does (Random*, Bernoulli, Multinomial, Dropout in training); an op with
    # sub-graphs has their effects.
    if "seed" not in attr_types:
        body["traits"] = traits_def(RecursiveMemoryEffect() if graphs else Pure())

    cls = type(schema.name, (OnnxOp,), body)
    cls.__doc__ = f"ONNX {schema.name} (latest schema: opset {schema.since_version})."
    cls = irdl_op_definition(cls)
    cls.OP_TYPE = schema.name
    cls.DOMAIN = schema.domain
    cls.INPUTS, cls.OUTPUTS = inputs, outputs
    cls.ATTR_TYPES, cls.ATTR_DEFAULTS = attr_types, defaults
    cls.VERSIONED_DEFAULTS = {
        name: tuple(pairs) for name, pairs in versioned.items() if any(d != pairs[0][1] for _, d in pairs)
    }
    cls.GRAPHS = tuple(graphs)
    return cls


def _generate_ops() -> dict[str, type[OnnxOp]]:
    newest = onnx.defs.onnx_opset_version()
    schemas = sorted(
        (op_schema(s.name, s.domain, newest) for s in onnx.defs.get_all_schemas() if s.domain in DOMAINS),
        key=lambda s: s.name,
    )
    return {s.name: _make_op_class(s) for s in schemas if not s.deprecated}


OPS: dict[str, type[OnnxOp]] = _generate_ops()


# Ops whose axes/sizes are an input only since this opset: a pass building them in
# that form for an older model marks them as following the newer schema.
INPUT_FORM_SINCE = {"Squeeze": 13, "Unsqueeze": 13, "Split": 13, "ReduceSum": 13}


def is_variadic(definition: Any) -> bool:
    """Whether an operand or result definition takes any number of values (a variadic
    ONNX input/output; an optional one takes zero or one)."""
    return isinstance(definition, VarOperandDef | VarResultDef) and not isinstance(
        definition, OptOperandDef | OptResultDef
    )


def segments(definitions: Sequence[tuple[str, Any]], items: Sequence[Any]) -> list:
    """ONNX inputs or outputs in schema order (None: absent) grouped as the op class's
    operand or result definitions (`get_irdl_definition().operands` / `.results`) take
    them, which `operandSegmentSizes`/`resultSegmentSizes` record: an item for a
    single one (None where absent: the caller decides), a list of zero or one for an
    optional one, the present rest for the variadic last one. Items past the
    definitions are the caller's to refuse."""
    groups: list = []
    for position, (_, definition) in enumerate(definitions):
        item = items[position] if position < len(items) else None
        if is_variadic(definition):
            groups.append([v for v in items[position:] if v is not None])
            break
        if isinstance(definition, OptOperandDef | OptResultDef):
            groups.append([] if item is None else [item])
        else:
            groups.append(item)
    return groups


def build_op(
    op_type: str,
    inputs: Sequence[SSAValue | None],
    result_type: Attribute,
    attributes: dict[str, Attribute] | None = None,
    outputs: int | Sequence[bool] = 1,
    opset: int | None = None,
) -> OnnxOp:
    """An onnx op from inputs in schema order (None: absent optional); `outputs` says
    which results exist, each typed `result_type` (shape inference refines it), the
    required ones always. Given the model's `opset`, an op built in a newer input form
    is marked as such."""
    op_class = OPS[op_type]
    definition = op_class.get_irdl_definition()
    present = [True] * outputs if isinstance(outputs, int) else list(outputs)
    result_types = segments(definition.results, [result_type if exists else None for exists in present])
    op = op_class(
        operands=segments(definition.operands, inputs),
        result_types=[result_type if group is None else group for group in result_types],
        attributes=dict(attributes or {}),
    )
    since = INPUT_FORM_SINCE.get(op_type, 0)
    if opset is not None and opset < since:
        op.attributes[SINCE_VERSION_ATTR] = IntegerAttr(since, i64)
    return op


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminator of a sub-graph region: its operands are the sub-graph's outputs, in order."""

    name = "onnx.yield"
    values = var_operand_def(AnyAttr())
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


def op_class(op_type: str) -> type[OnnxOp] | None:
    return OPS.get(op_type)


def iter_onnx_ops(module: ModuleOp) -> Iterator[OnnxOp]:
    for op in module.walk():
        if isinstance(op, OnnxOp):
            yield op


ONNX = Dialect("onnx", [*OPS.values(), YieldOp], [WeightAttr, WeightStoreAttr, StringType])


_REDUCTIONS = ("L1", "L2", "LogSum", "LogSumExp", "Max", "Mean", "Min", "Prod", "Sum", "SumSquare")

SHAPE_OPERANDS: dict[str, tuple[int, ...]] = {
    "AffineGrid": (1,),
    "BlackmanWindow": (0,),
    "CenterCropPad": (1,),
    "Col2Im": (1, 2),
    "ConstantOfShape": (0,),
    "CumProd": (1,),
    "CumSum": (1,),
    "DFT": (1, 2),
    "Expand": (1,),
    "HammingWindow": (0,),
    "HannWindow": (0,),
    "MaxUnpool": (2,),
    "MelWeightMatrix": (0, 1, 2, 3, 4),
    "OneHot": (1,),
    "Pad": (1, 3),
    "Range": (0, 1, 2),
    "Reshape": (1,),
    "Resize": (1, 2, 3),
    "SequenceAt": (1,),
    "SequenceErase": (1,),
    "SequenceInsert": (2,),
    "Slice": (1, 2, 3, 4),
    "Split": (1,),
    "SplitToSequence": (1,),
    "Squeeze": (1,),
    "STFT": (1, 3),
    "Tile": (1,),
    "TopK": (1,),
    "Unsqueeze": (1,),
    "Upsample": (1,),
    **{f"Reduce{kind}": (1,) for kind in _REDUCTIONS},
}
"""Input positions (newest schema) whose values an op needs at compile time: they
decide the output's shape (Reshape's shape, Slice's starts, TopK's K) or which
axes it works on. onnxc compiles for static shapes, so these must be constants
(after constant propagation) by the time the op is lowered."""

CONTROL_OPERANDS: dict[str, tuple[int, ...]] = {"If": (0,), "Loop": (0, 1)}
"""Input positions that decide which sub-graph copies of an If or Loop run. Known at
compile time, they leave only those copies (inline-control-flow); known at run time
only, the op runs as a branch or loop then, unless what it does needs them known
(branches giving different shapes, a loop carrying a sequence it cannot collect)."""

SHAPE_ONLY_OPS = frozenset({"Shape", "Size"})
"""Ops whose result depends on their input's shape only: a value behind one of them
never decides a shape operand (walks back from SHAPE_OPERANDS stop there)."""
