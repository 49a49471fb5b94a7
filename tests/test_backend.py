"""onnxc.backend: the ONNX backend API over the compiler (prepare, run, run_model)."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxc import backend
from onnxc.errors import InputError


def _model(nodes, inputs, outputs, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _reshape_model():
    """Reshape whose target shape is a graph input, as in the ONNX node tests."""
    return _model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b"]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["c", "d"])],
    )


def test_backend_api(tmp_path):
    model = _model(
        [helper.make_node("Add", ["a", "b"], ["c"])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in "ab"],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2, 3])],
    )
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")
    a, b = np.ones((2, 3), np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    rep = backend.prepare(model, cache_dir=tmp_path)
    (c,) = rep.run([a, b])
    np.testing.assert_array_equal(c, a + b)
    (c,) = backend.run_model(model, {"a": a, "b": b})
    np.testing.assert_array_equal(c, a + b)


def test_shape_operands_are_bound_per_value_and_dims_per_shape(tmp_path):
    """Each new shape or shape-operand value compiles its own library: never a stale answer."""
    rep = backend.prepare(_reshape_model(), cache_dir=tmp_path)
    assert rep.bound_names == {"shape"}
    x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    for shape in ([4, 3], [2, 6], [6, -1]):
        (z,) = rep.run([x, np.array(shape, np.int64)])
        np.testing.assert_array_equal(z, np.maximum(x.reshape(shape), 0))
    (z,) = rep.run([x[:2], np.array([8, 1], np.int64)])
    assert z.shape == (8, 1)
    assert len(list(tmp_path.glob("*.so"))) == 4


def test_library_cache_is_reused_across_reps(tmp_path):
    x, shape = np.ones((2, 2), np.float32), np.array([4], np.int64)
    backend.prepare(_reshape_model(), cache_dir=tmp_path).run([x, shape])
    built = {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.so")}
    backend.prepare(_reshape_model(), cache_dir=tmp_path).run([x, shape])
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("*.so")} == built


def test_wrong_input_count_is_an_input_error(tmp_path):
    rep = backend.prepare(_reshape_model(), cache_dir=tmp_path)
    with pytest.raises(InputError, match="takes 2 inputs, got 1"):
        rep.run([np.ones((2, 2), np.float32)])


@pytest.mark.parametrize("op_type", ["Add", "Max", "Concat"])
def test_bfloat16_initializers_keep_their_type(tmp_path, op_type):
    """bfloat16 arrives from protobuf as uint16 bits; the constant must still be typed bf16
    (it was ui16, and shape inference refused the op for mixing types)."""
    import ml_dtypes
    from onnx import numpy_helper

    attributes = {"axis": 0} if op_type == "Concat" else {}
    model = _model(
        [helper.make_node(op_type, ["a", "b"], ["c"], **attributes)],
        [helper.make_tensor_value_info("a", TensorProto.BFLOAT16, [4])],
        [helper.make_tensor_value_info("c", TensorProto.BFLOAT16, ["n"])],
    )
    b = np.array([1, 2, 3, 4], ml_dtypes.bfloat16)
    model.graph.initializer.append(numpy_helper.from_array(b, "b"))
    a = np.array([1.5, 2, -3, 4], ml_dtypes.bfloat16)
    (c,) = backend.prepare(model, cache_dir=tmp_path).run([a])
    expected = {"Add": a + b, "Max": np.maximum(a, b), "Concat": np.concatenate([a, b])}[op_type]
    np.testing.assert_array_equal(c.astype(np.float32), expected.astype(np.float32))


def _window_model():
    """A Hann window as its function body computes it: the size input reaches Range's
    limit through a Cast (not directly), and the data input x reaches a Reshape's shape
    only through Shape, which reads no values."""
    return _model(
        [
            helper.make_node("Cast", ["n"], ["n_fp"], to=TensorProto.FLOAT),
            helper.make_node("Constant", [], ["zero"], value_float=0.0),
            helper.make_node("Constant", [], ["one"], value_float=1.0),
            helper.make_node("Range", ["zero", "n_fp", "one"], ["i"]),
            helper.make_node("Div", ["i", "n_fp"], ["w"]),
            helper.make_node("Shape", ["x"], ["x_shape"]),
            helper.make_node("Reshape", ["x", "x_shape"], ["y"]),
        ],
        [
            helper.make_tensor_value_info("n", TensorProto.INT32, []),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info(v, TensorProto.FLOAT, ["k"]) for v in ("w", "y")],
    )


def test_small_inputs_reaching_a_shape_operand_through_other_ops_are_bound(tmp_path):
    rep = backend.prepare(_window_model(), cache_dir=tmp_path)
    assert rep.bound_names == {"n"}
    x = np.array([1, 2], np.float32)
    for n in (4, 6):
        w, y = rep.run([np.array(n, np.int32), x])
        np.testing.assert_allclose(w, np.arange(n, dtype=np.float32) / n)
        np.testing.assert_array_equal(y, x)
    assert len(list(tmp_path.glob("*.so"))) == 2


def test_large_inputs_reaching_a_shape_operand_indirectly_stay_inputs():
    """Only small tensors are baked into a library: a data tensor is never bound."""
    model = _model(
        [helper.make_node("ReduceMax", ["d"], ["m"], keepdims=0), helper.make_node("Reshape", ["x", "m"], ["y"])],
        [
            helper.make_tensor_value_info("d", TensorProto.INT64, [100, 1]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    assert backend.shape_operand_inputs(model) == set()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_range_of_16_bit_floats(tmp_path, dtype):
    """ONNX's Range inference gives no length for float16/bfloat16 inputs; onnxc computes it,
    and the values in the stash type (float), bfloat16 bits above 256 kept exact."""
    import ml_dtypes

    np_type = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    onnx_type = TensorProto.FLOAT16 if dtype == "float16" else TensorProto.BFLOAT16
    names = ("start", "limit", "delta")
    model = _model(
        [helper.make_node("Range", list(names), ["y"])],
        [helper.make_tensor_value_info(n, onnx_type, []) for n in names],
        [helper.make_tensor_value_info("y", onnx_type, ["k"])],
        opset=27,
    )
    inputs = [np.array(v, np_type) for v in (1, 8, 1.5)]
    (y,) = backend.prepare(model, cache_dir=tmp_path).run(inputs)
    assert y.dtype == np_type
    np.testing.assert_array_equal(y.astype(np.float32), [1, 2.5, 4, 5.5, 7])


def _control_model(branches_same_shape: bool = True):
    """y = x * 2 (then) or x + 1 (else, or its first row when the branches differ
    in shape) on the input `c`, then added to itself `n` times, `n` an input."""
    info = helper.make_tensor_value_info
    then_graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [info("t", TensorProto.FLOAT, [2, 3])]
    )
    else_nodes = [helper.make_node("Add", ["x", "one"], ["e"])]
    if not branches_same_shape:
        else_nodes.append(helper.make_node("Slice", ["e", "zero", "one_i"], ["first"]))
    else_graph = helper.make_graph(
        else_nodes,
        "else",
        [],
        [info(else_nodes[-1].output[0], TensorProto.FLOAT, [2 if branches_same_shape else 1, 3])],
    )
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["going"]), helper.make_node("Add", ["acc", "y"], ["more"])],
        "body",
        [
            info("i", TensorProto.INT64, []),
            info("cond", TensorProto.BOOL, []),
            info("acc", TensorProto.FLOAT, ["r", 3]),
        ],
        [info("going", TensorProto.BOOL, []), info("more", TensorProto.FLOAT, ["r", 3])],
    )
    constants = {"two": 2.0, "one": 1.0}
    nodes = [
        helper.make_node("Constant", [], [n], value=helper.make_tensor(n, TensorProto.FLOAT, [], [v]))
        for n, v in constants.items()
    ]
    nodes += [
        helper.make_node("Constant", [], [n], value=helper.make_tensor(n, TensorProto.INT64, [1], [v]))
        for n, v in (("zero", 0), ("one_i", 1))
    ]
    nodes += [
        helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph),
        helper.make_node("Loop", ["n", "", "y"], ["z"], body=body),
    ]
    inputs = [info("c", TensorProto.BOOL, []), info("n", TensorProto.INT64, []), info("x", TensorProto.FLOAT, [2, 3])]
    return _model(nodes, inputs, [info("z", TensorProto.FLOAT, ["r", 3])])


def _control_expected(c: bool, n: int, x: np.ndarray, branches_same_shape: bool = True) -> np.ndarray:
    y = x * 2 if c else (x + 1 if branches_same_shape else (x + 1)[:1])
    return y * (1 + max(n, 0))


def test_run_time_if_and_loop_compile_once(tmp_path):
    """The If's condition and the Loop's trip count stay inputs: one library for every value."""
    rep = backend.prepare(_control_model(), cache_dir=tmp_path)
    assert rep.control_names == {"c", "n"} and rep.bound_names == set()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for c, n in [(True, 0), (False, 1), (True, 5), (False, -2)]:
        (z,) = rep.run({"c": np.array(c), "n": np.array(n, np.int64), "x": x})
        np.testing.assert_allclose(z, _control_expected(c, n, x))
    assert len(list(tmp_path.glob("*.so"))) == 1 and rep.run_time_control


def test_control_inputs_are_bound_when_run_time_control_flow_cannot_compile(tmp_path):
    """Branches of different shapes, the If's result then used by the Loop, need the condition
    known: it is bound, one library per value."""
    rep = backend.prepare(_control_model(branches_same_shape=False), cache_dir=tmp_path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for c, n in [(True, 2), (False, 2), (False, 3)]:
        (z,) = rep.run({"c": np.array(c), "n": np.array(n, np.int64), "x": x})
        np.testing.assert_allclose(z, _control_expected(c, n, x, branches_same_shape=False))
    assert not rep.run_time_control and len(list(tmp_path.glob("*.so"))) == 3
