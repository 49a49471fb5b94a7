"""String ops whose results are strings: StringConcat, StringNormalizer and
StringSplit.

A new string's bytes go into one heap buffer per node (krnl.grow, sized by a
first pass over the inputs, freed when the call ends); a string that is part
of an input (a StringSplit piece, a string StringNormalizer keeps as it is) is
a slice of it and copies nothing. Passes that carry offsets or counts from one
element to the next are sequential (scf.for with iter_args).

Case changes are those of passes/helpers/case_change.py: ASCII letters in the
C locale, also the letters of two UTF-8 bytes in any other. StringSplit without
a delimiter splits at runs of ASCII whitespace (space, \\t, \\n, \\v, \\f,
\\r).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, i1, i8, i64
from xdsl.ir import SSAValue

from onnxc.dialects.krnl import ViewOp
from onnxc.dialects.krnl_growth import GrowOp
from onnxc.dialects.krnl_strings import StringSliceOp
from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import STRING
from onnxc.passes.helpers.case_change import ASCII_LOCALES, CaseChange
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import delinearize, element_count
from onnxc.passes.helpers.string_kernels import StringKeys, copy_bytes, make_string, string_byte, string_size
from onnxc.passes.onnx_to_krnl.common import GraphLowering, broadcast, lowers, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_encoders import constant_strings
from onnxc.passes.onnx_to_krnl.ml_scores import accumulate
from onnxc.passes.onnx_to_krnl.strings import string_input

WHITESPACE = b" \t\n\v\f\r"


def byte_buffer(g: GraphLowering, size: Bound) -> SSAValue:
    """A heap buffer of `size` bytes (at least one) at the top level, freed when the call ends."""
    buffer = g.top.insert(GrowOp(g.top.index(g.top.max(size, 1)), MemRefType(i8, [DYNAMIC_INDEX]))).result
    g.freed_at_end.append(buffer)
    return buffer


def empty_string(g: GraphLowering, op: OnnxOp) -> Callable[[KernelBuilder], SSAValue]:
    """(builder) -> the string of no bytes (of a one-byte constant made here, at the top level)."""
    constant = weight_buffer(g, op, np.zeros(1, np.int8), i8, "empty_string")
    return lambda b: make_string(b, constant, 0, 0)


def slice_of(b: KernelBuilder, string: SSAValue, offset: Bound, size: Bound) -> SSAValue:
    return b.insert(StringSliceOp(string, b.index(offset), b.index(size))).result


def lower_string_constant(g: GraphLowering, op: OnnxOp, value: np.ndarray) -> None:
    """A constant string tensor: its bytes one constant, the strings made from them
    at run time (a weight holds no pointers)."""
    out = g.result(op)
    string = constant_strings(g, op, [str(v) for v in value.reshape(-1).tolist()])
    (k,), b = g.top.loop_nest([value.size])
    b.store(string(b, k), out, delinearize(b, k, list(value.shape)))


@lowers("StringConcat", run_time_dims=True)
def lower_string_concat(g: GraphLowering, op: OnnxOp) -> None:
    """y = x1 + x2 element-wise, broadcast."""
    out = g.result(op)
    shape = shape_of(out)
    reads = [broadcast(g, op, string_input(g, op, k), shape) for k in (0, 1)]
    count = element_count(g.top, shape)

    def sizes(b: KernelBuilder, flat: SSAValue, total: list) -> list:
        ivs = delinearize(b, flat, shape)
        return [b.add(total[0], b.add(*(string_size(b, read.load(b, ivs)) for read in reads)))]

    (total,) = accumulate(g.top, count, [g.top.index(0)], sizes)
    buffer = byte_buffer(g, total)

    def write(b: KernelBuilder, flat: SSAValue, offset: list) -> list:
        ivs = delinearize(b, flat, shape)
        first, second = (read.load(b, ivs) for read in reads)
        size = copy_bytes(b, first, buffer, offset[0])
        size = b.add(size, copy_bytes(b, second, buffer, b.add(offset[0], size)))
        b.store(make_string(b, buffer, offset[0], size), out, ivs)
        return [b.add(offset[0], size)]

    accumulate(g.top, count, [g.top.index(0)], write)


@lowers("StringNormalizer", dynamic=True, run_time_dims=True)
def lower_string_normalizer(g: GraphLowering, op: OnnxOp) -> None:
    """The strings of a [C] or [1, C] input that are no stopword (compared as they
    are, or lowercased with is_case_sensitive=0), case-changed; with none left,
    one empty string (as onnxruntime)."""
    x = string_input(g, op, 0)
    shape = shape_of(x)
    if len(shape) not in (1, 2) or (len(shape) == 2 and shape[0] != 1):
        raise g.unsupported(op, f"input of shape {list(shape)} (a row [C] or [1, C] is expected)")
    action = op.attr("case_change_action") or "NONE"
    if action not in ("LOWER", "UPPER", "NONE"):
        raise g.unsupported(op, f"case_change_action {action!r} is not LOWER, UPPER or NONE")

    def make_table(array: np.ndarray, hint: str) -> SSAValue:
        return weight_buffer(g, op, array, i64, hint)

    unicode = (op.attr("locale") or "en_US.UTF-8") not in ASCII_LOCALES
    case_change = None if action == "NONE" else CaseChange(action == "UPPER", unicode, make_table).byte
    sensitive = bool(op.attr("is_case_sensitive"))
    lower = None if sensitive else CaseChange(False, unicode, make_table)
    stopwords = [w if lower is None else lower.text(w) for w in op.attr("stopwords") or []]
    keys = StringKeys(stopwords, make_table) if stopwords else None
    filtered = op.results[0].type.get_shape()[-1] < 0
    if not filtered and keys is not None:
        raise g.shape_error(op, f"result of type {op.results[0].type} for {len(stopwords)} stopwords")
    columns = shape[-1]
    out = g.dynamic_result(op, 0, list(shape)) if filtered else g.result(op)

    def kept(b: KernelBuilder, string: SSAValue) -> SSAValue:
        if keys is None:
            return b.constant(1, i1)
        position = keys.find(b, string, None if lower is None else lower.byte)
        return b.compare("lt", position, b.constant(0, i64))

    def at(position: Bound) -> list:
        return [0, position] if len(shape) == 2 else [position]

    def count(b: KernelBuilder, column: SSAValue, totals: list) -> list:
        string = b.load(x, at(column))
        keep = kept(b, string)
        size = b.select_index(keep, string_size(b, string), 0)
        return [b.add(totals[0], b.select_index(keep, 1, 0)), b.add(totals[1], size)]

    kept_count, total = accumulate(g.top, columns, [g.top.index(0), g.top.index(0)], count)
    buffer = byte_buffer(g, total) if case_change is not None else None

    def write(b: KernelBuilder, column: SSAValue, positions: list) -> list:
        written, offset = positions
        string = b.load(x, at(column))
        keep, size = kept(b, string), string_size(b, string)
        then = b.if_then(keep)
        if buffer is not None:
            copy_bytes(then, string, buffer, offset, case_change)
            string = make_string(then, buffer, offset, size)
        then.store(string, out, at(written))
        return [b.add(written, b.select_index(keep, 1, 0)), b.add(offset, b.select_index(keep, size, 0))]

    accumulate(g.top, columns, [g.top.index(0), g.top.index(0)], write)
    if filtered:
        empty = empty_string(g, op)
        none_left = g.top.compare_index("eq", kept_count, 0)
        then = g.top.if_then(g.top.and_(none_left, g.top.compare_index("sgt", columns, 0)))
        then.store(empty(then), out, at(0))
        g.finish_dynamic_result(op, 0, g.top.max(kept_count, 1))


Emit = Callable[[KernelBuilder, SSAValue, SSAValue, SSAValue], None]
"""(builder, start, size, piece number) -> None: a piece of the string found."""


def _split_on_whitespace(b: KernelBuilder, string: SSAValue, maxsplit: int, emit: Emit | None) -> SSAValue:
    """Python's str.split(None, maxsplit) of one string: its number of pieces."""
    size = string_size(b, string)

    def step(inner: KernelBuilder, position: SSAValue, state: list) -> list:
        in_word, start, pieces = state
        byte = string_byte(inner, string, position)
        space = inner.constant(0, i1)
        for character in WHITESPACE:
            space = inner.or_(space, inner.compare("eq", byte, inner.constant(character, i64)))
        begins = inner.and_(inner.not_(in_word), inner.not_(space))
        ends = inner.and_(in_word, space)
        if maxsplit >= 0:
            ends = inner.and_(ends, inner.compare_index("slt", pieces, maxsplit))
        if emit is not None:
            piece = inner.sub(position, start)
            emit(inner.if_then(ends), start, piece, pieces)
        in_word = inner.select(begins, inner.constant(1, i1), inner.select(ends, inner.constant(0, i1), in_word))
        return [in_word, inner.select_index(begins, position, start), inner.add(pieces, inner.select_index(ends, 1, 0))]

    in_word, start, pieces = accumulate(b, size, [b.constant(0, i1), b.index(0), b.index(0)], step)
    if emit is not None:
        rest = b.sub(size, start)
        emit(b.if_then(in_word), start, rest, pieces)
    return b.add(pieces, b.select_index(in_word, 1, 0))


