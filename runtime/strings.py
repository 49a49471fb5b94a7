"""String tensors at the ABI: numpy arrays of str (object, `U` or `S` arrays)
as arrays of `onnxc_string` (runtime/onnxc.h), a (pointer, byte length) pair
per element pointing at its UTF-8 bytes; and back, as object arrays of str
(what onnxruntime returns)."""

from __future__ import annotations

import ctypes

import numpy as np

STRING_ELEMENT = np.dtype([("data", np.uintp), ("size", np.int64)], align=True)
"""struct onnxc_string: 16 bytes on 64-bit targets."""


def _utf8(values: list) -> tuple[bytes, np.ndarray]:
    """The values' UTF-8 bytes, concatenated, and each one's byte count."""
    try:
        text = "".join(values)  # a TypeError unless every value is a str
    except TypeError:
        encoded = []
        for value in values:
            if not isinstance(value, str | bytes):
                raise ValueError(f"an element is a {type(value).__name__}, not a str") from None
            encoded.append(value.encode("utf-8") if isinstance(value, str) else value)
        return b"".join(encoded), np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    data = text.encode("utf-8")
    if len(data) == len(text):  # ASCII: a character is a byte
        return data, np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    return data, np.fromiter((len(v.encode("utf-8")) for v in values), dtype=np.int64, count=len(values))


def encode_strings(array: np.ndarray) -> np.ndarray:
    """`array`'s strings as onnxc_string elements of the same shape, pointing into a
    buffer that the result keeps alive (its base); a ValueError if an element is
    not a str (or bytes)."""
    data, sizes = _utf8(array.reshape(-1).tolist())
    head = len(sizes) * STRING_ELEMENT.itemsize
    buffer = np.empty(head + len(data) + 1, dtype=np.uint8)
    pairs = buffer[:head].view(STRING_ELEMENT)
    pairs["data"] = buffer.ctypes.data + head + np.cumsum(sizes) - sizes
    pairs["size"] = sizes
    buffer[head : head + len(data)] = np.frombuffer(data, dtype=np.uint8)
    return pairs.reshape(array.shape)


def decode_strings(pairs: np.ndarray) -> np.ndarray:
    """onnxc_string elements (their bytes still alive) as an object array of str;
    bytes that are not UTF-8 are decoded with U+FFFD in their place. Strings whose
    bytes follow each other (a library's output block) are read in one go."""
    flat = pairs.reshape(-1)
    addresses, sizes = flat["data"].astype(np.int64), flat["size"]
    strings = np.empty(len(flat), dtype=object)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    if len(flat) and (addresses - addresses[0] == starts).all():
        region = ctypes.string_at(int(addresses[0]), int(ends[-1])) if ends[-1] else b""
        text = region.decode("ascii") if region.isascii() else None
        if text is not None:
            strings[:] = [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
        else:
            strings[:] = [region[a:b].decode("utf-8", errors="replace") for a, b in zip(starts.tolist(), ends.tolist())]
    else:
        strings[:] = [
            ctypes.string_at(a, n).decode("utf-8", errors="replace") if n else ""
            for a, n in zip(addresses.tolist(), sizes.tolist())
        ]
    return strings.reshape(pairs.shape)
