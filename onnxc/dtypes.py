"""ONNX element types and their numpy equivalents.

A leaf module (numpy only): the runtime uses it as well as the compiler.
"""

from __future__ import annotations

import numpy as np

# TensorProto.DataType codes; kept literal so the runtime need not import onnx.
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64 = 1, 2, 3, 4, 5, 6, 7
STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64 = 8, 9, 10, 11, 12, 13
BFLOAT16 = 16

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
}

ONNX_OF_NAME: dict[str, int] = {name: code for code, name in NAME_OF_ONNX.items()}


def numpy_dtype(onnx_type: int) -> np.dtype:
    """The numpy dtype holding values of an ONNX element type (storage for bfloat16)."""
    return NUMPY_OF_ONNX[onnx_type]
