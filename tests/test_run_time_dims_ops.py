"""More lowerings over run-time dims: each op compiles once with symbolic input
dims and runs at a few shapes, against onnx.reference (see test_run_time_dims.py
for whole models)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from helpers import assert_matches, expected_outputs, ints, make_model, rand, value_info
from onnx import helper, numpy_helper

import onnxc

Feeds = Callable[[tuple], dict[str, np.ndarray]]
"""A run's shape (or shapes) -> the inputs of the run."""


def node_model(
    op_type: str,
    inputs: dict[str, tuple[np.dtype, list]],
    attrs: dict | None = None,
    initializers: dict[str, np.ndarray] | None = None,
    outputs: int = 1,
    opset: int = 21,
) -> onnx.ModelProto:
    """One node over graph inputs of symbolic shapes (name -> (dtype, dims)) and constant initializers."""
    initializers = initializers or {}
    names = [*inputs, *initializers]
    output_names = [f"y{k}" for k in range(outputs)]
    node = helper.make_node(op_type, names, output_names, **(attrs or {}))
    graph = helper.make_graph(
        [node],
        op_type.lower(),
        [value_info(n, dtype, dims) for n, (dtype, dims) in inputs.items()],
        [helper.make_empty_tensor_value_info(n) for n in output_names],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()],
    )
    return make_model(graph, opset)


def check_shapes(model: onnx.ModelProto, feeds: Feeds, shapes: list, tmp_path, reference: str = "onnx") -> None:
    """One library, run at every shape, matches the reference (onnx.reference or
    onnxruntime) at each."""
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    for shape in shapes:
        inputs = feeds(shape)
        assert_matches(session.run(None, inputs), expected_outputs(model, inputs, reference))


F32, I64 = np.dtype(np.float32), np.dtype(np.int64)


# ------------------------------------------------------------------ indexed and triangular ops


def test_trilu_and_cumsum_over_run_time_dims(tmp_path):
    model = node_model("Trilu", {"x": (F32, ["n", "h", "w"])}, {"upper": 0}, {"k": np.array(1, np.int64)})
    check_shapes(model, lambda s: {"x": rand(*s)}, [(1, 3, 4), (2, 5, 2)], tmp_path)
    model = node_model("CumSum", {"x": (F32, ["n", "t"])}, {"reverse": 1}, {"axis": np.array(1, np.int64)})
    check_shapes(model, lambda s: {"x": rand(*s)}, [(1, 7), (3, 2)], tmp_path)


