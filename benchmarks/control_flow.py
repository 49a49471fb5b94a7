"""A Loop decided at run time against onnxruntime: `python benchmarks/control_flow.py [--repeat N]`.

The model applies a recurrent cell, h <- tanh(h @ W + b) with h of 1 x 64, n
times, n a graph input: one library runs every n as a real loop
(onnx_to_krnl/control_flow.py). Timed in turn with onnxruntime at one thread
(benchmarks/run.py's `_interleaved`, medians) for n = 1, 100 and 10,000;
outputs must match within 1e-4 of max|ref|.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).parent))
from run import _interleaved, _ort_session

import onnxc

WIDTH = 64


def cell_loop() -> onnx.ModelProto:
    def info(name, elem, shape):
        return helper.make_tensor_value_info(name, elem, shape)

    row = [1, WIDTH]
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["h", "W"], ["hw"]),
            helper.make_node("Add", ["hw", "b"], ["pre"]),
            helper.make_node("Tanh", ["pre"], ["h_next"]),
            helper.make_node("Identity", ["go"], ["go_next"]),
        ],
        "cell",
        [info("i", TensorProto.INT64, []), info("go", TensorProto.BOOL, []), info("h", TensorProto.FLOAT, row)],
        [info("go_next", TensorProto.BOOL, []), info("h_next", TensorProto.FLOAT, row)],
    )
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array((rng.standard_normal((WIDTH, WIDTH)) * 0.1).astype(np.float32), "W"),
        numpy_helper.from_array((rng.standard_normal(WIDTH) * 0.1).astype(np.float32), "b"),
    ]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "h0"], ["h"], body=body)],
        "cell_loop",
        [info("n", TensorProto.INT64, []), info("h0", TensorProto.FLOAT, row)],
        [info("h", TensorProto.FLOAT, row)],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    model = cell_loop()
    with tempfile.TemporaryDirectory() as tmp:
        session = onnxc.Session(onnxc.compile(model, Path(tmp) / "cell_loop.so"), threads=1)
        reference = _ort_session(model.SerializeToString(), 1)
        h0 = np.random.default_rng(1).standard_normal((1, WIDTH)).astype(np.float32)
        print("| n | onnxc ms | onnxruntime ms | onnxc/onnxruntime |\n| --- | --- | --- | --- |")
        for n in (1, 100, 10_000):
            feeds = {"n": np.array(n, np.int64), "h0": h0}
            (got,), (want,) = session.run(None, feeds), reference.run(None, feeds)
            np.testing.assert_allclose(got, want, atol=1e-4 * float(np.max(np.abs(want))))
            times = _interleaved(
                {"onnxc": lambda f=feeds: session.run(None, f), "ort": lambda f=feeds: reference.run(None, f)},
                args.repeat,
            )
            print(f"| {n} | {times['onnxc']:.4f} | {times['ort']:.4f} | {times['onnxc'] / times['ort']:.2f} |")


if __name__ == "__main__":
    main()
