"""Model families people run, built in code (onnx.helper, random weights, batch 1, opset 17), written
as torch's exporter writes them: the benchmark of issue #19 next to the light CNNs of models.py.

| name | what it stands for |
| --- | --- |
| mobilenetv2_style | inverted residuals of 3x3 depthwise convs, ReLU6 (Clip), no SE |
| mobilenetv3_style | inverted residuals: depthwise 3x3 and 5x5 at stride 1 and 2, SE with HardSigmoid, HardSwish |
| efficientnet_style | the same blocks with SiLU (x * Sigmoid(x)) and SE with Sigmoid |
| resnext_style | bottlenecks whose 3x3 conv has 32 groups |
| deeplabv3_style | a strided backbone, dilated 3x3 convs (ASPP) and a bilinear Resize back to the input size |
| convnext_style | 7x7 depthwise, LayerNormalization over channels, GELU (Erf), layer scale |
| vit_style | 16x16 patch embedding, a class token, an encoder layer at 197 x 768 (12 heads) |
| llama_style | a decoder block: RMSNorm, rotary embeddings, causal mask, SwiGLU MLP (64 tokens x 512) |
| wav2vec2_style | strided conv1d front end (kernel 10 stride 5, 3/2, 2/2), GroupNorm, a grouped positional conv |
| NAME_free_hw | mobilenetv2, resnext and deeplabv3_style with a symbolic image height and width (`FREE_IMAGE`) |

Sizes are moderate (0.2-3 GFLOP) so that the whole set runs in a few minutes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


class _Graph:
    """Nodes named by what they are (`block2.dw`), initializers drawn from one generator."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.names: set[str] = set()

    def define(self, name: str) -> str:
        if name in self.names:
            raise ValueError(f"{name!r} is defined twice")
        self.names.add(name)
        return name

    def const(self, name: str, value) -> str:
        self.define(name)
        array = np.asarray(value)
        array = array.astype(np.float32) if array.dtype.kind == "f" else array.astype(np.int64)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, *shape: int, fan_in: int | None = None) -> str:
        scale = np.sqrt(2.0 / (fan_in or int(np.prod(shape[1:])) or 1))
        return self.const(name, self.rng.standard_normal(shape) * scale)

    def op(self, op_type: str, inputs: Sequence[str], name: str, **attributes) -> str:
        """A node named `name` with one output of that name."""
        self.nodes.append(helper.make_node(op_type, list(inputs), [self.define(name)], name=name, **attributes))
        return name

    def conv(self, x: str, name: str, cin: int, cout: int, kernel: int | Sequence[int], stride: int = 1,
             groups: int = 1, dilation: int = 1, padding: int | None = None) -> str:  # fmt: skip
        """A Conv with bias; `padding` on every side, by default (k - 1) / 2 dilated (a 'same' conv)."""
        kernel = [kernel, kernel] if isinstance(kernel, int) else list(kernel)
        pads = [dilation * (k - 1) // 2 if padding is None else padding for k in kernel] * 2
        w = self.weight(f"{name}.w", cout, cin // groups, *kernel)
        b = self.const(f"{name}.b", 0.01 * self.rng.standard_normal(cout))
        return self.op("Conv", [x, w, b], name, kernel_shape=kernel, strides=[stride] * len(kernel), pads=pads,
                       group=groups, dilations=[dilation] * len(kernel))  # fmt: skip

    def linear(self, x: str, name: str, cin: int, cout: int, bias: bool = True) -> str:
        y = self.op("MatMul", [x, self.weight(f"{name}.w", cin, cout, fan_in=cin)], f"{name}.mm" if bias else name)
        return self.op("Add", [y, self.const(f"{name}.b", 0.01 * self.rng.standard_normal(cout))], name) if bias else y

    def silu(self, x: str, name: str) -> str:
        return self.op("Mul", [x, self.op("Sigmoid", [x], f"{name}.sig")], name)

    def gelu(self, x: str, name: str) -> str:
        """0.5 x (1 + erf(x / sqrt 2)), as torch writes nn.GELU below opset 20."""
        erf = self.op(
            "Erf", [self.op("Div", [x, self.const(f"{name}.sqrt2", np.sqrt(2.0))], f"{name}.div")], f"{name}.erf"
        )
        one_plus = self.op("Add", [erf, self.const(f"{name}.one", 1.0)], f"{name}.add")
        return self.op("Mul", [self.op("Mul", [x, one_plus], f"{name}.mul"), self.const(f"{name}.half", 0.5)], name)

    def layer_norm(self, x: str, name: str, width: int) -> str:
        scale = self.const(f"{name}.s", 1 + 0.1 * self.rng.standard_normal(width))
        return self.op("LayerNormalization", [x, scale, self.const(f"{name}.b", 0.1 * self.rng.standard_normal(width))],
                       name, axis=-1, epsilon=1e-6)  # fmt: skip

    def model(self, name: str, x: str, x_shape: Sequence[int], y: str) -> onnx.ModelProto:
        inputs = [helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape)]
        outputs = [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)]
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)
        return onnx.shape_inference.infer_shapes(model)


