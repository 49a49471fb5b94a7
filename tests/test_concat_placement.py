"""Concat inputs computed straight into the Concat's buffer (passes/onnx_to_krnl/concat_placement.py),
numerically against onnxruntime: chains of Concats sharing one buffer, values placed in a
Concat and read long after, a value in two Concats, graph inputs and outputs, batch > 1 and
other axes (copied), and random graphs of Convs, pools, elementwise ops and Concats."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.dialects import make_context
from onnxc.dialects.krnl import ViewOp
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass
from onnxc.runtime import Session

TOLERANCE = 1e-4  # relative to max|ref|, as the benchmarks


class GraphMaker:
    """Nodes of a test graph; every value NCHW with the same spatial size."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def node(self, op_type: str, inputs: list[str], **attributes) -> str:
        name = f"v{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attributes))
        return name

    def conv(self, x: str, channels_in: int, channels_out: int, kernel: int) -> str:
        scale = np.sqrt(2.0 / (channels_in * kernel * kernel))
        weights = (self.rng.standard_normal((channels_out, channels_in, kernel, kernel)) * scale).astype(np.float32)
        bias = self.rng.standard_normal(channels_out).astype(np.float32)
        name = f"w{len(self.initializers)}"
        self.initializers += [numpy_helper.from_array(weights, name), numpy_helper.from_array(bias, name + "b")]
        return self.node("Conv", [x, name, name + "b"], pads=[kernel // 2] * 4)

    def model(self, inputs: dict[str, list[int]], outputs: list[str], dtype=TensorProto.FLOAT) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            "g",
            [helper.make_tensor_value_info(n, dtype, s) for n, s in inputs.items()],
            [helper.make_tensor_value_info(n, dtype, None) for n in outputs],
            self.initializers,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        return model


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], tmp_path, *, placed: int | None = None) -> None:
    """Compile, run, compare every output with onnxruntime; `placed`: the number of
    krnl.view ops the lowering must have made."""
    if placed is not None:
        assert count_views(model) == placed
    library = onnxc.compile(model, tmp_path / "model.so")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(model.SerializeToString(), options).run(None, feeds)
    got = Session(library, threads=1).run(None, feeds)
    for name, ref, out in zip([o.name for o in model.graph.output], expected, got):
        assert out.shape == ref.shape, name
        scale = max(float(np.abs(ref).max()), 1e-30)
        assert float(np.abs(out.astype(np.float64) - ref).max()) <= TOLERANCE * scale, name


def count_views(model: onnx.ModelProto) -> int:
    module = import_model(model)
    ctx = make_context()
    for name in ("shape-inference", "convert-onnx-to-krnl"):
        get_pass(name)().apply(ctx, module)
    return sum(
        isinstance(op, ViewOp) and op.result.type.element_count() != op.base.type.element_count()
        for op in module.walk()
    )  # views of a part of a buffer: reshaped views (a nest's merged dims) are not placements


