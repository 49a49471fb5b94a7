"""Depthwise convs with channels in the vector lanes (passes/onnx_to_krnl/depthwise_lanes.py) and
the element-wise ops the depthwise paths compute in their store (conv_epilogue.py): against
onnxruntime over 7x7 to 56x56 images, at strides 1 and 2, odd sizes, uneven pads, dilation,
blocks of 16 and of 8 channels, a batch, two threads, each epilogue (Relu, Clip, HardSwish, SiLU
with its Mul's operands either way round); and the convs left to the NCHW paths (wide images,
channel counts not a multiple of 8), their Clip or HardSwish fused too (not SiLU); a batch of
run-time size in lanes; images of run-time size in lanes where they are small.
Tolerance: 1e-4 of the output's largest magnitude.
"""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper
from test_kernels import krnl_text, model_of, rand

import onnxc

LANES = 'depthwise lanes"'
"""The packed weights of a conv in lanes, in the krnl IR."""


def depthwise_model(channels, size, kernel=3, stride=1, pads=None, dilation=1, then=None, batch=1):
    """x -> depthwise Conv -> `then` ("relu", "clip", "hardswish", "silu", "silu_swapped")."""
    x = rand(batch, channels, size, size)
    pads = pads or [dilation * (kernel // 2)] * 4
    initializers = {"w": rand(channels, 1, kernel, kernel) * (1 / kernel), "b": rand(channels)}
    conv = helper.make_node(
        "Conv", ["x", "w", "b"], ["c"], group=channels, pads=pads, strides=[stride] * 2, dilations=[dilation] * 2
    )
    nodes, last = [conv], "c"
    if then == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    elif then == "clip":
        initializers["low"], initializers["high"] = np.float32(0.0), np.float32(0.5)
        nodes.append(helper.make_node("Clip", ["c", "low", "high"], ["y"]))
    elif then == "hardswish":
        nodes.append(helper.make_node("HardSwish", ["c"], ["y"]))
    elif then in ("silu", "silu_swapped"):
        nodes.append(helper.make_node("Sigmoid", ["c"], ["s"]))
        nodes.append(helper.make_node("Mul", ["c", "s"] if then == "silu" else ["s", "c"], ["y"]))
    last = "y" if then else last
    extent = dilation * (kernel - 1) + 1
    out_h = (size + pads[0] + pads[2] - extent) // stride + 1
    out_w = (size + pads[1] + pads[3] - extent) // stride + 1
    return model_of(nodes, {"x": x}, initializers, last, (batch, channels, out_h, out_w)), x


def compare(model, x, tmp_path, threads=1) -> None:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, {"x": x})
    library = onnxc.compile(model, tmp_path / "model.so")
    (actual,) = onnxc.Session(library, threads=threads).run(None, {"x": x})
    assert actual.shape == expected.shape
    scale = max(float(np.abs(expected).max()), 1e-6)
    assert float(np.abs(actual - expected).max()) <= 1e-4 * scale


@pytest.mark.parametrize(
    "channels, size, kernel, stride, pads, dilation, then, batch",
    [
        (32, 14, 3, 1, None, 1, None, 1),  # two blocks of 16
        (24, 7, 5, 1, None, 1, "relu", 1),  # blocks of 8; 7x7
        (48, 20, 3, 1, None, 1, "hardswish", 1),  # rows of 20: 16 pixels per chunk and a remainder of 4
        (48, 28, 3, 2, None, 1, "silu", 1),  # stride 2 to 14x14
        (16, 15, 5, 2, None, 1, "silu_swapped", 1),  # odd size, 5x5 stride 2 to 8x8
        (16, 14, 3, 2, [0, 0, 1, 1], 1, "clip", 2),  # SAME_UPPER-like pads, a batch
        (16, 13, 3, 1, [2, 0, 1, 3], 1, None, 1),  # uneven pads: rows and columns of padding only on some sides
        (32, 14, 3, 1, None, 2, None, 1),  # dilation 2
        (72, 56, 5, 2, None, 1, "hardswish", 1),  # MobileNetV3's 72 channels, 56x56 at stride 2: blocks of 8
    ],
)
def test_depthwise_in_lanes(channels, size, kernel, stride, pads, dilation, then, batch, tmp_path):
    model, x = depthwise_model(channels, size, kernel, stride, pads, dilation, then, batch)
    text = krnl_text(model)
    assert LANES in text
    assert text.count("krnl.iterate") == 1  # one nest: transposes, sums, epilogue
    compare(model, x, tmp_path)


@pytest.mark.parametrize("channels, size, stride", [(480, 14, 1), (240, 28, 2)])
def test_depthwise_in_lanes_on_two_threads(channels, size, stride, tmp_path):
    """The nest splits over the blocks of channels."""
    model, x = depthwise_model(channels, size, 5, stride, then="hardswish")
    compare(model, x, tmp_path, threads=2)


@pytest.mark.parametrize(
    "channels, size, stride, then, fused",
    [
        (32, 56, 1, "hardswish", True),  # a wide stride-1 image: shifted rows
        (32, 112, 2, "hardswish", True),  # a wide strided image: read straight from x
        (12, 14, 1, "clip", True),  # 12 channels: no block of 8
        (12, 14, 2, "hardswish", True),  # strided, over phase planes
        (32, 56, 1, "silu", False),  # SiLU keeps its own nest (see conv_epilogue.ARITHMETIC)
    ],
)
def test_depthwise_in_rows_epilogue(channels, size, stride, then, fused, tmp_path):
    """Convs left to the NCHW paths compute a Clip or HardSwish in their store (as many nests
    as the conv alone), not a SiLU."""
    model, x = depthwise_model(channels, size, 3, stride, then=then)
    alone, _ = depthwise_model(channels, size, 3, stride)
    text = krnl_text(model)
    assert LANES not in text
    assert (text.count("krnl.iterate") == krnl_text(alone).count("krnl.iterate")) == fused
    compare(model, x, tmp_path)


def test_depthwise_of_run_time_batch(tmp_path):
    """A batch of run-time size is put in lanes (torch's exports)."""
    model, x = depthwise_model(32, 14, 3, 1, then="hardswish", batch=2)
    dims = ["N", 32, 14, 14]
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, dims))
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, dims))
    assert LANES in krnl_text(model)
    compare(model, x, tmp_path, threads=2)


