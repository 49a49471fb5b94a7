"""Whole models, end to end: CLI or API compile → Session → compare with a reference."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc.examples.light import load_light_model
from onnxc.examples.mnist import build_mnist_cnn, digit_image


def test_mnist_cli_matches_reference(tmp_path):
    model = build_mnist_cnn(seed=3)
    onnx.save(model, tmp_path / "mnist.onnx")
    result = subprocess.run(
        [sys.executable, "-m", "onnxc.cli", str(tmp_path / "mnist.onnx"), "-o", str(tmp_path / "mnist.so")],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    session = onnxc.Session(tmp_path / "mnist.so")
    reference = ReferenceEvaluator(model)
    rng = np.random.default_rng(0)
    for image in (digit_image(7), rng.standard_normal((1, 1, 28, 28)).astype(np.float32)):
        (got,) = session.run(None, {"input": image})
        (want,) = reference.run(None, {"input": image})
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_quick_start_reads_the_digits(tmp_path):
    """The README's quick start, step by step: the trained model, compiled without -o,
    names each sample digit right and matches the reference's held-out accuracy."""

    def run(*argv):
        result = subprocess.run([sys.executable, "-m", *argv], cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert run("onnxc.examples.digits", "digits.onnx") == "wrote digits.onnx\n"
    assert run("onnxc.cli", "digits.onnx") == "wrote digits.so\n"
    out = run("onnxc.examples.digits", "--predict", "digits.so")
    assert re.findall(r"-> (\d)", out) == list("0123456789")
    ours, reference = re.search(r"held-out images: ([\d.]+)% \(\S+: ([\d.]+)%", out).groups()
    assert ours == reference and float(ours) > 97


def _with_pre_softmax_output(model: onnx.ModelProto) -> onnx.ModelProto:
    """Also output the Softmax input: random weights make the Softmax one-hot."""
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax")
    model.graph.output.append(helper.make_empty_tensor_value_info(softmax.input[0]))
    model.graph.output[-1].type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    return model


@pytest.mark.parametrize("name", ["squeezenet", "resnet50"])
def test_light_model_matches_onnxruntime(tmp_path, name):
    ort = pytest.importorskip("onnxruntime")
    model = _with_pre_softmax_output(load_light_model(name))
    library = onnxc.compile(model, tmp_path / f"{name}.so")
    session = onnxc.Session(library)
    (arg,) = session.get_inputs()
    x = np.random.default_rng(1).standard_normal(arg.shape).astype(np.float32)
    got = session.run(None, {arg.name: x})
    options = ort.SessionOptions()
    options.log_severity_level = 3
    want = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, {arg.name: x}
    )
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert g.shape == w.shape
        error = np.abs(g - w).max() / np.abs(w).max()
        assert error <= 1e-4, f"{name}: max error {error:.2e} relative to max|ref|"
