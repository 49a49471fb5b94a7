"""Decoding ONNX TensorProtos into numpy arrays, in every form the format allows.

A tensor's values may sit in a typed field (`float_data`, `int32_data` —
which also carries float16/bfloat16 bits, int8/16, uint8/16, bool and the
low-precision types —, `int64_data`, `double_data`, `uint64_data`), in
little-endian `raw_data`, or in an external file next to the model. 4-bit and
2-bit types are packed two or four to a byte (lowest bits first) in both
`raw_data` and `int32_data`; they are unpacked to one element per byte, the
ml_dtypes layout the compiled code uses too. External locations are confined to
the model's folder: no absolute paths, no `..`, no symlink leading outside.

No tensor may exceed MAX_TENSOR_BYTES: a model claiming one (a declared input,
an inferred `ConstantOfShape` or `Reshape` result, an initializer's dims) is
refused with a typed error before anything of that size is allocated.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx

from onnxc import dtypes
from onnxc.errors import InvalidModelError, ShapeError, UnsupportedOpError

# 256 GiB: far above any real model's tensor, far below sizes whose byte offsets overflow int64.
MAX_TENSOR_BYTES = 1 << 38

_TYPED_FIELD = {
    dtypes.FLOAT: "float_data",
    dtypes.DOUBLE: "double_data",
    dtypes.INT64: "int64_data",
    dtypes.UINT32: "uint64_data",
    dtypes.UINT64: "uint64_data",
}


# Bits per element of the types packed several to a byte.
_PACKED_BITS = {dtypes.UINT4: 4, dtypes.INT4: 4, dtypes.FLOAT4E2M1: 4, dtypes.UINT2: 2, dtypes.INT2: 2}


def _typed_field(data_type: int) -> str:
    return _TYPED_FIELD.get(data_type, "int32_data")


def _little_endian(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype


def decode_tensor(tensor: onnx.TensorProto, base_dir: str | os.PathLike | None = None) -> np.ndarray:
    """The value of `tensor` as a C-contiguous numpy array in native byte order."""
    name = tensor.name or "<unnamed tensor>"
    if tensor.data_type == dtypes.STRING:
        return _string_tensor(tensor, name)
    if not dtypes.has_numpy_dtype(tensor.data_type):
        type_name = (
            onnx.TensorProto.DataType.Name(tensor.data_type)
            if tensor.data_type in onnx.TensorProto.DataType.values()
            else str(tensor.data_type)
        )
        raise UnsupportedOpError(f"tensor '{name}': element type {type_name} is not supported")
    dtype = dtypes.numpy_dtype(tensor.data_type)
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise InvalidModelError(f"tensor '{name}' has a negative dimension {list(shape)}")
    check_tensor_size(shape, dtype.itemsize, f"tensor '{name}'")
    count = element_count(shape)
    bits = _PACKED_BITS.get(tensor.data_type)
    if bits is not None:
        return _unpack(_packed_bytes(tensor, base_dir, -(-count * bits // 8)), bits, count).view(dtype).reshape(shape)

    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        raw = _read_external(tensor, base_dir, count * dtype.itemsize)
        values = np.frombuffer(raw, dtype=_little_endian(dtype))
    elif tensor.HasField("raw_data"):
        raw = tensor.raw_data
        if len(raw) != count * dtype.itemsize:
            raise InvalidModelError(
                f"tensor '{name}': raw_data has {len(raw)} bytes, "
                f"expected {count * dtype.itemsize} for shape {list(shape)}"
            )
        values = np.frombuffer(raw, dtype=_little_endian(dtype))
    else:
        field = getattr(tensor, _typed_field(tensor.data_type))
        if len(field) != count:
            raise InvalidModelError(
                f"tensor '{name}': {len(field)} values in {_typed_field(tensor.data_type)}, "
                f"expected {count} for shape {list(shape)}"
            )
        values = _from_typed_field(field, tensor.data_type, dtype)
    return np.require(values.astype(dtype, copy=False).reshape(shape), requirements="C")


def _string_tensor(tensor: onnx.TensorProto, name: str) -> np.ndarray:
    """A string tensor (string_data, UTF-8) as an object array of str."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        raise UnsupportedOpError(f"tensor '{name}': string tensors in external data are not supported")
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise InvalidModelError(f"tensor '{name}' has a negative dimension {list(shape)}")
    if len(tensor.string_data) != element_count(shape):
        raise InvalidModelError(
            f"tensor '{name}': {len(tensor.string_data)} strings, expected {element_count(shape)} for shape {list(shape)}"
        )
    values = np.empty(len(tensor.string_data), dtype=object)
    values[:] = [v.decode("utf-8", errors="replace") for v in tensor.string_data]
    return values.reshape(shape)


