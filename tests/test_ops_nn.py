"""Sampling, contraction and signal ops (GridSample, Einsum, DFT...), numerically
against onnx.reference, on the attribute combinations and shapes the ONNX
node-test suite leaves out."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import Case, ints, rand, run_case, with_output_types
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc.errors import ShapeError, UnsupportedOpError


def grid(*shape: int) -> np.ndarray:
    """Normalized grid positions, partly outside [-1, 1] to exercise padding."""
    return rand(*shape, low=-1.7, high=1.7)


ROIS = np.array(
    [[0.0, 0.0, 9.0, 9.0], [2.5, 1.0, 14.0, 12.5], [-4.0, -2.0, 5.0, 20.0], [6.0, 6.0, 6.5, 6.2]], np.float32
)
"""Regions (x1, y1, x2, y2) in image coordinates: whole, inside, reaching outside, tiny."""

CASES: dict[str, Case] = {
    **{
        f"grid_sample_{mode}_{padding}_align{align}": Case(
            "GridSample",
            {"x": rand(2, 3, 4, 5), "grid": grid(2, 3, 6, 2)},
            {"mode": mode, "padding_mode": padding, "align_corners": align},
            opset=20,
        )
        for mode in ("nearest", "linear", "cubic")
        for padding in ("zeros", "border", "reflection")
        for align in (0, 1)
    },
    "grid_sample_3d_cubic_reflection": Case(
        "GridSample",
        {"x": rand(1, 2, 3, 4, 5), "grid": grid(1, 2, 3, 2, 3)},
        {"mode": "cubic", "padding_mode": "reflection"},
        opset=20,
    ),
    "grid_sample_opset16_bilinear_border": Case(
        "GridSample",
        {"x": rand(1, 2, 4, 4), "grid": grid(1, 3, 3, 2)},
        {"mode": "bilinear", "padding_mode": "border"},
        opset=16,
        reference="onnxruntime",  # the reference implements only the opset-20 mode names
    ),
    "grid_sample_float64": Case(
        "GridSample", {"x": rand(1, 1, 3, 3, dtype=np.float64), "grid": grid(1, 2, 2, 2).astype(np.float64)}, opset=20
    ),
    **{
        f"affine_grid_{len(size) - 2}d_align{align}": Case(
            "AffineGrid",
            {"theta": rand(2, len(size) - 2, len(size) - 1)},
            {"align_corners": align},
            initializers={"size": np.array(size)},
            opset=20,
        )
        for size in ([2, 3, 4, 5], [2, 1, 3, 2, 4])
        for align in (0, 1)
    },
    # Det: pivoting (a zero leading entry), singular and 1x1 matrices, a batch of f64.
    "det_needs_pivoting": Case("Det", {"x": np.array([[0.0, 2.0, 1.0], [3.0, 1.0, 0.0], [1.0, 1.0, 5.0]], np.float32)}),
    "det_singular": Case("Det", {"x": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]], np.float32)}),
    "det_one_by_one": Case("Det", {"x": rand(4, 1, 1)}),
    "det_batch_float64": Case("Det", {"x": rand(2, 3, 5, 5, dtype=np.float64)}),
    # TensorScatter: no write_indices, a circular wrap past the end, another axis, integers.
    "tensor_scatter_no_write_indices": Case(
        "TensorScatter", {"cache": rand(2, 6, 3), "update": rand(2, 2, 3)}, opset=24
    ),
    "tensor_scatter_circular_wraps": Case(
        "TensorScatter",
        {"cache": ints(2, 3, 5, 2, dtype=np.int32), "update": ints(2, 3, 3, 2, dtype=np.int32)},
        {"mode": "circular", "axis": 2},
        initializers={"write_indices": np.array([4, 1])},
        opset=24,
    ),
    # MaxPool's Indices: row- and column-major, padding and dilations, 1-D and 3-D, integers.
    **{
        f"max_pool_indices_{len(kernel)}d_order{order}": Case(
            "MaxPool",
            {"x": rand(2, 3, *[7 - len(kernel)] * len(kernel))},
            {
                "kernel_shape": kernel,
                "pads": [1] * 2 * len(kernel),
                "strides": [2] * len(kernel),
                "storage_order": order,
            },
            outputs=2,
        )
        for kernel in ([3], [3, 2], [2, 2, 3])
        for order in (0, 1)
    },
    "max_pool_indices_dilated_int8": Case(
        "MaxPool",
        {"x": ints(1, 2, 6, 6, dtype=np.int8, low=-3, high=3)},
        {"kernel_shape": [2, 2], "dilations": [2, 2]},
        outputs=2,
    ),
    # Depthwise stride-1 convs along shifted rows: padded (asymmetric, dilated) with two outputs per
    # input channel; unpadded without bias (the input's planes read in place, columns dropped).
    "conv_depthwise_shifted_rows_padded": Case(
        "Conv",
        {"x": rand(1, 4, 9, 7), "w": rand(8, 1, 3, 3), "b": rand(8)},
        {"group": 4, "pads": [1, 2, 2, 0], "dilations": [2, 1]},
    ),
    "conv_depthwise_shifted_rows_unpadded": Case(
        "Conv", {"x": rand(2, 3, 5, 6)}, {"group": 3}, initializers={"w": rand(3, 1, 3, 2)}
    ),
    # Kernels of over 9 taps along wide rows ROW_BLOCK output rows at a time (padded rows of 16
    # columns): 9 rows (the last block recomputes one) with two outputs per channel, 6 rows of
    # groups of 2 channels at batch 2, asymmetric pads over exactly one block of 4 rows.
    "conv_depthwise_row_blocks_odd_rows": Case(
        "Conv",
        {"x": rand(1, 3, 9, 10)},
        {"group": 3, "pads": [3, 3, 3, 3]},
        initializers={"w": rand(6, 1, 7, 7), "b": rand(6)},
    ),
    "conv_grouped_row_blocks": Case(
        "Conv", {"x": rand(2, 4, 6, 12)}, {"group": 2, "pads": [2, 2, 2, 2]}, initializers={"w": rand(4, 2, 5, 5)}
    ),
    "conv_depthwise_row_blocks_asymmetric": Case(
        "Conv", {"x": rand(1, 2, 5, 11), "w": rand(2, 1, 5, 7)}, {"group": 2, "pads": [1, 3, 2, 2]}
    ),
    # Strided depthwise convs over phase planes: short rows (wide rows, compacted), an uneven
    # stride and asymmetric pads, rows longer than SHORT_ROW (row by row), no padding at all.
    "conv_depthwise_stride2_short_rows": Case(
        "Conv",
        {"x": rand(1, 4, 15, 13), "w": rand(4, 1, 3, 3), "b": rand(4)},
        {"group": 4, "pads": [1, 1, 1, 1], "strides": [2, 2]},
    ),
    "conv_depthwise_stride3_asymmetric": Case(
        "Conv", {"x": rand(1, 3, 10, 11), "w": rand(6, 1, 3, 3)}, {"group": 3, "pads": [1, 0, 2, 1], "strides": [3, 2]}
    ),
    "conv_depthwise_stride2_long_rows": Case(
        "Conv",
        {"x": rand(1, 2, 9, 80), "w": rand(2, 1, 5, 5), "b": rand(2)},
        {"group": 2, "pads": [2, 2, 2, 2], "strides": [2, 2]},
    ),
    "conv_depthwise_stride2_unpadded": Case(
        "Conv", {"x": rand(2, 3, 9, 9), "w": rand(3, 1, 3, 3)}, {"group": 3, "strides": [2, 2]}
    ),
    # Grouped convs of few channels per group on the same path: ResNeXt-style groups of 4 in and
    # 4 out (one pass of 4 outputs), 3 in and 6 out (two passes of 3), strided 5x5 groups of 4.
    "conv_grouped_few_channels": Case(
        "Conv", {"x": rand(1, 16, 9, 10), "w": rand(16, 4, 3, 3), "b": rand(16)}, {"group": 4, "pads": [1, 1, 1, 1]}
    ),
    "conv_grouped_three_in_six_out": Case(
        "Conv", {"x": rand(2, 6, 7, 7), "w": rand(12, 3, 3, 3)}, {"group": 2, "pads": [0, 1, 2, 1]}
    ),
    "conv_grouped_stride2_5x5": Case(
        "Conv",
        {"x": rand(1, 8, 21, 40), "w": rand(8, 4, 5, 5), "b": rand(8)},
        {"group": 2, "pads": [2, 2, 2, 2], "strides": [2, 2]},
    ),
    # 2-D max pools go separably (a row buffer of the padded width): windows inside the input,
    # the last ceil_mode window past it, windows reaching into the padding (short and long
    # rows, bytes: ResNet's 3x3/2 of a QOperator model, an uneven stride), dilated windows.
    "max_pool_strided_inside_ceil": Case(
        "MaxPool", {"x": rand(1, 2, 11, 11)}, {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}
    ),
    "max_pool_strided_past_the_input_ceil": Case(
        "MaxPool", {"x": rand(1, 2, 12, 12)}, {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}
    ),
    "max_pool_strided_padded_short_rows": Case(
        "MaxPool", {"x": rand(2, 3, 13, 11)}, {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    ),
    "max_pool_strided_padded_uint8": Case(
        "MaxPool",
        {"x": ints(1, 4, 12, 12, dtype=np.uint8, low=0, high=255)},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    "max_pool_strided_padded_long_rows_int8": Case(
        "MaxPool",
        {"x": ints(1, 2, 7, 80, dtype=np.int8, low=-128, high=127)},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),
    "max_pool_strided_padded_uneven": Case(
        "MaxPool", {"x": -rand(1, 2, 10, 9)}, {"kernel_shape": [2, 3], "strides": [3, 2], "pads": [1, 0, 0, 2]}
    ),
    # Stride-1 max pools over small planes go flat (each pass a span of the flat plane, then the
    # edge columns again): odd sizes, a one-pixel-wide plane, uneven pads, dilation, bytes.
    "max_pool_flat_small_planes": Case(
        "MaxPool", {"x": rand(2, 3, 7, 5)}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    ),
    "max_pool_flat_one_column": Case(
        "MaxPool", {"x": rand(1, 2, 6, 1)}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    ),
    "max_pool_flat_uneven_dilated": Case(
        "MaxPool", {"x": -rand(1, 2, 9, 11)}, {"kernel_shape": [3, 2], "dilations": [2, 1], "pads": [2, 0, 2, 1]}
    ),
    "max_pool_flat_int8": Case(
        "MaxPool",
        {"x": ints(1, 2, 5, 6, dtype=np.int8, low=-128, high=127)},
        {"kernel_shape": [5, 3], "pads": [2, 1, 2, 1]},
        reference="onnxruntime",  # onnx.reference pads integers with NaN
    ),
    "max_pool_dilated_padded": Case(
        "MaxPool",
        {"x": rand(1, 3, 9, 10)},
        {"kernel_shape": [2, 3], "dilations": [2, 2], "strides": [1, 2], "pads": [1, 2, 0, 1]},
    ),
    "average_pool_strided_inside": Case(
        "AveragePool", {"x": rand(2, 3, 8, 9)}, {"kernel_shape": [2, 3], "strides": [2, 3]}
    ),
    # LRN's power through square roots (beta 0.5, 1) or powf (any other beta). Compared with
    # onnxruntime: onnx.reference's LRN sums squares for the first channels only (its channel
    # loop runs over x.shape[0], the batch).
    **{
        f"lrn_beta_{beta}": Case(
            "LRN",
            {"x": rand(1, 6, 3, 4)},
            {"size": 3, "alpha": 0.3, "beta": beta, "bias": 2.0},
            reference="onnxruntime",
        )
        for beta in (0.5, 1.0, 0.6)
    },
    # Deprecated operators, imported as their replacements (ScatterElements, Resize).
    "scatter_opset9_axis1": Case(
        "Scatter",
        {"data": rand(3, 4), "indices": np.array([[1, 3], [0, -1], [2, 2]]), "updates": rand(3, 2)},
        {"axis": 1},
        opset=9,
        reference="onnxruntime",  # the reference has no Scatter
    ),
    "upsample_opset7_nearest_attribute": Case(
        "Upsample",
        {"x": rand(1, 2, 2, 3)},
        {"scales": [1.0, 1.0, 2.0, 3.0]},
        opset=7,
        reference="onnxruntime",  # the reference implements only Upsample-9
    ),
    "upsample_opset9_linear": Case(
        "Upsample",
        {"x": rand(1, 1, 3, 4)},
        {"mode": "linear"},
        initializers={"scales": np.array([1.0, 1.0, 2.0, 1.5], np.float32)},
        opset=9,
        reference="onnxruntime",  # the reference implements nearest only
    ),
    # RoiAlign: adaptive sample counts (sampling_ratio 0), regions reaching outside
    # the image, opset 10's output_half_pixel default, max mode, f64.
    **{
        f"roi_align_{mode}_opset{opset}_ratio{ratio}": Case(
            "RoiAlign",
            {"x": rand(2, 3, 8, 9), "rois": ROIS, "batch_indices": np.array([1, 0, 1, 0])},
            {"mode": mode, "output_height": 3, "output_width": 2, "sampling_ratio": ratio, "spatial_scale": 0.5},
            opset=opset,
            # The reference applies opset 16's half_pixel default to RoiAlign-10 too.
            reference="onnxruntime" if opset == 10 else "onnx",
        )
        for mode in ("avg", "max")
        for opset in (10, 16)
        for ratio in (0, 2)
    },
    "roi_align_float64_aligned": Case(
        "RoiAlign",
        {
            "x": rand(1, 2, 6, 6, dtype=np.float64),
            "rois": ROIS[:2].astype(np.float64) / 2,
            "batch_indices": np.zeros(2, np.int64),
        },
        {"coordinate_transformation_mode": "half_pixel", "output_height": 2, "output_width": 2},
        opset=16,
    ),
    # DeformConv: groups and offset groups, strides, dilations, pads, offsets
    # reaching outside the input, mask and bias.
    "deform_conv_groups_strided": Case(
        "DeformConv",
        {"x": rand(2, 4, 6, 7), "w": rand(6, 2, 2, 3), "offset": rand(2, 2 * 6 * 2, 3, 2) * 2},
        {"group": 2, "offset_group": 2, "strides": [2, 2], "pads": [1, 0, 0, 1], "dilations": [1, 2]},
        opset=19,
    ),
    "deform_conv_mask_bias": Case(
        "DeformConv",
        {
            "x": rand(1, 3, 5, 5),
            "w": rand(2, 3, 3, 3),
            "offset": rand(1, 18, 5, 5),
            "b": rand(2),
            "mask": rand(1, 9, 5, 5, low=0.0, high=1.0),
        },
        {"pads": [1, 1, 1, 1]},
        opset=19,
    ),
    # LinearAttention: GQA with per-key decay and a past state; delta with a shared beta.
    "linear_attention_gated_gqa_past": Case(
        "LinearAttention",
        {
            "q": rand(2, 3, 4 * 3),
            "k": rand(2, 3, 2 * 3),
            "v": rand(2, 3, 2 * 5),
            "past": rand(2, 2, 3, 5),
            "decay": rand(2, 3, 2 * 3, low=-1.0, high=0.0),
        },
        {"update_rule": "gated", "q_num_heads": 4, "kv_num_heads": 2},
        opset=27,
        outputs=2,
    ),
    "linear_attention_delta_shared_beta_scale": Case(
        "LinearAttention",
        {"q": rand(1, 4, 6), "k": rand(1, 4, 6), "v": rand(1, 4, 4), "beta": rand(1, 4, 1, low=0.0, high=1.0)},
        {"update_rule": "delta", "q_num_heads": 2, "kv_num_heads": 2, "scale": 0.3},
        node_inputs=["q", "k", "v", "", "", "beta"],
        opset=27,
        outputs=2,
    ),
    # Einsum: implicit outputs, ellipsis broadcasting, diagonals and traces, three operands.
    "einsum_implicit_matmul": Case("Einsum", {"a": rand(3, 4), "b": rand(4, 5)}, {"equation": "ij,jk"}),
    "einsum_implicit_ellipsis_sorted": Case("Einsum", {"a": rand(2, 3, 4, 5)}, {"equation": "...ba"}),
    "einsum_ellipsis_broadcast": Case(
        "Einsum", {"a": rand(2, 1, 3, 4), "b": rand(1, 5, 4, 6)}, {"equation": "...ij,...jk->...ik"}
    ),
    "einsum_ellipsis_summed": Case("Einsum", {"a": rand(2, 3, 4)}, {"equation": "...i->i"}),
    "einsum_trace": Case("Einsum", {"a": rand(4, 4)}, {"equation": "ii"}),
    "einsum_diagonal_3d": Case("Einsum", {"a": rand(3, 2, 3)}, {"equation": "iji->ji"}),
    "einsum_three_operands": Case(
        "Einsum", {"a": rand(2, 3), "b": rand(3, 4), "c": rand(4, 2)}, {"equation": "ij, jk, kl -> il"}
    ),
    "einsum_outer_uppercase": Case("Einsum", {"a": rand(3), "b": rand(4)}, {"equation": "Z,a"}),
    "einsum_int32": Case(
        "Einsum", {"a": ints(2, 3, dtype=np.int32), "b": ints(3, 2, dtype=np.int32)}, {"equation": "ij,jk->ik"}
    ),
    "einsum_float16": Case(
        "Einsum", {"a": rand(2, 8, dtype=np.float16), "b": rand(8, 3, dtype=np.float16)}, {"equation": "ij,jk->ik"}
    ),
    # DFT: complex and real signals, dft_length padding and truncating, inverse, one-sided both ways.
    "dft_complex_padded": Case(
        "DFT", {"x": rand(2, 5, 3, 2)}, {}, initializers={"n": np.array(8), "axis": np.array(1)}, opset=20
    ),
    "dft_real_truncated_onesided": Case(
        "DFT", {"x": rand(3, 9, 1)}, {"onesided": 1}, initializers={"n": np.array(7), "axis": np.array(-2)}, opset=20
    ),
    "dft_inverse_complex_float64": Case(
        "DFT",
        {"x": rand(4, 6, 2, dtype=np.float64)},
        {"inverse": 1},
        initializers={"axis": np.array(0)},
        node_inputs=["x", "", "axis"],
        opset=20,
    ),
    "dft_irfft_odd_length": Case(
        "DFT",
        {"x": rand(2, 4, 2)},
        {"inverse": 1, "onesided": 1},
        initializers={"n": np.array(7), "axis": np.array(1)},
        opset=20,
    ),
    "dft_opset17_axis_attribute": Case("DFT", {"x": rand(3, 4, 6, 1)}, {"axis": 2}, opset=17),
    # STFT: a complex signal with a window, a real one without (two-sided).
    "stft_complex_window": Case(
        "STFT", {"x": rand(2, 20, 2)}, {"onesided": 0}, initializers={"step": np.array(3), "window": rand(8)}, opset=17
    ),
    "stft_real_frame_length": Case(
        "STFT",
        {"x": rand(1, 17, 1)},
        {"onesided": 1},
        initializers={"step": np.array(4), "frame_length": np.array(6)},
        node_inputs=["x", "step", "", "frame_length"],
        opset=17,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_op(name, tmp_path):
    run_case(CASES[name], tmp_path)


def assert_refused(case: Case, message: str, tmp_path) -> None:
    """Compiling the case fails with an UnsupportedOpError naming the node and `message`."""
    with pytest.raises(UnsupportedOpError, match=message) as raised:
        onnxc.compile(case.model(), tmp_path / "model.so")
    assert raised.value.op_type == case.op_type and raised.value.node == "node0"


def test_grid_sample_unknown_mode_is_refused(tmp_path):
    case = Case("GridSample", {"x": rand(1, 1, 3, 3), "grid": grid(1, 2, 2, 2)}, {"mode": "area"}, opset=20)
    assert_refused(case, "GridSample mode 'area'", tmp_path)


def test_einsum_bad_equation_is_a_shape_error(tmp_path):
    case = Case("Einsum", {"a": rand(2, 3)}, {"equation": "ijk->i"})
    with pytest.raises(ShapeError):
        onnxc.compile(with_output_types(case.model(), [np.zeros(2, np.float32)]), tmp_path / "model.so")


@pytest.mark.parametrize("stride, batch", [(1, 2), (2, "N")])
def test_depthwise_conv_applies_the_following_clip_in_its_store(stride, batch, tmp_path):
    """MobileNetV2's ReLU6 after a depthwise conv is no loop of its own (one nest writes the
    clipped sums), and the result is Clip's, over static and symbolic dims."""
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], group=4, strides=[stride] * 2, pads=[1] * 4),
        helper.make_node("Clip", ["c", "lo", "hi"], ["y"]),
    ]
    constants = {"w": rand(4, 1, 3, 3), "b": rand(4), "lo": np.array(0, np.float32), "hi": np.array(0.5, np.float32)}
    graph = helper.make_graph(
        nodes,
        "dw_relu6",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4, 40, 40])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(value, name) for name, value in constants.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    krnl = onnxc.compile(model, tmp_path / "dw.mlir", emit="krnl").read_text()
    # No Clip nest of its own (its ops would carry the Clip's location, "y"); each store into y
    # (one per region of the strided conv) clamps.
    stores = [line for line in krnl.splitlines() if "memref.store" in line]
    assert not any('loc("y")' in line for line in stores)
    assert krnl.count("arith.minimumf") == sum("%y[" in line for line in stores) > 0
    x = rand(2, 4, 40, 40)
    (got,) = onnxc.Session(onnxc.compile(model, tmp_path / "dw.so")).run(None, {"x": x})
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
