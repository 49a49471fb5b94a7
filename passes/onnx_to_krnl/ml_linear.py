"""LinearClassifier and LinearRegressor (ai.onnx.ml): scores = x @ coefficients^T
+ intercepts per sample, then the label (argmax, or the sign of a single score)
and the post transform, as onnxruntime computes them.

One loop over the samples; per sample one scf.for over the features carries
every class's dot product (the coefficients are a weight by handle, read row
by row), so each feature is loaded once however many classes there are.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.ml_shapes import linear_class_count
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_scores import (
    accumulate,
    argmax,
    class_labels,
    load_as,
    post_transform,
    post_transform_of,
    single_score,
)


def sample_rows(g: GraphLowering, op: OnnxOp) -> tuple[SSAValue, int, int]:
    """Input 0 with its samples and features: a matrix [N, C], or one sample [C]."""
    x = g.input(op, 0)
    g.element_type(op, x)
    shape = shape_of(x)
    if len(shape) not in (1, 2):
        raise g.unsupported(op, f"input of rank {len(shape)} (a matrix of samples or one sample is expected)")
    return x, (shape[0] if len(shape) == 2 else 1), shape[-1]


def feature_index(x: SSAValue, sample: SSAValue, feature) -> list:
    """Indices of one feature of one sample in a matrix [N, C] or a vector [C]."""
    return [sample, feature] if len(shape_of(x)) == 2 else [feature]


def linear_weights(g: GraphLowering, op: OnnxOp, rows: int, features: int) -> tuple[SSAValue, np.ndarray]:
    """The coefficients as a weight [rows, features] and the intercepts (zeros if absent)."""
    coefficients = np.asarray(op.attr("coefficients") or [], dtype=np.float32)
    if coefficients.size != rows * features:
        raise g.shape_error(op, f"{coefficients.size} coefficients for {rows} rows of {features} features")
    intercepts = np.asarray(op.attr("intercepts") or [0.0] * rows, dtype=np.float32)
    if intercepts.size != rows:
        raise g.shape_error(op, f"{intercepts.size} intercepts for {rows} rows")
    return weight_buffer(g, op, coefficients.reshape(rows, features), f32, "coefficients"), intercepts


def linear_scores(
    b: KernelBuilder, x: SSAValue, sample: SSAValue, weights: SSAValue, intercepts: np.ndarray
) -> list[SSAValue]:
    """x[sample] @ weights^T + intercepts: one f32 score per row of `weights`."""

    def step(inner: KernelBuilder, feature: SSAValue, sums: list) -> list:
        value = load_as(inner, x, feature_index(x, sample, feature), f32)
        return [inner.add(total, inner.mul(value, inner.load(weights, [row, feature]))) for row, total in enumerate(sums)]

    features = shape_of(weights)[1]
    return accumulate(b, features, [b.constant(float(v), f32) for v in intercepts], step)


@lowers("LinearClassifier")
def lower_linear_classifier(g: GraphLowering, op: OnnxOp) -> None:
    x, samples, features = sample_rows(g, op)
    labels = class_labels(g, op, "classlabels_ints", "classlabels_strings")
    transform = post_transform_of(g, op)
    rows = len(op.attr("intercepts") or []) or len(op.attr("coefficients") or []) // max(features, 1)
    if rows == 0 or (rows > 1 and len(labels) != rows):
        raise g.shape_error(op, f"{rows} score rows for {len(labels)} class labels")
    label_out, score_out = g.result(op, 0), g.result(op, 1)
    weights, intercepts = linear_weights(g, op, rows, features)
    table = weight_buffer(g, op, labels, i64, "class_labels") if rows > 1 else None
    ivs, b = g.top.loop_nest([samples])
    scores = linear_scores(b, x, ivs[0], weights, intercepts)
    if table is None:
        binary = len(labels) == 2
        positive, negative = (int(labels[1]), int(labels[0])) if binary else (1, 0)
        above = b.compare("gt", scores[0], b.constant(0.0, f32))
        label = b.select(above, b.constant(positive, i64), b.constant(negative, i64))
        columns = single_score(b, scores[0], transform, 1 if linear_class_count(op) == 2 else None)
    else:
        label = b.load(table, [argmax(b, scores)])
        columns = post_transform(b, scores, transform)
    b.store(label, label_out, ivs)
    for column, value in enumerate(columns):
        b.store(value, score_out, [ivs[0], column])


@lowers("LinearRegressor")
def lower_linear_regressor(g: GraphLowering, op: OnnxOp) -> None:
    x, samples, features = sample_rows(g, op)
    targets = op.attr("targets")
    transform = post_transform_of(g, op)
    out = g.result(op)
    weights, intercepts = linear_weights(g, op, targets, features)
    ivs, b = g.top.loop_nest([samples])
    scores = linear_scores(b, x, ivs[0], weights, intercepts)
    values = single_score(b, scores[0], transform, None) if targets == 1 else post_transform(b, scores, transform)
    for column, value in enumerate(values):
        b.store(value, out, [ivs[0], column])
