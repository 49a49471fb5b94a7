"""A MatMul by constant weights computes the bias Add and the activation after it in its
GEMM kernel's store (gemm_epilogue.py, krnl.matmul's bias_columns and activation): a
transformer MLP's MatMul + Add + GELU is one kernel, over static and run-time rows."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

import onnxc
from onnxc.compiler import module_text
from onnxc.dialects import make_context
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass

from helpers import assert_matches, expected_outputs, make_model, value_info

RNG = np.random.default_rng(11)
K, N = 24, 40  # N = 2.5 vectors of 16: the last column tile's bias is a masked load
FLOAT_ARITHMETIC = re.compile(r"arith\.(add|sub|mul|div|maximum|minimum)f|math\.erf")


def _constant(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, np.float32), name)


def _activation_nodes(kind: str, x: str) -> tuple[list[onnx.NodeProto], str]:
    """GELU as exporters write it, or a Relu."""
    if kind == "gelu_op":
        return [helper.make_node("Gelu", [x], ["y"])], "y"
    if kind == "relu":
        return [helper.make_node("Relu", [x], ["y"])], "y"
    scale = helper.make_node("Div", [x, "sqrt2"], ["scaled"]) if kind != "gelu_mul_first" else \
        helper.make_node("Mul", [x, "inv_sqrt2"], ["scaled"])  # fmt: skip
    nodes = [scale, helper.make_node("Erf", ["scaled"], ["erf"]), helper.make_node("Add", ["erf", "one"], ["one_plus"])]
    if kind == "gelu_torch":  # x * (1 + erf(x / sqrt 2)) * 0.5
        nodes += [
            helper.make_node("Mul", [x, "one_plus"], ["product"]),
            helper.make_node("Mul", ["product", "half"], ["y"]),
        ]
    else:  # (0.5 * x) * (1 + erf(x * (1 / sqrt 2)))
        nodes += [
            helper.make_node("Mul", ["half", x], ["halved"]),
            helper.make_node("Mul", ["halved", "one_plus"], ["y"]),
        ]
    return nodes, "y"


def mlp_model(x_dims: list, kind: str, bias_shape: tuple[int, ...] | None = (N,)) -> onnx.ModelProto:
    """x @ W (+ b) then the activation `kind`."""
    initializers = [
        _constant("w", RNG.standard_normal((K, N)) * 0.3),
        _constant("sqrt2", np.sqrt(2)),
        _constant("inv_sqrt2", 1 / np.sqrt(2)),
        _constant("one", 1.0),
        _constant("half", 0.5),
    ]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["mm"])]
    last = "mm"
    if bias_shape is not None:
        initializers.append(_constant("b", RNG.standard_normal(bias_shape)))
        nodes.append(helper.make_node("Add", ["mm", "b"], ["biased"]))
        last = "biased"
    activation, output = _activation_nodes(kind, last)
    graph = helper.make_graph(
        nodes + activation, "mlp", [value_info("x", np.float32, x_dims)], [helper.make_empty_tensor_value_info(output)],
        initializers,
    )  # fmt: skip
    return make_model(graph, opset=20)


def krnl_text(model: onnx.ModelProto) -> str:
    module = import_model(model)
    for name in ("shape-inference", "convert-onnx-to-krnl"):
        get_pass(name)().apply(make_context(), module)
    return module_text(module)


def _check(model: onnx.ModelProto, shapes: list[tuple[int, ...]], tmp_path) -> None:
    session = onnxc.Session(onnxc.compile(model, tmp_path / "m.so"))
    for shape in shapes:
        x = RNG.standard_normal(shape).astype(np.float32)
        assert_matches(session.run(None, {"x": x}), expected_outputs(model, {"x": x}, "onnxruntime"))


@pytest.mark.parametrize("kind", ["gelu_torch", "gelu_mul_first", "gelu_op", "relu"])
@pytest.mark.parametrize("x_dims, shapes", [([2, 5, K], [(2, 5, K)]), (["n", "s", K], [(1, 7, K), (3, 13, K)])])
def test_matmul_bias_and_activation_in_the_kernel(tmp_path, kind, x_dims, shapes):
    model = mlp_model(x_dims, kind)
    text = krnl_text(model)
    assert "bias_columns" in text
    assert ("activation = #krnl<activation gelu>" in text) == kind.startswith("gelu")
    assert not FLOAT_ARITHMETIC.search(text), "the Add and the activation leave no loop nest"
    _check(model, shapes, tmp_path)


@pytest.mark.parametrize(
    "bias_shape, fused",
    [((1, 1, N), True), ((5, 1), False), (None, True)],  # a bias per row is a nest of its own
)
def test_matmul_bias_shapes(tmp_path, bias_shape, fused):
    model = mlp_model([2, 5, K], "gelu_op", bias_shape)
    text = krnl_text(model)
    assert ("bias_columns" in text) == (bias_shape is not None and fused)
    assert ("activation = #krnl<activation gelu>" in text) == fused
    _check(model, [(2, 5, K)], tmp_path)


@pytest.mark.parametrize(
    "c_shape, beta, then, rows",
    [
        ((N,), 1.0, "relu", 6),  # a classifier MLP's Linear + ReLU, as torch exports it
        ((1, N), 0.5, None, 6),
        ((N,), 1.0, "gelu_op", "n"),  # GPT-2's Conv1D: a Gemm of run-time rows
        ((6, N), 1.0, "relu", 6),  # C per element: the fill and accumulate of before, the Relu fused
    ],
)
def test_gemm_bias_and_activation_in_the_kernel(tmp_path, c_shape, beta, then, rows):
    """A Gemm's vector C is the kernel's bias per column (no fill of Y with C), and the Relu or
    GELU after it is applied in the store."""
    initializers = [_constant("w", RNG.standard_normal((N, K)) * 0.3), _constant("c", RNG.standard_normal(c_shape))]
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["gemm"], transB=1, beta=beta)]
    output = "gemm"
    if then is not None:
        activation, output = _activation_nodes(then, "gemm")
        nodes += activation
    graph = helper.make_graph(
        nodes, "gemm", [value_info("x", np.float32, [rows, K])], [helper.make_empty_tensor_value_info(output)],
        initializers,
    )  # fmt: skip
    model = make_model(graph, opset=20)
    text = krnl_text(model)
    assert ("bias_columns" in text) == (len(c_shape) == 1 or c_shape[0] == 1)
    assert ("activation" in text) == (then == "gelu_op")
    assert ("clip = [0.0" in text or "clip = [0.000000e+00" in text) == (then == "relu")
    _check(model, [(6, K)] if rows == 6 else [(1, K), (9, K)], tmp_path)


@pytest.mark.parametrize("c, rows", [(False, 6), (False, "n"), (True, 6)])
def test_gemm_without_c_starts_from_zero(tmp_path, c, rows):
    """A Gemm with no C (or beta 0: C is ignored) is one kernel that does not accumulate:
    no fill of Y before it, over static and run-time rows."""
    initializers = [_constant("w", RNG.standard_normal((K, N)) * 0.3), _constant("c", RNG.standard_normal((N,)))]
    inputs = ["x", "w", "c"] if c else ["x", "w"]
    nodes = [helper.make_node("Gemm", inputs, ["y"], alpha=0.5, **({"beta": 0.0} if c else {}))]
    graph = helper.make_graph(
        nodes, "gemm", [value_info("x", np.float32, [rows, K])], [helper.make_empty_tensor_value_info("y")],
        initializers,
    )  # fmt: skip
    model = make_model(graph, opset=20)
    text = krnl_text(model)
    assert "krnl.matmul" in text and "accumulate" not in text
    assert "krnl.define_loops" not in text, "no fill nest"
    _check(model, [(6, K)] if rows == 6 else [(1, K), (9, K)], tmp_path)


def test_gelu_whose_input_is_an_output_stays_a_nest(tmp_path):
    """The biased value is a graph output too: the kernel stores it, the GELU is a nest."""
    model = mlp_model([2, 5, K], "gelu_torch")
    model.graph.output.append(helper.make_empty_tensor_value_info("biased"))
    text = krnl_text(model)
    assert "activation" not in text and "bias_columns" in text
    x = RNG.standard_normal((2, 5, K)).astype(np.float32)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})
    assert_matches(actual, expected_outputs(model, {"x": x}, "onnxruntime"))
