"""TfIdfVectorizer: per row of tokens, how often each n-gram of the pool occurs
(TF), its weight where it does (IDF), or the sum of its weight over its
occurrences (TFIDF), as onnxruntime computes them.

The pool is a trie built at compile time (passes/helpers/ngram_pool.py) whose
edges are a hash table; the kernel walks it from every start position and skip
distance, a few unrolled probes per step (no search loop, no branch but the
count). Skip distance d picks the items start,
start+d, start+2d...; unigrams are counted once, in a first pass, then n-grams
of two items or more for d = 1..max_skip_count+1: onnxruntime's order, which
decides IDF's value where n-grams share a column (the last one found sets it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from onnxc.dialects.microsoft import TOKENIZE_ATTR
from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_string
from onnxc.passes.helpers.hash_table import HashTable
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.ngram_pool import NgramTrie, PoolError, build_trie
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.helpers.string_kernels import StringKeys
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_linear import feature_index
from onnxc.passes.onnx_to_krnl.ml_scores import load_as
from onnxc.passes.onnx_to_krnl.tokenize import TokenRows

MODES = ("TF", "IDF", "TFIDF")

TokenOf = Callable[[KernelBuilder, SSAValue], SSAValue]
"""(builder, position in the row) -> the item's token (i64; a string in no n-gram: -1)."""


class NgramCounter:
    """The tables of one TfIdfVectorizer node's trie, and the walks that count
    the n-grams of a row into its result."""

    def __init__(self, g: GraphLowering, op: OnnxOp, pool: list):
        self.op, self.out = op, g.result(op)
        self.least, self.most = op.attr("min_gram_length"), op.attr("max_gram_length")
        if not 1 <= self.least <= self.most:
            raise g.unsupported(op, f"n-gram lengths {self.least}..{self.most} (1 <= min <= max_gram_length)")
        self.mode = op.attr("mode")
        if self.mode not in MODES:
            raise g.unsupported(op, f"mode {self.mode!r} is not one of {', '.join(MODES)}")
        try:
            self.trie: NgramTrie = build_trie(pool, op.attr("ngram_counts") or [], self.least, self.most)
        except PoolError as error:
            raise g.shape_error(op, str(error)) from None
        indexes = np.asarray(op.attr("ngram_indexes") or [], dtype=np.int64)
        weights = np.asarray(op.attr("weights") or [1.0] * len(indexes), dtype=np.float32)
        if len(indexes) < self.trie.ngram_count or (indexes < 0).any():
            raise g.shape_error(op, f"{len(indexes)} ngram_indexes (not negative) for {self.trie.ngram_count} n-grams")
        if len(weights) < self.trie.ngram_count:
            raise g.shape_error(op, f"{len(weights)} weights for {self.trie.ngram_count} n-grams")
        if shape_of(self.out)[-1] != indexes.max() + 1:
            raise g.shape_error(
                op, f"result of {shape_of(self.out)[-1]} columns for ngram_indexes up to {indexes.max()}"
            )
        ngrams = self.trie.ngrams
        found = ngrams >= 0
        edges = self.trie.edges

        def make_table(array: np.ndarray, hint: str) -> SSAValue:
            return weight_buffer(g, op, array, i64, hint)

        self.edges = HashTable(edges[:, 0], edges[:, 1], edges[:, 2], make_table) if len(edges) else None
        self.columns = weight_buffer(g, op, np.where(found, indexes[ngrams], -1), i64, "ngram_columns")
        self.weights = weight_buffer(g, op, np.where(found, weights[ngrams], 0.0).astype(np.float32), f32, "weights")

    def count_row(self, b: KernelBuilder, row: SSAValue, length, token_of: TokenOf) -> None:
        """The row's result (out[row] of rows, or all of out for one row): zeros,
        then every pool n-gram found in the row's `length` items counted."""
        (column,), zero = b.for_nest([(0, shape_of(self.out)[-1])])
        zero.store(zero.constant(0.0, f32), self.out, feature_index(self.out, row, column))
        if self.edges is None:
            return
        if self.least == 1:
            (start,), walk = b.for_nest([(0, length)])
            self._walk(walk, row, length, token_of, start, 1, 1, 0)
        if self.most >= 2:
            (distance, start), walk = b.for_nest([(1, self.op.attr("max_skip_count") + 2), (0, length)])
            self._walk(walk, row, length, token_of, start, distance, self.most, max(self.least, 2) - 1)

    def _walk(
        self, b: KernelBuilder, row: SSAValue, length, token_of: TokenOf, start, distance, depth: int, counted: int
    ) -> None:
        """From the root, `depth` steps along the items start, start+distance...;
        an n-gram of the pool reached after step `counted` (from 0) or later counts."""

        def step(inner: KernelBuilder, ivs: list, node: SSAValue) -> SSAValue:
            (n,) = ivs
            position = inner.add(start, inner.mul(n, distance))
            inside = inner.compare_index("slt", position, length)
            token = token_of(inner, inner.select_index(inside, position, 0))
            child = inner.select(inside, self.edges.find(inner, node, token), inner.constant(-1, i64))
            ngram = inner.to_index(inner.add(child, inner.constant(1, i64)))
            column = inner.load(self.columns, [ngram])
            hit = inner.compare("ge", column, inner.constant(0, i64))
            if counted:
                hit = inner.and_(hit, inner.compare_index("sge", n, counted))
            column = inner.to_index(column)
            self._count(inner.if_then(hit), row, column, ngram)
            return child

        b.reduce([(0, depth)], b.constant(0, i64), step)

    def _count(self, b: KernelBuilder, row: SSAValue, column: SSAValue, ngram: SSAValue) -> None:
        """One occurrence: TF adds 1, TFIDF the n-gram's weight; IDF sets the weight."""
        index = feature_index(self.out, row, column)
        weight = b.constant(1.0, f32) if self.mode == "TF" else b.load(self.weights, [ngram])
        b.store(weight if self.mode == "IDF" else b.add(b.load(self.out, index), weight), self.out, index)


