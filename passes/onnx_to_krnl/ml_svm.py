"""SVMClassifier and SVMRegressor (ai.onnx.ml), as onnxruntime computes them
(svmclassifier.cc, svmregressor.cc).

One loop over the samples. Per sample, a scratch row holds the kernel value
K(x, sv) of every support vector (LINEAR, POLY, RBF or SIGMOID): the sums run
feature by feature along all vectors at once (support vectors stored transposed,
so that loop is contiguous and vectorizes: one vector at a time was 2.5-5x
slower), then the kernel function maps the row. Per class an scf.for over its
vectors carries, in f64 as onnxruntime sums them, that class's share of every
one-vs-one decision it takes part in: coefficient row r times K for
r < classes - 1. Decision (i, j) is then class i's share at row j - 1 plus
class j's at row i plus rho.

Labels are the one-vs-one vote (first class with most votes). With prob_a and
prob_b the decisions become pairwise probabilities (Platt's sigmoid) coupled
into class probabilities by ml_svm_coupling.py. Without support vectors the
model is linear (one score per class, x . coefficients + rho[0]).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import MemRefType, f32, f64, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_linear import feature_index, linear_scores, sample_rows
from onnxc.passes.onnx_to_krnl.ml_scores import (
    accumulate,
    argmax,
    class_labels,
    load_as,
    post_transform,
    post_transform_of,
    single_score,
)
from onnxc.passes.onnx_to_krnl.ml_svm_coupling import couple_probabilities, pairwise_probability

KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


class SupportVectors:
    """The support vectors, transposed to [features, vectors], as a weight; the
    coefficients [rows, vectors] as another; the kernel with its parameters; and a
    scratch row of kernel values per sample [samples, vectors]."""

    def __init__(self, g: GraphLowering, op: OnnxOp, samples: int, vectors: int, features: int, rows: int):
        kernel = op.attr("kernel_type") or "LINEAR"
        if kernel not in KERNELS:
            raise g.unsupported(op, f"kernel_type {kernel!r} is not one of {', '.join(KERNELS)}")
        params = [float(v) for v in op.attr("kernel_params") or []]
        if params and len(params) < 3:
            raise g.shape_error(op, f"{len(params)} kernel_params (gamma, coef0, degree expected)")
        self.kernel = kernel
        self.gamma, self.coef0, self.degree = (np.float32(v) for v in (params[:3] if params else [0.0] * 3))
        support = np.asarray(op.attr("support_vectors") or [], dtype=np.float32)
        if support.size != vectors * features:
            raise g.shape_error(
                op, f"{support.size} support_vectors values for {vectors} vectors of {features} features"
            )
        coefficients = np.asarray(op.attr("coefficients") or [], dtype=np.float32)
        if coefficients.size < rows * vectors:
            raise g.shape_error(op, f"{coefficients.size} coefficients for {rows} rows of {vectors} support vectors")
        transposed = np.ascontiguousarray(support.reshape(vectors, features).T)
        self.transposed = weight_buffer(g, op, transposed, f32, "support_vectors")
        self.coefficients = weight_buffer(
            g, op, coefficients[: rows * vectors].reshape(rows, vectors), f32, "coefficients"
        )
        self.kernels = g.top.alloc(MemRefType(f32, [samples, vectors]))
        self.count, self.features, self.rows = vectors, features, rows

    def fill_kernels(self, b: KernelBuilder, x: SSAValue, sample: SSAValue) -> None:
        """kernels[sample, v] = K(x[sample], v) for every vector v: the sums run feature
        by feature over all vectors at once (contiguous, so the vector loop vectorizes),
        then the kernel function maps the row."""
        rbf = self.kernel == "RBF"
        (vector,), body = b.for_nest([(0, self.count)])
        body.store(body.constant(0.0, f32), self.kernels, [sample, vector])
        (feature, vector), body = b.for_nest([(0, self.features), (0, self.count)])
        value = load_as(body, x, feature_index(x, sample, feature), f32)
        support = body.load(self.transposed, [feature, vector])
        term = body.square(body.sub(value, support)) if rbf else body.mul(value, support)
        body.store(body.add(body.load(self.kernels, [sample, vector]), term), self.kernels, [sample, vector])
        if self.kernel != "LINEAR":
            (vector,), body = b.for_nest([(0, self.count)])
            total = body.load(self.kernels, [sample, vector])
            body.store(self._kernel_of(body, total), self.kernels, [sample, vector])

    def _kernel_of(self, b: KernelBuilder, total: SSAValue) -> SSAValue:
        """The kernel from the sum: exp(-gamma * |x - v|^2), or of gamma * x.v + coef0 its
        power (POLY) or tanh (SIGMOID)."""
        if self.kernel == "RBF":
            return b.math(math.ExpOp, b.mul(b.constant(-self.gamma, f32), total))
        scaled = b.add(b.mul(b.constant(self.gamma, f32), total), b.constant(self.coef0, f32))
        if self.kernel == "SIGMOID":
            return b.math(math.TanhOp, scaled)
        if self.degree == 2:
            return b.square(scaled)
        if self.degree == 3:
            return b.mul(b.square(scaled), scaled)
        return b.math(math.PowFOp, scaled, b.constant(self.degree, f32))

    def weighted_sums(self, b: KernelBuilder, sample: SSAValue, start: int, count: int) -> list[SSAValue]:
        """Sum over vectors [start, start + count) of coefficients[r, v] * kernels[sample, v],
        per row r, in f64 (the products in f32, as onnxruntime)."""
        zeros = [b.constant(0.0, f64) for _ in range(self.rows)]
        if count == 0:
            return zeros

        def step(inner: KernelBuilder, offset: SSAValue, sums: list) -> list:
            vector = inner.add(offset, start)
            value = inner.load(self.kernels, [sample, vector])
            products = [inner.mul(inner.load(self.coefficients, [row, vector]), value) for row in range(self.rows)]
            return [inner.add(total, inner.convert(p, f64)) for total, p in zip(sums, products)]

        return accumulate(b, count, zeros, step)


def _floats(op: OnnxOp, name: str) -> np.ndarray:
    return np.asarray(op.attr(name) or [], dtype=np.float32)


def _decisions(
    b: KernelBuilder, svm: SupportVectors, x: SSAValue, sample: SSAValue, counts: Sequence[int], rho
) -> list[SSAValue]:
    """The one-vs-one decision values (f64) in onnxruntime's order (0,1), (0,2), ..., (1,2), ..."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int)
    svm.fill_kernels(b, x, sample)
    shares = [svm.weighted_sums(b, sample, int(s), int(c)) for s, c in zip(starts, counts)]
    classes = len(counts)
    pairs = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
    return [
        b.add(b.add(shares[i][j - 1], shares[j][i]), b.constant(float(rho[k]), f64)) for k, (i, j) in enumerate(pairs)
    ]


