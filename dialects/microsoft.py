"""The com.microsoft contrib ops that are ops of the `onnx` dialect themselves, not
expanded into ai.onnx ops by the importer (frontend/microsoft.py): onnx ships no schema
for onnxruntime's contrib ops, so their schemas are registered here, once, as
onnxruntime defines them, before the dialect is generated from `onnx.defs`.

Tokenizer (what skl2onnx's text vectorizers emit) splits strings into tokens; its
result's width depends on the strings, so it is compiled only as the input of a
TfIdfVectorizer, fused into it (passes/fuse_tokenizer.py).

DynamicQuantizeLSTM (onnxruntime's dynamic quantization of an LSTM) is kept as an op where
its weights are 8-bit constants (frontend/microsoft.py decides), for the integer kernels of
passes/onnx_to_krnl/quantized_recurrent.py; its results have LSTM's shapes.
"""

from __future__ import annotations

import numpy as np
import onnx.defs
import onnx.helper

MICROSOFT_DOMAIN = "com.microsoft"
MICROSOFT_OPS = frozenset({"Tokenizer", "DynamicQuantizeLSTM"})
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


def lstm_integer_weights(weights: np.ndarray, zero_point: np.ndarray) -> np.ndarray | None:
    """DynamicQuantizeLSTM's W or R [D, rows, 4H] less its zero point ([D] or [D, 4H]) as
    int8, where every difference fits (the integer kernels' signed operand); else None."""
    if weights.ndim != 3 or weights.dtype not in (np.int8, np.uint8) or zero_point.dtype != weights.dtype:
        return None
    directions, columns = weights.shape[0], weights.shape[-1]
    if zero_point.size not in (directions, directions * columns):
        return None
    difference = weights.astype(np.int16) - zero_point.reshape(directions, 1, -1).astype(np.int16)
    return difference.astype(np.int8) if difference.min() >= -128 and difference.max() <= 127 else None


def _lstm_result_types(ctx) -> None:
    """Y [seq, directions, batch, hidden], Y_h and Y_c [directions, batch, hidden] of X's type."""
    x = ctx.get_input_type(0)
    if x is None or not x.tensor_type.HasField("shape") or len(x.tensor_type.shape.dim) != 3:
        return
    directions = 2 if _attribute(ctx, "direction", b"forward") == b"bidirectional" else 1
    hidden = onnx.TensorShapeProto.Dimension()
    r = ctx.get_input_type(2)
    if _attribute(ctx, "hidden_size", None) is not None:
        hidden.dim_value = _attribute(ctx, "hidden_size", None)
    elif r is not None and len(r.tensor_type.shape.dim) == 3:
        hidden.CopyFrom(r.tensor_type.shape.dim[1])
    sequence, batch = x.tensor_type.shape.dim[:2]
    direction_dim = onnx.TensorShapeProto.Dimension(dim_value=directions)
    state = [direction_dim, batch, hidden]
    for index, dims in enumerate([[sequence, *state], state, state]):
        if index < ctx.get_num_outputs():
            result = onnx.TypeProto()
            result.tensor_type.elem_type = x.tensor_type.elem_type
            result.tensor_type.shape.dim.extend(dims)
            ctx.set_output_type(index, result)


def _attribute(ctx, name: str, default):
    attribute = ctx.get_attribute(name)
    return default if attribute is None else onnx.helper.get_attribute_value(attribute)


def _dynamic_quantize_lstm_schema() -> onnx.defs.OpSchema:
    schema, attribute, kind = onnx.defs.OpSchema, onnx.defs.OpSchema.Attribute, onnx.defs.OpSchema.AttrType
    optional = schema.FormalParameterOption.Optional
    inputs = [("X", "T", None), ("W", "T2", None), ("R", "T2", None), ("B", "T", optional)]
    inputs += [("sequence_lens", "T1", optional), ("initial_h", "T", optional), ("initial_c", "T", optional)]
    inputs += [("P", "T", optional), ("W_scale", "T", None), ("W_zero_point", "T2", None)]
    inputs += [("R_scale", "T", None), ("R_zero_point", "T2", None)]
    result = schema(
        "DynamicQuantizeLSTM",
        MICROSOFT_DOMAIN,
        1,
        doc="LSTM of 8-bit W [D, input, 4H] and R [D, H, 4H] (a scale and zero point per direction or column); "
        "X and the hidden state are quantized to uint8 dynamically.",
        inputs=[
            schema.FormalParameter(n, t, "", param_option=o) if o else schema.FormalParameter(n, t)
            for n, t, o in inputs
        ],
        outputs=[schema.FormalParameter(n, "T", "", param_option=optional) for n in ("Y", "Y_h", "Y_c")],
        type_constraints=[
            ("T", ["tensor(float)"], "floats"),
            ("T1", ["tensor(int32)"], "sequence lengths"),
            ("T2", ["tensor(int8)", "tensor(uint8)"], "8-bit weights"),
        ],
        attributes=[
            attribute("activation_alpha", kind.FLOATS, "parameters of the activations", required=False),
            attribute("activation_beta", kind.FLOATS, "parameters of the activations", required=False),
            attribute("activations", kind.STRINGS, "the activation functions", required=False),
            attribute("clip", kind.FLOAT, "the cell clip threshold", required=False),
            attribute("direction", onnx.helper.make_attribute("direction", "forward"), "forward, reverse or both"),
            attribute("hidden_size", kind.INT, "the hidden size", required=False),
            attribute("input_forget", onnx.helper.make_attribute("input_forget", 0), "couple input and forget"),
        ],
    )
    result.set_type_and_shape_inference_function(_lstm_result_types)
    return result


for _name, _build in (("Tokenizer", _tokenizer_schema), ("DynamicQuantizeLSTM", _dynamic_quantize_lstm_schema)):
    if not onnx.defs.has(_name, MICROSOFT_DOMAIN):
        onnx.defs.register_schema(_build())
