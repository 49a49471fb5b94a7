"""The CNN families users deploy, exported as torch does with a dynamic batch (and
detector-style free height and width): one library, no `--shape`, several
shapes, against onnxruntime."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxc

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from families import FAMILIES  # noqa: E402

ort = pytest.importorskip("onnxruntime")


def _with_free_dims(model: onnx.ModelProto, dims: dict[int, str | int]) -> onnx.ModelProto:
    """The model with the image input's dims at `dims` symbolic (a name) or -1 (paddle2onnx's
    unknown), the intermediate shapes ONNX's inference left behind dropped."""
    free = onnx.ModelProto()
    free.CopyFrom(model)
    del free.graph.value_info[:]
    shape = free.graph.input[0].type.tensor_type.shape
    for axis, dim in dims.items():
        shape.dim[axis].Clear()
        if isinstance(dim, str):
            shape.dim[axis].dim_param = dim
        else:
            shape.dim[axis].dim_value = dim
    return free


@pytest.mark.parametrize(
    "family, dims, shapes",
    [
        ("resnext_style", {0: "batch"}, [(1, 3, 160, 160), (3, 3, 160, 160), (8, 3, 160, 160)]),
        ("mobilenetv2_style", {0: -1}, [(2, 3, 224, 224), (1, 3, 224, 224), (5, 3, 224, 224)]),
        ("efficientnet_style", {0: "batch", 2: "height", 3: "width"}, [(1, 3, 224, 224), (2, 3, 160, 192), (1, 3, 97, 131)]),
    ],
)
def test_family_with_a_dynamic_batch(family, dims, shapes, tmp_path):
    model = _with_free_dims(FAMILIES[family](), dims)
    session = onnxc.Session(onnxc.compile(model, tmp_path / f"{family}.so"))
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for shape in shapes:
        feed = {"image": rng.standard_normal(shape).astype(np.float32)}
        (got,) = session.run(None, feed)
        (want,) = reference.run(None, feed)
        assert got.shape == want.shape == (shape[0], 1000)
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max(), shape
