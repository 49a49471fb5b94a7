"""Exact-match lookups of keys known at compile time: a hash table built here,
searched in a kernel with a fixed, small number of probes.

A key is a pair of int64s (a trie node and the item or byte that leaves it,
or 0 and a value), mapped to a result >= 0. The table uses linear probing
with a multiplicative hash; its size and multipliers are chosen at compile
time so that no key lies more than `MAX_PROBES - 1` slots past its home slot,
so a lookup is that many unrolled, branch-free compares (a sorted table's
binary search takes one dependent load per halving: 11 for 2,000 keys).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from onnxc.passes.helpers.krnl_builder import KernelBuilder

MAX_PROBES = 4
_MASK = 2**64 - 1
_MULTIPLIERS = [
    (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F),
    (0xD6E8FEB86659FD93, 0xA0761D6478BD642F),
    (0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3),
    (0x589965CC75374CC3, 0x1D8E4E27C47D124F),
]
_EMPTY_NODE = -2
"""The node of an empty slot: no lookup asks for it (nodes are >= -1)."""


def _signed(value: int) -> int:
    return value - 2**64 if value >= 2**63 else value


def _home(node: int, value: int, multipliers: tuple[int, int], bits: int) -> int:
    mixed = (value * multipliers[0] + node * multipliers[1]) & _MASK
    return mixed >> (64 - bits)


def _place(keys: list[tuple[int, int]], multipliers: tuple[int, int], bits: int) -> list[int] | None:
    """Each key's slot by linear probing, or None if one lands MAX_PROBES or more past home."""
    taken: set[int] = set()
    slots = []
    for node, value in keys:
        home = _home(node, value, multipliers, bits)
        slot = next((home + k for k in range(MAX_PROBES) if home + k not in taken), None)
        if slot is None:
            return None
        taken.add(slot)
        slots.append(slot)
    return slots


class HashTable:
    """(node, value) -> result, for distinct keys; `find` gives -1 for any other key."""

    def __init__(
        self,
        nodes: np.ndarray,
        values: np.ndarray,
        results: np.ndarray,
        make_table: Callable[[np.ndarray, str], SSAValue],
    ):
        """`make_table(array, hint)` makes a weight buffer of an int64 array."""
        keys = list(zip(np.asarray(nodes, dtype=np.int64).tolist(), np.asarray(values, dtype=np.int64).tolist()))
        if len(set(keys)) != len(keys):
            raise ValueError("hash table keys repeat")
        least = max(1, (2 * len(keys) - 1).bit_length())
        for bits in range(least, least + 8):
            placed = [(m, _place(keys, m, bits)) for m in _MULTIPLIERS]
            multipliers, slots = next(((m, s) for m, s in placed if s is not None), (None, None))
            if slots is not None:
                break
        else:
            raise ValueError(f"no table of up to 2^{bits} slots holds the {len(keys)} keys within {MAX_PROBES} probes")
        self.multipliers, self.bits = multipliers, bits
        table = np.zeros((2**bits + MAX_PROBES, 3), dtype=np.int64)
        table[:, 0], table[:, 2] = _EMPTY_NODE, -1
        for (node, value), slot, result in zip(keys, slots, np.asarray(results, dtype=np.int64).tolist()):
            table[slot] = (node, value, result)
        self.table = make_table(table, "hash_table")

    def find(self, b: KernelBuilder, node: SSAValue, value: SSAValue) -> SSAValue:
        """The result of (node, value) (i64s), or -1."""
        mixed = b.add(
            b.mul(value, b.constant(_signed(self.multipliers[0]), i64)),
            b.mul(node, b.constant(_signed(self.multipliers[1]), i64)),
        )
        home = b.to_index(b.insert(arith.ShRUIOp(mixed, b.constant(64 - self.bits, i64))).result)
        result = b.constant(-1, i64)
        for probe in range(MAX_PROBES):
            slot = b.add(home, probe)
            same = b.and_(
                b.compare("eq", b.load(self.table, [slot, 0]), node),
                b.compare("eq", b.load(self.table, [slot, 1]), value),
            )
            result = b.select(same, b.load(self.table, [slot, 2]), result)
        return result
