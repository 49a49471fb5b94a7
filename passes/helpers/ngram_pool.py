"""TfIdfVectorizer's pool of n-grams as a trie built at compile time, flattened
into sorted tables that a lowering searches at run time.

The trie is the one onnxruntime and onnx.reference build: n-grams of each size
in [min_gram_length, max_gram_length] are inserted in pool order (a later
duplicate replaces an earlier one's id); the k-th n-gram of the pool (over all
sizes) counts into output column `ngram_indexes[k]` with weight `weights[k]`
(onnxruntime's reading of the weights; onnx.reference weighs by column). Nodes
are numbered from 0 (the root); an edge is (parent, token) with the token as
its rank among the pool's distinct items, so one table of sorted keys
`parent * tokens + token` finds any child by binary search, however large the
pool.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


class PoolError(ValueError):
    """ngram_counts and the pool disagree; the message says how."""


@dataclass(frozen=True)
class NgramTrie:
    tokens: list
    """The pool's distinct items, sorted: an item's token is its position here."""
    edge_keys: np.ndarray
    """int64, sorted: parent * len(tokens) + token of every edge."""
    edge_children: np.ndarray
    """int64: the child node of each edge, in the order of `edge_keys`."""
    ngrams: np.ndarray
    """int64, one per node plus one: ngrams[node + 1] is the position in the pool
    (over all sizes) of the n-gram ending at `node`, or -1 (ngrams[0] is -1: no
    node); it counts into column ngram_indexes[position] with weights[position]."""
    ngram_count: int
    """How many n-grams the pool has, of every size."""


def build_trie(
    pool: Sequence[Hashable], ngram_counts: Sequence[int], min_gram_length: int, max_gram_length: int
) -> NgramTrie:
    """The trie of the n-grams of `pool` whose size is in [min, max] (the op's attributes)."""
    counts = [int(c) for c in ngram_counts]
    if any(not 0 <= a <= b <= len(pool) for a, b in zip(counts, counts[1:] + [len(pool)])):
        raise PoolError(f"ngram_counts {counts} are not increasing starting points in a pool of {len(pool)}")
    children: list[dict] = [{}]
    node_ids: list[int] = [-1]
    ngram_id = 0
    for size, start in enumerate(counts, start=1):
        end = counts[size] if size < len(counts) else len(pool)
        if (end - start) % size:
            raise PoolError(f"{end - start} items for n-grams of size {size}")
        for first in range(start, end, size):
            if min_gram_length <= size <= max_gram_length:
                node = 0
                for item in pool[first : first + size]:
                    if item not in children[node]:
                        children[node][item] = len(children)
                        children.append({})
                        node_ids.append(-1)
                    node = children[node][item]
                node_ids[node] = ngram_id
            ngram_id += 1
    tokens = sorted({item for edges in children for item in edges})
    rank = {item: position for position, item in enumerate(tokens)}
    edges = sorted(
        (parent * len(tokens) + rank[item], child) for parent, e in enumerate(children) for item, child in e.items()
    )
    return NgramTrie(
        tokens=tokens,
        edge_keys=np.array([key for key, _ in edges], dtype=np.int64),
        edge_children=np.array([child for _, child in edges], dtype=np.int64),
        ngrams=np.array([-1, *node_ids], dtype=np.int64),
        ngram_count=ngram_id,
    )
