"""The thread pool of compiled libraries (runtime/support/onnxc_parallel.c, onnxc/codegen/parallel.py).

Which loops are split, that outputs do not depend on the thread count, that
concurrent runs of one session stay correct, how the thread count is chosen,
and that foreign targets still link with the pool.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import scf
from xdsl.parser import Parser

from onnxc.codegen.parallel import MIN_PARALLEL_WORK, parallel_loop
from onnxc.compiler import compile
from onnxc.dialects import make_context
from onnxc.runtime import Session


def _model() -> onnx.ModelProto:
    """A 3x3 Conv (its padded image read in place) and a 1x1 Conv (B packed per thread), both
    split over column tiles, then Relu, Softmax (split over rows): big enough to be parallel."""
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2, "w")
    pointwise = numpy_helper.from_array(rng.standard_normal((16, 16, 1, 1)).astype(np.float32) * 0.2, "w1")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["c3", "w1"], ["c"]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Reshape", ["r", "rows"], ["m"]),
        helper.make_node("Softmax", ["m"], ["y"], axis=1),
    ]
    rows = numpy_helper.from_array(np.array([16, 64 * 64], np.int64), "rows")
    graph = helper.make_graph(
        nodes,
        "threads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 64 * 64])],
        [weight, pointwise, rows],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    directory = tmp_path_factory.mktemp("threads")
    model = _model()
    onnx.save(model, directory / "model.onnx")
    compile(model, directory / "model.ll", emit="llvm")
    return compile(model, directory / "model.so"), (directory / "model.ll").read_text()


@pytest.fixture(scope="module")
def inputs():
    return {"x": np.random.default_rng(1).standard_normal((1, 8, 64, 64)).astype(np.float32)}


def test_nests_call_the_pool(library):
    _, text = library
    assert text.count("call void @onnxc_parallel_for(") >= 2


def test_gemm_kernel_calls_the_pool(library):
    """The Conv (with its Relu) is a krnl.matmul whose tiles the threads share, each
    packing its part of B into its own scratch (one pool job per product)."""
    _, text = library
    assert re.search(r"call void @onnxc_parallel_for\(ptr [^,]*@main_graph\.nest\d+\.gemm\.slice,", text)
    assert "call ptr @onnxc_thread_scratch()" in text
    assert re.search(r"call i32 @onnxc_reserve_scratch\(i64 \d+\)", text)


# Split by row tiles, by column tiles; grids whose lines do not divide among 2-8 threads (a
# range starting or ending inside a line: tile_grid.py), with M known at run time only.
@pytest.mark.parametrize(
    "m, n, rows_at_run_time",
    [(256, 40, False), (20, 700, False), (20, 1500, False), (72, 224, False), (84, 200, False), (76, 230, True)],
)
def test_gemm_tiles_split_either_way(tmp_path, m, n, rows_at_run_time):
    """A product's grid of tiles on 1-8 threads: results identical to one thread's."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((m, 64)).astype(np.float32), rng.standard_normal((64, n)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"])],
        "product",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, ["m" if rows_at_run_time else m, 64]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, b.shape),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m" if rows_at_run_time else m, n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = compile(model, tmp_path / "model.so")
    outputs = [Session(path, threads=threads).run(None, {"a": a, "b": b})[0] for threads in (1, 2, 3, 4, 5, 8)]
    for output in outputs[1:]:
        np.testing.assert_array_equal(outputs[0], output)
    np.testing.assert_allclose(outputs[0], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("out_channels, by_columns", [(64, True), (256, False)])
def test_gemm_of_im2col_splits_columns(tmp_path, out_channels, by_columns):
    """A strided conv's B is im2col's, gathered at run time: with 64 output channels the threads
    split its 2 column tiles (8x8 outputs) rather than its 6 row tiles, each gathering only its
    columns' (by rows each gathered all of B); with 256, A (its 22 row tiles) is the bigger
    read, and they split rows. Results on 1-3 threads identical."""
    from onnxc.codegen import resolve_target
    from onnxc.codegen.gemm_plan import MatmulPlan
    from onnxc.dialects.krnl_matmul import MatmulOp

    rng = np.random.default_rng(3)
    weights = numpy_helper.from_array(rng.standard_normal((out_channels, 64, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
        "strided",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, out_channels, 8, 8])],
        [weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    loops = compile(model, tmp_path / "model.loops.mlir", emit="loops").read_text()
    (op,) = [op for op in Parser(make_context(), loops).parse_module().walk() if isinstance(op, MatmulOp)]
    plan = MatmulPlan.of(op, resolve_target(None))
    assert plan.im2col and plan.row_tiles > plan.column_tiles > 1 and plan.split_rows != by_columns
    path = compile(model, tmp_path / "model.so")
    x = {"x": rng.standard_normal((1, 64, 16, 16)).astype(np.float32)}
    outputs = [Session(path, threads=threads).run(None, x)[0] for threads in (1, 2, 3)]
    for output in outputs[1:]:
        np.testing.assert_array_equal(outputs[0], output)


def test_gemm_of_run_time_columns_splits_either_way(tmp_path):
    """A 1x1 conv over an image of run-time size: its tiles numbered row tile first at 7x7 (8 row
    tiles, 2 column tiles), column tile first at 40x40 (50), decided at run time. Results on
    1-3 threads identical, as numpy's."""
    rng = np.random.default_rng(4)
    weights = rng.standard_normal((96, 64)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"])],
        "free",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, "height", "width"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights.reshape(96, 64, 1, 1), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = compile(model, tmp_path / "model.so")
    for side in (7, 40):
        x = {"x": rng.standard_normal((1, 64, side, side)).astype(np.float32)}
        outputs = [Session(path, threads=threads).run(None, x)[0] for threads in (1, 2, 3)]
        for output in outputs[1:]:
            np.testing.assert_array_equal(outputs[0], output)
        np.testing.assert_allclose(outputs[0][0], np.einsum("ok,khw->ohw", weights, x["x"][0]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m, n", [(200, 72), (72, 200)])
def test_int8_gemm_tiles_split_either_way(tmp_path, m, n):
    """The int8 kernel's grid of tiles on 1-8 threads: the same bytes as one thread's."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 255, (m, 96), dtype=np.uint8)
    weights = numpy_helper.from_array(rng.integers(-127, 127, (96, n), dtype=np.int8), "b")
    scalars = [
        numpy_helper.from_array(np.array(value, dtype), name)
        for name, value, dtype in (
            ("sa", 0.02, np.float32), ("za", 128, np.uint8), ("sb", 0.01, np.float32),
            ("zb", 0, np.int8), ("sy", 0.5, np.float32), ("zy", 100, np.uint8),
        )
    ]  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])],
        "product",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, 96])],
        [helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n])],
        [weights, *scalars],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = compile(model, tmp_path / "model.so")
    assert "qgemm" in compile(model, tmp_path / "model.ll", emit="llvm").read_text()
    outputs = [Session(path, threads=threads).run(None, {"a": a})[0] for threads in (1, 2, 3, 5, 8)]
    for output in outputs[1:]:
        np.testing.assert_array_equal(outputs[0], output)
    ort = pytest.importorskip("onnxruntime")
    np.testing.assert_array_equal(outputs[0], ort.InferenceSession(model.SerializeToString()).run(None, {"a": a})[0])


def test_outputs_identical_across_thread_counts(library, inputs):
    path, _ = library
    outputs = {}
    for threads in (1, 2, 3):
        session = Session(path, threads=threads)
        assert session.num_threads == threads
        outputs[threads] = session.run(None, inputs)[0]
    np.testing.assert_array_equal(outputs[1], outputs[2])
    np.testing.assert_array_equal(outputs[1], outputs[3])
    ort = pytest.importorskip("onnxruntime")
    expected = ort.InferenceSession(_model().SerializeToString()).run(None, inputs)[0]
    np.testing.assert_allclose(outputs[2], expected, rtol=1e-4, atol=1e-6)


def test_concurrent_runs_of_one_session(library):
    path, _ = library
    session = Session(path, threads=2)
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.standard_normal((1, 8, 64, 64)).astype(np.float32)} for _ in range(6)]
    expected = [Session(path, threads=1).run(None, feed)[0] for feed in feeds]
    Session(path, threads=2)
    results: dict[int, list[np.ndarray]] = {}

    def work(index: int) -> None:
        results[index] = [session.run(None, feeds[index])[0] for _ in range(20)]

    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(feeds))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for index, outputs in results.items():
        for output in outputs:
            np.testing.assert_array_equal(output, expected[index])
    assert len(results) == len(feeds)


def _threads_in_fresh_process(path, environment: dict[str, str]) -> int:
    script = "import sys; from onnxc.runtime import Session; print(Session(sys.argv[1]).num_threads)"
    env = {k: v for k, v in os.environ.items() if k != "ONNXC_NUM_THREADS"} | environment
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)], check=False, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def test_thread_count_from_environment_else_cpus(library):
    path, _ = library
    assert _threads_in_fresh_process(path, {"ONNXC_NUM_THREADS": "3"}) == 3
    assert _threads_in_fresh_process(path, {}) == len(os.sched_getaffinity(0))


_WORKER_STATES = """
import os, sys, time
import numpy as np
from onnxc.runtime import Session
session = Session(sys.argv[1], threads=2)
expected = np.load(sys.argv[2])
output = session.run(None, {"x": np.load(sys.argv[3])})[0]
assert np.array_equal(output, expected)
time.sleep(0.05)
me = str(os.getpid())
states = [open(f"/proc/self/task/{t}/stat").read().rsplit(")", 1)[1].split()[0]
          for t in os.listdir("/proc/self/task") if t != me]
print("".join(sorted(states)))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads thread states from Linux's /proc")
def test_workers_spin_for_onnxc_spin_us_then_sleep(library, inputs, tmp_path):
    """ONNXC_SPIN_US sets how long a worker spins for the next job after one (0: it sleeps at
    once): 50 ms after a run, with 0 every thread but the caller sleeps; with 10 s the pool's
    worker still runs. Outputs are the same either way."""
    path, _ = library
    expected = Session(path, threads=1).run(None, inputs)[0]
    np.save(tmp_path / "expected.npy", expected)
    np.save(tmp_path / "x.npy", inputs["x"])
    states = {}
    for spin in ("0", "10000000"):
        env = os.environ | {"ONNXC_SPIN_US": spin}
        command = [
            sys.executable,
            "-c",
            _WORKER_STATES,
            str(path),
            str(tmp_path / "expected.npy"),
            str(tmp_path / "x.npy"),
        ]
        result = subprocess.run(command, check=False, capture_output=True, text=True, env=env, timeout=60)
        assert result.returncode == 0, result.stderr
        states[spin] = result.stdout.strip()
    assert "R" not in states["0"], states
    assert "R" in states["10000000"], states


def test_threads_argument_is_checked(library):
    path, _ = library
    with pytest.raises(ValueError):
        Session(path, threads=0)


def _nest(body: str, rows: int = 256, columns: int = 256) -> object:
    """The first top-level loop of a function over A: memref<rows x columns>, B: memref<columns>."""
    text = f"""
    func.func @f(%A: memref<{rows}x{columns}xf32>, %B: memref<{columns}xf32>) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = arith.constant {rows} : index
      %columns = arith.constant {columns} : index
      scf.for %b = %c0 to %c1 step %c1 {{
        scf.for %i = %c0 to %rows step %c1 {{
          scf.for %j = %c0 to %columns step %c1 {{
            {body}
          }}
        }}
      }}
      func.return
    }}"""
    module = Parser(make_context(), text).parse_module()
    function = next(iter(module.ops))
    return next(op for op in function.body.block.ops if op.regions)


def test_split_loop_is_below_single_iteration_loops():
    nest = _nest("""
            %v = memref.load %A[%i, %j] : memref<256x256xf32>
            %w = arith.addf %v, %v : f32
            memref.store %w, %A[%i, %j] : memref<256x256xf32>""")
    found = parallel_loop(nest)
    assert found is not None and found.trip_count == 256
    assert found.loop.body.block.args[0].name_hint == "i"


def test_loop_with_dependent_iterations_is_not_split():
    # B[j] accumulates over i: iterations of the i loop write the same elements.
    nest = _nest("""
            %v = memref.load %A[%i, %j] : memref<256x256xf32>
            %s = memref.load %B[%j] : memref<256xf32>
            %w = arith.addf %v, %s : f32
            memref.store %w, %B[%j] : memref<256xf32>""")
    assert parallel_loop(nest) is None


def test_small_nest_is_not_split():
    body = """
            %z = arith.constant 0.0 : f32
            memref.store %z, %A[%i, %j] : memref<{0}x{0}xf32>"""
    assert parallel_loop(_nest(body.format(512), rows=512, columns=512)) is not None
    assert 8 * 8 * 2 < MIN_PARALLEL_WORK
    assert parallel_loop(_nest(body.format(8), rows=8, columns=8)) is None


def test_loop_of_small_products_is_split_by_products(tmp_path):
    """Attention's Q.K^T over a run-time sequence is a loop of one GEMM per head: the threads
    take heads (the loop's work counts each product's multiply-adds), not each product's tiles
    (a 128-token head's: 17 us, which two threads made no faster). Outputs as on one thread."""
    shape = ["batch", 4, "sequence", 64]
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
            helper.make_node("MatMul", ["q", "kt"], ["y"]),
        ],
        "heads",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name in ("q", "k")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    loops = compile(model, tmp_path / "model.loops.mlir", emit="loops").read_text()
    function = next(iter(Parser(make_context(), loops).parse_module().ops))
    products = [op for op in function.body.block.ops if any(inner.name == "krnl.matmul" for inner in op.walk())]
    assert len(products) == 1 and isinstance(products[0], scf.ForOp)
    assert parallel_loop(products[0]) is not None
    rng = np.random.default_rng(0)
    inputs = {name: rng.standard_normal((1, 4, 40, 64)).astype(np.float32) for name in ("q", "k")}
    library = compile(model, tmp_path / "model.so")
    expected = inputs["q"] @ inputs["k"].transpose(0, 1, 3, 2)
    for threads in (1, 2):
        np.testing.assert_allclose(
            Session(library, threads=threads).run(None, inputs)[0], expected, rtol=1e-5, atol=1e-4
        )


def _nest_over_batch(bound: str) -> object:
    text = f"""
    func.func @f(%A: memref<?x256x64xf32>) {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %c256 = arith.constant 256 : index
      %batch = memref.dim %A, %c0 : memref<?x256x64xf32>
      %rows = arith.muli %batch, %c256 : index
      scf.for %b = %c0 to {bound} step %c1 {{
        scf.for %i = %c0 to %c256 step %c1 {{
          scf.for %j = %c0 to %c64 step %c1 {{
            %v = memref.load %A[%b, %i, %j] : memref<?x256x64xf32>
            %w = arith.addf %v, %v : f32
            memref.store %w, %A[%b, %i, %j] : memref<?x256x64xf32>
          }}
        }}
      }}
      func.return
    }}"""
    function = next(iter(Parser(make_context(), text).parse_module().ops))
    return next(op for op in function.body.block.ops if isinstance(op, scf.ForOp))


def test_loop_over_a_batch_splits_the_loop_it_holds():
    """Below a loop over one run-time dim (a batch, 1 at run time as often as not) the threads
    split the loop it holds; a loop over a product of dims (merged) is split itself."""
    found = parallel_loop(_nest_over_batch("%batch"))
    assert found is not None and found.trip_count == 256 and found.loop.body.block.args[0].name_hint == "i"
    found = parallel_loop(_nest_over_batch("%rows"))
    assert found is not None and found.trip_count is None and found.loop.body.block.args[0].name_hint == "b"


def test_split_below_a_batch_computes_every_sample(tmp_path):
    """A transpose of [batch, 16, 64, 64] split below its batch loop: every thread runs every
    sample, its part of each; outputs at 1 and 2 threads as numpy's, for batches of 1 and 3."""
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3]), helper.make_node("Relu", ["t"], ["y"])],
        "batch",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    library = compile(model, tmp_path / "model.so")
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 16, 64, 64)).astype(np.float32)
        for threads in (1, 2):
            np.testing.assert_array_equal(
                Session(library, threads=threads).run(None, {"x": x})[0], np.maximum(x.transpose(0, 2, 1, 3), 0)
            )


