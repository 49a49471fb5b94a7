"""Run-time control flow as torch exports it (tests/models/export_control_flow.py,
issue #18): each model compiled once as exported (no --shape), then matched
against onnxruntime on inputs taking every path: each branch; 0, 1 and many
iterations."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import assert_matches, expected_outputs

import onnxc

MODELS = Path(__file__).parent / "models"
X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


def _check_runs(name: str, feeds_list: list[dict], tmp_path) -> None:
    model = onnx.load(MODELS / f"{name}.onnx")
    session = onnxc.Session(onnxc.compile(model, tmp_path / f"{name}.so"))
    for feeds in feeds_list:
        assert_matches(session.run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))


def test_scripted_for_over_an_input_count(tmp_path):
    _check_runs("cf_repeat", [{"x": X, "n": np.array(n, np.int64)} for n in (0, 1, 7, -2)], tmp_path)


def test_if_on_an_int64_scalar_input(tmp_path):
    _check_runs("cf_rate", [{"x": X, "sr": np.array(sr, np.int64)} for sr in (16000, 8000)], tmp_path)


def test_torch_cond_through_the_dynamo_exporter(tmp_path):
    _check_runs("cf_cond", [{"x": X}, {"x": -np.abs(X)}, {"x": np.abs(X)}], tmp_path)
