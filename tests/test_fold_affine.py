"""fold-affine: per-channel constant Mul/Add/Sub folded into a Conv or a BatchNormalization,
or merged, and every case it must refuse, checked on the graph and against onnxruntime.

The reference runs with onnxruntime's graph optimizations off (float16: onnx.reference,
onnxruntime's CPU Conv has no float16 kernel), so it computes every op as written.
"""

from __future__ import annotations

import collections
import math

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc.compiler import stages
from onnxc.dialects.onnx import OnnxOp
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass

ort = pytest.importorskip("onnxruntime")

X_SHAPE = [2, 3, 6, 6]
CHANNELS = 4


def build(nodes, constants: dict[str, np.ndarray], outputs=("y",), dtype=np.float32) -> onnx.ModelProto:
    """A graph of input x [2,3,6,6], a Conv "conv" to 4 channels (w, and b when given) and `nodes`."""
    rng = np.random.default_rng(0)
    base = {"w": rng.standard_normal((CHANNELS, 3, 3, 3)) * 0.3, "b": rng.standard_normal(CHANNELS)}
    initializers = [numpy_helper.from_array(np.asarray(v).astype(dtype), k) for k, v in {**base, **constants}.items()]
    element = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        nodes, "fold_affine", [helper.make_tensor_value_info("x", element, X_SHAPE)],
        [helper.make_tensor_value_info(name, element, None) for name in outputs], initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def conv(bias: bool = True) -> onnx.NodeProto:
    return helper.make_node("Conv", ["x", "w", "b"] if bias else ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1])


def batch_norm(source: str = "x") -> tuple[onnx.NodeProto, dict[str, np.ndarray]]:
    rng = np.random.default_rng(1)
    params = {"scale": rng.random(3) + 0.5, "shift": rng.standard_normal(3), "mean": rng.standard_normal(3),
              "var": rng.random(3) + 0.5}  # fmt: skip
    node = helper.make_node("BatchNormalization", [source, "scale", "shift", "mean", "var"], ["n"], name="bn")
    return node, params


def step(op_type: str, a: str, b: str, out: str) -> onnx.NodeProto:
    return helper.make_node(op_type, [a, b], [out], name=out)


def per_channel(channels: int, seed: int, shape=None) -> np.ndarray:
    value = np.random.default_rng(seed).standard_normal(channels) + 1.5
    return value.reshape(shape or (channels, 1, 1))


def op_counts(model: onnx.ModelProto, passes: tuple[str, ...] | None = None) -> collections.Counter:
    """Op types after `passes` (default: the -O3 graph passes)."""
    module = import_model(model)
    if passes is None:
        (_, passes), *_ = stages(3)
    for name in passes:
        get_pass(name)().apply(None, module)
    return collections.Counter(
        op.OP_TYPE for op in module.walk() if isinstance(op, OnnxOp) and op.OP_TYPE != "Constant"
    )


def assert_matches_reference(model: onnx.ModelProto, tmp_path, dtype=np.float32, rtol=1e-5) -> None:
    x = np.random.default_rng(2).standard_normal(X_SHAPE).astype(dtype)
    got = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, {"x": x})
    if dtype == np.float32:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        reference = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        want = reference.run(None, {"x": x})
    else:
        want = ReferenceEvaluator(model).run(None, {"x": x})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        finite = np.isfinite(w)
        np.testing.assert_array_equal(np.isfinite(g), finite)
        scale = np.abs(w[finite]).max().astype(np.float64)
        np.testing.assert_allclose(g[finite], w[finite], rtol=0, atol=rtol * scale)


# ------------------------------------------------------------------------------ folded


@pytest.mark.parametrize("bias", [True, False])
def test_conv_mul_add_relu_folds_into_conv(tmp_path, bias):
    """inception_v2's pattern: Conv → Mul [C,1,1] → Add [1,C,1,1] → Relu; the Relu then is the Conv's epilogue."""
    nodes = [conv(bias), step("Mul", "c", "m", "cm"), step("Add", "a", "cm", "ca"),
             helper.make_node("Relu", ["ca"], ["y"])]  # fmt: skip
    model = build(nodes, {"m": per_channel(4, 3), "a": per_channel(4, 4, (1, 4, 1, 1))})
    assert op_counts(model) == {"Conv": 1, "Relu": 1}
    assert_matches_reference(model, tmp_path)


