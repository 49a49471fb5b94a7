"""Text ops compiled and compared with onnxruntime: TfIdfVectorizer on integer and string
tokens (every mode, n-gram range and skip count, weights, a symbolic batch), the string
ops (Equal, RegexFullMatch, StringConcat, StringNormalizer, StringSplit, LabelEncoder,
CategoryMapper), string inputs and outputs through Session, and the refusals."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import Case, assert_matches, expected_outputs, run_case, tensor_array, value_info
from onnx import helper
from onnx.reference import ReferenceEvaluator

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
    graph = helper.make_graph([node], "g", [value_info("x", np.int64, [2, 5])], [value_info("y", np.float32, [2, 3])])
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


# ----------------------------------------------------------------------------- string inputs

ML = "ai.onnx.ml"
WORDS = np.array([["the", "Cat", "sat"], ["on", "", "é mat"]], dtype=object)


def string_model(
    op_type: str, inputs: dict, output: tuple, domain: str = "", opset: int = 20, **attrs
) -> onnx.ModelProto:
    """One node of `op_type` (named node0) reading string or numeric inputs {name: (type, shape)}."""
    node = helper.make_node(op_type, list(inputs), ["out"], name="node0", domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info("out", *output)],
    )  # fmt: skip
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid(ML, 4)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=9)


def compare_with_onnxruntime(model: onnx.ModelProto, feeds: dict, tmp_path) -> None:
    got = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, feeds)
    assert_matches(got, expected_outputs(model, feeds, "onnxruntime"))


STRING = onnx.TensorProto.STRING


@pytest.mark.parametrize(
    "y",
    [
        np.array([["the", "cat", "sat"], ["on", "", "é mat"]], dtype=object),  # case, empty, UTF-8
        np.array(["sat"], dtype=object),  # broadcast
        np.array([["the"], ["é ma"]], dtype=object),  # a prefix is not equal
    ],
)
def test_equal_strings(y, tmp_path):
    model = string_model(
        "Equal", {"x": (STRING, [2, 3]), "y": (STRING, list(y.shape))}, (onnx.TensorProto.BOOL, [2, 3])
    )
    compare_with_onnxruntime(model, {"x": WORDS, "y": y}, tmp_path)


PATTERNS = [
    r"[a-z]+", r"\w*", r"(?:the|on)|é.*", r".", r"\bsat\b", r"[^aeiou]{2,}", r"\S+\s\S+", r"c?a?t?", r"(?s).*",
    r"^the$", r"\d{3}-\d{4}", r"(ab)+|x*",
]  # fmt: skip
SENTENCES = np.array(
    [["the", "Cat", "sat"], ["on", "", "é mat"], ["555-0199", "55-0199", "ababab"], ["x\ny", "xxx", "naïve"]],
    dtype=object,
)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_full_match(pattern, tmp_path):
    model = string_model("RegexFullMatch", {"x": (STRING, [4, 3])}, (onnx.TensorProto.BOOL, [4, 3]), pattern=pattern)
    compare_with_onnxruntime(model, {"x": SENTENCES}, tmp_path)


@pytest.mark.parametrize(
    "pattern, message",
    [
        (r"(a)\1", "groupref"),
        (r"a(?=b)", "assert"),
        (r"(?i)a", "flags"),
        (r"[α-ω]", "beyond ASCII"),
        (r"a(", "invalid"),
    ],
)
def test_regex_refusals(pattern, message, tmp_path):
    model = string_model("RegexFullMatch", {"x": (STRING, [2])}, (onnx.TensorProto.BOOL, [2]), pattern=pattern)
    with pytest.raises(UnsupportedOpError, match=message) as info:
        onnxc.compile(model, tmp_path / "model.so")
    assert "node0" in str(info.value) and "RegexFullMatch" in str(info.value)


INT64, FLOAT, INT16 = onnx.TensorProto.INT64, onnx.TensorProto.FLOAT, onnx.TensorProto.INT16


@pytest.mark.parametrize(
    "inputs, output, attrs, x",
    [
        ((STRING, [2, 3]), (INT64, [2, 3]),
         dict(keys_strings=["the", "é mat", "", "the"], values_int64s=[1, 2, 3, 4], default_int64=-7), WORDS),
        ((STRING, [2, 3]), (FLOAT, [2, 3]), dict(keys_strings=["sat", "Cat"], values_floats=[0.5, 1.5]), WORDS),
        ((STRING, [2, 3]), (INT16, [2, 3]),
         dict(keys_tensor=helper.make_tensor("k", STRING, [2], [b"on", b"Cat"]),
              values_tensor=helper.make_tensor("v", INT16, [2], [3, 4])), WORDS),
        ((INT64, [5]), (FLOAT, [5]), dict(keys_int64s=[7, -2, 9], values_floats=[1.0, 2.0, 3.0], default_float=0.25),
         np.array([9, 7, 0, -2, 9], dtype=np.int64)),
        ((FLOAT, [5]), (INT64, [5]), dict(keys_floats=[0.5, float("nan"), -1.0], values_int64s=[10, 20, 30]),
         np.array([float("nan"), 0.5, 2.0, -1.0, 0.0], dtype=np.float32)),
        ((FLOAT, [4]), (INT64, [4]), dict(keys_floats=[-0.0, 1.5], values_int64s=[1, 2]),  # 0.0 is -0.0
         np.array([0.0, -0.0, 1.5, -1.5], dtype=np.float32)),
    ],
)  # fmt: skip
def test_label_encoder(inputs, output, attrs, x, tmp_path):
    model = string_model("LabelEncoder", {"x": inputs}, output, domain=ML, **attrs)
    compare_with_onnxruntime(model, {"x": x}, tmp_path)


def test_category_mapper(tmp_path):
    attrs = dict(cats_strings=["sat", "on", "Cat"], cats_int64s=[5, 6, 7], default_int64=-3)
    model = string_model("CategoryMapper", {"x": (STRING, [2, 3])}, (INT64, [2, 3]), domain=ML, **attrs)
    compare_with_onnxruntime(model, {"x": WORDS}, tmp_path)


def test_tfidf_vectorizer_strings(tmp_path):
    pool = ["the", "cat", "sat", "on", "mat", "the", "cat", "cat", "sat", "é", "mat"]
    attrs = dict(mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=1, ngram_counts=[0, 5],
                 ngram_indexes=list(range(8)), pool_strings=pool, weights=[0.5, 1, 2, 3, 4, 5, 6, 7])  # fmt: skip
    model = string_model("TfIdfVectorizer", {"x": (STRING, [2, 6])}, (FLOAT, [2, 8]), opset=9, **attrs)
    x = np.array([["the", "cat", "sat", "on", "the", "mat"], ["é", "mat", "cat", "x", "sat", ""]], dtype=object)
    compare_with_onnxruntime(model, {"x": x}, tmp_path)


def test_string_inputs_as_unicode_and_bytes_arrays(tmp_path):
    """Session takes numpy `U` and `S` arrays as well as object arrays of str."""
    model = string_model("Equal", {"x": (STRING, [2]), "y": (STRING, [2])}, (onnx.TensorProto.BOOL, [2]))
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    (got,) = session.run(None, {"x": np.array(["ab", "c"]), "y": np.array([b"ab", b"d"])})
    np.testing.assert_array_equal(got, [True, False])


def test_string_input_errors(tmp_path):
    from onnxc.errors import InputError

    model = string_model("Equal", {"x": (STRING, [2]), "y": (STRING, [2])}, (onnx.TensorProto.BOOL, [2]))
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    with pytest.raises(InputError, match="input 'x': an element is a int, not a str"):
        session.run(None, {"x": np.array(["a", 3], dtype=object), "y": np.array(["a", "b"], dtype=object)})
    with pytest.raises(InputError, match="input 'y': expected an array of str, got float32"):
        session.run(None, {"x": np.array(["a", "b"], dtype=object), "y": np.zeros(2, np.float32)})
    with pytest.raises(InputError, match="input 'y'"):
        session.run(None, {"x": np.array(["a", "b"], dtype=object), "y": np.array(["a"], dtype=object)})


# ---------------------------------------------------------------------------- string results


@pytest.mark.parametrize(
    "x, y",
    [
        (WORDS, np.array(["s"], dtype=object)),  # broadcast, empty, UTF-8
        (np.array("cat", dtype=object), np.array("", dtype=object)),  # rank 0
        (WORDS, np.array([["é", "", "xyz"], ["", "", ""]], dtype=object)),
    ],
)
def test_string_concat(x, y, tmp_path):
    shape = list(np.broadcast_shapes(x.shape, y.shape))
    model = string_model("StringConcat", {"x": (STRING, list(x.shape)), "y": (STRING, list(y.shape))}, (STRING, shape))
    compare_with_onnxruntime(model, {"x": x, "y": y}, tmp_path)


DAYS = np.array(["Monday", "tuesday", "MONDAY", "wednesday", "Straße", "monday"], dtype=object)


@pytest.mark.parametrize(
    "x, attrs",
    [
        (DAYS, dict(case_change_action="LOWER", stopwords=["monday"])),  # case-insensitive stopwords
        (DAYS, dict(case_change_action="UPPER", is_case_sensitive=1, stopwords=["monday", "Straße"])),
        (DAYS.reshape(1, 6), dict(case_change_action="UPPER", stopwords=["MonDay"])),
        (DAYS, dict(case_change_action="NONE")),
        (np.array(["monday", "Monday"], dtype=object), dict(stopwords=["monday"])),  # none left: one ""
    ],
)
def test_string_normalizer(x, attrs, tmp_path):
    """Case changes of ASCII letters: onnxruntime's in the C locale (its default, en_US.UTF-8,
    also changes other letters, and needs that locale installed)."""
    model = string_model(
        "StringNormalizer", {"x": (STRING, list(x.shape))}, (STRING, None), opset=10, locale="C", **attrs
    )
    compare_with_onnxruntime(model, {"x": x}, tmp_path)


SPLIT = np.array([["a b  c ", "  ", ""], ["one--two--", "x", "--y--z"]], dtype=object)


@pytest.mark.parametrize(
    "attrs", [{}, dict(maxsplit=1), dict(delimiter="-"), dict(delimiter="--"), dict(delimiter="--", maxsplit=1)]
)
def test_string_split(attrs, tmp_path):
    node = helper.make_node("StringSplit", ["x"], ["pieces", "counts"], name="node0", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", STRING, [2, 3])],
        [helper.make_tensor_value_info("pieces", STRING, None), helper.make_tensor_value_info("counts", INT64, [2, 3])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    want = ReferenceEvaluator(model).run(None, {"x": SPLIT})  # onnxruntime has no StringSplit kernel
    assert_matches(session.run(None, {"x": SPLIT}), want)


@pytest.mark.parametrize(
    "op_type, attrs, x",
    [
        ("LabelEncoder", dict(keys_int64s=[1, 5, 9], values_strings=["one", "fünf", ""], default_string="?"),
         np.array([[5, 1], [7, 9]], dtype=np.int64)),
        ("LabelEncoder", dict(keys_strings=["a", "bb"], values_strings=["x", "yy"]), np.array(["bb", "a", "c"], dtype=object)),
        ("CategoryMapper", dict(cats_strings=["a", "b"], cats_int64s=[3, 4]), np.array([4, 3, 0], dtype=np.int64)),
    ],
)  # fmt: skip
def test_lookups_to_strings(op_type, attrs, x, tmp_path):
    inputs = {"x": (STRING if x.dtype == object else INT64, list(x.shape))}
    model = string_model(op_type, inputs, (STRING, list(x.shape)), domain=ML, **attrs)
    compare_with_onnxruntime(model, {"x": x}, tmp_path)


def test_string_outputs_with_a_symbolic_dim(tmp_path):
    """An input returned as it is, and a concatenation, for any number of strings."""
    inputs = {"x": (STRING, ["n"]), "y": (STRING, [1])}
    model = string_model("StringConcat", inputs, (STRING, ["n"]))
    model.graph.output.append(helper.make_tensor_value_info("x", STRING, ["n"]))
    session = onnxc.Session(onnxc.compile(model, tmp_path / "model.so"))
    assert session.get_outputs()[0].shape == (None,)
    for x in (np.array(["a", "bé"], dtype=object), np.array([], dtype=object)):
        feeds = {"x": x, "y": np.array(["!"], dtype=object)}
        assert_matches(session.run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))


def test_string_output_through_the_c_abi(tmp_path):
    """A string output is one block (shape, onnxc_string elements, bytes) that
    onnxc_free_tensor releases; the inputs' bytes are only read."""
    import ctypes

    from helpers import Model

    from onnxc.runtime.abi import Status
    from onnxc.runtime.strings import decode_strings, encode_strings

    model = string_model("StringConcat", {"x": (STRING, [2]), "y": (STRING, [1])}, (STRING, [2]))
    library = Model(onnxc.compile(model, tmp_path / "model.so"))
    assert library.signature["outputs"] == [{"name": "out", "dtype": "string", "shape": [2], "dynamic": True}]
    library.lib.onnxc_free_tensor.argtypes = [ctypes.c_void_p]
    x, y = (encode_strings(np.array(v, dtype=object)) for v in (["ab", "é"], ["!"]))
    inputs, _ = tensor_array([(x, 8), (y, 8)])
    outputs, _ = tensor_array([(np.zeros(1, np.uint8), 0)])  # only written
    assert library.lib.run_main_graph(inputs, 2, outputs, 1) == Status.OK
    result = outputs[0]
    assert (result.rank, result.dtype, result.shape[0]) == (1, 8, 2)
    pairs = np.ctypeslib.as_array(ctypes.cast(result.data, ctypes.POINTER(ctypes.c_uint8)), (32,)).view(x.dtype)
    np.testing.assert_array_equal(decode_strings(pairs), np.array(["ab!", "é!"], dtype=object))
    assert pairs["data"][1] == pairs["data"][0] + 3  # the bytes follow each other in the block
    library.lib.onnxc_free_tensor(ctypes.addressof(result))
    assert not result.data and not result.shape


