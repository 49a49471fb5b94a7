"""LabelEncoder and CategoryMapper (ai.onnx.ml): each element looked up among keys
known at compile time, giving the value at the key's position or the default.

String keys are a byte trie searched byte by byte (passes/helpers/
string_kernels.py); numeric keys a hash table of their bits (-0.0 as 0.0), NaN
matching a NaN key (as in onnxruntime). Of equal keys the first counts. String results are slices of one constant of every value's UTF-8 bytes
(and the default's), found by offset and size tables.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i8, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float, is_string, numpy_dtype_of
from onnxc.passes.helpers.hash_table import HashTable
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.string_kernels import StringKeys, make_string
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of, weight_buffer

Finder = Callable[[KernelBuilder, SSAValue], SSAValue]
"""(builder, element) -> the i64 position of its key, or -1."""

_DEFAULTS = {"string": "_Unused", "int": -1, "float": -0.0}
"""LabelEncoder's default_tensor where absent, by the values' kind (the schema's)."""


def key_finder(g: GraphLowering, op: OnnxOp, x: SSAValue, keys: list | np.ndarray) -> Finder:
    """How to find an element of `x` among `keys` (strings for a string `x`)."""
    element = x.type.get_element_type()
    if is_string(element):
        if not all(isinstance(k, str) for k in keys):
            raise g.unsupported(op, "numeric keys for a string input")
        found = StringKeys(list(keys), lambda array, hint: weight_buffer(g, op, array, i64, hint))
        return found.find
    g.element_type(op, x)
    if any(isinstance(k, str) for k in keys):
        raise g.unsupported(op, f"string keys for an input of {element}")
    keys = np.asarray(keys).astype(numpy_dtype_of(element))
    floating = is_float(element)
    nan = np.isnan(keys) if floating else np.zeros(len(keys), dtype=bool)
    nan_position = int(np.argmax(nan)) if nan.any() else -1
    width = keys.dtype.itemsize * 8
    bits = (keys + 0 if floating else keys).view(f"int{width}").astype(np.int64)  # -0.0 + 0 is 0.0
    first = {int(v): k for k, v in reversed(list(enumerate(bits.tolist()))) if not nan[k]}
    table = None
    if first:
        values = np.array(list(first), dtype=np.int64)
        positions = np.array(list(first.values()), dtype=np.int64)
        table = HashTable(np.zeros_like(values), values, positions, lambda a, hint: weight_buffer(g, op, a, i64, hint))

    def find(b: KernelBuilder, value: SSAValue) -> SSAValue:
        position = b.constant(-1, i64)
        if table is not None:
            key = value
            if floating:
                key = b.insert(arith.BitcastOp(b.add(value, b.constant(0.0, element)), IntegerType(width))).result
            position = table.find(b, b.constant(0, i64), b.convert(b.as_signless(key), i64))
        if nan_position >= 0:
            position = b.select(b.is_nan(value), b.constant(nan_position, i64), position)
        return position

    return find


def constant_strings(g: GraphLowering, op: OnnxOp, strings: list[str]) -> Callable[[KernelBuilder, SSAValue], SSAValue]:
    """(builder, index) -> strings[index], of a constant holding their bytes."""
    encoded = [s.encode("utf-8") for s in strings]
    sizes = np.array([len(e) for e in encoded], dtype=np.int64)
    text = np.frombuffer(b"".join(encoded) or b"\0", dtype=np.int8)
    data = weight_buffer(g, op, text, i8, "string_bytes")
    offsets = weight_buffer(g, op, np.cumsum(sizes) - sizes, i64, "string_offsets")
    lengths = weight_buffer(g, op, sizes, i64, "string_sizes")

    def string(b: KernelBuilder, index: SSAValue) -> SSAValue:
        return make_string(b, data, b.to_index(b.load(offsets, [index])), b.to_index(b.load(lengths, [index])))

    return string


def lower_lookup(g: GraphLowering, op: OnnxOp, keys, values: np.ndarray | list, default) -> None:
    """result = values[position of x's key], or `default` where x is no key."""
    x, out = g.input(op, 0), g.result(op)
    element = out.type.get_element_type()
    if len(keys) != len(values):
        raise g.shape_error(op, f"{len(keys)} keys for {len(values)} values")
    find = key_finder(g, op, x, keys)
    if is_string(element):
        string = constant_strings(g, op, [*(str(v) for v in values), str(default)])
        ivs, b = g.top.loop_nest(shape_of(x))
        position = find(b, b.load(x, ivs))
        found = b.compare("ge", position, b.constant(0, i64))
        b.store(string(b, b.select_index(found, b.to_index(position), len(values))), out, ivs)
        return
    dtype = numpy_dtype_of(element)
    table = weight_buffer(
        g, op, np.asarray(values).astype(dtype) if len(values) else np.zeros(1, dtype), element, "values"
    )
    ivs, b = g.top.loop_nest(shape_of(x))
    position = find(b, b.load(x, ivs))
    found = b.compare("ge", position, b.constant(0, i64))
    value = b.load(table, [b.select_index(found, b.to_index(position), 0)])
    b.store(b.select(found, value, b.constant(np.asarray(default).astype(dtype).item(), element)), out, ivs)


def _attribute(op: OnnxOp, prefix: str) -> tuple[str, list | np.ndarray]:
    """The form (tensor, strings, int64s, floats) and value of `prefix`_... present."""
    for form in ("tensor", "strings", "int64s", "floats"):
        value = op.attr(f"{prefix}_{form}")
        if value is not None and len(value):
            return form, value
    return "", []


@lowers("LabelEncoder", run_time_dims=True)
def lower_label_encoder(g: GraphLowering, op: OnnxOp) -> None:
    _, keys = _attribute(op, "keys")
    form, values = _attribute(op, "values")
    if form == "tensor":
        default = op.attr("default_tensor")
        kind = "string" if values.dtype == object else "float" if values.dtype.kind == "f" else "int"
        default = _DEFAULTS[kind] if default is None else np.asarray(default).reshape(-1)[0]
    else:
        default = op.attr(
            {"strings": "default_string", "int64s": "default_int64", "floats": "default_float"}.get(
                form, "default_int64"
            )
        )
    values = values.tolist() if isinstance(values, np.ndarray) and values.dtype == object else values
    lower_lookup(g, op, keys.tolist() if isinstance(keys, np.ndarray) else keys, values, default)


@lowers("CategoryMapper", run_time_dims=True)
def lower_category_mapper(g: GraphLowering, op: OnnxOp) -> None:
    """Strings to integers (cats_strings[i] -> cats_int64s[i], else default_int64)
    and integers to strings (else default_string)."""
    strings, ints = list(op.attr("cats_strings") or []), [int(v) for v in op.attr("cats_int64s") or []]
    if is_string(g.input(op, 0).type.get_element_type()):
        lower_lookup(g, op, strings, np.asarray(ints, dtype=np.int64), op.attr("default_int64"))
    else:
        lower_lookup(g, op, ints, strings, op.attr("default_string"))
