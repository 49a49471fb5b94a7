"""StringNormalizer's case changes, at compile time (of stopwords) and at run
time (byte by byte, in a kernel), the same way.

In the C (or POSIX) locale onnxruntime changes ASCII letters only. In another
locale (en_US.UTF-8, its default) it changes every letter the C library's
tables know; here, those of one or two UTF-8 bytes (Latin, Greek, Cyrillic,
Armenian...: code points below U+0800) whose changed form has as many bytes, by
a table of 1,920 entries made at compile time from Python's str.lower/upper.
Letters of three or four bytes, and the few whose changed form has another
length, are kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.string_kernels import string_byte, string_size

_TWO_BYTE = range(0x80, 0x800)
ASCII_LOCALES = ("C", "POSIX")


def _changed(character: str, upper: bool) -> str:
    changed = character.upper() if upper else character.lower()
    return changed if len(changed) == 1 and len(changed.encode()) == len(character.encode()) else character


class CaseChange:
    """LOWER or UPPER, of ASCII letters only or also of two-byte ones."""

    def __init__(self, upper: bool, unicode: bool, make_table: Callable[[np.ndarray, str], SSAValue]):
        """`make_table(array, hint)` makes a weight buffer of an int64 array."""
        self.upper, self.unicode = upper, unicode
        self.table = None
        if unicode:
            table = np.array([ord(_changed(chr(c), upper)) for c in _TWO_BYTE], dtype=np.int64)
            self.table = make_table(table, "upper_case" if upper else "lower_case")

    def text(self, text: str) -> str:
        """`text` changed as the kernel changes it."""
        return "".join(
            _changed(c, self.upper) if c.isascii() or (self.unicode and ord(c) in _TWO_BYTE) else c for c in text
        )

    def _ascii(self, b: KernelBuilder, byte: SSAValue) -> SSAValue:
        first, last, shift = ("a", "z", -32) if self.upper else ("A", "Z", 32)
        inside = b.and_(
            b.compare("ge", byte, b.constant(ord(first), i64)), b.compare("le", byte, b.constant(ord(last), i64))
        )
        return b.select(inside, b.add(byte, b.constant(shift, i64)), byte)

    def byte(self, b: KernelBuilder, string: SSAValue, position: Bound) -> SSAValue:
        """The changed byte at `position` (an i64): a two-byte letter's bytes are read
        around it (a lead byte C2..DF and one continuation byte 80..BF)."""
        byte = string_byte(b, string, position)
        ascii = self._ascii(b, byte)
        if not self.unicode:
            return ascii

        def constant(value: int) -> SSAValue:
            return b.constant(value, i64)

        def is_lead(value: SSAValue) -> SSAValue:
            return b.and_(b.compare("ge", value, constant(0xC2)), b.compare("le", value, constant(0xDF)))

        def is_continuation(value: SSAValue) -> SSAValue:
            return b.compare("eq", b.binary("and", value, constant(0xC0)), constant(0x80))

        size = string_size(b, string)
        after = string_byte(b, string, b.min(b.add(position, 1), b.sub(size, 1)))
        before = string_byte(b, string, b.max(b.sub(position, 1), 0))
        leads = b.and_(b.and_(is_lead(byte), is_continuation(after)), b.compare_index("slt", b.add(position, 1), size))
        follows = b.and_(b.and_(is_lead(before), is_continuation(byte)), b.compare_index("sge", position, 1))
        high, low = b.select(leads, byte, before), b.select(leads, after, byte)
        code = b.binary(
            "or", b.mul(b.binary("and", high, constant(0x1F)), constant(64)), b.binary("and", low, constant(0x3F))
        )
        slot = b.to_index(b.select(b.or_(leads, follows), b.sub(code, constant(0x80)), constant(0)))
        changed = b.load(self.table, [slot])
        lead = b.binary("or", b.div(changed, constant(64)), constant(0xC0))
        continuation = b.binary("or", b.binary("and", changed, constant(0x3F)), constant(0x80))
        return b.select(leads, lead, b.select(follows, continuation, ascii))
