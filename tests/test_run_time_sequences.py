"""Sequences whose length the run decides (frontend/sequence_values.py): the slices
of one tensor, read by SequenceLength/SequenceAt/ConcatFromSequence and returned
as graph outputs (a list, as onnxruntime). One library per model, matched against
onnxruntime on several lengths (issue #18)."""

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import assert_matches, expected_outputs
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.errors import UnsupportedOpError

F, I64 = TensorProto.FLOAT, TensorProto.INT64
SEQUENCE = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "run_time_sequences", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model)
    return model


def _x(rank_dims=("N", 3)):
    return helper.make_tensor_value_info("x", F, list(rank_dims))


def _check(model, feeds_list, tmp_path):
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    for feeds in feeds_list:
        assert_matches(session.run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))


def _rows(*counts):
    rng = np.random.default_rng(0)
    return [{"x": rng.standard_normal((n, 3)).astype(np.float32)} for n in counts]


@pytest.mark.parametrize("axis, keepdims, split", [(0, 0, None), (0, 1, None), (1, 0, None), (0, 1, 2), (-1, 1, 3)])
def test_split_over_a_run_time_dim_is_a_sequence_output(tmp_path, axis, keepdims, split):
    """Pieces of one (kept or not) or of 2 and 3 (the last shorter) along N of [N, 3] or
    M of [2, M], N and M 0, 1, 5 and 7: a list of that many arrays."""
    inputs = ["x"] if split is None else ["x", "k"]
    node = helper.make_node("SplitToSequence", inputs, ["s"], axis=axis, keepdims=keepdims)
    constants = [] if split is None else [numpy_helper.from_array(np.array(split, np.int64), "k")]
    dims = ("N", 3) if axis == 0 else (2, "M")
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.standard_normal((n, 3) if axis == 0 else (2, n)).astype(np.float32)} for n in (0, 1, 5, 7)]
    _check(_model([node], [_x(dims)], [helper.make_value_info("s", SEQUENCE)], constants), feeds, tmp_path)


def test_length_item_and_joins_of_a_run_time_sequence(tmp_path):
    """SequenceLength, SequenceAt at a run-time position (negative too), and the slices
    stacked along each axis, and concatenated along the sliced one."""
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
        helper.make_node("SplitToSequence", ["x"], ["kept"], axis=0, keepdims=1),
        helper.make_node("SequenceLength", ["s"], ["n"]),
        helper.make_node("SequenceAt", ["s", "p"], ["item"]),
        helper.make_node("SequenceAt", ["kept", "p"], ["kept_item"]),
        helper.make_node("ConcatFromSequence", ["s"], ["stacked1"], axis=1, new_axis=1),
        helper.make_node("ConcatFromSequence", ["s"], ["stacked_last"], axis=-1, new_axis=1),
        helper.make_node("ConcatFromSequence", ["kept"], ["kept_stacked"], axis=2, new_axis=1),
        helper.make_node("ConcatFromSequence", ["kept"], ["joined"], axis=0),
        helper.make_node("ConcatFromSequence", ["s"], ["flat"], axis=0),
    ]
    shapes = {
        "n": [], "item": [3], "kept_item": [1, 3], "stacked1": [3, None], "stacked_last": [3, None],
        "kept_stacked": [1, 3, None], "joined": [None, 3], "flat": [None],
    }  # fmt: skip
    outputs = [helper.make_tensor_value_info(n, I64 if n == "n" else F, shape) for n, shape in shapes.items()]
    model = _model(nodes, [_x(), helper.make_tensor_value_info("p", I64, [])], outputs)
    feeds = [{**rows, "p": np.array(p, np.int64)} for rows, p in zip(_rows(1, 4, 6), (0, -1, 2))]
    _check(model, feeds, tmp_path)


def _collecting_while(join: dict | None) -> onnx.ModelProto:
    """tests/models/cf_collect.onnx (a scripted while collecting x each step, torch.stack
    of the list after it) with the stack's attributes replaced by `join`, or (None)
    without it: the list itself is the graph output."""
    model = onnx.load(Path(__file__).parent / "models" / "cf_collect.onnx")
    (join_node,) = [n for n in model.graph.node if n.op_type == "ConcatFromSequence"]
    if join is None:
        model.graph.node.remove(join_node)
        model.graph.output[0].CopyFrom(helper.make_value_info(join_node.input[0], SEQUENCE))
    else:
        del join_node.attribute[:]
        join_node.attribute.extend(helper.make_attribute(k, v) for k, v in join.items())
        model.graph.output[0].type.tensor_type.ClearField("shape")
    return model


def _filled(scale: float) -> dict:
    """Inputs for which the loop runs 5, 4, 1 and 0 times (scale 0, 1, 5, 20)."""
    x = np.full((3, 4), scale, np.float32)
    x[0, 0] = -scale
    return {"x": x}


@pytest.mark.parametrize("join", [None, {"axis": 0, "new_axis": 1}])
def test_scripted_while_list_returned_or_joined(tmp_path, join):
    """The list a while loop collected, returned (a list of 5, 4 or 1 arrays) or stacked
    along its first axis (torch.stack)."""
    _check(_collecting_while(join), [_filled(0), _filled(1), _filled(5)], tmp_path)


def test_scripted_while_list_concatenated_is_refused(tmp_path):
    """torch.cat of the collected list would reshape rows whose count only the run knows
    (a value-dependent shape, which may only be a graph output)."""
    with pytest.raises(UnsupportedOpError, match=r"node '/Loop' \(Loop\).*may only be a graph output"):
        onnxc.compile(_collecting_while({"axis": 0}), tmp_path / "m.so")


def test_run_time_sequence_cut_in_pieces_stacked_is_refused(tmp_path):
    nodes = [
        helper.make_node("SplitToSequence", ["x", "k"], ["s"], axis=0),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1, name="stack"),
    ]
    constants = [numpy_helper.from_array(np.array(2, np.int64), "k")]
    model = _model(nodes, [_x()], [helper.make_tensor_value_info("y", F, [None, None, 3])], constants)
    with pytest.raises(UnsupportedOpError, match=r"node 'stack' \(ConcatFromSequence\): stacking .* in pieces of 2"):
        onnxc.compile(model, tmp_path / "m.so")
