"""convert-onnx-to-krnl, numerically: one-node models compiled end to end vs a reference.

Each case builds a model around one ONNX node with onnx.helper, compiles it
with `onnxc.compile`, runs it with `onnxc.Session` and compares with
`onnx.reference.ReferenceEvaluator` (onnxruntime where the reference does not
implement the model's opset semantics, noted per case). Tolerance: rtol 1e-5,
plus an absolute 1e-5 of the output's largest magnitude for sums that cancel.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import (
    Case,
    assert_matches,
    compile_and_run,
    ints,
    make_model,
    rand,
    run_case,
    value_info,
    with_output_types,
)
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc.dialects import make_context
from onnxc.dialects.krnl import EntryPointOp
from onnxc.dialects.onnx import OnnxOp
from onnxc.errors import ShapeError, UnsupportedOpError
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass

X4 = rand(2, 3, 7, 8)
W3 = rand(4, 3, 3, 3)
BIAS4 = rand(4)

CASES: dict[str, Case] = {
    # ------------------------------------------------------------------ Conv
    "conv_plain": Case("Conv", {"x": X4}, initializers={"w": W3}),
    "conv_bias_pads": Case("Conv", {"x": X4}, {"pads": [1, 1, 1, 1]}, {"w": W3, "b": BIAS4}),
    "conv_asymmetric_pads": Case("Conv", {"x": X4}, {"pads": [0, 2, 1, 0]}, {"w": W3}),
    "conv_strides": Case("Conv", {"x": X4}, {"strides": [2, 3], "pads": [1, 1, 1, 1]}, {"w": W3, "b": BIAS4}),
    "conv_dilations": Case("Conv", {"x": X4}, {"dilations": [2, 2], "pads": [2, 1, 2, 1]}, {"w": W3}),
    "conv_groups": Case(
        "Conv", {"x": rand(1, 4, 6, 6)}, {"group": 2, "pads": [1, 1, 1, 1]}, {"w": rand(6, 2, 3, 3), "b": rand(6)}
    ),
    "conv_depthwise": Case("Conv", {"x": rand(2, 5, 9, 9)}, {"group": 5, "strides": [2, 2]}, {"w": rand(5, 1, 3, 3)}),
    "conv_depthwise_multiplier": Case(
        "Conv", {"x": rand(1, 3, 5, 5)}, {"group": 3, "pads": [1, 1, 1, 1]}, {"w": rand(6, 1, 3, 3)}
    ),
    "conv_same_upper": Case("Conv", {"x": X4}, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, {"w": rand(4, 3, 4, 4)}),
    "conv_same_lower": Case("Conv", {"x": X4}, {"auto_pad": "SAME_LOWER", "strides": [2, 2]}, {"w": rand(4, 3, 4, 4)}),
    "conv_valid": Case("Conv", {"x": X4}, {"auto_pad": "VALID", "strides": [2, 1]}, {"w": W3}),
    "conv_1x1": Case("Conv", {"x": X4}, initializers={"w": rand(5, 3, 1, 1)}),
    "conv_1d": Case("Conv", {"x": rand(2, 3, 10)}, {"pads": [1, 2], "strides": [2]}, {"w": rand(4, 3, 3)}),
    "conv_3d": Case("Conv", {"x": rand(1, 2, 4, 5, 5)}, {"pads": [1, 0, 1, 1, 0, 1]}, {"w": rand(3, 2, 3, 2, 3)}),
    "conv_weights_input": Case("Conv", {"x": X4, "w": W3}, {"kernel_shape": [3, 3]}),
    # --------------------------------------------------------------- pooling
    "maxpool_2x2": Case("MaxPool", {"x": X4}, {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "maxpool_pads": Case("MaxPool", {"x": X4}, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "maxpool_ceil": Case("MaxPool", {"x": X4}, {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "maxpool_dilations": Case("MaxPool", {"x": rand(1, 2, 9, 9)}, {"kernel_shape": [2, 2], "dilations": [2, 3]}),
    "maxpool_same_upper": Case(
        "MaxPool", {"x": X4}, {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"}
    ),
    "maxpool_1d": Case("MaxPool", {"x": rand(2, 3, 11)}, {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    # ReferenceEvaluator pads integer input with NaN and fails.
    "maxpool_int8": Case(
        "MaxPool",
        {"x": ints(1, 2, 6, 6, dtype=np.int8)},
        {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]},
        reference="onnxruntime",
    ),
    "avgpool_2x2": Case("AveragePool", {"x": X4}, {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "avgpool_pads_exclude": Case(
        "AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    ),
    "avgpool_pads_include": Case(
        "AveragePool",
        {"x": X4},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    ),
    "avgpool_ceil": Case("AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "avgpool_ceil_include_pad": Case(
        "AveragePool",
        {"x": X4},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1, "count_include_pad": 1},
    ),
    "avgpool_same_lower": Case(
        "AveragePool", {"x": X4}, {"kernel_shape": [2, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"}
    ),
    "avgpool_3d": Case(
        "AveragePool", {"x": rand(1, 2, 5, 4, 6)}, {"kernel_shape": [2, 2, 3], "pads": [0, 1, 1, 1, 0, 1]}
    ),
    "global_avgpool": Case("GlobalAveragePool", {"x": X4}),
    "global_maxpool": Case("GlobalMaxPool", {"x": X4}),
    "global_avgpool_1d": Case("GlobalAveragePool", {"x": rand(2, 3, 10)}),
    # ---------------------------------------------------------- normalization
    "batchnorm": Case(
        "BatchNormalization",
        {"x": X4},
        {"epsilon": 1e-3},
        {"scale": rand(3), "b": rand(3), "mean": rand(3), "var": rand(3, low=0.5, high=2.0)},
    ),
    "batchnorm_2d": Case(
        "BatchNormalization",
        {"x": rand(4, 5)},
        {},
        {"scale": rand(5), "b": rand(5), "mean": rand(5), "var": rand(5, low=0.5, high=2.0)},
    ),
    "batchnorm_opset9": Case(
        "BatchNormalization",
        {"x": rand(2, 3, 4)},
        {},
        {"scale": rand(3), "b": rand(3), "mean": rand(3), "var": rand(3, low=0.5, high=2.0)},
        opset=9,
        reference="onnxruntime",  # ReferenceEvaluator's BatchNormalization-9 is wrong on 3-D input
    ),
    # ------------------------------------------------- elementwise, broadcast
    "add_same_shape": Case("Add", {"a": rand(3, 4), "b": rand(3, 4)}),
    "add_broadcast_row": Case("Add", {"a": rand(2, 3, 4), "b": rand(4)}),
    "add_broadcast_both": Case("Add", {"a": rand(2, 1, 4), "b": rand(3, 1)}),
    "add_scalar": Case("Add", {"a": rand(2, 3)}, initializers={"b": np.array(1.5, np.float32)}),
    "add_int64": Case("Add", {"a": ints(3, 4), "b": ints(4)}),
    "add_float64": Case("Add", {"a": rand(3, 4, dtype=np.float64), "b": rand(1, 4, dtype=np.float64)}),
    "add_float16": Case("Add", {"a": rand(3, 4, dtype=np.float16), "b": rand(4, dtype=np.float16)}),
    "add_int8": Case("Add", {"a": ints(3, 4, dtype=np.int8), "b": ints(4, dtype=np.int8)}),
    "mul_int16": Case("Mul", {"a": ints(3, 4, dtype=np.int16), "b": ints(3, 1, dtype=np.int16)}),
    "sub_broadcast": Case("Sub", {"a": rand(3, 1, 5), "b": rand(4, 1)}),
    "sub_int32": Case("Sub", {"a": ints(2, 3, dtype=np.int32), "b": ints(2, 3, dtype=np.int32)}),
    "mul_broadcast": Case("Mul", {"a": rand(2, 3, 4, 5), "b": rand(3, 1, 1)}),
    "div_broadcast": Case("Div", {"a": rand(2, 3, 4), "b": rand(3, 1, low=0.5, high=2.0)}),
    "div_int64_truncates": Case("Div", {"a": ints(4, 5), "b": ints(5, low=1, high=7) * np.array([1, -1, 1, -1, 1])}),
    "sum_variadic": Case("Sum", {"a": rand(2, 3), "b": rand(3), "c": rand(2, 1)}),
    "sum_single": Case("Sum", {"a": rand(2, 3)}),
    "max_variadic": Case("Max", {"a": rand(2, 3), "b": rand(3), "c": rand(2, 1)}),
    "min_variadic": Case("Min", {"a": rand(4, 1, 3), "b": rand(2, 3)}),
    "max_int32": Case("Max", {"a": ints(2, 3, dtype=np.int32), "b": ints(3, dtype=np.int32)}),
    "relu": Case("Relu", {"x": X4}),
    "relu_int32": Case("Relu", {"x": ints(3, 4, dtype=np.int32)}),
    "sigmoid": Case("Sigmoid", {"x": rand(3, 4) * 10}),
    "tanh": Case("Tanh", {"x": rand(3, 4) * 3}),
    "exp": Case("Exp", {"x": rand(3, 4)}),
    "log": Case("Log", {"x": rand(3, 4, low=0.01, high=10.0)}),
    "sqrt": Case("Sqrt", {"x": rand(3, 4, low=0.0, high=10.0)}),
    "neg": Case("Neg", {"x": rand(3, 4)}),
    "neg_int64": Case("Neg", {"x": ints(3, 4)}),
    "abs": Case("Abs", {"x": rand(3, 4)}),
    "abs_int32": Case("Abs", {"x": ints(3, 4, dtype=np.int32)}),
    "leaky_relu": Case("LeakyRelu", {"x": rand(3, 4)}, {"alpha": 0.2}),
    "leaky_relu_default": Case("LeakyRelu", {"x": rand(3, 4)}),
    "clip_inputs": Case(
        "Clip", {"x": rand(3, 4)}, initializers={"lo": np.array(-0.5, np.float32), "hi": np.array(0.7, np.float32)}
    ),
    "clip_max_only": Case(
        "Clip", {"x": rand(3, 4)}, initializers={"hi": np.array(0.2, np.float32)}, node_inputs=["x", "", "hi"]
    ),
    "clip_no_bounds": Case("Clip", {"x": rand(3, 4)}),
    "clip_int64": Case("Clip", {"x": ints(3, 4)}, initializers={"lo": np.array(-3), "hi": np.array(5)}),
    "clip_runtime_bound": Case("Clip", {"x": rand(3, 4), "lo": np.array(-0.1, np.float32)}),
    "clip_opset6": Case("Clip", {"x": rand(3, 4)}, {"min": -0.3, "max": 0.4}, opset=6),
    "pow": Case("Pow", {"a": rand(3, 4, low=0.1, high=3.0), "b": rand(4, low=-2.0, high=2.0)}),
    "pow_int_exponent": Case("Pow", {"a": rand(3, 4)}, initializers={"b": np.array([2, 3, 0, -1], np.int64)}),
    # one constant small integer: multiplied out (GELU's cube, RMSNorm's square)
    "pow_cube": Case("Pow", {"a": rand(3, 4)}, initializers={"b": np.array(3.0, np.float32)}),
    "pow_minus_two_broadcast": Case("Pow", {"a": rand(3, 4)}, initializers={"b": np.array([[[-2]]], np.int64)}),
    "pow_square_float16": Case("Pow", {"a": rand(3, 4).astype(np.float16)}, initializers={"b": np.array(2.0, np.float16)}),
    "pow_square_int32": Case("Pow", {"a": ints(3, 4, dtype=np.int32)}, initializers={"b": np.array(2, np.int32)}),
    # ------------------------------------------------------- MatMul and Gemm
    "matmul_2d": Case("MatMul", {"a": rand(5, 7), "b": rand(7, 9)}),
    "matmul_wide": Case("MatMul", {"a": rand(3, 20), "b": rand(20, 150)}),
    "matmul_batched": Case("MatMul", {"a": rand(2, 4, 6), "b": rand(2, 6, 3)}),
    "matmul_broadcast_batch": Case("MatMul", {"a": rand(3, 1, 4, 6), "b": rand(2, 6, 5)}),
    "matmul_batched_by_2d": Case("MatMul", {"a": rand(2, 4, 6), "b": rand(6, 3)}),
    "matmul_vector_matrix": Case("MatMul", {"a": rand(6), "b": rand(2, 6, 3)}),
    "matmul_matrix_vector": Case("MatMul", {"a": rand(2, 4, 6), "b": rand(6)}),
    "matmul_vector_vector": Case("MatMul", {"a": rand(6), "b": rand(6)}),
    "matmul_int32": Case("MatMul", {"a": ints(3, 4, dtype=np.int32), "b": ints(4, 5, dtype=np.int32)}),
    "gemm": Case("Gemm", {"a": rand(4, 6), "b": rand(6, 5)}),
    "gemm_bias_vector": Case("Gemm", {"a": rand(4, 6)}, initializers={"b": rand(6, 5), "c": rand(5)}),
    "gemm_trans_a": Case("Gemm", {"a": rand(6, 4), "b": rand(6, 5)}, {"transA": 1}),
    "gemm_trans_b": Case("Gemm", {"a": rand(4, 6), "b": rand(5, 6), "c": rand(4, 5)}, {"transB": 1}),
    "gemm_trans_both_alpha_beta": Case(
        "Gemm",
        {"a": rand(6, 4), "b": rand(5, 6), "c": rand(4, 1)},
        {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0},
    ),
    "gemm_scalar_c": Case(
        "Gemm", {"a": rand(3, 2), "b": rand(2, 70)}, {"beta": -1.0}, {"c": np.array(0.25, np.float32)}
    ),
    "gemm_beta_zero": Case("Gemm", {"a": rand(3, 2), "b": rand(2, 4), "c": rand(3, 4)}, {"beta": 0.0}),
    "gemm_opset6_broadcast": Case("Gemm", {"a": rand(3, 2), "b": rand(2, 4), "c": rand(4)}, {"broadcast": 1}, opset=6),
    # -------------------------------------------------------- data movement
    "reshape": Case("Reshape", {"x": rand(2, 3, 4)}, initializers={"shape": np.array([4, -1, 2])}),
    "reshape_split_dims": Case("Reshape", {"x": rand(6, 4)}, initializers={"shape": np.array([2, 3, 2, 2])}),
    "reshape_mixed": Case("Reshape", {"x": rand(2, 3, 4)}, initializers={"shape": np.array([4, 3, 2])}),
    "reshape_int64": Case("Reshape", {"x": ints(2, 6)}, initializers={"shape": np.array([3, 4])}),
    "flatten": Case("Flatten", {"x": X4}),
    "flatten_axis0": Case("Flatten", {"x": rand(2, 3, 4)}, {"axis": 0}),
    "flatten_axis_negative": Case("Flatten", {"x": X4}, {"axis": -1}),
    "squeeze": Case("Squeeze", {"x": rand(1, 3, 1, 4)}, initializers={"axes": np.array([0, 2])}),
    "squeeze_opset11": Case("Squeeze", {"x": rand(1, 3, 1, 4)}, {"axes": [2]}, opset=11),
    "unsqueeze": Case("Unsqueeze", {"x": rand(3, 4)}, initializers={"axes": np.array([0, 3])}),
    "unsqueeze_opset11": Case("Unsqueeze", {"x": rand(3, 4)}, {"axes": [1]}, opset=11),
    "transpose_default": Case("Transpose", {"x": rand(2, 3, 4)}),
    "transpose_perm": Case("Transpose", {"x": rand(2, 3, 4, 5)}, {"perm": [0, 2, 3, 1]}),
    "transpose_uint8": Case("Transpose", {"x": ints(2, 3, 4, dtype=np.uint8, low=0, high=255)}),
    "transpose_bool": Case("Transpose", {"x": rand(2, 3) > 0}, {"perm": [1, 0]}),
    "concat_axis1": Case("Concat", {"a": rand(2, 3, 4), "b": rand(2, 1, 4), "c": rand(2, 2, 4)}, {"axis": 1}),
    "concat_axis_negative": Case("Concat", {"a": rand(2, 3), "b": rand(2, 5)}, {"axis": -1}),
    "concat_int64_axis0": Case("Concat", {"a": ints(1, 3), "b": ints(2, 3)}, {"axis": 0}),
    "concat_uint16": Case(
        "Concat",
        {"a": ints(2, 2, dtype=np.uint16, low=0, high=9), "b": ints(2, 1, dtype=np.uint16, low=0, high=9)},
        {"axis": 1},
    ),
    "reshape_bool": Case("Reshape", {"x": rand(2, 6) > 0}, initializers={"shape": np.array([3, 4])}),
    "identity": Case("Identity", {"x": rand(3, 4)}),
    "dropout": Case("Dropout", {"x": rand(3, 4)}),
    "dropout_mask": Case("Dropout", {"x": rand(3, 4)}, outputs=2),
    "dropout_opset7_ratio": Case("Dropout", {"x": rand(3, 4)}, {"ratio": 0.3}, opset=7),
    "dropout_training_false": Case(
        "Dropout",
        {"x": rand(3, 4)},
        initializers={"ratio": np.array(0.5, np.float32), "training": np.array(False)},
        opset=13,
    ),
    "constant_of_shape": Case(
        "ConstantOfShape",
        {},
        {"value": numpy_helper.from_array(np.array([1.5], np.float32))},
        {"shape": np.array([2, 3])},
    ),
    "constant_of_shape_default": Case("ConstantOfShape", {}, initializers={"shape": np.array([4])}),
    "constant_of_shape_int64": Case(
        "ConstantOfShape", {}, {"value": numpy_helper.from_array(np.array([7], np.int64))}, {"shape": np.array([3, 2])}
    ),
    # ---------------------------------------------------------------- Softmax
    "softmax_last_axis": Case("Softmax", {"x": rand(3, 4, 5) * 5}),
    "softmax_axis1_opset13": Case("Softmax", {"x": rand(3, 4, 5) * 5}, {"axis": 1}, opset=13),
    "softmax_axis0": Case("Softmax", {"x": rand(3, 4)}, {"axis": 0}),
    # Before opset 13 Softmax flattens the dims from `axis` on: ReferenceEvaluator only knows opset 13.
    "softmax_opset11_default_axis": Case("Softmax", {"x": rand(2, 3, 4) * 5}, opset=11, reference="onnxruntime"),
    "softmax_opset11_axis2": Case("Softmax", {"x": rand(2, 3, 4)}, {"axis": 2}, opset=11, reference="onnxruntime"),
    "softmax_large_values": Case("Softmax", {"x": rand(2, 6) * 1000}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_single_node(name, tmp_path):
    run_case(CASES[name], tmp_path)


@pytest.mark.parametrize("name", list(CASES))
def test_krnl_level_verifies(name):
    """The pass output is valid krnl-level IR: verified, onnx ops gone, an entry point."""
    module = import_model(CASES[name].model())
    context = make_context()
    for pass_name in ("shape-inference", "convert-onnx-to-krnl"):
        get_pass(pass_name)().apply(context, module)
    module.verify()
    assert not any(isinstance(op, OnnxOp) for op in module.walk())
    assert sum(isinstance(op, EntryPointOp) for op in module.ops) == 1


@pytest.mark.xfail(
    strict=True,
    raises=ShapeError,
    reason="shape-inference follows onnx.shape_inference, which keeps a ceil_mode window that would start in "
    "the end padding (size 5); the spec, onnxruntime and the reference drop it (size 4). The lowering "
    "checks the size and refuses rather than compute a wrong row.",
)
def test_pool_ceil_mode_drops_window_starting_in_end_padding(tmp_path):
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 0, 1, 0], "ceil_mode": 1, "count_include_pad": 1}
    run_case(Case("AveragePool", {"x": X4}, attrs), tmp_path)


def test_constant_node_output(tmp_path):
    """A Constant node feeding a graph output directly (copied from the global)."""
    value = rand(2, 3)
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(value)),
        helper.make_node("Constant", [], ["floats"], value_floats=[1.0, 2.5]),
        helper.make_node("Add", ["x", "c"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "constants",
        [value_info("x", np.float32, [2, 3])],
        [
            value_info("y", np.float32, [2, 3]),
            value_info("c", np.float32, [2, 3]),
            value_info("floats", np.float32, [2]),
        ],
    )
    model = make_model(graph)
    feeds = {"x": rand(2, 3)}
    assert_matches(compile_and_run(model, feeds, tmp_path), ReferenceEvaluator(model).run(None, feeds))


def test_outputs_aliasing_inputs_and_each_other(tmp_path):
    """Outputs that are a graph input, the same value twice, or seen through Identity."""
    nodes = [
        helper.make_node("Identity", ["x"], ["x_copy"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Identity", ["r"], ["r_copy"]),
        helper.make_node("Dropout", ["r_copy"], ["r_dropped"]),
    ]
    spec = [2, 3]
    graph = helper.make_graph(
        nodes,
        "aliases",
        [value_info("x", np.float32, spec)],
        [value_info(n, np.float32, spec) for n in ("x", "x_copy", "r", "r_copy", "r_dropped")],
    )
    model = make_model(graph)
    feeds = {"x": rand(2, 3)}
    assert_matches(compile_and_run(model, feeds, tmp_path), ReferenceEvaluator(model).run(None, feeds))


def test_small_cnn(tmp_path):
    """Conv → BatchNorm → Relu → MaxPool → Flatten → Gemm → Softmax, as in a classifier."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "scale", "shift", "mean", "var"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc", "fc_bias"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"]),
    ]
    initializers = {
        "w": rand(4, 1, 3, 3),
        "b": rand(4),
        "scale": rand(4),
        "shift": rand(4),
        "mean": rand(4),
        "var": rand(4, low=0.5, high=2.0),
        "fc": rand(10, 4 * 4 * 4),
        "fc_bias": rand(10),
    }
    graph = helper.make_graph(
        nodes,
        "cnn",
        [value_info("x", np.float32, [2, 1, 8, 8])],
        [value_info("logits", np.float32, [2, 10]), value_info("probabilities", np.float32, [2, 10])],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()],
    )
    model = make_model(graph)
    feeds = {"x": rand(2, 1, 8, 8)}
    assert_matches(compile_and_run(model, feeds, tmp_path), ReferenceEvaluator(model).run(None, feeds))


