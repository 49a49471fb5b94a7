"""Loop and Scan decided at run time against onnxruntime: `python benchmarks/control_flow.py [--repeat N]`.

The Loop applies a recurrent cell, h <- tanh(h @ W + b) with h of 1 x 64, n
times, n a graph input, then again stacking every h (a scan output whose rows
grow in a heap buffer, doubled when full); the Scan, an LSTM-style step h <- tanh(h @ W + x_t @ U + b),
runs over a sequence of T steps, T known at run time, stacking every h. One
library per model runs every n or T as a real loop (onnx_to_krnl/control_flow.py).
Timed in turn with onnxruntime at one thread (benchmarks/run.py's `_interleaved`,
medians) for n, T = 1, 100 and 10,000 (the Scan's 1,000 too); outputs must
match within 1e-4 of max|ref|. The compile time of each library is printed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).parent))
from run import _interleaved, _ort_session

import onnxc

WIDTH = 64


def info(name: str, elem: int, shape: list) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def cell_loop(collect: bool = False) -> onnx.ModelProto:
    """The cell applied n times; `collect`: every h stacked too (a scan output under a
    run-time trip count, its rows growing in a buffer doubled when full)."""
    row = [1, WIDTH]
    nodes = [
        helper.make_node("MatMul", ["h", "W"], ["hw"]),
        helper.make_node("Add", ["hw", "b"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_next"]),
        helper.make_node("Identity", ["go"], ["go_next"]),
    ]
    outputs = [info("go_next", TensorProto.BOOL, []), info("h_next", TensorProto.FLOAT, row)]
    if collect:
        nodes.append(helper.make_node("Identity", ["h_next"], ["h_row"]))
        outputs.append(info("h_row", TensorProto.FLOAT, row))
    body = helper.make_graph(
        nodes,
        "cell",
        [info("i", TensorProto.INT64, []), info("go", TensorProto.BOOL, []), info("h", TensorProto.FLOAT, row)],
        outputs,
    )
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array((rng.standard_normal((WIDTH, WIDTH)) * 0.1).astype(np.float32), "W"),
        numpy_helper.from_array((rng.standard_normal(WIDTH) * 0.1).astype(np.float32), "b"),
    ]
    results = [info("h", TensorProto.FLOAT, row)] + ([info("hs", TensorProto.FLOAT, ["n", *row])] if collect else [])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "h0"], [r.name for r in results], body=body)],
        "cell_loop_collect" if collect else "cell_loop",
        [info("n", TensorProto.INT64, []), info("h0", TensorProto.FLOAT, row)],
        results,
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def cell_scan() -> onnx.ModelProto:
    row = [1, WIDTH]
    body = helper.make_graph(
        [
            helper.make_node("MatMul", ["h", "W"], ["hw"]),
            helper.make_node("MatMul", ["x", "U"], ["xu"]),
            helper.make_node("Add", ["hw", "xu"], ["sum"]),
            helper.make_node("Add", ["sum", "b"], ["pre"]),
            helper.make_node("Tanh", ["pre"], ["h_next"]),
            helper.make_node("Identity", ["h_next"], ["out"]),
        ],
        "cell",
        [info("h", TensorProto.FLOAT, row), info("x", TensorProto.FLOAT, row)],
        [info("h_next", TensorProto.FLOAT, row), info("out", TensorProto.FLOAT, row)],
    )
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array((rng.standard_normal((WIDTH, WIDTH)) * 0.1).astype(np.float32), name)
        for name in ("W", "U")
    ] + [numpy_helper.from_array((rng.standard_normal(WIDTH) * 0.1).astype(np.float32), "b")]
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "xs"], ["h", "hs"], body=body, num_scan_inputs=1)],
        "cell_scan",
        [info("h0", TensorProto.FLOAT, row), info("xs", TensorProto.FLOAT, ["T", *row])],
        [info("h", TensorProto.FLOAT, row), info("hs", TensorProto.FLOAT, ["T", *row])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _compare(model: onnx.ModelProto, feeds_by_size: dict, tmp: Path, repeat: int) -> None:
    """Compile `model` once, then per size: check the outputs and print a table row."""
    started = time.perf_counter()
    session = onnxc.Session(onnxc.compile(model, tmp / f"{model.graph.name}.so"), threads=1)
    print(f"{model.graph.name}: compiled in {time.perf_counter() - started:.2f} s\n")
    reference = _ort_session(model.SerializeToString(), 1)
    print("| n | onnxc ms | onnxruntime ms | onnxc/onnxruntime |\n| --- | --- | --- | --- |")
    for size, feeds in feeds_by_size.items():
        for got, want in zip(session.run(None, feeds), reference.run(None, feeds)):
            np.testing.assert_allclose(got, want, atol=1e-4 * float(np.max(np.abs(want))))
        times = _interleaved(
            {"onnxc": lambda f=feeds: session.run(None, f), "ort": lambda f=feeds: reference.run(None, f)}, repeat
        )
        print(f"| {size} | {times['onnxc']:.4f} | {times['ort']:.4f} | {times['onnxc'] / times['ort']:.2f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    h0 = rng.standard_normal((1, WIDTH)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        loops = {n: {"n": np.array(n, np.int64), "h0": h0} for n in (1, 100, 10_000)}
        _compare(cell_loop(), loops, Path(tmp), args.repeat)
        _compare(cell_loop(collect=True), loops, Path(tmp), args.repeat)
        scans = {
            t: {"h0": h0, "xs": rng.standard_normal((t, 1, WIDTH)).astype(np.float32)} for t in (1, 100, 1000, 10_000)
        }
        _compare(cell_scan(), scans, Path(tmp), args.repeat)


if __name__ == "__main__":
    main()
