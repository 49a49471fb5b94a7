"""int8 models on the integer kernel (fuse-qdq, onnx_to_krnl/quantized_gemm.py,
codegen/gemm_int8.py): QDQ and QOperator models made by onnxruntime.quantization agree with
onnxruntime to within one quantization step of their last quantized tensor (dynamic ones to
float rounding), with the
vpdpbusd path (host, when it has VNNI), the portable path (an AVX2 build) and, under qemu,
ppc64le, s390x, aarch64 and riscv64 builds."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator
from test_cross import require_emulator

import onnxc
from onnxc.codegen.gemm_int8 import dot_product_kind
from onnxc.codegen.target import resolve_target
from onnxc.examples import quantized
from onnxc.tools.emulation import EmulatedSession

onnxruntime = pytest.importorskip("onnxruntime")


REASSOCIATED_SUM_RTOL = 1e-6
"""The integer sums are exact on every target; the float GlobalAveragePool after them sums in
partial sums as wide as the target's vectors (a reassociable sum), so results differ by rounding."""


def _model(name: str, quant_format: str) -> onnx.ModelProto:
    return quantized.quantize(quantized.BUILDERS[name](), quant_format, calibration_samples=2)


def _last_step(model: onnx.ModelProto) -> float:
    """The scale of the DequantizeLinear producing the graph output (its quantization step)."""
    output = model.graph.output[0].name
    node = next(n for n in model.graph.node if output in n.output)
    if node.op_type != "DequantizeLinear":
        return 0.0
    scale = next(i for i in model.graph.initializer if i.name == node.input[1])
    return float(numpy_helper.to_array(scale))


def _reference(model: onnx.ModelProto, feeds) -> np.ndarray:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


@pytest.mark.parametrize("name", ["resnet", "mobilenet"])
@pytest.mark.parametrize("quant_format", ["qdq", "qoperator"])
def test_int8_cnn_matches_onnxruntime(name, quant_format, tmp_path):
    model = _model(name, quant_format)
    text = onnxc.compile(model, tmp_path / "model.krnl.mlir", emit="krnl").read_text()
    assert "krnl.qmatmul" in text  # the integer kernel, not the float simulation
    feeds = quantized.random_inputs(model, 5)
    expected = _reference(model, feeds)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, feeds)[0]
    assert np.array_equal(actual.argmax(-1), expected.argmax(-1))
    assert np.abs(actual - expected).max() <= _last_step(model) * 1.001


def test_int8_gemm_on_two_threads_is_one_threads(tmp_path):
    """The int8 kernel's products go to the thread pool (each thread a range of tiles): two
    threads give one thread's bytes."""
    model = _model("resnet", "qoperator")
    library = onnxc.compile(model, tmp_path / "model.so")
    assert "qgemm.slice" in onnxc.compile(model, tmp_path / "model.ll", emit="llvm").read_text()
    feeds = quantized.random_inputs(model, 7)
    one, two = (onnxc.Session(library, threads=n).run(None, feeds)[0] for n in (1, 2))
    np.testing.assert_array_equal(two, one)


def test_portable_path_matches_vnni(tmp_path):
    """An x86-64-v3 build (AVX2: the portable dot product) gives the host build's bytes."""
    model = _model("resnet", "qdq")
    assert dot_product_kind(resolve_target("x86_64", cpu="x86-64-v3")) == "portable"
    feeds = quantized.random_inputs(model, 6)
    host = onnxc.Session(onnxc.compile(model, tmp_path / "host.so")).run(None, feeds)[0]
    portable = onnxc.Session(onnxc.compile(model, tmp_path / "v3.so", cpu="x86-64-v3")).run(None, feeds)[0]
    np.testing.assert_allclose(portable, host, rtol=REASSOCIATED_SUM_RTOL, atol=0)


def test_int8_matmul_encoder_matches_onnxruntime(tmp_path):
    """The BERT-style encoder's QOperator weight MatMuls take the kernel (per-column epilogue)."""
    model = _model("bert", "qoperator")
    assert "krnl.qmatmul" in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    feeds = quantized.random_inputs(model, 5)
    expected = _reference(model, feeds)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, feeds)[0]
    # The output is LayerNormalization's (float): a step upstream moves it by a fraction of one.
    assert np.abs(actual - expected).max() <= 0.1 * np.abs(expected).max()