def _split_on_delimiter(
    b: KernelBuilder, string: SSAValue, delimiter: bytes, maxsplit: int, emit: Emit | None
) -> SSAValue:
    """Python's str.split(delimiter, maxsplit) of one string: its number of pieces."""
    size = string_size(b, string)
    width = len(delimiter)

    def step(inner: KernelBuilder, position: SSAValue, state: list) -> list:
        start, pieces = state
        fits = inner.compare_index("sle", inner.add(position, width), size)
        found = inner.and_(fits, inner.compare_index("sge", position, start))
        last = inner.sub(inner.max(size, 1), 1)
        for k, character in enumerate(delimiter):  # reads clamped into the string; `fits` decides
            byte = string_byte(inner, string, inner.min(inner.add(position, k), last))
            found = inner.and_(found, inner.compare("eq", byte, inner.constant(character, i64)))
        if maxsplit >= 0:
            found = inner.and_(found, inner.compare_index("slt", pieces, maxsplit))
        if emit is not None:
            piece = inner.sub(position, start)
            emit(inner.if_then(found), start, piece, pieces)
        return [
            inner.select_index(found, inner.add(position, width), start),
            inner.add(pieces, inner.select_index(found, 1, 0)),
        ]

    start, pieces = accumulate(b, size, [b.index(0), b.index(0)], step)
    if emit is not None:
        emit(b, start, b.sub(size, start), pieces)
    return b.add(pieces, 1)