@pytest.mark.parametrize("stride, then", [(1, "hardswish"), (2, "silu"), (2, None)])
def test_depthwise_of_run_time_image(stride, then, tmp_path):
    """An image of run-time size goes in the lanes where it is small, decided at run time:
    the other sizes take the NCHW paths (strided: read straight where output rows are long
    enough, else the shifted rows); all from one library, of sizes that take each path
    (odd, tall, wide, rows of one run of outputs and of several with remainders), a SiLU in
    each path's store."""
    model, _ = depthwise_model(32, 14, 3, stride, then=then, batch=2)
    dims = ["N", 32, "H", "W"]
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", TensorProto.FLOAT, dims))
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info(model.graph.output[0].name, TensorProto.FLOAT, None))
    assert LANES in krnl_text(model)
    library = onnxc.compile(model, tmp_path / "model.so")
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for height, width in [(14, 14), (1, 1), (3, 19), (27, 23), (7, 45), (100, 30), (33, 33), (200, 30), (2, 90)]:
        x = rand(2, 32, height, width)
        (expected,) = session.run(None, {"x": x})
        (actual,) = onnxc.Session(library, threads=2).run(None, {"x": x})
        scale = max(float(np.abs(expected).max()), 1e-6)
        assert actual.shape == expected.shape
        assert float(np.abs(actual - expected).max()) <= 1e-4 * scale, (height, width)
