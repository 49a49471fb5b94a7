"""Stride-1 convs over small images with the output channels in the vector lanes
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


def lanes_model(batch, channels, out_channels, size, then=(), bias=True):
    """x -> Conv 3x3 (pads 1) -> `then` ("bn", "relu", "clip"), weights scaled to keep sums near 1."""
    x = rand(batch, channels, size, size)
    initializers = {"w": rand(out_channels, channels, 3, 3) * (1 / (3 * channels**0.5))}
    inputs = ["x", "w"]
    if bias:
        initializers["b"] = rand(out_channels)
        inputs.append("b")
    nodes = [helper.make_node("Conv", inputs, ["c"], pads=[1, 1, 1, 1])]
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
    return model_of(nodes, {"x": x}, initializers, last, (batch, out_channels, size, size)), x


@pytest.mark.parametrize(
    "batch, channels, out_channels, size, then",
    [
        (1, 16, 64, 7, ("relu",)),  # 7x7: tiles of two output rows
        (1, 24, 40, 7, ("bn", "relu")),  # 40 channels: a masked column tile
        (2, 300, 72, 7, ("clip",)),  # K = 2700: 22 reduction blocks, partial sums in scratch; a batch
        (1, 130, 120, 14, ("relu",)),  # 14x14, 120 channels; K = 1170
        (1, 20, 100, 13, ()),  # odd size: tiles of one whole row
        (1, 12, 48, 9, ("relu",)),  # 9x9
        (1, 12, 40, 5, ()),  # smaller than a tile; 40 channels: a masked vector
    ],
)
def test_conv_in_lanes(batch, channels, out_channels, size, then, tmp_path):
    model, x = lanes_model(batch, channels, out_channels, size, then)
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
    model, x = lanes_model(1, 20, 44, 14, ("relu",))
    check(model, {"x": x}, tmp_path, target=resolve_target("x86_64", cpu="x86-64-v3"))


@pytest.mark.parametrize("spelling", ["ppc64le", "s390x", "aarch64"])
def test_cross_targets_build_the_lanes_kernel(spelling):
    model, _ = lanes_model(1, 20, 44, 7, ("bn", "relu"))
    module = import_model(model)
    for name in ("shape-inference", "convert-onnx-to-krnl", "convert-krnl-to-loops"):
        get_pass(name)().apply(make_context(), module)
    assert len(emit_object(module, resolve_target(spelling))) > 0


@pytest.mark.parametrize(
    "size, out_channels, attributes",
    [
        (56, 64, {}),  # wide rows: 3% of padding columns, not worth the transposed store
        (7, 20, {}),  # 20 channels round up to 32 lanes: more waste than the padding columns
        (7, 64, {"strides": [2, 2]}),
        (7, 64, {"group": 2}),
        (17, 64, {}),  # 17 wide: no tile of 7 to 14 rows divides a row
    ],
)
def test_convs_left_to_the_other_paths(size, out_channels, attributes, tmp_path):
    x = rand(1, 8, size, size)
    group = attributes.get("group", 1)
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], **attributes)
    out = size if "strides" not in attributes else (size + 1) // 2
    model = model_of([node], {"x": x}, {"w": rand(out_channels, 8 // group, 3, 3)}, "y", (1, out_channels, out, out))
    assert LANES not in krnl_text(model)
    check(model, {"x": x}, tmp_path)


def test_conv_of_a_run_time_image_is_not_in_lanes(tmp_path):
    """Symbolic height and width: the lanes need the tile rows to divide the output's width, known
    at compile time; the run-time image is packed im2col-style, as before, at any size."""
    x = rand(1, 16, 7, 7)
    node = helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1])
    model = model_of(
        [node, helper.make_node("Relu", ["c"], ["y"])], {"x": x}, {"w": rand(64, 16, 3, 3), "b": rand(64)}, "y", None
    )
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "H"
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_param = "W"
    text = krnl_text(model)
    assert LANES not in text and "b_access im2col" in text
    library = onnxc.compile(model, tmp_path / "model.so")
    session = onnxruntime.InferenceSession(model.SerializeToString())
    for size in (7, 14, 9):
        image = rand(1, 16, size, size)
        (expected,) = session.run(None, {"x": image})
        (actual,) = onnxc.Session(library).run(None, {"x": image})
        assert float(np.abs(actual - expected).max()) <= 1e-4 * float(np.abs(expected).max())
