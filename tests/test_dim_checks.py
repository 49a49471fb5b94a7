"""Shape arithmetic over run-time dims, and what nodes need of those dims.

The dim algebra (dialects/symbolic.py) carries the exporters' shape arithmetic
on booleans (Equal, Mod, Where over dims, as grouped-query attention computes
its head repeat) as polynomials of 0/1 comparisons; what a node needs beyond
the inputs' own dims (a Reshape keeps its element count, a computed dim is not
negative) is a `DimCheck` the runtime and the entry point both check.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnxc
from onnxc.dialects.symbolic import Dim, DimCheck, DimOps
from onnxc.errors import InputError, RuntimeFailure
from onnxc.runtime import dim_expressions


def _model(nodes, inputs, outputs, initializers=()):
    return h.make_model(
        h.make_graph(nodes, "g", inputs, outputs, list(initializers)), opset_imports=[h.make_opsetid("", 17)]
    )


@pytest.mark.parametrize(("a", "b"), [(8, 2), (8, 8), (8, 3), (8, 0), (0, 5)])
def test_comparisons_and_where_in_three_evaluators(a, b):
    """Where(a % b == 0 and a != b, a // b, 1): Python, the runtime's evaluator, and text round trip."""
    x, y = Dim.symbol("a"), Dim.symbol("b")
    condition = (1 - x.equals(y)) * (x % y).equals(0)
    repeat = condition * (x // y) + (1 - condition) * 1
    expected = a // b if b and a != b and a % b == 0 else 1
    values = {"a": a, "b": b}
    assert repeat.evaluate(values.__getitem__, DimOps()) == expected
    assert dim_expressions.evaluate(str(repeat), values) == expected
    assert Dim.parse(str(repeat)) == repeat


def test_comparisons_fold_and_substitute():
    x = Dim.symbol("x")
    assert (x + 1).less_than(x + 3) == Dim.const(1)
    assert x.equals(x) == Dim.const(1)
    assert (x // 0) == Dim.const(0)
    assert (x.equals(Dim.symbol("y")) * x).substitute({"y": x}) == x
    check = DimCheck(x * 3, "==", Dim.symbol("y"), "r", "Reshape")
    assert DimCheck.from_strings(*check.strings()) == check
    assert check.substitute({"y": x * 3}).outcome() is True


def _reshape_to_three_rows(tmp_path) -> onnxc.Session:
    x = h.make_tensor_value_info("x", T.FLOAT, ["n", "s"])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    shape = nh.from_array(np.array([0, 3, -1], np.int64), "shape")
    model = _model([h.make_node("Reshape", ["x", "shape"], ["y"], name="r")], [x], [y], [shape])
    return onnxc.Session(onnxc.compile(model, tmp_path / "reshape.so"))


def test_reshape_with_an_inexact_division_is_checked(tmp_path):
    session = _reshape_to_three_rows(tmp_path)
    for s in (9, 12):
        x = np.arange(2 * s, dtype=np.float32).reshape(2, s)
        (y,) = session.run(None, {"x": x})
        np.testing.assert_array_equal(y, x.reshape(2, 3, -1))
    with pytest.raises(InputError, match=r"node 'r' \(Reshape\): the inputs' dims \(n = 2, s = 10\) do not fit"):
        session.run(None, {"x": np.zeros((2, 10), np.float32)})


def test_the_entry_point_checks_too(tmp_path):
    """Past the runtime's own checks, the native entry point refuses the shapes (ERR_SHAPE)."""
    session = _reshape_to_three_rows(tmp_path)
    session._dim_checks = []
    with pytest.raises(RuntimeFailure, match="ONNXC_ERR_SHAPE"):
        session.run(None, {"x": np.zeros((2, 10), np.float32)})


def test_a_negative_computed_dim_names_the_node(tmp_path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 1, "h", "w"])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    w = nh.from_array(np.ones((1, 1, 3, 3), np.float32), "w")
    model = _model([h.make_node("Conv", ["x", "w"], ["y"], name="c")], [x], [y], [w])
    session = onnxc.Session(onnxc.compile(model, tmp_path / "conv.so"))
    (y,) = session.run(None, {"x": np.ones((1, 1, 5, 4), np.float32)})
    np.testing.assert_array_equal(y, np.full((1, 1, 3, 2), 9, np.float32))
    with pytest.raises(InputError, match=r"node 'c' \(Conv\): .* needs h - 2 >= 0"):
        session.run(None, {"x": np.ones((1, 1, 1, 4), np.float32)})


def test_grouped_query_head_repeat_at_run_time(tmp_path):
    """k's heads repeated to q's: the repeat is Where(Hq % Hkv == 0, Hq / Hkv, 1) over Shape values."""
    q = h.make_tensor_value_info("q", T.FLOAT, ["b", "hq", "s", "d"])
    k = h.make_tensor_value_info("k", T.FLOAT, ["b", "hkv", "s", "d"])
    scores = h.make_tensor_value_info("scores", T.FLOAT, None)
    constants = {
        name: nh.from_array(np.array(v, np.int64), name) for name, v in {"zero": [0], "one": [1], "two": [2]}.items()
    }
    nodes = [
        h.make_node("Shape", ["q"], ["b_dim"], start=0, end=1),
        h.make_node("Shape", ["q"], ["hq"], start=1, end=2),
        h.make_node("Shape", ["k"], ["hkv"], start=1, end=2),
        h.make_node("Shape", ["k"], ["s_d"], start=2),
        h.make_node("Mod", ["hq", "hkv"], ["rest"]),
        h.make_node("Equal", ["rest", "zero"], ["divides"]),
        h.make_node("Div", ["hq", "hkv"], ["ratio"]),
        h.make_node("Where", ["divides", "ratio", "one"], ["repeat"]),
        h.make_node("Concat", ["b_dim", "hkv", "repeat", "s_d"], ["expanded_shape"], axis=0),
        h.make_node("Unsqueeze", ["k", "two"], ["k5"]),
        h.make_node("Expand", ["k5", "expanded_shape"], ["k_rep"]),
        h.make_node("Concat", ["b_dim", "hq", "s_d"], ["q_shape"], axis=0),
        h.make_node("Reshape", ["k_rep", "q_shape"], ["k_heads"]),
        h.make_node("Transpose", ["k_heads"], ["k_t"], perm=[0, 1, 3, 2]),
        h.make_node("MatMul", ["q", "k_t"], ["scores"]),
    ]
    model = _model(nodes, [q, k], [scores], constants.values())
    session = onnxc.Session(onnxc.compile(model, tmp_path / "gqa.so"))
    rng = np.random.default_rng(0)
    for b, hq, hkv, s in [(1, 4, 2, 3), (2, 4, 4, 5), (1, 6, 3, 1)]:
        qv = rng.standard_normal((b, hq, s, 8)).astype(np.float32)
        kv = rng.standard_normal((b, hkv, s, 8)).astype(np.float32)
        k_heads = np.repeat(kv, hq // hkv, axis=1)
        (out,) = session.run(None, {"q": qv, "k": kv})
        np.testing.assert_allclose(out, qv @ k_heads.transpose(0, 1, 3, 2), rtol=1e-5, atol=1e-5)
