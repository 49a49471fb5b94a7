"""Indices read from inputs are checked against their dims (krnl.check_indices):
one out of range fails the run with a RuntimeFailure naming node and op, as
onnxruntime refuses it, instead of reading or writing outside a buffer; one in
range, negative ones included, gives onnxruntime's answer."""

import numpy as np
import onnx
import pytest
from helpers import assert_matches, expected_outputs
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.errors import RuntimeFailure, ShapeError
from onnxc.runtime.library import describe_status

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
DATA = np.arange(24, dtype=np.float32).reshape(4, 6)


def _model(node, data_dims, index_type, index_dims, output_dims, inputs=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "index_checks",
        [
            helper.make_tensor_value_info("data", F, data_dims),
            helper.make_tensor_value_info("indices", index_type, index_dims),
            *inputs,
        ],
        [helper.make_tensor_value_info("y", F, output_dims)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _runs(model, good, bad, tmp_path, threads=1):
    """Each feed of `good` matches onnxruntime; each of `bad` raises naming the node; the
    session still runs afterwards."""
    session = onnxc.Session(onnxc.compile(model, tmp_path / f"{model.graph.node[0].name}.so"), threads=threads)
    node = model.graph.node[0]
    for feeds in bad:
        with pytest.raises(RuntimeFailure, match=rf"node '{node.name}' \({node.op_type}\): an index .* outside"):
            session.run(None, feeds)
    for feeds in good:
        assert_matches(session.run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))


@pytest.mark.parametrize("index_type, dtype", [(I64, np.int64), (I32, np.int32)])
@pytest.mark.parametrize("threads", [1, 2])
def test_gather_of_token_ids_outside_the_table_fails(tmp_path, index_type, dtype, threads):
    """An embedding lookup (batch x sequence of ids into 4 rows): ids 4, -5, 2**40."""
    node = helper.make_node("Gather", ["data", "indices"], ["y"], axis=0, name="embed")
    model = _model(node, [4, 6], index_type, ["B", "S"], ["B", "S", 6])
    ids = [np.array(v, dtype) for v in ([[0, 3, -4]], [[1], [2]], [[-1, 2]])]
    huge = [np.array([[0, 4]], dtype), np.array([[-5]], dtype)]
    if dtype is np.int64:
        huge.append(np.array([[1 << 40, 0]], dtype))
    _runs(
        model,
        [{"data": DATA, "indices": i} for i in ids],
        [{"data": DATA, "indices": i} for i in huge],
        tmp_path,
        threads,
    )


def test_gather_elements_and_scatter_elements_check_the_axis_dim(tmp_path):
    for node in (
        helper.make_node("GatherElements", ["data", "indices"], ["y"], axis=1, name="ge"),
        helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1, name="se"),
    ):
        updates = [helper.make_tensor_value_info("updates", F, [4, 2])] if node.op_type == "ScatterElements" else []
        model = _model(node, [4, 6], I64, [4, 2], [4, 2] if not updates else [4, 6], updates)
        feeds = {"data": DATA, "updates": np.ones((4, 2), np.float32)} if updates else {"data": DATA}
        indices = np.array([[0, 5], [-6, 1], [2, 3], [4, -1]], np.int64)
        outside = indices.copy()
        outside[3, 1] = 6
        _runs(model, [{**feeds, "indices": indices}], [{**feeds, "indices": outside}], tmp_path)


def test_gather_nd_checks_each_index_against_its_own_dim(tmp_path):
    """Index pairs into [4, 6]: (3, 5) is inside, (5, 0) outside the first dim, (0, 6) the second."""
    node = helper.make_node("GatherND", ["data", "indices"], ["y"], name="gnd")
    model = _model(node, [4, 6], I64, ["K", 2], ["K"])
    good = [{"data": DATA, "indices": np.array([[3, 5], [-4, -6], [0, 0]], np.int64)}]
    bad = [{"data": DATA, "indices": np.array(pair, np.int64)} for pair in ([[5, 0]], [[0, 6]], [[0, 0], [-5, 1]])]
    _runs(model, good, bad, tmp_path)


def test_scatter_nd_checks_its_indices(tmp_path):
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], name="snd")
    updates = helper.make_tensor_value_info("updates", F, [2, 6])
    model = _model(node, [4, 6], I64, [2, 1], [4, 6], [updates])
    feeds = {"data": DATA, "updates": np.ones((2, 6), np.float32)}
    good = [{**feeds, "indices": np.array([[3], [-4]], np.int64)}]
    _runs(model, good, [{**feeds, "indices": np.array([[1], [4]], np.int64)}], tmp_path)


def test_constant_index_outside_its_dim_is_a_compile_time_error(tmp_path):
    node = helper.make_node("Gather", ["data", "k"], ["y"], axis=1, name="pick")
    graph = helper.make_graph(
        [node],
        "constant_index",
        [helper.make_tensor_value_info("data", F, [4, 6])],
        [helper.make_tensor_value_info("y", F, [4, 2])],
        [numpy_helper.from_array(np.array([1, 6], np.int64), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ShapeError, match=r"node 'pick' \(Gather\): index 6 at \[1\] is outside its dim of 6"):
        onnxc.compile(model, tmp_path / "m.so")


def test_index_status_names_its_code():
    assert describe_status(7 | 3 << 8).startswith("775 (ONNXC_ERR_INDEX:")
    assert "unknown status" in describe_status(6 | 1 << 8)


def test_reverse_sequence_lengths_past_the_time_dim_fail(tmp_path):
    """Sequence lengths of a [4 time, 6 batch] input lie in [0, 4]: 4 reverses all of a column,
    5 would read past the input's end."""
    node = helper.make_node("ReverseSequence", ["data", "indices"], ["y"], batch_axis=1, time_axis=0, name="rev")
    model = _model(node, [4, 6], I64, [6], [4, 6])
    good = np.array([4, 0, 1, 2, 3, 4], np.int64)
    bad = np.array([4, 0, 1, 5, 3, 4], np.int64)
    _runs(model, [{"data": DATA, "indices": good}], [{"data": DATA, "indices": bad}], tmp_path)
