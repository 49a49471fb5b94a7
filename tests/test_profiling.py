"""The profiler: `onnxc --profile` libraries time their kernels, `Session(profile=True)` reports
per node and per op type and writes a Chrome/Perfetto trace; without --profile nothing changes."""

import ctypes
import json
import threading

import numpy as np
import onnx
import pytest
from helpers import make_model, run_from_threads, value_info
from onnx import helper, numpy_helper

import onnxc
from onnxc import cli
from onnxc.errors import CompileError, InvalidModelError

CHANNELS = 32


def _cnn(batch: int | str = 1) -> onnx.ModelProto:
    """Conv+Relu, MaxPool, Conv, Tanh*scale (one fused loop), GlobalAveragePool, Flatten, Gemm."""
    rng = np.random.default_rng(0)
    weights = {
        "w1": rng.standard_normal((CHANNELS, 3, 3, 3)) * 0.3,
        "w2": rng.standard_normal((2 * CHANNELS, CHANNELS, 3, 3)) * 0.1,
        "scale": rng.standard_normal((1, 2 * CHANNELS, 1, 1)),
        "fc": rng.standard_normal((2 * CHANNELS, 10)) * 0.1,
        "fc_bias": rng.standard_normal(10),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Tanh", ["c2"], ["t2"], name="tanh2"),
        helper.make_node("Mul", ["t2", "scale"], ["m2"], name="scale2"),
        helper.make_node("GlobalAveragePool", ["m2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc", "fc_bias"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [value_info("x", np.float32, [batch, 3, 64, 64])],
        [value_info("y", np.float32, [batch, 10])],
        [numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()],
    )
    return make_model(graph)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    """The model compiled with and without --profile."""
    directory = tmp_path_factory.mktemp("profile")
    onnx.save(_cnn(), directory / "cnn.onnx")
    plain = onnxc.compile(directory / "cnn.onnx", directory / "plain.so")
    profiled = onnxc.compile(directory / "cnn.onnx", directory / "profiled.so", profile=True)
    return directory, plain, profiled


def _feed(batch: int = 1) -> dict:
    return {"x": np.random.default_rng(1).standard_normal((batch, 3, 64, 64)).astype(np.float32)}


def test_rows_name_the_nodes_and_sum_to_the_run(libraries):
    _, plain, profiled = libraries
    session = onnxc.Session(profiled, profile=True, threads=1)
    (expected,) = onnxc.Session(plain).run(None, _feed())
    (got,) = session.run(None, _feed())
    np.testing.assert_array_equal(got, expected)  # the same kernels, only timed
    session.profile.clear()
    for _ in range(10):
        session.run(None, _feed())
    rows = {row.nodes: row for row in session.profile.by_node()}
    # Relu is in conv1's GEMM epilogue (no op of its own); Tanh and the Mul by a constant run in one loop.
    assert set(rows) == {("conv1", "relu1"), ("pool1",), ("conv2",), ("tanh2", "scale2"), ("gap",), ("fc",)}
    assert rows[("tanh2", "scale2")].op_type == "Tanh+Mul"
    conv1 = rows[("conv1", "relu1")]
    assert conv1.op_type == "Conv+Relu" and conv1.calls >= 1 and conv1.label == "conv1 (+1 fused)"
    conv_flops = 2 * 64 * 64 * CHANNELS * 3 * 9
    assert conv1.flops == conv_flops + 64 * 64 * CHANNELS and conv1.gflops_per_second > 0
    # Which kernels may split over the pool is the code generator's choice; the GEMM's does.
    assert conv1.parallel in ("yes", "part") and {row.parallel for row in rows.values()} <= {"yes", "no", "part"}
    kernels = sum(row.seconds for row in rows.values())
    wall = session.profile.wall_seconds()
    assert 0.7 * wall < kernels < 1.05 * wall  # the rest is entry checks and ctypes (medians of each: not exact)
    assert abs(sum(row.share for row in rows.values()) - kernels / wall) < 1e-9
    by_type = {row.op_type: row for row in session.profile.by_op_type()}
    assert set(by_type) == {"Conv+Relu", "Conv", "MaxPool", "Tanh+Mul", "GlobalAveragePool", "Gemm"}
    assert by_type["Conv"].flops == rows[("conv2",)].flops == 2 * 32 * 32 * 2 * CHANNELS * CHANNELS * 9
    table = session.profile.table(top=3)
    assert "| op type " in table and "| conv" in table and "3 more node rows" in table


def _check_event(event: dict) -> None:
    assert event["ph"] in ("X", "M")
    assert isinstance(event["name"], str) and event["name"]
    assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
    assert isinstance(event.get("args", {}), dict)
    if event["ph"] == "X":
        assert isinstance(event["cat"], str) and event["cat"]
        assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0
        assert isinstance(event["dur"], (int, float)) and event["dur"] >= 0


def test_trace_is_chrome_trace_json(libraries):
    directory, _, profiled = libraries
    session = onnxc.Session(profiled, profile=True)
    for _ in range(3):
        session.run(None, _feed())
    trace = json.loads(session.profile.save_trace(directory / "trace.json").read_text())
    assert set(trace) == {"traceEvents", "displayTimeUnit", "otherData"} and trace["displayTimeUnit"] == "ms"
    for event in trace["traceEvents"]:
        _check_event(event)
    runs = [e for e in trace["traceEvents"] if e["cat" if e["ph"] == "X" else "ph"] == "Session"]
    kernels = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] != "Session"]
    assert len(runs) == 3 and len(kernels) == 3 * len(session.signature["profile"]["kernels"])
    for event in kernels:  # inside its run, on its thread
        run = runs[event["args"]["run"]]
        assert run["tid"] == event["tid"]
        assert run["ts"] - 1e-3 <= event["ts"] and event["ts"] + event["dur"] <= run["ts"] + run["dur"] + 1e-3
    conv = next(e for e in kernels if e["name"] == "conv1+relu1")
    assert conv["cat"] == "Conv+Relu" and conv["args"]["kernel"].startswith("main_graph.nest")
    assert isinstance(conv["args"]["parallel"], bool)
    node, relu = conv["args"]["nodes"]
    assert (
        node["name"] == "conv1" and node["inputs"][0] == [1, 3, 64, 64] and node["outputs"] == [[1, CHANNELS, 64, 64]]
    )
    assert relu["name"] == "relu1" and relu["producers"] == ["conv1"]


