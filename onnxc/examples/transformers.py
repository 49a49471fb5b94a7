"""A GPT-2-style decoder block written as torch's exporter writes it, with batch and
sequence dynamic: the tests' and benchmarks' model of a causal language model.

Position ids come from Range over the run-time sequence length, the causal mask
is sliced from a constant [1, 1, P, P] by that length and applied with Where,
heads are split by Shape -> Concat -> Reshape, the MLP has tanh GELU with Pow,
and the logits are tied to the token embedding.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def gpt2_style(
    vocab: int = 50, hidden: int = 16, heads: int = 2, max_positions: int = 32, seed: int = 1
) -> onnx.ModelProto:
    """The decoder block (see above) of input ids [batch, sequence], sequence at most
    `max_positions`, output logits [batch, sequence, vocab]; weights drawn from `seed`."""
    rng = np.random.default_rng(seed)

    def weight(name, *shape):
        return nh.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    def ints(name, values):
        return nh.from_array(np.array(values, np.int64), name)

    head = hidden // heads
    causal = np.tril(np.ones((max_positions, max_positions), bool)).reshape(1, 1, max_positions, max_positions)
    initializers = [
        weight("wte", vocab, hidden), weight("wpe", max_positions, hidden),
        weight("ln_s", hidden), weight("ln_b", hidden), weight("w_qkv", hidden, 3 * hidden), weight("b_qkv", 3 * hidden),
        weight("w_o", hidden, hidden), weight("b_o", hidden), weight("w_up", hidden, 4 * hidden), weight("b_up", 4 * hidden),
        weight("w_down", 4 * hidden, hidden), weight("b_down", hidden), nh.from_array(causal, "causal"),
        ints("i0", 0), ints("i1", 1), ints("zero", [0]), ints("one", 1), ints("axes23", [2, 3]), ints("axis0", [0]),
        ints("split", [hidden] * 3), ints("tail", [heads, head]), ints("hidden", [hidden]),
        nh.from_array(np.array(head**-0.5, np.float32), "scale"), nh.from_array(np.array(-1e9, np.float32), "masked"),
        nh.from_array(np.array(3.0, np.float32), "three"), nh.from_array(np.array(0.044715, np.float32), "c"),
        nh.from_array(np.array(np.sqrt(2 / np.pi), np.float32), "gelu_k"), nh.from_array(np.array(0.5, np.float32), "half"),
        nh.from_array(np.array(1.0, np.float32), "unit"), weight("wte_t", hidden, vocab),
    ]  # fmt: skip
    nodes = [
        h.make_node("Shape", ["ids"], ["ids_shape"]),
        h.make_node("Gather", ["ids_shape", "i0"], ["batch"], axis=0),
        h.make_node("Gather", ["ids_shape", "i1"], ["seq"], axis=0),
        h.make_node("Range", ["i0", "seq", "one"], ["positions"]),
        h.make_node("Unsqueeze", ["positions", "axis0"], ["positions2"]),
        h.make_node("Gather", ["wte", "ids"], ["tokens"]),
        h.make_node("Gather", ["wpe", "positions2"], ["places"]),
        h.make_node("Add", ["tokens", "places"], ["x0"]),
        h.make_node("LayerNormalization", ["x0", "ln_s", "ln_b"], ["x1"], axis=-1),
        h.make_node("MatMul", ["x1", "w_qkv"], ["qkv0"]),
        h.make_node("Add", ["qkv0", "b_qkv"], ["qkv"]),
        h.make_node("Split", ["qkv", "split"], ["q", "k", "v"], axis=2),
        h.make_node("Unsqueeze", ["batch", "axis0"], ["batch1"]),
        h.make_node("Unsqueeze", ["seq", "axis0"], ["seq1"]),
        h.make_node("Concat", ["batch1", "seq1", "tail"], ["heads_shape"], axis=0),
        *[h.make_node("Reshape", [t, "heads_shape"], [f"{t}4"]) for t in "qkv"],
        h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        h.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
        h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        h.make_node("MatMul", ["qh", "kh"], ["scores0"]),
        h.make_node("Mul", ["scores0", "scale"], ["scores1"]),
        h.make_node("Concat", ["seq1", "seq1"], ["mask_end"], axis=0),
        h.make_node("Slice", ["causal", "zero2", "mask_end", "axes23"], ["mask"]),
        h.make_node("Where", ["mask", "scores1", "masked"], ["scores"]),
        h.make_node("Softmax", ["scores"], ["probs"], axis=-1),
        h.make_node("MatMul", ["probs", "vh"], ["context0"]),
        h.make_node("Transpose", ["context0"], ["context1"], perm=[0, 2, 1, 3]),
        h.make_node("Concat", ["batch1", "seq1", "hidden"], ["merged_shape"], axis=0),
        h.make_node("Reshape", ["context1", "merged_shape"], ["context"]),
        h.make_node("MatMul", ["context", "w_o"], ["attn0"]),
        h.make_node("Add", ["attn0", "b_o"], ["attn"]),
        h.make_node("Add", ["x0", "attn"], ["x2"]),
        h.make_node("MatMul", ["x2", "w_up"], ["up0"]),
        h.make_node("Add", ["up0", "b_up"], ["up"]),
        h.make_node("Pow", ["up", "three"], ["cube"]),
        h.make_node("Mul", ["cube", "c"], ["cube_c"]),
        h.make_node("Add", ["up", "cube_c"], ["inner0"]),
        h.make_node("Mul", ["inner0", "gelu_k"], ["inner"]),
        h.make_node("Tanh", ["inner"], ["t"]),
        h.make_node("Add", ["t", "unit"], ["t1"]),
        h.make_node("Mul", ["up", "half"], ["half_up"]),
        h.make_node("Mul", ["half_up", "t1"], ["gelu"]),
        h.make_node("MatMul", ["gelu", "w_down"], ["down0"]),
        h.make_node("Add", ["down0", "b_down"], ["down"]),
        h.make_node("Add", ["x2", "down"], ["x3"]),
        h.make_node("MatMul", ["x3", "wte_t"], ["logits"]),
    ]
    initializers.append(ints("zero2", [0, 0]))
    graph = h.make_graph(
        nodes,
        "gpt2_style",
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "sequence"])],
        [h.make_tensor_value_info("logits", T.FLOAT, ["batch", "sequence", vocab])],
        initializers,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def t5_style_encoder(
    vocab: int = 50, hidden: int = 16, heads: int = 2, buckets: int = 8, seed: int = 2
) -> onnx.ModelProto:
    """A T5-style encoder block of input ids [batch, sequence] as torch exports it: the
    relative position bias computed from Range over the run-time length (bucketed by
    Abs/Less/Log/Cast/Min/Where, looked up with Gather), RMS layer norms written as
    Pow -> ReduceMean -> Sqrt -> Div, no biases, a ReLU MLP; output [batch, sequence, hidden]."""
    rng = np.random.default_rng(seed)
    head = hidden // heads

    def weight(name, *shape):
        return nh.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    def scalar(name, value, dtype=np.float32):
        return nh.from_array(np.array(value, dtype), name)

    exact = buckets // 2
    initializers = [
        weight("embed", vocab, hidden), weight("norm1", hidden), weight("norm2", hidden),
        weight("wq", hidden, hidden), weight("wk", hidden, hidden), weight("wv", hidden, hidden),
        weight("wo", hidden, hidden), weight("wi", hidden, 4 * hidden), weight("wf", 4 * hidden, hidden),
        weight("bias_table", buckets, heads),
        scalar("two", 2.0), scalar("eps", 1e-6), scalar("i0", 0, np.int64), scalar("i1", 1, np.int64),
        scalar("exact", exact, np.int64), scalar("exact_f", float(exact)), scalar("last", buckets - 1, np.int64),
        scalar("log_scale", (buckets - exact) / np.log(32 / exact)),
        nh.from_array(np.array([-1], np.int64), "minus1"), nh.from_array(np.array([0], np.int64), "axis0"),
        nh.from_array(np.array([1], np.int64), "axis1"), nh.from_array(np.array([heads, head], np.int64), "split"),
        nh.from_array(np.array([hidden], np.int64), "merged"),
    ]  # fmt: skip

    def rms_norm(x: str, scale: str, out: str) -> list[onnx.NodeProto]:
        return [
            h.make_node("Pow", [x, "two"], [f"{out}.sq"]),
            h.make_node("ReduceMean", [f"{out}.sq", "minus1"], [f"{out}.ms"], keepdims=1),
            h.make_node("Add", [f"{out}.ms", "eps"], [f"{out}.mse"]),
            h.make_node("Sqrt", [f"{out}.mse"], [f"{out}.rms"]),
            h.make_node("Div", [x, f"{out}.rms"], [f"{out}.n"]),
            h.make_node("Mul", [f"{out}.n", scale], [out]),
        ]

    nodes = [
        h.make_node("Gather", ["embed", "ids"], ["x0"]),
        h.make_node("Shape", ["ids"], ["ids_shape"]),
        h.make_node("Gather", ["ids_shape", "i0"], ["batch"], axis=0),
        h.make_node("Gather", ["ids_shape", "i1"], ["seq"], axis=0),
        h.make_node("Range", ["i0", "seq", "i1"], ["pos"]),
        h.make_node("Unsqueeze", ["pos", "axis1"], ["context"]),
        h.make_node("Unsqueeze", ["pos", "axis0"], ["memory"]),
        h.make_node("Sub", ["memory", "context"], ["relative"]),
        h.make_node("Abs", ["relative"], ["distance"]),
        h.make_node("Less", ["distance", "exact"], ["is_small"]),
        h.make_node("Cast", ["distance"], ["distance_f"], to=T.FLOAT),
        h.make_node("Div", ["distance_f", "exact_f"], ["ratio"]),
        h.make_node("Log", ["ratio"], ["log_ratio"]),
        h.make_node("Mul", ["log_ratio", "log_scale"], ["scaled"]),
        h.make_node("Cast", ["scaled"], ["scaled_i"], to=T.INT64),
        h.make_node("Add", ["scaled_i", "exact"], ["large0"]),
        h.make_node("Min", ["large0", "last"], ["large"]),
        h.make_node("Where", ["is_small", "distance", "large"], ["bucket"]),
        h.make_node("Gather", ["bias_table", "bucket"], ["bias0"]),
        h.make_node("Transpose", ["bias0"], ["bias1"], perm=[2, 0, 1]),
        h.make_node("Unsqueeze", ["bias1", "axis0"], ["position_bias"]),
        *rms_norm("x0", "norm1", "h1"),
        h.make_node("Unsqueeze", ["batch", "axis0"], ["batch1"]),
        h.make_node("Unsqueeze", ["seq", "axis0"], ["seq1"]),
        h.make_node("Concat", ["batch1", "seq1", "split"], ["heads_shape"], axis=0),
        *[h.make_node("MatMul", ["h1", f"w{t}"], [f"{t}0"]) for t in "qkv"],
        *[h.make_node("Reshape", [f"{t}0", "heads_shape"], [f"{t}4"]) for t in "qkv"],
        h.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        h.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
        h.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        h.make_node("MatMul", ["qh", "kh"], ["scores0"]),
        h.make_node("Add", ["scores0", "position_bias"], ["scores"]),
        h.make_node("Softmax", ["scores"], ["probs"], axis=-1),
        h.make_node("MatMul", ["probs", "vh"], ["context0"]),
        h.make_node("Transpose", ["context0"], ["context1"], perm=[0, 2, 1, 3]),
        h.make_node("Concat", ["batch1", "seq1", "merged"], ["merged_shape"], axis=0),
        h.make_node("Reshape", ["context1", "merged_shape"], ["attended"]),
        h.make_node("MatMul", ["attended", "wo"], ["attn"]),
        h.make_node("Add", ["x0", "attn"], ["x1"]),
        *rms_norm("x1", "norm2", "h2"),
        h.make_node("MatMul", ["h2", "wi"], ["up"]),
        h.make_node("Relu", ["up"], ["act"]),
        h.make_node("MatMul", ["act", "wf"], ["down"]),
        h.make_node("Add", ["x1", "down"], ["y"]),
    ]
    graph = h.make_graph(
        nodes,
        "t5_style",
        [h.make_tensor_value_info("ids", T.INT64, ["batch", "sequence"])],
        [h.make_tensor_value_info("y", T.FLOAT, ["batch", "sequence", hidden])],
        initializers,
    )
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
