"""A regular expression (RegexFullMatch's RE2 pattern) compiled at compile time
into a DFA over UTF-8 bytes, for a kernel that runs it one table lookup per byte.

The pattern is parsed by Python's `re` parser (its syntax agrees with RE2's on
what is accepted here) into a Thompson NFA over bytes, then determinized. As in
RE2, `\\w`, `\\d`, `\\s` and `\\b` are ASCII (`\\s` is [\\t\\n\\f\\r ]), `.` is any
code point but `\\n` (any with the `s` flag), and a negated class or `\\W`
matches any non-ASCII code point, as the whole of its UTF-8 sequence. The
assertions `^`, `$`, `\\A`, `\\z`, `\\b`, `\\B` depend on the bytes around a
position: a DFA state is a set of NFA states before their closure together with
the class of the byte before (start, word, other), and the closure is taken
when the next byte (or the end) is known.

What RE2 does not have, or this compiler does not (backreferences, lookaround,
case folding, non-ASCII ranges in classes...), raises `RegexError`.
"""

from __future__ import annotations

import re
import re._constants as sre
import re._parser as sre_parse
from dataclasses import dataclass, field

import numpy as np

MAX_STATES = 4096
"""A pattern whose DFA has more states is refused (its table would take 4 MiB)."""
MAX_NFA_STATES = 50_000

_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_DIGIT = frozenset(b"0123456789")
_SPACE = frozenset(b"\t\n\f\r ")
_ASCII = frozenset(range(128))
_START, _WORD_BYTE, _OTHER, _END = "start", "word", "other", "end"
_CONTINUATION = frozenset(range(0x80, 0xC0))
_NON_ASCII = ((frozenset(range(0xC2, 0xE0)), 1), (frozenset(range(0xE0, 0xF0)), 2), (frozenset(range(0xF0, 0xF5)), 3))
"""UTF-8 lead bytes and how many continuation bytes follow each."""


class RegexError(ValueError):
    """A pattern that is not valid or uses what is not supported; the message says what."""


@dataclass(frozen=True)
class CharClass:
    """Code points: a set of ASCII ones, and all non-ASCII ones or none, or some listed."""

    ascii: frozenset
    all_non_ascii: bool = False
    non_ascii: frozenset = frozenset()


@dataclass
class _Nfa:
    edges: list[list[tuple[frozenset, int]]] = field(default_factory=list)
    """Per state: (bytes, target) transitions."""
    empty: list[list[tuple[str | None, int]]] = field(default_factory=list)
    """Per state: (assertion or None, target) transitions that consume nothing."""

    def state(self) -> int:
        if len(self.edges) >= MAX_NFA_STATES:
            raise RegexError(f"the pattern needs more than {MAX_NFA_STATES} automaton states")
        self.edges.append([])
        self.empty.append([])
        return len(self.edges) - 1


def _category(code) -> CharClass:
    sets = {sre.CATEGORY_DIGIT: _DIGIT, sre.CATEGORY_WORD: _WORD, sre.CATEGORY_SPACE: _SPACE}
    negated = {sre.CATEGORY_NOT_DIGIT: _DIGIT, sre.CATEGORY_NOT_WORD: _WORD, sre.CATEGORY_NOT_SPACE: _SPACE}
    if code in sets:
        return CharClass(sets[code])
    if code in negated:
        return CharClass(_ASCII - negated[code], all_non_ascii=True)
    raise RegexError(f"character category {code} is not supported")


def _union(classes: list[CharClass]) -> CharClass:
    return CharClass(
        frozenset().union(*(c.ascii for c in classes)),
        any(c.all_non_ascii for c in classes),
        frozenset().union(*(c.non_ascii for c in classes)),
    )


def _literal(code: int) -> CharClass:
    return CharClass(frozenset({code})) if code < 128 else CharClass(frozenset(), non_ascii=frozenset({code}))


def _class_of(items) -> CharClass:
    negate = bool(items) and items[0][0] is sre.NEGATE
    parts = []
    for kind, value in items[1:] if negate else items:
        if kind is sre.LITERAL:
            parts.append(_literal(value))
        elif kind is sre.RANGE:
            low, high = value
            if high >= 128:
                raise RegexError("a character range beyond ASCII is not supported")
            parts.append(CharClass(frozenset(range(low, high + 1))))
        elif kind is sre.CATEGORY:
            parts.append(_category(value))
        else:
            raise RegexError(f"{kind} in a character class is not supported")
    union = _union(parts)
    if not negate:
        return union
    if union.non_ascii:
        raise RegexError("a negated character class with non-ASCII characters is not supported")
    return CharClass(_ASCII - union.ascii, all_non_ascii=not union.all_non_ascii)


