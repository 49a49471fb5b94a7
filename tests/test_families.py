"""The model families of benchmarks/families.py are valid ONNX, compile, and match onnxruntime."""

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxc

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from families import FAMILIES  # noqa: E402


@pytest.mark.parametrize("name", FAMILIES)
def test_family_is_valid_onnx(name):
    model = FAMILIES[name]()
    onnx.checker.check_model(model, full_check=True)
    assert model.graph.name == name and len(model.graph.node) > 10


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
def test_family_matches_onnxruntime(tmp_path, name):
    ort = pytest.importorskip("onnxruntime")
    model = FAMILIES[name]()
    session = onnxc.Session(onnxc.compile(model, tmp_path / f"{name}.so"))
    (arg,) = session.get_inputs()
    shape = [d if isinstance(d, int) else 96 for d in arg.shape]  # a free image at 96x96
    feed = {arg.name: np.random.default_rng(1).standard_normal(shape).astype(np.float32)}
    (got,) = session.run(None, feed)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    (want,) = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, feed
    )
    assert got.shape == want.shape
    error = np.abs(got - want).max() / np.abs(want).max()
    assert error <= 1e-4, f"{name}: max error {error:.2e} relative to max|ref|"


@pytest.mark.slow
def test_deeplab_over_a_run_time_image_size(tmp_path):
    """deeplabv3_style exported with a symbolic height and width: its dilated ASPP convs take
    the run-time im2col (regions of skipped taps need static sizes) and still match."""
    ort = pytest.importorskip("onnxruntime")
    model = FAMILIES["deeplabv3_style"]()
    for dim, name in zip(model.graph.input[0].type.tensor_type.shape.dim[2:], ("h", "w")):
        dim.dim_param = name
    del model.graph.value_info[:]
    model.graph.output[0].type.tensor_type.ClearField("shape")
    feed = {"image": np.random.default_rng(1).standard_normal((1, 3, 256, 256)).astype(np.float32)}
    (got,) = onnxc.Session(onnxc.compile(model, tmp_path / "deeplab.so")).run(None, feed)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    (want,) = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, feed
    )
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
