"""Reference results for a model: onnxruntime when installed, else `onnx.reference`.

Also makes copies of a model that return intermediate values as extra graph
outputs, so a compiled build and the reference can be compared node by node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import onnx
import onnx.shape_inference
from onnx import helper

from onnxc.errors import OnnxcError


def reference_name() -> str:
    """Which reference `run_reference` uses, with its version."""
    try:
        import onnxruntime
    except ImportError:
        return f"onnx.reference {onnx.__version__}"
    return f"onnxruntime {onnxruntime.__version__}"


def run_reference(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every graph output of `model` on `feeds`, by name.

    onnxruntime runs with its graph optimizations off, so that each value is
    computed by the node that defines it, as the model says.
    """
    names = [vi.name for vi in model.graph.output]
    try:
        results = _run(model, names, feeds)
    except Exception as exc:  # each reference fails in its own exception types
        raise OnnxcError(f"the reference ({reference_name()}) cannot run the model: {exc}") from None
    return {name: np.asarray(value) for name, value in zip(names, results)}


def _run(model: onnx.ModelProto, names: list[str], feeds: Mapping[str, np.ndarray]) -> list:
    try:
        import onnxruntime
    except ImportError:
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(model, new_ops=[_inference_batch_norm()]).run(None, dict(feeds))
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3  # errors only: no warnings about unused initializers
    return _ort_session(onnxruntime, model, options).run(names, dict(feeds))


def _ort_session(onnxruntime, model: onnx.ModelProto, options):
    """An onnxruntime session of `model`; a model newer onnx stamped with an IR version
    onnxruntime does not know yet is retried with the oldest IR version its opsets allow."""
    try:
        return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own Fail type
        if "IR version" not in str(exc):
            raise
    older = onnx.ModelProto()
    older.CopyFrom(model)
    older.ir_version = helper.find_min_ir_version_for(list(model.opset_import), ignore_unknown=True)
    return onnxruntime.InferenceSession(older.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _inference_batch_norm() -> type:
    """onnx.reference's BatchNormalization for opsets 9-13 mixes the batch's own statistics
    into the running ones whenever `momentum` is set, and the schema default always sets
    it (onnx 1.23). In those opsets a node with one output is inference: normalize with
    the given mean and variance. Training mode (opset 14's `training_mode`) runs as onnx
    does."""
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops.op_batch_normalization import BatchNormalization_14

    class BatchNormalization(OpRun):
        op_domain = ""

        def _run(self, x, scale, bias, mean, var, epsilon=None, momentum=None, training_mode=None):
            if training_mode:
                return BatchNormalization_14._run(self, x, scale, bias, mean, var, epsilon, momentum, training_mode)
            shape = (-1,) + (1,) * (x.ndim - 2)
            epsilon = 1e-5 if epsilon is None else epsilon
            scale, bias, mean, var = (a.reshape(shape) for a in (scale, bias, mean, var))
            return ((scale * (x - mean) / np.sqrt(var + epsilon) + bias).astype(x.dtype),)

    return BatchNormalization


def topological_nodes(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The graph's nodes in an order where each comes after the producers of its inputs
    (ONNX asks for this order, but not every exporter keeps to it); the file's order
    is kept where it already fits."""
    producer = {out: index for index, node in enumerate(graph.node) for out in node.output if out}
    order: list[onnx.NodeProto] = []
    done: set[int] = set()

    def visit(index: int) -> None:
        stack = [index]
        while stack:
            current = stack[-1]
            pending = [
                producer[name]
                for name in graph.node[current].input
                if name in producer and producer[name] not in done and producer[name] not in stack
            ]
            if pending:
                stack.append(pending[0])
            else:
                stack.pop()
                if current not in done:
                    done.add(current)
                    order.append(graph.node[current])

    for index in range(len(graph.node)):
        if index not in done:
            visit(index)
    return order


def node_output_types(model: onnx.ModelProto) -> dict[str, int]:
    """ONNX element type of every node output whose type ONNX shape inference knows."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    except (onnx.shape_inference.InferenceError, RuntimeError):
        inferred = model
    graph = inferred.graph
    types = {}
    for vi in [*graph.value_info, *graph.output, *graph.input]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = vi.type.tensor_type.elem_type
    return types


def with_outputs(model: onnx.ModelProto, names: Iterable[str], types: Mapping[str, int]) -> onnx.ModelProto:
    """A copy of `model` that also returns the values `names` (element types from
    `types`; their shapes are left to inference), after its own outputs."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    existing = {vi.name for vi in copy.graph.output}
    for name in names:
        if name not in existing:
            copy.graph.output.append(helper.make_tensor_value_info(name, types[name], None))
            existing.add(name)
    return copy


def exposable_values(model: onnx.ModelProto, types: Mapping[str, int]) -> list[str]:
    """Node outputs that can be returned as graph outputs, in topological order."""
    return [out for node in topological_nodes(model.graph) for out in node.output if out and out in types]


def value_shapes(model: onnx.ModelProto, values: Mapping[str, np.ndarray]) -> dict[str, Sequence[int]]:
    """Shapes of initializers and of the given computed values, by name."""
    shapes: dict[str, Sequence[int]] = {t.name: tuple(t.dims) for t in model.graph.initializer}
    shapes.update({name: value.shape for name, value in values.items()})
    return shapes
