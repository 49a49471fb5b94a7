"""The optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum), decomposed into
their spec formulas, against ONNX's reference implementation: the first step (T = 0)
and a later one, several tensor groups, float and double."""

import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper

import onnxc

TRAINING = "ai.onnx.preview.training"
GROUP_TENSORS = {"Adagrad": ("X", "G", "H"), "Momentum": ("X", "G", "V"), "Adam": ("X", "G", "V", "H")}
ATTRIBUTES = {
    "Adagrad": {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.001},
    "Momentum": {"alpha": 0.9, "beta": 0.5, "mode": "standard", "norm_coefficient": 0.01},
    "Nesterov": {"alpha": 0.9, "beta": 0.5, "mode": "nesterov", "norm_coefficient": 0.01},
    "Adam": {"alpha": 0.9, "beta": 0.8, "epsilon": 1e-7, "norm_coefficient": 0.001, "norm_coefficient_post": 0.01},
}
SHAPES = ([2], [3, 2])


def optimizer_model(op_type: str, attributes: dict, elem_type: int) -> onnx.ModelProto:
    kinds = GROUP_TENSORS[op_type]
    names = [f"{kind}{k}" for kind in kinds for k in range(len(SHAPES))]
    outputs = [f"{kind}{k}_new" for kind in kinds if kind != "G" for k in range(len(SHAPES))]
    inputs = [
        helper.make_tensor_value_info("R", TensorProto.FLOAT, []),
        helper.make_tensor_value_info("T", TensorProto.INT64, []),
    ]
    inputs += [helper.make_tensor_value_info(n, elem_type, SHAPES[int(n[-1])]) for n in names]
    node = helper.make_node(op_type, ["R", "T", *names], outputs, domain=TRAINING, **attributes)
    graph = helper.make_graph(
        [node], op_type.lower(), inputs, [helper.make_tensor_value_info(o, elem_type, None) for o in outputs]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid(TRAINING, 1)])


@pytest.mark.parametrize("variant", ["Adagrad", "Momentum", "Nesterov", "Adam"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_optimizer_matches_reference(tmp_path, variant, dtype):
    op_type = "Momentum" if variant == "Nesterov" else variant
    model = optimizer_model(op_type, ATTRIBUTES[variant], helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    session = onnxc.Session(onnxc.compile(model, tmp_path / "opt.so"))
    reference = onnx.reference.ReferenceEvaluator(model)
    rng = np.random.default_rng(3)
    shapes = {vi.name: [d.dim_value for d in vi.type.tensor_type.shape.dim] for vi in model.graph.input[2:]}
    tensors = {name: (rng.random(shape) + 0.1).astype(dtype) for name, shape in shapes.items()}
    for step in (0, 3):  # the first step has no bias correction / momentum scaling
        feeds = {"R": np.array(0.1, np.float32), "T": np.array(step, np.int64), **tensors}
        got = session.run(None, feeds)
        want = reference.run(None, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.astype(dtype), rtol=1e-5, atol=1e-7)
