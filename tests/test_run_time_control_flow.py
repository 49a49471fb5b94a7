"""If, Loop and Scan decided at run time (onnx_to_krnl/control_flow.py): one
library per model, run on inputs that take each branch and 0, 1 and many
iterations, matched against onnxruntime."""

import numpy as np
import onnx
import pytest
from helpers import assert_matches, expected_outputs, make_model
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.errors import InputError, ShapeError, UnsupportedOpError
from onnxc.passes.inline_control_flow import MAX_UNROLLED_OPS

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, initializers=()):
    model = make_model(helper.make_graph(nodes, "run_time_control", inputs, outputs, list(initializers)))
    onnx.checker.check_model(model)
    return model


def _check_runs(model, feeds_list, tmp_path):
    """Compile once (every input left to run time), then match onnxruntime on each feed."""
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    for feeds in feeds_list:
        assert_matches(session.run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))


def _branches():
    """then: x * -x (two nodes, fused), else: |x| + bias; each branch's result used after the If."""
    then_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["nx"]), helper.make_node("Mul", ["nx", "x"], ["t"])],
        "then",
        [],
        [_info("t", F, [2, 3])],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["ax"]), helper.make_node("Add", ["ax", "bias"], ["e"])],
        "else",
        [],
        [_info("e", F, [2, 3])],
    )
    return then_graph, else_graph


X = np.array([[1.5, -2.0, 0.25], [-0.5, 3.0, -1.0]], np.float32)
BIAS = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), "bias")


def test_if_on_a_bool_input_runs_the_branch_taken(tmp_path):
    then_graph, else_graph = _branches()
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
        helper.make_node("Add", ["y", "x"], ["z"]),
    ]
    model = _model(
        nodes, [_info("c", B, []), _info("x", F, [2, 3])], [_info("y", F, [2, 3]), _info("z", F, [2, 3])], [BIAS]
    )
    _check_runs(model, [{"c": np.array(flag), "x": X} for flag in (True, False)], tmp_path)


def test_if_on_an_int64_input_compared_to_a_constant(tmp_path):
    then_graph, else_graph = _branches()
    nodes = [
        helper.make_node("Greater", ["k", "two"], ["c"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    model = _model(nodes, [_info("k", I64, []), _info("x", F, [2, 3])], [_info("y", F, [2, 3])], [BIAS, two])
    _check_runs(model, [{"k": np.array(k, np.int64), "x": X} for k in (1, 2, 3, 16000)], tmp_path)


def test_if_branch_returning_an_outer_value(tmp_path):
    """A branch yielding a graph input (through Identity) copies it into the result."""
    then_graph = helper.make_graph([helper.make_node("Identity", ["x"], ["ix"])], "then", [], [_info("ix", F, [2, 3])])
    else_graph = helper.make_graph([helper.make_node("Relu", ["x"], ["r"])], "else", [], [_info("r", F, [2, 3])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph)]
    model = _model(nodes, [_info("c", B, [1]), _info("x", F, [2, 3])], [_info("y", F, [2, 3])])
    _check_runs(model, [{"c": np.array([flag]), "x": X} for flag in (True, False)], tmp_path)


def _if_of_two_widths(use_after: bool = False):
    """then: x (2 x 3); else: the row sums of x (2 x 1). The result's dim 1 is the
    branch taken's; `use_after`: a Neg of it is the graph output instead."""
    then_graph = helper.make_graph([helper.make_node("Identity", ["x"], ["ix"])], "then", [], [_info("ix", F, [2, 3])])
    else_graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1)], "else", [], [_info("s", F, [2, 1])]
    )
    nodes = [
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph, name="pick"),
        helper.make_node("Neg", ["y" if use_after else "x"], ["z"]),
    ]
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    outputs = [_info("z", F, [2, None])] if use_after else [_info("y", F, [2, None]), _info("z", F, [2, 3])]
    return _model(nodes, [_info("c", B, []), _info("x", F, [2, 3])], outputs, [axes])


def test_if_whose_branches_differ_in_one_dim(tmp_path):
    """The result takes the branch taken's width (a graph output the library allocates)."""
    _check_runs(_if_of_two_widths(), [{"c": np.array(c), "x": X} for c in (True, False)], tmp_path)