@pytest.mark.parametrize("per_group", [4, 8])
def test_grouped_convs_split_by_groups(tmp_path, per_group):
    """32 groups of 8 channels are 32 GEMMs, one pool job over their tiles (gemm_batches.py);
    of 4, a direct nest over groups whose stores index channel group*4 + c, split by groups
    (parallel._block). The same outputs on 1, 2 and 3 threads, as onnx.reference's."""
    from onnx.reference import ReferenceEvaluator

    channels = 32 * per_group
    rng = np.random.default_rng(per_group)
    weights = numpy_helper.from_array(rng.standard_normal((channels, per_group, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], group=32, pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"]),
        ],
        "groups",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 24, 24])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 24, 24])],
        [weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    text = compile(model, tmp_path / "model.ll", emit="llvm").read_text()
    assert "onnxc_parallel_for" in text
    library = compile(model, tmp_path / "model.so")
    x = {"x": rng.standard_normal((1, channels, 24, 24)).astype(np.float32)}
    outputs = [Session(library, threads=threads).run(None, x)[0] for threads in (1, 2, 3)]
    np.testing.assert_allclose(outputs[0], ReferenceEvaluator(model).run(None, x)[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(outputs[1], outputs[0])
    np.testing.assert_array_equal(outputs[2], outputs[0])


def test_loop_storing_blocks_of_its_index_is_split():
    """Stores at [4*i + c] for constants 0 <= c < 4 are iteration i's own block; at [4*i + 4]
    the next iteration's."""

    def nest(offset: int) -> object:
        text = f"""
        func.func @f(%A: memref<1024xf32>) {{
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %c4 = arith.constant 4 : index
          %offset = arith.constant {offset} : index
          %c255 = arith.constant 255 : index
          %z = arith.constant 0.0 : f32
          scf.for %i = %c0 to %c255 step %c1 {{
            scf.for %r = %c0 to %c255 step %c1 {{
              %base = arith.muli %i, %c4 : index
              %at = arith.addi %base, %offset : index
              memref.store %z, %A[%base] : memref<1024xf32>
              memref.store %z, %A[%at] : memref<1024xf32>
            }}
          }}
          func.return
        }}"""
        function = next(iter(Parser(make_context(), text).parse_module().ops))
        return next(op for op in function.body.block.ops if isinstance(op, scf.ForOp))

    assert parallel_loop(nest(3)) is not None
    assert parallel_loop(nest(4)) is None


@pytest.mark.parametrize("target", ["ppc64le", "s390x"])
def test_foreign_targets_link_with_the_pool(tmp_path, target):
    output = compile(_model(), tmp_path / "model.so", target=target)
    assert b"onnxc_set_num_threads" in output.read_bytes()


def test_closing_sessions_stops_their_workers(library, inputs):
    """dlclose of a library whose pool has run must not leave workers in unmapped code."""
    path, _ = library
    expected = Session(path, threads=1).run(None, inputs)[0]
    for _ in range(5):
        with Session(path, threads=2) as session:
            np.testing.assert_array_equal(session.run(None, inputs)[0], expected)


_SLICE_OWNERS = r"""
#include "support/onnxc_parallel.c"
#include <stdio.h>

static pthread_t ran_by[2];

static void busy_slice(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  int64_t until = now_ns() + 20000; /* 20 us: longer than publishing a job takes */
  while (now_ns() < until) relax();
  ran_by[begin] = pthread_self();
  (void)end;
}

int main(void) {
  onnxc_set_num_threads(2);
  onnxc_parallel_for(busy_slice, NULL, 0, 2); /* starts the worker */
  /* 500 jobs, more while the worker took part in fewer than 100 (a busy machine keeps it off a CPU) */
  int worker_jobs = 0, worker_ran_first = 0, jobs = 0;
  for (; jobs < 500 || (worker_jobs < 100 && jobs < 20000); ++jobs) {
    onnxc_parallel_for(busy_slice, NULL, 0, 2);
    int first = !pthread_equal(ran_by[0], pthread_self()), second = !pthread_equal(ran_by[1], pthread_self());
    worker_jobs += first || second;
    worker_ran_first += first;
  }
  printf("%d %d %d\n", jobs, worker_jobs, worker_ran_first);
  return 0;
}
"""


def test_each_thread_runs_its_own_slice(tmp_path):
    """Slice i of a job runs on thread i (the caller 0) whenever that thread is there to take it,
    so that a nest reads what the same thread wrote in the nest before (first come, first
    served, the worker took slice 0 in 51 of the 500 jobs it took part in). Another thread takes
    a slice only when its own is late: the worker, spinning but on a busy machine, may be, and
    then the caller runs both."""
    source = tmp_path / "owners.c"
    source.write_text(_SLICE_OWNERS)
    program = tmp_path / "owners"
    runtime = Path(__file__).parent.parent / "runtime"
    subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-O2", "-std=c11", f"-I{runtime}", str(source), "-o", str(program), "-lpthread"],
        check=True,
    )  # fmt: skip
    counts = subprocess.run([str(program)], capture_output=True, text=True, check=True, timeout=60).stdout
    jobs, worker_jobs, worker_first = map(int, counts.split())
    assert worker_jobs >= 10 and worker_first <= 0.02 * worker_jobs + 2, (jobs, worker_jobs, worker_first)