def test_runs_from_many_threads_keep_their_own_events(libraries):
    _, plain, profiled = libraries
    session = onnxc.Session(profiled, profile=True, threads=2)
    feeds = {k: {"x": np.full((1, 3, 64, 64), 0.1 * k, np.float32)} for k in range(4)}
    expected = {k: onnxc.Session(plain).run(None, feed)[0] for k, feed in feeds.items()}
    assert run_from_threads(session, feeds, expected, repeat=5) == []
    kernels = len(session.signature["profile"]["kernels"])
    assert len(session.profile.runs) == 20 and len({run.thread for run in session.profile.runs}) == 4
    for run in session.profile.runs:
        assert sorted(run.events["kernel"]) == list(range(kernels))  # each kernel once, no other run's
        assert run.start_ns <= run.events["start_ns"].min()
        assert (run.events["start_ns"] + run.events["duration_ns"]).max() <= run.end_ns


def test_batch_loop_counts_every_sample(tmp_path):
    onnx.save(_cnn(batch="N"), tmp_path / "cnn.onnx")
    session = onnxc.Session(onnxc.compile(tmp_path / "cnn.onnx", tmp_path / "cnn.so", profile=True), profile=True)
    session.run(None, _feed(batch=3))
    rows = {row.nodes: row for row in session.profile.by_node()}
    one_sample = 2 * 64 * 64 * CHANNELS * 3 * 9 + 64 * 64 * CHANNELS
    assert rows[("conv1", "relu1")].flops == 3 * one_sample
    assert rows[("pool1",)].calls == 3


def test_without_profile_nothing_changes(libraries, tmp_path):
    directory, plain, profiled = libraries
    assert (
        onnxc.compile(directory / "cnn.onnx", tmp_path / "again.so", profile=False).read_bytes() == plain.read_bytes()
    )
    assert "profile" not in onnxc.Session(plain).signature
    assert not hasattr(ctypes.CDLL(str(plain)), "onnxc_profile_events")
    ir = onnxc.compile(directory / "cnn.onnx", tmp_path / "plain.ll", emit="llvm").read_text()
    assert "onnxc_profile" not in ir
    assert (
        "onnxc_profile_record"
        in onnxc.compile(directory / "cnn.onnx", tmp_path / "p.ll", emit="llvm", profile=True).read_text()
    )
    with pytest.raises(InvalidModelError, match="built without profiling: compile it with `onnxc --profile`"):
        onnxc.Session(plain, profile=True)
    assert onnxc.Session(profiled).profile is None  # a profiled library runs as any other


def test_wasm32_is_refused(libraries, tmp_path):
    directory, _, _ = libraries
    with pytest.raises(CompileError, match="profiling needs a clock"):
        onnxc.compile(directory / "cnn.onnx", tmp_path / "cnn.wasm", target="wasm32", profile=True)


def test_malformed_profile_entry_is_refused(libraries):
    from onnxc.runtime.profiling import Profile

    with pytest.raises(InvalidModelError, match="malformed signature 'profile' entry"):
        Profile({"kernels": [{"name": "k", "nodes": ["ghost"]}], "nodes": {}}, None, "m.so")


def test_cli_prints_tables_and_writes_the_trace(libraries, tmp_path, capsys):
    directory, plain, _ = libraries
    assert cli.main([str(directory / "cnn.onnx"), "-o", str(tmp_path / "cnn.so"), "--profile"]) == 0
    trace = tmp_path / "trace.json"
    assert cli.main(["run", str(tmp_path / "cnn.so"), "--profile", "--repeat", "3", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "3 run(s)" in out and "| op type " in out and "| conv1 " in out and f"wrote {trace}" in out
    assert len(json.loads(trace.read_text())["traceEvents"]) > 3
    assert cli.main(["run", str(plain), "--profile"]) == 1
    assert "built without profiling" in capsys.readouterr().err


def test_profiled_runs_are_thread_safe_to_read(libraries):
    """`Profile` readers may run while other threads record."""
    _, _, profiled = libraries
    session = onnxc.Session(profiled, profile=True)
    stop = threading.Event()

    def record():
        while not stop.is_set():
            session.run(None, _feed())

    worker = threading.Thread(target=record)
    worker.start()
    try:
        for _ in range(20):
            session.profile.by_op_type()
            session.profile.trace()
    finally:
        stop.set()
        worker.join()
    assert session.profile.runs