def test_if_of_branch_decided_shape_used_by_another_op_is_refused(tmp_path):
    with pytest.raises(UnsupportedOpError, match=r"node 'pick'.*may only be a graph output, not used by"):
        onnxc.compile(_if_of_two_widths(use_after=True), tmp_path / "m.so")


def _cell_loop(with_condition: bool):
    """h <- tanh(h @ W + b) n times; also a counter of iterations (from the iteration
    number) and two values swapped each iteration. With `with_condition`, the loop
    also stops once sum(h) drops below `limit` (a while loop with a trip count)."""
    nodes = [
        helper.make_node("MatMul", ["h", "W"], ["hw"]),
        helper.make_node("Add", ["hw", "b"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_next"]),
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Add", ["count", "fi"], ["count_next"]),
    ]
    if with_condition:
        nodes += [
            helper.make_node("ReduceSum", ["h_next"], ["total"], keepdims=0),
            helper.make_node("Greater", ["total", "limit"], ["going"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["cond"], ["going"]))
    body = helper.make_graph(
        nodes,
        "cell",
        [
            _info("i", I64, []),
            _info("cond", B, []),
            _info("h", F, [1, 4]),
            _info("count", F, [1]),
            _info("p", F, [2]),
            _info("q", F, [2]),
        ],
        [
            _info("going", B, []),
            _info("h_next", F, [1, 4]),
            _info("count_next", F, [1]),
            _info("q", F, [2]),
            _info("p", F, [2]),
        ],
    )
    rng = np.random.default_rng(0)
    initializers = [
        numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "W"),
        numpy_helper.from_array(np.array([0.1, -0.2, 0.3, 0.0], np.float32), "b"),
        numpy_helper.from_array(np.array(-0.5, np.float32), "limit"),
    ]
    cond = "c" if with_condition else ""
    loop = helper.make_node("Loop", ["n", cond, "h0", "count0", "p0", "q0"], ["h", "count", "p", "q"], body=body)
    inputs = [
        _info("n", I64, []),
        _info("h0", F, [1, 4]),
        _info("count0", F, [1]),
        _info("p0", F, [2]),
        _info("q0", F, [2]),
    ]
    if with_condition:
        inputs.insert(1, _info("c", B, []))
    outputs = [_info("h", F, [1, 4]), _info("count", F, [1]), _info("p", F, [2]), _info("q", F, [2])]
    return _model([loop], inputs, outputs, initializers)


def _loop_feeds(n: int, **more) -> dict:
    h0 = np.array([[0.5, -1.0, 0.25, 2.0]], np.float32)
    state = {"h0": h0, "count0": np.array([10], np.float32), "p0": np.array([1, 2], np.float32)}
    return {"n": np.array(n, np.int64), **state, "q0": np.array([3, 4], np.float32), **more}


def test_loop_with_a_run_time_trip_count(tmp_path):
    _check_runs(_cell_loop(False), [_loop_feeds(n) for n in (0, 1, 5, -2)], tmp_path)


def test_loop_with_a_trip_count_and_a_data_dependent_condition(tmp_path):
    feeds = [_loop_feeds(n, c=np.array(flag)) for n in (0, 3, 40) for flag in (True, False)]
    _check_runs(_cell_loop(True), feeds, tmp_path)


def _doubling_loop(bound: int | None, start_input: bool = True):
    """s doubled while its sum stays below 100 (the condition decides), at most
    `bound` times if given, each iteration's -s collected as a scan output then.
    The first condition is the input `c`, or (not `start_input`) a constant true."""
    nodes = [
        helper.make_node("Mul", ["s", "two"], ["s2"]),
        helper.make_node("ReduceSum", ["s2"], ["t"], keepdims=0),
        helper.make_node("Less", ["t", "limit"], ["going"]),
    ]
    body_outputs = [_info("going", B, []), _info("s2", F, [3])]
    outputs = [_info("s", F, [3])]
    constants = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("two", 2), ("limit", 100))]
    if bound is not None:
        nodes.append(helper.make_node("Neg", ["s2"], ["row"]))
        body_outputs.append(_info("row", F, [3]))
        outputs.append(_info("rows", F, [None, 3]))
        constants.append(numpy_helper.from_array(np.array(bound, np.int64), "M"))
    body_inputs = [_info("i", I64, []), _info("cond", B, []), _info("s", F, [3])]
    body = helper.make_graph(nodes, "double", body_inputs, body_outputs)
    trip_count = "" if bound is None else "M"
    loop = helper.make_node("Loop", [trip_count, "c", "s0"], [o.name for o in outputs], body=body)
    inputs = [_info("s0", F, [3])]
    if start_input:
        inputs.insert(0, _info("c", B, []))
    else:
        constants.append(numpy_helper.from_array(np.array(True), "c"))
    return _model([loop], inputs, outputs, constants)


