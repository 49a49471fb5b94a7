"""Element and tensor types shared by the onnx and krnl dialects.

Signed integers are signless (`i32`), unsigned ones are `ui32`, bool is `i1`,
bfloat16 values are held in numpy as their raw 16 bits (uint16).
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
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
from xdsl.ir import Attribute

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
_ONNX_OF_ELEMENT: dict[Attribute, int] = {v: k for k, v in _ELEMENT_OF_ONNX.items()}

_NUMPY_OF_ELEMENT: dict[Attribute, np.dtype] = {
    elem: dtypes.numpy_dtype(code) for code, elem in _ELEMENT_OF_ONNX.items()
}
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


def arithmetic_view(array: np.ndarray, element: Attribute) -> np.ndarray:
    """`array` (values of `element`) as numpy can compute on them: bfloat16 bits
    viewed as ml_dtypes.bfloat16 (onnx's own bfloat16 type), others unchanged."""
    if isinstance(element, BFloat16Type):
        return np.asarray(array).view(ml_dtypes.bfloat16)
    return np.asarray(array)


def stored_values(numbers, element: Attribute) -> np.ndarray:
    """Numbers (a list or array) as the array holding them as `element`s: bfloat16
    rounded to nearest even and kept as its bits, others cast to their dtype."""
    if isinstance(element, BFloat16Type):
        return np.asarray(numbers, np.float32).astype(ml_dtypes.bfloat16).view(numpy_dtype_of(element))
    return np.asarray(numbers, numpy_dtype_of(element))


def element_type_of_numpy(dtype: np.dtype) -> Attribute:
    return _ELEMENT_OF_NUMPY[np.dtype(dtype)]


def tensor_type_of(dtype: np.dtype, shape: Sequence[int]) -> TensorType:
    return TensorType(element_type_of_numpy(dtype), list(shape))


def is_float(element: Attribute) -> bool:
    return isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)


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
