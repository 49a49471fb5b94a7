"""Small float models and their int8 versions made by `onnxruntime.quantization`.

Four float32 models built with onnx.helper, seeded random weights scaled so activations
stay O(1): a ResNet-style CNN (residual blocks, a stride-2 stage, global pooling, Gemm), a
MobileNetV2-style CNN (inverted residuals with depthwise convs and Clip(0, 6)), a BERT-style
encoder layer (attention and FFN MatMuls, LayerNormalization, GELU) and an LSTM tagger. Each is
quantized the three ways a user would: static QDQ (the quantizer's default format), static
QOperator (QLinearConv/QLinearMatMul plus the `com.microsoft` QLinearAdd, QLinearConcat,
QLinearGlobalAveragePool, ... ops) and dynamic (DynamicQuantizeLinear + MatMulInteger).
Calibration reads random inputs. `width` scales the channel counts (1 for tests, 4 or more
for benchmarks).

    python -m onnxc.examples.quantized resnet qdq resnet-qdq.onnx --width 4

Needs onnxruntime (`pip install -e ".[test]"`).
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
MODELS = ("resnet", "mobilenet", "bert", "lstm")
FORMATS = ("qdq", "qoperator", "dynamic")


class _Graph:
    """Nodes and initializers of a model under construction, with fresh names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def constant(self, prefix: str, value: np.ndarray) -> str:
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op_type: str, inputs: list[str], **attributes) -> str:
        output = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attributes))
        return output

    def weight(self, *shape: int, fan_in: int) -> np.ndarray:
        return (self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def conv(self, x: str, channels: int, out_channels: int, kernel: int, stride: int = 1, group: int = 1) -> str:
        w = self.weight(out_channels, channels // group, kernel, kernel, fan_in=channels // group * kernel * kernel)
        b = (self.rng.standard_normal(out_channels) * 0.1).astype(np.float32)
        pad = kernel // 2
        inputs = [x, self.constant("w", w), self.constant("b", b)]
        return self.node("Conv", inputs, pads=[pad] * 4, strides=[stride] * 2, group=group)

    def clip6(self, x: str) -> str:
        return self.node("Clip", [x, self.constant("lo", np.float32(0)), self.constant("hi", np.float32(6))])

    def dense(self, x: str, features: int, out_features: int) -> str:
        w = self.weight(features, out_features, fan_in=features)
        b = (self.rng.standard_normal(out_features) * 0.1).astype(np.float32)
        return self.node("Add", [self.node("MatMul", [x, self.constant("w", w)]), self.constant("b", b)])

    def head(self, x: str, channels: int, classes: int) -> str:
        """Global average pool, flatten, Gemm to the class logits."""
        flat = self.node("Flatten", [self.node("GlobalAveragePool", [x])])
        w = self.weight(classes, channels, fan_in=channels)
        b = (self.rng.standard_normal(classes) * 0.1).astype(np.float32)
        return self.node("Gemm", [flat, self.constant("w", w), self.constant("b", b)], transB=1)

    def model(self, name: str, inputs: list[onnx.ValueInfoProto], output: str) -> onnx.ModelProto:
        outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)]
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.ir_version = IR_VERSION
        return onnx.shape_inference.infer_shapes(model)


def resnet(width: int = 1, image: int = 32) -> onnx.ModelProto:
    """Stem conv, a residual block, a stride-2 residual block with a 1x1 projection, head."""
    g = _Graph(seed=1)
    c = 16 * width
    x = g.node("Relu", [g.conv("input", 3, c, 3)])
    for stride, out in ((1, c), (2, 2 * c)):
        y = g.node("Relu", [g.conv(x, c, out, 3, stride)])
        y = g.conv(y, out, out, 3)
        shortcut = x if stride == 1 else g.conv(x, c, out, 1, stride)
        x, c = g.node("Relu", [g.node("Add", [y, shortcut])]), out
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, image, image])]
    return g.model("resnet", inputs, g.head(x, c, 10))


def mobilenet(width: int = 1, image: int = 32) -> onnx.ModelProto:
    """Stem conv, inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project), head."""
    g = _Graph(seed=2)
    c = 8 * width
    x = g.clip6(g.conv("input", 3, c, 3, 2))
    for stride, out in ((1, c), (2, 2 * c), (1, 2 * c)):
        hidden = 4 * c
        y = g.clip6(g.conv(x, c, hidden, 1))
        y = g.clip6(g.conv(y, hidden, hidden, 3, stride, group=hidden))
        y = g.conv(y, hidden, out, 1)
        x, c = (g.node("Add", [x, y]) if stride == 1 and out == c else y), out
    x = g.clip6(g.conv(x, c, 4 * c, 1))
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, image, image])]
    return g.model("mobilenet", inputs, g.head(x, 4 * c, 10))


