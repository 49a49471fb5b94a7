"""Ops whose result size depends on input values (NonZero, Compress, Unique,
NonMaxSuppression) over run-time dims: each compiles once with symbolic input
dims and runs at a few shapes, one of them giving an empty result, against
onnx.reference. The library allocates the results (krnl.dynamic_output from a
scratch buffer sized at run time)."""

from __future__ import annotations

import numpy as np
import pytest
from test_run_time_dims_ops import F32, check_shapes, node_model

import onnxc
from onnxc.errors import InputError

BOOL = np.dtype(bool)
rng = np.random.default_rng(17)


def few_values(*shape: int, distinct: int = 3) -> np.ndarray:
    """Small integers as floats: repeated values (Unique) and zeros (NonZero)."""
    return rng.integers(0, distinct, shape).astype(np.float32)


def test_non_zero_over_run_time_dims(tmp_path):
    model = node_model("NonZero", {"x": (F32, ["n", "m"])}, opset=13)

    def feeds(shape):
        n, m, distinct = shape
        return {"x": few_values(n, m, distinct=distinct)}

    # (n, m, distinct values): an all-zero input (distinct=1) and an empty one give [2, 0]
    check_shapes(model, feeds, [(3, 4, 3), (1, 7, 2), (4, 5, 1), (2, 0, 3)], tmp_path)


@pytest.mark.parametrize("axis", [1, None])
def test_compress_by_a_run_time_condition_over_run_time_dims(axis, tmp_path):
    attrs = {} if axis is None else {"axis": axis}
    model = node_model("Compress", {"x": (F32, ["n", "m"]), "condition": (BOOL, ["k"])}, attrs, opset=11)

    def feeds(shape):
        n, m, k, kept = shape
        return {"x": few_values(n, m, distinct=9), "condition": rng.random(k) < kept}

    # (n, m, condition length, share kept): a condition shorter than the axis, and none kept
    check_shapes(model, feeds, [(3, 4, 4, 0.5), (2, 5, 3, 0.7), (2, 3, 6, 0.0)], tmp_path)


@pytest.mark.parametrize(
    "attrs, reference",
    # onnx.reference takes the unsorted slices along axis 0 whatever `axis` is: onnxruntime there
    [({"sorted": 1}, "onnx"), ({"sorted": 0, "axis": 1}, "onnxruntime")],
)
def test_unique_over_run_time_dims(attrs, reference, tmp_path):
    model = node_model("Unique", {"x": (F32, ["n", "m"])}, attrs, outputs=4, opset=11)
    check_shapes(model, lambda s: {"x": few_values(*s)}, [(3, 4), (2, 6), (2, 0)], tmp_path, reference)


def _nms_model(score_dims: list) -> object:
    thresholds = {
        "max_output": np.array([3], np.int64),
        "iou_threshold": np.array([0.3], np.float32),
        "score_threshold": np.array([0.2], np.float32),
    }
    inputs = {"boxes": (F32, ["b", "n", 4]), "scores": (F32, score_dims)}
    return node_model("NonMaxSuppression", inputs, initializers=thresholds, opset=11)


def _boxes_and_scores(batches: int, boxes: int, classes: int, top_score: float = 1.0) -> dict[str, np.ndarray]:
    corner = rng.random((batches, boxes, 2), dtype=np.float32)
    size = rng.random((batches, boxes, 2), dtype=np.float32)
    scores = rng.random((batches, classes, boxes), dtype=np.float32) * top_score
    return {"boxes": np.concatenate([corner, corner + size], axis=2), "scores": scores}


def test_non_max_suppression_over_run_time_dims(tmp_path):
    model = _nms_model(["b", "c", "n"])
    # (batches, boxes, classes, top score): no box, and every score under the threshold
    shapes = [(1, 6, 2, 1.0), (2, 3, 1, 1.0), (2, 0, 3, 1.0), (1, 5, 2, 0.1)]
    check_shapes(model, lambda s: _boxes_and_scores(*s), shapes, tmp_path)


def test_non_max_suppression_checks_boxes_against_scores(tmp_path):
    """Scores declared with dims of their own must agree with the boxes on batch
    and box count at run time (a dim check, not a read past the scores)."""
    session = onnxc.Session(onnxc.compile(_nms_model(["b2", "c", "n2"]), tmp_path / "model.so"))
    feeds = _boxes_and_scores(1, 6, 2)
    feeds["scores"] = np.ascontiguousarray(feeds["scores"][:, :, :4])
    with pytest.raises(InputError, match=r"input 'scores': dim 2 \(n\) is 4, but input 'boxes' has n = 6"):
        session.run(None, feeds)