def _qlinear_conv_model(x_type, x_shape, weights: np.ndarray, rng, **attributes) -> onnx.ModelProto:
    """A QLinearConv (per-channel weight scales, int32 bias) of `x_type` images of x_shape."""
    channels = weights.shape[0]
    initializers = {
        "xs": np.float32(0.05), "xz": x_type(7), "w": weights,
        "ws": rng.uniform(0.001, 0.01, channels).astype(np.float32), "wz": np.zeros(channels, np.int8),
        "ys": np.float32(0.4), "yz": x_type(-3 if x_type == np.int8 else 120),
        "b": rng.integers(-5000, 5000, channels).astype(np.int32),
    }  # fmt: skip
    node = onnx.helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], **attributes)
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(x_type))
    graph = onnx.helper.make_graph(
        [node], "conv", [onnx.helper.make_tensor_value_info("x", elem, x_shape)],
        [onnx.helper.make_tensor_value_info("y", elem, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()],
    )  # fmt: skip
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


def _depthwise_model(x_type, channels: int, size: int, stride: int, rng) -> onnx.ModelProto:
    """A depthwise 3x3 QLinearConv, padded, of channels x size x size `x_type` images."""
    weights = rng.integers(-128, 127, (channels, 1, 3, 3)).astype(np.int8)
    attributes = {"group": channels, "pads": [1, 1, 1, 1], "strides": [stride, stride]}
    return _qlinear_conv_model(x_type, (1, channels, size, size), weights, rng, **attributes)


@pytest.mark.parametrize(
    ("x_shape", "kernel", "pads", "dilation"),
    [
        ((1, 20, 14, 14), (3, 3), [1, 1, 1, 1], 1),
        ((1, 9, 7, 7), (3, 3), [1, 1, 1, 1], 1),
        ((1, 6, 9, 11), (5, 5), [2, 2, 2, 2], 1),
        ((1, 4, 10, 12), (3, 3), [0, 1, 0, 1], 1),
        ((1, 4, 10, 12), (3, 3), [1, 2, 3, 0], 1),
        ((1, 3, 12, 12), (3, 3), [2, 2, 2, 2], 2),
        ((1, 8, 6, 6), (3, 1), [1, 0, 1, 0], 1),
        ((1, 5, 4, 3), (5, 5), [2, 2, 2, 2], 1),
    ],
)
@pytest.mark.parametrize("x_type", [np.uint8, np.int8])
def test_same_width_conv_is_onnxruntimes(x_shape, kernel, pads, dilation, x_type, tmp_path):
    """Stride-1 QLinearConvs whose output rows are x's width, packed along whole planes (the
    padding columns rewritten after): onnxruntime's bytes, for asymmetric padding, dilation,
    5x5, 3x1 kernels, K not a multiple of 4, and rows narrower than both sides' padding."""
    rng = np.random.default_rng(x_shape[1])
    weights = rng.integers(-128, 127, (13, x_shape[1], *kernel)).astype(np.int8)
    model = _qlinear_conv_model(x_type, x_shape, weights, rng, pads=pads, dilations=[dilation] * 2)
    info = np.iinfo(x_type)
    x = rng.integers(info.min, info.max, x_shape, endpoint=True).astype(x_type)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(actual, _reference(model, {"x": x}))


@pytest.mark.parametrize("x_type", [np.uint8, np.int8])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("size", [11, 66])
def test_depthwise_qlinear_conv_is_onnxruntimes(x_type, stride, size, tmp_path):
    """A depthwise QLinearConv (x zero point padding, its requantization in the conv's
    store), its taps bytes widened to float: onnxruntime's bytes exactly, for 11-, 6-, 66-
    and 33-wide outputs."""
    rng = np.random.default_rng(stride)
    info = np.iinfo(x_type)
    x = rng.integers(info.min, info.max, (1, 24, size, size), endpoint=True).astype(x_type)
    model = _depthwise_model(x_type, 24, size, stride, rng)
    krnl = onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    assert "tensor<24x9xf32>" in krnl  # the weights, a row of taps per channel
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(actual, _reference(model, {"x": x}))


@pytest.mark.parametrize("size", [14, 56])
def test_depthwise_taps_are_vectorized(size, tmp_path):
    """The depthwise conv's steps along bands of 4 rows widen each distinct row of bytes once
    (3x3: 18 vectors for 4 rows) and none in scalar code: its loop is kept from LLVM's full
    unrolling (before the loop vectorizer, which left such loops scalar) and runs over a
    multiple of 16 columns (no scalar remainder: at 14x14, along all rows at once, 14 columns
    of 222 in one took as long as the 208 in vectors)."""
    model = _depthwise_model(np.uint8, 8, size, 1, np.random.default_rng(0))
    target = resolve_target("x86_64", cpu="znver4")
    text = onnxc.compile(model, tmp_path / "m.ll", target=target, emit="llvm").read_text()
    assert len(re.findall(r"uitofp <16 x i8>", text)) == 18 and not re.search(r"uitofp i8 ", text)


def test_strided_depthwise_planes_are_vectorized(tmp_path):
    """The phase planes of a stride-2 depthwise conv (each 56-wide row of bytes split into two
    28-wide phases) are kept from LLVM's full unrolling, which left the copy scalar: the loop
    vectorizer deinterleaves the bytes (a shuffle of the even ones)."""
    model = _depthwise_model(np.uint8, 8, 56, 2, np.random.default_rng(0))
    target = resolve_target("x86_64", cpu="znver4")
    text = onnxc.compile(model, tmp_path / "m.ll", target=target, emit="llvm").read_text()
    assert re.search(r"shufflevector <\d+ x i8> %[^,]+, <\d+ x i8> poison, <\d+ x i32> <i32 0, i32 2,", text)


@pytest.mark.parametrize("quant_format", ["qdq", "qoperator"])
def test_max_pool_of_bytes_is_onnxruntimes(quant_format, tmp_path):
    """ResNet's stem (Conv, Relu, 3x3/2 padded MaxPool) quantized: the MaxPool runs on the
    bytes (QOperator models have it so; fuse-qdq makes it so in QDQ ones), bit-exact."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (1, 3, 20, 20))
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.random.default_rng(0).normal(size=(8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        onnx.helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        onnx.helper.make_node("Relu", ["c"], ["r"]),
        onnx.helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        onnx.helper.make_node("Conv", ["p", "w2"], ["y"]),
    ]
    w2 = numpy_helper.from_array(np.random.default_rng(1).normal(size=(4, 8, 1, 1)).astype(np.float32), "w2")
    graph = onnx.helper.make_graph(nodes, "stem", [x], [y], [w, w2])
    base = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    model = quantized.quantize(onnx.shape_inference.infer_shapes(base), quant_format, calibration_samples=2)
    onnx_text = onnxc.compile(model, tmp_path / "m.onnx.mlir", emit="onnx").read_text()
    assert re.search(r'"onnx.MaxPool"\(.*-> tensor<1x8x10x10xui8>', onnx_text)
    feeds = quantized.random_inputs(model, 3)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, feeds)[0]
    np.testing.assert_array_equal(actual, _reference(model, feeds))


@pytest.mark.parametrize("name", ["resnet", "mobilenet", "bert"])
def test_dynamic_int8_matches_onnxruntime(name, tmp_path):
    """Dynamic quantization's ConvInteger/MatMulInteger (a zero point known at run time)
    take the kernel with int32 results: the sums are exact, so the outputs are
    onnxruntime's up to the float ops after them."""
    model = _model(name, "dynamic")
    assert "krnl.qmatmul" in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    feeds = quantized.random_inputs(model, 5)
    expected = _reference(model, feeds)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, feeds)[0]
    assert np.array_equal(actual.argmax(-1), expected.argmax(-1))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-5 * np.abs(expected).max())


