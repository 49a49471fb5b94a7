"""The GEMM kernel (krnl.matmul) end to end: Conv, MatMul and Gemm at sizes that
are not multiples of the register tile (mr = 12 rows, nr = 32 columns with
AVX-512), the reduction block (kc = 128) or the column block (nc = 512), with
broadcast batches and 1-sized dims; the epilogue fusions (BatchNormalization,
Relu, Clip); other vector shapes (AVX2) and the cross targets' builds.
Reference: onnxruntime. Tolerance: 1e-4 of the output's largest magnitude.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.codegen import emit_object, resolve_target
from onnxc.compiler import module_text
from onnxc.dialects import make_context
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass

RNG = np.random.default_rng(5)
FLOAT_ARITHMETIC = re.compile(r"arith\.(add|sub|mul|div|maximum|minimum)f")
"""Float arithmetic in the IR: a nest left for an op that should have been fused into a kernel."""


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model_of(nodes, inputs: dict[str, np.ndarray], initializers: dict[str, np.ndarray], output: str, shape):
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def krnl_text(model: onnx.ModelProto) -> str:
    module = import_model(model)
    for name in ("shape-inference", "convert-onnx-to-krnl"):
        get_pass(name)().apply(make_context(), module)
    return module_text(module)


def check(model: onnx.ModelProto, inputs: dict[str, np.ndarray], tmp_path, target=None) -> None:
    """onnxc's output matches onnxruntime's, and the kernel was used."""
    assert "krnl.matmul" in krnl_text(model)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, inputs)
    library = onnxc.compile(model, tmp_path / "model.so", target=target)
    (actual,) = onnxc.Session(library).run(None, inputs)
    assert actual.shape == expected.shape
    scale = max(float(np.abs(expected).max()), 1e-6)
    assert float(np.abs(actual - expected).max()) <= 1e-4 * scale


# ------------------------------------------------------------------------------- MatMul


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((1, 1), (1, 1)),
        ((13, 7), (7, 33)),  # row and column tails
        ((12, 130), (130, 32)),  # exact tiles, reduction tail past kc
        ((25, 300), (300, 600)),  # column block tail past nc, several kc blocks
        ((5,), (5, 40)),  # 1-D lhs
        ((30, 17), (17,)),  # 1-D rhs: N = 1
        ((2, 1, 14, 9), (3, 9, 35)),  # broadcast batch
        ((4, 14, 9), (9, 20)),  # batched lhs, shared rhs
    ],
)
def test_matmul(tmp_path, a_shape, b_shape):
    a, b = rand(*a_shape), rand(*b_shape)
    shape = np.matmul(a, b).shape
    model = model_of([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b}, {}, "y", shape)
    check(model, {"a": a, "b": b}, tmp_path)


@pytest.mark.parametrize(
    "a_shape, n, target",
    [
        ((3, 50), 70, None),  # a column tail inside a half-used panel
        ((1, 300), 600, None),  # a matrix-vector product: one reduction block of K = 300, N > nc
        ((2, 30, 140), 41, None),  # a batch sharing B; rows past one tile, K > kc
        ((50, 300), 70, None),  # reduction blocks of 128, 128 and 44 rows, each its own run of panels
        ((1, 300), 37, "x86-64-v3"),  # AVX2: 8-column tiles, two in a panel
    ],
)
def test_matmul_constant_rhs(tmp_path, a_shape, n, target):
    """A constant B is packed at compile time into column panels."""
    a, w = rand(*a_shape), rand(a_shape[-1], n)
    model = model_of([helper.make_node("MatMul", ["a", "w"], ["y"])], {"a": a}, {"w": w}, "y", (*a_shape[:-1], n))
    assert "b_access = #krnl<b_access panels>" in krnl_text(model)
    check(model, {"a": a}, tmp_path, target=resolve_target("x86_64", cpu=target) if target else None)


@pytest.mark.parametrize("k", [40, 300])
def test_products_of_run_time_operands_and_dims(k, tmp_path):
    """Attention-style q[b, 3, s, K] @ kt[b, 3, K, t], all of b, s and t symbolic: one library
    (krnl.matmul of run-time rows and columns per product) for every shape, K past one block."""
    value = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)  # noqa: E731
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["q", "kt"], ["y"])],
        "scores",
        [value("q", ["b", 3, "s", k]), value("kt", ["b", 3, k, "t"])],
        [value("y", None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    assert "columns" in krnl_text(model)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "scores.so"))
    reference = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch, rows, columns in [(1, 7, 5), (2, 32, 33), (1, 130, 70), (2, 1, 1), (3, 13, 300)]:
        feed = {"q": rand(batch, 3, rows, k), "kt": rand(batch, 3, k, columns)}
        (got,), (want,) = session.run(None, feed), reference.run(None, feed)
        assert got.shape == want.shape and float(np.abs(got - want).max()) <= 1e-4 * float(np.abs(want).max())


def test_products_of_different_k_in_one_module(tmp_path):
    """Two products whose A rows are K apart (300 and 140) take micro-kernels of their own A
    strides (constants) while sharing the B/C-stride arguments; both must be right."""
    a = rand(30, 300)
    nodes = [helper.make_node("MatMul", ["a", "w1"], ["t"]), helper.make_node("MatMul", ["t", "w2"], ["y"])]
    model = model_of(nodes, {"a": a}, {"w1": rand(300, 140), "w2": rand(140, 45)}, "y", (30, 45))
    check(model, {"a": a}, tmp_path)


# --------------------------------------------------------------------------------- Gemm


@pytest.mark.parametrize(
    "trans_a, trans_b, alpha, beta, c_shape",
    [
        (0, 0, 1.0, 1.0, (37,)),
        (1, 0, 1.0, 0.5, (19, 37)),
        (0, 1, 2.0, 1.0, (1, 37)),  # constant B^T, alpha folded into it
        (1, 1, 0.5, 0.0, None),
    ],
)
def test_gemm(tmp_path, trans_a, trans_b, alpha, beta, c_shape):
    m, k, n = 19, 140, 37
    a = rand(k, m) if trans_a else rand(m, k)
    w = rand(n, k) if trans_b else rand(k, n)
    initializers = {"w": w}
    names = ["a", "w"]
    if c_shape is not None:
        initializers["c"] = rand(*c_shape)
        names.append("c")
    node = helper.make_node("Gemm", names, ["y"], transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
    check(model_of([node], {"a": a}, initializers, "y", (m, n)), {"a": a}, tmp_path)


@pytest.mark.parametrize(
    "op_type, attrs, panels",
    [
        ("MatMul", {}, False),
        ("Gemm", {}, False),
        ("Gemm", {"transB": 1, "alpha": 0.5}, True),
        ("Gemm", {"transB": 1}, True),
    ],
)
def test_huge_constant_b_is_read_in_place(tmp_path, monkeypatch, op_type, attrs, panels):
    """Above PANEL_BYTES_LIMIT a constant B is not copied into panels (a >2 GB weight would double
    the compiler's memory); a transposed or scaled Gemm B, copied anyway, still goes into panels
    (W^T read in place would be a strided read of every row)."""
    monkeypatch.setattr("onnxc.passes.onnx_to_krnl.matmul_kernel.PANEL_BYTES_LIMIT", 1024)
    a = rand(19, 140)
    w = rand(37, 140) if attrs.get("transB") else rand(140, 37)
    model = model_of([helper.make_node(op_type, ["a", "w"], ["y"], **attrs)], {"a": a}, {"w": w}, "y", (19, 37))
    assert ("b_access = #krnl<b_access panels>" in krnl_text(model)) == panels
    check(model, {"a": a}, tmp_path)


# --------------------------------------------------------------------------------- Conv


def conv_model(x_shape, w_shape, *, bias=True, then=(), **attrs):
    """Conv (constant weights), then optionally BatchNormalization / Relu / Clip / an activation."""
    x, w = rand(*x_shape), rand(*w_shape) * 0.3
    initializers = {"w": w}
    names = ["x", "w"]
    if bias:
        initializers["b"] = rand(w_shape[0])
        names.append("b")
    nodes = [helper.make_node("Conv", names, ["conv"], **attrs)]
    last = "conv"
    for kind in then:
        if kind == "bn":
            m = w_shape[0]
            initializers |= {
                "scale": 1 + 0.1 * rand(m),
                "shift": rand(m),
                "mean": rand(m),
                "var": np.abs(rand(m)) + 0.5,
            }
            nodes.append(helper.make_node("BatchNormalization", [last, "scale", "shift", "mean", "var"], ["bn"]))
            last = "bn"
        elif kind == "relu":
            nodes.append(helper.make_node("Relu", [last], ["relu"]))
            last = "relu"
        elif kind == "clip":
            initializers |= {"lo": np.array(-0.5, np.float32), "hi": np.array(0.75, np.float32)}
            nodes.append(helper.make_node("Clip", [last, "lo", "hi"], ["clip"]))
            last = "clip"
        elif kind == "hardswish":
            nodes.append(helper.make_node("HardSwish", [last], ["hswish"]))
            last = "hswish"
        elif kind in ("silu", "silu_swapped", "hardsigmoid_mul"):  # x * gate(x), as exporters write them
            gate = helper.make_node("Sigmoid", [last], ["gate"]) if kind != "hardsigmoid_mul" else \
                helper.make_node("HardSigmoid", [last], ["gate"], alpha=1 / 6, beta=0.5)  # fmt: skip
            factors = [last, "gate"] if kind != "silu_swapped" else ["gate", last]
            nodes += [gate, helper.make_node("Mul", factors, ["gated"])]
            last = "gated"
    session_model = model_of(nodes, {"x": x}, initializers, last, None)
    inferred = onnx.shape_inference.infer_shapes(session_model).graph
    (info,) = [v for v in [*inferred.value_info, *inferred.output] if v.name == "conv"]
    shape = [d.dim_value for d in info.type.tensor_type.shape.dim]
    return model_of(nodes, {"x": x}, initializers, last, shape), x


@pytest.mark.parametrize(
    "x_shape, w_shape, attrs",
    [
        ((1, 3, 5, 5), (12, 3, 1, 1), {}),  # 1x1: B read as [C, H*W]
        ((2, 5, 9, 7), (13, 5, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # batch 2, odd sizes
        ((1, 3, 11, 11), (5, 3, 3, 3), {"pads": [2, 2, 2, 2], "dilations": [2, 2]}),
        ((1, 4, 6, 6), (7, 4, 1, 1), {"strides": [2, 2]}),  # 1x1 stride 2: im2col
        ((1, 20, 30, 30), (25, 20, 3, 3), {"pads": [1, 0, 1, 2]}),  # K = 180 > kc, N = 900 > nc
        ((1, 3, 23, 23), (16, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}),  # a stem conv
        ((1, 2, 1, 9), (3, 2, 1, 3), {"auto_pad": "SAME_UPPER"}),  # 1-sized spatial dim
        ((2, 6, 9, 9), (26, 3, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),  # a product per group and image
        ((2, 64, 5, 6), (256, 2, 3, 3), {"group": 32, "strides": [2, 2], "pads": [1, 1, 1, 1]}),  # ResNeXt's 32
        ((1, 12, 5, 7), (32, 3, 1, 1), {"group": 4}),  # grouped 1x1: B read in place at the group's channels
        ((2, 5, 9, 7), (13, 5, 3, 3), {"pads": [1, 1, 1, 1]}),  # stride 1: the padded image read in place
        ((1, 4, 10, 12), (9, 4, 3, 3), {}),  # stride 1 unpadded: the image itself, rows compacted
        ((1, 4, 10, 12), (9, 4, 3, 1), {"pads": [1, 0, 1, 0]}),  # 3x1: rows as wide as the output's
    ],
)
def test_conv(tmp_path, x_shape, w_shape, attrs):
    model, x = conv_model(x_shape, w_shape, **attrs)
    check(model, {"x": x}, tmp_path)


@pytest.mark.parametrize("then", [("bn",), ("bn", "relu"), ("relu",), ("clip",), ("bn", "clip")])
def test_conv_epilogue_fusion(tmp_path, then):
    model, x = conv_model((1, 6, 8, 8), (14, 6, 3, 3), then=then, pads=[1, 1, 1, 1])
    assert not FLOAT_ARITHMETIC.search(krnl_text(model)), "the fused ops leave no loop nest (only padding copies)"
    check(model, {"x": x}, tmp_path)


ACTIVATION = re.compile(r"activation = #krnl<activation (\w+)>")


@pytest.mark.parametrize(
    "then, activation",
    [
        (("hardswish",), "hard_swish"),
        (("hardsigmoid_mul",), "hard_swish"),  # HardSwish before opset 14
        (("silu",), "silu"),
        (("silu_swapped",), "silu"),
        (("bn", "silu", "clip"), "silu"),
        (("hardswish", "relu"), "hard_swish"),
    ],
)
@pytest.mark.parametrize(
    "x_shape, w_shape, attrs",
    [
        ((1, 6, 8, 8), (14, 6, 3, 3), {"pads": [1, 1, 1, 1]}),  # stride 1: window access
        ((1, 24, 20, 20), (72, 24, 1, 1), {}),  # a mobile net's 1x1 expansion, B in place
        ((1, 160, 600, 1), (20, 160, 1, 1), {}),  # K = 160 > kc: the epilogue on the last block only
        ((1, 32, 7, 7), (48, 32, 3, 3), {"pads": [1, 1, 1, 1]}),  # channels in the lanes, C transposed
        ((2, 5, 9, 7), (13, 5, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),  # im2col
    ],
)
def test_conv_activation_epilogue(tmp_path, x_shape, w_shape, attrs, then, activation):
    """MobileNetV3's HardSwish and EfficientNet's SiLU after a conv are computed in the GEMM
    kernel's store: no loop nest of their own."""
    model, x = conv_model(x_shape, w_shape, then=then, **attrs)
    text = krnl_text(model)
    assert ACTIVATION.findall(text) == [activation]
    assert not FLOAT_ARITHMETIC.search(text) and "math.exp" not in text
    check(model, {"x": x}, tmp_path)


def test_activation_of_a_value_read_elsewhere_is_not_fused(tmp_path):
    """conv * Sigmoid(conv) where the Sigmoid is a graph output too: the kernel stores the conv,
    the Sigmoid and the Mul are nests of their own."""
    x = rand(1, 4, 6, 6)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["conv"], ["gate"]),
        helper.make_node("Mul", ["conv", "gate"], ["y"]),
    ]
    model = model_of(nodes, {"x": x}, {"w": rand(8, 4, 3, 3)}, "y", (1, 8, 6, 6))
    model.graph.output.append(helper.make_tensor_value_info("gate", TensorProto.FLOAT, (1, 8, 6, 6)))
    assert not ACTIVATION.findall(krnl_text(model))
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, {"x": x})
    for ours, theirs in zip(actual, expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_grouped_conv_epilogue_fusion(tmp_path):
    """BatchNormalization and Relu fold into each group's product (one krnl.matmul: its
    products read the groups' rows of the weights and of the bias)."""
    model, x = conv_model((1, 8, 6, 6), (20, 4, 3, 3), then=("bn", "relu"), pads=[1, 1, 1, 1], group=2)
    text = krnl_text(model)
    assert text.count("krnl.matmul") == 1 and "bias_offsets = [0 : i64, 10 : i64]" in text
    assert not FLOAT_ARITHMETIC.search(text)
    check(model, {"x": x}, tmp_path)


def test_conv_on_an_image_too_big_for_window_offsets_packs_it():
    """Window access indexes rows through an i32 table: an image of 2**31 elements or more
    (here 2 x 40002 x 30002, padded) is packed im2col-style instead (lowering only, no data)."""
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        "huge",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 40000, 30000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 40000, 30000])],
        [numpy_helper.from_array(rand(4, 2, 3, 3), "w")],
    )
    text = krnl_text(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8))
    assert "b_access = #krnl<b_access im2col>" in text and "b_access = #krnl<b_access window>" not in text