# ----------------------------------------------------------------------------- CNNs


# (kernel, expansion, output channels, stride, SE) of the MobileNetV3/EfficientNet-style blocks
SE_BLOCKS = [(3, 4, 24, 2, False), (3, 3, 24, 1, False), (5, 3, 40, 2, True), (5, 3, 40, 1, True),
             (3, 6, 80, 2, False), (3, 6, 80, 1, True), (5, 6, 112, 1, True), (5, 6, 160, 2, True)]  # fmt: skip
# MobileNetV2's: 3x3 depthwise, expansion 6, no SE
V2_BLOCKS = [(3, 1, 16, 1, False), (3, 6, 24, 2, False), (3, 6, 24, 1, False), (3, 6, 32, 2, False),
             (3, 6, 32, 1, False), (3, 6, 64, 2, False), (3, 6, 64, 1, False), (3, 6, 96, 1, False),
             (3, 6, 160, 2, False), (3, 6, 320, 1, False)]  # fmt: skip


def _mobile_net(name: str, activation: str, gate: str | None, blocks=SE_BLOCKS, head: int = 640) -> onnx.ModelProto:
    """Stem, inverted residual blocks (expand 1x1, depthwise k x k, SE, project 1x1), head, classifier;
    `activation` HardSwish, SiLU or ReLU6 (Clip(x, 0, 6), as torch exports it)."""
    g = _Graph()

    def act(x: str, at: str) -> str:
        if activation == "relu6":
            return g.op("Clip", [x, g.const(f"{at}.min", 0.0), g.const(f"{at}.max", 6.0)], at)
        return g.op("HardSwish", [x], at) if activation == "hardswish" else g.silu(x, at)

    def squeeze_excite(x: str, at: str, channels: int) -> str:
        pooled = g.op("GlobalAveragePool", [x], f"{at}.pool")
        reduced = g.op("Relu", [g.conv(pooled, f"{at}.reduce", channels, max(8, channels // 4), 1)], f"{at}.relu")
        expanded = g.conv(reduced, f"{at}.expand", max(8, channels // 4), channels, 1)
        weights = g.op("HardSigmoid", [expanded], f"{at}.gate", alpha=1 / 6, beta=0.5) if gate == "hardsigmoid" \
            else g.op("Sigmoid", [expanded], f"{at}.gate")  # fmt: skip
        return g.op("Mul", [x, weights], f"{at}.scale")

    x = act(g.conv("image", "stem", 3, 16, 3, stride=2), "stem.act")
    channels = 16
    for number, (kernel, expansion, out, stride, se) in enumerate(blocks):
        at, wide = f"block{number}", channels * expansion
        y = act(g.conv(x, f"{at}.expand", channels, wide, 1), f"{at}.expand.act") if expansion > 1 else x
        y = act(g.conv(y, f"{at}.dw", wide, wide, kernel, stride=stride, groups=wide), f"{at}.dw.act")
        y = squeeze_excite(y, f"{at}.se", wide) if se else y
        y = g.conv(y, f"{at}.project", wide, out, 1)
        x = g.op("Add", [x, y], f"{at}.residual") if stride == 1 and out == channels else y
        channels = out
    x = act(g.conv(x, "head", channels, head, 1), "head.act")
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x], "pool")], "flatten")
    return g.model(name, "image", [1, 3, 224, 224], g.linear(x, "classifier", head, 1000))


def resnext_style() -> onnx.ModelProto:
    """ResNeXt-50 32x4d's stem and its first bottlenecks of stages 1 and 2, at 160 x 160."""
    g = _Graph()
    x = g.op("Relu", [g.conv("image", "stem", 3, 64, 7, stride=2)], "stem.relu")
    x = g.op("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = 64
    for number, (width, out, stride) in enumerate([(128, 256, 1), (128, 256, 1), (256, 512, 2), (256, 512, 1)]):
        at = f"block{number}"
        y = g.op("Relu", [g.conv(x, f"{at}.reduce", channels, width, 1)], f"{at}.reduce.relu")
        y = g.op("Relu", [g.conv(y, f"{at}.grouped", width, width, 3, stride=stride, groups=32)], f"{at}.grouped.relu")
        y = g.conv(y, f"{at}.expand", width, out, 1)
        shortcut = x if channels == out and stride == 1 else g.conv(x, f"{at}.down", channels, out, 1, stride=stride)
        x = g.op("Relu", [g.op("Add", [y, shortcut], f"{at}.add")], f"{at}.relu")
        channels = out
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x], "pool")], "flatten")
    return g.model("resnext_style", "image", [1, 3, 160, 160], g.linear(x, "classifier", channels, 1000))