def test_scatters_over_run_time_dims(tmp_path):
    model = node_model(
        "ScatterElements",
        {"data": (F32, ["n", "m"]), "indices": (I64, ["n", "k"]), "updates": (F32, ["n", "k"])},
        {"axis": 1, "reduction": "add"},
    )

    def elements(shape):
        n, m, k = shape
        return {"data": rand(n, m), "indices": ints(n, k, low=-m, high=m), "updates": rand(n, k)}

    check_shapes(model, elements, [(2, 5, 3), (4, 2, 6)], tmp_path)
    model = node_model(
        "ScatterND", {"data": (F32, ["a", "b", "c"]), "indices": (I64, ["k", 2]), "updates": (F32, ["k", "c"])}
    )

    def nd(shape):
        a, b, c = shape
        rows = np.random.default_rng(a).permutation(a * b)[: min(a * b, 3)]  # distinct: the order is unspecified
        return {"data": rand(a, b, c), "indices": np.stack([rows // b, rows % b], 1), "updates": rand(len(rows), c)}

    check_shapes(model, nd, [(2, 3, 4), (1, 1, 2)], tmp_path)


def test_one_hot_and_tensor_scatter_over_run_time_dims(tmp_path):
    model = node_model(
        "OneHot", {"indices": (I64, ["n", "t"])}, {"axis": 1},
        {"depth": np.array(5, np.int64), "values": np.array([0.5, 2.0], np.float32)},
    )  # fmt: skip
    check_shapes(model, lambda s: {"indices": ints(*s, low=-5, high=5)}, [(1, 3), (4, 2)], tmp_path)
    model = node_model(
        "TensorScatter",
        {"cache": (F32, ["b", "h", "s", "d"]), "update": (F32, ["b", "h", "u", "d"]), "at": (I64, ["b"])},
        {"axis": 2, "mode": "circular"},
        opset=24,
    )

    def scatter(shape):
        b, h, s, u, d = shape
        return {"cache": rand(b, h, s, d), "update": rand(b, h, u, d), "at": ints(b, low=0, high=s)}

    check_shapes(model, scatter, [(1, 2, 5, 2, 3), (2, 1, 4, 3, 2)], tmp_path)


# ------------------------------------------------------------------------------ quantization


def test_quantize_with_scales_of_run_time_length(tmp_path):
    """A 1-D scale of run-time length is per axis, or one value for the whole tensor."""
    model = node_model(
        "QuantizeLinear",
        {"x": (F32, ["n", "c", "w"]), "scale": (F32, ["k"]), "zero": (np.dtype(np.uint8), ["k"])},
        {"axis": 1},
    )

    def feeds(shape):
        n, c, w, k = shape
        return {
            "x": rand(n, c, w) * 20,
            "scale": rand(k, low=0.1, high=1),
            "zero": ints(k, dtype=np.uint8, low=0, high=40),
        }

    check_shapes(model, feeds, [(2, 3, 4, 3), (1, 5, 2, 1)], tmp_path)


def test_blocked_dequantize_over_run_time_dims(tmp_path):
    model = node_model(
        "DequantizeLinear",
        {
            "x": (np.dtype(np.int8), ["n", "c"]),
            "scale": (F32, ["n", "blocks"]),
            "zero": (np.dtype(np.int8), ["n", "blocks"]),
        },
        {"axis": 1, "block_size": 2},
    )

    def feeds(shape):
        n, c = shape
        blocks = -(-c // 2)
        return {
            "x": ints(n, c, dtype=np.int8),
            "scale": rand(n, blocks, low=0.1, high=1),
            "zero": ints(n, blocks, dtype=np.int8),
        }

    check_shapes(model, feeds, [(2, 5), (3, 2)], tmp_path)


# ------------------------------------------------------------------------------------ Gemm


def test_gemm_of_run_time_rows_on_the_packed_kernel(tmp_path):
    """A Linear layer over a batch: constant W^T packed at compile time, bias [N]."""
    model = node_model(
        "Gemm", {"x": (F32, ["batch", 24])}, {"transB": 1, "alpha": 0.5, "beta": 2.0},
        {"w": rand(40, 24), "c": rand(40)},
    )  # fmt: skip
    check_shapes(model, lambda s: {"x": rand(*s)}, [(1, 24), (13, 24), (300, 24)], tmp_path)


def test_gemm_of_run_time_dims_with_a_stretched_bias(tmp_path):
    """C [n, 1] of its own symbol: n is 1 (stretched) or Y's rows."""
    model = node_model("Gemm", {"a": (F32, ["k", "m"]), "b": (F32, ["k", "n"]), "c": (F32, ["r", 1])}, {"transA": 1})

    def feeds(shape):
        m, k, n, r = shape
        return {"a": rand(k, m), "b": rand(k, n), "c": rand(r, 1)}

    check_shapes(model, feeds, [(3, 5, 4, 1), (6, 2, 7, 6)], tmp_path)


# ------------------------------------------------------------------------- pools and Conv

IMAGE = (F32, ["n", "c", "h", "w"])
IMAGE_SHAPES = [(1, 2, 7, 9), (2, 1, 10, 4), (1, 1, 3, 3)]


@pytest.mark.parametrize(
    "op_type, attrs",
    [
        ("MaxPool", {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 3], "auto_pad": "SAME_LOWER", "count_include_pad": 1}),
        ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 0], "ceil_mode": 1}),
        ("LpPool", {"kernel_shape": [2, 3], "dilations": [2, 1], "p": 3}),
    ],
)
def test_pools_with_run_time_padding_and_ceil_mode(op_type, attrs, tmp_path):
    model = node_model(op_type, {"x": IMAGE}, attrs, opset=19)
    check_shapes(model, lambda s: {"x": rand(*s)}, IMAGE_SHAPES, tmp_path)


