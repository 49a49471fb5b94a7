"""An inverted residual's 1x1 Conv and depthwise Conv in groups of channels
(passes/expand_depthwise_tiles.py): the group counts the rule gives, which graphs are split
(activations of several ops on either side, a squeeze-and-excitation reading the activation
after, strides, batches) and which are left whole (the wide tensor read elsewhere, a 3x3
expansion, channels that do not divide), each against onnxruntime."""

from __future__ import annotations

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
from onnxc.passes.expand_depthwise_tiles import group_count


@pytest.mark.parametrize(
    "channels, height, groups",
    [
        (96, 112, 3),  # 32 channels of 112x112 (1.6 MB) is as small as groups go
        (144, 56, 3),  # 48: 36 is no multiple of 8
        (192, 28, 3),  # 64 channels of 28x28: 200 KB
        (384, 14, 2),  # 192 of 14x14: 150 KB
        (960, 7, 1),  # 188 KB in all: left whole
        (72, 56, 1),  # no group of 32 or more channels, a multiple of 8
    ],
)
def test_group_count(channels, height, groups):
    assert group_count(channels, height * height * 4) == groups


def _block(
    x_shape: tuple, expanded: int, pre: str, post: str, stride: int = 1, kernel: int = 3, squeeze: bool = False
) -> onnx.ModelProto:
    """x -> 1x1 Conv to `expanded` channels -> `pre` -> depthwise Conv -> `post` [-> x * SE(x)]."""
    channels = x_shape[1]
    initializers = [
        numpy_helper.from_array(rand(expanded, channels, 1, 1) * 0.3, "we"),
        numpy_helper.from_array(rand(expanded), "be"),
        numpy_helper.from_array(rand(expanded, 1, kernel, kernel) * 0.3, "wd"),
        numpy_helper.from_array(rand(expanded), "bd"),
        numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
    ]
    nodes = [helper.make_node("Conv", ["x", "we", "be"], ["e"], name="expand")]

    def activation(kind: str, x: str, y: str) -> None:
        if kind == "relu6":
            nodes.append(helper.make_node("Clip", [x, "lo", "hi"], [y], name=f"{y}.clip"))
        elif kind == "silu":
            nodes.append(helper.make_node("Sigmoid", [x], [f"{y}.gate"], name=f"{y}.sigmoid"))
            nodes.append(helper.make_node("Mul", [x, f"{y}.gate"], [y], name=f"{y}.mul"))
        else:
            nodes.append(helper.make_node("HardSwish", [x], [y], name=f"{y}.hardswish"))

    activation(pre, "e", "a")
    pad = kernel // 2
    dw = helper.make_node(
        "Conv", ["a", "wd", "bd"], ["d"], group=expanded, pads=[pad] * 4, strides=[stride] * 2, name="dw"
    )
    nodes.append(dw)
    activation(post, "d", "y" if not squeeze else "p")
    if squeeze:  # squeeze-and-excitation: the activation's output read twice
        initializers.append(numpy_helper.from_array(rand(expanded, expanded, 1, 1) * 0.1, "ws"))
        nodes += [
            helper.make_node("GlobalAveragePool", ["p"], ["s"]),
            helper.make_node("Conv", ["s", "ws"], ["t"]),
            helper.make_node("Sigmoid", ["t"], ["u"]),
            helper.make_node("Mul", ["p", "u"], ["y"]),
        ]
    graph = helper.make_graph(
        nodes, "block", [value_info("x", np.float32, list(x_shape))], [helper.make_empty_tensor_value_info("y")],
        initializers,
    )  # fmt: skip
    return make_model(graph)


def _depthwise_convs(model: onnx.ModelProto) -> int:
    module = import_model(model)
    for name in ("shape-inference", "expand-depthwise-tiles"):
        get_pass(name)().apply(make_context(), module)
    return module_text(module).count("group = ")


@pytest.mark.parametrize(
    "x_shape, expanded, pre, post, stride, kernel, squeeze, groups",
    [
        ((1, 24, 56, 56), 144, "relu6", "relu6", 1, 3, False, 3),  # MobileNetV2
        ((1, 32, 28, 28), 192, "silu", "silu", 2, 5, True, 3),  # EfficientNet: SiLU, SE after the dw conv
        ((1, 16, 40, 40), 96, "hardswish", "hardswish", 1, 5, False, 3),  # MobileNetV3
        ((2, 24, 56, 56), 144, "relu6", "silu", 2, 3, False, 3),  # a batch: the Concat copies
    ],
)
def test_split_block_matches_onnxruntime(x_shape, expanded, pre, post, stride, kernel, squeeze, groups, tmp_path):
    model = _block(x_shape, expanded, pre, post, stride, kernel, squeeze)
    assert _depthwise_convs(model) == groups
    x = rand(*x_shape)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})
    assert_matches(actual, expected_outputs(model, {"x": x}, "onnxruntime"))


def test_expanded_tensor_read_elsewhere_stays_whole(tmp_path):
    """The activation before the depthwise conv is also a graph output: not split."""
    model = _block((1, 24, 56, 56), 144, "relu6", "relu6")
    model.graph.output.append(helper.make_empty_tensor_value_info("a"))
    assert _depthwise_convs(model) == 1
    x = rand(1, 24, 56, 56)
    actual = onnxc.Session(onnxc.compile(model, tmp_path / "m.so")).run(None, {"x": x})
    assert_matches(actual, expected_outputs(model, {"x": x}, "onnxruntime"))


def test_wider_expansion_kernel_stays_whole():
    """A 3x3 Conv before the depthwise conv is no 1x1 expansion: not split."""
    model = _block((1, 24, 56, 56), 144, "relu6", "relu6")
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(rand(144, 24, 3, 3), "we"))
    model.graph.node[0].attribute.append(helper.make_attribute("pads", [1, 1, 1, 1]))
    assert _depthwise_convs(model) == 1


@pytest.mark.parametrize(
    "channels, expanded, pool, groups",
    [
        (24, 144, 4, 3),  # planes of (h - 4)//4 + 1: 56x56 at 224, 3 groups of 48 (as test_group_count)
        (160, 960, 32, 1),  # 7x7 at 224: left whole
    ],
)
def test_free_image_is_grouped_as_at_224(channels, expanded, pool, groups, tmp_path):
    """An image of run-time height and width, pooled before the block: its planes grouped as
    at a 224x224 image (the dims' expressions evaluated there), the groups joined at run-time
    offsets; against onnxruntime at several sizes, down to one pixel of planes."""
    model = _block((1, channels, "h", "w"), expanded, "relu6", "relu6", stride=2)
    model.graph.node.insert(
        0, helper.make_node("MaxPool", ["image"], ["x"], kernel_shape=[pool] * 2, strides=[pool] * 2)
    )
    model.graph.input[0].CopyFrom(value_info("image", np.float32, [1, channels, "h", "w"]))
    assert _depthwise_convs(model) == groups
    session = onnxc.Session(onnxc.compile(model, tmp_path / "m.so"))
    for height, width in [(224, 224), (84, 136), (pool, pool)]:
        image = rand(1, channels, height, width)
        assert_matches(session.run(None, {"image": image}), expected_outputs(model, {"image": image}, "onnxruntime"))