@pytest.mark.parametrize("dilation, access", [(1, "window"), (6, "im2col")])
def test_dilated_conv_mostly_padding_skips_the_padding(dilation, access, tmp_path):
    """A rate-6 3x3 conv on a 12x12 image padded by 6 reads padding with 5 of its 9 taps for
    most outputs: its four 6x6 regions are products over only the taps each reads (B the
    im2col of the region); the undilated one keeps window access."""
    x, w = rand(1, 8, 12, 12), rand(16, 8, 3, 3)
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[dilation] * 4, dilations=[dilation] * 2)
    model = model_of([node], {"x": x}, {"w": w}, "y", (1, 16, 12, 12))
    text = krnl_text(model)
    assert f"b_access = #krnl<b_access {access}>" in text
    assert text.count("krnl.matmul") == (4 if dilation == 6 else 1)
    check(model, {"x": x}, tmp_path)


@pytest.mark.parametrize(
    "x_shape, w_shape, attrs, products",
    [
        # DeepLabV3's ASPP rates on a 32x32 map (fewer channels): 9 regions each
        ((1, 16, 32, 32), (24, 16, 3, 3), {"pads": [12] * 4, "dilations": [12, 12]}, 9),
        ((1, 16, 32, 32), (24, 16, 3, 3), {"pads": [18] * 4, "dilations": [18, 18]}, 9),
        # a dilation past the image: only the centre tap reads it, one region (a 1x1 conv)
        ((2, 6, 10, 10), (14, 6, 3, 3), {"pads": [16] * 4, "dilations": [16, 16]}, 1),
        # asymmetric pads, dilations and image sides, a batch of 2, outputs of odd sizes
        ((2, 5, 13, 9), (13, 5, 3, 3), {"pads": [7, 2, 3, 5], "dilations": [5, 3]}, None),
        # strided and dilated, the reduction past kc (K = 40*9 = 360), columns past nc
        ((1, 40, 41, 45), (30, 40, 3, 3), {"pads": [20] * 4, "dilations": [20, 20], "strides": [2, 1]}, None),
        # a 5x5 kernel of many runs per axis
        ((1, 3, 24, 24), (8, 3, 5, 5), {"pads": [8, 8, 8, 8], "dilations": [4, 4]}, 25),
    ],
)
def test_conv_regions_of_the_taps_read(x_shape, w_shape, attrs, products, tmp_path):
    """Convs reading mostly padding, as regions of outputs each multiplying only the taps it
    reads (see conv_regions.py), BatchNormalization and Relu fused, against onnxruntime."""
    model, x = conv_model(x_shape, w_shape, then=("bn", "relu"), **attrs)
    text = krnl_text(model)
    assert "padding = [0, 0]" in text and not re.search(r"padding = \[(?!0, 0\])", text), "no padding read"
    if products is not None:
        assert text.count("krnl.matmul") == products
    check(model, {"x": x}, tmp_path)


