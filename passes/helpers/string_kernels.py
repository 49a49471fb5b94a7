"""What the string lowerings share: reading a string element's bytes, copying
them, comparing two strings, and finding a string among keys known at compile
time.

Keys are a byte trie built at compile time whose edges (parent, byte) -> child
are a hash table (passes/helpers/hash_table.py): a few branch-free probes per
byte of the string, however many keys there are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i8, i64
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_strings import StringByteOp, StringMakeOp, StringSizeOp
from onnxc.passes.helpers.hash_table import HashTable
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder


def string_size(b: KernelBuilder, string: SSAValue) -> SSAValue:
    """The string's length in bytes, an index."""
    return b.insert(StringSizeOp(string)).result


def string_byte(b: KernelBuilder, string: SSAValue, position: Bound) -> SSAValue:
    """Byte `position` of the string as an i64 in 0..255."""
    byte = b.insert(StringByteOp(string, b.index(position))).result
    return b.insert(arith.ExtUIOp(byte, i64)).result


ByteMap = Callable[[KernelBuilder, SSAValue, Bound], SSAValue]
"""(builder, string, position) -> the byte there as an i64 in 0..255, changed (a case
change, passes/helpers/case_change.py; it may read the bytes around it)."""


def copy_bytes(
    b: KernelBuilder, string: SSAValue, buffer: SSAValue, offset: Bound, byte_map: ByteMap | None = None
) -> SSAValue:
    """Write the string's bytes (changed by `byte_map`) into the byte buffer
    (memref of i8) from `offset` on; returns its size."""
    size = string_size(b, string)
    (i,), body = b.for_nest([(0, size)])
    if byte_map is None:
        byte = body.insert(StringByteOp(string, body.index(i))).result
    else:
        byte = body.insert(arith.TruncIOp(byte_map(body, string, i), i8)).result
    body.store(byte, buffer, [body.add(offset, i)])
    return size


def make_string(b: KernelBuilder, buffer: SSAValue, offset: Bound, size: Bound) -> SSAValue:
    """The string of `size` bytes of a byte buffer from `offset` on."""
    return b.insert(StringMakeOp(buffer, b.index(offset), b.index(size))).result


def strings_equal(b: KernelBuilder, a: SSAValue, c: SSAValue) -> SSAValue:
    """a == c as i1: the same length and the same bytes."""
    size, other_size = string_size(b, a), string_size(b, c)
    same_size = b.compare_index("eq", size, other_size)

    def step(inner: KernelBuilder, ivs: list, equal: SSAValue) -> SSAValue:
        (i,) = ivs
        return inner.and_(equal, inner.compare("eq", string_byte(inner, a, i), string_byte(inner, c, i)))

    return b.reduce([(0, b.min(size, other_size))], same_size, step)


class StringKeys:
    """Strings known at compile time (a node's keys), found at run time: `find`
    gives a string's position among them (the first of equal keys), or -1."""

    def __init__(self, keys: Sequence[str], make_table):
        """`make_table(array, hint)` makes a weight buffer of an int64 array."""
        children: list[dict[int, int]] = [{}]
        terminal = [-1]
        for position, key in enumerate(keys):
            node = 0
            for byte in key.encode("utf-8"):
                if byte not in children[node]:
                    children[node][byte] = len(children)
                    children.append({})
                    terminal.append(-1)
                node = children[node][byte]
            if terminal[node] < 0:
                terminal[node] = position
        edges = np.array([(parent, byte, child) for parent, e in enumerate(children) for byte, child in e.items()])
        self.edge_count = len(edges)
        self.empty_key = terminal[0]
        if self.edge_count:
            self.edges = HashTable(edges[:, 0], edges[:, 1], edges[:, 2], make_table)
        self.terminal = make_table(np.array([-1, *terminal], dtype=np.int64), "key_positions")

    def find(self, b: KernelBuilder, string: SSAValue, byte_map: ByteMap | None = None) -> SSAValue:
        """The position (i64) of the string (its bytes changed by `byte_map`) among
        the keys, or -1."""
        if not self.edge_count:
            size = string_size(b, string)
            return b.select(b.compare_index("eq", size, 0), b.constant(self.empty_key, i64), b.constant(-1, i64))

        def step(inner: KernelBuilder, ivs: list, node: SSAValue) -> SSAValue:
            (i,) = ivs
            byte = string_byte(inner, string, i) if byte_map is None else byte_map(inner, string, i)
            return self.edges.find(inner, node, byte)

        node = b.reduce([(0, string_size(b, string))], b.constant(0, i64), step)
        return b.load(self.terminal, [b.to_index(b.add(node, b.constant(1, i64)))])
