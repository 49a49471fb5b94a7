"""Text pipelines: com.microsoft Tokenizer fused into the TfIdfVectorizer it feeds
(passes/fuse_tokenizer.py, passes/onnx_to_krnl/tokenize.py), compared with onnxruntime.

scikit-learn's TfidfVectorizer and CountVectorizer with a linear classifier, converted
by skl2onnx (StringNormalizer, Tokenizer, Flatten, TfIdfVectorizer), over a symbolic
batch; then hand-built Tokenizer forms (token expressions, separators, marks,
mincharnum, [N, C] input) and the forms refused. StringNormalizer nodes get locale "C":
onnxruntime's default (en_US.UTF-8) needs that locale installed, and the texts here
change case the same in both.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxc
from onnxc.errors import UnsupportedOpError
from onnxc.runtime import Session

sklearn = pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")

from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from skl2onnx.common.data_types import StringTensorType

CORPUS = [
    ("The cat sat on the mat.", 0),
    ("Dogs chase cats; the dog barked!", 0),
    ("A dog ate my homework, said the cat owner", 0),
    ("Stock markets fell today after weak earnings.", 1),
    ("The market rallied on strong earnings", 1),
    ("Investors sold shares and bought bonds", 1),
    ("My cat likes the dog next door", 0),
    ("Bonds and stocks rose as rates fell", 1),
    ("Compilers turn source code into machine code", 2),
    ("The compiler inlined the loop and vectorized it", 2),
    ("Parsing, type checking and code generation", 2),
    ("An optimizing compiler schedules machine instructions", 2),
]
QUERIES = [
    "the CAT and the Dog",
    "markets fell, bonds rose",
    "",
    "code code code compiler!",
    "unseen words only",
    "  dogs, cats & STOCKS rose -- the compiler (again)",
    "é café dog",
]
SEPARATORS = [" ", "[.]", "\\?", ",", ";", ":", "!", "\\(", "\\)", "\n", '\\"', "'", "-", "\\[", "\\]", "@"]


def _c_locale(proto: onnx.ModelProto) -> onnx.ModelProto:
    for node in proto.graph.node:
        if node.op_type == "StringNormalizer":
            node.attribute.append(helper.make_attribute("locale", "C"))
    return proto


def _compare(tmp_path, proto: onnx.ModelProto, feeds: dict) -> list:
    """Compile `proto`, run it and onnxruntime: integer outputs equal, floats within 1e-4."""
    onnxc.compile(proto, tmp_path / "model.so")
    got = Session(tmp_path / "model.so").run(None, feeds)
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for ours, theirs in zip(got, want, strict=True):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        if np.issubdtype(theirs.dtype, np.integer):
            np.testing.assert_array_equal(ours, theirs)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)
    return got


@pytest.mark.parametrize(
    "vectorizer, options",
    [
        (TfidfVectorizer(), None),
        (TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True), None),
        (CountVectorizer(lowercase=False), None),
        (TfidfVectorizer(), {"separators": SEPARATORS}),
    ],
    ids=["tfidf", "tfidf_bigrams", "counts_case_kept", "tfidf_separators"],
)
def test_text_classifier_matches_onnxruntime(tmp_path, vectorizer, options):
    texts, labels = zip(*CORPUS)
    pipeline = make_pipeline(vectorizer, LogisticRegression(max_iter=500)).fit(texts, labels)
    conversion = {id(pipeline[-1]): {"zipmap": False}}
    if options:
        conversion[id(pipeline[0])] = options
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = skl2onnx.to_onnx(
            pipeline, initial_types=[("text", StringTensorType([None, 1]))], options=conversion, target_opset=17
        )
    assert any(node.op_type == "Tokenizer" for node in proto.graph.node)
    proto = _c_locale(proto)
    for batch in (len(QUERIES), 1, 3):  # one library, any batch
        label, _ = _compare(tmp_path, proto, {"text": np.array(QUERIES[:batch], dtype=object).reshape(-1, 1)})
        if batch == len(QUERIES):
            assert set(label) == {0, 1, 2}  # the queries reach every class


def _tokenizer_model(input_shape, pool: list[str], normalize: str | None = None, **tokenizer) -> onnx.ModelProto:
    """[StringNormalizer] -> Tokenizer -> Flatten -> TfIdfVectorizer (unigrams and bigrams
    with one skip, TF) over strings of `input_shape`."""
    nodes, name = [], "x"
    if normalize is not None:
        nodes.append(helper.make_node("StringNormalizer", [name], ["n"], case_change_action=normalize, locale="C"))
        name = "n"
    nodes += [
        helper.make_node("Tokenizer", [name], ["t"], domain="com.microsoft", name="tokenizer", **tokenizer),
        helper.make_node("Flatten", ["t"], ["f"]),
        helper.make_node(
            "TfIdfVectorizer",
            ["f"],
            ["y"],
            mode="TF",
            min_gram_length=1,
            max_gram_length=2,
            max_skip_count=1,
            ngram_counts=[0, len(pool)],
            ngram_indexes=list(range(len(pool) + 2)),
            pool_strings=[*pool, pool[0], pool[1], pool[1], pool[0]],
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "tokens",
        [helper.make_tensor_value_info("x", TensorProto.STRING, input_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8)


TEXTS = np.array(["ab c ab, dd", "", "c ab  ab!ab", "x", "dd dd éé ab"], dtype=object)


@pytest.mark.parametrize(
    "attributes",
    [
        {"tokenexp": "[a-zA-Z0-9_]+", "mincharnum": 1, "mark": 0, "pad_value": "#"},
        {"tokenexp": "[a-z]+", "mincharnum": 2, "mark": 0, "pad_value": "#"},
        {"tokenexp": "\\w+", "mincharnum": 1, "mark": 1, "pad_value": "#"},
        {"tokenexp": "[^ ,!]+", "mincharnum": 2, "mark": 0, "pad_value": "ab"},  # the pad is a token of the pool
        {"separators": [" ", ",", "[!]"], "mincharnum": 1, "mark": 0, "pad_value": "#"},
        {"separators": [" ", "\\,"], "mincharnum": 2, "mark": 1, "pad_value": "c"},
    ],
    ids=["word_class", "mincharnum", "marks", "negated_class", "separators", "separators_marks"],
)
def test_tokenizer_forms_match_onnxruntime(tmp_path, attributes):
    pool = ["ab", "c", "dd", "éé", "\x02", "\x03", "#"]
    _compare(tmp_path, _tokenizer_model(["n"], pool, **attributes), {"x": TEXTS})
    _compare(tmp_path, _tokenizer_model(["n", 5], pool, **attributes), {"x": np.stack([TEXTS, TEXTS[::-1]])})


def test_no_tokens_at_all(tmp_path):
    """No string has a token: the Tokenizer's width is 0 (no marks either), every count 0."""
    attributes = {"tokenexp": "[a-z]+", "mincharnum": 3, "mark": 1, "pad_value": "#"}
    model = _tokenizer_model(["n"], ["ab", "c", "\x02"], **attributes)
    (y,) = _compare(tmp_path, model, {"x": np.array(["ab c", "", "!!"], dtype=object)})
    assert not y.any()