def _votes(b: KernelBuilder, decisions: Sequence[SSAValue], classes: int) -> list[SSAValue]:
    """Per class, the decisions it wins: (i, j) goes to i when positive, else to j."""
    zero, one = b.constant(0, i64), b.constant(1, i64)
    votes = [zero] * classes
    pairs = [(i, j) for i in range(classes) for j in range(i + 1, classes)]
    for decision, (i, j) in zip(decisions, pairs):
        positive = b.compare("gt", decision, b.constant(0.0, f64))
        votes[i] = b.add(votes[i], b.select(positive, one, zero))
        votes[j] = b.add(votes[j], b.select(positive, zero, one))
    return votes


def _linear_label(b: KernelBuilder, scores: Sequence[SSAValue], table: SSAValue, all_positive: bool, probable: bool):
    """The label of a linear SVM: the first best score's, except that with two classes
    and no probabilities onnxruntime takes the second label for a best score above
    0.5 (all coefficients non-negative) or above 0 (some negative)."""
    best = argmax(b, scores)
    if len(scores) != 2 or probable:
        return b.load(table, [best])
    top = b.max(scores[0], scores[1])
    bound = b.constant(0.5, f32) if all_positive else b.constant(0.0, f32)
    second = b.compare("ge" if all_positive else "gt", top, bound)
    return b.load(table, [b.select_index(second, 1, best)])


