"""The tokens of a TfIdfVectorizer that tokenizes its strings itself (the com.microsoft
Tokenizer fused into it by passes/fuse_tokenizer.py), as the pool's token ids.

For strings [R, C], the Tokenizer would give [R, C, M] tokens (M the most tokens of
any string, 2 more with start/end marks where any string has one), padded with
pad_value, which Flatten makes rows of C * M items. Here those rows are token ids
(StringKeys positions of the pool's tokens, -1 for a token in none) in one buffer of
R * C * M: a first pass over the strings counts their tokens (M), a second writes
the ids, after filling the buffer with the pad's id. A token is a maximal run of
bytes of the fused op's set (membership is looked up per byte, after the ASCII case
change folded in) with at least mincharnum characters (UTF-8 lead bytes); its text
is looked up case-changed.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, DictionaryAttr, MemRefType, i1, i64
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_growth import GrowOp
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.case_change import ASCII_LOCALES, CaseChange
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.run_time_dims import delinearize, element_count
from onnxc.passes.helpers.string_kernels import ByteMap, StringKeys, string_byte, string_size
from onnxc.passes.onnx_to_krnl.common import GraphLowering, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_scores import accumulate
from onnxc.passes.onnx_to_krnl.string_results import slice_of

START_MARK, END_MARK = "\x02", "\x03"


class TokenRows:
    """The token ids of a fused TfIdfVectorizer's strings, row by row."""

    def __init__(self, g: GraphLowering, op: OnnxOp, strings: SSAValue, settings: DictionaryAttr, pool: list[str]):
        fields = settings.data
        self.mincharnum = fields["mincharnum"].value.data
        self.mark = bool(fields["mark"].value.data)
        action = fields["case_change"].data
        unicode = "locale" in fields and fields["locale"].data not in ASCII_LOCALES

        def make_table(array: np.ndarray, hint: str) -> SSAValue:
            return weight_buffer(g, op, array, i64, hint)

        case_change = None if action == "NONE" else CaseChange(action == "UPPER", unicode, make_table)
        members = {attr.value.data for attr in fields["bytes"].data}
        self.members = make_table(np.array([_member(b, members, action) for b in range(256)], np.int64), "token_bytes")
        self.keys = StringKeys(pool, make_table)
        self.byte_map: ByteMap | None = None if case_change is None else case_change.byte

        def position(token: str) -> int:  # a constant token's id: its first place in the pool, or -1
            return pool.index(token) if token in pool else -1

        self.pad, self.start, self.end = (position(t) for t in (fields["pad_value"].data, START_MARK, END_MARK))
        shape = shape_of(strings)
        count = element_count(g.top, shape)

        def most_tokens(b: KernelBuilder, flat: SSAValue, most: list) -> list:
            return [b.max(most[0], self._scan(b, b.load(strings, delinearize(b, flat, shape)), None))]

        (most,) = accumulate(g.top, count, [g.top.index(0)], most_tokens)
        self.width = (
            g.top.select_index(g.top.compare_index("sgt", most, 0), g.top.add(most, 2), 0) if self.mark else most
        )
        self.row_length = g.top.mul(shape[1], self.width)
        size = g.top.mul(count, self.width)
        grown = GrowOp(g.top.index(g.top.max(size, 1)), MemRefType(i64, [DYNAMIC_INDEX]))
        self.ids = g.top.insert(grown).result
        g.freed_at_end.append(self.ids)
        (k,), fill = g.top.loop_nest([size])
        fill.store(fill.constant(self.pad, i64), self.ids, [k])

        def write(b: KernelBuilder, flat: SSAValue, _: list) -> list:
            string = b.load(strings, delinearize(b, flat, shape))
            base = b.mul(flat, self.width)
            first = b.add(base, 1) if self.mark else base

            def emit(inner: KernelBuilder, start: SSAValue, size: SSAValue, number: SSAValue) -> None:
                token = self.keys.find(inner, slice_of(inner, string, start, size), self.byte_map)
                inner.store(token, self.ids, [inner.add(first, number)])

            found = self._scan(b, string, emit)
            if self.mark:
                marked = b.if_then(b.compare_index("sgt", self.width, 0))
                marked.store(marked.constant(self.start, i64), self.ids, [base])
                marked.store(marked.constant(self.end, i64), self.ids, [marked.add(first, found)])
            return []

        accumulate(g.top, count, [], write)

    def token(self, b: KernelBuilder, row: SSAValue, position: SSAValue) -> SSAValue:
        """Item `position` of row `row` (i64)."""
        return b.load(self.ids, [b.add(b.mul(row, self.row_length), position)])

    def _scan(self, b: KernelBuilder, string: SSAValue, emit) -> SSAValue:
        """The number of tokens of `string`; `emit(builder, start, size, number)` for each if given."""
        size = string_size(b, string)
        minimum = self.mincharnum

        def step(inner: KernelBuilder, position: SSAValue, state: list) -> list:
            in_token, start, characters, tokens = state
            byte = string_byte(inner, string, position)
            member = inner.compare("ne", inner.load(self.members, [inner.to_index(byte)]), inner.constant(0, i64))
            ends = inner.and_(in_token, inner.not_(member))
            kept = inner.and_(ends, inner.compare_index("sge", characters, minimum))
            if emit is not None:
                length = inner.sub(position, start)  # before the branch that uses it
                emit(inner.if_then(kept), start, length, tokens)
            begins = inner.and_(inner.not_(in_token), member)
            continuation = inner.compare(
                "eq", inner.binary("and", byte, inner.constant(0xC0, i64)), inner.constant(0x80, i64)
            )
            counted = inner.add(inner.select_index(begins, 0, characters), inner.select_index(continuation, 0, 1))
            return [
                member,
                inner.select_index(begins, position, start),
                inner.select_index(member, counted, 0),
                inner.add(tokens, inner.select_index(kept, 1, 0)),
            ]

        initial = [b.constant(0, i1), b.index(0), b.index(0), b.index(0)]
        in_token, start, characters, tokens = accumulate(b, size, initial, step)
        last = b.and_(in_token, b.compare_index("sge", characters, minimum))
        if emit is not None:
            rest = b.sub(size, start)
            emit(b.if_then(last), start, rest, tokens)
        return b.add(tokens, b.select_index(last, 1, 0))


def _member(byte: int, members: set[int], action: str) -> int:
    """Whether `byte` is a token byte once case-changed (ASCII letters change; the others
    keep their membership: a two-byte letter stays two non-ASCII bytes)."""
    character = chr(byte)
    if byte < 128 and character.isalpha():
        character = character.upper() if action == "UPPER" else character.lower() if action == "LOWER" else character
    return int(ord(character) in members)
