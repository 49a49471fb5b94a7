"""ONNX element types and their numpy equivalents.

A leaf module (numpy only): the runtime uses it as well as the compiler.

The low-precision types (float8, float4, int4, int2...) have no numpy dtype of
their own: `ml_dtypes` provides them, one element per byte (the value's bits
in the low bits of the byte, the rest zero). It is imported only when such a
type is asked for, so a deployed model of ordinary types needs numpy alone.
"""

from __future__ import annotations

import numpy as np

# TensorProto.DataType codes; kept literal so the runtime need not import onnx.
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64 = 1, 2, 3, 4, 5, 6, 7
STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64 = 8, 9, 10, 11, 12, 13
BFLOAT16 = 16
FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ = 17, 18, 19, 20
UINT4, INT4, FLOAT4E2M1, FLOAT8E8M0, UINT2, INT2 = 21, 22, 23, 24, 25, 26

# bfloat16 has no numpy dtype: it is carried as its 16 raw bits.
BFLOAT16_STORAGE = np.dtype(np.uint16)

NUMPY_OF_ONNX: dict[int, np.dtype] = {
    FLOAT: np.dtype(np.float32),
    UINT8: np.dtype(np.uint8),
    INT8: np.dtype(np.int8),
    UINT16: np.dtype(np.uint16),
    INT16: np.dtype(np.int16),
    INT32: np.dtype(np.int32),
    INT64: np.dtype(np.int64),
    BOOL: np.dtype(np.bool_),
    FLOAT16: np.dtype(np.float16),
    DOUBLE: np.dtype(np.float64),
    UINT32: np.dtype(np.uint32),
    UINT64: np.dtype(np.uint64),
    BFLOAT16: BFLOAT16_STORAGE,
}
"""The element types numpy holds by itself."""

LOW_PRECISION: dict[int, str] = {
    FLOAT8E4M3FN: "float8_e4m3fn",
    FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
    FLOAT8E5M2: "float8_e5m2",
    FLOAT8E5M2FNUZ: "float8_e5m2fnuz",
    UINT4: "uint4",
    INT4: "int4",
    FLOAT4E2M1: "float4_e2m1fn",
    FLOAT8E8M0: "float8_e8m0fnu",
    UINT2: "uint2",
    INT2: "int2",
}
"""Types of under 8 bits or of 8-bit floats: code -> ml_dtypes name (also the signature's name)."""

NAME_OF_ONNX: dict[int, str] = {
    FLOAT: "float32",
    UINT8: "uint8",
    INT8: "int8",
    UINT16: "uint16",
    INT16: "int16",
    INT32: "int32",
    INT64: "int64",
    STRING: "string",
    BOOL: "bool",
    FLOAT16: "float16",
    DOUBLE: "float64",
    UINT32: "uint32",
    UINT64: "uint64",
    BFLOAT16: "bfloat16",
    **LOW_PRECISION,
}

ONNX_OF_NAME: dict[str, int] = {name: code for code, name in NAME_OF_ONNX.items()}


def has_numpy_dtype(onnx_type: int) -> bool:
    """Whether arrays can hold values of an ONNX element type (numpy, or ml_dtypes when installed)."""
    return onnx_type in NUMPY_OF_ONNX or onnx_type in LOW_PRECISION


def numpy_dtype(onnx_type: int) -> np.dtype:
    """The numpy dtype holding values of an ONNX element type (storage for bfloat16,
    the ml_dtypes type for the low-precision ones)."""
    if onnx_type in LOW_PRECISION:
        try:
            import ml_dtypes
        except ImportError:
            raise ImportError(
                f"element type {LOW_PRECISION[onnx_type]} needs the ml_dtypes package (pip install ml_dtypes)"
            ) from None
        return np.dtype(getattr(ml_dtypes, LOW_PRECISION[onnx_type]))
    return NUMPY_OF_ONNX[onnx_type]