def element_count(shape) -> int:
    """The number of elements of a static shape, in Python ints (no int64 overflow)."""
    count = 1
    for dim in shape:
        count *= int(dim)
    return count


def check_tensor_size(shape, itemsize: int, what: str, **where) -> None:
    """Raise ShapeError if a tensor of this static shape would exceed MAX_TENSOR_BYTES."""
    nbytes = element_count(shape) * itemsize
    if nbytes > MAX_TENSOR_BYTES:
        raise ShapeError(
            f"{what} of shape {list(shape)} would take {nbytes:.3g} bytes; "
            f"onnxc refuses tensors over {MAX_TENSOR_BYTES >> 30} GiB",
            **where,
        )


def _packed_bytes(tensor: onnx.TensorProto, base_dir, nbytes: int) -> np.ndarray:
    """The bytes holding a tensor of a packed type, from wherever they are stored."""
    name = tensor.name or "<unnamed tensor>"
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        return np.frombuffer(_read_external(tensor, base_dir, nbytes), np.uint8)
    if tensor.HasField("raw_data"):
        data = np.frombuffer(tensor.raw_data, np.uint8)
    else:
        data = np.asarray(tensor.int32_data, dtype=np.int64).astype(np.uint8)  # one packed byte per entry
    if data.size != nbytes:
        raise InvalidModelError(f"tensor '{name}' holds {data.size} packed bytes, expected {nbytes}")
    return data


def _unpack(data: np.ndarray, bits: int, count: int) -> np.ndarray:
    """`count` elements of `bits` bits each, packed lowest bits first, one per byte."""
    shifts = np.arange(0, 8, bits, dtype=np.uint8)
    unpacked = (data[:, None] >> shifts) & np.uint8((1 << bits) - 1)
    return np.ascontiguousarray(unpacked.reshape(-1)[:count])


def _from_typed_field(field, data_type: int, dtype: np.dtype) -> np.ndarray:
    if data_type in (dtypes.FLOAT16, dtypes.BFLOAT16):
        # int32_data carries the 16 raw bits of each half-precision value.
        return np.asarray(field, dtype=np.int32).astype(np.uint16).view(dtype)
    if data_type in dtypes.LOW_PRECISION:
        # ... and the 8 raw bits of each float8.
        return np.asarray(field, dtype=np.int32).astype(np.uint8).view(dtype)
    if data_type == dtypes.BOOL:
        return np.asarray(field, dtype=np.int32) != 0
    return np.asarray(field).astype(dtype)


def _read_external(tensor: onnx.TensorProto, base_dir, nbytes: int) -> bytes:
    info = {entry.key: entry.value for entry in tensor.external_data}
    name = tensor.name or "<unnamed tensor>"
    location = info.get("location")
    if not location:
        raise InvalidModelError(f"tensor '{name}': external data without a location")
    if base_dir is None:
        raise InvalidModelError(
            f"tensor '{name}': external data '{location}' needs the model's folder (load from a path)"
        )
    path = safe_external_path(Path(base_dir), location, name)
    offset = int(info.get("offset", 0))
    length = int(info.get("length", nbytes))
    if length != nbytes or offset < 0:
        raise InvalidModelError(
            f"tensor '{name}': external data length {length} at offset {offset}, expected {nbytes} bytes"
        )
    size = path.stat().st_size
    if offset + length > size:
        raise InvalidModelError(
            f"tensor '{name}': external file '{location}' has {size} bytes, needs {offset + length}"
        )
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def safe_external_path(base_dir: Path, location: str, tensor_name: str) -> Path:
    """Resolve an external-data location, refusing anything outside the model's folder."""
    if os.path.isabs(location) or ".." in Path(location).parts:
        raise InvalidModelError(
            f"tensor '{tensor_name}': external data location '{location}' leaves the model's folder"
        )
    root = base_dir.resolve()
    path = (root / location).resolve()
    if root not in path.parents:
        raise InvalidModelError(
            f"tensor '{tensor_name}': external data location '{location}' leaves the model's folder"
        )
    if not path.is_file():
        raise InvalidModelError(f"tensor '{tensor_name}': external data file '{location}' not found")
    return path
