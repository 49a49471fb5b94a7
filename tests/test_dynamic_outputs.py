"""Outputs whose shape depends on input values (ABI version 2): NonZero, Compress,
Unique, NonMaxSuppression compiled, run and compared with onnx.reference; the
library allocates them and the runtime frees them (no leak, no stale pointer)."""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc.errors import UnsupportedOpError
from onnxc.runtime import Session
from onnxc.runtime.library import OnnxcTensor


def _model(node: onnx.NodeProto, inputs: list, outputs: list, opset: int = 21, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph([node], node.op_type.lower(), inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def _info(name: str, elem_type: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem_type, shape)


def _compile(model: onnx.ModelProto, tmp_path: Path, name: str = "m") -> Session:
    return Session(onnxc.compile(model, tmp_path / f"{name}.so"))


def _check(session: Session, model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    """Run both; outputs must be equal in dtype, shape and values (NaN equal to NaN)."""
    got = session.run(None, feeds)
    expected = ReferenceEvaluator(model).run(None, feeds)
    assert len(got) == len(expected)
    for actual, wanted in zip(got, expected):
        wanted = np.asarray(wanted)
        assert actual.dtype == wanted.dtype
        assert actual.shape == wanted.shape
        np.testing.assert_array_equal(actual, wanted)
    return got


# ----------------------------------------------------------------------------- NonZero


@pytest.mark.parametrize(
    "elem_type, dtype, shape",
    [
        (TensorProto.FLOAT, np.float32, [3, 4]),
        (TensorProto.BOOL, np.bool_, [5]),
        (TensorProto.INT32, np.int32, [2, 3, 2]),
    ],
)
def test_non_zero(tmp_path, elem_type, dtype, shape):
    model = _model(helper.make_node("NonZero", ["x"], ["y"]), [_info("x", elem_type, shape)], [_info("y", 7, None)])
    session = _compile(model, tmp_path)
    (arg,) = session.get_outputs()
    assert arg.shape == (len(shape), None) and arg.dynamic
    rng = np.random.default_rng(0)
    for x in (rng.integers(-1, 2, shape), np.zeros(shape), np.ones(shape)):
        _check(session, model, {"x": x.astype(dtype)})
    (empty,) = session.run(None, {"x": np.zeros(shape, dtype)})
    assert empty.shape == (len(shape), 0)


def test_non_zero_counts_nan(tmp_path):
    model = _model(helper.make_node("NonZero", ["x"], ["y"]), [_info("x", 1, [4])], [_info("y", 7, None)])
    (y,) = _compile(model, tmp_path).run(None, {"x": np.array([0, np.nan, -0.0, 2], np.float32)})
    np.testing.assert_array_equal(y, [[1, 3]])


def test_non_zero_twice_as_output_and_beside_static_output(tmp_path):
    """A dynamic output returned twice, next to a static (caller-allocated) one."""
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["n"])],
        "g",
        [_info("x", 1, [2, 3])],
        [_info("n", 1, [2, 3]), _info("y", 7, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    x = np.array([[1, 0, 2], [0, 0, 3]], np.float32)
    _check(_compile(model, tmp_path), model, {"x": x})


def test_dynamic_result_used_by_another_op_is_refused(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"], name="nz"), helper.make_node("Neg", ["y"], ["z"])],
        "g",
        [_info("x", 1, [4])],
        [_info("z", 7, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=9)
    with pytest.raises(UnsupportedOpError, match=r"node 'nz' \(NonZero\).*may only be a graph output.*opset 13"):
        onnxc.compile(model, tmp_path / "m.so")


# ---------------------------------------------------------------------------- Compress


@pytest.mark.parametrize("axis, condition_length", [(None, 7), (0, 3), (1, 2), (-1, 1), (2, 2)])
def test_compress(tmp_path, axis, condition_length):
    attrs = {} if axis is None else {"axis": axis}
    model = _model(
        helper.make_node("Compress", ["x", "c"], ["y"], **attrs),
        [_info("x", 1, [3, 4, 2]), _info("c", TensorProto.BOOL, [condition_length])],
        [_info("y", 1, None)],
    )
    session = _compile(model, tmp_path)
    x = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    rng = np.random.default_rng(1)
    for c in (rng.integers(0, 2, condition_length), np.zeros(condition_length), np.ones(condition_length)):
        _check(session, model, {"x": x, "c": c.astype(np.bool_)})


# ------------------------------------------------------------------------------ Unique


def _unique_model(elem_type: int, shape: list, axis: int | None, sorted_: int) -> onnx.ModelProto:
    attrs = {"sorted": sorted_} | ({} if axis is None else {"axis": axis})
    outputs = ["y", "indices", "inverse", "counts"]
    node = helper.make_node("Unique", ["x"], outputs, **attrs)
    return _model(node, [_info("x", elem_type, shape)], [_info(n, elem_type if n == "y" else 7, None) for n in outputs])


def _unique_spec(x: np.ndarray, axis: int | None, sorted_: int) -> list[np.ndarray]:
    """The spec's Unique (onnx.reference takes unsorted values along axis 0 of the unflattened input)."""
    y, indices, inverse, counts = np.unique(x, True, True, True, axis=axis)
    if not sorted_:
        order = np.argsort(indices)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        indices, inverse, counts = indices[order], rank[inverse.reshape(-1)], counts[order]
        y = np.take(x.reshape(-1) if axis is None else x, indices, axis=0 if axis is None else axis)
    return [y, indices, inverse.reshape(-1), counts]


@pytest.mark.parametrize(
    "axis, sorted_, shape",
    [(None, 1, [10]), (None, 0, [10]), (None, 1, [2, 5]), (None, 0, [2, 5]), (0, 1, [6, 2]), (0, 0, [6, 2]),
     (1, 1, [2, 6]), (-1, 0, [2, 6]), (1, 1, [2, 5, 2])],
)  # fmt: skip
def test_unique_matches_the_spec(tmp_path, axis, sorted_, shape):
    model = _unique_model(TensorProto.INT64, shape, axis, sorted_)
    session = _compile(model, tmp_path)
    rng = np.random.default_rng(2)
    for x in (rng.integers(0, 3, shape), np.zeros(shape), np.arange(np.prod(shape)).reshape(shape)[..., ::-1]):
        x = np.ascontiguousarray(x, np.int64)
        got = session.run(None, {"x": x})
        for actual, wanted in zip(got, _unique_spec(x, axis, sorted_)):
            np.testing.assert_array_equal(actual, wanted.astype(actual.dtype))
            assert actual.shape == wanted.shape
        if sorted_ or axis in (None, 0) and len(shape) == 1 or axis == 0:
            _check(session, model, {"x": x})  # where onnx.reference follows the spec


def test_unique_floats_and_bools(tmp_path):
    floats = _unique_model(TensorProto.FLOAT, [8], None, 1)
    x = np.array([2.5, -1, 2.5, 0, -0.0, 7, -1, 3], np.float32)
    _check(_compile(floats, tmp_path, "f"), floats, {"x": x})
    bools = _unique_model(TensorProto.BOOL, [5], None, 1)
    _check(_compile(bools, tmp_path, "b"), bools, {"x": np.array([True, False, True, True, False])})


def test_unique_values_only(tmp_path):
    """Only Y requested (the other outputs absent)."""
    node = helper.make_node("Unique", ["x"], ["y"], sorted=1)
    model = _model(node, [_info("x", 6, [7])], [_info("y", 6, None)])
    _check(_compile(model, tmp_path), model, {"x": np.array([4, 1, 4, 4, 9, 1, 0], np.int32)})


# ------------------------------------------------------------------- NonMaxSuppression


@pytest.mark.parametrize("center_point_box", [0, 1])
@pytest.mark.parametrize("with_score_threshold", [False, True])
def test_non_max_suppression_random_boxes(tmp_path, center_point_box, with_score_threshold):
    batches, classes, boxes = 2, 3, 24
    inputs = ["boxes", "scores", "max_out", "iou", "score"][: 5 if with_score_threshold else 4]
    node = helper.make_node("NonMaxSuppression", inputs, ["selected"], center_point_box=center_point_box)
    scalars = [_info("max_out", 7, [1]), _info("iou", 1, [1]), _info("score", 1, [1])]
    model = _model(
        node,
        [_info("boxes", 1, [batches, boxes, 4]), _info("scores", 1, [batches, classes, boxes]), *scalars][
            : len(inputs)
        ],
        [_info("selected", 7, None)],
        opset=11,
    )
    session = _compile(model, tmp_path)
    rng = np.random.default_rng(3)
    for max_out, iou in ((5, 0.3), (100, 0.6), (0, 0.5)):
        corners = rng.uniform(0, 10, (batches, boxes, 4)).astype(np.float32)
        scores = rng.uniform(0, 1, (batches, classes, boxes)).astype(np.float32)
        scores[0, 0, :4] = 0.5  # ties: lower index first
        feeds = {"boxes": corners, "scores": scores, "max_out": np.array([max_out]), "iou": np.array([iou], np.float32)}
        if with_score_threshold:
            feeds["score"] = np.array([0.4], np.float32)
        _check(session, model, feeds)


# ------------------------------------------------------------------------ memory, ABI


@pytest.fixture(scope="module")
def non_zero_library(tmp_path_factory) -> Path:
    model = _model(helper.make_node("NonZero", ["x"], ["y"]), [_info("x", 1, [64, 64])], [_info("y", 7, None)])
    return onnxc.compile(model, tmp_path_factory.mktemp("nz") / "nz.so")


def _rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_many_runs_keep_rss_flat(non_zero_library):
    """Each run's output (2 x 4096 int64, 64 KiB) is copied and its library block freed: 3000 runs
    would grow the heap by ~190 MiB if it were not."""
    session = Session(non_zero_library)
    x = np.ones((64, 64), np.float32)
    for _ in range(200):
        session.run(None, {"x": x})
    before = _rss_bytes()
    for _ in range(3000):
        (y,) = session.run(None, {"x": x})
    assert y.shape == (2, 4096)
    assert _rss_bytes() - before < 8 * 2**20


def test_free_tensor_is_idempotent_and_takes_null(non_zero_library):
    """run_main_graph directly: the output struct is filled by the library, and
    onnxc_free_tensor resets it (twice, and on NULL, harmlessly)."""
    library = ctypes.CDLL(str(non_zero_library))
    x = np.eye(64, dtype=np.float32)
    shape = (ctypes.c_int64 * 2)(64, 64)
    inputs = (OnnxcTensor * 1)(OnnxcTensor(x.ctypes.data, shape, 2, 1, 0))
    outputs = (OnnxcTensor * 1)()
    library.run_main_graph.restype = ctypes.c_int32
    assert library.run_main_graph(inputs, 1, outputs, 1) == 0
    result = outputs[0]
    assert (result.rank, result.dtype, result.reserved) == (2, 7, 0)
    assert [result.shape[0], result.shape[1]] == [2, 64]
    values = np.ctypeslib.as_array(ctypes.cast(result.data, ctypes.POINTER(ctypes.c_int64)), (2, 64))
    np.testing.assert_array_equal(values, np.nonzero(x))
    library.onnxc_free_tensor(ctypes.byref(result))
    assert not result.data and not result.shape
    library.onnxc_free_tensor(ctypes.byref(result))
    library.onnxc_free_tensor(None)


def test_failed_run_leaves_dynamic_outputs_null(non_zero_library):
    """A status other than OK (here a wrong input shape) allocates nothing."""
    library = ctypes.CDLL(str(non_zero_library))
    x = np.ones((4, 4), np.float32)
    shape = (ctypes.c_int64 * 2)(4, 4)
    inputs = (OnnxcTensor * 1)(OnnxcTensor(x.ctypes.data, shape, 2, 1, 0))
    outputs = (OnnxcTensor * 1)()
    assert library.run_main_graph(inputs, 1, outputs, 1) == 5  # ONNXC_ERR_SHAPE
    assert not outputs[0].data and not outputs[0].shape


def test_c_example_of_abi_doc_frees_dynamic_output(non_zero_library, abi_doc_example):
    result = subprocess.run([str(abi_doc_example), str(non_zero_library)], check=True, capture_output=True, text=True)
    assert result.stdout.splitlines()[-1] == "y:"  # NonZero of zeros: shape [2, 0]


def test_bfloat16_compress_keeps_bits(tmp_path):
    model = _model(
        helper.make_node("Compress", ["x", "c"], ["y"], axis=0),
        [_info("x", TensorProto.BFLOAT16, [4]), _info("c", TensorProto.BOOL, [4])],
        [_info("y", TensorProto.BFLOAT16, None)],
        opset=28,  # bfloat16 Compress
    )
    bits = np.array([0x3F80, 0x4000, 0xC040, 0x7FC0], np.uint16)  # 1, 2, -3, NaN
    (y,) = _compile(model, tmp_path).run(None, {"x": bits, "c": np.array([True, False, True, True])})
    np.testing.assert_array_equal(y, bits[[0, 2, 3]])


def test_initializer_condition_stays_static(tmp_path):
    """Compress with a constant condition keeps its static, caller-allocated output."""
    model = _model(
        helper.make_node("Compress", ["x", "c"], ["y"], axis=0),
        [_info("x", 1, [4])],
        [_info("y", 1, [2])],
        initializers=[numpy_helper.from_array(np.array([True, False, False, True]), "c")],
    )
    session = _compile(model, tmp_path)
    assert not session.get_outputs()[0].dynamic
    _check(session, model, {"x": np.arange(4, dtype=np.float32)})