def deeplabv3_style() -> onnx.ModelProto:
    """A stride-8 backbone, ASPP (1x1, three dilated 3x3, image pooling), a bilinear Resize x8."""
    g = _Graph()
    x, channels = "image", 3
    for number, (out, stride) in enumerate([(32, 2), (64, 2), (128, 2), (128, 1)]):
        x = g.op("Relu", [g.conv(x, f"backbone{number}", channels, out, 3, stride=stride)], f"backbone{number}.relu")
        channels = out
    branches = [g.op("Relu", [g.conv(x, "aspp.1x1", channels, 96, 1)], "aspp.1x1.relu")]
    for rate in (6, 12, 18):
        branches.append(
            g.op("Relu", [g.conv(x, f"aspp.rate{rate}", channels, 96, 3, dilation=rate)], f"aspp.rate{rate}.relu")
        )
    pooled = g.op("Relu", [g.conv(g.op("GlobalAveragePool", [x], "aspp.pool"), "aspp.pool.conv", channels, 96, 1)],
                  "aspp.pool.relu")  # fmt: skip
    # The pooled branch back to the feature map's size, read from its shape as torch exports
    # F.interpolate(size=x.shape[-2:]) (folded to constants where the image size is static).
    feature_size = g.op("Slice", [g.op("Shape", [x], "aspp.pool.shape"), g.const("aspp.pool.from", [2]),
                                  g.const("aspp.pool.to", [4])], "aspp.pool.hw")  # fmt: skip
    sizes = g.op("Concat", [g.const("aspp.pool.nc", [1, 96]), feature_size], "aspp.pool.size", axis=0)
    branches.append(g.op("Resize", [pooled, "", "", sizes], "aspp.pool.resize", mode="linear"))
    x = g.op(
        "Relu", [g.conv(g.op("Concat", branches, "aspp.concat", axis=1), "aspp.project", 5 * 96, 96, 1)], "aspp.relu"
    )
    logits = g.conv(x, "classifier", 96, 21, 1)
    scales = g.const("upsample.scales", [1.0, 1.0, 8.0, 8.0])
    y = g.op("Resize", [logits, "", scales], "upsample", mode="linear")
    return g.model("deeplabv3_style", "image", [1, 3, 256, 256], y)