def test_conv_of_run_time_weights_and_same_strided_padding(tmp_path):
    """Weights as an input (kernel and channels known at run time only), SAME with stride 2."""
    model = node_model(
        "Conv",
        {"x": IMAGE, "w": (F32, ["m", "c", "kh", "kw"]), "b": (F32, ["m"])},
        {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    )

    def feeds(shape):
        n, c, h, w = shape
        return {"x": rand(n, c, h, w), "w": rand(3, c, 3, 2), "b": rand(3)}

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


@pytest.mark.parametrize(
    "kernel, attrs",
    [
        (1, {}),
        (3, {"pads": [1, 1, 1, 1]}),
        (3, {"strides": [2, 2], "pads": [1, 0, 1, 2], "dilations": [1, 2]}),
        (3, {"pads": [6, 6, 6, 6], "dilations": [6, 6]}),  # DeepLab's ASPP: regions need static sizes
        (5, {"strides": [2, 1], "auto_pad": "VALID"}),
        (3, {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        (3, {"pads": [1, 1, 1, 1], "group": 2}),
        (1, {"group": 3}),
    ],
)
def test_conv_gemm_over_a_run_time_image(kernel, attrs, tmp_path):
    """Constant weights over an image of run-time batch, height and width: the GEMM
    kernel with run-time columns (1x1: the image in place; else im2col from the
    run-time geometry; a product per group), BatchNormalization folded, a residual
    Add and a Relu fused."""
    rng = np.random.default_rng(0)
    group = attrs.get("group", 1)
    weights = {
        "w": rng.standard_normal((24, 6 // group, kernel, kernel)).astype(np.float32),
        "bias": rng.standard_normal(24).astype(np.float32),
        "scale": rng.uniform(0.5, 1.5, 24).astype(np.float32),
        "shift": rng.standard_normal(24).astype(np.float32),
        "mean": rng.standard_normal(24).astype(np.float32),
        "var": rng.uniform(0.5, 1.5, 24).astype(np.float32),
        "w2": rng.standard_normal((24, 24, 1, 1)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "bias"], ["c"], kernel_shape=[kernel, kernel], **attrs),
        helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["c2"]),
        helper.make_node("Add", ["c2", "r"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_gemm",
        [value_info("x", F32, ["n", 6, "h", "w"])],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(a, n) for n, a in weights.items()],
    )
    shapes = [(1, 6, 9, 11), (2, 6, 34, 40), (3, 6, 5, 7)]
    check_shapes(make_model(graph, 17), lambda s: {"x": rand(*s)}, shapes, tmp_path)


@pytest.mark.parametrize(
    "multiplier, attrs",
    [(1, {"pads": [1, 1, 1, 1]}), (2, {"pads": [2, 0, 1, 2], "dilations": [2, 1]}), (1, {"auto_pad": "VALID"})],
)
def test_depthwise_conv_over_run_time_rows(multiplier, attrs, tmp_path):
    """A depthwise conv whose row length is known at run time only: shifted rows for
    short rows (up to 32), the direct conv for longer ones, chosen at run time."""
    rng = np.random.default_rng(0)
    channels = 6
    initializers = {"w": rng.standard_normal((channels * multiplier, 1, 3, 3)).astype(np.float32)}
    if multiplier == 1:
        initializers["b"] = rng.standard_normal(channels).astype(np.float32)
    model = node_model("Conv", {"x": (F32, ["n", channels, "h", "w"])}, {"group": channels, **attrs}, initializers)
    shapes = [(1, channels, 9, 11), (2, channels, 5, 40), (1, channels, 33, 32)]
    check_shapes(model, lambda s: {"x": rand(*s)}, shapes, tmp_path)


# --------------------------------------------------------------------------- normalizations


@pytest.mark.parametrize(
    "op_type, attrs, parameters",
    [
        ("InstanceNormalization", {"epsilon": 1e-3}, "c"),
        ("GroupNormalization", {"num_groups": 2}, "c"),
        ("LpNormalization", {"axis": 2, "p": 1}, None),
        ("LRN", {"size": 3}, None),
    ],
)
def test_normalizations_over_run_time_dims(op_type, attrs, parameters, tmp_path):
    """Against onnxruntime: onnx.reference sums x, not |x|, for p = 1, and its LRN
    window differs from onnxruntime's (which onnxc follows)."""
    inputs = {"x": IMAGE}
    if parameters:
        inputs |= {"scale": (F32, [parameters]), "bias": (F32, [parameters])}
    model = node_model(op_type, inputs, attrs)

    def feeds(shape):
        n, c, h, w = shape
        c *= 2  # GroupNormalization's two groups
        feed = {"x": rand(n, c, h, w)}
        return feed | ({"scale": rand(c), "bias": rand(c)} if parameters else {})

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path, reference="onnxruntime")


# --------------------------------------------------------------------------- sampling grids


@pytest.mark.parametrize("mode, padding", [("linear", "reflection"), ("cubic", "border"), ("nearest", "zeros")])
def test_grid_sample_over_run_time_sizes(mode, padding, tmp_path):
    """The sizes enter the coordinates as floats computed at run time."""
    model = node_model(
        "GridSample",
        {"x": IMAGE, "grid": (F32, ["n", "oh", "ow", 2])},
        {"mode": mode, "padding_mode": padding, "align_corners": int(mode == "cubic")},
        opset=20,
    )

    def feeds(shape):
        n, c, h, w = shape
        return {"x": rand(n, c, h, w), "grid": rand(n, w, h, 2, low=-1.3, high=1.3)}

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


# ---------------------------------------------------------------------------------- Resize


@pytest.mark.parametrize(
    "attrs, scales",
    [
        ({"mode": "linear", "coordinate_transformation_mode": "half_pixel"}, [1, 1, 2, 3]),
        ({"mode": "cubic", "coordinate_transformation_mode": "align_corners", "exclude_outside": 1}, [1, 1, 3, 2]),
        ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"}, [1, 1, 2, 2]),
        ({"mode": "linear", "antialias": 1}, [1, 1, 2, 1]),
        ({"mode": "cubic", "antialias": 1, "coordinate_transformation_mode": "pytorch_half_pixel"}, [1, 1, 1, 3]),
    ],
)
def test_resize_over_run_time_sizes(attrs, scales, tmp_path):
    """The tap tables are computed at run time, as numpy does at compile time for static
    sizes. (Downsampling scales give sizes symbolic shape inference does not express yet;
    antialias upsamples here, through its normalized weights.)"""
    model = node_model(
        "Resize", {"x": IMAGE}, attrs, {"roi": np.zeros(0, np.float32), "scales": np.array(scales, np.float32)}
    )
    check_shapes(model, lambda s: {"x": rand(*s)}, [(1, 2, 6, 8), (2, 1, 4, 10), (1, 1, 1, 2)], tmp_path)


def test_resize_to_sizes_from_run_time_sizes(tmp_path):
    """Sizes over a run-time input: the scale is out / in at run time; tf_crop_and_resize extrapolates."""
    model = node_model(
        "Resize",
        {"x": IMAGE},
        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 9.0},
        {
            "roi": np.array([0, 0, -0.2, 0.3, 1, 1, 0.9, 1.2], np.float32),
            "scales": np.zeros(0, np.float32),
            "sizes": np.array([1, 2, 5, 3], np.int64),
        },
    )
    check_shapes(model, lambda s: {"x": rand(*s)}, [(1, 2, 6, 8), (1, 2, 3, 4)], tmp_path)


# ------------------------------------------------------------------------- recurrent ops


@pytest.mark.parametrize(
    "op_type, attrs, gates",
    [
        ("LSTM", {"direction": "bidirectional"}, 4),  # loops: two directions over a run-time batch
        ("GRU", {"linear_before_reset": 0}, 3),  # krnl.matmul of run-time rows
        ("RNN", {"layout": 1}, 1),
    ],
)
def test_recurrent_ops_over_run_time_sequence_and_batch(op_type, attrs, gates, tmp_path):
    """Constant weights (hidden 5, input 3), a run-time sequence length and batch; with
    sequence_lens against onnxruntime, batchwise (which onnxruntime lacks, and whose
    sequence_lens onnx.reference ignores) without, against onnx.reference."""
    directions = 2 if attrs.get("direction") == "bidirectional" else 1
    batchwise = bool(attrs.get("layout"))
    weights = {
        "W": rand(directions, gates * 5, 3),
        "R": rand(directions, gates * 5, 5),
        "B": rand(directions, 2 * gates * 5),
    }
    inputs = [value_info("x", F32, ["batch", "seq", 3] if batchwise else ["seq", "batch", 3])]
    if not batchwise:
        inputs.append(value_info("lengths", np.dtype(np.int32), ["batch"]))
    names = ["x", "W", "R", "B"] + ([] if batchwise else ["lengths"])
    graph = helper.make_graph(
        [helper.make_node(op_type, names, ["y", "y_h"], hidden_size=5, **attrs)],
        op_type.lower(),
        inputs,
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info("y_h")],
        [numpy_helper.from_array(a, n) for n, a in weights.items()],
    )
    model = make_model(graph, 14)

    def feeds(shape):
        seq, batch = shape
        if batchwise:
            return {"x": rand(batch, seq, 3)}
        return {"x": rand(seq, batch, 3), "lengths": ints(batch, dtype=np.int32, low=1, high=seq + 1)}

    reference = "onnx" if batchwise else "onnxruntime"
    check_shapes(model, feeds, [(1, 1), (6, 3), (4, 17)], tmp_path, reference=reference)


# ---------------------------------------------------------------------------------- Einsum


@pytest.mark.parametrize(
    "equation, dims, shapes",
    [
        ("bij,bjk->bik", [["b", "i", "j"], ["b", "j", "k"]], [[(2, 3, 4), (2, 4, 5)], [(1, 1, 7), (1, 7, 2)]]),
        ("...ii->...i", [["n", "d", "d"]], [[(2, 3, 3)], [(1, 5, 5)]]),
        # a run-time 1 stretches (p is 1 in the second run), read at min(i, p - 1)
        ("ij,ij->ij", [["i", "j"], ["p", "j"]], [[(3, 4), (3, 4)], [(2, 6), (1, 6)]]),
    ],
)
def test_einsum_over_run_time_dims(equation, dims, shapes, tmp_path):
    names = [f"x{k}" for k in range(len(dims))]
    model = node_model("Einsum", {n: (F32, d) for n, d in zip(names, dims)}, {"equation": equation}, opset=12)
    check_shapes(model, lambda run: {n: rand(*s) for n, s in zip(names, run)}, shapes, tmp_path)


def test_center_crop_pad_of_run_time_input(tmp_path):
    """Cropped or padded per run; an empty input is never read."""
    model = node_model(
        "CenterCropPad", {"x": (F32, ["h", "w", 2])}, {}, {"shape": np.array([4, 5, 2], np.int64)}, opset=18
    )
    check_shapes(model, lambda s: {"x": rand(*s, 2)}, [(6, 3), (4, 5), (1, 10), (0, 7)], tmp_path)


# ------------------------------------------------------------------------------------- DFT


@pytest.mark.parametrize("inverse", [0, 1])
def test_dft_of_run_time_length_and_components(inverse, tmp_path):
    """Twiddle tables filled at run time; the last dim is 1 (real) or 2 (complex) per run."""
    graph = helper.make_graph(
        [helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=inverse)],  # no dft_length: the axis's size
        "dft",
        [value_info("x", F32, ["n", "length", "c"])],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(np.array(1, np.int64), "axis")],
    )
    model = make_model(graph, 20)
    check_shapes(model, lambda s: {"x": rand(*s)}, [(2, 5, 2), (1, 8, 1), (3, 1, 2)], tmp_path)


