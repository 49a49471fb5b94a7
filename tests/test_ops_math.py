"""Elementwise math, logic, casts and reductions, numerically, where the ONNX
node-test suite has no case: NaN propagation (vs onnxruntime), unsigned integers
beyond the signed range, Cast rounding and wrapping."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Case, ints, make_model, rand, run_case, value_info
from onnx import TensorProto, helper

import onnxc
from onnxc.errors import OnnxcError

NAN_X = np.array([[1.0, np.nan, -2.0], [np.nan, 0.5, 3.0]], np.float32)
NAN_Y = np.array([[np.nan, 2.0, -1.0], [4.0, np.nan, 1.0]], np.float32)
BIG_U32 = np.array([[4_000_000_000, 7, 3_000_000_001], [5, 2**31, 9]], np.uint32)
SMALL_U32 = np.array([[3, 2, 4_000_000_000], [2, 3, 2**31 + 1]], np.uint32)
BIG_U64 = np.array([2**63 + 5, 3, 2**64 - 1], np.uint64)

CASES: dict[str, Case] = {
    # NaN propagates through Max/Min as in onnxruntime, and through max/min reductions
    # as in numpy and the ONNX reference (onnxruntime's reductions keep or drop a NaN
    # depending on where it is in the row).
    "max_nan": Case("Max", {"a": NAN_X, "b": NAN_Y}, reference="onnxruntime"),
    "min_nan": Case("Min", {"a": NAN_X, "b": NAN_Y}, reference="onnxruntime"),
    "reduce_max_nan": Case("ReduceMax", {"x": NAN_X}, {"keepdims": 0}, initializers={"axes": np.array([1])}, opset=18),
    "reduce_min_nan_axis0": Case("ReduceMin", {"x": NAN_X}, {"axes": [0]}, opset=13),
    # Unsigned arithmetic above the signed range: division, remainder, comparison, max.
    "add_uint8_wraps": Case(
        "Add", {"a": ints(2, 3, dtype=np.uint8, low=100, high=256), "b": ints(2, 3, dtype=np.uint8, low=100, high=256)}
    ),
    "div_uint32": Case("Div", {"a": BIG_U32, "b": SMALL_U32}),
    "mod_uint32": Case("Mod", {"a": BIG_U32, "b": SMALL_U32}),
    "greater_uint32": Case("Greater", {"a": BIG_U32, "b": SMALL_U32}),
    "max_uint32": Case("Max", {"a": BIG_U32, "b": SMALL_U32}),
    "argmax_uint32": Case("ArgMax", {"x": BIG_U32}, {"axis": 1}),
    "cast_uint64_to_double": Case("Cast", {"x": BIG_U64}, {"to": TensorProto.DOUBLE}),
    # Cast: float -> int truncates toward zero, -> bool is "nonzero", int -> narrower int wraps.
    "cast_float_to_int32": Case(
        "Cast", {"x": np.array([-2.7, -0.5, 0.5, 2.7, 1e6], np.float32)}, {"to": TensorProto.INT32}
    ),
    "cast_float_to_bool": Case(
        "Cast", {"x": np.array([0.0, -0.0, 0.1, np.nan, -3], np.float32)}, {"to": TensorProto.BOOL}
    ),
    "cast_int32_to_int8": Case("Cast", {"x": np.array([300, -129, 127, -1], np.int32)}, {"to": TensorProto.INT8}),
    "cast_int8_to_uint16": Case("Cast", {"x": np.array([-1, 5, -128], np.int8)}, {"to": TensorProto.UINT16}),
    "pow_int32": Case("Pow", {"a": ints(2, 3, dtype=np.int32), "b": ints(2, 3, dtype=np.int32, low=0, high=5)}),
    "mod_int64_python_sign": Case("Mod", {"a": ints(3, 4), "b": ints(3, 4, low=1, high=7) * np.array([1, -1, 1, -1])}),
    "prelu_broadcast_slope": Case("PRelu", {"x": rand(2, 3, 4), "slope": rand(3, 1)}),
    "cumsum_reverse_exclusive": Case(
        "CumSum", {"x": rand(3, 4)}, {"exclusive": 1, "reverse": 1}, initializers={"axis": np.array(1)}
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_op(name, tmp_path):
    run_case(CASES[name], tmp_path)


def test_arithmetic_on_float8_is_refused_at_compile_time(tmp_path):
    """float8 values can be cast and moved, not computed on: Add (whose schema refuses float8) is named."""
    nodes = [
        helper.make_node("Cast", ["x"], ["x8"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Add", ["x8", "x8"], ["y"], name="node0"),
    ]
    graph = helper.make_graph(
        nodes, "add_float8", [value_info("x", np.float32, [3])], [helper.make_empty_tensor_value_info("y")]
    )
    with pytest.raises(OnnxcError, match="float8") as raised:
        onnxc.compile(make_model(graph, 19), tmp_path / "model.so")
    assert raised.value.op_type == "Add" and raised.value.node == "node0"