def convnext_style() -> onnx.ModelProto:
    """ConvNeXt-tiny's patchify stem and blocks of its first two stages, at 160 x 160."""
    g = _Graph()
    nhwc, nchw = [0, 2, 3, 1], [0, 3, 1, 2]
    x = g.conv("image", "stem", 3, 96, 4, stride=4, padding=0)
    x = g.op("Transpose", [g.layer_norm(g.op("Transpose", [x], "stem.nhwc", perm=nhwc), "stem.ln", 96)],
             "stem.nchw", perm=nchw)  # fmt: skip
    channels = 96
    for stage, (out, depth) in enumerate([(96, 2), (192, 2)]):
        if out != channels:
            y = g.layer_norm(g.op("Transpose", [x], f"down{stage}.nhwc", perm=nhwc), f"down{stage}.ln", channels)
            x = g.op("Transpose", [y], f"down{stage}.nchw", perm=nchw)
            x, channels = g.conv(x, f"down{stage}", channels, out, 2, stride=2), out
        for number in range(depth):
            at = f"stage{stage}.block{number}"
            y = g.op(
                "Transpose", [g.conv(x, f"{at}.dw", channels, channels, 7, groups=channels)], f"{at}.nhwc", perm=nhwc
            )
            y = g.linear(g.layer_norm(y, f"{at}.ln", channels), f"{at}.fc1", channels, 4 * channels)
            y = g.linear(g.gelu(y, f"{at}.gelu"), f"{at}.fc2", 4 * channels, channels)
            y = g.op("Mul", [y, g.const(f"{at}.gamma", np.full(channels, 0.1))], f"{at}.layer_scale")
            x = g.op("Add", [x, g.op("Transpose", [y], f"{at}.nchw", perm=nchw)], f"{at}.residual")
    x = g.layer_norm(g.op("Flatten", [g.op("GlobalAveragePool", [x], "pool")], "flatten"), "head.ln", channels)
    return g.model("convnext_style", "image", [1, 3, 160, 160], g.linear(x, "classifier", channels, 1000))


# ----------------------------------------------------------------------------- transformers


def _attention(g: _Graph, x: str, at: str, tokens: int, width: int, heads: int,
               rotate: Callable[[str, str], str] | None = None, mask: str | None = None) -> str:  # fmt: skip
    """Multi-head self-attention as torch writes it: projections, Reshape + Transpose into heads,
    MatMul, scale, (mask), Softmax, MatMul, back to [1, tokens, width], output projection."""
    head = width // heads
    split = g.const(f"{at}.heads", [1, tokens, heads, head])
    q, k, v = (g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{at}.{n}", width, width, bias=rotate is None), split],
               f"{at}.{n}.split")], f"{at}.{n}.heads", perm=[0, 2, 1, 3]) for n in "qkv")  # fmt: skip
    if rotate is not None:
        q, k = rotate(q, f"{at}.q.rope"), rotate(k, f"{at}.k.rope")
    kt = g.op("Transpose", [k], f"{at}.kt", perm=[0, 1, 3, 2])
    scores = g.op("Mul", [g.op("MatMul", [q, kt], f"{at}.qk"), g.const(f"{at}.scale", head**-0.5)], f"{at}.scaled")
    scores = g.op("Add", [scores, mask], f"{at}.masked") if mask else scores
    context = g.op("MatMul", [g.op("Softmax", [scores], f"{at}.softmax", axis=-1), v], f"{at}.context")
    merged = g.op("Reshape", [g.op("Transpose", [context], f"{at}.merge", perm=[0, 2, 1, 3]),
                              g.const(f"{at}.merged_shape", [1, tokens, width])], f"{at}.merged")  # fmt: skip
    return g.linear(merged, f"{at}.out", width, width, bias=rotate is None)