def test_conv_without_bias_fused_relu(tmp_path):
    model, x = conv_model((1, 8, 10, 10), (20, 8, 1, 1), bias=False, then=("relu",))
    check(model, {"x": x}, tmp_path)


# ------------------------------------------------------------------------------ targets


def test_avx2_vector_shape(tmp_path):
    """x86-64-v3 (AVX2, 8-float vectors, one per tile row) computes the same."""
    model, x = conv_model((1, 5, 9, 9), (14, 5, 3, 3), then=("relu",), pads=[1, 1, 1, 1])
    check(model, {"x": x}, tmp_path, target=resolve_target("x86_64", cpu="x86-64-v3"))


@pytest.mark.parametrize("spelling", ["ppc64le", "s390x"])
def test_cross_targets_build_the_kernel(spelling):
    model, _ = conv_model((1, 5, 9, 9), (14, 5, 3, 3), then=("bn", "relu"), pads=[1, 1, 1, 1])
    module = import_model(model)
    for name in ("shape-inference", "convert-onnx-to-krnl", "convert-krnl-to-loops"):
        get_pass(name)().apply(make_context(), module)
    assert len(emit_object(module, resolve_target(spelling))) > 0


def residual_model(shortcut_used_later: bool):
    """x -> conv1 (1x1) -> r; x -> conv2 -> Add(r) -> Relu: conv2 can accumulate into
    r's buffer, unless r is read again after conv2 (then it must not)."""
    x = rand(1, 4, 6, 6)
    initializers = {"w1": rand(8, 4, 1, 1), "w2": rand(8, 4, 3, 3) * 0.3, "b2": rand(8)}
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["r"]),
        helper.make_node("Conv", ["x", "w2", "b2"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "r"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    output = "y"
    if shortcut_used_later:
        nodes.append(helper.make_node("Mul", ["y", "r"], ["z"]))
        output = "z"
    return model_of(nodes, {"x": x}, initializers, output, (1, 8, 6, 6)), x


@pytest.mark.parametrize("shortcut_used_later", [False, True])
def test_conv_residual_fusion(tmp_path, shortcut_used_later):
    model, x = residual_model(shortcut_used_later)
    text = krnl_text(model)
    assert len(re.findall(r"\baccumulate\b(?! =)", text)) == (0 if shortcut_used_later else 1)
    check(model, {"x": x}, tmp_path)


@pytest.mark.parametrize("reshaped_later", [False, True])
def test_residual_read_through_a_whole_view_is_accumulated_into(tmp_path, reshaped_later):
    """ResNet's last stage: the shortcut r (256 channels of 7x7) is read in another shape by the
    next 1x1 conv (its channels in the lanes: a view of r as [C, 49]); that view is all of r, so
    the block's last conv still accumulates into r. Unless a Reshape of r is read after it."""
    x = rand(1, 256, 7, 7)
    initializers = {"w1": rand(64, 256, 1, 1) * 0.1, "w2": rand(256, 64, 1, 1) * 0.1, "flat": np.array([1, -1])}
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Conv", ["r", "w1"], ["c1"]),
        helper.make_node("Relu", ["c1"], ["a1"]),
        helper.make_node("Conv", ["a1", "w2"], ["c2"]),
        helper.make_node("Add", ["c2", "r"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    output = "y"
    if reshaped_later:
        nodes += [
            helper.make_node("Reshape", ["r", "flat"], ["r_flat"]),
            helper.make_node("Reshape", ["y", "flat"], ["y_flat"]),
            helper.make_node("Mul", ["y_flat", "r_flat"], ["z"]),
        ]
        output = "z"
    shape = (1, 256 * 49) if reshaped_later else (1, 256, 7, 7)
    model = model_of(nodes, {"x": x}, initializers, output, shape)
    text = krnl_text(model)
    assert "transposed_c" in text, "the first 1x1 conv takes the lanes"
    assert len(re.findall(r"\baccumulate\b(?! =)", text)) == (0 if reshaped_later else 1)
    check(model, {"x": x}, tmp_path)


def test_conv_adding_its_own_input_does_not_accumulate_into_it(tmp_path):
    """r -> conv (3x3) -> Add(r): the kernel would overwrite r while it still packs
    later column and reduction blocks of B from r (40 x 40 = 1600 columns, more than
    a column block; K = 16 * 9 = 144, more than a reduction block)."""
    x = rand(1, 16, 40, 40)
    initializers = {"w1": rand(16, 16, 1, 1), "w2": rand(16, 16, 3, 3) * 0.3}
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "r"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    model = model_of(nodes, {"x": x}, initializers, "y", (1, 16, 40, 40))
    assert not re.findall(r"\baccumulate\b(?! =)", krnl_text(model))
    check(model, {"x": x}, tmp_path)


def test_empty_reduction_keeps_the_loop_nest(tmp_path):
    """K = 0: the product is all zeros; the kernel (which needs K >= 1) is not used."""
    a, b = np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32)
    model = model_of([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b}, {}, "y", (3, 4))
    assert "krnl.matmul" not in krnl_text(model)
    (actual,) = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(actual, np.zeros((3, 4), np.float32))