def bert(width: int = 1, seq: int = 16) -> onnx.ModelProto:
    """One post-LayerNorm encoder layer: 4 heads, hidden 32*width, FFN 4x, GELU (Erf form)."""
    g = _Graph(seed=3)
    hidden, heads = 32 * width, 4
    head = hidden // heads

    def layer_norm(x: str) -> str:
        scale = g.constant("gamma", np.ones(hidden, np.float32))
        shift = g.constant("beta", np.zeros(hidden, np.float32))
        return g.node("LayerNormalization", [x, scale, shift], axis=-1)

    def split_heads(x: str) -> str:
        shape = g.constant("shape", np.array([1, seq, heads, head], np.int64))
        return g.node("Transpose", [g.node("Reshape", [x, shape])], perm=[0, 2, 1, 3])

    x = "input"
    q, k, v = (split_heads(g.dense(x, hidden, hidden)) for _ in range(3))
    k_t = g.node("Transpose", [k], perm=[0, 1, 3, 2])
    scores = g.node("Mul", [g.node("MatMul", [q, k_t]), g.constant("scale", np.float32(1 / np.sqrt(head)))])
    context = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), v])
    merged = g.node("Transpose", [context], perm=[0, 2, 1, 3])
    merged = g.node("Reshape", [merged, g.constant("shape", np.array([1, seq, hidden], np.int64))])
    x = layer_norm(g.node("Add", [x, g.dense(merged, hidden, hidden)]))
    up = g.dense(x, hidden, 4 * hidden)
    erf = g.node("Erf", [g.node("Mul", [up, g.constant("inv_sqrt2", np.float32(1 / np.sqrt(2)))])])
    gelu = g.node("Mul", [g.node("Mul", [up, g.node("Add", [erf, g.constant("one", np.float32(1))])]),
                          g.constant("half", np.float32(0.5))])  # fmt: skip
    x = layer_norm(g.node("Add", [x, g.dense(gelu, 4 * hidden, hidden)]))
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, seq, hidden])]
    return g.model("bert", inputs, x)


def lstm(width: int = 1, seq: int = 12) -> onnx.ModelProto:
    """Embedded tokens (a float input) -> a 1-layer LSTM -> per-step tag logits (MatMul)."""
    g = _Graph(seed=4)
    features, hidden, tags = 16 * width, 32 * width, 8
    w = g.weight(1, 4 * hidden, features, fan_in=features)
    r = g.weight(1, 4 * hidden, hidden, fan_in=hidden)
    b = np.zeros((1, 8 * hidden), np.float32)
    states = g.node("LSTM", ["input", g.constant("w", w), g.constant("r", r), g.constant("b", b)], hidden_size=hidden)
    steps = g.node("Squeeze", [states, g.constant("axes", np.array([1], np.int64))])  # [seq, batch, hidden]
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [seq, 1, features])]
    return g.model("lstm", inputs, g.dense(steps, hidden, tags))


BUILDERS: dict[str, Callable[..., onnx.ModelProto]] = {"resnet": resnet, "mobilenet": mobilenet, "bert": bert, "lstm": lstm}


def random_inputs(model: onnx.ModelProto, seed: int) -> dict[str, np.ndarray]:
    """Standard normal float32 inputs of the model's declared shapes."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def quantize(model: onnx.ModelProto, quant_format: str, calibration_samples: int = 8) -> onnx.ModelProto:
    """`model` quantized by onnxruntime.quantization: 'qdq' or 'qoperator' (static, per-channel
    weights, calibrated on random inputs) or 'dynamic'."""
    from onnxruntime import quantization as q

    class RandomInputs(q.CalibrationDataReader):
        def __init__(self):
            self.feeds = iter([random_inputs(model, seed) for seed in range(100, 100 + calibration_samples)])

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory() as folder:
        float_path, quantized_path = Path(folder) / "float.onnx", Path(folder) / "int8.onnx"
        onnx.save(model, float_path)
        if quant_format == "dynamic":
            q.quantize_dynamic(float_path, quantized_path, weight_type=q.QuantType.QInt8)
        else:
            formats = {"qdq": q.QuantFormat.QDQ, "qoperator": q.QuantFormat.QOperator}
            q.quantize_static(
                float_path,
                quantized_path,
                RandomInputs(),
                quant_format=formats[quant_format],
                per_channel=True,
                activation_type=q.QuantType.QUInt8,
                weight_type=q.QuantType.QInt8,
            )
        return onnx.load(quantized_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=MODELS)
    parser.add_argument("format", choices=(*FORMATS, "float"))
    parser.add_argument("output")
    parser.add_argument("--width", type=int, default=1, help="channel multiplier (default 1)")
    args = parser.parse_args()
    model = BUILDERS[args.model](args.width)
    onnx.save(model if args.format == "float" else quantize(model, args.format), args.output)


if __name__ == "__main__":
    main()
