"""Throughput of Exp, Tanh, Sigmoid and Softmax with vector_math's inlined polynomials vs libm calls:
`python benchmarks/vector_math.py [--repeat N]`.

"libm" recompiles the same models with math.exp/log/tanh/erf emitted as they
were before onnxc/codegen/vector_math.py existed (scalar `expf`/`tanhf` calls),
by emptying emit_arith.py's table of vector-math ops in this process.
onnxruntime is timed beside them for scale. One thread.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

import onnxc
from onnxc.codegen import emit_arith
from onnxc.runtime import Session

SHAPE = [256, 4096]


def _model(op_type: str) -> onnx.ModelProto:
    attributes = {"axis": 1} if op_type == "Softmax" else {}
    graph = helper.make_graph(
        [helper.make_node(op_type, ["x"], ["y"], **attributes)],
        op_type.lower(),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _median_ms(run, repeat: int) -> float:
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    x = {"x": np.random.default_rng(0).uniform(-10, 10, SHAPE).astype(np.float32)}
    elements = int(np.prod(SHAPE))
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for variant in ("vector_math", "libm"):
            if variant == "libm":
                emit_arith._VECTOR_MATH_OPS = {}
                emit_arith._register_table_emitters()
            for op_type in ("Exp", "Tanh", "Sigmoid", "Softmax"):
                library = onnxc.compile(_model(op_type), Path(work) / f"{op_type}-{variant}.so")
                session = Session(library, threads=1)
                results[op_type, variant] = _median_ms(lambda: session.run(None, x), args.repeat)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        for op_type in ("Exp", "Tanh", "Sigmoid", "Softmax"):
            session = ort.InferenceSession(_model(op_type).SerializeToString(), options)
            results[op_type, "ort"] = _median_ms(lambda: session.run(None, x), args.repeat)
    print(f"{SHAPE[0]}x{SHAPE[1]} float32, 1 thread, median of {args.repeat} runs (Gelem/s = 1e9 elements per s)\n")
    print("| op | libm ms | vector_math ms | speedup | vector_math Gelem/s | onnxruntime ms |")
    print("|----|--------:|---------------:|--------:|--------------------:|---------------:|")
    for op_type in ("Exp", "Tanh", "Sigmoid", "Softmax"):
        before, after, ort_ms = (results[op_type, v] for v in ("libm", "vector_math", "ort"))
        print(f"| {op_type} | {before:.2f} | {after:.2f} | {before / after:.1f}x | {elements / after / 1e6:.2f} | "
              f"{ort_ms:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
