"""Importer: ONNX ModelProto → `onnx` dialect module.

Checks the graph is well-formed (every value defined once, every use defined,
no cycles; nodes may come in any order and are sorted), decodes every
initializer into the module's weight store, and builds one generated op per
node with its ONNX name as location. Sub-graphs become regions of their op
(imported recursively, seeing the values of the graphs around them).
Sequences, optionals and control flow already decided at import are resolved
into tensors here (`import_sequences`). Problems raise typed errors naming
the node and op.
"""

from __future__ import annotations

import os
from collections import ChainMap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError
from onnx.reference import ReferenceEvaluator
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, NameLoc, NoneAttr, StringAttr, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from onnxc.dialects.onnx import (
    DOMAINS,
    ML_DOMAIN,
    ML_OPS,
    OPS,
    OPSET_ATTR,
    OUTPUT_MAP_KEYS_ATTR,
    OUTPUT_SEQUENCE_AXES_ATTR,
    SINCE_VERSION_ATTR,
    TRAINING_DOMAIN,
    OnnxOp,
    WeightStore,
    YieldOp,
    attribute_of_proto,
    is_variadic,
    op_schema,
    segments,
)
from onnxc.dialects.symbolic import symbol_name
from onnxc.dialects.types import element_type_of_onnx
from onnxc.errors import InvalidModelError, ShapeError, UnsupportedOpError
from onnxc.frontend.input_types import declared_type_of, fresh_symbol, input_type
from onnxc.frontend.microsoft import MICROSOFT_DOMAIN, expand_microsoft_node, keeps
from onnxc.frontend.preview import PREVIEW_DOMAIN, function_graph
from onnxc.frontend.sequence_values import (
    MapSequence,
    SlicedSequence,
    TensorOptional,
    TensorSequence,
    sequence_item_name,
)
from onnxc.frontend.sequences import COMPILE_TIME_OPS
from onnxc.frontend.tensors import decode_tensor
from onnxc.frontend.type_constraints import check_input_types

ONNX_DOMAINS = ("", "ai.onnx")
# Result type of a node output the model declares nothing about: shape inference fills it in.
MAIN_FUNCTION = "main_graph"
# Nodes evaluated at import to decide control flow (`known_value`) take and give tensors of at
# most this many elements each, and at most MAX_IMPORT_EVALUATIONS of them run per model (about
# 0.1 ms each: under a second in all); any value beyond is left unknown, for the graph passes.
MAX_IMPORT_FOLD_ELEMENTS = 64
MAX_IMPORT_EVALUATIONS = 4096
# Attributes that became inputs under another name.
RENAMED_INPUTS = {("Pad", "value"): "constant_value", ("TopK", "k"): "K"}

DEPRECATED_REPLACEMENTS = {"Scatter": ("ScatterElements", 11), "Upsample": ("Resize", 13)}
"""Deprecated operator -> the operator (and its schema version) a node of it becomes."""


def load_model(model: onnx.ModelProto | str | os.PathLike) -> tuple[onnx.ModelProto, Path | None, str]:
    """Read a model (path or proto); returns it, its folder (for external data) and its name."""
    if isinstance(model, onnx.ModelProto):
        return model, None, model.graph.name or "model"
    path = Path(model)
    name = path.name
    if not path.is_file():
        raise InvalidModelError(f"no such model file: {path}", model=name)
    try:
        proto = onnx.load_model(str(path), load_external_data=False)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InvalidModelError(f"not a valid ONNX protobuf ({exc})", model=name) from None
    if not proto.HasField("graph"):
        raise InvalidModelError("the file holds no graph (truncated or not an ONNX model)", model=name)
    return proto, path.parent, name


def model_opset(model: onnx.ModelProto) -> int:
    versions = [o.version for o in model.opset_import if o.domain in ONNX_DOMAINS]
    if not versions:
        # IR version 1-2 models may omit opset_import; ONNX treats that as opset 1. A model
        # of training or ai.onnx.ml ops only uses no ai.onnx op: what onnxc adds for it
        # follows the newest.
        if any(o.domain in (TRAINING_DOMAIN, ML_DOMAIN) for o in model.opset_import):
            return onnx.defs.onnx_opset_version()
        return 1 if not model.opset_import else 0
    return max(versions)


