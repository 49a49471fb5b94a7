"""Lowerings over run-time dims, continued (see test_run_time_dims_ops.py): block
moves, Col2Im, DeformConv, MaxPool's indices, MaxUnpool, the integer
contractions and STFT each compile once with symbolic input dims and run at a
few shapes, against onnx.reference."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ints, make_model, rand, value_info
from onnx import helper, numpy_helper
from test_run_time_dims_ops import F32, IMAGE, IMAGE_SHAPES, check_shapes, node_model

U8, I8 = np.dtype(np.uint8), np.dtype(np.int8)


# ------------------------------------------------------------------------------ block moves


@pytest.mark.parametrize(
    "op_type, attrs",
    [
        ("DepthToSpace", {"blocksize": 2, "mode": "DCR"}),
        ("DepthToSpace", {"blocksize": 2, "mode": "CRD"}),
        ("SpaceToDepth", {"blocksize": 2}),
    ],
)
def test_block_moves_over_run_time_dims(op_type, attrs, tmp_path):
    """The channel count (divided or multiplied by 4) is known at run time only."""
    model = node_model(op_type, {"x": IMAGE}, attrs, opset=13)
    to_space = op_type == "DepthToSpace"

    def feeds(shape):
        n, c, h, w = shape
        return {"x": rand(n, 4 * c, h, w) if to_space else rand(n, c, 2 * h, 2 * w)}

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


# ------------------------------------------------------------------------------ Col2Im


def test_col2im_of_run_time_batch_and_channels(tmp_path):
    """Constant image and block shapes, a strided dilated padded 2-D block."""
    model = node_model(
        "Col2Im",
        {"x": (F32, ["n", "cb", "l"])},
        {"strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 0, 1]},
        {"image": np.array([5, 6], np.int64), "block": np.array([2, 3], np.int64)},
        opset=18,
    )
    blocks = ((5 + 1 - 1 * (2 - 1) - 1) // 2 + 1) * ((6 + 1 - 2 * (3 - 1) - 1) // 1 + 1)
    check_shapes(model, lambda s: {"x": rand(s[0], 6 * s[1], blocks)}, [(1, 1), (2, 3), (3, 2)], tmp_path)


# ------------------------------------------------------------------------------ convolutions


def test_deform_conv_of_run_time_dims_and_weights(tmp_path):
    """Weights, offsets and mask as inputs; two groups and two offset groups."""
    model = node_model(
        "DeformConv",
        {
            "x": IMAGE,
            "w": (F32, ["m", "cg", "kh", "kw"]),
            "offset": (F32, ["n", "o", "oh", "ow"]),
            "b": (F32, ["m"]),
            "mask": (F32, ["n", "t", "oh", "ow"]),
        },
        {"group": 2, "offset_group": 2, "strides": [1, 2], "pads": [1, 0, 1, 1], "kernel_shape": [2, 2]},
        opset=19,
    )

    def feeds(shape):
        n, c, h, w = shape
        c *= 2
        oh, ow = h + 1, (w - 1) // 2 + 1
        return {
            "x": rand(n, c, h, w),
            "w": rand(4, c // 2, 2, 2),
            "offset": rand(n, 2 * 4 * 2, oh, ow, low=-1.5, high=1.5),
            "b": rand(4),
            "mask": rand(n, 2 * 4, oh, ow),
        }

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


def test_integer_convs_over_run_time_dims(tmp_path):
    """ConvInteger and QLinearConv with uint8 weights given as inputs."""
    scalar = []
    conv_integer = node_model(
        "ConvInteger",
        {"x": (U8, ["n", "c", "h", "w"]), "w": (U8, ["m", "c", "kh", "kw"]), "xz": (U8, scalar), "wz": (U8, scalar)},
        {"pads": [1, 1, 0, 0]},
        opset=10,
    )
    qlinear_conv = node_model(
        "QLinearConv",
        {
            "x": (U8, ["n", "c", "h", "w"]), "xs": (F32, scalar), "xz": (U8, scalar),
            "w": (U8, ["m", "c", "kh", "kw"]), "ws": (F32, scalar), "wz": (U8, scalar),
            "ys": (F32, scalar), "yz": (U8, scalar),
        },
        {"strides": [2, 1], "pads": [0, 1, 1, 0]},
        opset=10,
    )  # fmt: skip

    def feeds(shape):
        n, c, h, w = shape
        x, weights = (
            ints(n, c, h, w, dtype=np.uint8, low=0, high=255),
            ints(3, c, 2, 2, dtype=np.uint8, low=0, high=255),
        )
        zero = np.array(7, np.uint8)
        return {"x": x, "w": weights, "xz": zero, "wz": np.array(120, np.uint8)} | {
            "xs": np.array(0.02, np.float32), "ws": np.array(0.01, np.float32),
            "ys": np.array(0.5, np.float32), "yz": np.array(100, np.uint8),
        }  # fmt: skip

    for model in (conv_integer, qlinear_conv):
        names = {i.name for i in model.graph.input}
        check_shapes(model, lambda s, names=names: {k: feeds(s)[k] for k in names}, IMAGE_SHAPES, tmp_path)


def test_qlinear_matmul_of_run_time_batch(tmp_path):
    """3-D int8 operands, both inputs: the batch dims broadcast at run time."""
    scalar = []
    model = node_model(
        "QLinearMatMul",
        {
            "a": (I8, ["b", "m", "k"]), "as": (F32, scalar), "az": (I8, scalar),
            "b": (I8, ["b", "k", "n"]), "bs": (F32, scalar), "bz": (I8, scalar),
            "ys": (F32, scalar), "yz": (I8, scalar),
        },
    )  # fmt: skip

    def feeds(shape):
        batch, m, k, n = shape
        return {
            "a": ints(batch, m, k, dtype=np.int8, low=-128, high=127), "as": np.array(0.05, np.float32),
            "az": np.array(3, np.int8), "b": ints(batch, k, n, dtype=np.int8, low=-128, high=127),
            "bs": np.array(0.02, np.float32), "bz": np.array(-2, np.int8),
            "ys": np.array(0.7, np.float32), "yz": np.array(-5, np.int8),
        }  # fmt: skip

    check_shapes(model, feeds, [(2, 3, 4, 5), (1, 1, 7, 2), (3, 4, 1, 3)], tmp_path)


@pytest.mark.parametrize("activation", ["none", "silu"])
def test_causal_conv_with_state_over_run_time_dims(activation, tmp_path):
    """Channels, length and kernel size known at run time only; a length shorter
    than the state keeps part of the old state."""
    model = node_model(
        "CausalConvWithState",
        {"x": (F32, ["n", "c", "l"]), "w": (F32, ["c", 1, "k"]), "b": (F32, ["c"]), "past": (F32, ["n", "c", "h"])},
        {"activation": activation},
        outputs=2,
        opset=27,
    )

    def feeds(shape):
        n, c, length, k = shape
        return {"x": rand(n, c, length), "w": rand(c, 1, k), "b": rand(c), "past": rand(n, c, k - 1)}

    check_shapes(model, feeds, [(1, 3, 8, 4), (2, 2, 2, 4), (1, 1, 5, 1), (2, 4, 3, 2)], tmp_path)


@pytest.mark.parametrize("per_key", [True, False])
def test_linear_attention_of_run_time_head_sizes(per_key, tmp_path):
    """Gated delta rule, 4 query heads over 2 KV heads: d_k, d_v, the sequence and
    the batch known at run time only, and whether decay is per key or per head,
    beta per head or shared, chosen from their widths at run time."""
    model = node_model(
        "LinearAttention",
        {
            "q": (F32, ["b", "t", "qw"]),
            "k": (F32, ["b", "t", "kw"]),
            "v": (F32, ["b", "t", "vw"]),
            "past": (F32, ["b", 2, "dk", "dv"]),
            "decay": (F32, ["b", "t", "dw"]),
            "beta": (F32, ["b", "t", "bw"]),
        },
        {"q_num_heads": 4, "kv_num_heads": 2, "update_rule": "gated_delta"},
        outputs=2,
        opset=27,
    )

    def feeds(shape):
        b, t, d_k, d_v = shape
        keys = rand(b, t, 2, d_k)
        keys /= np.linalg.norm(keys, axis=-1, keepdims=True)  # L2-normalized, as the delta rule wants
        return {
            "q": rand(b, t, 4 * d_k), "k": keys.reshape(b, t, 2 * d_k), "v": rand(b, t, 2 * d_v),
            "past": rand(b, 2, d_k, d_v), "decay": rand(b, t, 2 * d_k if per_key else 2, low=-1, high=0),
            "beta": rand(b, t, 2 if per_key else 1, low=0, high=1),
        }  # fmt: skip

    check_shapes(model, feeds, [(1, 3, 4, 2), (2, 1, 3, 5), (1, 4, 1, 1)], tmp_path)


# ------------------------------------------------------------------------------ pools


def test_max_pool_indices_over_run_time_dims(tmp_path):
    """Row-major and column-major (storage_order 1) offsets of the maxima."""
    for order in (0, 1):
        model = node_model(
            "MaxPool",
            {"x": IMAGE},
            {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1], "storage_order": order},
            outputs=2,
            opset=12,
        )
        check_shapes(model, lambda s: {"x": rand(*s)}, IMAGE_SHAPES, tmp_path)


def test_max_unpool_without_output_shape(tmp_path):
    """The result's spatial dims are (in - 1) * stride + kernel - pads, of run-time dims."""
    model = node_model(
        "MaxUnpool",
        {"x": IMAGE, "i": (np.dtype(np.int64), ["n", "c", "h", "w"])},
        {"kernel_shape": [2, 3], "strides": [2, 2], "pads": [0, 1, 1, 0]},
        opset=11,
    )

    def feeds(shape):
        n, c, h, w = shape
        size = n * c * ((h - 1) * 2 + 2 - 1) * ((w - 1) * 2 + 3 - 1)
        offsets = np.random.default_rng(h).permutation(size)[: n * c * h * w]  # distinct: the order is unspecified
        return {"x": rand(n, c, h, w), "i": offsets.reshape(n, c, h, w)}

    check_shapes(model, feeds, IMAGE_SHAPES, tmp_path)


