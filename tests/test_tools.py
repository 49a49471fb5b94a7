"""The tools users reach for: `onnxc verify`, `onnxc inspect`, `-v` and `--time-passes`."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxc import cli
from onnxc.examples.light import load_light_model
from onnxc.examples.mnist import build_mnist_cnn
from onnxc.tools.flops import node_flops
from onnxc.tools.reference import run_reference, topological_nodes
from onnxc.tools.support import Support, op_support
from onnxc.tools.verification import compare, verify


def small_conv_net(batch: int | str = 1) -> onnx.ModelProto:
    """Conv-BN-Relu, a residual Add, global pooling and a classifier: the shape of a CNN block."""
    rng = np.random.default_rng(1)

    def init(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    initializers = [
        init("w1", 8, 3, 3, 3),
        init("b1", 8),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn.scale"),
        init("bn.bias", 8),
        init("bn.mean", 8, scale=0.1),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "bn.var"),
        init("w2", 8, 8, 3, 3),
        init("fc.w", 5, 8),
        init("fc.b", 5),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node(
            "BatchNormalization", ["c1", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["n1"], name="bn1", epsilon=1e-5
        ),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "small_conv_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 8, 8])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, 5]),
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, 5]),
        ],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def with_node_changed(model: onnx.ModelProto, name: str, op_type: str | None = None, **attributes) -> onnx.ModelProto:
    """A copy of `model` where node `name` has another op type and/or attribute values."""
    changed = copy.deepcopy(model)
    node = next(n for n in changed.graph.node if n.name == name)
    if op_type:
        node.op_type = op_type
    kept = [a for a in node.attribute if a.name not in attributes]
    del node.attribute[:]
    node.attribute.extend(kept + [helper.make_attribute(k, v) for k, v in attributes.items()])
    return changed


# ------------------------------------------------------------------------------------------------ verify


@pytest.mark.parametrize("build", [build_mnist_cnn, small_conv_net])
def test_verify_passes_on_correct_models(tmp_path, capsys, build):
    path = tmp_path / "model.onnx"
    onnx.save(build(), path)
    assert cli.main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("PASS")
    assert "onnxruntime" in out and "FAIL" not in out


@pytest.mark.parametrize(
    "model, node, change, position",
    [
        (build_mnist_cnn, "relu2", {"op_type": "LeakyRelu", "alpha": 0.1}, 5),  # another op
        (build_mnist_cnn, "pool1", {"op_type": "AveragePool"}, 3),
        (small_conv_net, "fc", {"alpha": 0.5}, 9),  # another attribute value
        (small_conv_net, "bn1", {"epsilon": 0.3}, 2),
    ],
)
def test_verify_pinpoints_the_divergent_node(model, node, change, position):
    model = model()
    reference = with_node_changed(model, node, **change)
    report = verify(model, reference_model=reference)
    assert not report.passed
    divergence = report.divergence
    assert divergence is not None and divergence.node.name == node
    assert divergence.position == position
    if node == "bn1":  # float32 attributes print as written, not as their float64 expansion
        assert divergence.attributes == {"epsilon": 1e-05}
    assert not divergence.comparison.passed and divergence.comparison.max_abs > 1e-3
    # Everything before the node matched: its inputs' shapes are reported from the agreeing values.
    assert all(shape is not None for _, shape in divergence.input_shapes)


def test_verify_cli_reports_the_node_and_fails(tmp_path, capsys, monkeypatch):
    """End to end through the CLI, with a reference that computes conv2 with other pads."""
    import onnxc.tools.verification

    path = tmp_path / "small.onnx"
    onnx.save(small_conv_net(), path)
    real_reference = onnxc.tools.verification.run_reference
    monkeypatch.setattr(
        onnxc.tools.verification,
        "run_reference",
        lambda model, feeds: real_reference(
            with_node_changed(model, "conv2", dilations=[1, 1], group=1, pads=[2, 2, 0, 0]), feeds
        ),
    )
    assert cli.main(["verify", str(path), "--rtol", "1e-4", "--atol", "1e-5", "-v"]) == 1
    out, err = capsys.readouterr()
    assert err.count("  LLVM optimize ") == 2 and err.count("  reference run ") == 2  # the model, the debug copy
    assert "searching node by node: a -O0 build returning 10 intermediate values" in err
    assert "FAIL" in out
    assert "first divergent node (4 of 10 in topological order): 'conv2' (Conv)" in out
    assert "'kernel_shape': [3, 3]" in out and "'pads': [1, 1, 1, 1]" in out
    assert "input  r1: [1, 8, 8, 8]" in out and "input  w2: [8, 8, 3, 3]" in out
    assert "output c2: max abs err" in out and "rtol 0.0001" in out


def test_verify_pins_symbolic_dims_from_input_files(tmp_path, capsys):
    model_path, input_path = tmp_path / "dyn.onnx", tmp_path / "x.npy"
    onnx.save(small_conv_net(batch="N"), model_path)
    np.save(input_path, np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32))
    assert cli.main(["verify", str(model_path), "--input", f"x={input_path}"]) == 0
    assert "probs   [2, 5]" in capsys.readouterr().out


def test_verify_rejects_unknown_inputs(tmp_path, capsys):
    path, data = tmp_path / "m.onnx", tmp_path / "y.npy"
    onnx.save(build_mnist_cnn(), path)
    np.save(data, np.zeros(3, np.float32))
    assert cli.main(["verify", str(path), "--input", f"nope={data}"]) == 1
    assert "unknown inputs ['nope']" in capsys.readouterr().err


def test_verify_reports_why_the_search_could_not_run(monkeypatch):
    """A debug build that fails to compile still leaves the output comparison to report."""
    import onnxc.compiler
    from onnxc.commands.verify import format_report
    from onnxc.errors import UnsupportedOpError

    real_compile = onnxc.compiler.compile

    def compile_all_but_debug(model, output_path, **options):
        if str(output_path).endswith("debug.so"):
            raise UnsupportedOpError("no debug build today", node="x", op_type="Y")
        return real_compile(model, output_path, **options)

    monkeypatch.setattr(onnxc.compiler, "compile", compile_all_but_debug)
    model = build_mnist_cnn()
    report = verify(model, reference_model=with_node_changed(model, "relu1", op_type="Abs"))
    assert not report.passed and report.divergence is None and not report.located
    assert "could not search for the divergent node: node 'x' (Y): no debug build today" in format_report(report)


def test_reference_failure_is_one_typed_error():
    from onnxc.errors import OnnxcError

    model = small_conv_net()
    model.graph.node[-1].domain = "com.example"
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(OnnxcError, match=r"the reference \(onnxruntime .*\) cannot run the model"):
        run_reference(model, {"x": np.zeros((1, 3, 8, 8), np.float32)})


def test_reference_falls_back_to_onnx_reference(monkeypatch):
    model = small_conv_net()
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    with_ort = run_reference(model, feeds)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` fail
    from onnxc.tools.reference import reference_name

    assert reference_name().startswith("onnx.reference")
    without = run_reference(model, feeds)
    assert list(without) == ["probs", "logits"]
    np.testing.assert_allclose(without["logits"], with_ort["logits"], rtol=1e-4, atol=1e-5)


def test_compare_rules():
    assert compare("a", np.array([1.0, np.nan]), np.array([1.0005, np.nan]), 1e-3, 0).passed
    bad = compare("a", np.array([1.0, 2.0, 0.0]), np.array([1.0, 2.5, 0.0]), 1e-3, 1e-4)
    assert not bad.passed and bad.mismatched == 1 and bad.worst_index == (1,)
    assert bad.max_abs == pytest.approx(0.5) and bad.max_rel == pytest.approx(0.2)
    assert not compare("i", np.array([3]), np.array([4]), 1.0, 1.0).passed  # integers compare exactly
    assert not compare("s", np.zeros((2, 3)), np.zeros((3, 2)), 1, 1).passed
    assert not compare("n", np.array([np.nan]), np.array([1.0]), 1, 1).passed


def test_topological_order_of_unsorted_graph():
    model = build_mnist_cnn()
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(reversed(nodes))
    assert [n.name for n in topological_nodes(model.graph)] == [n.name for n in nodes]


# ------------------------------------------------------------------------------------------------ inspect


def _independent_resnet_macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of ResNet50's Conv and Gemm nodes, from the conv arithmetic
    (output size from input size, kernel, stride, pads) rather than shape inference."""
    weights = {t.name: tuple(t.dims) for t in model.graph.initializer}
    shapes = {vi.name: tuple(d.dim_value for d in vi.type.tensor_type.shape.dim) for vi in model.graph.input}
    macs = 0
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        x = shapes.get(node.input[0])
        if node.op_type in ("Conv", "MaxPool", "AveragePool"):
            kernel = weights[node.input[1]][2:] if node.op_type == "Conv" else attrs["kernel_shape"]
            strides = attrs.get("strides", [1, 1])
            pads = attrs.get("pads", [0, 0, 0, 0])
            spatial = [(x[2 + i] + pads[i] + pads[i + 2] - kernel[i]) // strides[i] + 1 for i in range(2)]
            channels = weights[node.input[1]][0] if node.op_type == "Conv" else x[1]
            shapes[node.output[0]] = (x[0], channels, *spatial)
            if node.op_type == "Conv":
                macs += int(np.prod(shapes[node.output[0]])) * int(np.prod(weights[node.input[1]][1:]))
        elif node.op_type == "Gemm":  # transB=1: weight [N, K]
            macs += x[0] * int(np.prod(weights[node.input[1]]))
        elif x is not None:  # BatchNormalization, Relu, Sum, Reshape (to [N, C]: not needed by Gemm)
            shapes[node.output[0]] = x
    return macs


def test_inspect_resnet50_flops(tmp_path):
    model = load_light_model("resnet50")
    path = tmp_path / "resnet50.onnx"
    onnx.save(model, path)
    summary = json.loads(_run_cli(["inspect", str(path), "--json"]))
    independent = 2 * _independent_resnet_macs(model)
    assert 8.15e9 < independent < 8.25e9  # the published 8.2 GFLOP (4.1 GMACs)
    by_op = {row["op_type"]: row for row in summary["ops"]}
    mac_flops = by_op["Conv"]["flops"] + by_op["Gemm"]["flops"]
    assert abs(mac_flops - independent) / independent < 0.01
    assert abs(summary["flops"]["total"] - independent) / independent < 0.01
    assert summary["flops"]["nodes_without_count"] == 0
    assert by_op["Conv"]["count"] == 53 and by_op["Conv"]["supported"]
    assert 25.5e6 < summary["parameters"]["elements"] < 25.7e6
    assert summary["inputs"] == [{"name": "gpu_0/data_0", "dtype": "float32", "shape": [1, 3, 224, 224]}]


def test_inspect_table_symbolic_dims_unsupported_ops_and_external_data(tmp_path):
    model = small_conv_net(batch="N")
    model.graph.node.append(helper.make_node("RandomUniformLike", ["probs"], ["e"], name="random"))
    model.graph.node.append(helper.make_node("Gelu2", ["e"], ["out"], name="custom", domain="com.example"))
    model.graph.output.append(helper.make_tensor_value_info("out", TensorProto.FLOAT, None))
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    path = tmp_path / "m.onnx"
    onnx.save(model, path, save_as_external_data=True, location="m.weights", size_threshold=0)

    table = _run_cli(["inspect", str(path)])
    assert "x: float32 [N, 3, 8, 8]" in table
    assert "probs: float32 [N, 5]" in table
    assert "RandomUniformLike " in table and "no lowering and no function body" in table
    assert "com.example.Gelu2" in table and "operator domain 'com.example' is not supported" in table
    assert "pin symbolic dims with --shape" in table
    assert "m.weights: 9 tensors, 3.5 KB" in table
    assert "not supported: Gelu2, RandomUniformLike" in table

    pinned = json.loads(_run_cli(["inspect", str(path), "--json", "--shape", "x=2,3,8,8"]))
    conv = next(row for row in pinned["ops"] if row["op_type"] == "Conv")
    assert conv["flops"] == 2 * (2 * 8 * 8 * 8 * 3 * 3 * 3) + 2 * (2 * 8 * 8 * 8 * 8 * 3 * 3)
    assert pinned["flops"]["nodes_without_count"] == 1  # the custom op's output shape is unknown
    assert pinned["external_data"] == [
        {"file": "m.weights", "tensors": 9, "bytes": 4 * (216 + 8 + 4 * 8 + 576 + 40 + 5), "exists": True}
    ]


def test_node_flops_rules():
    shapes = {"a": (2, 4, 3), "b": (3, 5), "y": (2, 4, 5), "p": (1, 2, 4, 4), "q": (1, 2, 2, 2)}
    matmul = helper.make_node("MatMul", ["a", "b"], ["y"])
    pool = helper.make_node("MaxPool", ["p"], ["q"], kernel_shape=[3, 3])
    gap = helper.make_node("GlobalAveragePool", ["p"], ["g"])
    reshape = helper.make_node("Reshape", ["p", "s"], ["r"])
    assert node_flops(matmul, shapes.get) == 2 * 2 * 4 * 5 * 3
    assert node_flops(pool, shapes.get) == 8 * 9
    assert node_flops(gap, shapes.get) == 32
    assert node_flops(reshape, shapes.get) == 0
    assert node_flops(helper.make_node("Relu", ["z"], ["w"]), shapes.get) is None


def test_op_support():
    conv = "passes/onnx_to_krnl/conv.py"
    assert op_support("Conv", "", 13) == Support(True, f"lowered by {conv}", conv)
    assert op_support("RandomUniformLike", "", 13) == Support(False, "no lowering and no function body")
    folded = "compiled only where constprop folds it (inputs all constant)"
    assert op_support("MelWeightMatrix", "", 17).reason == f"no lowering and no function body: {folded}"
    assert op_support("Gelu", "", 13).reason == "not an operator of ai.onnx opset 13"
    assert not op_support("Conv", "com.microsoft", 1).supported


def test_op_support_names_the_file_defining_an_elementwise_op():
    """Element-wise ops all lower through fusion.py's nest; the file named is their definition's."""
    for op_type, source in [("Add", "elementwise.py"), ("Relu", "elementwise.py"), ("Where", "logic.py")]:
        assert op_support(op_type, "", 16).reason == f"lowered by passes/onnx_to_krnl/{source}"


def test_op_support_of_decomposed_ops():
    attention = op_support("Attention", "", 23)
    assert attention.supported and attention.source == "passes/decompose.py"
    assert attention.reason.startswith("decomposed into ") and "MatMul, Mod, Mul, Not, ReduceMax" in attention.reason
    # A body op that is itself decomposed (NegativeLogLikelihoodLoss), and the training optimizers' written bodies.
    assert op_support("SoftmaxCrossEntropyLoss", "", 13).supported
    assert op_support("Adam", "ai.onnx.preview.training", 1).reason.startswith("decomposed into Add, Cast")
    bernoulli = op_support("Bernoulli", "", 22)  # its body draws with RandomUniformLike, which has no way through
    assert not bernoulli.supported
    assert bernoulli.reason.startswith("decomposed into Cast, Greater, RandomUniformLike, but RandomUniformLike: ")


def test_op_support_of_ops_resolved_before_lowering():
    assert op_support("Loop", "", 16).source == "passes/inline_control_flow.py"
    assert op_support("SplitToSequence", "", 24).source == "onnxc/frontend/sequences.py"
    assert op_support("Upsample", "", 9).reason == "imported as Resize-13, lowered by passes/onnx_to_krnl/resize.py"
    assert not op_support("Upsample", "", 10).supported  # deprecated from opset 10


# ------------------------------------------------------------------------------------------------ progress


def test_verbose_stages_and_time_passes(tmp_path, capsys):
    path = tmp_path / "mnist.onnx"
    onnx.save(build_mnist_cnn(), path)
    assert cli.main([str(path), "-o", str(tmp_path / "mnist.so"), "-v", "--time-passes"]) == 0
    err = capsys.readouterr().err
    stages = ["import", "shape-inference", "convert-onnx-to-krnl", "LLVM optimize", "object emission"]
    stages += ["weights object", "link"]
    positions = [err.index(f"  {stage} ") for stage in stages]
    assert positions == sorted(positions)
    table = err[err.index("stage ") :].splitlines()
    assert table[0].split() == ["stage", "ms", "%"]
    rows = {line.split()[0]: float(line.split()[-1]) for line in table[1:] if line.split()[0] != "LLVM"}
    assert rows["total"] == 100.0
    assert sum(share for name, share in rows.items() if name != "total") <= 100.1


@pytest.mark.parametrize("emit, written", [(None, "relu.so"), ("onnx", "relu.onnx.mlir"), ("llvm", "relu.ll")])
def test_output_defaults_to_beside_the_model(tmp_path, monkeypatch, emit, written):
    """Without -o, like onnx-mlir: `onnxc models/relu.onnx` writes models/relu.so and says so."""
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path)
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "models/relu.onnx")
    out = _run_cli(["models/relu.onnx"] + (["--emit", emit] if emit else []))
    assert out == f"wrote models/{written}\n"
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == sorted(["relu.onnx", written])


def _run_cli(argv: list[str]) -> str:
    import contextlib
    import io

    stream = io.StringIO()
    with contextlib.redirect_stdout(stream):
        assert cli.main(argv) == 0
    return stream.getvalue()


def test_run_fills_symbolic_dims_from_given_inputs(tmp_path, capsys):
    """`onnxc run` on a library of symbolic dims: a missing input takes the sizes a given input
    has for the same symbols (attention_mask from input_ids), other symbols 1."""
    library = tmp_path / "bert.so"
    assert cli.main([str(Path(__file__).parent / "models" / "torch" / "bert.onnx"), "-o", str(library)]) == 0
    assert cli.main(["run", str(library)]) == 0
    assert "float32[1, 1, 64]" in capsys.readouterr().out
    np.save(tmp_path / "ids.npy", np.ones((2, 5), np.int64))
    assert cli.main(["run", str(library), "--input", f"input_ids={tmp_path / 'ids.npy'}"]) == 0
    assert "float32[2, 5, 64]" in capsys.readouterr().out