@lowers("StringSplit", dynamic=True, run_time_dims=True)
def lower_string_split(g: GraphLowering, op: OnnxOp) -> None:
    """Each string split as Python's str.split(delimiter or None, maxsplit): the
    pieces [..., M] padded with empty strings (M the most pieces of any string),
    and each string's number of pieces."""
    x = string_input(g, op, 0)
    shape = list(shape_of(x))
    delimiter = (op.attr("delimiter") or "").encode("utf-8")
    maxsplit = op.attr("maxsplit")
    maxsplit = -1 if maxsplit is None else int(maxsplit)

    def split(b: KernelBuilder, string: SSAValue, emit: Emit | None) -> SSAValue:
        if delimiter:
            return _split_on_delimiter(b, string, delimiter, maxsplit, emit)
        return _split_on_whitespace(b, string, maxsplit, emit)

    counts = g.result(op, 1)
    elements = element_count(g.top, shape)

    def count(b: KernelBuilder, flat: SSAValue, most: list) -> list:
        ivs = delinearize(b, flat, shape)
        pieces = split(b, b.load(x, ivs), None)
        b.store(b.from_index(pieces, i64), counts, ivs)
        return [b.max(most[0], pieces)]

    (most,) = accumulate(g.top, elements, [g.top.index(0)], count)
    pieces_type = MemRefType(STRING, [*[d if isinstance(d, int) else DYNAMIC_INDEX for d in shape], DYNAMIC_INDEX])
    rows = g.top.insert(
        GrowOp(g.top.index(g.top.max(g.top.mul(elements, most), 1)), MemRefType(STRING, [DYNAMIC_INDEX]))
    )
    g.freed_at_end.append(rows.result)
    sizes = [g.top.index(d) for d in shape if not isinstance(d, int)] + [most]
    pieces = g.top.insert(ViewOp(rows.result, 0, pieces_type, sizes)).result
    g.buffers[op.results[0]] = pieces
    empty = empty_string(g, op)
    ivs, fill = g.top.loop_nest([*shape, most])
    fill.store(empty(fill), pieces, ivs)

    def write(b: KernelBuilder, flat: SSAValue, _: list) -> list:
        ivs = delinearize(b, flat, shape)
        string = b.load(x, ivs)

        def emit(inner: KernelBuilder, start: SSAValue, size: SSAValue, number: SSAValue) -> None:
            inner.store(slice_of(inner, string, start, size), pieces, [*ivs, number])

        split(b, string, emit)
        return []

    accumulate(g.top, elements, [], write)
    g.finish_dynamic_result(op, 0, most)