# ------------------------------------------------------------------------------ Resize


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_keeping_the_aspect_ratio_of_run_time_dims(policy, mode, tmp_path):
    """One scale for both axes, the least or greatest of size / in: the result's
    dims are rounded from it, at run time."""
    model = node_model(
        "Resize",
        {"x": IMAGE},
        {"mode": mode, "axes": [2, 3], "keep_aspect_ratio_policy": policy},
        {"roi": np.zeros(0, np.float32), "scales": np.zeros(0, np.float32), "sizes": np.array([6, 5], np.int64)},
        opset=18,
    )
    check_shapes(model, lambda s: {"x": rand(*s)}, [*IMAGE_SHAPES, (1, 1, 4, 7)], tmp_path)


@pytest.mark.parametrize(
    "attrs",
    [
        {"mode": "linear"},
        {"mode": "cubic", "exclude_outside": 1},
        {"mode": "linear", "keep_aspect_ratio_policy": "not_larger"},
        {"mode": "cubic", "keep_aspect_ratio_policy": "not_smaller"},
    ],
)
def test_resize_antialias_of_sizes_over_run_time_dims(attrs, tmp_path):
    """Downsampling and upsampling with antialias: the filter's width, so the number
    of taps, follows the run-time scale."""
    model = node_model(
        "Resize",
        {"x": IMAGE},
        {"antialias": 1, "axes": [2, 3]} | attrs,
        {"roi": np.zeros(0, np.float32), "scales": np.zeros(0, np.float32), "sizes": np.array([3, 4], np.int64)},
        opset=18,
    )
    check_shapes(
        model, lambda s: {"x": rand(*s)}, [(1, 2, 7, 9), (2, 1, 10, 4), (1, 1, 2, 3), (1, 1, 13, 17)], tmp_path
    )