def vit_style(width: int = 768, heads: int = 12) -> onnx.ModelProto:
    """ViT-B/16's patch embedding, class token and position embedding, one pre-norm encoder layer."""
    g = _Graph()
    patches = g.conv("image", "patch", 3, width, 16, stride=16, padding=0)
    tokens = g.op("Transpose", [g.op("Reshape", [patches, g.const("patch.flat_shape", [1, width, 196])], "patch.flat")],
                  "patch.tokens", perm=[0, 2, 1])  # fmt: skip
    x = g.op("Concat", [g.const("cls", 0.02 * g.rng.standard_normal((1, 1, width))), tokens], "cls.concat", axis=1)
    x = g.op("Add", [x, g.const("positions", 0.02 * g.rng.standard_normal((1, 197, width)))], "embed")
    x = g.op("Add", [x, _attention(g, g.layer_norm(x, "ln1", width), "attn", 197, width, heads)], "residual1")
    mlp = g.linear(
        g.gelu(g.linear(g.layer_norm(x, "ln2", width), "fc1", width, 4 * width), "gelu"), "fc2", 4 * width, width
    )
    x = g.layer_norm(g.op("Add", [x, mlp], "residual2"), "ln_final", width)
    return g.model("vit_style", "image", [1, 3, 224, 224], x)