def import_model(
    model: onnx.ModelProto | str | os.PathLike, shapes: Mapping[str, Sequence[int]] | None = None
) -> ModuleOp:
    """Build the onnx-dialect module of a model; `shapes` pins input shapes by input name."""
    proto, base_dir, name = load_model(model)
    try:
        return _GraphImporter(proto, base_dir, shapes or {}).build()
    except InvalidModelError as exc:
        raise exc.with_model(name) from None
    except (UnsupportedOpError, ShapeError) as exc:
        raise exc.with_model(name) from None


class _GraphImporter:
    def __init__(self, model: onnx.ModelProto, base_dir: Path | None, shapes: Mapping[str, Sequence[int]]):
        self.model = model
        self.graph = model.graph
        self.base_dir = base_dir
        self.shapes = dict(shapes)
        self.opset = model_opset(model)
        # Innermost scope first: a sub-graph sees the values of the graphs around it.
        self.values: ChainMap[str, SSAValue] = ChainMap()
        # Node, its opset and output names of each imported op, for `known_value`.
        self.sources: dict[OnnxOp, tuple[onnx.NodeProto, int, list[str]]] = {}
        # The known arrays of each op's results (None: unknown) once asked for; ops are never
        # changed during import, so an entry stays right. `evaluations` counts nodes run.
        self.known: dict[OnnxOp, list[np.ndarray] | None] = {}
        self.evaluations = 0
        self.declared_types: dict[str, onnx.TypeProto] = {}
        self._declare(self.graph)

    def build(self) -> ModuleOp:
        _check_text(self.model, "the model")
        if self.opset == 0:
            raise UnsupportedOpError("the model imports no ai.onnx opset")
        module = ModuleOp([])
        module.attributes[OPSET_ATTR] = IntegerAttr(self.opset, i64)
        self.store = WeightStore.of(module)

        initializer_names = {t.name for t in self.graph.initializer}
        inputs = [vi for vi in self.graph.input if vi.name not in initializer_names]
        symbols = {
            symbol_name(dim.dim_param, fresh_symbol(vi.name, axis))
            for vi in inputs
            if vi.type.tensor_type.HasField("shape")
            for axis, dim in enumerate(vi.type.tensor_type.shape.dim)
            if not dim.HasField("dim_value") or dim.dim_value == -1
        }
        unknown_pins = set(self.shapes) - {vi.name for vi in inputs} - symbols
        if unknown_pins:
            raise ShapeError(
                f"--shape names unknown inputs or dims {sorted(unknown_pins)}; inputs are "
                f"{[vi.name for vi in inputs]}, symbolic dims {sorted(symbols)}"
            )
        arg_types = [input_type(vi, self.shapes) for vi in inputs]
        block = Block(arg_types=arg_types)
        for vi, arg in zip(inputs, block.args):
            self._define(vi.name, arg, "graph input")

        for tensor in self.graph.initializer:
            self._define(
                tensor.name,
                self.constant(block, tensor.name, decode_tensor(tensor, self.base_dir), tensor.data_type),
                "initializer",
            )
        for node in self._sorted_nodes(self.graph, initializer_names | {vi.name for vi in inputs}):
            self._import_node(block, node)

        outputs, output_names, map_keys, sequence_axes = [], [], [], []
        for vi in self.graph.output:
            if vi.name not in self.values:
                raise InvalidModelError(f"graph output '{vi.name}' is never produced")
            value = self.values[vi.name]
            for name, tensor in _output_tensors(vi.name, value):
                outputs.append(tensor)
                output_names.append(name)
                map_keys.append(value.keys if isinstance(value, MapSequence) else ())
                sequence_axes.append(_sequence_axes(value))
        block.add_op(func.ReturnOp(*outputs))

        function = func.FuncOp(MAIN_FUNCTION, (list(arg_types), [v.type for v in outputs]), Region(block))
        function.attributes["onnx.input_names"] = _strings(vi.name for vi in inputs)
        function.attributes["onnx.output_names"] = _strings(output_names)
        if any(map_keys):
            function.attributes[OUTPUT_MAP_KEYS_ATTR] = ArrayAttr([_keys(keys) for keys in map_keys])
        if any(sequence_axes):
            function.attributes[OUTPUT_SEQUENCE_AXES_ATTR] = ArrayAttr([_keys(axes) for axes in sequence_axes])
        module.body.block.add_op(function)
        return module

    # ------------------------------------------------------------------ values and types

    def _declare(self, graph: onnx.GraphProto) -> None:
        self.declared_types.update({vi.name: vi.type for vi in graph.value_info})
        self.declared_types.update({vi.name: vi.type for vi in graph.output})

    def _define(self, name: str, value: SSAValue, what: str) -> None:
        if name in self.values.maps[0]:
            raise InvalidModelError(f"value '{name}' is defined twice (again as {what})")
        self.values[name] = value

    def _declared_type(self, name: str) -> Attribute:
        """The type the model declares for a node output, if any; refined by shape inference."""
        return declared_type_of(self.declared_types.get(name))

    def constant(self, block: Block, name: str, array: np.ndarray, onnx_type: int | None = None) -> SSAValue:
        """An onnx.Constant holding `array`; `onnx_type`, the source tensor's element
        type, is needed where numpy's dtype does not tell (bfloat16 arrives as uint16)."""
        element = element_type_of_onnx(onnx_type) if onnx_type is not None else None
        handle = self.store.add(array, hint=name, element=element)
        op = OPS["Constant"](attributes={"value": handle}, result_types=[[handle.type]])
        op.location = NameLoc(StringAttr(name), NoneAttr())
        block.add_op(op)
        return op.results[0]

    # ------------------------------------------------------------------------- nodes

    def _sorted_nodes(self, graph: onnx.GraphProto, available: set[str]) -> list[onnx.NodeProto]:
        """Nodes in a topological order; a cycle or a dangling input is reported by node."""
        producers: dict[str, int] = {}
        for index, node in enumerate(graph.node):
            for out in node.output:
                if not out:
                    continue
                if out in producers or out in available:
                    raise InvalidModelError(f"output '{out}' is defined twice", node=node.name, op_type=node.op_type)
                producers[out] = index
        order: list[onnx.NodeProto] = []
        state = [0] * len(graph.node)  # 0 new, 1 on stack, 2 done
        for start in range(len(graph.node)):
            if state[start]:
                continue
            stack = [(start, iter(self._node_inputs(graph.node[start])))]
            state[start] = 1
            while stack:
                index, pending = stack[-1]
                for name in pending:
                    if name in available or name in self.values:
                        continue
                    node = graph.node[index]
                    if name not in producers:
                        raise InvalidModelError(
                            f"input '{name}' is not produced by any node, initializer or graph input",
                            node=node.name,
                            op_type=node.op_type,
                        )
                    dep = producers[name]
                    if state[dep] == 1:
                        raise InvalidModelError(
                            f"the graph has a cycle through value '{name}'", node=node.name, op_type=node.op_type
                        )
                    if state[dep] == 0:
                        state[dep] = 1
                        stack.append((dep, iter(self._node_inputs(graph.node[dep]))))
                        break
                else:
                    stack.pop()
                    state[index] = 2
                    order.append(graph.node[index])
        return order

    @staticmethod
    def _node_inputs(node: onnx.NodeProto) -> list[str]:
        """The values a node reads: its inputs and the outer-scope values its sub-graphs use."""
        names = [n for n in node.input if n]
        for attr in node.attribute:
            for graph in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                names.extend(free_names(graph))
        return names

    def _import_node(self, block: Block, node: onnx.NodeProto) -> None:
        where = {"node": node.name, "op_type": node.op_type}
        domain = "" if node.domain in ONNX_DOMAINS else node.domain
        if domain == MICROSOFT_DOMAIN and not keeps(node, lambda name: self.known_value(self._value(name, node))):
            for part in expand_microsoft_node(node, self.opset):
                self._import_node(block, part)
            return
        if domain == PREVIEW_DOMAIN:  # FlexAttention: its function's nodes in its place
            graph = function_graph(node, [self._value(name, node).type for name in node.input])
            outputs = self.inline_graph(block, graph, [self.values[name] for name in node.input])
            for name, value in zip(node.output, outputs):
                self._define(name, value, f"output of node '{node.name}'")
            return
        if domain not in DOMAINS:
            raise UnsupportedOpError(f"operator domain '{node.domain}' is not supported", **where)
        if domain == ML_DOMAIN and node.op_type not in ML_OPS:
            raise UnsupportedOpError(f"operator '{node.op_type}' of domain '{ML_DOMAIN}' is not supported", **where)
        node, replaced_since = self._replace_deprecated(block, node)
        op_class = OPS.get(node.op_type)
        if op_class is None or op_class.DOMAIN != domain or not onnx.defs.has(node.op_type, domain):
            raise UnsupportedOpError(f"unknown operator '{node.op_type}' in opset {self.opset}", **where)
        try:
            op_schema(node.op_type, domain, max(self.opset, replaced_since or 0))
        except onnx.defs.SchemaError:
            raise UnsupportedOpError(
                f"operator '{node.op_type}' does not exist in opset {self.opset}", **where
            ) from None

        if node.op_type == "Constant":
            value = node.attribute[0] if len(node.attribute) == 1 else None
            onnx_type = value.t.data_type if value is not None and value.name == "value" else None
            constant = self.constant(block, node.output[0], self._constant_node_value(node), onnx_type)
            self._define(node.output[0], constant, "Constant")
            return
        resolve = COMPILE_TIME_OPS.get(node.op_type)
        if resolve is not None:
            outputs = resolve(self, block, node)
            if outputs is not None:
                for name, value in zip(node.output, outputs):
                    if name:
                        self._define(name, value, f"output of node '{node.name}'")
                return
        node, upgraded_to = self._move_attributes_to_inputs(block, node)
        upgraded_to = upgraded_to or replaced_since

        operands = self._operands(op_class, node)
        schema = op_schema(node.op_type, domain, max(self.opset, upgraded_to or 0))
        check_input_types(node, schema, [self.values[name] if name else None for name in node.input])
        result_types, result_names = self._results(op_class, node)
        attributes = {
            attr.name: self._attribute(op_class, node, attr)
            for attr in node.attribute
            if attr.name not in op_class.GRAPHS
        }
        regions = [self._region(_graph_attribute(node, name), node) for name in op_class.GRAPHS]
        op = op_class(operands=operands, result_types=result_types, attributes=attributes, regions=regions)
        if upgraded_to:
            op.attributes[SINCE_VERSION_ATTR] = IntegerAttr(upgraded_to, i64)
        op.location = NameLoc(StringAttr(node.name or node.output[0]), NoneAttr())
        block.add_op(op)
        self.sources[op] = (node, upgraded_to or self.opset, result_names)
        for name, value in zip(result_names, op.results):
            self._define(name, value, f"output of node '{node.name}'")

    def _region(self, graph: onnx.GraphProto | None, node: onnx.NodeProto) -> Region:
        """A sub-graph as a single-block region: its inputs are the block's arguments,
        its outputs the operands of the closing onnx.yield; outer values are used directly."""
        if graph is None:
            raise InvalidModelError("a required sub-graph attribute is missing", node=node.name, op_type=node.op_type)
        block = Block(arg_types=[declared_type_of(vi.type) for vi in graph.input])
        outputs = self.inline_graph(block, graph, list(block.args))
        for vi, value in zip(graph.output, outputs):
            if not isinstance(value, SSAValue):
                raise UnsupportedOpError(
                    f"sub-graph output '{vi.name}' is a sequence or optional inside control flow resolved at run time",
                    node=node.name,
                    op_type=node.op_type,
                )
        block.add_op(YieldOp(*outputs))
        return Region(block)

    def inline_graph(self, block: Block, graph: onnx.GraphProto, bindings: Sequence) -> list:
        """Import the nodes of `graph` into `block` with its inputs bound to `bindings`
        (values or compile-time sequences/optionals); returns the values of its outputs."""
        if len(bindings) != len(graph.input):
            raise InvalidModelError(f"sub-graph '{graph.name}' takes {len(graph.input)} inputs, {len(bindings)} given")
        self._declare(graph)
        self.values = self.values.new_child()
        try:
            for vi, value in zip(graph.input, bindings):
                self._define(vi.name, value, "sub-graph input")
            for tensor in graph.initializer:
                array = decode_tensor(tensor, self.base_dir)
                self._define(tensor.name, self.constant(block, tensor.name, array, tensor.data_type), "initializer")
            local = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
            for node in self._sorted_nodes(graph, local):
                self._import_node(block, node)
            missing = [vi.name for vi in graph.output if vi.name not in self.values]
            if missing:
                raise InvalidModelError(f"sub-graph '{graph.name}' never produces its outputs {missing}")
            return [self.values[vi.name] for vi in graph.output]
        finally:
            self.values = self.values.parents

    def known_value(self, value) -> np.ndarray | None:
        """The array of a value known at import: an initializer or Constant node, or the
        result of a small region-free node on known values (`Not(OptionalHasElement(x))`
        deciding an If over sequences), evaluated by onnx.reference; else None.

        Each op is evaluated at most once per import (`self.known`), its producers first,
        without recursion: shared shape arithmetic costs time linear in the graph."""
        if not isinstance(value, SSAValue) or not isinstance(value.owner, OnnxOp):
            return None
        pending = [value.owner]
        while pending:
            op = pending[-1]
            if op in self.known:
                pending.pop()
                continue
            unknown_producers = [
                operand.owner
                for operand in op.operands
                if isinstance(operand.owner, OnnxOp) and operand.owner not in self.known
            ]
            if unknown_producers and self._evaluable(op):
                pending.extend(unknown_producers)
                continue
            pending.pop()
            self.known[op] = self._evaluate(op)
        results = self.known[value.owner]
        return None if results is None else results[value.index]

    def _evaluable(self, op: OnnxOp) -> bool:
        return op.OP_TYPE == "Constant" or (not op.regions and op in self.sources)

    def _evaluate(self, op: OnnxOp) -> list[np.ndarray] | None:
        """The arrays of `op`'s results from its producers' known results, if all are known
        and small, and the import-time budget is not spent; else None."""
        if op.OP_TYPE == "Constant":
            return [self.store.get(op.attributes["value"])]
        if not self._evaluable(op) or self.evaluations >= MAX_IMPORT_EVALUATIONS:
            return None
        arguments = [
            None
            if not isinstance(operand.owner, OnnxOp) or self.known[operand.owner] is None
            else self.known[operand.owner][operand.index]
            for operand in op.operands
        ]
        if any(a is None or a.size > MAX_IMPORT_FOLD_ELEMENTS for a in arguments):
            return None
        node, opset, result_names = self.sources[op]
        feeds = dict(zip([name for name in node.input if name], arguments))
        if not _small_results(node, opset, feeds, result_names):
            return None
        self.evaluations += 1
        try:
            results = ReferenceEvaluator(node, opsets={"": opset}).run(result_names, feeds)
        except Exception:  # noqa: BLE001  a node the reference cannot run: left unknown
            return None
        return [np.asarray(result) for result in results]

    def _replace_deprecated(self, block: Block, node: onnx.NodeProto) -> tuple[onnx.NodeProto, int | None]:
        """A node of an operator later deprecated (the dialect has no op for it),
        rewritten as the operator that replaced it: Scatter-9 is ScatterElements-11,
        Upsample-7/9 a Resize-13 with asymmetric coordinates (and floor for
        nearest). Returns the (copied) node and the schema version it now follows."""
        if node.op_type not in DEPRECATED_REPLACEMENTS or not onnx.defs.has(node.op_type):
            return node, None
        try:
            if onnx.defs.get_schema(node.op_type, self.opset).deprecated:
                return node, None  # refused as unknown, as in the opsets that dropped it
        except onnx.defs.SchemaError:
            return node, None
        replacement, since = DEPRECATED_REPLACEMENTS[node.op_type]
        original, node = node, onnx.NodeProto()
        node.CopyFrom(original)
        node.op_type = replacement
        if replacement == "Resize":
            scales = next((a for a in node.attribute if a.name == "scales"), None)
            if scales is not None:  # Upsample-7: an attribute, later an input
                name = f"{node.name or node.output[0]}.scales"
                array = np.array(onnx.helper.get_attribute_value(scales), dtype=np.float32)
                self._define(name, self.constant(block, name, array), "upgraded attribute")
                node.attribute.remove(scales)
                node.input.append(name)
            node.input[:] = [node.input[0], "", node.input[1]]
            node.attribute.extend(
                [
                    onnx.helper.make_attribute("coordinate_transformation_mode", "asymmetric"),
                    onnx.helper.make_attribute("nearest_mode", "floor"),
                ]
            )
        return node, since

    def _move_attributes_to_inputs(self, block: Block, node: onnx.NodeProto) -> tuple[onnx.NodeProto, int | None]:
        """Rewrite an older node whose attributes later became inputs into the newest form.

        E.g. Unsqueeze-1 `axes` attribute → Unsqueeze-13 `axes` input, Clip-6
        `min`/`max`, Pad-2 `pads`/`value`, Reshape-1 `shape`. Downstream passes
        then see one form. Returns the (copied, never the caller's) node and
        the schema version it now follows.
        """
        latest = onnx.defs.get_schema(node.op_type, domain=node.domain)
        if node.domain not in ONNX_DOMAINS or latest.since_version <= self.opset:
            return node, None
        input_names = [param.name for param in latest.inputs]
        moves = [
            (attr, input_names.index(RENAMED_INPUTS.get((node.op_type, attr.name), attr.name)))
            for attr in node.attribute
            if attr.name not in latest.attributes
            and RENAMED_INPUTS.get((node.op_type, attr.name), attr.name) in input_names
        ]
        if not moves:
            return node, None
        original, node = node, onnx.NodeProto()
        node.CopyFrom(original)
        for attr, position in moves:
            value = onnx.helper.get_attribute_value(attr)
            dtype = np.float32 if attr.type in (onnx.AttributeProto.FLOAT, onnx.AttributeProto.FLOATS) else np.int64
            name = f"{node.name or node.output[0]}.{attr.name}"
            self._define(name, self.constant(block, name, np.array(value, dtype=dtype)), "upgraded attribute")
            while len(node.input) <= position:
                node.input.append("")
            node.input[position] = name
            node.attribute.remove(next(a for a in node.attribute if a.name == attr.name))
        moved = [RENAMED_INPUTS.get((node.op_type, a.name), a.name) for a, _ in moves]
        return node, self._first_version_with_inputs(node.op_type, moved)

    def _first_version_with_inputs(self, op_type: str, names: list[str]) -> int:
        """The oldest schema version after the model's opset that takes `names` as inputs."""
        for version in range(self.opset + 1, onnx.defs.onnx_opset_version() + 1):
            schema = onnx.defs.get_schema(op_type, version)
            if set(names) <= {param.name for param in schema.inputs}:
                return schema.since_version
        return onnx.defs.get_schema(op_type).since_version

    def _operands(self, op_class: type[OnnxOp], node: onnx.NodeProto) -> list:
        params = op_class.get_irdl_definition().operands
        if len(node.input) > len(params) and not (params and is_variadic(params[-1][1])):
            raise InvalidModelError(
                f"{len(node.input)} inputs given, the operator takes at most {len(params)}",
                node=node.name,
                op_type=node.op_type,
            )
        operands = segments(params, [self._value(name, node) if name else None for name in node.input])
        for position, group in enumerate(operands):
            if group is None:
                raise InvalidModelError(
                    f"required input #{position} ('{op_class.INPUTS[position]}') is missing",
                    node=node.name,
                    op_type=node.op_type,
                )
        return operands

    def _value(self, name: str, node: onnx.NodeProto) -> SSAValue:
        value = self.symbolic(name, node)
        if not isinstance(value, SSAValue):
            raise UnsupportedOpError(
                f"input '{name}' is a sequence or optional, which op {node.op_type} cannot take (opset {self.opset})",
                node=node.name,
                op_type=node.op_type,
            )
        return value

    def symbolic(self, name: str, node: onnx.NodeProto):
        """The value named `name`: an SSA value, or a compile-time sequence/optional."""
        if name not in self.values:
            raise InvalidModelError(f"input '{name}' is not defined before use", node=node.name, op_type=node.op_type)
        return self.values[name]

    def _results(self, op_class: type[OnnxOp], node: onnx.NodeProto) -> tuple[list, list[str]]:
        params = op_class.get_irdl_definition().results
        outputs = list(node.output)
        while outputs and not outputs[-1]:  # trailing absent outputs
            outputs.pop()
        if len(outputs) > len(params) and not (params and is_variadic(params[-1][1])):
            raise InvalidModelError(
                f"{len(outputs)} outputs given, the operator has at most {len(params)}",
                node=node.name,
                op_type=node.op_type,
            )
        result_types = segments(params, [self._declared_type(name) if name else None for name in outputs])
        for position, group in enumerate(result_types):
            if group is None:
                raise InvalidModelError(f"required output #{position} is missing", node=node.name, op_type=node.op_type)
        return result_types, [name for name in outputs if name]

    def _attribute(self, op_class: type[OnnxOp], node: onnx.NodeProto, attr: onnx.AttributeProto) -> Attribute:
        where = {"node": node.name, "op_type": node.op_type}
        expected = op_class.ATTR_TYPES.get(attr.name)
        if expected is None:
            raise InvalidModelError(f"unknown attribute '{attr.name}'", **where)
        if attr.ref_attr_name:
            raise UnsupportedOpError(f"attribute '{attr.name}' refers to a function attribute", **where)
        if attr.type != expected:
            raise InvalidModelError(
                f"attribute '{attr.name}' has type {onnx.AttributeProto.AttributeType.Name(attr.type)}, "
                f"expected {onnx.AttributeProto.AttributeType.Name(expected)}",
                **where,
            )
        hint = f"{node.name}.{attr.name}"
        value = attribute_of_proto(attr, lambda t: self.store.add(decode_tensor(t, self.base_dir), hint=hint))
        if value is not None:
            return value
        kind = onnx.AttributeProto
        raise UnsupportedOpError(
            f"attribute '{attr.name}' of type {kind.AttributeType.Name(attr.type)} is not supported", **where
        )

    def _constant_node_value(self, node: onnx.NodeProto) -> np.ndarray:
        """The value of a Constant node in whichever of its attribute forms it uses."""
        if len(node.attribute) != 1:
            raise InvalidModelError("a Constant needs exactly one value attribute", node=node.name, op_type="Constant")
        attr = node.attribute[0]
        forms = {
            "value": lambda: decode_tensor(attr.t, self.base_dir),
            "value_float": lambda: np.array(attr.f, dtype=np.float32),
            "value_floats": lambda: np.array(attr.floats, dtype=np.float32),
            "value_int": lambda: np.array(attr.i, dtype=np.int64),
            "value_ints": lambda: np.array(attr.ints, dtype=np.int64),
        }
        if attr.name not in forms:
            raise UnsupportedOpError(
                f"Constant with attribute '{attr.name}' is not supported", node=node.name, op_type="Constant"
            )
        return forms[attr.name]()