@pytest.mark.parametrize(
    ("x_shape", "out_channels", "kernel", "stride"),
    [
        ((1, 64, 7, 7), 32, 3, 1),  # 49 pixels: row tiles of 10, 10, 10, 10, 9
        ((1, 64, 7, 7), 40, 3, 1),  # channels past the last whole vector
        ((1, 24, 14, 14), 48, 3, 2),
        ((1, 80, 7, 7), 16, 1, 1),
        ((1, 36, 5, 5), 16, 3, 1),  # 25 pixels: row tiles of 9, 8, 8
    ],
)
def test_conv_in_lanes_is_onnxruntimes(x_shape, out_channels, kernel, stride, tmp_path):
    """QLinearConvs over small images run with their output channels in the vector lanes
    (krnl.qmatmul's a_panels, b_blocked, transposed_c): onnxruntime's bytes, with pixels
    not a multiple of the 4 rows a scatter stores, nor of a row tile, and channels not of
    a vector."""
    rng = np.random.default_rng(out_channels)
    weights = rng.integers(-128, 127, (out_channels, x_shape[1], kernel, kernel)).astype(np.int8)
    pads = [kernel // 2] * 4
    model = _qlinear_conv_model(np.uint8, x_shape, weights, rng, pads=pads, strides=[stride] * 2)
    assert "transposed_c" in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    x = rng.integers(0, 255, x_shape, endpoint=True).astype(np.uint8)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(actual, _reference(model, {"x": x}))


def test_im2col_panels_step_an_odd_number_of_lines(tmp_path):
    """The im2col matrix of a 32x32 image (1024 columns) is packed 1040 columns wide: the
    kernel's K4 steps 4160 bytes apart (65 cache lines) spread over the cache's sets; 4096
    bytes apart they all fell in one (3x3 256 -> 256: 3.9 ms, 1.67 skewed; onnxruntime 1.7)."""
    rng = np.random.default_rng(2)
    weights = rng.integers(-128, 127, (16, 8, 3, 3)).astype(np.int8)
    model = _qlinear_conv_model(np.uint8, (1, 8, 32, 32), weights, rng, pads=[1, 1, 1, 1])
    assert "memref<18x1040x4xui8>" in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    x = rng.integers(0, 255, (1, 8, 32, 32), endpoint=True).astype(np.uint8)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(actual, _reference(model, {"x": x}))


def test_conv_integer_in_lanes_is_exact(tmp_path):
    """ConvInteger in the lanes stores its int32 sums transposed, lane by lane: the reference's."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 255, (1, 72, 7, 7), endpoint=True).astype(np.uint8)
    initializers = [numpy_helper.from_array(rng.integers(-128, 127, (32, 72, 1, 1)).astype(np.int8), "w"),
                    numpy_helper.from_array(np.uint8(9), "xz")]  # fmt: skip
    node = onnx.helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"])
    graph = onnx.helper.make_graph(
        [node], "conv", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, x.shape)],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT32, (1, 32, 7, 7))], initializers,
    )  # fmt: skip
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    model.ir_version = 8
    assert "transposed_c" in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})[0]
    np.testing.assert_array_equal(actual, ReferenceEvaluator(model).run(None, {"x": x})[0])


def test_portable_int32_path_matches_vnni(tmp_path):
    """The int32 epilogue of an x86-64-v3 build (portable dot product) gives the host's sums."""
    model = _model("resnet", "dynamic")
    feeds = quantized.random_inputs(model, 6)
    host = onnxc.Session(onnxc.compile(model, tmp_path / "host.so")).run(None, feeds)[0]
    portable = onnxc.Session(onnxc.compile(model, tmp_path / "v3.so", cpu="x86-64-v3")).run(None, feeds)[0]
    np.testing.assert_allclose(portable, host, rtol=REASSOCIATED_SUM_RTOL, atol=0)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["aarch64", "riscv64"])
