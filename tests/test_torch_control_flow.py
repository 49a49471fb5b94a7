"""Run-time control flow as torch exports it (tests/models/export_control_flow.py,
issue #18): each model compiled once as exported (no --shape), then matched
against onnxruntime on inputs taking every path: each branch; 0, 1 and many
iterations."""

from pathlib import Path

import numpy as np
import onnx
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


def _filled(scale: float) -> dict:
    x = np.full((3, 4), scale, np.float32)
    x[0, 0] = -scale
    return {"x": x}


def test_scripted_while_collecting_a_list(tmp_path):
    """x grows until |x| sums to 100: 5, 4 and 1 steps, one stacked row each."""
    _check_runs("cf_collect", [_filled(0), _filled(1), _filled(5)], tmp_path)


def test_scripted_while_that_collects_nothing_gives_no_rows(tmp_path):
    """torch.stack([]) fails, as onnxruntime does (ConcatFromSequence of no
    tensors); onnxc gives the stack of no rows."""
    session = onnxc.Session(onnxc.compile(onnx.load(MODELS / "cf_collect.onnx"), tmp_path / "m.so"))
    (rows,) = session.run(None, _filled(20))
    assert rows.shape == (0, 4) and rows.dtype == np.float32


def _decoding(token: int, seed: int, max_len: int) -> dict:
    h = np.random.default_rng(seed).standard_normal((1, 6)).astype(np.float32) * (1 + seed)
    return {"token": np.array([token]), "h": h, "max_len": np.array(max_len, np.int64)}


def test_greedy_decoder_with_break(tmp_path):
    """Tokens appended until the end token or `max_len`: no step (0, -3), one,
    a break after 2 and 3 steps, and 40 steps (its rows outgrow 16 and 32)."""
    cases = [(1, 0, 0), (1, 0, -3), (1, 0, 1), (0, 1, 40), (0, 3, 40), (1, 0, 40), (3, 3, 40)]
    _check_runs("cf_decoder", [_decoding(*case) for case in cases], tmp_path)
