"""`onnxc verify`: compile a model, run it, compare with a reference, and on a
mismatch find the first node whose output diverges.

The search compiles a debug copy of the model at -O0 that returns every node
output as an extra graph output (graph outputs survive every pass), gets the
same values from the reference, and walks the nodes in topological order: the
first node whose output is outside tolerance while its inputs were not is
where the compiled code goes wrong.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from onnxc.errors import InputError, InvalidModelError, OnnxcError
from onnxc.tools.reference import (
    exposable_values,
    node_output_types,
    reference_name,
    run_reference,
    topological_nodes,
    value_shapes,
    with_outputs,
)

DEBUG_OPT_LEVEL = 0
"""The debug build runs no graph optimizations, so every node's value exists as the model defines it."""

Progress = Callable[[str], None]
"""Told a line about each step of `verify` as it ends (`onnxc verify -v`)."""

RANDOM_INT_RANGE = (0, 3)
"""Random integer inputs are drawn from [0, 3): valid as indices, counts and axes of small tensors."""


@dataclass
class Comparison:
    """One value, compiled vs reference: `passed` when every element satisfies
    |actual - expected| <= atol + rtol * |expected| (NaN matching NaN)."""

    name: str
    passed: bool
    shape: tuple[int, ...]
    expected_shape: tuple[int, ...]
    max_abs: float = 0.0
    max_rel: float = 0.0  # max_abs relative to the largest |expected|
    mismatched: int = 0
    worst_index: tuple[int, ...] | None = None
    actual_value: float | None = None
    expected_value: float | None = None

    @property
    def size(self) -> int:
        return int(np.prod(self.expected_shape))


@dataclass
class NodeDivergence:
    """The first node (topological order) with an output outside tolerance."""

    node: onnx.NodeProto
    position: int  # 1-based, in topological order
    node_count: int
    comparison: Comparison
    input_shapes: list[tuple[str, Sequence[int] | None]]

    @property
    def attributes(self) -> dict[str, object]:
        return {attr.name: _attribute_text(attr) for attr in self.node.attribute}


@dataclass
class VerifyReport:
    reference: str
    rtol: float
    atol: float
    outputs: list[Comparison]
    divergence: NodeDivergence | None = None
    located: bool = False  # whether the node-by-node search ran
    locate_error: str | None = None  # why the search could not run
    inputs: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.outputs)


def _as_array(value) -> np.ndarray:
    """An output as an array: a sequence of maps (ZipMap) as the [N, keys] array of
    its values, each row in the order of its keys."""
    if isinstance(value, np.ndarray) and value.dtype == object:  # the reference's maps, via np.asarray
        value = list(value)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return np.array([[row[key] for key in sorted(row)] for row in value], dtype=np.float32)
    return np.asarray(value)


def compare(name: str, actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> Comparison:
    actual, expected = _as_array(actual), _as_array(expected)
    if actual.shape != expected.shape:
        return Comparison(name, False, actual.shape, expected.shape, float("inf"), float("inf"), expected.size)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(a - e)
        both_nan = np.isnan(a) & np.isnan(e)
        same = (a == e) | both_nan  # also equal infinities
        floats = np.issubdtype(expected.dtype, np.floating)
        within = same | (error <= atol + rtol * np.abs(e)) if floats else same
    error = np.where(same, 0.0, error)
    error = np.where(np.isnan(error), np.inf, error)
    bad = ~within
    comparison = Comparison(name, not bad.any(), actual.shape, expected.shape, mismatched=int(bad.sum()))
    if error.size:
        worst = np.unravel_index(int(np.argmax(np.where(bad, error, -1.0) if bad.any() else error)), error.shape)
        comparison.max_abs = float(error.max())
        scale = float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0))
        comparison.max_rel = comparison.max_abs / scale if scale else (0.0 if comparison.max_abs == 0 else np.inf)
        comparison.worst_index = tuple(int(i) for i in worst)
        comparison.actual_value = float(a[worst])
        comparison.expected_value = float(e[worst])
    return comparison


def verify(
    model: onnx.ModelProto | str | os.PathLike,
    inputs: Mapping[str, np.ndarray] | None = None,
    *,
    shapes: Mapping[str, Sequence[int]] | None = None,
    rtol: float = 1e-3,
    atol: float = 1e-4,
    opt_level: int = 3,
    seed: int = 0,
    locate: bool = True,
    reference_model: onnx.ModelProto | None = None,
    progress: Progress | None = None,
) -> VerifyReport:
    """Compile `model`, run it on `inputs` (missing ones random, seeded) and compare
    every output with the reference run of `reference_model` (default: the model).

    On a mismatch and with `locate`, also find the first divergent node. Inputs
    whose declared shape has symbolic dims are pinned to the given arrays' shapes.
    `progress` is told each step (and each compile stage) as it ends.
    """
    from onnxc.compiler import compile
    from onnxc.runtime import Session

    proto = _load(model)
    reference_proto = reference_model if reference_model is not None else proto
    inputs = dict(inputs or {})
    shapes = {**_pins_from_inputs(proto, inputs), **dict(shapes or {})}
    with tempfile.TemporaryDirectory(prefix="onnxc-verify-") as work:
        library = compile(proto, Path(work) / "model.so", opt_level=opt_level, shapes=shapes, log=_log(progress))
        session = Session(str(library))
        feeds = _feeds(session, inputs, seed)
        actual = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
        expected = _timed(progress, "reference run", run_reference, reference_proto, feeds)
        report = VerifyReport(
            reference_name(),
            rtol,
            atol,
            [compare(name, actual[name], expected[name], rtol, atol) for name in expected],
            inputs=feeds,
        )
        if not report.passed and locate:
            try:
                report.divergence = _first_divergent_node(
                    proto, reference_proto, feeds, shapes, rtol, atol, work, progress
                )
                report.located = True
            except OnnxcError as exc:
                report.locate_error = str(exc)
    return report