DOUBLING_FEEDS = [
    {"c": np.array(c), "s0": np.array(s, np.float32)} for c in (True, False) for s in ([1, 2, 3], [60, 0, 1])
]


def test_while_loop_without_a_trip_count(tmp_path):
    _check_runs(_doubling_loop(None), DOUBLING_FEEDS, tmp_path)


def test_while_loop_with_a_constant_bound_collects_a_scan_output(tmp_path):
    """At most 5 iterations: 0, 1 or 5 rows stacked, a shape the run decides."""
    _check_runs(_doubling_loop(5), DOUBLING_FEEDS, tmp_path)


def _negating_loop():
    """s negated n times (n a graph input), each step's s collected as a scan output."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["going"]), helper.make_node("Neg", ["s"], ["s2"])],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("s", F, [2])],
        [_info("going", B, []), _info("s2", F, [2]), _info("s2", F, [2])],
    )
    loop = helper.make_node("Loop", ["n", "", "s0"], ["s", "all"], body=body, name="steps")
    inputs = [_info("n", I64, []), _info("s0", F, [2])]
    return _model([loop], inputs, [_info("s", F, [2]), _info("all", F, [None, 2])])


def test_loop_over_a_run_time_trip_count_collects_a_scan_output(tmp_path):
    """The rows grow in a heap buffer (16 first, doubled when full): 17 and 100
    iterations reallocate it; 0 and -3 give no rows."""
    feeds = [{"n": np.array(n, np.int64), "s0": np.array([1, -2], np.float32)} for n in (0, 1, 5, 16, 17, 100, -3)]
    _check_runs(_negating_loop(), feeds, tmp_path)


def test_while_loop_with_a_huge_bound_grows_its_scan_output(tmp_path):
    """A bound beyond MAX_PREALLOCATED_ROWS (here INT64_MAX, a `while` as torch
    exports it) grows the rows as the loop runs rather than allocating them all."""
    _check_runs(_doubling_loop(np.iinfo(np.int64).max), DOUBLING_FEEDS, tmp_path)


def _appending_loop(trip_count_of_input: bool):
    """rows = Concat(rows, x + i) each iteration, rows starting as `start` (two
    rows): the value grows by one row per iteration. The trip count is the
    input `n`, or (not `trip_count_of_input`) the length of `x`'s shape, known
    only once shapes are folded (after the import, which then sees a run-time count)."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["fi"], to=F),
            helper.make_node("Add", ["x", "fi"], ["row"]),
            helper.make_node("Concat", ["rows", "row"], ["more"], axis=0),
        ],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("rows", F, [None, 3])],
        [_info("cond", B, []), _info("more", F, [None, 3])],
    )
    nodes = [helper.make_node("Loop", ["n", "", "start"], ["grown"], body=body, name="append")]
    inputs = [_info("start", F, [2, 3]), _info("x", F, [1, 3])]
    if trip_count_of_input:
        inputs.insert(0, _info("n", I64, []))
    else:
        nodes.insert(0, helper.make_node("Size", ["x"], ["n"]))
    return _model(nodes, inputs, [_info("grown", F, [None, 3])])


APPEND_START = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_loop_growing_a_carried_value_by_concat(tmp_path):
    """The appended rows continue the value's initial two (0, 1, 16, 17 and 40 iterations)."""
    feeds = [{"n": np.array(n, np.int64), "start": APPEND_START, "x": X[:1]} for n in (0, 1, 16, 17, 40)]
    _check_runs(_appending_loop(True), feeds, tmp_path)


