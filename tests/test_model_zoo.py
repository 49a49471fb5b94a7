"""The model-zoo families as PyTorch exports them (tests/models/export_*.py), against onnxruntime.

Each model is compiled at -O3 and -O0 for a batch size the exporter left dynamic,
so shape specialization, the graph optimizer and the kernels are all exercised.
The reference is onnxruntime with its graph optimizations off: its Pad fusion
folds a zero Pad into the next MaxPool's padding, which pads with -inf, so on
tiny_yolo (ZeroPad2d before MaxPool) optimized onnxruntime is off by 2% where a
whole window is negative (see test_zero_pad_before_max_pool_is_not_folded).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc

MODELS = Path(__file__).parent / "models"

# model file -> (input name, shape, dtype, value range)
ZOO = {
    "mnist_cnn": ("image", [3, 1, 28, 28], np.float32, None),
    "resnet_mini": ("image", [2, 3, 64, 64], np.float32, None),
    "mobilenet_mini": ("image", [2, 3, 64, 64], np.float32, None),
    "arcface_mini": ("image", [2, 3, 28, 28], np.float32, None),
    "ferplus_mini": ("image", [1, 1, 64, 64], np.float32, None),
    "tiny_yolo": ("image", [2, 3, 64, 64], np.float32, None),
    "bert_tiny": ("input_ids", [2, 16], np.int64, 100),
}


def _feed(name: str) -> dict[str, np.ndarray]:
    input_name, shape, dtype, high = ZOO[name]
    rng = np.random.default_rng(7)
    value = rng.integers(0, high, shape) if high else rng.standard_normal(shape)
    return {input_name: value.astype(dtype)}


@pytest.mark.parametrize("opt_level", [3, pytest.param(0, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_family_matches_onnxruntime(tmp_path, name, opt_level):
    ort = pytest.importorskip("onnxruntime")
    feed = _feed(name)
    shapes = {key: list(value.shape) for key, value in feed.items()}
    library = onnxc.compile(MODELS / f"{name}.onnx", tmp_path / f"{name}.so", shapes=shapes, opt_level=opt_level)
    with onnxc.Session(library) as session:
        got = session.run(None, feed)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    reference = ort.InferenceSession(str(MODELS / f"{name}.onnx"), options, providers=["CPUExecutionProvider"])
    want = reference.run(None, feed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        error = np.abs(g - w).max() / np.abs(w).max()
        assert error <= 1e-4, f"{name} -O{opt_level}: max error {error:.2e} relative to max|ref|"


@pytest.mark.parametrize("opt_level", [3, 0])
def test_zero_pad_before_max_pool_is_not_folded(tmp_path, opt_level):
    """Pad(0) then MaxPool over an all-negative window gives 0, not the window's maximum."""
    graph = helper.make_graph(
        [
            helper.make_node("Pad", ["x", "pads"], ["padded"]),
            helper.make_node("MaxPool", ["padded"], ["y"], kernel_shape=[2, 2]),
        ],
        "pad_pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])],
        [numpy_helper.from_array(np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64), "pads")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = -np.random.default_rng(0).random((1, 2, 4, 4)).astype(np.float32)
    with onnxc.Session(onnxc.compile(model, tmp_path / "pad_pool.so", opt_level=opt_level)) as session:
        (got,) = session.run(None, {"x": x})
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
    assert (got[..., -1, :] == 0).all() and (got[..., :, -1] == 0).all()