@pytest.mark.parametrize("action", ["LOWER", "UPPER"])
def test_string_normalizer_two_byte_letters(action, tmp_path):
    """In its default locale (en_US.UTF-8) onnxruntime changes non-ASCII letters too:
    here those of two UTF-8 bytes, as Python does; wider ones are kept (日本)."""
    words = np.array(["École", "ÉCOLE", "αβγ ΔΕ", "Привет", "àÖø xyZ ÿ", "日本", "ecole"], dtype=object)
    model = string_model(
        "StringNormalizer",
        {"x": (STRING, [7])},
        (STRING, None),
        opset=10,
        case_change_action=action,
        stopwords=["écOLE"],
    )
    (got,) = onnxc.Session(onnxc.compile(model, tmp_path / "model.so")).run(None, {"x": words})
    kept = [w for w in words if w.lower() != "école"]
    np.testing.assert_array_equal(
        got, np.array([w.lower() if action == "LOWER" else w.upper() for w in kept], dtype=object)
    )


def test_emulated_sessions_refuse_string_tensors(tmp_path):
    """A foreign library or a WebAssembly module gets no string tensors from the
    emulation harness or the JavaScript loader yet: a typed error, not a crash."""
    from onnxc.errors import RuntimeFailure
    from onnxc.tools.emulation import EmulatedSession, EmulatorMissingError

    model = string_model("RegexFullMatch", {"x": (STRING, [2])}, (onnx.TensorProto.BOOL, [2]), pattern="a+")
    for target in ("aarch64", "wasm32"):
        library = onnxc.compile(model, tmp_path / f"model.{target}", target=target)
        try:
            with pytest.raises((UnsupportedOpError, RuntimeFailure), match="string tensors"):
                EmulatedSession(library)
        except EmulatorMissingError:
            continue