def test_legacy_broadcast_along_axis(tmp_path):
    """Before opset 7, Mul with broadcast=1, axis=1 lines B up with dim 1 (not numpy's trailing dims).
    Neither reference runs opset 6, so the expectation is numpy's, with B reshaped."""
    for k, (a, b) in enumerate([(rand(2, 3, 3), rand(3)), (rand(2, 3, 4, 5), rand(3, 4))]):
        model = Case("Mul", {"a": a, "b": b}, {"broadcast": 1, "axis": 1}, opset=6).model()
        directory = tmp_path / str(k)  # a library path is loaded once per process
        directory.mkdir()
        actual = compile_and_run(with_output_types(model, [a]), {"a": a, "b": b}, directory)
        assert_matches(actual, [a * b.reshape(*b.shape, *[1] * (a.ndim - 1 - b.ndim))])


UNSUPPORTED: dict[str, Case] = {
    "dropout_training": Case(
        "Dropout", {"x": rand(3, 4), "ratio": np.array(0.5, np.float32), "training": np.array(True)}, opset=13
    ),
}


@pytest.mark.parametrize("name", list(UNSUPPORTED))
def test_unsupported_is_reported(name, tmp_path):
    case = UNSUPPORTED[name]
    with pytest.raises(UnsupportedOpError) as raised:
        onnxc.compile(case.model(), tmp_path / "model.so")
    assert raised.value.op_type == case.op_type and raised.value.node == "node0"


