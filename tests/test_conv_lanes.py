"""Convs over small images, and strided ones, with the output channels in the vector lanes
(passes/onnx_to_krnl/conv_lanes.py: krnl.matmul with a window A and a transposed C): against
onnxruntime at channel counts that are and are not multiples of the vector width, over
7x7, 14x14 and odd image sizes, with several reduction blocks (the partial sums kept in the
thread's scratch), with the epilogue (bias, BatchNormalization, Relu/Clip, a residual Add
accumulated in place), a batch, two threads, AVX2's narrower tiles and the cross targets;
and the convs left to the other paths (wide images, run-time sizes, strides, groups).
Tolerance: 1e-4 of the output's largest magnitude.
"""

from __future__ import annotations

import re

import numpy as np
import onnxruntime
import pytest
from onnx import helper
from test_kernels import check, krnl_text, model_of, rand

import onnxc
from onnxc.codegen import emit_object, resolve_target
from onnxc.dialects import make_context
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass

LANES = "a_layout = #krnl<a_layout window>"


def lanes_model(batch, channels, out_channels, size, then=(), bias=True, kernel=3, stride=1):
    """x -> Conv kernel x kernel (pads kernel // 2, `stride`) -> `then` ("bn", "relu", "clip"),
    weights scaled to keep sums near 1."""
    x = rand(batch, channels, size, size)
    initializers = {"w": rand(out_channels, channels, kernel, kernel) * (1 / (kernel * channels**0.5))}
    inputs = ["x", "w"]
    if bias:
        initializers["b"] = rand(out_channels)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c"], pads=[kernel // 2] * 4, strides=[stride] * 2)]
    last = "c"
    for step in then:
        if step == "bn":
            for name in ("scale", "shift", "mean"):
                initializers[name] = rand(out_channels)
            initializers["var"] = np.abs(rand(out_channels)) + 0.5
            nodes.append(helper.make_node("BatchNormalization", [last, "scale", "shift", "mean", "var"], ["n"]))
            last = "n"
        elif step == "relu":
            nodes.append(helper.make_node("Relu", [last], ["r"]))
            last = "r"
        elif step == "clip":
            initializers["low"], initializers["high"] = np.float32(0.0), np.float32(0.5)
            nodes.append(helper.make_node("Clip", [last, "low", "high"], ["k"]))
            last = "k"
    out = (size + 2 * (kernel // 2) - kernel) // stride + 1
    return model_of(nodes, {"x": x}, initializers, last, (batch, out_channels, out, out)), x


@pytest.mark.parametrize(
    "batch, channels, out_channels, size, then, kernel, stride",
    [
        (1, 32, 64, 7, ("relu",), 3, 1),  # 7x7: tiles of two output rows
        (1, 32, 40, 7, ("bn", "relu"), 3, 1),  # 40 channels: a masked column tile
        (2, 300, 72, 7, ("clip",), 3, 1),  # K = 2700: 22 reduction blocks, partial sums in scratch; a batch
        (1, 130, 120, 14, ("relu",), 3, 1),  # 14x14, 120 channels; K = 1170
        (1, 32, 100, 13, (), 3, 1),  # odd size: tiles of one whole row
        (1, 32, 48, 12, ("relu",), 3, 1),  # 12x12: tiles of one whole row
        (1, 32, 40, 6, (), 3, 1),  # 6x6: tiles of two rows; 40 channels: a masked vector
        (1, 300, 64, 7, ("relu",), 1, 1),  # a 1x1 conv over 7x7
        (1, 64, 48, 28, ("relu",), 3, 2),  # stride 2 to 14x14, read from the padded image in place
        (1, 40, 24, 13, (), 3, 2),  # stride 2 from an odd size to 7x7
        (1, 272, 64, 13, (), 1, 2),  # 1x1 stride 2 to 7x7
    ],
)
def test_conv_in_lanes(batch, channels, out_channels, size, then, kernel, stride, tmp_path):
    model, x = lanes_model(batch, channels, out_channels, size, then, kernel=kernel, stride=stride)
    text = krnl_text(model)
    assert LANES in text and "transposed_c" in text
    assert not re.search(r"arith\.(add|maximum|minimum)f", text)  # the epilogue is the kernel's
    check(model, {"x": x}, tmp_path)


def test_conv_in_lanes_without_bias(tmp_path):
    model, x = lanes_model(1, 32, 64, 7, bias=False)
    assert LANES in krnl_text(model)
    check(model, {"x": x}, tmp_path)


def test_conv_in_lanes_accumulates_over_several_blocks(tmp_path):
    """A residual Add accumulated in place: the first of 3 reduction blocks (K = 40 * 9) gathers the
    shortcut, the last one scatters the sum; 48 channels (a masked tile on AVX-512)."""
    x = rand(1, 40, 7, 7)
    initializers = {"w1": rand(48, 40, 1, 1), "w2": rand(48, 40, 3, 3) * 0.05, "b2": rand(48)}
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["r"]),
        helper.make_node("Conv", ["x", "w2", "b2"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["r", "c"], ["s"]),
        helper.make_node("Relu", ["s"], ["y"]),
    ]
    model = model_of(nodes, {"x": x}, initializers, "y", (1, 48, 7, 7))
    text = krnl_text(model)
    assert LANES in text and re.search(r"\baccumulate\b(?! =)", text)
    check(model, {"x": x}, tmp_path)


@pytest.mark.parametrize("out_channels, size", [(256, 7), (64, 14)])  # threads split columns, then rows
def test_conv_in_lanes_on_two_threads(out_channels, size, tmp_path):
    model, x = lanes_model(1, 96, out_channels, size, ("relu",))
    assert LANES in krnl_text(model)
    (expected,) = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    library = onnxc.compile(model, tmp_path / "model.so")
    for _ in range(3):
        (actual,) = onnxc.Session(library, threads=2).run(None, {"x": x})
        assert float(np.abs(actual - expected).max()) <= 1e-4 * float(np.abs(expected).max())


def test_conv_in_lanes_avx2(tmp_path):
    """x86-64-v3: 8-float vectors, one per tile row, tiles of 7 rows (13 would fit, not divide)."""
    model, x = lanes_model(1, 32, 44, 14, ("relu",))
    check(model, {"x": x}, tmp_path, target=resolve_target("x86_64", cpu="x86-64-v3"))


@pytest.mark.parametrize("spelling", ["ppc64le", "s390x", "aarch64"])
def test_cross_targets_build_the_lanes_kernel(spelling):
    model, _ = lanes_model(1, 32, 44, 7, ("bn", "relu"))
    module = import_model(model)
    for name in ("shape-inference", "convert-onnx-to-krnl", "convert-krnl-to-loops"):
        get_pass(name)().apply(make_context(), module)
    assert len(emit_object(module, resolve_target(spelling))) > 0


@pytest.mark.parametrize(
    "channels, size, out_channels, kernel, attributes",
    [
        (32, 112, 64, 3, {}),  # wide rows: 2% of padding columns, not worth the transposed store
        (32, 7, 20, 3, {}),  # 20 channels round up to 32 lanes: more waste than the padding columns
        (8, 7, 64, 3, {}),  # K = 72: too short a reduction for the transposed store
        (256, 28, 64, 1, {"strides": [2, 2]}),  # a 1x1 stride-2 conv to 14x14: packed
        (32, 7, 64, 3, {"group": 2}),
        (32, 17, 64, 3, {}),  # 17 wide: no tile of 12 to 14 rows divides a row
        (32, 32, 64, 3, {}),  # 32 wide: tiles of 8 rows, too few
        (256, 14, 64, 1, {}),  # a 1x1 conv over 14x14: its 196 pixels fill 7 tiles of 32 well enough
    ],
)
def test_convs_left_to_the_other_paths(channels, size, out_channels, kernel, attributes, tmp_path):
    x = rand(1, channels, size, size)
    group = attributes.get("group", 1)
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[kernel // 2] * 4, **attributes)
    out = (size + 2 * (kernel // 2) - kernel) // attributes.get("strides", [1])[0] + 1
    weights = rand(out_channels, channels // group, kernel, kernel) * 0.1
    model = model_of([node], {"x": x}, {"w": weights}, "y", (1, out_channels, out, out))
    assert LANES not in krnl_text(model)
    check(model, {"x": x}, tmp_path)


def test_conv_of_a_run_time_image_is_not_in_lanes(tmp_path):
    """Symbolic height and width: the lanes need the tile rows to divide the output's width, known
    at compile time; the run-time image is packed im2col-style, as before, at any size."""
    x = rand(1, 32, 7, 7)
    node = helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1])
    model = model_of(
        [node, helper.make_node("Relu", ["c"], ["y"])], {"x": x}, {"w": rand(64, 32, 3, 3), "b": rand(64)}, "y", None
    )
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "H"
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_param = "W"
    text = krnl_text(model)
    assert LANES not in text and "b_access im2col" in text
    library = onnxc.compile(model, tmp_path / "model.so")
    session = onnxruntime.InferenceSession(model.SerializeToString())
    for size in (7, 14, 9):
        image = rand(1, 32, size, size)
        (expected,) = session.run(None, {"x": image})
        (actual,) = onnxc.Session(library).run(None, {"x": image})
        assert float(np.abs(actual - expected).max()) <= 1e-4 * float(np.abs(expected).max())
