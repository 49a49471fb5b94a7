"""onnxc as an ONNX backend (`onnx.backend.base.Backend`), so that the ONNX
backend test machinery and tools built on it can drive the compiler.

`prepare` only validates the model; the first `run` compiles it for the shapes
of the inputs it is given (the fastest code), and a run with other shapes
compiles (and caches) another library; with `pin_shapes=False` the model's
symbolic dims stay symbolic: one library for every shape.
Inputs that an op needs at compile time to know its output shape (Reshape's
`shape`, Slice's `starts`, TopK's `K`, ... see `SHAPE_OPERANDS`), directly or,
if small, through other ops, are bound as constants by value, so a library is specialized on those values too, and a run
with other values compiles again: results are always those of the model, never
of a stale specialization. Inputs deciding an If or Loop (`CONTROL_OPERANDS`)
stay inputs: the library branches and loops at run time, one for every value;
only if that does not compile (the control flow needs them known, e.g. branches
giving different shapes) are they bound as well, for this model from then on.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.base import Backend, BackendRep

from onnxc.dialects.onnx import CONTROL_OPERANDS, SHAPE_ONLY_OPS, SHAPE_OPERANDS
from onnxc.errors import InputError, ShapeError, UnsupportedOpError
from onnxc.frontend.importer import free_names
from onnxc.frontend.sequence_values import sequence_item_name

CACHE_ENV = "ONNXC_BACKEND_CACHE"
"""Directory for compiled libraries; default: a temporary directory per process."""


MAX_DERIVED_BOUND_ELEMENTS = 64
"""A graph input reaching a shape operand through other ops is bound only up to this many
elements (a size, a crop shape, window parameters), so no data tensor is baked in."""


def shape_operand_inputs(
    model: onnx.ModelProto, directly: bool = False, operands: Mapping[str, tuple[int, ...]] = SHAPE_OPERANDS
) -> set[str]:
    """Graph inputs whose values an op needs at compile time: those consumed at a shape
    operand (or at another of `operands`), and (unless `directly`) the small ones that reach one through other ops, as in
    function bodies (`Range(0, Cast(size), 1)`, `Pad(x, Concat(Div(Sub(Max(Shape(x),
    shape), ...))))`). Shape and Size end the walk: they read no values."""
    graph = model.graph
    initializers = {t.name for t in graph.initializer}
    inputs = {vi.name: vi for vi in graph.input if vi.name not in initializers}
    nodes = list(_all_nodes(graph))
    producers = {out: node for node in nodes for out in node.output if out}
    needed = set()
    pending = []
    for node in nodes:
        if node.domain not in ("", "ai.onnx"):
            continue
        for index in operands.get(node.op_type, ()):
            if index < len(node.input) and node.input[index]:
                if node.input[index] in inputs:
                    needed.add(node.input[index])
                pending.append(node.input[index])
    seen: set[str] = set()
    while pending and not directly:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs and _small_or_shape_like(inputs[name]):
            needed.add(name)
        producer = producers.get(name)
        if producer is not None and producer.op_type not in SHAPE_ONLY_OPS:
            pending.extend(i for i in producer.input if i)
            for attr in producer.attribute:  # what an If/Loop yields depends on what its sub-graphs read
                for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                    pending.extend(free_names(sub) | {vi.name for vi in sub.output})
    return needed


def _small_or_shape_like(value_info: onnx.ValueInfoProto) -> bool:
    """At most MAX_DERIVED_BOUND_ELEMENTS elements, or a vector or scalar of a size known
    at run time only (a crop shape whose length is symbolic; `run` binds it only if small)."""
    tensor = value_info.type.tensor_type
    if value_info.type.HasField("tensor_type") and tensor.HasField("shape") and len(tensor.shape.dim) <= 1:
        return True
    return _elements(value_info) <= MAX_DERIVED_BOUND_ELEMENTS


def _elements(value_info: onnx.ValueInfoProto) -> float:
    """Element count of a declared input; infinite where the shape is not static."""
    tensor = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not tensor.HasField("shape"):
        return float("inf")
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
    return float("inf") if None in dims else float(np.prod(dims, dtype=np.int64))


def _all_nodes(graph: onnx.GraphProto):
    """The nodes of a graph and of the sub-graphs in it (If branches, Loop bodies, ...)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                yield from _all_nodes(sub)