def test_add_then_mul_and_sub_chain_folds_into_conv(tmp_path):
    """Add, Mul by a scalar, Sub of a constant, Sub from a constant (negates the channels) fold one after another."""
    nodes = [conv(), step("Add", "c", "a", "s1"), step("Mul", "s1", "k", "s2"), step("Sub", "s2", "a", "s3"),
             step("Sub", "m", "s3", "y")]  # fmt: skip
    model = build(nodes, {"a": per_channel(4, 5), "k": np.float32(-0.75), "m": per_channel(4, 6, (1, 4, 1, 1))})
    assert op_counts(model) == {"Conv": 1}
    assert_matches_reference(model, tmp_path)


def test_conv_chain_folds_in_float16(tmp_path):
    nodes = [conv(), step("Mul", "c", "m", "cm"), step("Add", "cm", "a", "y")]
    model = build(nodes, {"m": per_channel(4, 3), "a": per_channel(4, 4)}, dtype=np.float16)
    assert op_counts(model) == {"Conv": 1}
    assert_matches_reference(model, tmp_path, dtype=np.float16, rtol=5e-3)


def test_batch_norm_mul_add_merges_into_batch_norm(tmp_path):
    """densenet121's pre-activation: BatchNormalization → Mul → Add → Relu keeps one BatchNormalization."""
    node, params = batch_norm()
    nodes = [node, step("Mul", "n", "m", "nm"), step("Add", "nm", "a", "na"), helper.make_node("Relu", ["na"], ["y"])]
    model = build(nodes, {**params, "m": per_channel(3, 7), "a": per_channel(3, 8)})
    assert op_counts(model) == {"BatchNormalization": 1, "Relu": 1}
    assert_matches_reference(model, tmp_path)


def dense(op_type: str, **attributes) -> tuple[list[onnx.NodeProto], dict[str, np.ndarray]]:
    """x flattened to [2, 108], times a constant B to 5 columns: Gemm (B^T [5, 108], C [5]) or MatMul."""
    rng = np.random.default_rng(13)
    if op_type == "Gemm":
        node = helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["g"], name="fc", transB=1, **attributes)
        constants = {"fc_w": rng.standard_normal((5, 108)) * 0.1, "fc_b": rng.standard_normal(5)}
    else:
        node = helper.make_node("MatMul", ["f", "fc_w"], ["g"], name="fc")
        constants = {"fc_w": rng.standard_normal((108, 5)) * 0.1}
    return [helper.make_node("Flatten", ["x"], ["f"]), node], constants


def test_gemm_batch_norm_folds_into_gemm(tmp_path):
    """ArcFace's embedding: Gemm → BatchNorm1d; C's beta and the statistics end up in B and C."""
    nodes, constants = dense("Gemm", beta=0.5)
    node, params = batch_norm("g")
    params = {name: np.resize(value, 5) for name, value in params.items()}
    model = build([*nodes, node, helper.make_node("Identity", ["n"], ["y"])], {**constants, **params})
    assert op_counts(model) == {"Flatten": 1, "Gemm": 1}
    assert_matches_reference(model, tmp_path)


@pytest.mark.parametrize("shift", [True, False])
def test_matmul_mul_add_folds_into_matmul_or_gemm(tmp_path, shift):
    """A MatMul with constant B absorbs a per-column scale; with a shift too it becomes a Gemm."""
    nodes, constants = dense("MatMul")
    nodes.append(step("Mul", "g", "m", "gm" if shift else "y"))
    if shift:
        nodes.append(step("Add", "a", "gm", "y"))
    model = build(nodes, {**constants, "m": per_channel(5, 14, (5,)), "a": per_channel(5, 15, (1, 5))})
    assert op_counts(model) == {"Flatten": 1, "Gemm" if shift else "MatMul": 1}
    assert_matches_reference(model, tmp_path)


def test_conv_batch_norm_folds_alike_in_the_graph_and_in_the_kernel(tmp_path):
    """fold-affine (-O1) and the Conv kernel's epilogue (-O0) fold with one function,
    in float64 rounded once: the same float32 weights, the same results bit for bit."""
    node, params = batch_norm("c")
    params = {name: np.resize(value, CHANNELS) for name, value in params.items()}
    model = build([conv(), node, helper.make_node("Identity", ["n"], ["y"])], params)
    assert op_counts(model) == {"Conv": 1}
    x = np.random.default_rng(2).standard_normal(X_SHAPE).astype(np.float32)
    results = [
        onnxc.Session(onnxc.compile(model, tmp_path / f"model{level}.so", opt_level=level)).run(None, {"x": x})[0]
        for level in (0, 1)
    ]
    np.testing.assert_array_equal(results[0], results[1])
    assert_matches_reference(model, tmp_path)