def _first_divergent_node(
    proto: onnx.ModelProto,
    reference_proto: onnx.ModelProto,
    feeds: Mapping[str, np.ndarray],
    shapes: Mapping[str, Sequence[int]],
    rtol: float,
    atol: float,
    work: str,
    progress: Progress | None,
) -> NodeDivergence | None:
    """Compare every node output of a -O0 debug build with the reference's; the first
    node (topological order) with an output outside tolerance, or None."""
    from onnxc.compiler import compile
    from onnxc.runtime import Session

    types = node_output_types(proto)
    reference_types = node_output_types(reference_proto)
    names = [n for n in exposable_values(proto, types) if n in reference_types]
    debug = with_outputs(proto, names, types)
    if progress:
        progress(f"searching node by node: a -O{DEBUG_OPT_LEVEL} build returning {len(names)} intermediate values")
    library = compile(debug, Path(work) / "debug.so", opt_level=DEBUG_OPT_LEVEL, shapes=shapes, log=_log(progress))
    session = Session(str(library))
    actual = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))
    exposed_reference = with_outputs(reference_proto, names, reference_types)
    expected = _timed(progress, "reference run", run_reference, exposed_reference, feeds)
    shapes_by_name = value_shapes(proto, {**feeds, **expected})
    nodes = topological_nodes(proto.graph)
    for position, node in enumerate(nodes, 1):
        for out in node.output:
            if out not in actual or out not in expected:
                continue
            comparison = compare(out, actual[out], expected[out], rtol, atol)
            if not comparison.passed:
                input_shapes = [(name, shapes_by_name.get(name)) for name in node.input if name]
                return NodeDivergence(node, position, len(nodes), comparison, input_shapes)
    return None


def _log(progress: Progress | None):
    """A compile log that reports each compile stage to `progress`."""
    from onnxc.compiler import CompileLog

    if progress is None:
        return None
    return CompileLog(on_stage=lambda stage, seconds: progress(f"{stage:<24} {seconds * 1000:9.1f} ms"))


def _timed(progress: Progress | None, step: str, function, *args):
    start = time.perf_counter()
    result = function(*args)
    if progress:
        progress(f"{step:<24} {(time.perf_counter() - start) * 1000:9.1f} ms")
    return result


def _load(model: onnx.ModelProto | str | os.PathLike) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    path = Path(model)
    if not path.is_file():
        raise InvalidModelError(f"no such model file: {path}")
    try:
        return onnx.load(str(path))
    except Exception as exc:  # protobuf and external-data errors come in many types
        raise InvalidModelError(f"cannot read {path}: {exc}") from None


def _pins_from_inputs(proto: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> dict[str, list[int]]:
    """Shapes of given inputs whose declared shape is not fully static."""
    pins = {}
    for vi in proto.graph.input:
        if vi.name in inputs and vi.type.HasField("tensor_type"):
            dims = vi.type.tensor_type.shape.dim
            if not vi.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
                pins[vi.name] = list(np.shape(inputs[vi.name]))
    return pins


def _feeds(session, inputs: Mapping[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    declared = {arg.name: arg for arg in session.get_inputs()}
    unknown = sorted(set(inputs) - set(declared))
    if unknown:
        raise InputError(f"--input names unknown inputs {unknown}; inputs are {sorted(declared)}")
    return complete_feeds(session.get_inputs(), inputs, seed)


def complete_feeds(arguments, given: Mapping[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The `given` inputs plus random ones (`random_input`) for the other `arguments`: a symbolic
    dim takes its size from a given input that has it, else 1."""
    rng = np.random.default_rng(seed)
    declared = {arg.name: arg for arg in arguments}
    symbols = {}
    for name, array in given.items():
        for dim, size in zip(declared[name].shape, np.shape(array)):
            if isinstance(dim, str):
                symbols.setdefault(dim, size)
    feeds = {}
    for name, arg in declared.items():
        shape = [symbols.get(d, 1) if isinstance(d, str) else d for d in arg.shape]
        feeds[name] = np.asarray(given[name]) if name in given else random_input(rng, arg.dtype, shape)
    return feeds


def random_input(rng: np.random.Generator, dtype: np.dtype, shape: Sequence[int]) -> np.ndarray:
    """Standard normal floats, 0/1 booleans, integers in RANDOM_INT_RANGE."""
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(*RANDOM_INT_RANGE, shape).astype(dtype)


def _attribute_text(attr: onnx.AttributeProto) -> object:
    """An attribute value for printing: tensors as their dtype and shape, not their data."""
    if attr.type == onnx.AttributeProto.TENSOR:
        tensor = attr.t
        return f"tensor {onnx.TensorProto.DataType.Name(tensor.data_type).lower()}{list(tensor.dims)}"
    value = helper.get_attribute_value(attr)
    return [_plain(v) for v in value] if isinstance(value, list) else _plain(value)


def _plain(value: object) -> object:
    """Strings decoded; floats (float32 in ONNX) shown with the digits float32 has."""
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, float):
        return float(f"{value:.7g}")
    return value