def normal(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_dense_block_shares_one_buffer_and_placed_values_are_read_long_after(tmp_path):
    """A DenseNet block: concat_k = Concat(concat_{k-1}, conv_k). The block's
    result is read once, right after it; the first conv's output (a slice of the
    block's buffer) is read again at the very end, after large buffers were
    needed that would take the block buffer's place if it were taken as dead."""
    g = GraphMaker(1)
    stem = g.node("Relu", [g.conv("x", 3, 8, 3)])
    features, channels, first = stem, 8, None
    for _ in range(4):
        grown = g.conv(g.node("Relu", [features]), channels, 4, 3)
        first = first or grown
        features, channels = g.node("Concat", [features, grown], axis=1), channels + 4
    wide = g.conv(features, channels, 64, 1)
    wide = g.node("Sigmoid", [g.conv(g.node("Relu", [wide]), 64, 64, 3)])
    late = g.node("Add", [g.node("ReduceMean", [wide], axes=[1]), g.node("ReduceMean", [first], axes=[1])])
    model = g.model({"x": [1, 3, 9, 9]}, [late])
    check(model, {"x": normal(1, 3, 9, 9)}, tmp_path, placed=8)


def test_value_in_two_concats_graph_inputs_and_outputs(tmp_path):
    """c is placed in the first Concat and copied into the second; the graph input
    x and the graph output o are copied; a Concat result is a graph output itself."""
    g = GraphMaker(2)
    c = g.conv("x", 4, 6, 1)
    o = g.node("Relu", ["x"])
    first = g.node("Concat", [c, "x", o], axis=1)
    second = g.node("Concat", [g.node("Sigmoid", [c]), c, first], axis=1)
    twice = g.node("Concat", [c, c], axis=-3)
    model = g.model({"x": [1, 4, 5, 5]}, [second, o, twice, first])
    check(model, {"x": normal(1, 4, 5, 5)}, tmp_path)


def test_a_concat_buffer_is_not_a_residual_to_accumulate_into(tmp_path):
    """z = Conv(x) + y could accumulate into y's buffer if y were dead afterwards;
    y's buffer also holds a and b (placed in it), and a is read after the Conv."""
    g = GraphMaker(5)
    a, b = g.node("Relu", ["x"]), g.node("Sigmoid", ["x"])
    y = g.node("Concat", [a, b], axis=1)
    z = g.node("Add", [g.conv("x", 2, 4, 3), y])
    model = g.model({"x": [1, 2, 4, 4]}, [g.node("Add", [g.node("Neg", [z]), g.node("Concat", [a, a], axis=1)])])
    check(model, {"x": normal(1, 2, 4, 4)}, tmp_path, placed=2)


@pytest.mark.parametrize(
    ("shape", "axis"), [([2, 3, 4, 4], 1), ([1, 3, 4, 4], 2), ([1, 1, 4, 4], 3), ([1, 3, 4, 4], -1)]
)
def test_other_batches_and_axes(tmp_path, shape, axis):
    """Slices that are not contiguous (a batch of 2, an axis after a dim > 1) are copied;
    with ones before the axis they are placed."""
    g = GraphMaker(3)
    a = g.conv("x", shape[1], shape[1], 3)
    b = g.node("Sigmoid", ["x"])
    inner = g.node("Concat", [a, b], axis=axis)
    outer = g.node("Concat", [g.node("Relu", ["x"]), inner, a], axis=axis)
    model = g.model({"x": shape}, [g.node("Neg", [outer]), b])
    contiguous = all(d == 1 for d in shape[: axis % 4])
    check(model, {"x": normal(*shape)}, tmp_path, placed=4 if contiguous else 0)


def test_integer_concat_of_concats(tmp_path):
    g = GraphMaker(4)
    inner = g.node("Concat", [g.node("Add", ["x", "x"]), g.node("Mul", ["x", "x"])], axis=1)
    outer = g.node("Concat", [inner, g.node("Neg", ["x"])], axis=1)
    model = g.model({"x": [1, 2, 3]}, [g.node("Abs", [outer])], dtype=TensorProto.INT64)
    x = np.arange(-3, 3, dtype=np.int64).reshape(1, 2, 3)
    check(model, {"x": x}, tmp_path, placed=4)


def random_graph(seed: int, batch: int) -> onnx.ModelProto:
    """Convs, pools, elementwise ops, Identity and Concats (of graph inputs, of
    values already placed elsewhere, of Concats, repeated inputs) wired at
    random; the outputs are the last value and a few random earlier ones."""
    g = GraphMaker(seed)
    rng = g.rng
    values = {"x": 3}  # name -> channels
    for _ in range(14):
        names = list(values)
        x = names[-1] if rng.random() < 0.5 else rng.choice(names)
        kind = rng.choice(["conv", "conv", "relu", "pool", "identity", "add", "concat", "concat", "concat"])
        if kind == "conv":
            channels = int(rng.integers(1, 6))
            values[g.conv(x, values[x], channels, int(rng.choice([1, 3])))] = channels
        elif kind in ("relu", "identity"):
            values[g.node("Relu" if kind == "relu" else "Identity", [x])] = values[x]
        elif kind == "pool":
            values[g.node("MaxPool", [x], kernel_shape=[3, 3], pads=[1] * 4)] = values[x]
        elif kind == "add":
            partner = rng.choice([n for n in names if values[n] == values[x]])
            values[g.node("Add", [x, partner])] = values[x]
        else:
            parts = list(rng.choice(names, size=int(rng.integers(1, 4))))
            values[g.node("Concat", parts, axis=1)] = sum(values[p] for p in parts)
    names = list(values)[1:]
    outputs = {names[-1], *rng.choice(names, size=2)}
    return g.model({"x": [batch, 3, 5, 5]}, sorted(outputs))


@pytest.mark.parametrize("seed", range(8))
def test_random_graphs(tmp_path, seed):
    batch = 2 if seed % 4 == 3 else 1
    check(random_graph(seed, batch), {"x": normal(batch, 3, 5, 5, seed=seed)}, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(8, 40))
def test_more_random_graphs(tmp_path, seed):
    batch = 2 if seed % 4 == 3 else 1
    check(random_graph(seed, batch), {"x": normal(batch, 3, 5, 5, seed=seed)}, tmp_path)