def test_hash_table_places_every_key_within_its_probes():
    """Keys of any int64 value (extremes, clusters, many) are found within MAX_PROBES
    slots of home; repeated keys are refused."""
    from onnxc.passes.helpers import hash_table

    values = np.concatenate([_RNG.integers(-(2**63), 2**63 - 1, 3000, dtype=np.int64), np.arange(-500, 500)])
    values = np.unique(np.concatenate([values, [np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0, -1]]))
    nodes = _RNG.integers(-1, 50, len(values))
    table = hash_table.HashTable(nodes, values, np.arange(len(values)), lambda array, hint: array)
    rows = {(int(n), int(v)): int(r) for n, v, r in table.table.tolist() if r >= 0}
    assert rows == {(int(n), int(v)): k for k, (n, v) in enumerate(zip(nodes, values))}
    for node, value in zip(nodes.tolist()[:200], values.tolist()[:200]):
        home = hash_table._home(node, value, table.multipliers, table.bits)
        assert any(table.table[home + k][:2].tolist() == [node, value] for k in range(hash_table.MAX_PROBES))
    with pytest.raises(ValueError, match="repeat"):
        hash_table.HashTable(np.zeros(2), np.array([7, 7]), np.arange(2), lambda array, hint: array)


def test_label_encoder_many_keys(tmp_path):
    """3,000 integer keys of any size, and 2,000 string keys, against onnxruntime."""
    keys = np.unique(_RNG.integers(-(2**62), 2**62, 3000, dtype=np.int64))
    x = np.concatenate([_RNG.choice(keys, 500), _RNG.integers(-(2**62), 2**62, 500, dtype=np.int64)])
    attrs = dict(keys_int64s=keys.tolist(), values_floats=_RNG.uniform(-1, 1, len(keys)).tolist())
    model = string_model("LabelEncoder", {"x": (INT64, [1000])}, (FLOAT, [1000]), domain=ML, **attrs)
    compare_with_onnxruntime(model, {"x": x}, tmp_path)
    words = sorted({"".join(_RNG.choice(list("abcdé"), _RNG.integers(1, 8))) for _ in range(3000)})[:2000]
    x = np.array([*_RNG.choice(words, 500), "", "zzz", "abcdéabcdé"], dtype=object)
    attrs = dict(keys_strings=words, values_int64s=list(range(len(words))))
    model = string_model("LabelEncoder", {"x": (STRING, [503])}, (INT64, [503]), domain=ML, **attrs)
    compare_with_onnxruntime(model, {"x": x}, tmp_path)


def test_string_constants(tmp_path):
    """String initializers and Constant nodes (the bytes a constant, the strings made at
    run time): compared with, and returned as they are."""
    table = helper.make_tensor("table", STRING, [2, 2], [b"a", "é".encode(), b"", b"xyz"])
    nodes = [
        helper.make_node("Constant", [], ["word"], value=helper.make_tensor("word", STRING, [], [b"xyz"])),
        helper.make_node("Equal", ["x", "table"], ["same"], name="eq0"),
        helper.make_node("Equal", ["x", "word"], ["is_word"], name="eq1"),
        helper.make_node("Identity", ["table"], ["copy"], name="id0"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", STRING, [2, 2])],
        [helper.make_tensor_value_info(n, t, [2, 2]) for n, t in [("same", onnx.TensorProto.BOOL),
                                                                   ("is_word", onnx.TensorProto.BOOL), ("copy", STRING)]],
        [table],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9)
    compare_with_onnxruntime(model, {"x": np.array([["a", "b"], ["", "xyz"]], dtype=object)}, tmp_path)
