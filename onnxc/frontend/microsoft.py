"""The `com.microsoft` quantized ops that onnxruntime's quantizer emits, as ai.onnx nodes.

A QOperator model made by `onnxruntime.quantization` mixes ai.onnx's QLinearConv and
QLinearMatMul with contrib ops of onnxruntime for everything else (QLinearAdd,
QLinearConcat, QGemm, ...). Each of those is, by its definition, its float op between
DequantizeLinear of its inputs and QuantizeLinear of its output; the importer replaces it
with exactly that (new nodes named `<node>/<op>_<k>`). The `fuse-qdq` graph pass then finds
the same patterns in these as in a QDQ model: one set of integer kernels serves both formats.

onnxruntime computes some of these with float lookup tables or float scale ratios, so a
result may differ from it by one quantization step (documented in docs/supported-ops.md).
DynamicQuantizeLSTM (of dynamic quantization) stays an op (`keeps`) where its weights are
8-bit constants that fit int8 less their zero points: it is lowered on integer kernels as
onnxruntime computes it (passes/onnx_to_krnl/quantized_recurrent.py). Other weights become
an LSTM on its dequantized weights, which constprop folds to float weights: that LSTM runs
in float. Any other op of the domain is refused, naming it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper

from onnxc.dialects.microsoft import MICROSOFT_OPS, lstm_integer_weights
from onnxc.errors import UnsupportedOpError

MICROSOFT_DOMAIN = "com.microsoft"

Expansion = Callable[["_Builder", onnx.NodeProto], None]
EXPANSIONS: dict[str, tuple[Expansion, str]] = {}
"""op type -> (how its nodes are built, what it becomes, for the docs)."""


def expands(op_type: str, becomes: str) -> Callable[[Expansion], Expansion]:
    def register(expansion: Expansion) -> Expansion:
        EXPANSIONS[op_type] = (expansion, becomes)
        return expansion

    return register


class _Builder:
    """Nodes replacing one contrib node: fresh names under the node's, optional inputs as ''."""

    def __init__(self, node: onnx.NodeProto, opset: int):
        self.node = node
        self.opset = opset
        self.prefix = node.name or node.output[0]
        self.nodes: list[onnx.NodeProto] = []

    def input(self, index: int) -> str:
        return self.node.input[index] if index < len(self.node.input) else ""

    def attr(self, name: str, default=None):
        for attribute in self.node.attribute:
            if attribute.name == name:
                return helper.get_attribute_value(attribute)
        return default

    def add(self, op_type: str, inputs: list[str], output: str | None = None, **attributes) -> str:
        name = f"{self.prefix}/{op_type}_{len(self.nodes)}"
        output = output or name
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attributes))
        return output

    def dequantize(self, x: int, scale: int, zero_point: int, axis: int | None = None) -> str:
        """DequantizeLinear of inputs (x, scale, zero point); `axis` for a per-channel scale
        (from opset 13, before which DequantizeLinear refuses a scale that is not a scalar)."""
        inputs = [self.input(x), self.input(scale), self.input(zero_point)]
        if axis is None or self.opset < 13:
            return self.add("DequantizeLinear", inputs)
        return self.add("DequantizeLinear", inputs, axis=axis)

    def quantize(self, value: str, scale: int, zero_point: int) -> None:
        """QuantizeLinear of `value` into the node's output."""
        self.add("QuantizeLinear", [value, self.input(scale), self.input(zero_point)], self.node.output[0])

    def refuse(self, why: str) -> None:
        raise UnsupportedOpError(
            f"{MICROSOFT_DOMAIN} operator '{self.node.op_type}': {why}", node=self.node.name, op_type=self.node.op_type
        )


def _binary(op_type: str) -> Expansion:
    """QLinear<op>(A, A scale, A zero point, B, B scale, B zero point, C scale, C zero point)."""

    def expand(b: _Builder, node: onnx.NodeProto) -> None:
        b.quantize(b.add(op_type, [b.dequantize(0, 1, 2), b.dequantize(3, 4, 5)]), 6, 7)

    return expand