def test_onesided_inverse_dft_of_run_time_bins(tmp_path):
    """A real signal of length 8 from the bins given (up to 5): their Hermitian weights
    computed at run time, the number of bins being known then only."""
    graph = helper.make_graph(
        [helper.make_node("DFT", ["x", "length", "axis"], ["y"], inverse=1, onesided=1)],
        "irfft",
        [value_info("x", F32, ["n", "bins", 2])],
        [helper.make_empty_tensor_value_info("y")],
        [
            numpy_helper.from_array(np.array(8, np.int64), "length"),
            numpy_helper.from_array(np.array(1, np.int64), "axis"),
        ],
    )
    check_shapes(make_model(graph, 20), lambda s: {"x": rand(*s, 2)}, [(2, 5), (1, 3), (1, 7)], tmp_path)


@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_over_a_run_time_image(mode, tmp_path):
    model = node_model(
        "RoiAlign",
        {"x": IMAGE, "rois": (F32, ["r", 4]), "batch_indices": (I64, ["r"])},
        {"mode": mode, "output_height": 3, "output_width": 2, "spatial_scale": 0.5, "sampling_ratio": 0},
        opset=16,
    )

    def feeds(shape):
        n, c, h, w = shape
        corners = rand(5, 4, low=-2, high=2 * max(h, w))
        rois = np.concatenate(
            [np.minimum(corners[:, :2], corners[:, 2:]), np.maximum(corners[:, :2], corners[:, 2:])], 1
        )
        return {"x": rand(n, c, h, w), "rois": rois, "batch_indices": ints(5, low=0, high=n)}

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


