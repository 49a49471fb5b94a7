"""int8 models against onnxruntime's int8 and onnxc's float32 build, one thread.

The models of onnxc/examples/quantized.py at a channel multiplier (`--width`; 16 gives
ResNet-18-like 256-512 channel stages, MobileNetV2-like 128-1024, a BERT-base-wide 512
hidden), and float models of your own (`--onnx`, float inputs; symbolic dims pinned to 1),
quantized by onnxruntime.quantization (static QDQ and QOperator, dynamic); each engine
timed in turn (the median of `--repeat` alternating samples of several runs each).

    python benchmarks/int8.py --width 16 --repeat 5
    python benchmarks/int8.py --models none --onnx benchmarks/torch_exports/resnet50.onnx --formats qdq
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

import onnxc
from onnxc.examples import quantized


def _timed(runs: dict, repeat: int, per_sample: int = 20) -> dict:
    samples = {name: [] for name in runs}
    for run in runs.values():
        run()
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            for _ in range(per_sample):
                run()
            samples[name].append((time.perf_counter() - start) / per_sample * 1e3)
    return {name: statistics.median(values) for name, values in samples.items()}


def _ort(model: onnx.ModelProto):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _pinned(path: str) -> onnx.ModelProto:
    """The float model at `path` with every symbolic input dim set to 1, shapes inferred."""
    model = onnx.load(path)
    for value in model.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if not dim.HasField("dim_value"):
                dim.dim_value = 1
    return onnx.shape_inference.infer_shapes(model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="resnet,mobilenet,bert,lstm", help="built-in models, or 'none'")
    parser.add_argument("--onnx", default="", help="comma-separated float .onnx models with float inputs")
    parser.add_argument("--formats", default="qdq,qoperator,dynamic")
    parser.add_argument("--width", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    builders = {name: quantized.BUILDERS[name] for name in args.models.split(",") if name != "none"}
    for path in filter(None, args.onnx.split(",")):
        builders[Path(path).stem] = lambda width, path=path: _pinned(path)
    print(
        "| model | format | onnxc int8 ms | ORT int8 ms | onnxc float32 ms | int8/ORT int8 | int8/float32 | argmax "
        "| max abs diff |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios = {"ort": [], "float": []}
    with tempfile.TemporaryDirectory() as folder:
        for name, build in builders.items():
            base = build(args.width)
            feeds = quantized.random_inputs(base, 1)
            float_session = onnxc.Session(onnxc.compile(base, Path(folder) / f"{name}.so"), threads=1)
            for quant_format in args.formats.split(","):
                model = quantized.quantize(base, quant_format)
                try:
                    library = onnxc.compile(model, Path(folder) / f"{name}-{quant_format}.so")
                except onnxc.errors.OnnxcError as error:
                    print(f"| {name} | {quant_format} | fails: {str(error)[:80]} | | | | | | |")
                    continue
                session, reference = onnxc.Session(library, threads=1), _ort(model)
                actual, expected = session.run(None, feeds)[0], reference.run(None, feeds)[0]
                same = np.array_equal(actual.argmax(-1), expected.argmax(-1))
                times = _timed(
                    {
                        "int8": lambda: session.run(None, feeds),
                        "ort": lambda: reference.run(None, feeds),
                        "float": lambda: float_session.run(None, feeds),
                    },
                    args.repeat,
                )
                ratios["ort"].append(times["int8"] / times["ort"])
                ratios["float"].append(times["int8"] / times["float"])
                print(
                    f"| {name} | {quant_format} | {times['int8']:.3f} | {times['ort']:.3f} | {times['float']:.3f} | "
                    f"{ratios['ort'][-1]:.2f} | {ratios['float'][-1]:.2f} | {'yes' if same else 'no'} | "
                    f"{np.abs(actual - expected).max():.3g} |"
                )
    geomean = {k: float(np.exp(np.mean(np.log(v)))) for k, v in ratios.items() if v}
    print(f"\ngeomean: int8/ORT int8 {geomean.get('ort', 0):.2f}, int8/float32 {geomean.get('float', 0):.2f}")


if __name__ == "__main__":
    main()
