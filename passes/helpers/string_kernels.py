"""What the string lowerings share: reading a string element's bytes, copying
them, comparing two strings, and finding a string among keys known at compile
time.

Keys are a byte trie built at compile time and held as sorted tables (an edge
is `parent * 256 + byte`), searched with `sorted_position`: one unrolled,
branch-free binary search per byte of the string, however many keys there are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i8, i64
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_strings import StringByteOp, StringMakeOp, StringSizeOp
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


def sorted_position(b: KernelBuilder, table: SSAValue, size: int, key: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(position, found): the last position of a sorted table of `size` (>= 1)
    entries whose entry is <= key (0 if none), and whether that entry is key. A
    branch-free binary search whose halvings are known at compile time."""
    base = 0
    remaining = size
    while remaining > 1:
        half = remaining // 2
        probe = b.add(base, half)
        base = b.select_index(b.compare("le", b.load(table, [probe]), key), probe, base)
        remaining -= half
    return b.index(base), b.compare("eq", b.load(table, [base]), key)


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
        edges = sorted((parent * 256 + byte, child) for parent, e in enumerate(children) for byte, child in e.items())
        self.edge_count = len(edges)
        self.empty_key = terminal[0]
        if edges:
            self.edges = make_table(np.array([key for key, _ in edges], dtype=np.int64), "key_edges")
            self.children = make_table(np.array([child for _, child in edges], dtype=np.int64), "key_children")
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
            key = inner.add(inner.mul(inner.from_index(node, i64), inner.constant(256, i64)), byte)
            edge, found = sorted_position(inner, self.edges, self.edge_count, key)
            return inner.select_index(found, inner.to_index(inner.load(self.children, [edge])), -1)

        node = b.reduce([(0, string_size(b, string))], b.index(0), step)
        return b.load(self.terminal, [b.add(node, 1)])