@pytest.mark.parametrize("quant_format", ["qdq", "dynamic"])
def test_int8_foreign_target_matches_x86(target, quant_format, tmp_path):
    require_emulator(target)
    _matches_x86(target, "resnet", quant_format, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["ppc64le", "s390x"])
@pytest.mark.parametrize("name", quantized.MODELS)
@pytest.mark.parametrize("quant_format", ["qdq", "qoperator", "dynamic"])
def test_int8_models_on_foreign_targets_match_x86(target, name, quant_format, tmp_path):
    """Issue #20's models in each of onnxruntime.quantization's formats, built for ppc64le and
    big-endian s390x, under qemu: the x86 build's results (the integer sums exact; the float ops
    around them, BERT's LayerNorm and Softmax, the LSTM's gates, rounded with each target's
    vectors: within 1e-5 of the output's largest magnitude)."""
    require_emulator(target)
    _matches_x86(target, name, quant_format, tmp_path, scaled_atol=1e-5)


def _matches_x86(target: str, name: str, quant_format: str, tmp_path, scaled_atol: float = 0.0) -> None:
    model = _model(name, quant_format)
    feeds = quantized.random_inputs(model, 8)
    host = onnxc.Session(onnxc.compile(model, tmp_path / "host.so")).run(None, feeds)[0]
    library = onnxc.compile(model, tmp_path / f"{target}.so", target=target)
    emulated = EmulatedSession(library).run(None, feeds)[0]
    atol = scaled_atol * float(np.abs(host).max())
    np.testing.assert_allclose(emulated, host, rtol=REASSOCIATED_SUM_RTOL, atol=atol)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["ppc64le", "s390x"])