def test_det_of_run_time_sizes(tmp_path):
    model = node_model("Det", {"x": (F32, ["n", "m", "m"])}, {})
    check_shapes(model, lambda s: {"x": rand(*s)}, [(2, 3, 3), (1, 5, 5), (3, 1, 1)], tmp_path)


def test_integer_matmuls_over_run_time_dims(tmp_path):
    u8 = np.dtype(np.uint8)
    model = node_model(
        "MatMulInteger",
        {"a": (u8, ["m", "k"]), "b": (u8, ["k", "n"])},
        {},
        {"a_zero": np.array(3, np.uint8), "b_zero": np.array(7, np.uint8)},
    )

    def feeds(shape):
        m, k, n = shape
        return {"a": ints(m, k, dtype=np.uint8, low=0, high=255), "b": ints(k, n, dtype=np.uint8, low=0, high=255)}

    check_shapes(model, feeds, [(2, 3, 4), (5, 1, 2)], tmp_path)
    model = node_model(
        "QLinearMatMul",
        {"a": (u8, ["m", "k"])},
        {},
        {
            "a_scale": np.array(0.02, np.float32),
            "a_zero": np.array(100, np.uint8),
            "b": ints(6, 5, dtype=np.uint8, low=0, high=255),
            "b_scale": np.array(0.03, np.float32),
            "b_zero": np.array(128, np.uint8),
            "y_scale": np.array(0.5, np.float32),
            "y_zero": np.array(90, np.uint8),
        },
    )
    check_shapes(model, lambda s: {"a": ints(s[0], 6, dtype=np.uint8, low=0, high=255)}, [(3,), (17,)], tmp_path)


