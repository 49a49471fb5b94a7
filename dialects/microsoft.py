"""The com.microsoft contrib ops that are ops of the `onnx` dialect themselves, not
expanded into ai.onnx ops by the importer (frontend/microsoft.py): onnx ships no schema
for onnxruntime's contrib ops, so their schemas are registered here, once, as
onnxruntime defines them, before the dialect is generated from `onnx.defs`.

Tokenizer (what skl2onnx's text vectorizers emit) splits strings into tokens; its
result's width depends on the strings, so it is compiled only as the input of a
TfIdfVectorizer, fused into it (passes/fuse_tokenizer.py).
"""

from __future__ import annotations

import onnx.defs

MICROSOFT_DOMAIN = "com.microsoft"
MICROSOFT_OPS = frozenset({"Tokenizer"})
TOKENIZE_ATTR = "onnxc.tokenize"
"""On a TfIdfVectorizer: the settings of the Tokenizer fused into it (passes/fuse_tokenizer.py)."""


def _tokenizer_schema() -> onnx.defs.OpSchema:
    schema, attribute, kind = onnx.defs.OpSchema, onnx.defs.OpSchema.Attribute, onnx.defs.OpSchema.AttrType
    return schema(
        "Tokenizer",
        MICROSOFT_DOMAIN,
        1,
        doc="Splits each string of X ([C] or [N, C]) into tokens along a new last axis, padded with pad_value.",
        inputs=[schema.FormalParameter("X", "T")],
        outputs=[schema.FormalParameter("Y", "T")],
        type_constraints=[("T", ["tensor(string)"], "strings")],
        attributes=[
            attribute("mark", kind.INT, "mark the beginning and end of a string's tokens", required=True),
            attribute("pad_value", kind.STRING, "the string padding short rows", required=True),
            attribute("mincharnum", kind.INT, "the fewest characters of a token kept", required=True),
            attribute("separators", kind.STRINGS, "regular expressions between tokens", required=False),
            attribute("tokenexp", kind.STRING, "the regular expression of a token", required=False),
        ],
    )


if not onnx.defs.has("Tokenizer", MICROSOFT_DOMAIN):
    onnx.defs.register_schema(_tokenizer_schema())
