"""Result shapes of the ai.onnx.ml ops, where ONNX's inference functions give none
(LinearRegressor, Scaler, Normalizer, Imputer, SVM*, FeatureVectorizer infer only the
element type; ArrayFeatureExtractor leaves its last dim unknown) or a wrong one
(LinearClassifier's scores get 0 columns).

The rules follow onnxruntime's kernels: a 1-D input is one sample of its features,
and the output's first dim is the input's sample dim (symbolic names kept).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import dim_params

Dim = tuple[int, str]
"""A dim: its size (DYNAMIC_INDEX where unknown) and its symbolic name ("" where none)."""


def _samples(op: OnnxOp) -> Dim | None:
    """The sample dim of input 0: its first dim, or 1 for a vector of features."""
    ttype = op.input(0).type
    if not isinstance(ttype, TensorType) or ttype.get_num_dims() == 0:
        return None
    if ttype.get_num_dims() == 1:
        return 1, ""
    return ttype.get_shape()[0], dim_params(ttype)[0]


def _features(op: OnnxOp) -> int | None:
    ttype = op.input(0).type
    if not isinstance(ttype, TensorType) or ttype.get_num_dims() == 0:
        return None
    return ttype.get_shape()[-1]


def _same_as_input(op: OnnxOp) -> list[list[Dim]] | None:
    ttype = op.input(0).type
    if not isinstance(ttype, TensorType):
        return None
    return [list(zip(ttype.get_shape(), dim_params(ttype)))]


def linear_class_count(op: OnnxOp) -> int:
    """Score columns of a LinearClassifier: one per intercept, two where one score
    stands for a binary choice between two labels (onnxruntime adds the other)."""
    intercepts = op.attr("intercepts") or []
    labels = op.attr("classlabels_ints") or op.attr("classlabels_strings") or []
    return 2 if len(intercepts) == 1 and len(labels) == 2 else len(intercepts)


def svm_score_count(op: OnnxOp) -> int:
    """Score columns of an SVMClassifier (as onnxruntime writes them): one per class
    with probabilities or a linear SVM, else one per pair of classes (one vote row of
    two classes gives two columns)."""
    classes = len(op.attr("classlabels_ints") or op.attr("classlabels_strings") or [])
    vectors = op.attr("vectors_per_class") or []
    if op.attr("prob_a") or not vectors:
        return classes
    pairs = classes * (classes - 1) // 2
    return 2 if classes == 2 else pairs


def _labels_and_scores(columns: Callable[[OnnxOp], int]) -> Callable[[OnnxOp], list[list[Dim]] | None]:
    def rule(op: OnnxOp) -> list[list[Dim]] | None:
        samples = _samples(op)
        return None if samples is None else [[samples], [samples, (columns(op), "")]]

    return rule


def _columns(count: Callable[[OnnxOp], int | None]) -> Callable[[OnnxOp], list[list[Dim]] | None]:
    def rule(op: OnnxOp) -> list[list[Dim]] | None:
        samples, columns = _samples(op), count(op)
        return None if samples is None or columns is None else [[samples, (columns, "")]]

    return rule


def _feature_vector_width(op: OnnxOp) -> int | None:
    dims = op.attr("inputdimensions") or []
    return int(np.sum(dims)) if dims else None


def _one_hot(op: OnnxOp) -> list[list[Dim]] | None:
    ttype = op.input(0).type
    if not isinstance(ttype, TensorType):
        return None
    categories = len(op.attr("cats_int64s") or op.attr("cats_strings") or [])
    return [[*zip(ttype.get_shape(), dim_params(ttype)), (categories, "")]]


def _extracted(op: OnnxOp) -> list[list[Dim]] | None:
    """ArrayFeatureExtractor: the input's dims with the last one replaced by the number
    of indices (a vector input gives one row); ONNX leaves that dim unknown."""
    ttype, indices = op.input(0).type, op.input(1).type
    if not isinstance(ttype, TensorType) or not isinstance(indices, TensorType) or ttype.get_num_dims() == 0:
        return None
    if any(d < 0 for d in indices.get_shape()):
        return None
    width = (int(np.prod(indices.get_shape())), "")
    if ttype.get_num_dims() == 1:
        return [[(1, ""), width]]
    return [[*zip(ttype.get_shape()[:-1], dim_params(ttype)[:-1]), width]]


ML_RESULT_SHAPES: dict[str, Callable[[OnnxOp], list[list[Dim]] | None]] = {
    "LinearClassifier": _labels_and_scores(linear_class_count),
    "SVMClassifier": _labels_and_scores(svm_score_count),
    "LinearRegressor": _columns(lambda op: op.attr("targets")),
    "SVMRegressor": _columns(lambda op: 1),
    "FeatureVectorizer": _columns(_feature_vector_width),
    "Scaler": _same_as_input,
    "Normalizer": _same_as_input,
    "Imputer": _same_as_input,
    "Binarizer": _same_as_input,
    "OneHotEncoder": _one_hot,
    "ArrayFeatureExtractor": _extracted,
}
"""ai.onnx.ml op -> the dims of each of its results (None where the input's are unknown)."""


def ml_result_dims(op: OnnxOp, index: int) -> list[Dim] | None:
    """The dims of result `index` of an ai.onnx.ml op by the rules above, else None."""
    rule = ML_RESULT_SHAPES.get(op.OP_TYPE)
    shapes = rule(op) if rule is not None else None
    if shapes is None or index >= len(shapes) or any(d != DYNAMIC_INDEX and d < 0 for d, _ in shapes[index]):
        return None
    return shapes[index]