@pytest.mark.parametrize(
    "attrs",
    [
        {"strides": [2, 2], "pads": [1, 0, 1, 2], "output_padding": [1, 0]},
        {"strides": [2, 1], "auto_pad": "SAME_UPPER", "group": 2},
        {"strides": [3, 2], "output_shape": [10, 8]},  # padding = full size - output, < 0 too
    ],
)
def test_conv_transpose_over_run_time_height_and_width(attrs, tmp_path):
    """The geometry (full sizes, pads) is index arithmetic at run time."""
    model = node_model(
        "ConvTranspose",
        {"x": (F32, ["n", 4, "h", "w"])},
        attrs,
        {"w": rand(4, 3, 3, 3), "b": rand(3 * attrs.get("group", 1))},
    )
    shapes = [(1, 4, 3, 3), (2, 4, 3, 3)] if "output_shape" in attrs else [(1, 4, 5, 7), (2, 4, 6, 9), (1, 4, 2, 3)]
    # onnxruntime refuses an output_shape beyond the full output (a negative padding); onnx.reference takes it
    reference = "onnx" if "output_shape" in attrs else "onnxruntime"
    check_shapes(model, lambda s: {"x": rand(*s)}, shapes, tmp_path, reference=reference)


def test_max_unpool_of_a_run_time_input_into_an_output_shape(tmp_path):
    model = node_model(
        "MaxUnpool",
        {"x": (F32, [1, 2, "h", "w"]), "indices": (I64, [1, 2, "h", "w"])},
        {"kernel_shape": [2, 2], "strides": [2, 2]},
        {"output_shape": np.array([1, 2, 9, 8], np.int64)},
    )

    def feeds(shape):
        h, w = shape
        positions = np.random.default_rng(h * w).permutation(2 * 2 * h * 2 * w)[: 2 * h * w]  # distinct
        return {"x": rand(1, 2, h, w), "indices": positions.reshape(1, 2, h, w).astype(np.int64)}

    check_shapes(model, feeds, [(4, 4), (2, 3), (1, 1)], tmp_path)


def test_tree_ensemble_over_run_time_samples_and_features(tmp_path):
    """Two stumps reading features 0 and 2 of a run-time number of them."""
    attrs = {
        "nodes_treeids": [0, 0, 0, 1, 1, 1],
        "nodes_nodeids": [0, 1, 2, 0, 1, 2],
        "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
        "nodes_featureids": [0, 0, 0, 2, 0, 0],
        "nodes_values": [0.1, 0.0, 0.0, -0.3, 0.0, 0.0],
        "nodes_truenodeids": [1, 0, 0, 1, 0, 0],
        "nodes_falsenodeids": [2, 0, 0, 2, 0, 0],
        "target_treeids": [0, 0, 1, 1],
        "target_nodeids": [1, 2, 1, 2],
        "target_ids": [0, 0, 0, 0],
        "target_weights": [1.5, -2.0, 0.25, 4.0],
        "n_targets": 1,
    }
    graph = helper.make_graph(
        [helper.make_node("TreeEnsembleRegressor", ["x"], ["y"], domain="ai.onnx.ml", **attrs)],
        "trees",
        [value_info("x", F32, ["n", "features"])],
        [helper.make_empty_tensor_value_info("y")],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)], ir_version=8
    )
    check_shapes(model, lambda s: {"x": rand(*s)}, [(5, 3), (1, 4)], tmp_path, reference="onnxruntime")


