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
    feed = {arg.name: np.random.default_rng(1).standard_normal(arg.shape).astype(np.float32)}
    (got,) = session.run(None, feed)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    (want,) = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, feed
    )
    assert got.shape == want.shape
    error = np.abs(got - want).max() / np.abs(want).max()
    assert error <= 1e-4, f"{name}: max error {error:.2e} relative to max|ref|"