def test_case_change_folded_into_the_tokens(tmp_path):
    attributes = {"tokenexp": "[A-Z]+", "mincharnum": 1, "mark": 0, "pad_value": "#"}
    model = _tokenizer_model(["n"], ["AB", "C", "DD"], normalize="UPPER", **attributes)
    (y,) = _compare(tmp_path, model, {"x": np.array(["ab C aB", "dd", "c,c"], dtype=object)})
    assert y.any()


@pytest.mark.parametrize(
    "attributes, message",
    [
        ({"tokenexp": "(?u)\\b\\w\\w+\\b"}, "not one character class repeated"),
        ({"tokenexp": "."}, "not one character class repeated"),
        ({"tokenexp": "[a-z]+[0-9]+"}, "unescaped"),
        ({"separators": [""]}, "a token per character"),
        ({"separators": [" ", "[ab]"]}, "exactly one ASCII character"),
        ({"separators": [" ", "ab"]}, "not one character"),
        ({"tokenexp": "[a-z]+", "separators": [" "]}, "both"),
    ],
)
def test_other_tokenizer_forms_are_refused(tmp_path, attributes, message):
    model = _tokenizer_model(["n"], ["ab", "c"], mincharnum=1, mark=0, pad_value="#", **attributes)
    with pytest.raises(UnsupportedOpError, match=message) as error:
        onnxc.compile(model, tmp_path / "model.so")
    assert "tokenizer" in str(error.value) and "Tokenizer" in str(error.value)


def test_tokenizer_feeding_anything_else_is_refused(tmp_path):
    node = helper.make_node(
        "Tokenizer", ["x"], ["t"], domain="com.microsoft", name="tokenizer", tokenexp="[a-z]+", mark=0,
        mincharnum=1, pad_value="#",
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "tokens",
        [helper.make_tensor_value_info("x", TensorProto.STRING, ["n"])],
        [helper.make_tensor_value_info("t", TensorProto.STRING, None)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], ir_version=8
    )
    with pytest.raises(UnsupportedOpError, match="only as the sole input of a TfIdfVectorizer"):
        onnxc.compile(model, tmp_path / "model.so")