def _unary(op_type: str, attributes: tuple[str, ...] = ()) -> Expansion:
    """QLinear<op>(X, X scale, X zero point, Y scale, Y zero point), attributes passed on."""

    def expand(b: _Builder, node: onnx.NodeProto) -> None:
        kept = {name: b.attr(name) for name in attributes if b.attr(name) is not None}
        b.quantize(b.add(op_type, [b.dequantize(0, 1, 2)], **kept), 3, 4)

    return expand


expands("QLinearAdd", "Add")(_binary("Add"))
expands("QLinearMul", "Mul")(_binary("Mul"))
expands("QLinearSigmoid", "Sigmoid")(_unary("Sigmoid"))
expands("QLinearLeakyRelu", "LeakyRelu (`alpha`)")(_unary("LeakyRelu", ("alpha",)))


def _pool(op_type: str, attributes: tuple[str, ...]) -> Expansion:
    def expand(b: _Builder, node: onnx.NodeProto) -> None:
        if b.attr("channels_last", 0):
            b.refuse("channels_last=1 (NHWC data) is not supported")
        kept = {name: b.attr(name) for name in attributes if b.attr(name) is not None}
        b.quantize(b.add(op_type, [b.dequantize(0, 1, 2)], **kept), 3, 4)

    return expand


expands("QLinearGlobalAveragePool", "GlobalAveragePool (NCHW only)")(_pool("GlobalAveragePool", ()))
expands("QLinearAveragePool", "AveragePool (NCHW only)")(
    _pool("AveragePool", ("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"))
)


@expands("QLinearConcat", "Concat (`axis`)")
def _concat(b: _Builder, node: onnx.NodeProto) -> None:
    """QLinearConcat(Y scale, Y zero point, (X, X scale, X zero point)...)."""
    if (len(node.input) - 2) % 3 or len(node.input) < 5:
        b.refuse(f"{len(node.input)} inputs: expected 2 and a triple per concatenated tensor")
    parts = [b.dequantize(k, k + 1, k + 2) for k in range(2, len(node.input), 3)]
    b.quantize(b.add("Concat", parts, axis=b.attr("axis")), 0, 1)


@expands("QLinearSoftmax", "Softmax (`axis`; its `opset` must agree with the model's about axis)")
def _softmax(b: _Builder, node: onnx.NodeProto) -> None:
    """Softmax's meaning changed at opset 13 (one axis, not the flattened trailing dims)."""
    if (b.attr("opset", b.opset) < 13) != (b.opset < 13):
        b.refuse(f"Softmax of opset {b.attr('opset')} in a model of ai.onnx opset {b.opset}")
    b.quantize(b.add("Softmax", [b.dequantize(0, 1, 2)], axis=b.attr("axis", -1)), 3, 4)


@expands("QGemm", "Gemm (`alpha`, `transA`, `transB`; float output without a y scale)")
def _qgemm(b: _Builder, node: onnx.NodeProto) -> None:
    """QGemm(A, a scale, a zero point, B, b scale, b zero point, C, y scale, y zero point):
    C is int32 with scale a scale * b scale (per column with a per-channel b scale) and no
    zero point; without a y scale the output is the float Gemm."""
    transpose_b = b.attr("transB", 0)
    a = b.dequantize(0, 1, 2)
    weights = b.dequantize(3, 4, 5, axis=0 if transpose_b else 1)
    inputs = [a, weights]
    if b.input(6):
        bias_scale = b.add("Mul", [b.input(1), b.input(4)])
        inputs.append(b.add("DequantizeLinear", [b.input(6), bias_scale], **({"axis": 0} if b.opset >= 13 else {})))
    attributes = {"alpha": b.attr("alpha", 1.0), "transA": b.attr("transA", 0), "transB": transpose_b}
    if not b.input(7):
        b.add("Gemm", inputs, node.output[0], **attributes)
        return
    b.quantize(b.add("Gemm", inputs, **attributes), 7, 8)


SEVERAL_OUTPUTS = frozenset({"DynamicQuantizeLSTM"})
"""Ops whose expansion writes all their outputs (the others have one)."""

LSTM_ATTRIBUTES = (
    "activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "input_forget",
)  # fmt: skip