def llama_style(tokens: int = 64, width: int = 512, heads: int = 8, hidden: int = 1408) -> onnx.ModelProto:
    """A LLaMA decoder block on hidden states [1, tokens, width]: RMSNorm as torch writes it (Pow,
    ReduceMean, Add, Sqrt, Div, Mul), rotary embeddings (rotate_half by Slice, Neg, Concat), an
    additive causal mask, SwiGLU (SiLU(gate) * up, down)."""
    g = _Graph()
    head = width // heads

    def rms_norm(x: str, at: str) -> str:
        mean = g.op("ReduceMean", [g.op("Pow", [x, g.const(f"{at}.two", 2.0)], f"{at}.pow")], f"{at}.mean", axes=[-1])
        rms = g.op("Sqrt", [g.op("Add", [mean, g.const(f"{at}.eps", 1e-6)], f"{at}.add_eps")], f"{at}.sqrt")
        return g.op(
            "Mul", [g.op("Div", [x, rms], f"{at}.div"), g.const(f"{at}.w", 1 + 0.1 * g.rng.standard_normal(width))], at
        )

    angles = np.outer(np.arange(tokens), 10000.0 ** (-np.arange(0, head, 2) / head))
    cos = g.const("rope.cos", np.cos(np.concatenate([angles, angles], 1))[None, None])
    sin = g.const("rope.sin", np.sin(np.concatenate([angles, angles], 1))[None, None])
    half, axis, starts, ends = (g.const(n, v) for n, v in (("rope.half", [head // 2]), ("rope.axis", [3]),
                                                            ("rope.zero", [0]), ("rope.end", [head])))  # fmt: skip

    def rotate(x: str, at: str) -> str:
        first = g.op("Slice", [x, starts, half, axis], f"{at}.x1")
        second = g.op("Slice", [x, half, ends, axis], f"{at}.x2")
        rotated = g.op("Concat", [g.op("Neg", [second], f"{at}.neg"), first], f"{at}.rotated", axis=-1)
        return g.op("Add", [g.op("Mul", [x, cos], f"{at}.cos"), g.op("Mul", [rotated, sin], f"{at}.sin")], at)

    mask = g.const("causal", np.triu(np.full((tokens, tokens), -1e9), 1)[None, None])
    x = "hidden_states"
    x = g.op(
        "Add", [x, _attention(g, rms_norm(x, "attn_norm"), "attn", tokens, width, heads, rotate, mask)], "residual1"
    )
    normed = rms_norm(x, "mlp_norm")
    gated = g.op("Mul", [g.silu(g.linear(normed, "gate", width, hidden, bias=False), "silu"),
                         g.linear(normed, "up", width, hidden, bias=False)], "swiglu")  # fmt: skip
    x = g.op("Add", [x, g.linear(gated, "down", hidden, width, bias=False)], "residual2")
    return g.model("llama_style", "hidden_states", [1, tokens, width], x)


def wav2vec2_style(samples: int | str = 16000, channels: int = 256, width: int = 384) -> onnx.ModelProto:
    """wav2vec2-base's feature encoder at 256 channels (conv1d kernel 10 stride 5, GroupNorm of one
    group per channel as torch writes it: InstanceNormalization; then kernel 3 stride 2 x4 and kernel 2
    stride 2 x2, GELU after each), the feature projection and the grouped positional conv (k 128, 16 groups).
    `samples` may be a symbol's name: one model for every length, as torch exports it."""
    g = _Graph()
    layers = [(10, 5)] + [(3, 2)] * 4 + [(2, 2)] * 2  # (kernel, stride)
    x, cin = "audio", 1
    for number, (kernel, stride) in enumerate(layers):
        x = g.conv(x, f"conv{number}", cin, channels, [kernel], stride=stride, padding=0)
        if number == 0:
            norm = [g.const(f"norm0.{n}", v) for n, v in (("s", 1 + 0.1 * g.rng.standard_normal(channels)),
                                                           ("b", 0.1 * g.rng.standard_normal(channels)))]  # fmt: skip
            x = g.op("InstanceNormalization", [x, *norm], "norm0")
        x, cin = g.gelu(x, f"conv{number}.gelu"), channels
    frames = g.op("Transpose", [x], "frames", perm=[0, 2, 1])
    x = g.linear(g.layer_norm(frames, "projection.ln", channels), "projection", channels, width)
    ncw = g.op("Transpose", [x], "positional.ncw", perm=[0, 2, 1])
    positional = g.conv(ncw, "positional", width, width, [128], groups=16, padding=64)  # one frame too many: [:-1]
    positional = g.op("Slice", [positional, g.const("positional.start", [0]), g.const("positional.end", [-1]),
                                g.const("positional.axis", [2])], "positional.trim")  # fmt: skip
    positional = g.op("Transpose", [g.gelu(positional, "positional.gelu")], "positional.nwc", perm=[0, 2, 1])
    x = g.layer_norm(g.op("Add", [x, positional], "positional.add"), "encoder.ln", width)
    return g.model("wav2vec2_style", "audio", [1, 1, samples], x)


FAMILIES: dict[str, Callable[[], onnx.ModelProto]] = {
    "mobilenetv2_style": lambda: _mobile_net("mobilenetv2_style", "relu6", None, V2_BLOCKS, head=1280),
    "mobilenetv3_style": lambda: _mobile_net("mobilenetv3_style", "hardswish", "hardsigmoid"),
    "efficientnet_style": lambda: _mobile_net("efficientnet_style", "silu", "sigmoid"),
    "resnext_style": resnext_style,
    "deeplabv3_style": deeplabv3_style,
    "convnext_style": convnext_style,
    "vit_style": vit_style,
    "llama_style": llama_style,
    "wav2vec2_style": wav2vec2_style,
}


FREE_IMAGE = {"mobilenetv2_style": 224, "resnext_style": 160, "deeplabv3_style": 256}
"""CNN families also measured as detectors, segmenters and OCR models are exported: the image's
height and width symbolic (`NAME_free_hw`), compiled without --shape, run at the static size
(its side here)."""


def free_image(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with its image input's height and width symbolic ("height", "width"), its
    outputs' spatial dims unknown (the shapes ONNX's inference left behind dropped)."""
    free = onnx.ModelProto()
    free.CopyFrom(model)
    free.graph.name += "_free_hw"
    del free.graph.value_info[:]
    dims = free.graph.input[0].type.tensor_type.shape.dim
    for axis, name in ((2, "height"), (3, "width")):
        dims[axis].Clear()
        dims[axis].dim_param = name
    for output in free.graph.output:  # a segmentation map's height and width follow the image's
        for dim in output.type.tensor_type.shape.dim[2:]:
            dim.Clear()
    return free


FAMILIES.update({f"{name}_free_hw": (lambda name=name: free_image(FAMILIES[name]())) for name in FREE_IMAGE})
