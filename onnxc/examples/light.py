"""The nine full-size CNNs shipped in the onnx wheel (`onnx/backend/test/data/light`).

Their weights are `ConstantOfShape` nodes filling every tensor with one value,
which makes outputs meaningless as a numerical check. `materialize_weights`
replaces them by seeded random initializers scaled so activations stay O(1):
He-normal for Conv/Gemm weights, near-identity BatchNormalization statistics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_MODELS = (
    "bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
    "shufflenet", "squeezenet", "vgg19", "zfnet512",
)


def light_model_path(name: str) -> Path:
    return LIGHT_DIR / f"light_{name}.onnx"


def _random_weight(rng: np.random.Generator, shape: tuple[int, ...], role: tuple[str, int] | None) -> np.ndarray:
    op_type, index = role or ("", -1)
    if op_type == "BatchNormalization":
        if index == 1:
            return 1.0 + 0.1 * rng.standard_normal(shape)
        if index == 4:
            return rng.uniform(0.5, 1.5, shape)
        return 0.1 * rng.standard_normal(shape)
    if op_type in ("Conv", "Gemm", "MatMul") and index == 1 and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:])) if op_type == "Conv" else shape[0] if op_type == "MatMul" else shape[1]
        return rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
    return 0.1 * rng.standard_normal(shape)


def materialize_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` whose ConstantOfShape weights are random initializers."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    rng = np.random.default_rng(seed)
    initializers = {t.name: t for t in graph.initializer}
    roles: dict[str, tuple[str, int]] = {}
    for node in graph.node:
        for index, name in enumerate(node.input):
            roles.setdefault(name, (node.op_type, index))
    kept, shape_inputs = [], set()
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in initializers:
            shape = tuple(int(d) for d in numpy_helper.to_array(initializers[node.input[0]]))
            value = _random_weight(rng, shape, roles.get(node.output[0])).astype(np.float32)
            graph.initializer.append(numpy_helper.from_array(value, node.output[0]))
            shape_inputs.add(node.input[0])
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    still_used = {name for node in kept for name in node.input}
    for collection in (graph.initializer, graph.input):
        unused = [item for item in collection if item.name in shape_inputs and item.name not in still_used]
        for item in unused:
            collection.remove(item)
    return model


def load_light_model(name: str, seed: int = 0) -> onnx.ModelProto:
    return materialize_weights(onnx.load(light_model_path(name)), seed)