class _Builder:
    """Thompson construction: each `_fragment` links `start` to a new end state."""

    def __init__(self, dotall: bool):
        self.nfa = _Nfa()
        self.dotall = dotall

    def _bytes(self, start: int, sequence: list[frozenset]) -> int:
        state = start
        for byte_set in sequence:
            following = self.nfa.state()
            self.nfa.edges[state].append((byte_set, following))
            state = following
        return state

    def _class(self, start: int, chars: CharClass) -> int:
        end = self.nfa.state()
        sequences: list[list[frozenset]] = []
        if chars.ascii:
            sequences.append([chars.ascii])
        if chars.all_non_ascii:
            sequences.extend([lead, *[_CONTINUATION] * count] for lead, count in _NON_ASCII)
        sequences.extend([frozenset({b}) for b in chr(code).encode("utf-8")] for code in sorted(chars.non_ascii))
        for sequence in sequences:
            self.nfa.empty[self._bytes(start, sequence)].append((None, end))
        return end

    def sequence(self, start: int, items) -> int:
        state = start
        for kind, value in items:
            state = self._fragment(state, kind, value)
        return state

    def _fragment(self, start: int, kind, value) -> int:
        if kind is sre.LITERAL:
            return self._class(start, _literal(value))
        if kind is sre.NOT_LITERAL:
            return self._class(start, _class_of([(sre.NEGATE, None), (sre.LITERAL, value)]))
        if kind is sre.ANY:
            return self._class(start, CharClass(_ASCII - (set() if self.dotall else {10}), all_non_ascii=True))
        if kind is sre.IN:
            return self._class(start, _class_of(value))
        if kind is sre.SUBPATTERN:
            _, add_flags, del_flags, pattern = value
            if (add_flags | del_flags) & ~sre.SRE_FLAG_UNICODE:
                raise RegexError("inline flags in a group are not supported")
            return self.sequence(start, pattern.data)
        if kind is sre.BRANCH:
            end = self.nfa.state()
            for alternative in value[1]:
                branch = self.nfa.state()
                self.nfa.empty[start].append((None, branch))
                self.nfa.empty[self.sequence(branch, alternative.data)].append((None, end))
            return end
        if kind in (sre.MAX_REPEAT, sre.MIN_REPEAT):  # laziness does not change a full match
            return self._repeat(start, *value)
        if kind is sre.AT:
            return self._assertion(start, value)
        raise RegexError(f"{str(kind).lower()} is not supported (RE2 has no backreferences or lookaround)")

    def _repeat(self, start: int, least: int, most, pattern) -> int:
        state = start
        for _ in range(least):
            state = self.sequence(state, pattern.data)
        if most is sre.MAXREPEAT:
            loop = self.nfa.state()
            self.nfa.empty[state].append((None, loop))
            self.nfa.empty[self.sequence(loop, pattern.data)].append((None, loop))
            return loop
        end = self.nfa.state()
        for _ in range(most - least):
            self.nfa.empty[state].append((None, end))
            state = self.sequence(state, pattern.data)
        self.nfa.empty[state].append((None, end))
        return end

    def _assertion(self, start: int, at) -> int:
        kinds = {
            sre.AT_BEGINNING: "begin", sre.AT_BEGINNING_STRING: "begin", sre.AT_END: "end",
            sre.AT_END_STRING: "end", sre.AT_BOUNDARY: "boundary", sre.AT_NON_BOUNDARY: "non_boundary",
        }  # fmt: skip
        if at not in kinds:
            raise RegexError(f"assertion {at} is not supported")
        end = self.nfa.state()
        self.nfa.empty[start].append((kinds[at], end))
        return end


def _holds(assertion: str | None, before: str, after: str) -> bool:
    if assertion is None:
        return True
    if assertion == "begin":
        return before == _START
    if assertion == "end":
        return after == _END
    boundary = (before == _WORD_BYTE) != (after == _WORD_BYTE)
    return boundary if assertion == "boundary" else not boundary


def _closure(nfa: _Nfa, states, before: str, after: str) -> set[int]:
    reached, pending = set(states), list(states)
    while pending:
        for assertion, target in nfa.empty[pending.pop()]:
            if target not in reached and _holds(assertion, before, after):
                reached.add(target)
                pending.append(target)
    return reached


@dataclass(frozen=True)
class Dfa:
    transitions: np.ndarray
    """int32 [states, 256]: the state after a byte; state 0 is the start."""
    accepting: np.ndarray
    """uint8 [states]: 1 where the input may end (a full match)."""


def compile_regex(pattern: str) -> Dfa:
    """The DFA of a full match of `pattern`."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as error:
        raise RegexError(f"invalid pattern: {error}") from None
    flags = parsed.state.flags & ~sre.SRE_FLAG_UNICODE
    if flags & ~sre.SRE_FLAG_DOTALL:
        raise RegexError("flags other than s (dot matches newline) are not supported")
    builder = _Builder(bool(flags & sre.SRE_FLAG_DOTALL))
    start = builder.nfa.state()
    final = builder.sequence(start, parsed.data)
    nfa = builder.nfa
    numbering: dict[tuple, int] = {}
    pending: list[tuple] = []

    def number(kernel: frozenset, before: str) -> int:
        key = (kernel, before if kernel else _OTHER)  # every empty set is the one dead state
        if key not in numbering:
            if len(numbering) >= MAX_STATES:
                raise RegexError(f"the pattern needs more than {MAX_STATES} automaton states")
            numbering[key] = len(numbering)
            pending.append(key)
        return numbering[key]

    number(frozenset({start}), _START)
    rows, accepting = [], []
    while pending:
        kernel, before = pending.pop(0)
        row = []
        for byte in range(256):
            after = _WORD_BYTE if byte in _WORD else _OTHER
            closed = _closure(nfa, kernel, before, after)
            following = frozenset(t for s in closed for byte_set, t in nfa.edges[s] if byte in byte_set)
            row.append(number(following, after))
        rows.append(row)
        accepting.append(final in _closure(nfa, kernel, before, _END))
    return Dfa(np.array(rows, dtype=np.int32), np.array(accepting, dtype=np.uint8))