def _output_tensors(name: str, value) -> list[tuple[str, SSAValue]]:
    """The tensors that carry graph output `name`: a sequence of N tensors becomes
    outputs `name[0]`..`name[N-1]` (see docs/abi.md), an optional its content."""
    if isinstance(value, TensorOptional):
        if value.content is None:
            raise UnsupportedOpError(f"graph output '{name}' is an empty optional")
        value = value.content
    if isinstance(value, TensorSequence):
        return [(sequence_item_name(name, i), item) for i, item in enumerate(value.items)]
    if isinstance(value, MapSequence | SlicedSequence):
        return [(name, value.values)]
    return [(name, value)]


def _sequence_axes(value) -> tuple[int, ...]:
    """(axis, keepdims, size) of a graph output that is a sequence of run-time length, else ()."""
    if isinstance(value, TensorOptional):
        value = value.content
    return (value.axis, int(value.keepdims), value.size) if isinstance(value, SlicedSequence) else ()


def _small_results(node: onnx.NodeProto, opset: int, feeds: dict[str, np.ndarray], names: list[str]) -> bool:
    """Whether ONNX shape inference, given the values of `node`'s inputs, gives each of
    its outputs `names` a static shape of at most MAX_IMPORT_FOLD_ELEMENTS elements, so
    that evaluating it cannot build a big tensor (ConstantOfShape, Range, Expand, ...)."""
    domain = "" if node.domain in ONNX_DOMAINS else node.domain
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, domain)
        types = {
            name: onnx.helper.make_tensor_type_proto(onnx.helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
            for name, array in feeds.items()
        }
        data = {name: onnx.numpy_helper.from_array(array, name) for name, array in feeds.items()}
        opsets = [onnx.helper.make_opsetid(domain, opset)]
        outputs = onnx.shape_inference.infer_node_outputs(schema, node, types, data, opset_imports=opsets)
    except Exception:  # noqa: BLE001  a node shape inference refuses is left unknown
        return False
    tensor_types = [outputs[name].tensor_type if name in outputs else None for name in names]
    return all(
        tensor_type is not None
        and tensor_type.HasField("shape")
        and all(d.HasField("dim_value") for d in tensor_type.shape.dim)
        and np.prod([d.dim_value for d in tensor_type.shape.dim]) <= MAX_IMPORT_FOLD_ELEMENTS
        for tensor_type in tensor_types
    )


def _graph_attribute(node: onnx.NodeProto, name: str) -> onnx.GraphProto | None:
    return next((a.g for a in node.attribute if a.name == name and a.type == onnx.AttributeProto.GRAPH), None)


def free_names(graph: onnx.GraphProto) -> set[str]:
    """Names a sub-graph (or one nested in it) reads from the scopes around it."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    defined |= {out for node in graph.node for out in node.output}
    used = {name for node in graph.node for name in node.input if name}
    for node in graph.node:
        for attr in node.attribute:
            for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                used |= free_names(sub)
    used |= {vi.name for vi in graph.output}
    return used - defined


def _check_text(message, where: str) -> None:
    """Every string field of `message`, recursively, must be valid UTF-8 as ONNX requires.

    protobuf hands invalid UTF-8 in a proto2 `string` field back as `bytes`,
    which would otherwise break name handling far from the cause.
    """
    for field, value in message.ListFields():
        if field.type == FieldDescriptor.TYPE_STRING:
            for text in value if field.is_repeated else [value]:
                if not isinstance(text, str):
                    raise InvalidModelError(f"{where}: field '{field.name}' is not valid UTF-8: {text[:40]!r}")
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            items = value if field.is_repeated else [value]
            for index, item in enumerate(items):
                _check_text(item, f"{where}, {field.name} #{index}" if field.is_repeated else f"{where}, {field.name}")


def _strings(values) -> ArrayAttr:
    return ArrayAttr([StringAttr(v) for v in values])


def _keys(keys: Sequence[int | str]) -> ArrayAttr:
    """Integers (i64) or strings as an attribute: a map output's keys, a sequence output's axes."""
    return ArrayAttr([StringAttr(k) if isinstance(k, str) else IntegerAttr(k, i64) for k in keys])
