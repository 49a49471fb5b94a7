"""Text ops compiled and compared with onnxruntime: TfIdfVectorizer on integer tokens
(every mode, n-gram range and skip count, weights, a symbolic batch) and its refusals."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import Case, assert_matches, expected_outputs, run_case, value_info
from onnx import helper

import onnxc
from onnxc.errors import ShapeError, UnsupportedOpError

_RNG = np.random.default_rng(22)


def _pool(sizes: dict[int, int], vocabulary: int) -> tuple[list[int], list[int]]:
    """Distinct random n-grams, `sizes[n]` of each size n: (pool_int64s, ngram_counts)."""
    pool, counts = [], []
    for size in range(1, max(sizes) + 1):
        counts.append(len(pool))
        grams: set[tuple] = set()
        while len(grams) < sizes.get(size, 0):
            grams.add(tuple(int(t) for t in _RNG.integers(0, vocabulary, size)))
        pool.extend(t for gram in sorted(grams) for t in gram)
    return pool, counts


def tfidf_case(mode: str, least: int, most: int, skips: int, shape, *, weights=True, dtype=np.int64) -> Case:
    pool, counts = _pool({1: 4, 2: 6, 3: 3}, 6)
    grams = 13
    columns = np.minimum(_RNG.permutation(grams), grams - 3).tolist()  # three n-grams share a column
    attrs = dict(
        mode=mode, min_gram_length=least, max_gram_length=most, max_skip_count=skips,
        ngram_counts=counts, ngram_indexes=columns, pool_int64s=pool,
    )  # fmt: skip
    if weights:
        attrs["weights"] = _RNG.uniform(0.5, 2.0, grams).round(3).tolist()
    x = _RNG.integers(0, 7, shape).astype(dtype)  # 6 is in no n-gram
    return Case("TfIdfVectorizer", {"x": x}, attrs, opset=9, reference="onnxruntime")


CASES = {
    "tf_uni_bi_tri_skip2": tfidf_case("TF", 1, 3, 2, (4, 12)),
    "tf_bigrams_skip0_row": tfidf_case("TF", 2, 2, 0, (16,)),
    "idf_weights_int32": tfidf_case("IDF", 1, 2, 1, (3, 9), dtype=np.int32),
    "idf_no_weights": tfidf_case("IDF", 2, 3, 3, (2, 10), weights=False),
    "tfidf_weights": tfidf_case("TFIDF", 1, 3, 4, (5, 8)),
    "tfidf_no_weights_short_rows": tfidf_case("TFIDF", 3, 3, 1, (3, 2), weights=False),
    "tf_unigrams_skips_count_once": tfidf_case("TF", 1, 1, 5, (2, 7)),
}


@pytest.mark.parametrize("name", CASES)
def test_tfidf_vectorizer(name, tmp_path):
    run_case(CASES[name], tmp_path)


def test_tfidf_vectorizer_symbolic_batch(tmp_path):
    """One library for every number of rows, rows given at run time."""
    case = tfidf_case("TFIDF", 1, 2, 2, (3, 11))
    model = case.model()
    del model.graph.input[:]
    model.graph.input.append(value_info("x", np.int64, ["rows", 11]))
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    for rows in (1, 6):
        feeds = {"x": _RNG.integers(0, 7, (rows, 11)).astype(np.int64)}
        assert_matches(session.run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))


def _tfidf_model(**attrs) -> onnx.ModelProto:
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf0", **attrs)
    graph = helper.make_graph(
        [node], "g", [value_info("x", np.int64, [2, 5])], [value_info("y", np.float32, [2, 3])]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=8)


BASE = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
            ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 1, 2])  # fmt: skip


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"ngram_counts": [0, 3]}, ShapeError, "1 items for n-grams of size 2"),
        ({"ngram_indexes": [0, 1]}, ShapeError, "2 ngram_indexes"),
        ({"mode": "BM25"}, UnsupportedOpError, "mode 'BM25'"),
        ({"min_gram_length": 3}, UnsupportedOpError, "n-gram lengths 3..2"),
        ({"mode": "TFIDF", "weights": [1.0, 2.0]}, ShapeError, "2 weights for 3 n-grams"),
    ],
)
def test_tfidf_vectorizer_refusals(change, error, message, tmp_path):
    with pytest.raises(error, match=message) as info:
        onnxc.compile(_tfidf_model(**{**BASE, **change}), tmp_path / "model.so")
    assert "tfidf0" in str(info.value) and "TfIdfVectorizer" in str(info.value)
