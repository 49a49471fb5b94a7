"""fuse-tokenizer: com.microsoft `Tokenizer` (→ `Flatten`) → `TfIdfVectorizer` becomes
one TfIdfVectorizer that tokenizes its strings itself, with a `StringNormalizer`
without stopwords before the Tokenizer folded in as well.

This is the chain skl2onnx writes for scikit-learn's CountVectorizer and
TfidfVectorizer. A Tokenizer's result is [..., D], D the most tokens of any string,
padded with `pad_value`: its width depends on the strings, which no op taking it as
an input can be compiled for. The n-gram counts do not need it: each row's items
are its strings' tokens, each string's padded to D, so the fused op counts over the
token ids of the strings' tokens, the pad's id (a token of the pool or none, -1)
filling the rest (passes/onnx_to_krnl/tokenize.py). A StringNormalizer without
stopwords keeps every string, changing its case; its result's length is that of
its input (onnxruntime gives one empty string for none), so folding it in keeps
the batch dim symbolic. The fused op carries the Tokenizer's settings as
`onnxc.tokenize`: the bytes a token is made of (the token expression or the
separators, as below), mincharnum, mark, pad_value, the folded case change, and
whether the padding counts (the pad or the marks are tokens of the pool: a row's
counts then depend on the widest row, so the batch is not separable).

Tokenizer forms compiled: `tokenexp` one character class repeated, `[...]+` or
`\\w+` (ASCII items, ranges and escapes; `[^...]` too), or `separators` that each
match one ASCII character (`" "`, `"[.]"`, `"\\\\?"`...). Tokens are then the
maximal runs of bytes of a set, as the regular expressions find them: non-ASCII
bytes belong to a negated class or to what separators leave, never to an ASCII
class. Any other form, or a Tokenizer feeding anything else, is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from onnxc.dialects.microsoft import TOKENIZE_ATTR
from onnxc.dialects.onnx import OnnxOp
from onnxc.errors import UnsupportedOpError
from onnxc.passes.helpers.graph import (
    erase_dead,
    insert_before,
    make_constant,
    make_op,
    python_attribute,
    rewrite_and_infer,
    schema_attributes,
    single_use,
)

_ESCAPE_CLASSES = {
    "w": b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "d": b"0123456789",
    "s": b" \t\n\v\f\r",
}
_ESCAPE_CHARACTERS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
_SPECIAL = set("\\^$.|?*+()[]{}")


class _FormError(ValueError):
    """A Tokenizer setting outside the forms compiled."""


@dataclass(frozen=True)
class FuseTokenizerPass(ModulePass):
    name = "fuse-tokenizer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_and_infer(op, "Tokenizer", fuse_tokenizer)  # the rows' dims are symbolic again downstream


def _refuse(op: OnnxOp, message: str) -> UnsupportedOpError:
    return UnsupportedOpError(message, node=op.node_name, op_type=op.OP_TYPE)


def _sole_user(value: SSAValue) -> OnnxOp | None:
    use = value.first_use
    return use.operation if single_use(value) and isinstance(use.operation, OnnxOp) else None


def fuse_tokenizer(tokenizer: OnnxOp, opset: int) -> bool:
    """Replace the chain from `tokenizer` to its TfIdfVectorizer by that op on the
    Tokenizer's (or the StringNormalizer's) input (True); UnsupportedOpError for another form."""
    try:
        token_bytes = tokenizer_bytes(tokenizer.attr("tokenexp"), tokenizer.attr("separators"))
    except _FormError as error:
        raise _refuse(tokenizer, str(error)) from None
    if tokenizer.attr("mincharnum") < 1:
        raise _refuse(tokenizer, f"mincharnum {tokenizer.attr('mincharnum')} (at least 1 is expected)")
    flatten = _sole_user(tokenizer.results[0])
    if flatten is not None and flatten.OP_TYPE == "Flatten" and flatten.attr("axis", 1) == 1:
        vectorizer = _sole_user(flatten.results[0])
    else:
        vectorizer, flatten = flatten, None
    if vectorizer is None or vectorizer.OP_TYPE != "TfIdfVectorizer" or TOKENIZE_ATTR in vectorizer.attributes:
        raise _refuse(
            tokenizer,
            "its result's width depends on the strings: a Tokenizer is compiled only as the sole input of a "
            "TfIdfVectorizer (through Flatten(axis=1) or not)",
        )
    strings = tokenizer.input(0)
    settings = {
        "bytes": python_attribute(sorted(token_bytes)),
        "mincharnum": IntegerAttr(tokenizer.attr("mincharnum"), i64),
        "mark": IntegerAttr(int(bool(tokenizer.attr("mark"))), i64),
        "pad_value": StringAttr(tokenizer.attr("pad_value")),
        "case_change": StringAttr("NONE"),
        "padding_counts": IntegerAttr(int(_padding_counts(tokenizer, vectorizer)), i64),
    }
    normalizer = strings.owner
    folded = (
        isinstance(normalizer, OnnxOp)
        and normalizer.OP_TYPE == "StringNormalizer"
        and single_use(strings)
        and not normalizer.attr("stopwords")
    )
    if folded:
        settings["case_change"] = StringAttr(normalizer.attr("case_change_action") or "NONE")
        settings["locale"] = StringAttr(normalizer.attr("locale") or "en_US.UTF-8")
        strings = normalizer.input(0)
    rank = len(strings.type.get_shape()) if isinstance(strings.type, TensorType) else None
    if rank not in (1, 2):
        raise _refuse(tokenizer, f"input of type {strings.type} (strings [C] or [N, C] are expected)")
    new_ops = []
    if rank == 1:  # [C] -> [C, 1]: a row per string, as the Tokenizer's [C, D]
        axes = make_constant(tokenizer, np.array([1], np.int64), f"{tokenizer.node_name}.axes")
        unsqueeze = make_op("Unsqueeze", [strings, axes.results[0]], {}, f"{tokenizer.node_name}.rows", opset=opset)
        new_ops += [axes, unsqueeze]
        strings = unsqueeze.results[0]
    attributes = schema_attributes(vectorizer)
    attributes[TOKENIZE_ATTR] = DictionaryAttr(settings)
    fused = make_op("TfIdfVectorizer", [strings], attributes, vectorizer.node_name)
    new_ops.append(fused)
    insert_before(vectorizer, new_ops)
    vectorizer.results[0].replace_all_uses_with(fused.results[0])
    erase_dead(vectorizer)  # and the Flatten, Tokenizer and StringNormalizer left unused
    return True


def _padding_counts(tokenizer: OnnxOp, vectorizer: OnnxOp) -> bool:
    """Whether the pad or the marks are tokens of the pool: then a row's counts depend on
    how many it gets, the width of the widest row (rows are not independent)."""
    padding = [tokenizer.attr("pad_value"), *(["\x02", "\x03"] if tokenizer.attr("mark") else [])]
    return any(token in (vectorizer.attr("pool_strings") or []) for token in padding)


def tokenizer_bytes(tokenexp: str | None, separators: list[str] | None) -> set[int]:
    """The bytes tokens are made of: those of `tokenexp`'s class, or all but the separators'."""
    if tokenexp and separators:
        raise _FormError("both tokenexp and separators are set (one of them is expected)")
    if tokenexp:
        if not tokenexp.endswith("+") or tokenexp.endswith("\\+"):
            raise _FormError(f"tokenexp {tokenexp!r} is not one character class repeated ([...]+ or \\w+)")
        return _character_class(tokenexp[:-1], f"tokenexp {tokenexp!r}")
    if not separators:
        raise _FormError("neither tokenexp nor separators is set")
    excluded: set[int] = set()
    for separator in separators:
        if not separator:
            raise _FormError("the empty separator (a token per character) is not compiled")
        matched = _character_class(separator, f"separator {separator!r}")
        if len(matched) != 1:
            raise _FormError(f"separator {separator!r} does not match exactly one ASCII character")
        excluded |= matched
    return set(range(256)) - excluded


def _character_class(text: str, what: str) -> set[int]:
    """The bytes one character of `text` may be: a literal, an escape or a [...] class."""
    if text.startswith("[") and text.endswith("]") and len(text) > 2:
        negated = text[1] == "^"
        matched = _class_items(text[2 if negated else 1 : -1], what, in_class=True)
        return set(range(256)) - matched if negated else matched
    items = _class_items(text, what, in_class=False)
    if len(_split_items(text, what)) != 1:
        raise _FormError(f"{what} is not one character or class")
    return items


def _split_items(text: str, what: str) -> list[str]:
    """The items of a class body: characters and backslash escapes."""
    items, k = [], 0
    while k < len(text):
        width = 2 if text[k] == "\\" else 1
        if k + width > len(text):
            raise _FormError(f"{what} ends in a lone backslash")
        items.append(text[k : k + width])
        k += width
    return items


def _class_items(body: str, what: str, in_class: bool) -> set[int]:
    """The bytes of a class body (ASCII characters, ranges a-z, escapes), or of one item."""
    items = _split_items(body, what)
    matched: set[int] = set()
    k = 0
    while k < len(items):
        if k + 2 < len(items) and items[k + 1] == "-":
            low, high = _literal(items[k], what, in_class), _literal(items[k + 2], what, in_class)
            if low > high:
                raise _FormError(f"{what} has the empty range {items[k]}-{items[k + 2]}")
            matched |= set(range(low, high + 1))
            k += 3
            continue
        item = items[k]
        if item[0] == "\\" and item[1] in _ESCAPE_CLASSES:
            matched |= set(_ESCAPE_CLASSES[item[1]])
        else:
            matched.add(_literal(item, what, in_class))
        k += 1
    return matched


def _literal(item: str, what: str, in_class: bool) -> int:
    """The byte of one ASCII character, escaped or not (a class takes `.` or `?` as they are)."""
    if item[0] == "\\":
        character = _ESCAPE_CHARACTERS.get(item[1], item[1])
        if item[1].isalnum() and item[1] not in _ESCAPE_CHARACTERS:
            raise _FormError(f"{what} has the escape {item!r}, which is not compiled")
    else:
        character = item
        special = "[]" if in_class else _SPECIAL
        if character in special:
            raise _FormError(f"{what} has {character!r} unescaped, which is not compiled")
    if ord(character) > 127:
        raise _FormError(f"{what} has the non-ASCII character {character!r}")
    return ord(character)
