"""What the ai.onnx.ml classifiers and regressors share: the post transforms of
their scores (NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO, PROBIT) applied to one
sample's scores held in registers, the argmax that picks a label, and reading
their attributes (class labels, score inputs as floats).

The formulas are onnxruntime's (ml_common.h), so that scores match it to float
rounding: PROBIT is its closed-form inverse-erf approximation, not the exact
quantile, and SOFTMAX_ZERO leaves scores of exactly zero out of the sum.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import math, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Block, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering

POST_TRANSFORMS = ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")
SOFTMAX_ZERO_EPSILON = 1e-7
"""|score| at or below this counts as zero for SOFTMAX_ZERO (onnxruntime's bound)."""


def post_transform_of(g: GraphLowering, op: OnnxOp) -> str:
    transform = op.attr("post_transform")
    if isinstance(transform, int):  # TreeEnsemble (ai.onnx.ml 5) numbers them
        transform = POST_TRANSFORMS[transform] if 0 <= transform < len(POST_TRANSFORMS) else str(transform)
    if transform not in POST_TRANSFORMS:
        raise g.unsupported(op, f"post_transform {transform!r} is not one of {', '.join(POST_TRANSFORMS)}")
    return transform


def logistic(b: KernelBuilder, value: SSAValue) -> SSAValue:
    """1 / (1 + e^-v), computed on -|v| so that e^x never overflows."""
    one = b.constant(1.0, value.type)
    tail = b.div(one, b.add(one, b.math(math.ExpOp, b.abs(value))))
    return b.select(b.less_than(value, b.constant(0.0, value.type)), tail, b.sub(one, tail))


def probit(b: KernelBuilder, value: SSAValue) -> SSAValue:
    """sqrt(2) * erfinv(2v - 1) with onnxruntime's approximation of erfinv."""
    element = value.type

    def c(x: float) -> SSAValue:
        return b.constant(x, element)

    x = b.sub(b.mul(c(2.0), value), c(1.0))
    sign = b.select(b.less_than(x, c(0.0)), c(-1.0), c(1.0))
    log = b.math(math.LogOp, b.mul(b.sub(c(1.0), x), b.add(c(1.0), x)))
    v = b.add(c(2 / (3.14159 * 0.147)), b.mul(c(0.5), log))
    v2 = b.mul(c(1 / 0.147), log)
    v3 = b.add(b.neg(v), b.math(math.SqrtOp, b.sub(b.mul(v, v), v2)))
    return b.mul(c(1.41421356), b.mul(sign, b.math(math.SqrtOp, v3)))


def _softmax(b: KernelBuilder, scores: Sequence[SSAValue], skip_zeros: bool) -> list[SSAValue]:
    top = scores[0]
    for score in scores[1:]:
        top = b.max(top, score)
    element = top.type
    exps = []
    total = b.constant(0.0, element)
    for score in scores:
        exp = b.math(math.ExpOp, b.sub(score, top))
        if skip_zeros:
            nonzero = b.compare("gt", b.abs(score), b.constant(SOFTMAX_ZERO_EPSILON, element))
            scaled_zero = b.mul(score, b.math(math.ExpOp, b.neg(top)))
            total = b.add(total, b.select(nonzero, exp, b.constant(0.0, element)))
            exp = b.select(nonzero, exp, scaled_zero)
        else:
            total = b.add(total, exp)
        exps.append(exp)
    return [b.div(exp, total) for exp in exps]


def post_transform(b: KernelBuilder, scores: Sequence[SSAValue], transform: str) -> list[SSAValue]:
    """One sample's scores after `transform` (for two or more scores; one score
    alone gets PROBIT only, as in onnxruntime, see `single_score`)."""
    if transform == "LOGISTIC":
        return [logistic(b, s) for s in scores]
    if transform == "PROBIT":
        return [probit(b, s) for s in scores]
    if transform in ("SOFTMAX", "SOFTMAX_ZERO"):
        return _softmax(b, scores, transform == "SOFTMAX_ZERO")
    return list(scores)


def single_score(b: KernelBuilder, score: SSAValue, transform: str, second_class: int | None) -> list[SSAValue]:
    """The score columns of one binary score, as onnxruntime writes them: PROBIT maps
    it alone; else `second_class` (its `add_second_class`) 0 or 1 gives [1 - s, s],
    2 gives [-s, s] and 3 gives [s, -s] (both [logistic(-s), logistic(s)] under
    LOGISTIC), None the score alone."""
    if transform == "PROBIT":
        return [probit(b, score)]
    if second_class is None:
        return [score]
    if second_class in (0, 1):
        return [b.sub(b.constant(1.0, score.type), score), score]
    if transform == "LOGISTIC":
        return [logistic(b, b.neg(score)), logistic(b, score)]
    return [b.neg(score), score] if second_class == 2 else [score, b.neg(score)]


def accumulate(
    b: KernelBuilder, count: int, inits: Sequence[SSAValue], step: Callable[[KernelBuilder, SSAValue, list], list]
) -> list[SSAValue]:
    """Fold `step(body, iv, accumulators) -> accumulators` over [0, count) in one
    scf.for carrying every accumulator (a row's dot products with several weight rows)."""
    body = Block(arg_types=[IndexType(), *(v.type for v in inits)])
    inner = b.at_end(body)
    inner.insert(scf.YieldOp(*step(inner, body.args[0], list(body.args[1:]))))
    loop = b.insert(scf.ForOp(b.index(0), b.index(count), b.index(1), list(inits), body))
    return list(loop.res)


def argmax(b: KernelBuilder, scores: Sequence[SSAValue]) -> SSAValue:
    """The index of the first largest score (an index value)."""
    best, position = scores[0], b.index(0)
    for k, score in enumerate(scores[1:], start=1):
        better = b.compare("gt", score, best)
        best = b.select(better, score, best)
        position = b.select_index(better, k, position)
    return position


def class_labels(g: GraphLowering, op: OnnxOp, int_attr: str, string_attr: str) -> np.ndarray:
    """The int64 class labels; string labels are refused (no string tensors yet)."""
    if op.attr(string_attr):
        raise g.unsupported(op, f"string class labels ({string_attr}): string tensors are not supported")
    return np.asarray(op.attr(int_attr) or [], dtype=np.int64)


def load_as(b: KernelBuilder, buffer: SSAValue, indices: Sequence, element: Attribute) -> SSAValue:
    """A tensor element converted to the type the op computes in (onnxruntime casts
    integer inputs to float)."""
    value = b.load(buffer, indices)
    return value if value.type == element else b.convert(value, element)
