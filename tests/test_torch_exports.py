"""Models as torch exports them today (tests/models/export_torch_dynamic.py: torchvision and
transformers architectures, torch's default exporter, dynamic batch and sequence): each
compiles with no `--shape`, and one library runs several shapes, against onnxruntime.
Swin (shifted windows), LLaMA (rotary, grouped-query attention) and DeBERTa-v2 (relative
positions) stand for the architectures beyond the classic ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxc

ort = pytest.importorskip("onnxruntime")

TORCH = Path(__file__).parent / "models" / "torch"
IMAGES = [(1, 3, 64, 64), (3, 3, 64, 64), (8, 3, 64, 64)]
TOKENS = [(1, 7), (2, 32), (4, 128)]


def _padding_mask(batch: int, sequence: int) -> np.ndarray:
    """Row r masks its last r * sequence / (2 * batch) tokens: every row a different length."""
    mask = np.ones((batch, sequence), np.int64)
    for row in range(1, batch):
        mask[row, sequence - row * sequence // (2 * batch) :] = 0
    return mask


def _feeds(name: str, rng: np.random.Generator):
    if name in ("resnet", "mobilenet_v2", "efficientnet", "mobilenet_v2_minus_one", "swin"):
        return [{"x": rng.standard_normal(shape).astype(np.float32)} for shape in IMAGES]
    return [
        {"input_ids": rng.integers(0, 100, shape).astype(np.int64), "attention_mask": _padding_mask(*shape)}
        for shape in TOKENS
    ]


def _model(name: str) -> onnx.ModelProto:
    if name != "mobilenet_v2_minus_one":
        return onnx.load(TORCH / f"{name}.onnx")
    model = onnx.load(TORCH / "mobilenet_v2.onnx")  # the batch written as -1, as paddle2onnx does
    del model.graph.value_info[:]
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = -1
    return model


@pytest.mark.parametrize(
    "name",
    [
        *("resnet", "mobilenet_v2", "efficientnet", "mobilenet_v2_minus_one", "swin"),
        *("bert", "bert_torchscript", "gpt2", "t5_encoder", "llama", "deberta_v2"),
    ],
)
def test_torch_export_runs_every_shape(name, tmp_path):
    model = _model(name)
    assert any(d.dim_param or d.dim_value < 0 for d in model.graph.input[0].type.tensor_type.shape.dim)
    session = onnxc.Session(onnxc.compile(model, tmp_path / f"{name}.so"))
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in _feeds(name, np.random.default_rng(0)):
        got, want = session.run(None, feed), reference.run(None, feed)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            assert np.abs(g - w).max() <= 1e-4 * np.abs(w).max(), {k: v.shape for k, v in feed.items()}