def test_loop_growing_by_concat_unrolled_once_its_count_folds(tmp_path):
    model = _appending_loop(False)
    _check_runs(model, [{"start": APPEND_START, "x": X[:1]}], tmp_path)
    assert "scf.while" not in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()


@pytest.mark.parametrize("bound", [None, 5])
def test_while_loop_starting_true_stays_a_loop(tmp_path, bound):
    """Trip count and first condition known: unrolling starts, meets the body's
    run-time condition, and is undone; the Loop runs as a loop."""
    feeds = [{k: v for k, v in f.items() if k != "c"} for f in DOUBLING_FEEDS if f["c"]]
    model = _doubling_loop(bound, start_input=False)
    _check_runs(model, feeds, tmp_path)
    krnl = onnxc.compile(model, tmp_path / "model.krnl.mlir", emit="krnl")
    assert "scf.while" in krnl.read_text()


def test_loop_body_with_a_run_time_if_on_the_iteration_number(tmp_path):
    """Nested: even iterations add x, odd ones multiply by it."""
    add = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["a"])], "add", [], [_info("a", F, [2])])
    mul = helper.make_graph([helper.make_node("Mul", ["acc", "x"], ["m"])], "mul", [], [_info("m", F, [2])])
    body = helper.make_graph(
        [
            helper.make_node("Mod", ["i", "two"], ["parity"]),
            helper.make_node("Equal", ["parity", "zero"], ["even"]),
            helper.make_node("If", ["even"], ["acc_next"], then_branch=add, else_branch=mul),
            helper.make_node("Identity", ["cond"], ["going"]),
        ],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("acc", F, [2])],
        [_info("going", B, []), _info("acc_next", F, [2])],
    )
    constants = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in (("two", 2), ("zero", 0))]
    loop = helper.make_node("Loop", ["n", "", "x"], ["acc"], body=body)
    model = _model([loop], [_info("n", I64, []), _info("x", F, [2])], [_info("acc", F, [2])], constants)
    feeds = [{"n": np.array(n, np.int64), "x": np.array([1.5, -0.5], np.float32)} for n in (0, 1, 4, 7)]
    _check_runs(model, feeds, tmp_path)


