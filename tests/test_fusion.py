"""Fusion of element-wise chains (passes/onnx_to_krnl/fusion.py), numerically:
small graphs compiled end to end against onnxruntime (the ONNX reference where
noted), and the number of loop nests each becomes, to show what fused."""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc

RNG = np.random.default_rng(5)
TOLERANCE = 1e-5


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model(nodes, inputs: dict[str, np.ndarray], outputs: dict[str, tuple], constants=None, opset=17):
    """A graph of `nodes` (op, inputs, output, attributes); outputs: name -> (element type, shape)."""
    graph = helper.make_graph(
        [helper.make_node(op, ins, [out], name=out, **attrs) for op, ins, out, attrs in nodes],
        "fusion",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs.items()
        ],
        [helper.make_tensor_value_info(n, element, shape) for n, (element, shape) in outputs.items()],
        [numpy_helper.from_array(a, n) for n, a in (constants or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def nests(m: onnx.ModelProto, tmp_path) -> int:
    """Top-level loop nests of the lowered graph (krnl.iterate, krnl.matmul)."""
    text = onnxc.compile(m, tmp_path / "model.krnl.mlir", emit="krnl").read_text()
    return len(re.findall(r"^    (?:%\S+ = )?krnl\.(?:iterate|matmul)\b", text, re.MULTILINE))


def check(m: onnx.ModelProto, feeds: dict[str, np.ndarray], tmp_path, *, reference: str = "onnxruntime") -> None:
    if reference == "onnxruntime":
        session = onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        expected = session.run(None, feeds)
    else:
        expected = ReferenceEvaluator(m).run(None, feeds)
    actual = onnxc.Session(onnxc.compile(m, tmp_path / "model.so"), threads=1).run(None, feeds)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        if np.issubdtype(want.dtype, np.floating):
            scale = float(np.abs(want).max())
            np.testing.assert_allclose(got, want, rtol=TOLERANCE, atol=TOLERANCE * scale)
        else:
            np.testing.assert_array_equal(got, want)


F = TensorProto.FLOAT


def test_chain_with_scalar_channel_and_full_operands(tmp_path):
    """x * s - z + c then Relu: a scalar, a full tensor and a per-channel vector, one nest."""
    x, z = rand(2, 3, 5, 6), rand(2, 3, 5, 6)
    m = model(
        [
            ("Mul", ["x", "s"], "m", {}),
            ("Sub", ["m", "z"], "d", {}),
            ("Add", ["d", "c"], "a", {}),
            ("Relu", ["a"], "y", {}),
        ],
        {"x": x, "z": z},
        {"y": (F, x.shape)},
        {"s": np.float32(1.5).reshape(()), "c": rand(3, 1, 1)},
    )
    assert nests(m, tmp_path) == 1
    check(m, {"x": x, "z": z}, tmp_path)


def test_operand_broadcast_to_the_chain(tmp_path):
    """An operand of a later op broadcasts a smaller earlier result's partner:
    Add([4,1] + [1,6]) -> Mul by [4,6]: the first op already has the chain's shape."""
    a, b, w = rand(4, 1), rand(1, 6), rand(4, 6)
    m = model(
        [("Add", ["a", "b"], "s", {}), ("Mul", ["s", "w"], "p", {}), ("Tanh", ["p"], "y", {})],
        {"a": a, "b": b, "w": w},
        {"y": (F, (4, 6))},
    )
    assert nests(m, tmp_path) == 1
    check(m, {"a": a, "b": b, "w": w}, tmp_path)


def test_gelu_erf_chain(tmp_path):
    """BERT's GELU: Div, Erf, Add, Mul (by x again), Mul: one nest reading x."""
    x = rand(2, 8, 64)
    m = model(
        [
            ("Div", ["x", "sqrt2"], "d", {}),
            ("Erf", ["d"], "e", {}),
            ("Add", ["e", "one"], "p", {}),
            ("Mul", ["x", "p"], "xp", {}),
            ("Mul", ["xp", "half"], "y", {}),
        ],
        {"x": x},
        {"y": (F, x.shape)},
        {"sqrt2": np.float32(np.sqrt(2)), "one": np.float32(1), "half": np.float32(0.5)},
    )
    assert nests(m, tmp_path) == 1
    check(m, {"x": x}, tmp_path)


def test_batch_norm_then_relu(tmp_path):
    """Inference BatchNormalization and Relu in one nest; statistics as constants
    (the factor folded at compile time) or as graph inputs (a nest per channel first)."""
    x = rand(2, 4, 5, 5)
    scale, bias, mean = rand(4), rand(4), rand(4)
    var = np.abs(rand(4)) + 0.1
    nodes = [("BatchNormalization", ["x", "scale", "bias", "mean", "var"], "n", {}), ("Relu", ["n"], "y", {})]
    statistics = {"scale": scale, "bias": bias, "mean": mean, "var": var}
    constant = model(nodes, {"x": x}, {"y": (F, x.shape)}, statistics)
    assert nests(constant, tmp_path) == 1
    check(constant, {"x": x}, tmp_path)
    inputs = model(nodes, {"x": x, **statistics}, {"y": (F, x.shape)})
    assert nests(inputs, tmp_path) == 2
    check(inputs, {"x": x, **statistics}, tmp_path)


def test_mixed_element_types(tmp_path):
    """Casts inside a chain: float -> float16 (squared in f32, rounded per op)
    -> float, and float -> int32 -> compared -> Where."""
    x = rand(3, 7) * 4
    limit = np.array([[1], [-2], [0]], np.int32)
    m = model(
        [
            ("Mul", ["x", "two"], "m", {}),
            ("Cast", ["m"], "h", {"to": TensorProto.FLOAT16}),
            ("Mul", ["h", "h"], "s", {}),
            ("Cast", ["s"], "f", {"to": F}),
            ("Add", ["f", "x"], "y", {}),
            ("Cast", ["x"], "i", {"to": TensorProto.INT32}),
            ("Greater", ["i", "limit"], "g", {}),
            ("Mul", ["i", "i"], "sq", {}),
            ("Where", ["g", "sq", "limit"], "w", {}),
        ],
        {"x": x, "limit": limit},
        {"y": (F, x.shape), "w": (TensorProto.INT32, x.shape)},
        {"two": np.float32(2)},
    )
    assert nests(m, tmp_path) == 3  # y's chain, Cast x -> int32 (read three times), Greater/Mul/Where
    check(m, {"x": x, "limit": limit}, tmp_path, reference="onnx")


def test_intermediate_with_two_users_is_stored(tmp_path):
    """a = x + z has two users: stored once; Relu(a) and Neg(a) are computed in
    their common user's nest."""
    x, z = rand(4, 9), rand(4, 9)
    m = model(
        [("Add", ["x", "z"], "a", {}), ("Relu", ["a"], "r", {}), ("Neg", ["a"], "n", {}), ("Mul", ["r", "n"], "y", {})],
        {"x": x, "z": z},
        {"y": (F, x.shape)},
    )
    assert nests(m, tmp_path) == 2
    check(m, {"x": x, "z": z}, tmp_path)


def test_graph_outputs_inside_and_at_the_end_of_a_chain(tmp_path):
    """t = x * 3 is a graph output and feeds the chain: it is stored, and the
    chain (Add, Sigmoid) ending in output y reads it."""
    x = rand(5, 6)
    m = model(
        [("Mul", ["x", "three"], "t", {}), ("Add", ["t", "x"], "a", {}), ("Sigmoid", ["a"], "y", {})],
        {"x": x},
        {"y": (F, x.shape), "t": (F, x.shape)},
        {"three": np.float32(3)},
    )
    assert nests(m, tmp_path) == 2
    check(m, {"x": x}, tmp_path)


def test_conv_epilogue_and_following_chain(tmp_path):
    """Conv -> BatchNormalization -> Relu is one GEMM kernel (matmul_kernel.py). A Relu
    added to a later Conv's result (not computed yet when the Relu is reached)
    is computed in the Add's nest, and that Conv does not claim the Add. A chain
    after a Conv (Mul by a per-channel input, which fold-affine cannot fold into
    the weights, Add, Relu) is one nest."""
    x = rand(1, 3, 8, 8)
    channels = {
        "w": rand(4, 3, 3, 3),
        "w1": rand(4, 4, 1, 1),
        "w2": rand(4, 4, 1, 1),
        "scale": rand(4),
        "bias": rand(4),
        "mean": rand(4),
        "var": np.abs(rand(4)) + 0.5,
        "c": rand(4, 1, 1),
    }
    k = rand(4, 1, 1)
    m = model(
        [
            ("Conv", ["x", "w"], "conv", {"pads": [1, 1, 1, 1]}),
            ("BatchNormalization", ["conv", "scale", "bias", "mean", "var"], "bn", {}),
            ("Relu", ["bn"], "r", {}),
            ("Neg", ["r"], "neg", {}),
            ("Relu", ["neg"], "early", {}),
            ("Conv", ["r", "w1"], "conv2", {}),
            ("Add", ["early", "conv2"], "y", {}),
            ("Conv", ["r", "w2"], "conv3", {}),
            ("Mul", ["conv3", "k"], "m", {}),
            ("Add", ["m", "c"], "a", {}),
            ("Relu", ["a"], "z", {}),
        ],
        {"x": x, "k": k},
        {"y": (F, (1, 4, 8, 8)), "z": (F, (1, 4, 8, 8))},
        channels,
    )
    # three krnl.matmul (the 3x3 one with its zero-padded image, one nest, and row compaction); Neg, Relu,
    # Add; Mul, Add, Relu
    assert nests(m, tmp_path) == 7
    check(m, {"x": x, "k": k}, tmp_path)


def test_legacy_broadcast_in_a_chain(tmp_path):
    """Opset 6 Add with broadcast=1, axis=1: the second input lines up with dim 1."""
    x, b = rand(2, 3, 4), rand(3)
    m = model(
        [("Add", ["x", "b"], "a", {"broadcast": 1, "axis": 1}), ("Relu", ["a"], "y", {})],
        {"x": x, "b": b},
        {"y": (F, x.shape)},
        opset=6,
    )
    assert nests(m, tmp_path) == 1
    expected = np.maximum(x + b[:, None], 0)
    actual = onnxc.Session(onnxc.compile(m, tmp_path / "model.so")).run(None, {"x": x, "b": b})[0]
    np.testing.assert_allclose(actual, expected, rtol=TOLERANCE)


def test_fused_nest_is_vectorized_and_split_over_threads(tmp_path):
    """A large fused chain keeps a unit-stride innermost loop (LLVM vectorizes it)
    and an outer loop the thread pool splits; 1 and 2 threads agree."""
    x = rand(1, 32, 56, 56)
    m = model(
        [("Mul", ["x", "k"], "m", {}), ("Add", ["m", "c"], "a", {}), ("Relu", ["a"], "y", {})],
        {"x": x},
        {"y": (F, x.shape)},
        {"k": rand(32, 1, 1), "c": rand(32, 1, 1)},
    )
    text = onnxc.compile(m, tmp_path / "model.ll", emit="llvm").read_text()
    assert re.search(r"call void @onnxc_parallel_for\(ptr [^,]*@main_graph\.nest\d+\.slice,", text)
    assert re.search(r"fmul <\d+ x float>", text)
    library = onnxc.compile(m, tmp_path / "model.so")
    one, two = (onnxc.Session(library, threads=n).run(None, {"x": x})[0] for n in (1, 2))
    np.testing.assert_array_equal(one, two)
    check(m, {"x": x}, tmp_path)


@pytest.mark.parametrize("opset", [6, 13])
def test_clip_bounds_in_a_chain(tmp_path, opset):
    """Clip's bounds (attributes, or scalar inputs computed by another op) with the chain around it."""
    x = rand(4, 5) * 3
    if opset >= 11:
        nodes = [("Neg", ["lo_in"], "lo", {}), ("Clip", ["m", "lo", "hi"], "c", {})]
        constants = {"lo_in": np.float32(1), "hi": np.float32(1.5)}
    else:
        nodes = [("Clip", ["m"], "c", {"min": -1.0, "max": 1.5})]
        constants = {}
    m = model(
        [("Mul", ["x", "x"], "m", {}), *nodes, ("Sqrt", ["c"], "y", {})],
        {"x": x},
        {"y": (F, x.shape)},
        {**constants},
        opset=opset,
    )
    check(m, {"x": x}, tmp_path, reference="onnx")


def test_computed_bound_of_a_one_element_clip(tmp_path):
    """A bound computed by an element-wise op for a one-element Clip has the Clip's
    shape: it is computed in the Clip's nest (read at index 0, the nest's only index)."""
    x, lo = rand(1), rand(1)
    m = model([("Neg", ["lo"], "n", {}), ("Clip", ["x", "n"], "y", {})], {"x": x, "lo": lo}, {"y": (F, (1,))})
    assert nests(m, tmp_path) == 1
    check(m, {"x": x, "lo": lo}, tmp_path)