@expands(
    "DynamicQuantizeLSTM",
    "itself, on integer kernels, where its weights are constants that fit int8 less their zero points "
    "(onnxruntime's quantizer makes such weights): X and the hidden state quantized to uint8 at each step as "
    "onnxruntime does, the same integer sums, results within float rounding of onnxruntime's at one thread. "
    "Other weights: LSTM on its dequantized weights, in float (onnxruntime also rounds the activations to 8 "
    "bits at each step: results differ from it by that rounding, not within one step)",
)
def _dynamic_quantize_lstm(b: _Builder, node: onnx.NodeProto) -> None:
    """DynamicQuantizeLSTM(X, W, R, B, sequence_lens, initial_h, initial_c, P, W scale,
    W zero point, R scale, R zero point) that `keeps` does not keep: an LSTM whose W
    [D, I, 4H] and R [D, H, 4H] are 8-bit, transposed against LSTM's, with a scale and zero
    point per direction ([D]) or per direction and column ([D, 4H]). onnxruntime also
    quantizes X and the hidden state at each step; here the LSTM runs in float on the
    dequantized weights, so its results differ from onnxruntime's by that activation
    rounding (not within one step)."""
    weights = [
        b.add("Transpose", [_dequantized_per_column(b, x, scale)], perm=[0, 2, 1]) for x, scale in ((1, 8), (2, 10))
    ]
    inputs = [b.input(0), *weights, *(b.input(k) for k in range(3, 8))]
    while inputs and not inputs[-1]:
        inputs.pop()
    kept = {name: b.attr(name) for name in LSTM_ATTRIBUTES if b.attr(name) is not None}
    name = f"{b.prefix}/LSTM_{len(b.nodes)}"
    b.nodes.append(helper.make_node("LSTM", inputs, list(node.output), name=name, **kept))


def _dequantized_per_column(b: _Builder, x: int, scale: int) -> str:
    """(x - zero point) * scale, in float, for x [D, rows, columns] with a scale and zero
    point (inputs scale, scale + 1) of shape [D] or [D, columns]."""
    shape = b.add("Constant", [], value=helper.make_tensor("shape", onnx.TensorProto.INT64, [3], [0, 1, -1]))
    zero_point = b.add("Cast", [b.add("Reshape", [b.input(scale + 1), shape])], to=onnx.TensorProto.FLOAT)
    less_zero = b.add("Sub", [b.add("Cast", [b.input(x)], to=onnx.TensorProto.FLOAT), zero_point])
    return b.add("Mul", [less_zero, b.add("Reshape", [b.input(scale), shape])])


def keeps(node: onnx.NodeProto, known: Callable[[str], np.ndarray | None]) -> bool:
    """Whether `node` is imported as an op of the dialect (dialects/microsoft.py) rather than
    expanded: Tokenizer; DynamicQuantizeLSTM whose weights, scales and zero points are
    known (`known`: the array of an input name, or None) and whose weights less their
    zero points fit int8, the integer kernels' operands (else its float expansion)."""
    if node.op_type not in MICROSOFT_OPS:
        return False
    if node.op_type != "DynamicQuantizeLSTM":
        return True
    b = _Builder(node, 0)
    arrays = [known(b.input(k)) if b.input(k) else None for k in (1, 9, 2, 11)]
    return all(a is not None for a in arrays) and all(
        lstm_integer_weights(weights, zero_point) is not None for weights, zero_point in (arrays[:2], arrays[2:])
    )


def expand_microsoft_node(node: onnx.NodeProto, opset: int) -> list[onnx.NodeProto]:
    """The ai.onnx nodes computing `node` (of the com.microsoft domain) in a model of ai.onnx
    `opset`; UnsupportedOpError for an op without an expansion."""
    entry = EXPANSIONS.get(node.op_type)
    builder = _Builder(node, opset)
    if entry is None:
        builder.refuse(f"not supported (supported: {', '.join(sorted(EXPANSIONS))})")
    if len(node.output) != 1 and node.op_type not in SEVERAL_OUTPUTS:
        builder.refuse(f"{len(node.output)} outputs, expected 1")
    entry[0](builder, node)
    return builder.nodes