def test_size_and_tile_over_run_time_dims(tmp_path):
    model = node_model("Size", {"x": (F32, ["n", 3, "m"])}, {})
    check_shapes(model, lambda s: {"x": rand(*s)}, [(2, 3, 4), (1, 3, 0)], tmp_path)
    model = node_model("Tile", {"x": (F32, ["n", "m"])}, {}, {"repeats": np.array([2, 3], np.int64)})
    check_shapes(model, lambda s: {"x": rand(*s)}, [(2, 5), (1, 1), (3, 0)], tmp_path)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_over_run_time_dims(mode, tmp_path):
    """Padded dims known at run time only; an empty one (constant mode) is never read."""
    model = node_model(
        "Pad",
        {"x": IMAGE},
        {"mode": mode},
        {"pads": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "value": np.array(7, np.float32)},
        opset=19,
    )
    shapes = [(1, 2, 3, 4), (2, 1, 5, 2)] + ([(1, 1, 0, 2)] if mode == "constant" else [])
    check_shapes(model, lambda s: {"x": rand(*s)}, shapes, tmp_path)


def test_pad_to_a_multiple_of_a_run_time_length(tmp_path):
    """pads computed from the input's dims (a sequence padded up to a multiple of
    8, as padded key/value caches are): begins and ends known at run time only."""
    seq = [
        helper.make_node("Shape", ["x"], ["shape"], start=1, end=2),
        helper.make_node("Neg", ["shape"], ["negative"]),
        helper.make_node("Mod", ["negative", "eight"], ["missing"], fmod=0),
        helper.make_node("Concat", ["zero", "one", "zero", "missing"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="constant"),
    ]
    graph = helper.make_graph(
        seq,
        "pad_to_multiple",
        [value_info("x", F32, ["batch", "seq"])],
        [helper.make_empty_tensor_value_info("y")],
        [
            numpy_helper.from_array(np.array([8], np.int64), "eight"),
            numpy_helper.from_array(np.array([0], np.int64), "zero"),
            numpy_helper.from_array(np.array([1], np.int64), "one"),
        ],
    )
    check_shapes(make_model(graph, 19), lambda s: {"x": rand(*s)}, [(2, 5), (1, 8), (3, 9)], tmp_path)


def test_batch_normalization_of_run_time_statistics(tmp_path):
    """Statistics as inputs of run-time length: the factor per channel computed at run time."""
    names = ["scale", "bias", "mean", "var"]
    model = node_model("BatchNormalization", {"x": IMAGE} | {n: (F32, ["c"]) for n in names}, {"epsilon": 1e-3})

    def feeds(shape):
        statistics = {n: rand(shape[1], low=0.5, high=2) for n in names}
        return {"x": rand(*shape)} | statistics

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


def test_float16_matmul_and_conv_over_run_time_dims(tmp_path):
    """float16 accumulates in a float32 copy of the result, of the result's run-time shape."""
    f16 = np.dtype(np.float16)
    model = node_model("MatMul", {"a": (f16, ["b", "m", "k"]), "w": (f16, ["b", "k", "n"])}, {})
    check_shapes(model, lambda s: {"a": rand(*s[:3], dtype=np.float16), "w": rand(s[0], s[2], s[3], dtype=np.float16)},
                 [(2, 3, 4, 5), (1, 1, 7, 2)], tmp_path, reference="onnxruntime")  # fmt: skip
    model = node_model(
        "Conv", {"x": (f16, ["n", 2, "h", "w"])}, {"pads": [1, 1, 1, 1]}, {"w": rand(3, 2, 3, 3, dtype=np.float16)}
    )
    check_shapes(
        model, lambda s: {"x": rand(s[0], 2, *s[2:], dtype=np.float16)}, IMAGE_SHAPES, tmp_path, reference="onnxruntime"
    )
