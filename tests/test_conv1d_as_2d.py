"""Conv1d as a 2-D conv of height 1 (passes/conv1d_as_2d.py), lowered as 2-D convs are:
strides larger and smaller than the kernel, uneven pads, dilation, groups, batches, with and
without bias, over static and symbolic dims (one library run at several lengths and
batches). Where the 2-D conv takes the GEMM kernel, krnl.matmul must be in the lowered IR;
references: onnxruntime (static) and onnx.reference (symbolic)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import assert_matches, expected_outputs, make_model, rand, value_info
from onnx import helper, numpy_helper

import onnxc
from onnxc.compiler import module_text
from onnxc.dialects import make_context
from onnxc.frontend.importer import import_model
from onnxc.passes import get_pass


def conv1d_model(x_dims: list, out_channels: int, kernel: int, bias: bool = True, **attrs) -> onnx.ModelProto:
    """One Conv over x of `x_dims` (ints or symbol names), random constant weights."""
    channels, group = x_dims[1], attrs.get("group", 1)
    initializers = [numpy_helper.from_array(rand(out_channels, channels // group, kernel), "w")]
    if bias:
        initializers.append(numpy_helper.from_array(rand(out_channels), "b"))
    node = helper.make_node("Conv", ["x", "w", *(["b"] if bias else [])], ["y"], kernel_shape=[kernel], **attrs)
    graph = helper.make_graph(
        [node],
        "conv1d",
        [value_info("x", np.float32, x_dims)],
        [helper.make_empty_tensor_value_info("y")],
        initializers,
    )
    return make_model(graph)


def lowered_to_gemm(model: onnx.ModelProto) -> bool:
    module = import_model(model)
    for name in ("shape-inference", "conv1d-as-2d", "convert-onnx-to-krnl"):
        get_pass(name)().apply(make_context(), module)
    return "krnl.matmul" in module_text(module)


@pytest.mark.parametrize(
    "x_shape, out_channels, kernel, bias, attrs, gemm",
    [
        ((1, 1, 100), 16, 10, True, {"strides": [5]}, True),  # wav2vec2's first layer: one input channel
        ((2, 6, 37), 20, 3, True, {"strides": [2], "pads": [1, 2]}, True),  # a batch, uneven pads
        ((1, 8, 9), 12, 5, False, {"pads": [2, 2], "group": 4}, False),  # 3 channels per group: not a GEMM
        ((1, 16, 9), 32, 5, True, {"pads": [2, 2], "group": 2}, True),  # groups of 16, kernel past the input
        ((1, 5, 30), 7, 2, True, {"strides": [3]}, True),  # stride past the kernel: skipped positions
        ((1, 3, 20), 4, 3, True, {"dilations": [2]}, True),
        ((1, 24, 50), 24, 5, True, {"pads": [2, 2], "group": 24}, False),  # depthwise
        ((1, 6, 11), 9, 1, True, {}, True),  # pointwise: the image read in place
    ],
)
def test_static_conv1d_matches_onnxruntime(x_shape, out_channels, kernel, bias, attrs, gemm, tmp_path):
    model = conv1d_model(list(x_shape), out_channels, kernel, bias, **attrs)
    assert lowered_to_gemm(model) == gemm
    x = rand(*x_shape)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})
    assert_matches(actual, expected_outputs(model, {"x": x}, "onnxruntime"))


@pytest.mark.parametrize(
    "x_dims, out_channels, kernel, bias, attrs, shapes",
    [
        (["n", 4, "l"], 16, 4, True, {"strides": [3], "pads": [1, 0], "group": 2}, [(1, 4, 20), (3, 4, 7), (2, 4, 4)]),
        ([1, 3, "l"], 5, 2, False, {"strides": [2]}, [(1, 3, 2), (1, 3, 33), (1, 3, 9)]),
    ],
)
def test_conv1d_over_symbolic_dims(x_dims, out_channels, kernel, bias, attrs, shapes, tmp_path):
    """One library for every length and batch: the GEMM over a run-time image, one per sample."""
    model = conv1d_model(x_dims, out_channels, kernel, bias, **attrs)
    assert lowered_to_gemm(model)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "m.so"))
    for shape in shapes:
        x = rand(*shape)
        assert_matches(session.run(None, {"x": x}), expected_outputs(model, {"x": x}, "onnx"))


def test_audio_encoder_over_a_run_time_number_of_samples(tmp_path):
    """benchmarks/families.py's wav2vec2-style encoder, small, with a symbolic number of
    samples: one library for three lengths (the strided front end, GroupNorm, the grouped
    positional conv and its [:-1] trim), against onnxruntime."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from families import wav2vec2_style

    model = wav2vec2_style(samples="samples", channels=32, width=48)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "m.so"))
    for samples in (1600, 2345, 4000):
        x = {"audio": rand(1, 1, samples)}
        assert_matches(session.run(None, x), expected_outputs(model, x, "onnxruntime"))