def test_if_and_loop_over_values_with_a_symbolic_dim(tmp_path):
    """N rows known at run time: a branch with a MatMul, one with Concat + ReduceSum
    (both [N, 1]), and a Loop carrying an [N, 3] value."""
    w = numpy_helper.from_array(np.ones((3, 1), np.float32), "w")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    then_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["nx"]), helper.make_node("MatMul", ["nx", "w"], ["t"])],
        "then",
        [],
        [_info("t", F, ["N", 1])],
    )
    else_graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["r"]),
            helper.make_node("Concat", ["r", "r"], ["rr"], axis=1),
            helper.make_node("ReduceSum", ["rr", "axes"], ["e"], keepdims=1),
        ],
        "else",
        [],
        [_info("e", F, ["N", 1])],
    )
    body = helper.make_graph(
        [helper.make_node("Tanh", ["s"], ["s2"]), helper.make_node("Identity", ["cond"], ["going"])],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("s", F, ["N", 3])],
        [_info("going", B, []), _info("s2", F, ["N", 3])],
    )
    nodes = [
        helper.make_node("Loop", ["n", "", "x"], ["l"], body=body),
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    inputs = [_info("c", B, []), _info("n", I64, []), _info("x", F, ["N", 3])]
    model = _model(nodes, inputs, [_info("y", F, ["N", 1]), _info("l", F, ["N", 3])], [w, axes])
    rng = np.random.default_rng(1)
    feeds = [
        {"c": np.array(c), "n": np.array(n), "x": rng.standard_normal((rows, 3)).astype(np.float32)}
        for c in (True, False)
        for rows, n in ((1, 0), (5, 3))
    ]
    _check_runs(model, feeds, tmp_path)


def _scan9_model():
    """A Scan-9 over T steps (T known at run time): two scan inputs, one scanned
    along axis 1 backwards; h <- tanh((h + x) * sum(w)); the states stacked
    along axis 1, -w stacked backwards along axis 0."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["h", "x"], ["a"]),
            helper.make_node("ReduceSum", ["w"], ["s"], keepdims=0),
            helper.make_node("Mul", ["a", "s"], ["b"]),
            helper.make_node("Tanh", ["b"], ["h_next"]),
            helper.make_node("Identity", ["h_next"], ["row"]),
            helper.make_node("Neg", ["w"], ["nw"]),
        ],
        "step",
        [_info("h", F, [4]), _info("x", F, [4]), _info("w", F, [2])],
        [_info("h_next", F, [4]), _info("row", F, [4]), _info("nw", F, [2])],
    )
    scan = helper.make_node(
        "Scan",
        ["h0", "xs", "ws"],
        ["h", "rows", "nws"],
        body=body,
        num_scan_inputs=2,
        scan_input_axes=[0, 1],
        scan_input_directions=[0, 1],
        scan_output_axes=[1, 0],
        scan_output_directions=[0, 1],
    )
    inputs = [_info("h0", F, [4]), _info("xs", F, ["T", 4]), _info("ws", F, [2, "T"])]
    return _model([scan], inputs, [_info("h", F, [4]), _info("rows", F, [4, "T"]), _info("nws", F, ["T", 2])])


def test_scan_over_a_run_time_length(tmp_path):
    rng = np.random.default_rng(2)
    feeds = [
        {
            "h0": rng.standard_normal(4).astype(np.float32),
            "xs": rng.standard_normal((steps, 4)).astype(np.float32),
            "ws": rng.standard_normal((2, steps)).astype(np.float32),
        }
        for steps in (0, 1, 7)
    ]
    model = _scan9_model()
    _check_runs(model, feeds[1:], tmp_path)
    # No steps: onnxruntime dies of a division by zero here; the states come out as they went in.
    h, rows, nws = onnxc.Session(tmp_path / "model.so").run(None, feeds[0])
    assert np.array_equal(h, feeds[0]["h0"]) and rows.shape == (4, 0) and nws.shape == (0, 2)
    krnl = onnxc.compile(model, tmp_path / "model.krnl.mlir", emit="krnl")
    assert "scf.while" in krnl.read_text()


def test_scan8_over_run_time_batches_and_lengths(tmp_path):
    """Scan-8: axis 0 a batch axis, each batch scanned backwards along axis 1."""
    body = helper.make_graph(
        [helper.make_node("Add", ["total", "x"], ["t"]), helper.make_node("Mul", ["t", "x"], ["row"])],
        "step",
        [_info("total", F, [2]), _info("x", F, [2])],
        [_info("t", F, [2]), _info("row", F, [2])],
    )
    scan = helper.make_node(
        "Scan", ["", "total0", "xs"], ["total", "rows"], body=body, num_scan_inputs=1, directions=[1]
    )
    inputs = [_info("total0", F, ["B", 2]), _info("xs", F, ["B", "T", 2])]
    outputs = [_info("total", F, ["B", 2]), _info("rows", F, ["B", "T", 2])]
    model = make_model(helper.make_graph([scan], "scan8", inputs, outputs), opset=8)
    rng = np.random.default_rng(3)
    feeds = [
        {
            "total0": rng.standard_normal((b, 2)).astype(np.float32),
            "xs": rng.standard_normal((b, t, 2)).astype(np.float32),
        }
        for b, t in ((1, 0), (1, 1), (3, 5))
    ]
    _check_runs(model, feeds[1:], tmp_path)
    # No steps: onnxruntime gives NaN states; they come out as they went in.
    total, rows = onnxc.Session(tmp_path / "model.so").run(None, feeds[0])
    assert np.array_equal(total, feeds[0]["total0"]) and rows.shape == (1, 0, 2)


def test_scan_too_long_to_unroll_runs_as_a_loop(tmp_path):
    """A constant length whose unrolling would pass MAX_UNROLLED_OPS."""
    steps = MAX_UNROLLED_OPS // 2
    body = helper.make_graph(
        [helper.make_node("Add", ["total", "x"], ["t"]), helper.make_node("Identity", ["t"], ["row"])],
        "step",
        [_info("total", F, [1]), _info("x", F, [1])],
        [_info("t", F, [1]), _info("row", F, [1])],
    )
    scan = helper.make_node("Scan", ["total0", "xs"], ["total", "rows"], body=body, num_scan_inputs=1)
    inputs = [_info("total0", F, [1]), _info("xs", F, [steps, 1])]
    model = _model([scan], inputs, [_info("total", F, [1]), _info("rows", F, [steps, 1])])
    krnl = onnxc.compile(model, tmp_path / "model.krnl.mlir", emit="krnl")
    assert "scf.while" in krnl.read_text()
    feeds = {"total0": np.array([0.5], np.float32), "xs": np.linspace(-1, 1, steps, dtype=np.float32)[:, None]}
    _check_runs(model, [feeds], tmp_path)


def test_scan_state_whose_symbolic_dim_the_body_fixes(tmp_path):
    """s0 has K elements, the body gives 3 back: K must be 3, which the run checks."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["t"]), helper.make_node("Neg", ["t"], ["row"])],
        "step",
        [_info("s", F, ["K"]), _info("x", F, [3])],
        [_info("t", F, [3]), _info("row", F, [3])],
    )
    scan = helper.make_node("Scan", ["s0", "xs"], ["s", "rows"], body=body, num_scan_inputs=1)
    inputs = [_info("s0", F, ["K"]), _info("xs", F, ["T", 3])]
    model = _model([scan], inputs, [_info("s", F, ["K"]), _info("rows", F, ["T", 3])])
    feeds = [{"s0": np.arange(3, dtype=np.float32), "xs": np.ones((t, 3), np.float32)} for t in (1, 4)]
    _check_runs(model, feeds, tmp_path)
    with pytest.raises(InputError, match="dim 0 is 4, expected 3"):
        onnxc.Session(tmp_path / "model.so").run(None, {"s0": np.zeros(4, np.float32), "xs": feeds[0]["xs"]})


