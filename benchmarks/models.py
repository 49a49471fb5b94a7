"""The benchmark models and their FLOP counts.

- the nine light CNNs of the onnx wheel, with random weights (onnxc/examples/light.py),
  also returning their pre-Softmax logits (random weights make the Softmax one-hot);
- the MNIST CNN of onnxc/examples/mnist.py;
- a BERT-style encoder layer (seq 128, hidden 256, 4 heads, FFN 1024) built here from
  ops onnxc lowers: LayerNorm as MatMul-by-1/n means, GELU in its tanh form;
- FAMILIES: the model families of families.py (MobileNetV3, EfficientNet, ResNeXt, DeepLabV3,
  ConvNeXt, ViT, LLaMA and wav2vec2 style), built in code;
- TORCH: full-size torch exports, as exported (symbolic dims), when benchmarks/torch_exports
  holds them (`python tests/models/export_torch_dynamic.py --full benchmarks/torch_exports`,
  needs torch): torchvision ResNet-50, MobileNetV2, EfficientNet-B0 and transformers BERT-base,
  GPT-2 small and T5-small encoders, measured at the shapes of TORCH_SHAPES.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from families import FAMILIES, FREE_IMAGE
from onnx import TensorProto, helper, numpy_helper

from onnxc.examples.light import LIGHT_MODELS, load_light_model
from onnxc.examples.mnist import build_mnist_cnn

MODELS = ("mnist", "bert", *(name for name in LIGHT_MODELS))
"""The default set of benchmarks/run.py; `--models families` runs FAMILIES, `--models torch` TORCH."""
TORCH_EXPORTS = Path(__file__).parent / "torch_exports"
TORCH_SHAPES = {
    "resnet50": {"batch": 1},
    "mobilenet_v2": {"batch": 1},
    "efficientnet_b0": {"batch": 1},
    "bert": {"batch": 1, "sequence": 128},
    "gpt2": {"batch": 1, "sequence": 64},
    "t5_encoder": {"batch": 1, "sequence": 128},
}
"""Each torch export's symbolic dims at the measured shape."""
TORCH = tuple(f"torch_{name}" for name in TORCH_SHAPES if (TORCH_EXPORTS / f"{name}.onnx").exists())
OPSET = 17
IR_VERSION = 8  # what onnxruntime 1.x reads


def load(name: str) -> onnx.ModelProto:
    if name in TORCH:
        return onnx.load(TORCH_EXPORTS / f"{name.removeprefix('torch_')}.onnx")
    if name == "mnist":
        model = build_mnist_cnn(seed=0)
    elif name == "bert":
        model = bert_encoder()
    elif name in FAMILIES:
        return FAMILIES[name]()
    else:
        model = _with_logits(load_light_model(name))
    model.ir_version = IR_VERSION  # the light models say 3, which would require initializers to be inputs
    return model


def bindings(name: str) -> dict[str, int]:
    """The symbolic dims of model `name` at its measured shape (TORCH_SHAPES; a free image's at
    its family's static size; else none)."""
    if name in TORCH:
        return TORCH_SHAPES[name.removeprefix("torch_")]
    side = FREE_IMAGE.get(name.removesuffix("_free_hw")) if name.endswith("_free_hw") else None
    return {"height": side, "width": side} if side else {}


def feed(arguments, rng: np.random.Generator, dims: dict[str, int]) -> dict[str, np.ndarray]:
    """Random inputs for a session's `arguments` (name, shape, type), symbolic dims at `dims`
    (else 1): token ids in [0, 1000) for int64 inputs, an all-ones attention mask, normal
    floats otherwise."""
    inputs = {}
    for arg in arguments:
        shape = [d if isinstance(d, int) else dims.get(d, 1) for d in arg.shape]
        if arg.name == "attention_mask":
            inputs[arg.name] = np.ones(shape, np.int64)
        elif "int64" in arg.type:
            inputs[arg.name] = rng.integers(0, 1000, shape)
        else:
            inputs[arg.name] = rng.standard_normal(shape).astype(np.float32)
    return inputs


def _with_logits(model: onnx.ModelProto) -> onnx.ModelProto:
    """Also output the Softmax input, so that outputs are compared before saturation."""
    softmax = next((n for n in model.graph.node if n.op_type == "Softmax"), None)
    if softmax is not None:
        model.graph.output.append(helper.make_tensor_value_info(softmax.input[0], TensorProto.FLOAT, None))
    return model


