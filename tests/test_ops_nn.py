"""Sampling, contraction and signal ops (GridSample, Einsum, DFT...), numerically
against onnx.reference, on the attribute combinations and shapes the ONNX
node-test suite leaves out."""

from __future__ import annotations

import numpy as np
import pytest
from test_lowering_numeric import Case, rand, run_case

import onnxc
from onnxc.errors import UnsupportedOpError


def grid(*shape: int) -> np.ndarray:
    """Normalized grid positions, partly outside [-1, 1] to exercise padding."""
    return rand(*shape, low=-1.7, high=1.7)


CASES: dict[str, Case] = {
    **{
        f"grid_sample_{mode}_{padding}_align{align}": Case(
            "GridSample",
            {"x": rand(2, 3, 4, 5), "grid": grid(2, 3, 6, 2)},
            {"mode": mode, "padding_mode": padding, "align_corners": align},
            opset=20,
        )
        for mode in ("nearest", "linear", "cubic")
        for padding in ("zeros", "border", "reflection")
        for align in (0, 1)
    },
    "grid_sample_3d_cubic_reflection": Case(
        "GridSample",
        {"x": rand(1, 2, 3, 4, 5), "grid": grid(1, 2, 3, 2, 3)},
        {"mode": "cubic", "padding_mode": "reflection"},
        opset=20,
    ),
    "grid_sample_opset16_bilinear_border": Case(
        "GridSample",
        {"x": rand(1, 2, 4, 4), "grid": grid(1, 3, 3, 2)},
        {"mode": "bilinear", "padding_mode": "border"},
        opset=16,
        reference="onnxruntime",  # the reference implements only the opset-20 mode names
    ),
    "grid_sample_float64": Case(
        "GridSample", {"x": rand(1, 1, 3, 3, dtype=np.float64), "grid": grid(1, 2, 2, 2).astype(np.float64)}, opset=20
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_op(name, tmp_path):
    run_case(CASES[name], tmp_path)


def assert_refused(case: Case, message: str, tmp_path) -> None:
    """Compiling the case fails with an UnsupportedOpError naming the node and `message`."""
    with pytest.raises(UnsupportedOpError, match=message) as raised:
        onnxc.compile(case.model(), tmp_path / "model.so")
    assert raised.value.op_type == case.op_type and raised.value.node == "node0"


def test_grid_sample_unknown_mode_is_refused(tmp_path):
    case = Case("GridSample", {"x": rand(1, 1, 3, 3), "grid": grid(1, 2, 2, 2)}, {"mode": "area"}, opset=20)
    assert_refused(case, "GridSample mode 'area'", tmp_path)
