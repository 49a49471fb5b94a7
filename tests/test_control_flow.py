"""If / Loop / Scan and sequences / optionals, compiled and run against onnx.reference."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from onnxc import Session, backend
from onnxc.compiler import compile
from onnxc.errors import UnsupportedOpError
from onnxc.frontend.importer import import_model

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "control", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _graph(nodes, name, inputs, outputs):
    return helper.make_graph(nodes, name, inputs, outputs)


def _check(model, feeds, tmp_path):
    """Run through onnxc's backend and the reference evaluator; results must agree."""
    expected = ReferenceEvaluator(model).run(None, feeds)
    got = backend.prepare(model, cache_dir=tmp_path).run(feeds)
    assert len(got) == len(expected)
    for value, reference in zip(got, expected):
        if isinstance(reference, list):
            assert isinstance(value, list) and len(value) == len(reference)
            for item, ref_item in zip(value, reference):
                np.testing.assert_allclose(item, ref_item, rtol=1e-6)
        else:
            assert value.shape == reference.shape
            np.testing.assert_allclose(value, reference, rtol=1e-6)
    return got


def _if_model():
    """If on a condition computed from shapes (folds at compile time, not at import)."""
    then_graph = _graph([helper.make_node("Neg", ["x"], ["t"])], "then", [], [_info("t", F, [3])])
    else_graph = _graph([helper.make_node("Abs", ["x"], ["e"])], "else", [], [_info("e", F, [3])])
    three = numpy_helper.from_array(np.array(3, np.int64), "three")
    nodes = [
        helper.make_node("Size", ["x"], ["n"]),
        helper.make_node("Equal", ["n", "three"], ["is3"]),
        helper.make_node("If", ["is3"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    return _model(nodes, [_info("x", F, [3])], [_info("y", F, [3])], [three])


def test_if_is_imported_with_regions(tmp_path):
    module = import_model(_if_model())
    (if_op,) = [op for op in module.walk() if op.name == "onnx.If"]
    assert [r.block.last_op.name for r in if_op.regions] == ["onnx.yield", "onnx.yield"]
    assert if_op.graph("then_branch").block.first_op.name == "onnx.Neg"


def test_if_with_a_folded_condition(tmp_path):
    _check(_if_model(), {"x": np.array([1.0, -2.0, 3.0], np.float32)}, tmp_path)


def _loop_model():
    """Loop with trip count M (bound by the backend), an If nested in the body on the
    iteration number, a loop-carried value and a scan output."""
    then_graph = _graph([helper.make_node("Add", ["acc", "x"], ["t"])], "then", [], [_info("t", F, [2])])
    else_graph = _graph([helper.make_node("Mul", ["acc", "x"], ["e"])], "else", [], [_info("e", F, [2])])
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    true = numpy_helper.from_array(np.array(True), "true")
    body = _graph(
        [
            helper.make_node("Identity", ["cond"], ["cond_out"]),
            helper.make_node("Less", ["i", "two"], ["early"]),
            helper.make_node("If", ["early"], ["next"], then_branch=then_graph, else_branch=else_graph),
            helper.make_node("Cast", ["i"], ["i_f"], to=F),
            helper.make_node("Mul", ["next", "i_f"], ["scanned"]),
        ],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("acc", F, [2])],
        [_info("cond_out", B, []), _info("next", F, [2]), _info("scanned", F, [2])],
    )
    nodes = [helper.make_node("Loop", ["M", "true", "x"], ["final", "all"], body=body)]
    return _model(
        nodes,
        [_info("M", I64, []), _info("x", F, [2])],
        [_info("final", F, [2]), _info("all", F, [None, 2])],
        [two, true],
    )


@pytest.mark.parametrize("trips", [1, 4])
def test_loop_with_nested_if(tmp_path, trips):
    got = _check(_loop_model(), {"M": np.array(trips, np.int64), "x": np.array([1.5, -0.5], np.float32)}, tmp_path)
    assert got[1].shape == (trips, 2)


def test_loop_with_a_run_time_trip_count_and_a_scan_output(tmp_path):
    """M left to run time: one library runs 0, 1, 4 and 40 iterations (the scan
    output's rows grow in a heap buffer past 16)."""
    model = _loop_model()
    session = Session(compile(model, tmp_path / "m.so"))
    for trips in (0, 1, 4, 40):
        feeds = {"M": np.array(trips, np.int64), "x": np.array([1.5, -0.5], np.float32)}
        got = session.run(None, feeds)
        assert got[1].shape == (trips, 2)
        if trips:  # the reference evaluator cannot stack no rows
            for value, reference in zip(got, ReferenceEvaluator(model).run(None, feeds)):
                np.testing.assert_allclose(value, reference, rtol=1e-6)


@pytest.mark.parametrize("reverse_in, reverse_out, out_axis", [(0, 0, 0), (1, 0, 1), (0, 1, -1)])
def test_scan_directions_and_axes(tmp_path, reverse_in, reverse_out, out_axis):
    body = _graph(
        [helper.make_node("Add", ["s", "row"], ["s_out"]), helper.make_node("Mul", ["s_out", "row"], ["y"])],
        "body",
        [_info("s", F, [3]), _info("row", F, [3])],
        [_info("s_out", F, [3]), _info("y", F, [3])],
    )
    nodes = [
        helper.make_node(
            "Scan",
            ["init", "xs"],
            ["final", "ys"],
            body=body,
            num_scan_inputs=1,
            scan_input_axes=[1],
            scan_input_directions=[reverse_in],
            scan_output_axes=[out_axis],
            scan_output_directions=[reverse_out],
        )
    ]
    ys_shape = [4, 3] if out_axis == 0 else [3, 4]
    model = _model(
        nodes, [_info("init", F, [3]), _info("xs", F, [3, 4])], [_info("final", F, [3]), _info("ys", F, ys_shape)]
    )
    rng = np.random.default_rng(0)
    init, xs = rng.standard_normal(3).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    # onnx.reference runs only axis 0, forward: the expected values come from numpy.
    state, ys = init, []
    for t in reversed(range(4)) if reverse_in else range(4):
        state = state + xs[:, t]
        ys.append(state * xs[:, t])
    expected_ys = np.stack(ys[::-1] if reverse_out else ys, axis=out_axis)
    final, got_ys = backend.prepare(model, cache_dir=tmp_path).run({"init": init, "xs": xs})
    np.testing.assert_allclose(final, state, rtol=1e-6)
    np.testing.assert_allclose(got_ys, expected_ys, rtol=1e-6)


def test_sequence_ops_resolve_at_compile_time(tmp_path):
    """SplitToSequence, SequenceInsert/Erase/At/Length, ConcatFromSequence, SequenceMap."""
    body = _graph(
        [helper.make_node("Mul", ["item", "item"], ["sq"])], "sq", [_info("item", F, [1, 3])], [_info("sq", F, [1, 3])]
    )
    ints = {name: numpy_helper.from_array(np.array(v, np.int64), name) for name, v in [("one", 1), ("neg", -1)]}
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0),  # 4 parts of [1, 3]
        helper.make_node("SequenceInsert", ["parts", "y", "one"], ["inserted"]),
        helper.make_node("SequenceErase", ["inserted", "neg"], ["erased"]),
        helper.make_node("SequenceMap", ["erased"], ["squared"], body=body),
        helper.make_node("SequenceAt", ["squared", "one"], ["second"]),
        helper.make_node("SequenceLength", ["squared"], ["count"]),
        helper.make_node("ConcatFromSequence", ["squared"], ["stacked"], axis=0, new_axis=1),
    ]
    model = _model(
        nodes,
        [_info("x", F, [4, 3]), _info("y", F, [1, 3])],
        [_info("second", F, [1, 3]), _info("count", I64, []), _info("stacked", F, [4, 1, 3])],
        ints.values(),
    )
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((4, 3)).astype(np.float32), "y": rng.standard_normal((1, 3)).astype(np.float32)}
    _check(model, feeds, tmp_path)


