"""Ops of the `ai.onnx.preview` domain (frontend/preview.py): FlexAttention imported
as its ONNX function's nodes, checked on the ONNX node tests of its modifier
sub-graphs and grouped-query heads; any other op of the domain refused by name."""

import pytest
from onnx import TensorProto, helper

import onnxc
from onnxc.errors import UnsupportedOpError
from onnxc.tools import conformance


def test_flex_attention_node_tests_pass():
    names = ["test_flexattention_score_mod", "test_flexattention_gqa", "test_flexattention_prob_mod"]
    results = conformance.run_cases(names, jobs=1)
    assert {name: result.status for name, result in results.items()} == dict.fromkeys(names, "PASS")


def test_other_preview_op_is_refused_by_name(tmp_path):
    node = helper.make_node("FlexMystery", ["x"], ["y"], name="m", domain="ai.onnx.preview")
    graph = helper.make_graph(
        [node],
        "preview",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    opsets = [helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.preview", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    with pytest.raises(UnsupportedOpError, match=r"node 'm' \(FlexMystery\): operator 'FlexMystery' of domain"):
        onnxc.compile(model, tmp_path / "m.so")