@pytest.mark.parametrize("target", ["constant", "image"])
@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_resize_to_sizes_computed_at_run_time(target, mode, tmp_path):
    """torch's `interpolate(x, size=...)` as exported: sizes = Concat(Shape(x)[:2], hw),
    hw constant (a batch-only dynamic export) or another input's height and width
    (DeepLab/FCN's upsampling to the image): the scales are the result's dims over
    the input's, those of x's own symbolic dims 1."""
    nodes = [helper.make_node("Shape", ["x"], ["nc"], start=0, end=2)]
    if target == "image":
        nodes.append(helper.make_node("Shape", ["image"], ["hw"], start=2, end=4))
        initializers = []
    else:
        initializers = [numpy_helper.from_array(np.array([9, 13], np.int64), "hw")]
    nodes += [
        helper.make_node("Concat", ["nc", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode),
    ]
    inputs = [value_info("x", np.float32, ["n", 3, "h", "w"])]
    if target == "image":
        inputs.append(value_info("image", np.float32, ["n", 1, "H", "W"]))
    graph = helper.make_graph(nodes, "resize", inputs, [helper.make_empty_tensor_value_info("y")], initializers)

    def feeds(shape):
        n, h, w, image_h, image_w = shape
        x = {"x": rand(n, 3, h, w)}
        return x | {"image": rand(n, 1, image_h, image_w)} if target == "image" else x

    shapes = [(1, 4, 5, 16, 20), (2, 3, 3, 9, 7), (1, 6, 2, 6, 4)]
    check_shapes(make_model(graph, 19), feeds, shapes, tmp_path, reference="onnxruntime")


# ------------------------------------------------------------------------------ STFT


def test_stft_of_run_time_signal_and_window(tmp_path):
    """The frame length is the window's run-time length, or a constant operand."""
    signal = (F32, ["b", "t", 1])
    windowed = node_model("STFT", {"x": signal, "window": (F32, ["l"])}, {}, {"step": np.array(3, np.int64)}, opset=17)
    model = windowed.graph
    model.node[0].input[:] = ["x", "step", "window"]

    def feeds(shape):
        batch, length, window = shape
        return {"x": rand(batch, length, 1), "window": rand(window)}

    check_shapes(windowed, feeds, [(1, 16, 4), (2, 9, 5), (3, 7, 7)], tmp_path)
    framed = node_model(
        "STFT", {"x": (F32, ["b", "t", 2])}, {"onesided": 0},
        {"step": np.array(2, np.int64), "length": np.array(4, np.int64)}, opset=17,
    )  # fmt: skip
    framed.graph.node[0].input[:] = ["x", "step", "", "length"]
    check_shapes(framed, lambda s: {"x": rand(*s, 2)}, [(1, 8), (2, 5), (1, 4)], tmp_path)


# ------------------------------------------------------------------------------ bad input


def test_dims_that_do_not_fit_are_refused_before_native_code(tmp_path):
    """DeformConv offsets for too few taps, Col2Im columns that do not split into
    blocks and a LinearAttention decay of neither width raise InputError naming
    the node, CausalConvWithState weights for too few channels naming the input:
    never a read out of bounds."""
    import onnxc
    from onnxc.errors import InputError

    deform = node_model(
        "DeformConv",
        {"x": IMAGE, "w": (F32, ["m", "c", "kh", "kw"]), "offset": (F32, ["n", "o", "oh", "ow"])},
        opset=19,
    )
    session = onnxc.Session(onnxc.compile(deform, tmp_path / "deform.so"))
    with pytest.raises(InputError, match="DeformConv"):
        session.run(None, {"x": rand(1, 1, 4, 4), "w": rand(2, 1, 2, 2), "offset": rand(1, 6, 3, 3)})
    col2im = node_model(
        "Col2Im", {"x": (F32, ["n", "cb", 4])}, {},
        {"image": np.array([3, 3], np.int64), "block": np.array([2, 2], np.int64)}, opset=18,
    )  # fmt: skip
    session = onnxc.Session(onnxc.compile(col2im, tmp_path / "col2im.so"))
    with pytest.raises(InputError, match="Col2Im"):
        session.run(None, {"x": rand(1, 6, 4)})
    causal = node_model(
        "CausalConvWithState", {"x": (F32, ["n", "c", "l"]), "w": (F32, ["m", 1, "k"])}, outputs=2, opset=27
    )
    session = onnxc.Session(onnxc.compile(causal, tmp_path / "causal.so"))
    with pytest.raises(InputError, match="input 'w': dim 0"):
        session.run(None, {"x": rand(1, 3, 5), "w": rand(2, 1, 3)})  # weights for 2 of 3 channels
    packed = (F32, ["b", "t", "w"])
    gated = node_model(
        "LinearAttention", {"q": packed, "k": packed, "v": packed, "decay": (F32, ["b", "t", "dw"])},
        {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated"}, outputs=2, opset=27,
    )  # fmt: skip
    gated.graph.node[0].input[:] = ["q", "k", "v", "", "decay"]
    session = onnxc.Session(onnxc.compile(gated, tmp_path / "gated.so"))
    q = rand(1, 2, 8)
    with pytest.raises(InputError, match="LinearAttention"):
        session.run(None, {"q": q, "k": q, "v": q, "decay": rand(1, 2, 3)})  # neither 2 * d_k nor 2 wide


def test_split_to_sequence_of_explicit_sizes_along_a_run_time_axis(tmp_path):
    """Explicit sizes give the sequence's length; one chunk size makes it depend on the
    run-time axis: a sequence of run-time length (pieces of 2, the last shorter), joined
    back along the axis it was cut along."""
    import onnx
    from onnx import helper

    import onnxc
    from onnxc.errors import InputError

    def model(split: np.ndarray) -> onnx.ModelProto:
        nodes = [
            helper.make_node("SplitToSequence", ["x", "split"], ["seq"], axis=1),
            helper.make_node("ConcatFromSequence", ["seq"], ["y0"], axis=1),
        ]
        graph = helper.make_graph(
            nodes, "split_to_sequence", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", "t"])],
            [helper.make_empty_tensor_value_info("y0")], [onnx.numpy_helper.from_array(split, "split")],
        )  # fmt: skip
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)

    check_shapes(model(np.array([2, 3], np.int64)), lambda s: {"x": rand(*s)}, [(1, 5), (3, 5)], tmp_path)
    session = onnxc.Session(onnxc.compile(model(np.array([2, 3], np.int64)), tmp_path / "sizes.so"))
    with pytest.raises(InputError, match="dim 1 is 4, expected 5"):
        session.run(None, {"x": rand(2, 4)})  # the sizes do not cover the axis
    check_shapes(model(np.array(2, np.int64)), lambda s: {"x": rand(*s)}, [(1, 5), (3, 4)], tmp_path)