def test_two_symbolic_dims_run_at_any_shape(tmp_path):
    """Two symbolic dims are no batch loop: the library takes them at run time
    (tests/test_run_time_dims.py has whole models)."""
    node = helper.make_node("Relu", ["x"], ["y"], name="node0")
    graph = helper.make_graph(
        [node], "dynamic", [value_info("x", np.float32, ["batch", "seq"])], [value_info("y", np.float32, ["batch", "seq"])]
    )
    session = onnxc.Session(onnxc.compile(make_model(graph), tmp_path / "model.so"))
    for shape in [(1, 1), (3, 5), (2, 17)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        (y,) = session.run(None, {"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_direct_conv_of_16_bit_floats_rounds_once(tmp_path, dtype):
    """A depthwise (direct) Conv on float16/bfloat16 sums in float32 and rounds once, as
    ONNX's reference does: summing in the 16-bit type drifted by several ulps."""
    import ml_dtypes

    from onnxc.backend import prepare

    np_type = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(np_type))
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=4)
    graph = helper.make_graph(
        [node],
        "conv16",
        [helper.make_tensor_value_info(n, onnx_type, s) for n, s in (("x", [2, 4, 11]), ("w", [4, 1, 4]), ("b", [4]))],
        [helper.make_tensor_value_info("y", onnx_type, [2, 4, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    rng = np.random.default_rng(7)
    x, w, b = (rng.random(s).astype(np_type) for s in ((2, 4, 11), (4, 1, 4), (4,)))
    (got,) = prepare(model, cache_dir=tmp_path).run([x, w, b])  # the backend converts bfloat16
    wide = [v.astype(np.float64) for v in (x, w, b)]
    exact = np.stack(
        [[np.convolve(wide[0][n, c], wide[1][c, 0, ::-1], "valid") + wide[2][c] for c in range(4)] for n in range(2)]
    )
    np.testing.assert_array_equal(got.astype(np.float64), exact.astype(np_type).astype(np.float64))


def test_float16_softmax_sums_in_float32(tmp_path):
    """The exponentials are float16 as ONNX's reference stores them, but their sum is
    accumulated in float32 and rounded once (numpy's float16 sum): a float16 running sum
    put Attention's probabilities an ulp off."""
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["x"], ["y"])],
        "softmax16",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT16, [6, 256])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT16, [6, 256])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(11).random((6, 256)).astype(np.float16)
    (got,) = onnxc.Session(onnxc.compile(model, tmp_path / "softmax16.so")).run(None, {"x": x})
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