@pytest.mark.parametrize("conv", ["lanes", "depthwise"])
def test_int8_convs_on_foreign_targets_match_x86(target, conv, tmp_path):
    """A conv in the lanes (transposed stores 4 rows of bytes at a time, B in blocks, rows
    split evenly) and a strided depthwise conv: the x86 build's bytes on big-endian s390x and
    on ppc64le, under qemu."""
    require_emulator(target)
    rng = np.random.default_rng(8)
    if conv == "lanes":
        weights = rng.integers(-128, 127, (40, 64, 3, 3)).astype(np.int8)
        model = _qlinear_conv_model(np.uint8, (1, 64, 7, 7), weights, rng, pads=[1, 1, 1, 1])
    else:
        model = _depthwise_model(np.uint8, 24, 35, 2, rng)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = rng.integers(0, 255, shape, endpoint=True).astype(np.uint8)
    host = onnxc.Session(onnxc.compile(model, tmp_path / "host.so")).run(None, {"x": x})[0]
    library = onnxc.compile(model, tmp_path / f"{target}.so", target=target)
    np.testing.assert_array_equal(EmulatedSession(library).run(None, {"x": x})[0], host)


@pytest.mark.parametrize("quant_format", ["qdq", "qoperator"])
def test_quantized_classifier_runs_on_the_int8_kernel(quant_format, tmp_path):
    """A Gemm head (QOperator's QGemm, QDQ's Gemm between DequantizeLinears) runs as
    MatMulInteger on krnl.qmatmul, the bias added in int32 and the sums scaled to float,
    rather than as a float Gemm of float weights: onnxruntime's result to float rounding."""
    rng = np.random.default_rng(3)
    weights = numpy_helper.from_array(rng.standard_normal((10, 64)).astype(np.float32), "w")
    bias = numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "b")
    node = onnx.helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)
    graph = onnx.helper.make_graph(
        [node], "head", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (1, 64))],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, (1, 10))], [weights, bias],
    )  # fmt: skip
    base = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    base.ir_version = 8
    model = quantized.quantize(base, quant_format, calibration_samples=2)
    krnl = onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl").read_text()
    assert "krnl.qmatmul" in krnl and "64x10xf32" not in krnl and "10x64xf32" not in krnl  # no float weights
    feeds = quantized.random_inputs(model, 1)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, feeds)[0]
    np.testing.assert_allclose(actual, _reference(model, feeds), rtol=1e-5, atol=1e-5 + _last_step(model))


@pytest.mark.parametrize("rows", [1, 2, 3, 12])
@pytest.mark.parametrize("cpu", [None, "x86-64-v3"])
def test_few_row_products_are_exact(rows, cpu, tmp_path):
    """MatMulInteger of 1-3 rows by constant weights: the micro-kernel keeps several sets of
    accumulators (MIN_CHAINS), each summing every few groups of 4 products, K = 54 leaving
    groups past the last whole round of sets; the int32 sums are numpy's, on the VNNI path
    and the portable one."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 256, (rows, 54), dtype=np.uint8)
    weights = rng.integers(-128, 128, (54, 40), dtype=np.int8)
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("MatMulInteger", ["a", "b", "za"], ["y"])],
        "few_rows",
        [onnx.helper.make_tensor_value_info("a", onnx.TensorProto.UINT8, [rows, 54])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT32, [rows, 40])],
        [numpy_helper.from_array(weights, "b"), numpy_helper.from_array(np.array(7, np.uint8), "za")],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)], ir_version=8)
    assert "krnl.qmatmul" in onnxc.compile(model, tmp_path / "m.krnl.mlir", emit="krnl", cpu=cpu).read_text()
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so", cpu=cpu)).run(None, {"a": a})[0]
    np.testing.assert_array_equal(actual, (a.astype(np.int32) - 7) @ weights.astype(np.int32))