def test_run_time_bodies_decompose_ops_without_a_kernel(tmp_path):
    """MeanVarianceNormalization has no kernel: in a run-time Loop's body and an If's
    branch it is replaced by its function body, as in the graph."""
    body = helper.make_graph(
        [
            helper.make_node("MeanVarianceNormalization", ["s"], ["m"], axes=[1]),
            helper.make_node("Add", ["m", "s"], ["s2"]),
            helper.make_node("Identity", ["cond"], ["going"]),
        ],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("s", F, [2, 3])],
        [_info("going", B, []), _info("s2", F, [2, 3])],
    )
    then_graph = helper.make_graph(
        [helper.make_node("MeanVarianceNormalization", ["x"], ["t"], axes=[0, 1])], "then", [], [_info("t", F, [2, 3])]
    )
    else_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [_info("e", F, [2, 3])])
    nodes = [
        helper.make_node("Loop", ["n", "", "x"], ["l"], body=body),
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
    ]
    inputs = [_info("c", B, []), _info("n", I64, []), _info("x", F, [2, 3])]
    model = _model(nodes, inputs, [_info("l", F, [2, 3]), _info("y", F, [2, 3])])
    feeds = [{"c": np.array(n % 2 == 0), "n": np.array(n, np.int64), "x": X} for n in (0, 1, 4)]
    _check_runs(model, feeds, tmp_path)


