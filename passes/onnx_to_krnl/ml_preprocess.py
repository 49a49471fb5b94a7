"""The ai.onnx.ml feature transforms: Scaler, Normalizer, Binarizer, Imputer,
ArrayFeatureExtractor, OneHotEncoder and FeatureVectorizer, as onnxruntime
computes them (integer inputs become float where the output is float).

Per-feature parameters (Scaler's offset and scale, Imputer's values) are
broadcast along the last axis: one value for every feature, or one each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float, numpy_dtype_of
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.run_time_dims import delinearize
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.gather_scatter import load_index
from onnxc.passes.onnx_to_krnl.ml_encoders import key_finder
from onnxc.passes.onnx_to_krnl.ml_linear import feature_index, sample_rows
from onnxc.passes.onnx_to_krnl.ml_scores import load_as


def _per_feature(g: GraphLowering, op: OnnxOp, values: Sequence, features: int, name: str, dtype) -> np.ndarray:
    """A parameter of one value for all features or one per feature, as one per feature."""
    array = np.asarray(values, dtype=dtype).reshape(-1)
    if array.size == 1:
        return np.repeat(array, features)
    if array.size != features:
        raise g.shape_error(op, f"{name} has {array.size} values for {features} features")
    return array


def _feature_parameter(g: GraphLowering, op: OnnxOp, values: Sequence, features: int, name: str, element) -> SSAValue:
    """A per-feature parameter as a weight of `element`s."""
    array = _per_feature(g, op, values, features, name, numpy_dtype_of(element))
    return weight_buffer(g, op, array, element, name)


@lowers("Scaler")
def lower_scaler(g: GraphLowering, op: OnnxOp) -> None:
    """y = (x - offset) * scale, in float."""
    x, out = g.input(op, 0), g.result(op)
    g.element_type(op, x)
    shape = shape_of(x)
    offset = _feature_parameter(g, op, op.attr("offset") or [0.0], shape[-1], "offset", f32)
    scale = _feature_parameter(g, op, op.attr("scale") or [1.0], shape[-1], "scale", f32)
    ivs, b = g.top.loop_nest(shape)
    shifted = b.sub(load_as(b, x, ivs, f32), b.load(offset, [ivs[-1]]))
    b.store(b.mul(shifted, b.load(scale, [ivs[-1]])), out, ivs)


@lowers("Normalizer")
def lower_normalizer(g: GraphLowering, op: OnnxOp) -> None:
    """Each sample divided by its MAX (largest value), L1 or L2 norm; a sample whose
    norm is 0 is kept as it is."""
    x, samples, features = sample_rows(g, op)
    norm = op.attr("norm")
    if norm not in ("MAX", "L1", "L2"):
        raise g.unsupported(op, f"norm {norm!r} is not MAX, L1 or L2")
    out = g.result(op)
    ivs, b = g.top.loop_nest([samples])

    def value(inner: KernelBuilder, feature) -> SSAValue:
        return load_as(inner, x, feature_index(x, ivs[0], feature), f32)

    def step(inner: KernelBuilder, feature: list, total: SSAValue) -> SSAValue:
        v = value(inner, feature[0])
        if norm == "MAX":
            return inner.max(total, v)
        return inner.add(total, inner.abs(v) if norm == "L1" else inner.mul(v, v))

    start = b.constant(float(np.finfo(np.float32).min), f32) if norm == "MAX" else b.constant(0.0, f32)
    total = b.reduce([(0, features)], start, step)
    divisor = b.math(math.SqrtOp, total) if norm == "L2" else total
    zero = b.compare("eq", divisor, b.constant(0.0, f32))
    divisor = b.select(zero, b.constant(1.0, f32), divisor)
    feature_ivs, body = b.for_nest([(0, features)])
    body.store(body.div(value(body, feature_ivs[0]), divisor), out, feature_index(x, ivs[0], feature_ivs[0]))


@lowers("Binarizer", run_time_dims=True)
def lower_binarizer(g: GraphLowering, op: OnnxOp) -> None:
    """y = 1 where x > threshold, else 0, in x's type."""
    x, out = g.input(op, 0), g.result(op)
    element = g.element_type(op, x)
    ivs, b = g.top.loop_nest(shape_of(x))
    v = b.load(x, ivs)
    threshold = b.constant(op.attr("threshold"), element)
    b.store(b.select(b.compare("gt", v, threshold), b.constant(1, element), b.constant(0, element)), out, ivs)