@lowers("SVMClassifier")
def lower_svm_classifier(g: GraphLowering, op: OnnxOp) -> None:
    x, samples, features = sample_rows(g, op)
    labels = class_labels(g, op, "classlabels_ints", "classlabels_strings")
    transform = post_transform_of(g, op)
    classes = len(labels)
    counts = [int(c) for c in op.attr("vectors_per_class") or []]
    prob_a, prob_b, rho = _floats(op, "prob_a"), _floats(op, "prob_b"), _floats(op, "rho")
    pairs = classes * (classes - 1) // 2
    if classes < 2:
        raise g.unsupported(op, f"{classes} class labels (two or more expected)")
    if counts and len(counts) != classes:
        raise g.shape_error(op, f"vectors_per_class has {len(counts)} entries for {classes} class labels")
    if len(prob_a) != len(prob_b) or (len(prob_a) and len(prob_a) < pairs):
        raise g.shape_error(op, f"{len(prob_a)} prob_a and {len(prob_b)} prob_b for {pairs} pairs of classes")
    if len(rho) < (pairs if counts else 1):
        raise g.shape_error(op, f"{len(rho)} rho values for {pairs if counts else 1} decisions")
    probable = len(prob_a) > 0
    if counts and not probable and classes == 2 and transform == "PROBIT":
        raise g.unsupported(op, "PROBIT of a two-class SVM without probabilities (onnxruntime leaves a column unset)")
    label_out, score_out = g.result(op, 0), g.result(op, 1)
    table = weight_buffer(g, op, labels, i64, "class_labels")
    if not counts:
        _lower_linear_svm(g, op, x, samples, features, labels, rho, probable, transform, table)
        return
    svm = SupportVectors(g, op, samples, sum(counts), features, classes - 1)
    ivs, b = g.top.loop_nest([samples])
    decisions = _decisions(b, svm, x, ivs[0], counts, rho)
    b.store(b.load(table, [argmax(b, _votes(b, decisions, classes))]), label_out, ivs)
    scores = [b.convert(d, f32) for d in decisions]
    if probable:
        pairwise = [pairwise_probability(b, s, float(a), float(p)) for s, a, p in zip(scores, prob_a, prob_b)]
        columns = post_transform(b, couple_probabilities(b, pairwise, classes), transform)
    elif classes == 2:
        columns = single_score(b, scores[0], transform, 2 if transform == "NONE" else 0)
    else:
        columns = post_transform(b, scores, transform)
    for column, value in enumerate(columns):
        b.store(value, score_out, [ivs[0], column])


def _lower_linear_svm(g, op, x, samples, features, labels, rho, probable, transform, table) -> None:
    """An SVMClassifier without support vectors: one linear score per class."""
    classes = len(labels)
    coefficients = _floats(op, "coefficients")
    if coefficients.size != classes * features:
        raise g.shape_error(op, f"{coefficients.size} coefficients for {classes} classes of {features} features")
    weights = weight_buffer(g, op, coefficients.reshape(classes, features), f32, "coefficients")
    ivs, b = g.top.loop_nest([samples])
    scores = linear_scores(b, x, ivs[0], weights, np.full(classes, rho[0], dtype=np.float32))
    label = _linear_label(b, scores, table, bool(np.all(coefficients >= 0)), probable)
    b.store(label, g.result(op, 0), ivs)
    for column, value in enumerate(post_transform(b, scores, transform)):
        b.store(value, g.result(op, 1), [ivs[0], column])


@lowers("SVMRegressor")
def lower_svm_regressor(g: GraphLowering, op: OnnxOp) -> None:
    """sum_v coefficients[v] * K(x, v) + rho[0] (or x . coefficients + rho[0] without
    support vectors); one_class maps it to +1 / -1. onnxruntime applies no post transform."""
    x, samples, features = sample_rows(g, op)
    vectors = int(op.attr("n_supports") or 0)
    rho = _floats(op, "rho")
    if rho.size < 1:
        raise g.shape_error(op, "no rho value")
    out = g.result(op)
    if vectors:
        svm = SupportVectors(g, op, samples, vectors, features, 1)
        ivs, b = g.top.loop_nest([samples])
        svm.fill_kernels(b, x, ivs[0])
        (total,) = svm.weighted_sums(b, ivs[0], 0, vectors)
        value = b.add(b.convert(total, f32), b.constant(float(rho[0]), f32))
    else:
        coefficients = _floats(op, "coefficients")
        if coefficients.size != features:
            raise g.shape_error(op, f"{coefficients.size} coefficients for {features} features")
        weights = weight_buffer(g, op, coefficients.reshape(1, features), f32, "coefficients")
        ivs, b = g.top.loop_nest([samples])
        (value,) = linear_scores(b, x, ivs[0], weights, rho[:1])
    if op.attr("one_class"):
        above = b.compare("gt", value, b.constant(0.0, f32))
        value = b.select(above, b.constant(1.0, f32), b.constant(-1.0, f32))
    b.store(value, out, [ivs[0], 0])
