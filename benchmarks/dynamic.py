"""One library for every shape against one per shape: `python benchmarks/dynamic.py [--repeat N] [--threads T]`.

Each model is compiled twice from one .onnx file with symbolic dims: as exported
(the dims bound at run time) and pinned to the measured shape with `--shape`
(what a library for one shape costs). Both run the same inputs at that shape,
timed in turn with onnxruntime (benchmarks/run.py's `_interleaved`: samples
A B C A B C..., medians), at one thread by default. Reported: dynamic/pinned
(the price of generality, the dynamic-shapes issue asks <= 1.05) and
pinned/onnxruntime. Outputs must match onnxruntime within 1e-4 of max|ref|.

Models: a BERT encoder layer (seq 128, hidden 256; batch x seq symbolic, the
reshapes computed from Shape as torch writes them), a GPT-2-style decoder block
(hidden 256, 64 tokens, causal mask sliced by the run-time length), a T5-style
encoder block (hidden 256, 128 tokens, relative position buckets computed over
the run-time length), ResNet-50, SqueezeNet and a MobileNetV2-style net
(benchmarks/families.py) with a symbolic batch (compiled as a batch loop), an
EfficientNet-style net with free batch, height and width (a detector backbone:
every dim read at run time), and the wav2vec2-style audio encoder with a
symbolic number of samples. When benchmarks/torch_exports holds the full-size torch exports
(models.TORCH), their rows come first.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).parent))
import families  # noqa: E402
import models  # noqa: E402
from run import _interleaved, _ort_session  # noqa: E402

import onnxc  # noqa: E402
from onnxc.examples.transformers import gpt2_style, t5_style_encoder  # noqa: E402


def _symbolic_batch(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with the leading dim of its inputs (not initializers) and outputs named N.
    These opset-9 models flatten with a constant Reshape shape [1, C]: made [-1, C], as a
    batch-generic export writes it (with 1, no batch but 1 would run, in any engine)."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    reshape_shapes = {node.input[1] for node in model.graph.node if node.op_type == "Reshape"}
    for tensor in model.graph.initializer:
        if tensor.name in reshape_shapes:
            shape = onnx.numpy_helper.to_array(tensor).copy()
            if shape.ndim == 1 and shape.size > 1 and shape[0] == 1:
                shape[0] = -1
                tensor.CopyFrom(onnx.numpy_helper.from_array(shape, tensor.name))
    for value in [*model.graph.input, *model.graph.output]:
        dims = value.type.tensor_type.shape.dim
        if value.name not in initializers and dims:  # an output without a shape gets it from inference
            dims[0].dim_param = "N"
    return model


def _free_image(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its image input's batch, height and width symbolic (and the
    static intermediate shapes of ONNX's inference dropped)."""
    del model.graph.value_info[:]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for axis, name in ((0, "N"), (2, "H"), (3, "W")):
        dims[axis].dim_param = name
    return model


def _cases() -> dict:
    """name -> (model, symbol bindings of the measured shape)."""
    exported = {
        f"{name} ({', '.join(bindings)})": (models.load(name), bindings)
        for name in models.TORCH
        for bindings in [models.TORCH_SHAPES[name.removeprefix("torch_")]]
    }
    return {
        **exported,
        "bert (batch x seq)": (models.bert_encoder(dynamic=True), {"batch": 1, "seq": 128}),
        "gpt2-style (batch x seq)": (
            gpt2_style(vocab=1000, hidden=256, heads=4, max_positions=128),
            {"batch": 1, "sequence": 64},
        ),
        "t5-style encoder (batch x seq)": (
            t5_style_encoder(vocab=1000, hidden=256, heads=4, buckets=32),
            {"batch": 1, "sequence": 128},
        ),
        **{f"{name} (batch)": (_symbolic_batch(models.load(name)), {"N": 1}) for name in ("resnet50", "squeezenet")},
        "mobilenetv2-style (batch)": (_symbolic_batch(families.FAMILIES["mobilenetv2_style"]()), {"N": 1}),
        "efficientnet-style (batch, H, W)": (
            _free_image(families.FAMILIES["efficientnet_style"]()),
            {"N": 1, "H": 224, "W": 224},
        ),
        "wav2vec2-style (samples)": (families.wav2vec2_style(samples="samples"), {"samples": 16000}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("-k", "--filter", default="", help="only models whose name contains this")
    parser.add_argument(
        "--min", action="store_true", help="minimums instead of medians (steadier on a machine other jobs load)"
    )
    args = parser.parse_args()
    print("| model | dynamic ms | pinned ms | onnxruntime ms | dynamic/pinned | pinned/onnxruntime |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as directory:
        for name, (model, bindings) in _cases().items():
            if args.filter not in name:
                continue
            path = Path(directory) / "model.onnx"
            onnx.save(model, path)
            dynamic = onnxc.compile(str(path), Path(directory) / "dynamic.so")
            pinned = onnxc.compile(
                str(path), Path(directory) / "pinned.so", shapes={k: [v] for k, v in bindings.items()}
            )
            engines = {
                "dynamic": onnxc.Session(dynamic, threads=args.threads),
                "pinned": onnxc.Session(pinned, threads=args.threads),
                "ort": _ort_session(str(path), args.threads),
            }
            feed = models.feed(engines["ort"].get_inputs(), np.random.default_rng(0), bindings)
            want = engines["ort"].run(None, feed)[0]
            for engine in ("dynamic", "pinned"):
                got = engines[engine].run(None, feed)[0]
                error = float(np.abs(got - want).max() / max(float(np.abs(want).max()), 1e-30))
                assert error <= 1e-4, f"{name}: {engine} differs from onnxruntime by {error:.2e} of max|ref|"
            runs = {k: functools.partial(e.run, None, feed) for k, e in engines.items()}
            ms = _interleaved(runs, args.repeat, min if args.min else statistics.median)
            print(
                f"| {name} | {ms['dynamic']:.2f} | {ms['pinned']:.2f} | {ms['ort']:.2f} "
                f"| {ms['dynamic'] / ms['pinned']:.2f} | {ms['pinned'] / ms['ort']:.2f} |",
                flush=True,
            )
            del engines
    return 0


if __name__ == "__main__":
    sys.exit(main())