@lowers("Imputer")
def lower_imputer(g: GraphLowering, op: OnnxOp) -> None:
    """x with each value equal to the replaced value (NaN matches NaN) set to its
    feature's imputed value."""
    x, out = g.input(op, 0), g.result(op)
    element = g.element_type(op, x)
    shape = shape_of(x)
    floating = is_float(element)
    imputed = op.attr("imputed_value_floats" if floating else "imputed_value_int64s") or []
    if not len(imputed):
        raise g.unsupported(op, f"no imputed values for a {element} input")
    values = _feature_parameter(g, op, imputed, shape[-1], "imputed_values", element)
    replaced = op.attr("replaced_value_float" if floating else "replaced_value_int64")
    ivs, b = g.top.loop_nest(shape)
    v = b.load(x, ivs)
    if floating and np.isnan(replaced):
        matches = b.is_nan(v)
    else:
        matches = b.compare("eq", v, b.constant(replaced, element))
    b.store(b.select(matches, b.load(values, [ivs[-1]]), v), out, ivs)


@lowers("ArrayFeatureExtractor", run_time_dims=True)
def lower_array_feature_extractor(g: GraphLowering, op: OnnxOp) -> None:
    """y[..., j] = x[..., indices.flat[j]] (indices along the last axis, negative from
    its end); a vector x gives one row [1, len(indices)], as in onnxruntime."""
    x, indices, out = g.input(op, 0), g.input(op, 1), g.result(op)
    last = shape_of(x)[-1]
    out_shape = shape_of(out)
    vector = len(shape_of(x)) == 1
    if len(out_shape) != (2 if vector else len(shape_of(x))):
        raise g.shape_error(op, f"result of shape {list(out_shape)} for an input of shape {list(shape_of(x))}")
    ivs, b = g.top.loop_nest(out_shape)
    index = load_index(b, indices, delinearize(b, ivs[-1], shape_of(indices)), last)
    b.store(b.load(x, [index] if vector else [*ivs[:-1], index]), out, ivs)


@lowers("OneHotEncoder")
def lower_one_hot_encoder(g: GraphLowering, op: OnnxOp) -> None:
    """y[..., k] = 1.0 where x[...] is the k-th category, else 0.0. With zeros=0 an
    unknown category is an error in onnxruntime; kernels have no way to fail at run
    time (the ABI's statuses are the entry point's checks), so it gets a row of
    zeros, as with zeros=1 (skl2onnx writes zeros=0 for handle_unknown='error')."""
    x, out = g.input(op, 0), g.result(op)
    if op.attr("cats_strings"):
        _one_hot_strings(g, op, x, out)
        return
    element = g.element_type(op, x)
    categories = np.asarray(op.attr("cats_int64s") or [], dtype=np.int64)
    table = weight_buffer(g, op, categories.astype(numpy_dtype_of(element)), element, "cats")
    ivs, b = g.top.loop_nest(shape_of(out))
    matches = b.compare("eq", b.load(x, ivs[:-1]), b.load(table, [ivs[-1]]))
    b.store(b.select(matches, b.constant(1.0, f32), b.constant(0.0, f32)), out, ivs)


def _one_hot_strings(g: GraphLowering, op: OnnxOp, x: SSAValue, out: SSAValue) -> None:
    """String categories: each string found once among them (a byte trie), then its row."""
    categories = list(op.attr("cats_strings"))
    keys = key_finder(g, op, x, categories)
    ivs, b = g.top.loop_nest(shape_of(x))
    position = keys(b, b.load(x, ivs))
    (k,), row = b.for_nest([(0, len(categories))])
    matches = row.compare("eq", position, row.from_index(k, i64))
    row.store(row.select(matches, row.constant(1.0, f32), row.constant(0.0, f32)), out, [*ivs, k])


@lowers("FeatureVectorizer")
def lower_feature_vectorizer(g: GraphLowering, op: OnnxOp) -> None:
    """The inputs' features side by side, `inputdimensions[i]` columns of input i
    (its first ones; zeros where it has fewer), as float."""
    out = g.result(op)
    widths = [int(w) for w in op.attr("inputdimensions") or []]
    inputs = g.inputs(op)
    if len(widths) != len(inputs):
        raise g.shape_error(op, f"{len(widths)} inputdimensions for {len(inputs)} inputs")
    samples = shape_of(out)[0]
    column = 0
    for x, width in zip(inputs, widths):
        g.element_type(op, x)
        shape = shape_of(x)
        have = min(width, shape[-1])
        ivs, b = g.top.loop_nest([samples, width])
        inside = b.compare_index("slt", ivs[1], have)
        clamped = b.select_index(inside, ivs[1], 0)
        value = load_as(b, x, [ivs[0], clamped] if len(shape) == 2 else [clamped], f32)
        b.store(b.select(inside, value, b.constant(0.0, f32)), out, [ivs[0], b.add(ivs[1], column)])
        column += width