def test_run_time_scan_nested_in_a_loop_with_an_if_in_its_body(tmp_path):
    """Each of n iterations scans xs (T rows), the running total negated by an If
    whenever its sum passes 10."""
    negate = helper.make_graph([helper.make_node("Neg", ["t"], ["o1"])], "neg", [], [_info("o1", F, [3])])
    keep = helper.make_graph([helper.make_node("Identity", ["t"], ["o2"])], "keep", [], [_info("o2", F, [3])])
    scan_body = helper.make_graph(
        [
            helper.make_node("Add", ["acc", "x"], ["t"]),
            helper.make_node("ReduceSum", ["t"], ["total"], keepdims=0),
            helper.make_node("Greater", ["total", "ten"], ["big"]),
            helper.make_node("If", ["big"], ["acc2"], then_branch=negate, else_branch=keep),
            helper.make_node("Identity", ["acc2"], ["row"]),
        ],
        "step",
        [_info("acc", F, [3]), _info("x", F, [3])],
        [_info("acc2", F, [3]), _info("row", F, [3])],
    )
    loop_body = helper.make_graph(
        [
            helper.make_node("Scan", ["a", "xs"], ["a2", "rows"], body=scan_body, num_scan_inputs=1),
            helper.make_node("Identity", ["cond"], ["go"]),
        ],
        "pass",
        [_info("i", I64, []), _info("cond", B, []), _info("a", F, [3])],
        [_info("go", B, []), _info("a2", F, [3])],
    )
    loop = helper.make_node("Loop", ["n", "", "a0"], ["a"], body=loop_body)
    ten = numpy_helper.from_array(np.array(10, np.float32), "ten")
    inputs = [_info("n", I64, []), _info("a0", F, [3]), _info("xs", F, ["T", 3])]
    model = _model([loop], inputs, [_info("a", F, [3])], [ten])
    rng = np.random.default_rng(4)
    feeds = [
        {
            "n": np.array(n, np.int64),
            "a0": rng.standard_normal(3).astype(np.float32),
            "xs": (rng.standard_normal((t, 3)) * 4).astype(np.float32),
        }
        for n, t in ((0, 2), (1, 1), (3, 5))
    ]
    _check_runs(model, feeds, tmp_path)


def test_scan_inputs_of_two_named_lengths_are_checked_equal(tmp_path):
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["p"]), helper.make_node("Add", ["s", "p"], ["t"])],
        "step",
        [_info("s", F, [2]), _info("x", F, [2]), _info("w", F, [2])],
        [_info("t", F, [2])],
    )
    scan = helper.make_node("Scan", ["s0", "xs", "ws"], ["s"], body=body, num_scan_inputs=2, name="dot")
    inputs = [_info("s0", F, [2]), _info("xs", F, ["T", 2]), _info("ws", F, ["U", 2])]
    model = _model([scan], inputs, [_info("s", F, [2])])
    rng = np.random.default_rng(5)
    feeds = [
        {n: rng.standard_normal(shape).astype(np.float32) for n, shape in (("s0", 2), ("xs", (t, 2)), ("ws", (t, 2)))}
        for t in (1, 6)
    ]
    _check_runs(model, feeds, tmp_path)
    with pytest.raises(InputError, match=r"node 'dot' \(Scan\)"):
        onnxc.Session(tmp_path / "model.so").run(None, {**feeds[1], "ws": feeds[0]["ws"]})


# ----------------------------------------------------------------------------- refused


def test_run_time_if_with_branches_of_different_shapes_is_refused(tmp_path):
    then_graph = helper.make_graph([helper.make_node("Identity", ["x"], ["ix"])], "then", [], [_info("ix", F, [2, 3])])
    else_graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=1)], "else", [], [_info("s", F, [1, 1])]
    )
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph)]
    model = _model(nodes, [_info("c", B, []), _info("x", F, [2, 3])], [_info("y", F, [None, None])])
    with pytest.raises(UnsupportedOpError, match=r"node 'if_y'.*branches give result 0 types .* differ in more than"):
        model.graph.node[0].name = "if_y"
        onnxc.compile(model, tmp_path / "m.so")


def test_branch_decided_shape_used_in_a_loop_body_is_refused(tmp_path):
    """An If in a Loop's body whose branches differ in shape, its result summed
    there: the body's ops would read the larger buffer whole, so it is refused."""
    then_graph = helper.make_graph([helper.make_node("Identity", ["s"], ["ix"])], "then", [], [_info("ix", F, [2, 3])])
    else_graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["s", "axes"], ["r"], keepdims=1)], "else", [], [_info("r", F, [2, 1])]
    )
    body = helper.make_graph(
        [
            helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph, name="pick"),
            helper.make_node("ReduceSum", ["y"], ["t"], keepdims=0),
            helper.make_node("Add", ["s", "t"], ["s2"]),
            helper.make_node("Identity", ["cond"], ["go"]),
        ],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("s", F, [2, 3])],
        [_info("go", B, []), _info("s2", F, [2, 3])],
    )
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    loop = helper.make_node("Loop", ["n", "", "x"], ["z"], body=body)
    inputs = [_info("c", B, []), _info("n", I64, []), _info("x", F, [2, 3])]
    model = _model([loop], inputs, [_info("z", F, [2, 3])], [axes])
    with pytest.raises(
        UnsupportedOpError, match=r"node 'pick'.*result 0 is decided at run time.*only be a graph output"
    ):
        onnxc.compile(model, tmp_path / "m.so")