@lowers("TfIdfVectorizer", run_time_dims=True)
def lower_tfidf_vectorizer(g: GraphLowering, op: OnnxOp) -> None:
    x = g.input(op, 0)
    strings = is_string(x.type.get_element_type())
    if strings != bool(op.attr("pool_strings")):
        raise g.unsupported(op, "a pool of strings for an integer input, or of integers for strings")
    if not strings:
        g.element_type(op, x)
    shape = shape_of(x)
    if len(shape) not in (1, 2):
        raise g.unsupported(op, f"input of rank {len(shape)} (a row [C] or rows [N, C] of tokens are expected)")
    pool = list(op.attr("pool_strings")) if strings else [int(v) for v in op.attr("pool_int64s") or []]
    counter = NgramCounter(g, op, pool)
    settings = op.attributes.get(TOKENIZE_ATTR)
    if settings is not None:  # a fused Tokenizer: the rows' tokens are found here
        if len(shape) != 2 or not strings:
            raise g.unsupported(op, f"a fused Tokenizer on {x.type} (strings [N, C] are expected)")
        rows = TokenRows(g, op, x, settings, counter.trie.tokens)
        (row,), b = g.top.loop_nest([shape[0]])
        counter.count_row(b, row, rows.row_length, lambda inner, position: rows.token(inner, row, position))
        return
    tokens = x
    if strings:  # each string's token found once, not at every walk that reads it
        keys = StringKeys(counter.trie.tokens, lambda array, hint: weight_buffer(g, op, array, i64, hint))
        tokens = alloc_shaped(g.top, i64, shape)
        ivs, each = g.top.loop_nest(shape)
        each.store(keys.find(each, each.load(x, ivs)), tokens, ivs)
    (row,), b = g.top.loop_nest([shape[0] if len(shape) == 2 else 1])

    def token_of(inner: KernelBuilder, position: SSAValue) -> SSAValue:
        return load_as(inner, tokens, feature_index(x, row, position), i64)

    counter.count_row(b, row, shape[-1], token_of)