def test_chain_on_an_input_becomes_one_mul_and_one_add(tmp_path):
    nodes = [step("Mul", "x", "m", "s1"), step("Add", "s1", "a", "s2"), step("Mul", "k", "s2", "s3"),
             step("Add", "s3", "a", "y")]  # fmt: skip
    model = build(nodes, {"m": per_channel(3, 9), "a": per_channel(3, 10, (1, 3, 1, 1)), "k": np.float32(3.0)})
    assert op_counts(model) == {"Mul": 1, "Add": 1}
    assert_matches_reference(model, tmp_path)


def test_chain_that_is_the_identity_disappears(tmp_path):
    """x·4·0.5·0.5 = x: the output is the input itself."""
    nodes = [step("Mul", "x", "four", "s1"), step("Mul", "s1", "half", "s2"), step("Mul", "half", "s2", "y")]
    model = build(nodes, {"four": np.float32(4.0), "half": np.float32(0.5)})
    assert op_counts(model) == {}
    assert_matches_reference(model, tmp_path)


def test_intermediate_graph_output_ends_the_chain(tmp_path):
    """Conv → Mul (a graph output) → Add: the Mul folds into the Conv, the Add stays after it."""
    nodes = [conv(), step("Mul", "c", "m", "cm"), step("Add", "cm", "a", "y")]
    model = build(nodes, {"m": per_channel(4, 3), "a": per_channel(4, 4)}, outputs=("y", "cm"))
    assert op_counts(model) == {"Conv": 1, "Add": 1}
    assert_matches_reference(model, tmp_path)


# ------------------------------------------------------------------------------ refused


def test_per_element_constant_is_not_folded(tmp_path):
    element = np.random.default_rng(11).standard_normal((4, 6, 6))
    nodes = [conv(), step("Mul", "c", "e", "cm"), step("Add", "cm", "a", "y")]
    model = build(nodes, {"e": element, "a": per_channel(4, 4)})
    assert op_counts(model) == {"Conv": 1, "Mul": 1, "Add": 1}
    assert_matches_reference(model, tmp_path)


def test_constant_over_the_batch_axis_is_not_folded(tmp_path):
    nodes = [conv(), step("Mul", "c", "m", "y")]
    model = build(nodes, {"m": np.array([2.0, -1.0]).reshape(2, 1, 1, 1)})
    assert op_counts(model) == {"Conv": 1, "Mul": 1}
    assert_matches_reference(model, tmp_path)


def test_constant_that_widens_the_result_is_not_folded(tmp_path):
    """A [C,1,1,1] constant on a [N,C,H,W] result broadcasts it to rank 5."""
    nodes = [conv(), step("Add", "c", "a", "y")]
    model = build(nodes, {"a": per_channel(4, 12, (4, 1, 1, 1, 1))})
    assert op_counts(model) == {"Conv": 1, "Add": 1}
    assert_matches_reference(model, tmp_path)


def test_conv_result_with_another_user_is_not_folded(tmp_path):
    nodes = [conv(), step("Mul", "c", "m", "cm"), step("Add", "cm", "a", "y"), helper.make_node("Relu", ["c"], ["r"])]
    model = build(nodes, {"m": per_channel(4, 3), "a": per_channel(4, 4)}, outputs=("y", "r"))
    assert op_counts(model) == {"Conv": 1, "Mul": 1, "Add": 1, "Relu": 1}
    assert_matches_reference(model, tmp_path)


def test_non_finite_constant_is_not_folded(tmp_path):
    """W·inf would turn a channel into NaN where Conv·inf is ±inf."""
    nodes = [conv(), step("Mul", "c", "m", "y")]
    model = build(nodes, {"m": np.array([math.inf, 1.0, 2.0, 3.0]).reshape(4, 1, 1)})
    assert op_counts(model) == {"Conv": 1, "Mul": 1}
    assert_matches_reference(model, tmp_path)


def test_float16_weights_that_would_overflow_are_not_folded():
    nodes = [conv(), step("Mul", "c", "m", "y")]
    model = build(nodes, {"w": np.full((4, 3, 3, 3), 1000.0), "m": per_channel(4, 3) * 1000}, dtype=np.float16)
    assert op_counts(model) == {"Conv": 1, "Mul": 1}


def test_training_batch_norm_is_not_merged():
    """A BatchNormalization whose running statistics are used computes them from the batch
    (at -O1 decompose expands it first; the pass alone must leave it alone)."""
    node, params = batch_norm()
    node = helper.make_node("BatchNormalization", list(node.input), ["n", "rm", "rv"], name="bn", training_mode=1)
    model = build([node, step("Mul", "n", "m", "y")], {**params, "m": per_channel(3, 7)}, outputs=("y", "rm", "rv"))
    assert op_counts(model, ("shape-inference", "fold-affine")) == {"BatchNormalization": 1, "Mul": 1}
