"""CNN kernels over images whose height and width are known at run time only (detectors, OCR
and segmentation models are exported so) take the kernels of static sizes: pools over phase
planes or rows, strided grouped convs read straight from x (their edges checked against the
image's bounds), phase planes written once. Compared with ONNX's reference at many sizes,
down to images smaller than a window."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc

SIZES = [(1, 1), (2, 3), (3, 2), (5, 5), (6, 41), (33, 20), (40, 39)]


def _free_image_model(node: onnx.NodeProto, channels: int, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "free_image",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", channels, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _check_sizes(model: onnx.ModelProto, channels: int, tmp_path) -> None:
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    reference = ReferenceEvaluator(model)
    rng = np.random.default_rng(0)
    for height, width in SIZES:
        feed = {"x": rng.standard_normal((2, channels, height, width)).astype(np.float32)}
        try:
            (want,) = reference.run(None, feed)
        except (ValueError, IndexError):  # the reference refuses a window larger than the padded image
            continue
        (got,) = session.run(None, feed)
        assert got.shape == want.shape, (height, width)
        assert np.abs(got - want).max(initial=0) <= 1e-5 * max(1.0, np.abs(want).max(initial=0)), (height, width)


@pytest.mark.parametrize(
    "op_type, attributes",
    [
        ("MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),  # ResNet's
        ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
        ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        ("MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2], "dilations": [2, 2]}),
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [1, 1]}),
        ("AveragePool", {"kernel_shape": [3, 3], "pads": [1, 0, 2, 1], "strides": [2, 2], "count_include_pad": 1}),
        ("AveragePool", {"kernel_shape": [5, 5], "pads": [2, 2, 2, 2], "strides": [3, 3]}),
        ("LpPool", {"kernel_shape": [2, 3], "strides": [1, 2], "p": 2}),
    ],
)
def test_pool_of_a_free_image(op_type, attributes, tmp_path):
    _check_sizes(_free_image_model(helper.make_node(op_type, ["x"], ["y"], **attributes), 5), 5, tmp_path)


@pytest.mark.parametrize(
    "channels, kernel, stride, pads, group, dilation",
    [
        (8, 3, 2, [1, 1, 1, 1], 8, 1),  # MobileNet's strided depthwise conv
        (16, 3, 2, [0, 1, 1, 0], 16, 1),
        (8, 2, 2, [0, 0, 0, 0], 8, 1),
        (12, 3, 2, [1, 1, 1, 1], 3, 1),  # groups of 4 channels (ResNeXt's)
        (8, 3, 3, [1, 2, 0, 1], 8, 1),
        (8, 3, 2, [1, 1, 1, 1], 8, 2),  # dilated: the phase planes
        (8, 5, 2, [2, 2, 2, 2], 8, 1),  # wider than STRIDED_MAX_KERNEL: the phase planes
        (8, 3, 1, [1, 1, 1, 1], 8, 1),
    ],
)
def test_grouped_conv_of_a_free_image(channels, kernel, stride, pads, group, dilation, tmp_path):
    rng = np.random.default_rng(1)
    weights = numpy_helper.from_array(
        rng.standard_normal((channels, channels // group, kernel, kernel)).astype(np.float32), "w"
    )
    bias = numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), "b")
    attributes = {"group": group, "pads": pads, "strides": [stride, stride], "dilations": [dilation, dilation]}
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attributes)
    _check_sizes(_free_image_model(node, channels, [weights, bias]), channels, tmp_path)


def test_a_run_of_empty_buffers_only(tmp_path):
    """A 2x2 pool of a 1x1 image: an empty result, and no buffer of the run holds anything; the
    run still gets an arena (it had none: ONNXC_ERR_NOMEM)."""
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    session = onnxc.Session(onnxc.compile(_free_image_model(node, 3), tmp_path / "pool.so"))
    (got,) = session.run(None, {"x": np.ones((1, 3, 1, 1), np.float32)})
    assert got.shape == (1, 3, 0, 0)


def test_concat_in_place_of_a_free_image(tmp_path):
    """Branches computed straight into their slices of Concats at run-time offsets (channels
    before them times height times width): convs, an element-wise op, a nested Concat, the graph
    input (copied) and a value read twice (copied)."""
    rng = np.random.default_rng(2)
    weights = [
        numpy_helper.from_array(rng.standard_normal((c, 4, k, k)).astype(np.float32), f"w{c}")
        for c, k in ((3, 1), (5, 3))
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w3"], ["a"]),
        helper.make_node("Conv", ["x", "w5"], ["b"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Concat", ["a", "x", "b"], ["inner"], axis=1),
        helper.make_node("Concat", ["inner", "r", "a"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "pyramid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "pyramid.so"))
    for height, width in [(1, 1), (3, 7), (16, 9), (40, 39)]:
        feed = {"x": rng.standard_normal((1, 4, height, width)).astype(np.float32)}
        (want,) = ReferenceEvaluator(model).run(None, feed)
        (got,) = session.run(None, feed)
        assert got.shape == want.shape == (1, 19, height, width)
        assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), (height, width)


def _loops_function(model: onnx.ModelProto, tmp_path):
    """The graph function at the loops level (`onnxc --emit loops`)."""
    from xdsl.dialects import func
    from xdsl.parser import Parser

    from onnxc.dialects import make_context

    path = tmp_path / "model.loops.mlir"
    onnxc.compile(model, path, emit="loops")
    module = Parser(make_context(), path.read_text()).parse_module()
    return next(op for op in module.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == "main_graph")


def test_strided_conv_of_a_free_image_splits_over_threads(tmp_path):
    """The strided depthwise conv read straight from x is a branch taken at run time around
    one nest: the thread pool splits that nest's channel loop (it ran on one thread)."""
    from xdsl.dialects import scf

    from onnxc.codegen.parallel import parallel_loop

    weights = numpy_helper.from_array(np.full((96, 1, 3, 3), 0.5, np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=96, pads=[1, 1, 1, 1], strides=[2, 2])
    model = _free_image_model(node, 96, [weights])
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1  # a detector's batch of one
    function = _loops_function(model, tmp_path)
    branches = [op for op in function.body.block.ops if isinstance(op, scf.IfOp)]
    split = [parallel_loop(op) for op in branches]
    assert any(loop is not None and loop.trip_count == 96 for loop in split)


def test_stages_of_a_free_image_share_arena_memory(tmp_path):
    """Buffers of run-time size are placed per unit (a stage's height x width); the stages of a
    CNN live one after the other, and their regions share slots of the arena."""
    from onnxc.codegen.arena import plan_arena

    nodes = [
        helper.make_node("Relu", ["x"], ["r0"]),
        helper.make_node("MaxPool", ["r0"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Relu", ["p1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Relu", ["p2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p3"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Relu", ["p3"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "stages",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    plan = plan_arena(_loops_function(model, tmp_path))
    assert len({region.unit for region in plan.regions}) >= 3
    assert len({region.slot for region in plan.regions}) < len(plan.regions)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "stages.so"))
    for height, width in [(8, 8), (37, 64)]:
        feed = {"x": np.random.default_rng(3).standard_normal((1, 4, height, width)).astype(np.float32)}
        (want,) = ReferenceEvaluator(model).run(None, feed)
        (got,) = session.run(None, feed)
        assert np.array_equal(got, want)
