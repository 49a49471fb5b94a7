"""TfIdfVectorizer's pool of n-grams as a trie built at compile time, whose edges
a lowering finds at run time in a hash table (passes/helpers/hash_table.py).

The trie is the one onnxruntime and onnx.reference build: n-grams of each size
in [min_gram_length, max_gram_length] are inserted in pool order (a later
duplicate replaces an earlier one's id); the k-th n-gram of the pool (over all
sizes) counts into output column `ngram_indexes[k]` with weight `weights[k]`
(onnxruntime's reading of the weights; onnx.reference weighs by column). Nodes
are numbered from 0 (the root); an edge is (parent, token): the item itself for
integers, its rank among the pool's distinct items for strings.
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
    """The pool's distinct items, sorted: a string's token is its position here."""
    edges: np.ndarray
    """int64 [edges, 3]: (parent, token, child) of every edge."""
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
    token = (lambda item: rank[item]) if any(isinstance(t, str) for t in tokens) else int
    edges = [(parent, token(item), child) for parent, e in enumerate(children) for item, child in e.items()]
    return NgramTrie(
        tokens=tokens,
        edges=np.array(edges, dtype=np.int64).reshape(-1, 3),
        ngrams=np.array([-1, *node_ids], dtype=np.int64),
        ngram_count=ngram_id,
    )
