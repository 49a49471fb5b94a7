"""Element and tensor types shared by the onnx and krnl dialects.

Signed integers are signless (`i32`), unsigned ones are `ui32`, bool is `i1`,
bfloat16 values are held in numpy as their raw 16 bits (uint16).

Strings are `!onnx.string`: in memory one (pointer, byte length) pair per
element, pointing at UTF-8 bytes held elsewhere (docs/abi.md); numpy holds them
as object arrays of `str`. Only the string ops read them (`krnl.string_size`,
`krnl.string_byte`); data movement copies the pairs.

The low-precision types map to MLIR's: `f8E4M3FN`, `f8E4M3FNUZ`, `f8E5M2`,
`f8E5M2FNUZ`, `f8E8M0FNU`, `f4E2M1FN`, `i4`/`ui4`, `i2`/`ui2`. They are storage
types only: one element per byte in memory (as ml_dtypes holds them), moved
around by data-movement ops and converted by Cast; no arithmetic works on them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition

from onnxc import dtypes

_ELEMENT_OF_ONNX: dict[int, Attribute] = {
    dtypes.FLOAT: f32,
    dtypes.DOUBLE: f64,
    dtypes.FLOAT16: f16,
    dtypes.BFLOAT16: bf16,
    dtypes.INT8: IntegerType(8),
    dtypes.INT16: IntegerType(16),
    dtypes.INT32: IntegerType(32),
    dtypes.INT64: IntegerType(64),
    dtypes.UINT8: IntegerType(8, Signedness.UNSIGNED),
    dtypes.UINT16: IntegerType(16, Signedness.UNSIGNED),
    dtypes.UINT32: IntegerType(32, Signedness.UNSIGNED),
    dtypes.UINT64: IntegerType(64, Signedness.UNSIGNED),
    dtypes.BOOL: IntegerType(1),
}
_LOW_PRECISION_ELEMENT_OF_ONNX: dict[int, Attribute] = {
    dtypes.FLOAT8E4M3FN: Float8E4M3FNType(),
    dtypes.FLOAT8E4M3FNUZ: Float8E4M3FNUZType(),
    dtypes.FLOAT8E5M2: Float8E5M2Type(),
    dtypes.FLOAT8E5M2FNUZ: Float8E5M2FNUZType(),
    dtypes.UINT4: IntegerType(4, Signedness.UNSIGNED),
    dtypes.INT4: IntegerType(4),
    dtypes.FLOAT4E2M1: Float4E2M1FNType(),
    dtypes.FLOAT8E8M0: Float8E8M0FNUType(),
    dtypes.UINT2: IntegerType(2, Signedness.UNSIGNED),
    dtypes.INT2: IntegerType(2),
}
_ELEMENT_OF_ONNX.update(_LOW_PRECISION_ELEMENT_OF_ONNX)


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """The element type of ONNX string tensors."""

    name = "onnx.string"


STRING = StringType()
STRING_ELEMENT_BYTES = 16
"""A (pointer, int64 length) pair on every 64-bit target (and on wasm32, aligned to 8)."""
_LOW_PRECISION_ELEMENTS = frozenset(_LOW_PRECISION_ELEMENT_OF_ONNX.values())
_ONNX_OF_ELEMENT: dict[Attribute, int] = {v: k for k, v in _ELEMENT_OF_ONNX.items()}

_NUMPY_OF_ELEMENT: dict[Attribute, np.dtype] = {
    elem: dtypes.numpy_dtype(code) for code, elem in _ELEMENT_OF_ONNX.items()
}
_NUMPY_OF_ELEMENT[STRING] = np.dtype(object)
_ELEMENT_OF_ONNX[dtypes.STRING] = STRING
_ONNX_OF_ELEMENT[STRING] = dtypes.STRING
_ELEMENT_OF_NUMPY: dict[np.dtype, Attribute] = {
    np.dtype(dt): elem for elem, dt in _NUMPY_OF_ELEMENT.items() if elem != bf16
}


def element_type_of_onnx(onnx_type: int) -> Attribute | None:
    """xDSL element type of an ONNX TensorProto.DataType code, or None if unsupported."""
    return _ELEMENT_OF_ONNX.get(onnx_type)


def onnx_type_of(element: Attribute) -> int:
    return _ONNX_OF_ELEMENT[element]


def numpy_dtype_of(element: Attribute) -> np.dtype:
    return _NUMPY_OF_ELEMENT[element]


def element_type_of_numpy(dtype: np.dtype) -> Attribute:
    return _ELEMENT_OF_NUMPY[np.dtype(dtype)]


def tensor_type_of(dtype: np.dtype, shape: Sequence[int]) -> TensorType:
    return TensorType(element_type_of_numpy(dtype), list(shape))


def is_float(element: Attribute) -> bool:
    """The float types arithmetic works on (not the low-precision storage floats)."""
    return isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)


def is_string(element: Attribute) -> bool:
    return isinstance(element, StringType)


def is_low_precision(element: Attribute) -> bool:
    """A storage-only type of one element per byte: float8, float4, int4, int2 (signed or not)."""
    return element in _LOW_PRECISION_ELEMENTS


def static_shape(shape: Sequence[int]) -> bool:
    return all(d != DYNAMIC_INDEX and d >= 0 for d in shape)


def symbolic_tensor_type(element: Attribute, dims: Sequence[int], params: Sequence[str]) -> TensorType:
    """A tensor type whose dynamic dims keep their ONNX names in the encoding.

    `tensor<?x3xf32, ["N", ""]>`: the encoding lists a name per dim ("" where
    the dim is static or anonymous); it is omitted when no dim has a name.
    """
    if any(params):
        return TensorType(element, list(dims), ArrayAttr([StringAttr(p) for p in params]))
    return TensorType(element, list(dims))


def dim_params(ttype: TensorType) -> list[str]:
    """The symbolic names of a tensor type's dims ("" where none)."""
    encoding = ttype.encoding
    if isinstance(encoding, ArrayAttr) and all(isinstance(p, StringAttr) for p in encoding.data):
        return [p.data for p in encoding.data]
    return [""] * ttype.get_num_dims()
