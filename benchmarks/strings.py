"""Text ops under onnxc and onnxruntime: `python benchmarks/strings.py [--repeat N]`.

One node each, on generated text (words of 2 to 9 letters): TfIdfVectorizer on
integer tokens (1,000 unigrams and 1,000 bigrams, 64 rows of 100 tokens) and on
strings, LabelEncoder from 1,000 string keys, RegexFullMatch of an e-mail-like
pattern, StringNormalizer lowering with stopwords, and skl2onnx's text chain
(StringNormalizer, com.microsoft Tokenizer, Flatten, TfIdfVectorizer) on 64
sentences of 20 words. Each is compiled once, outputs
are checked against onnxruntime, then both are timed in turn through their Python
sessions with one thread each: warm-up runs, then `--repeat` samples (each the
mean of as many runs as fill SAMPLE_SECONDS); medians and their ratio are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ONNXC_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import onnxc  # noqa: E402

SAMPLE_SECONDS = 0.05
RNG = np.random.default_rng(0)
LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def words(count: int) -> np.ndarray:
    return np.array(["".join(RNG.choice(LETTERS, RNG.integers(2, 10))) for _ in range(count)], dtype=object)


def one_node(op_type: str, x_type: int, x_shape: list, y_type: int, domain: str = "", opset: int = 20, **attrs):
    node = helper.make_node(op_type, ["x"], ["y"], domain=domain, **attrs)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", x_type, x_shape)],
        [helper.make_tensor_value_info("y", y_type, None)],
    )
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("ai.onnx.ml", 4)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def text_chain(vocabulary: np.ndarray) -> onnx.ModelProto:
    """What skl2onnx writes for a TfidfVectorizer's counts: lowercase, tokenize, count unigrams."""
    size = len(vocabulary)
    nodes = [
        helper.make_node("StringNormalizer", ["x"], ["n"], case_change_action="LOWER", locale="C"),
        helper.make_node(
            "Tokenizer", ["n"], ["t"], domain="com.microsoft", tokenexp="[a-zA-Z0-9_]+", mark=0, mincharnum=1,
            pad_value="#",
        ),
        helper.make_node("Flatten", ["t"], ["f"]),
        helper.make_node(
            "TfIdfVectorizer", ["f"], ["y"], mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
            ngram_counts=[0], ngram_indexes=list(range(size)), pool_strings=sorted(vocabulary.tolist()),
        ),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.STRING, ["n"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def distinct_words(count: int) -> np.ndarray:
    found: dict[str, None] = {}
    while len(found) < count:
        found |= dict.fromkeys(words(count - len(found)).tolist())
    return np.array(list(found), dtype=object)


def cases() -> dict:
    vocabulary = distinct_words(1000)
    unigrams = RNG.permutation(5000)[:1000]
    bigrams = np.unique(RNG.integers(0, 1000, (1000, 2)), axis=0)
    pool = [*unigrams.tolist(), *bigrams.reshape(-1).tolist()]
    tfidf = dict(mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 1000])
    grams = 1000 + len(bigrams)
    tfidf |= dict(ngram_indexes=list(range(grams)), weights=RNG.uniform(0.5, 2, grams).tolist())
    text = vocabulary[RNG.integers(0, 1000, (64, 100))]
    return {
        "TfIdfVectorizer int64 [64, 100]": (
            one_node("TfIdfVectorizer", TensorProto.INT64, [64, 100], TensorProto.FLOAT, opset=9, pool_int64s=pool, **tfidf),
            RNG.integers(0, 5000, (64, 100)).astype(np.int64),
        ),
        "TfIdfVectorizer string [64, 100]": (
            one_node(
                "TfIdfVectorizer", TensorProto.STRING, [64, 100], TensorProto.FLOAT, opset=9,
                pool_strings=[*vocabulary.tolist(), *vocabulary[bigrams % 1000].reshape(-1).tolist()], **tfidf,
            ),
            text,
        ),
        "LabelEncoder 1,000 keys [10000]": (
            one_node(
                "LabelEncoder", TensorProto.STRING, [10000], TensorProto.INT64, domain="ai.onnx.ml",
                keys_strings=vocabulary.tolist(), values_int64s=list(range(1000)),
            ),
            np.concatenate([vocabulary[RNG.integers(0, 1000, 5000)], words(5000)]),
        ),
        "RegexFullMatch [10000]": (
            one_node("RegexFullMatch", TensorProto.STRING, [10000], TensorProto.BOOL, pattern=r"[a-z]+@[a-z]+\.(com|org)"),
            np.array([w + ("@" + v + ".com" if k % 2 else "") for k, (w, v) in enumerate(zip(words(10000), words(10000)))], dtype=object),
        ),
        "StringNormalizer LOWER [10000]": (
            one_node(
                "StringNormalizer", TensorProto.STRING, [10000], TensorProto.STRING, opset=10,
                case_change_action="LOWER", stopwords=vocabulary[:100].tolist(), locale="C",
            ),
            np.array([w.capitalize() for w in vocabulary[RNG.integers(0, 1000, 10000)]], dtype=object),
        ),
        "Tokenizer chain, 64 sentences": (
            text_chain(vocabulary),
            np.array([" ".join(w.capitalize() for w in vocabulary[RNG.integers(0, 1000, 20)]) + "." for _ in range(64)], dtype=object),
        ),
    }  # fmt: skip


def median_seconds(run, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < SAMPLE_SECONDS:
            run()
            count += 1
        samples.append((time.perf_counter() - start) / count)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    print(f"{'case':36} {'onnxruntime ms':>15} {'onnxc ms':>10} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as directory:
        for name, (model, x) in cases().items():
            path = Path(directory) / "model.onnx"
            onnx.save(model, path)
            ours = onnxc.Session(onnxc.compile(path, Path(directory) / "model.so"))
            theirs = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
            (got,), (want,) = ours.run(None, {"x": x}), theirs.run(None, {"x": x})
            if want.dtype == object:
                assert (got == want).all(), name
            else:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
            runs = [lambda: theirs.run(None, {"x": x}), lambda: ours.run(None, {"x": x})]
            for run in runs:
                median_seconds(run, 2)  # warm-up
            timings = [[], []]
            for _ in range(args.repeat):
                for position, run in enumerate(runs):
                    timings[position].append(median_seconds(run, 1))
            ort_ms, onnxc_ms = (statistics.median(t) * 1e3 for t in timings)
            print(f"{name:36} {ort_ms:15.3f} {onnxc_ms:10.3f} {onnxc_ms / ort_ms:7.2f}")


if __name__ == "__main__":
    main()