def expand_structured_inputs(
    model: onnx.ModelProto, feeds: Mapping[str, object]
) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The C ABI passes tensors only: a sequence input of N tensors becomes tensor inputs
    `name[0]`..`name[N-1]` joined by a SequenceConstruct node; an optional input given
    None becomes an empty Optional node, one given a value becomes that value's input."""
    structured = {
        vi.name: vi
        for vi in model.graph.input
        if vi.name in feeds and (vi.type.HasField("sequence_type") or vi.type.HasField("optional_type"))
    }
    if not structured:
        return model, dict(feeds)
    expanded = onnx.ModelProto()
    expanded.CopyFrom(model)
    graph = expanded.graph
    flat = {name: value for name, value in feeds.items() if name not in structured}
    inputs, nodes = [], []
    for vi in graph.input:
        if vi.name not in structured:
            inputs.append(vi)
            continue
        value_type, value = vi.type, feeds[vi.name]
        if value_type.HasField("optional_type"):
            value_type = value_type.optional_type.elem_type
            if value is None:
                empty = onnx.helper.make_node("Optional", [], [vi.name])
                empty.attribute.append(onnx.helper.make_attribute("type", value_type))
                nodes.append(empty)
                continue
        if value_type.HasField("sequence_type"):
            element = value_type.sequence_type.elem_type.tensor_type.elem_type
            names = [sequence_item_name(vi.name, i) for i in range(len(value))]
            for name, item in zip(names, value):
                inputs.append(onnx.helper.make_tensor_value_info(name, element, np.shape(item)))
                flat[name] = as_array(item)
            if names:
                nodes.append(onnx.helper.make_node("SequenceConstruct", names, [vi.name]))
            else:
                nodes.append(onnx.helper.make_node("SequenceEmpty", [], [vi.name], dtype=element))
        else:
            inputs.append(onnx.helper.make_value_info(vi.name, value_type))
            flat[vi.name] = as_array(value)
    del graph.input[:]
    graph.input.extend(inputs)
    nodes.extend(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    return expanded, flat


def assemble_outputs(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> tuple:
    """The graph's outputs from the library's tensors: sequence output `name` is
    gathered from `name[0]`, `name[1]`, ... (see `expand_structured_inputs`)."""
    outputs = []
    for vi in model.graph.output:
        if vi.name in values:
            outputs.append(values[vi.name])
            continue
        items, index = [], 0
        while sequence_item_name(vi.name, index) in values:
            items.append(values[sequence_item_name(vi.name, index)])
            index += 1
        outputs.append(items)
    return tuple(outputs)


def bind_inputs(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` whose named graph inputs are initializers holding `values`."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    kept = [vi for vi in bound.graph.input if vi.name not in values]
    del bound.graph.input[:]
    bound.graph.input.extend(kept)
    bound.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), name) for name, v in values.items())
    return bound


class OnnxcRep(BackendRep):
    """A prepared model: compiles on first use per input signature, then runs natively."""

    def __init__(
        self,
        model: onnx.ModelProto,
        opt_level: int = 3,
        cache_dir: str | os.PathLike | None = None,
        pin_shapes: bool = True,
    ):
        self.model = model
        self.opt_level = opt_level
        self.pin_shapes = pin_shapes
        """False: compile the model's symbolic dims as they are, once for every input shape."""
        self.cache_dir = Path(cache_dir or os.environ.get(CACHE_ENV) or _process_cache())
        initializers = {t.name for t in model.graph.initializer}
        self.input_names = [vi.name for vi in model.graph.input if vi.name not in initializers]
        self.output_names = [vi.name for vi in model.graph.output]
        self.bound_names = shape_operand_inputs(model)
        self.direct_names = shape_operand_inputs(model, directly=True)
        self.control_names = shape_operand_inputs(model, operands=CONTROL_OPERANDS) - self.bound_names
        """Inputs deciding an If or Loop, bound too once `run_time_control` is False."""
        self.direct_names |= shape_operand_inputs(model, directly=True, operands=CONTROL_OPERANDS)
        self.run_time_control = True
        """Whether If and Loop compile to run-time control flow; False once that failed."""
        self._model_hash = hashlib.sha256(model.SerializeToString(deterministic=True)).hexdigest()
        self._sessions: dict[str, object] = {}

    def run(self, inputs, **kwargs) -> tuple:
        model, feeds = expand_structured_inputs(self.model, self._feeds(inputs))
        names = self.bound_names if self.run_time_control else self.bound_names | self.control_names
        bound = {
            name: feeds.pop(name)
            for name in names
            if name in feeds and (name in self.direct_names or feeds[name].size <= MAX_DERIVED_BOUND_ELEMENTS)
        }
        try:
            session = self._session(model, feeds, bound)
        except (UnsupportedOpError, ShapeError):
            if not (self.run_time_control and self.control_names):
                raise
            self.run_time_control = False
            return self.run(inputs, **kwargs)
        outputs = session.run(None, {arg.name: _to_runtime(arg, feeds[arg.name]) for arg in session.get_inputs()})
        values = {arg.name: _from_runtime(arg, value) for arg, value in zip(session.get_outputs(), outputs)}
        return assemble_outputs(self.model, values)

    def _feeds(self, inputs) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if len(values) != len(self.input_names):
                raise InputError(f"the model takes {len(self.input_names)} inputs, got {len(values)}")
            feeds = dict(zip(self.input_names, values))
        missing = set(self.input_names) - set(feeds)
        if missing:
            raise InputError(f"missing inputs {sorted(missing)}")
        return {name: as_array(value) for name, value in feeds.items()}

    def _session(self, model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], bound: Mapping[str, np.ndarray]):
        from onnxc.compiler import compile
        from onnxc.runtime import Session

        key = _signature_key(self._model_hash, self.opt_level, feeds if self.pin_shapes else {}, bound)
        session = self._sessions.get(key)
        if session is None:
            library = self.cache_dir / f"{key}.so"
            if not library.exists():
                self.cache_dir.mkdir(parents=True, exist_ok=True)
                model = bind_inputs(model, bound) if bound else model
                shapes = {name: list(value.shape) for name, value in feeds.items()} if self.pin_shapes else None
                partial = library.with_suffix(f".{os.getpid()}.tmp.so")
                compile(model, partial, opt_level=self.opt_level, shapes=shapes)
                partial.replace(library)  # atomic: parallel runners never load half a file
            session = self._sessions[key] = Session(library)
        return session


class OnnxcBackend(Backend):
    """`onnx.backend.base.Backend` for onnxc (CPU of the host)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs) -> OnnxcRep:
        super().prepare(model, device, **kwargs)  # checks the model
        return OnnxcRep(model, **kwargs)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        raise NotImplementedError("onnxc compiles whole models; wrap the node in a model and use run_model")

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device.upper() == "CPU"


prepare = OnnxcBackend.prepare
run_model = OnnxcBackend.run_model
supports_device = OnnxcBackend.supports_device


def as_array(value):
    """An input or expected output as an array (the node tests give some as TensorProto);
    a sequence stays a list of arrays, an empty optional None."""
    if isinstance(value, list):
        return [as_array(item) for item in value]
    if value is None:
        return None
    return numpy_helper.to_array(value) if isinstance(value, onnx.TensorProto) else np.asarray(value)


def _signature_key(model_hash: str, opt_level: int, feeds: Mapping[str, np.ndarray], bound) -> str:
    digest = hashlib.sha256(f"{_compiler_fingerprint()}:{model_hash}:O{opt_level}".encode())
    for name in sorted(feeds):
        digest.update(f"{name}:{feeds[name].dtype}:{feeds[name].shape}".encode())
    for name in sorted(bound):
        value = np.ascontiguousarray(bound[name])
        digest.update(f"{name}={value.dtype}{value.shape}".encode() + value.tobytes())
    return digest.hexdigest()[:32]


_FINGERPRINT: str | None = None


def _compiler_fingerprint() -> str:
    """A hash of the compiler's source, so that a cache never serves a library an
    older compiler built."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import onnxc.codegen
        import onnxc.dialects
        import onnxc.passes

        digest = hashlib.sha256()
        for package in (onnxc, onnxc.codegen, onnxc.dialects, onnxc.passes):
            root = Path(package.__file__).parent
            for path in sorted(root.rglob("*.py")):
                digest.update(path.read_bytes())
        _FINGERPRINT = digest.hexdigest()[:16]
    return _FINGERPRINT


_PROCESS_CACHE: tempfile.TemporaryDirectory | None = None


def _process_cache() -> str:
    global _PROCESS_CACHE
    if _PROCESS_CACHE is None:
        _PROCESS_CACHE = tempfile.TemporaryDirectory(prefix="onnxc-backend-")
    return _PROCESS_CACHE.name


def _to_runtime(arg, value: np.ndarray) -> np.ndarray:
    """bfloat16 travels as its uint16 bit patterns (the runtime needs no ml_dtypes)."""
    if arg.element_type == "bfloat16" and value.dtype.name == "bfloat16":
        return value.view(np.uint16)
    return value


def _from_runtime(arg, value: np.ndarray) -> np.ndarray:
    if arg.element_type == "bfloat16":
        import ml_dtypes

        return value.view(ml_dtypes.bfloat16)
    return value


__all__ = ["OnnxcBackend", "OnnxcRep", "bind_inputs", "prepare", "run_model", "supports_device"]
