"""String tensors at the ABI: numpy arrays of str (object, `U` or `S` arrays)
as arrays of `onnxc_string` (runtime/onnxc.h), a (pointer, byte length) pair
per element pointing at its UTF-8 bytes; and back, as object arrays of str
(what onnxruntime returns)."""

from __future__ import annotations

import ctypes

import numpy as np

STRING_ELEMENT = np.dtype([("data", np.uintp), ("size", np.int64)], align=True)
"""struct onnxc_string: 16 bytes on 64-bit targets."""


def encode_strings(array: np.ndarray) -> np.ndarray:
    """`array`'s strings as onnxc_string elements of the same shape, pointing into a
    buffer that the result keeps alive (its base); a ValueError if an element is
    not a str (or bytes)."""
    flat = array.reshape(-1)
    encoded = []
    for value in flat.tolist():
        if isinstance(value, str):
            encoded.append(value.encode("utf-8"))
        elif isinstance(value, bytes):
            encoded.append(value)
        else:
            raise ValueError(f"an element is a {type(value).__name__}, not a str")
    head = len(encoded) * STRING_ELEMENT.itemsize
    buffer = np.empty(head + sum(map(len, encoded)) + 1, dtype=np.uint8)
    pairs = buffer[:head].view(STRING_ELEMENT)
    base = buffer.ctypes.data + head
    sizes = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.cumsum(sizes) - sizes
    pairs["data"] = base + offsets
    pairs["size"] = sizes
    buffer[head : head + int(sizes.sum())] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return pairs.reshape(array.shape)


def decode_strings(pairs: np.ndarray) -> np.ndarray:
    """onnxc_string elements (their bytes still alive) as an object array of str;
    bytes that are not UTF-8 are decoded with U+FFFD in their place."""
    strings = np.empty(pairs.shape, dtype=object)
    flat = strings.reshape(-1)
    for k, (address, size) in enumerate(pairs.reshape(-1).tolist()):
        flat[k] = ctypes.string_at(address, size).decode("utf-8", errors="replace") if size else ""
    return strings