def test_sequence_inputs_and_outputs_through_the_backend(tmp_path):
    """A sequence input arrives as tensors name[0].., a sequence output is reassembled."""
    seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [None]))
    nodes = [
        helper.make_node("SequenceInsert", ["seq", "x"], ["longer"]),
        helper.make_node("ConcatFromSequence", ["longer"], ["joined"], axis=0),
    ]
    graph = helper.make_graph(
        nodes,
        "seq",
        [helper.make_value_info("seq", seq_f), _info("x", F, [2])],
        [helper.make_value_info("longer", seq_f), _info("joined", F, [5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"seq": [np.array([1.0, 2.0], np.float32), np.array([3.0], np.float32)], "x": np.array([4, 5], np.float32)}
    got = _check(model, feeds, tmp_path)
    assert [item.shape for item in got[0]] == [(2,), (1,), (2,)]


def test_optional_inputs_present_and_absent(tmp_path):
    opt_f = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"])]
    graph = helper.make_graph(nodes, "opt", [helper.make_value_info("o", opt_f)], [_info("has", B, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    rep = backend.prepare(model, cache_dir=tmp_path)
    assert rep.run({"o": np.zeros(2, np.float32)})[0] == np.array(True)
    assert rep.run({"o": None})[0] == np.array(False)


def test_sequence_input_of_the_compiler_is_refused(tmp_path):
    seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"])],
        "g",
        [helper.make_value_info("s", seq_f)],
        [_info("n", I64, [])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedOpError, match="sequence inputs are expanded into tensors by onnxc.backend"):
        import_model(model)


def test_if_over_sequences_decided_by_a_computed_condition(tmp_path):
    """An If whose branches yield sequences must be decided at import; its condition
    (Greater(SequenceLength(seq), 1)) is evaluated there from known values."""
    seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
    then_graph = helper.make_graph(
        [helper.make_node("SequenceInsert", ["seq", "x"], ["longer"])],
        "then",
        [],
        [helper.make_value_info("longer", seq_f)],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Identity", ["seq"], ["same"])], "else", [], [helper.make_value_info("same", seq_f)]
    )
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    nodes = [
        helper.make_node("SequenceConstruct", ["x", "x"], ["seq"]),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
        helper.make_node("Greater", ["n", "one"], ["many"]),
        helper.make_node("If", ["many"], ["chosen"], then_branch=then_graph, else_branch=else_graph),
        helper.make_node("ConcatFromSequence", ["chosen"], ["y"], axis=0),
    ]
    got = _check(
        _model(nodes, [_info("x", F, [2])], [_info("y", F, [6])], [one]), {"x": np.array([1, 2], np.float32)}, tmp_path
    )
    assert got[0].shape == (6,)