def bert_encoder(
    seq: int = 128, hidden: int = 256, heads: int = 4, ffn: int = 1024, seed: int = 0, dynamic: bool = False
):
    """One post-LayerNorm transformer encoder layer, batch 1; with `dynamic`, of
    input [batch, seq, hidden] with the reshapes' shapes computed from it as
    torch's exporter writes them (Shape -> Gather -> Unsqueeze -> Concat)."""
    rng = np.random.default_rng(seed)
    head = hidden // heads
    initializers: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def constant(name: str, value: np.ndarray) -> str:
        array = np.asarray(value)
        initializers.append(
            numpy_helper.from_array(array.astype(np.float32) if array.dtype.kind == "f" else array, name)
        )
        return name

    def node(op: str, inputs: list[str], output: str, **attributes) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def dense(x: str, name: str, rows: int, columns: int) -> str:
        weight = constant(f"{name}.w", rng.standard_normal((rows, columns)) * np.sqrt(1.0 / rows))
        bias = constant(f"{name}.b", 0.02 * rng.standard_normal(columns))
        return node("Add", [node("MatMul", [x, weight], f"{name}.mm"), bias], name)

    def layer_norm(x: str, name: str) -> str:
        mean_vector = constant(f"{name}.mean", np.full((hidden, 1), 1.0 / hidden))
        centered = node("Sub", [x, node("MatMul", [x, mean_vector], f"{name}.mu")], f"{name}.d")
        variance = node("MatMul", [node("Mul", [centered, centered], f"{name}.d2"), mean_vector], f"{name}.var")
        epsilon = constant(f"{name}.eps", np.array(1e-5))
        deviation = node("Sqrt", [node("Add", [variance, epsilon], f"{name}.ve")], f"{name}.sd")
        normalized = node("Div", [centered, deviation], f"{name}.n")
        gamma = constant(f"{name}.gamma", 1.0 + 0.1 * rng.standard_normal(hidden))
        beta = constant(f"{name}.beta", 0.1 * rng.standard_normal(hidden))
        return node("Add", [node("Mul", [normalized, gamma], f"{name}.g"), beta], name)

    def run_time_shape(name: str, tail: list[int]) -> str:
        """[batch, seq, *tail] from x's shape."""
        dims = [
            node("Unsqueeze", [node("Gather", ["x.shape", constant(f"{name}.i{k}", np.array(k, np.int64))], f"{name}.d{k}", axis=0), "axis0"], f"{name}.u{k}")
            for k in range(2)
        ]  # fmt: skip
        return node("Concat", [*dims, constant(f"{name}.tail", np.array(tail, np.int64))], name, axis=0)

    def shape_of(name: str, tail: list[int]) -> str:
        if dynamic:
            return run_time_shape(name, tail)
        return constant(name, np.array([1, seq, *tail], np.int64))

    if dynamic:
        node("Shape", ["x"], "x.shape")
        constant("axis0", np.array([0], np.int64))

    def split_heads(x: str, name: str, permutation: list[int]) -> str:
        shape = shape_of(f"{name}.shape", [heads, head])
        return node("Transpose", [node("Reshape", [x, shape], f"{name}.r")], name, perm=permutation)

    def gelu(x: str) -> str:
        """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
        cube = node("Mul", [node("Mul", [x, x], "gelu.x2"), x], "gelu.x3")
        inner = node("Add", [x, node("Mul", [cube, constant("gelu.c", np.array(0.044715))], "gelu.cx3")], "gelu.in")
        scaled = node("Mul", [inner, constant("gelu.s", np.array(np.sqrt(2 / np.pi)))], "gelu.sc")
        one_plus = node("Add", [node("Tanh", [scaled], "gelu.t"), constant("gelu.one", np.array(1.0))], "gelu.1t")
        return node("Mul", [node("Mul", [x, one_plus], "gelu.xt"), constant("gelu.half", np.array(0.5))], "gelu")

    x = "x"
    query = split_heads(dense(x, "q", hidden, hidden), "qh", [0, 2, 1, 3])
    key = split_heads(dense(x, "k", hidden, hidden), "kh", [0, 2, 3, 1])
    value = split_heads(dense(x, "v", hidden, hidden), "vh", [0, 2, 1, 3])
    scores = node("Mul", [node("MatMul", [query, key], "qk"), constant("scale", np.array(1 / np.sqrt(head)))], "s")
    context = node("MatMul", [node("Softmax", [scores], "p", axis=-1), value], "ctx")
    merged_shape = shape_of("merged.shape", [hidden])
    merged = node("Reshape", [node("Transpose", [context], "ctx.t", perm=[0, 2, 1, 3]), merged_shape], "merged")
    attention = layer_norm(node("Add", [dense(merged, "o", hidden, hidden), x], "res1"), "ln1")
    feed_forward = dense(gelu(dense(attention, "ffn1", hidden, ffn)), "ffn2", ffn, hidden)
    output = layer_norm(node("Add", [feed_forward, attention], "res2"), "ln2")
    nodes.append(helper.make_node("Identity", [output], ["y"], name="y"))
    graph = helper.make_graph(
        nodes,
        "bert_encoder",
        [
            helper.make_tensor_value_info(
                "x", TensorProto.FLOAT, ["batch", "seq", hidden] if dynamic else [1, seq, hidden]
            )
        ],
        [
            helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, ["batch", "seq", hidden] if dynamic else [1, seq, hidden]
            )
        ],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)


def gflop(model: onnx.ModelProto, dims: dict[str, int] | None = None) -> float:
    """Multiply-adds ×2 of Conv, Gemm and MatMul (what the usual GFLOP figures count), in GFLOP;
    symbolic dims at `dims` wherever the model's shapes name them (torch's exporter writes
    every intermediate shape)."""
    if dims:
        pinned = onnx.ModelProto()
        pinned.CopyFrom(model)
        for value in [*pinned.graph.input, *pinned.graph.output, *pinned.graph.value_info]:
            for dim in value.type.tensor_type.shape.dim:
                if dim.dim_param in dims:
                    dim.dim_value = dims[dim.dim_param]
        model = pinned
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    shapes = {}
    for info in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]:
        dims = info.type.tensor_type.shape.dim
        shapes[info.name] = [d.dim_value for d in dims]
    for tensor in inferred.graph.initializer:
        shapes[tensor.name] = list(tensor.dims)
    total = 0
    for n in inferred.graph.node:
        output = shapes.get(n.output[0])
        if not output:
            continue
        if n.op_type == "Conv":
            weight = shapes[n.input[1]]
            total += 2 * int(np.prod(output)) * int(np.prod(weight[1:]))
        elif n.op_type == "MatMul":
            total += 2 * int(np.prod(output)) * shapes[n.input[0]][-1]
        elif n.op_type == "Gemm":
            trans_a = next((a.i for a in n.attribute if a.name == "transA"), 0)
            a = shapes[n.input[0]]
            total += 2 * int(np.prod(output)) * (a[0] if trans_a else a[1])
    return total / 1e9