def test_scan_output_of_a_loop_in_a_loop_body_used_there_is_refused(tmp_path):
    inner = _negating_loop().graph.node[0]  # rows of -s, +s, ... (n of them) collected
    body = helper.make_graph(
        [
            inner,
            helper.make_node("ReduceSum", ["all", "zero"], ["t"], keepdims=0),
            helper.make_node("Add", ["s0", "t"], ["s2"]),
            helper.make_node("Identity", ["cond"], ["go"]),
        ],
        "outer_body",
        [_info("j", I64, []), _info("cond", B, []), _info("s0", F, [2])],
        [_info("go", B, []), _info("s2", F, [2])],
    )
    zero = numpy_helper.from_array(np.array([0], np.int64), "zero")
    loop = helper.make_node("Loop", ["n", "", "x"], ["z"], body=body)
    model = _model([loop], [_info("n", I64, []), _info("x", F, [2])], [_info("z", F, [2])], [zero])
    with pytest.raises(
        UnsupportedOpError, match=r"node 'steps'.*result 1 is decided at run time.*only be a graph output"
    ):
        onnxc.compile(model, tmp_path / "m.so")


def test_run_time_loop_whose_carried_value_grows_is_refused(tmp_path):
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["going"]), helper.make_node("Concat", ["s", "s"], ["s2"], axis=0)],
        "body",
        [_info("i", I64, []), _info("cond", B, []), _info("s", F, [None])],
        [_info("going", B, []), _info("s2", F, [None])],
    )
    loop = helper.make_node("Loop", ["n", "", "s0"], ["s"], body=body, name="grow")
    model = _model([loop], [_info("n", I64, []), _info("s0", F, [2])], [_info("s", F, [None])])
    with pytest.raises(UnsupportedOpError, match=r"node 'grow'.*loop-carried value 0 changes type"):
        onnxc.compile(model, tmp_path / "m.so")


def test_run_time_if_on_a_condition_of_two_elements_is_a_shape_error(tmp_path):
    then_graph, else_graph = _branches()
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph, name="pick")]
    model = _model(nodes, [_info("c", B, [2]), _info("x", F, [2, 3])], [_info("y", F, [2, 3])], [BIAS])
    with pytest.raises(ShapeError, match=r"node 'pick'.*condition must have one element"):
        onnxc.compile(model, tmp_path / "m.so")


def test_run_time_scan_whose_state_grows_is_refused(tmp_path):
    body = helper.make_graph(
        [helper.make_node("Concat", ["s", "x"], ["s2"], axis=0)],
        "body",
        [_info("s", F, [None]), _info("x", F, [1])],
        [_info("s2", F, [None])],
    )
    scan = helper.make_node("Scan", ["s0", "xs"], ["s"], body=body, num_scan_inputs=1, name="grow")
    model = _model([scan], [_info("s0", F, [2]), _info("xs", F, ["T", 1])], [_info("s", F, [None])])
    with pytest.raises(UnsupportedOpError, match=r"node 'grow'.*state 0 changes type"):
        onnxc.compile(model, tmp_path / "m.so")


def test_run_time_branch_with_an_op_of_no_kernel_names_it(tmp_path):
    then_graph = helper.make_graph(
        [helper.make_node("RandomUniformLike", ["x"], ["r"], name="noise")], "then", [], [_info("r", F, [2, 3])]
    )
    else_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [_info("e", F, [2, 3])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph)]
    model = _model(nodes, [_info("c", B, []), _info("x", F, [2, 3])], [_info("y", F, [2, 3])])
    with pytest.raises(
        UnsupportedOpError, match=r"node 'noise' \(RandomUniformLike\): op RandomUniformLike has no lowering"
    ):
        onnxc.compile(model, tmp_path / "m.so")
