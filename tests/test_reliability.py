"""Reliability: reloading and unloading libraries, threads, leaks, determinism, NaN/Inf, external data."""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.errors import InputError, InvalidModelError, OnnxcError, RuntimeFailure
from onnxc.runtime import Session

OPSET = {"opset_imports": [helper.make_opsetid("", 17)], "ir_version": 8}
SHAPE = [4, 8]


def _binary_model(op_type: str) -> onnx.ModelProto:
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, SHAPE) for n in ("a", "b", "y")]
    graph = helper.make_graph([helper.make_node(op_type, ["a", "b"], ["y"])], op_type.lower(), info[:2], info[2:])
    return helper.make_model(graph, **OPSET)


# MatMul then Relu: enough work per run that threads overlap inside native code.
SMALL_MODEL = helper.make_model(
    helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 16])],
        [numpy_helper.from_array(np.random.default_rng(1).standard_normal((16, 16)).astype(np.float32), "w")],
    ),
    **OPSET,
)


@pytest.fixture(scope="module")
def small_library(tmp_path_factory) -> Path:
    return onnxc.compile(SMALL_MODEL, tmp_path_factory.mktemp("small") / "small.so")


def _inputs(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"a": rng.standard_normal(SHAPE).astype(np.float32), "b": rng.standard_normal(SHAPE).astype(np.float32)}


def _rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _mapped_inodes() -> set[int]:
    return {int(line.split()[4]) for line in Path("/proc/self/maps").read_text().splitlines()}


# --- loading, reloading, unloading ---


def test_library_recompiled_in_place_is_reloaded(tmp_path):
    path = tmp_path / "model.so"
    onnxc.compile(_binary_model("Add"), path)
    feed = _inputs()
    old = Session(path)
    onnxc.compile(_binary_model("Sub"), path)
    new = Session(path)
    np.testing.assert_array_equal(new.run(None, feed)[0], feed["a"] - feed["b"])
    np.testing.assert_array_equal(old.run(None, feed)[0], feed["a"] + feed["b"])  # still the library it opened


def test_failed_build_leaves_the_old_library_and_no_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "model.so"
    onnxc.compile(_binary_model("Add"), path)
    before = path.read_bytes()

    def failing_copy(source, destination):  # the output is on another file system and the disk fills up
        Path(destination).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", _refuse_cross_device(os.replace))
    monkeypatch.setattr(shutil, "copyfile", failing_copy)
    with pytest.raises(OSError, match="No space"):
        onnxc.compile(_binary_model("Sub"), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.so"]


def test_output_in_a_missing_directory_is_a_compile_error(tmp_path):
    with pytest.raises(OnnxcError, match="does not exist"):
        onnxc.compile(_binary_model("Add"), tmp_path / "missing" / "model.so")


def _refuse_cross_device(replace):
    """os.replace that fails like a rename across file systems when the source is a fresh build."""

    def replace_within_one_file_system(source, destination):
        if Path(source).name == "model.so" and "onnxc-" in str(source):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return replace(source, destination)

    return replace_within_one_file_system


def test_load_leaves_no_file_behind(tmp_path, small_library):
    folder = tmp_path / "lib"
    folder.mkdir()
    shutil.copy(small_library, folder / "m.so")
    Session(folder / "m.so").close()
    assert sorted(p.name for p in folder.iterdir()) == ["m.so"]


def test_load_copies_where_hard_links_are_refused(small_library, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError("hard links are not allowed here")

    monkeypatch.setattr(os, "link", refuse)
    with Session(small_library) as session:
        x = np.ones((8, 16), np.float32)
        assert session.run(None, {"x": x})[0].shape == (8, 16)


def test_close_unloads_and_refuses_runs(tmp_path, small_library):
    path = tmp_path / "own.so"
    shutil.copy(small_library, path)
    inode = path.stat().st_ino
    with Session(path) as session:
        assert inode in _mapped_inodes()
        session.run(None, {"x": np.ones((8, 16), np.float32)})
    assert inode not in _mapped_inodes()
    with pytest.raises(RuntimeFailure, match="the session is closed"):
        session.run(None, {"x": np.ones((8, 16), np.float32)})
    session.close()  # twice is harmless


def test_two_sessions_share_one_mapping_and_close_independently(tmp_path, small_library):
    path = tmp_path / "own.so"
    shutil.copy(small_library, path)
    x = {"x": np.ones((8, 16), np.float32)}
    first, second = Session(path), Session(path)
    expected = first.run(None, x)[0]
    first.close()
    np.testing.assert_array_equal(second.run(None, x)[0], expected)
    second.close()
    assert path.stat().st_ino not in _mapped_inodes()


def test_load_and_release_keeps_rss_flat(small_library):
    for _ in range(20):  # warm up allocator pools and ctypes caches
        Session(small_library).close()
    before = _rss_bytes()
    for _ in range(200):
        with Session(small_library) as session:
            session.run(None, {"x": np.ones((8, 16), np.float32)})
    assert _rss_bytes() - before < 2 * 2**20


def _arena_model(width: int = 1024) -> onnx.ModelProto:
    """x [1, width] -> Tile to [width, width] -> Transpose -> ReduceSum over rows: 8 MB of
    intermediate buffers (an arena on huge pages), small inputs and outputs."""
    graph = helper.make_graph(
        [
            helper.make_node("Tile", ["x", "repeats"], ["tiled"]),
            helper.make_node("Transpose", ["tiled"], ["t"]),
            helper.make_node("ReduceSum", ["t", "axes"], ["y"]),
        ],
        "arena",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        [
            numpy_helper.from_array(np.array([width, 1], np.int64), "repeats"),
            numpy_helper.from_array(np.array([0], np.int64), "axes"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _settled_rss_growth(before: int, limit: int) -> int:
    """RSS growth since `before`, once below `limit` or after 5 s: join() returns before a
    thread's own exit frees its arena (a pthread key's destructor)."""
    deadline = time.monotonic() + 5
    while _rss_bytes() - before >= limit and time.monotonic() < deadline:
        time.sleep(0.01)
    return _rss_bytes() - before


def test_threads_that_exit_free_their_arenas(tmp_path):
    """Each calling thread keeps its arena (here 8 MB of intermediate buffers, on huge pages)
    for its later runs; a thread that exits frees it, so a run on each of 30 short-lived
    threads leaves memory flat, and every run computes from its own inputs. Inputs and
    outputs are small: glibc keeps what a thread's own malloc arena freed."""
    width = 1024
    model = _arena_model(width)
    session = Session(onnxc.compile(model, tmp_path / "arena.so"), threads=1)
    failures = []

    def run_once(seed: int) -> None:
        x = np.random.default_rng(seed).standard_normal((1, width)).astype(np.float32)
        y = session.run(None, {"x": x})[0]
        if not np.allclose(y, np.full((1, width), x.sum(dtype=np.float64)), rtol=1e-4, atol=1e-3):
            failures.append(seed)

    def on_a_new_thread(seed: int) -> None:
        thread = threading.Thread(target=run_once, args=(seed,))
        thread.start()
        thread.join()

    for seed in range(3):
        on_a_new_thread(seed)
    run_once(3)  # this thread's arena, kept
    before = _rss_bytes()
    for seed in range(30):
        on_a_new_thread(seed)
    assert _settled_rss_growth(before, 4 * 2**20) < 4 * 2**20  # not one arena more
    assert not failures


def test_unloading_frees_the_arenas_of_live_threads(tmp_path):
    """A thread that ran the model and lives on keeps its arena until the library is unloaded:
    closing the session from another thread frees it."""
    session = Session(onnxc.compile(_arena_model(), tmp_path / "arena.so"), threads=1)
    ran, finish = threading.Event(), threading.Event()

    def run_then_wait() -> None:
        session.run(None, {"x": np.ones((1, 1024), np.float32)})
        ran.set()
        finish.wait()

    thread = threading.Thread(target=run_then_wait)
    thread.start()
    ran.wait()
    with_arena = _rss_bytes()
    session.close()
    freed = with_arena - _rss_bytes()
    finish.set()
    thread.join()
    assert freed >= 6 * 2**20  # its 8 MB arena


def test_ten_thousand_runs_keep_rss_flat(small_library):
    session = Session(small_library)
    x = {"x": np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)}
    for _ in range(200):
        session.run(None, x)
    before = _rss_bytes()
    for _ in range(10_000):
        session.run(None, x)
    assert _rss_bytes() - before < 2 * 2**20


# --- threads ---


def test_eight_threads_thousand_runs_each_agree(small_library):
    session, threads, runs = Session(small_library), 8, 1000
    feeds = [{"x": np.random.default_rng(seed).standard_normal((8, 16)).astype(np.float32)} for seed in range(threads)]
    expected = [session.run(None, feed)[0] for feed in feeds]
    start = threading.Barrier(threads)

    def work(index: int) -> int:
        start.wait()
        return sum(not np.array_equal(session.run(None, feeds[index])[0], expected[index]) for _ in range(runs))

    with ThreadPoolExecutor(threads) as pool:
        assert list(pool.map(work, range(threads))) == [0] * threads


# --- run-time checks happen before native code ---


@pytest.mark.parametrize(
    "feed, message",
    [
        ({"a": np.zeros(SHAPE, np.float32)}, "missing input 'b'"),
        ({**_inputs(), "c": np.zeros(SHAPE, np.float32)}, "unknown input 'c'"),
        ({**_inputs(), "b": np.zeros(SHAPE, np.float64)}, "expected dtype float32"),
        ({**_inputs(), "b": np.zeros(SHAPE[:1], np.float32)}, "expected rank 2"),
        ({**_inputs(), "b": np.zeros([4, 9], np.float32)}, "dim 1 is 9, expected 8"),
    ],
    ids=["missing", "extra", "dtype", "rank", "dim"],
)
def test_input_errors_raise_before_native_code(tmp_path, monkeypatch, feed, message):
    session = Session(onnxc.compile(_binary_model("Add"), tmp_path / "add.so"))

    def native_must_not_run(*args):
        raise AssertionError("native code was called")

    monkeypatch.setattr(session, "_invoke", native_must_not_run)
    with pytest.raises(InputError, match=re.escape(message)):
        session.run(None, feed)


def test_big_endian_and_strided_inputs_are_copied_not_misread(tmp_path):
    session = Session(onnxc.compile(_binary_model("Add"), tmp_path / "add.so"))
    feed = _inputs(3)
    big_endian = feed["a"].astype(">f4")
    strided = np.ascontiguousarray(np.repeat(feed["b"], 2, axis=1))[:, ::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(session.run(None, {"a": big_endian, "b": strided})[0], feed["a"] + feed["b"])


# --- determinism ---


def test_same_model_compiles_to_identical_bytes(tmp_path):
    from onnxc.examples.mnist import build_mnist_cnn

    model = build_mnist_cnn()
    libraries = []
    for folder in (tmp_path / "one", tmp_path / "two"):
        folder.mkdir()
        libraries.append(onnxc.compile(model, folder / "model.so").read_bytes())
    assert libraries[0] == libraries[1]


# --- NaN and Inf ---

NAN_INF_SHAPE = [2, 3, 4, 4]
# Each output is compared with onnxruntime; NaN must be where onnxruntime has NaN.
ORT_CHECKED = {
    "Relu": helper.make_node("Relu", ["x"], ["Relu"]),
    "Max": helper.make_node("Max", ["x", "y"], ["Max"]),
    "Min": helper.make_node("Min", ["x", "y"], ["Min"]),
    "Softmax": helper.make_node("Softmax", ["x"], ["Softmax"], axis=-1),
    "Clip": helper.make_node("Clip", ["x", "lo", "hi"], ["Clip"]),
    "LeakyRelu": helper.make_node("LeakyRelu", ["x"], ["LeakyRelu"]),
    "Sigmoid": helper.make_node("Sigmoid", ["x"], ["Sigmoid"]),
    "Tanh": helper.make_node("Tanh", ["x"], ["Tanh"]),
    "Exp": helper.make_node("Exp", ["x"], ["Exp"]),
    "AveragePool": helper.make_node("AveragePool", ["x"], ["AveragePool"], kernel_shape=[2, 2], strides=[2, 2]),
}
# onnxruntime's MaxPool (MLAS) keeps or drops a NaN depending on its position in the window;
# onnxc's propagates it, like numpy.max: compared with numpy.
POOLS = {
    "MaxPool": helper.make_node("MaxPool", ["x"], ["MaxPool"], kernel_shape=[2, 2], strides=[2, 2]),
    "GlobalMaxPool": helper.make_node("GlobalMaxPool", ["x"], ["GlobalMaxPool"]),
}


def _nan_inf_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(NAN_INF_SHAPE).astype(np.float32) for _ in range(2))
    specials = np.array([np.nan, np.inf, -np.inf], np.float32)
    x.reshape(-1)[::5] = np.resize(specials, x.size // 5 + 1)[: len(x.reshape(-1)[::5])]
    y.reshape(-1)[::7] = np.resize(specials[::-1], y.size // 7 + 1)[: len(y.reshape(-1)[::7])]
    x[1, 2] = 5.0  # one window-free channel: GlobalMaxPool of plain values next to NaN channels
    return {"x": x, "y": y}


@pytest.fixture(scope="module")
def nan_inf_model(tmp_path_factory):
    nodes = {**ORT_CHECKED, **POOLS}
    graph = helper.make_graph(
        list(nodes.values()),
        "nan_inf",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, NAN_INF_SHAPE) for n in ("x", "y")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in nodes],
        [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in (("lo", -1.0), ("hi", 1.0))],
    )
    model = helper.make_model(graph, **OPSET)
    session = Session(onnxc.compile(model, tmp_path_factory.mktemp("nan") / "nan_inf.so"))
    return model, dict(zip(nodes, session.run(None, _nan_inf_inputs())))


def test_nan_inf_propagate_like_onnxruntime(nan_inf_model):
    ort = pytest.importorskip("onnxruntime")
    model, ours = nan_inf_model
    theirs = ort.InferenceSession(model.SerializeToString()).run(list(ORT_CHECKED), _nan_inf_inputs())
    for name, reference in zip(ORT_CHECKED, theirs):
        np.testing.assert_allclose(ours[name], reference, rtol=1e-6, atol=1e-7, equal_nan=True, err_msg=name)


def test_max_pools_propagate_nan(nan_inf_model):
    _, ours = nan_inf_model
    x = _nan_inf_inputs()["x"]
    windows = x.reshape(2, 3, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 2, 4)
    np.testing.assert_array_equal(ours["MaxPool"], windows.max(axis=-1))
    np.testing.assert_array_equal(ours["GlobalMaxPool"], x.max(axis=(2, 3), keepdims=True))
    assert np.isnan(ours["MaxPool"]).any() and np.isinf(ours["MaxPool"]).any()


# --- external data ---


def _external_model(folder: Path, weight: np.ndarray) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(weight.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(weight.shape))],
        [numpy_helper.from_array(weight, "w")],
    )
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(
        helper.make_model(graph, **OPSET),
        folder / "m.onnx",
        save_as_external_data=True,
        location="m.data",
        size_threshold=0,
    )
    return folder / "m.onnx"


def _set_location(model_path: Path, location: str) -> None:
    model = onnx.load(model_path, load_external_data=False)
    entry = next(e for e in model.graph.initializer[0].external_data if e.key == "location")
    entry.value = location
    onnx.save(model, model_path)


def test_model_with_external_weights_compiles_and_runs(tmp_path):
    weight = np.arange(12, dtype=np.float32).reshape(3, 4)
    library = onnxc.compile(_external_model(tmp_path / "model", weight), tmp_path / "ext.so")
    x = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(Session(library).run(None, {"x": x})[0], x + weight)


def test_symlink_inside_the_folder_is_allowed(tmp_path):
    weight = np.arange(4, dtype=np.float32)
    model = _external_model(tmp_path / "model", weight)
    os.symlink("m.data", tmp_path / "model" / "alias.data")
    _set_location(model, "alias.data")
    onnxc.compile(model, tmp_path / "ext.so", emit="onnx-basic")


@pytest.mark.parametrize("how", ["dir-symlink", "dotdot", "absolute", "file-symlink"])
def test_external_data_outside_the_folder_is_refused(tmp_path, how):
    weight = np.arange(4, dtype=np.float32)
    model = _external_model(tmp_path / "model", weight)
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(tmp_path / "model" / "m.data", outside / "m.data")
    location = {
        "dir-symlink": "escape/m.data",
        "dotdot": "../outside/m.data",
        "absolute": str(outside / "m.data"),
        "file-symlink": "leak.data",
    }[how]
    os.symlink(outside, tmp_path / "model" / "escape")
    os.symlink(outside / "m.data", tmp_path / "model" / "leak.data")
    _set_location(model, location)
    with pytest.raises(InvalidModelError, match="leaves the model's folder"):
        onnxc.compile(model, tmp_path / "ext.so")


def test_external_data_shorter_than_declared_is_refused(tmp_path):
    model = _external_model(tmp_path / "model", np.arange(4, dtype=np.float32))
    data = tmp_path / "model" / "m.data"
    data.write_bytes(data.read_bytes()[:10])
    with pytest.raises(InvalidModelError, match="has 10 bytes, needs 16"):
        onnxc.compile(model, tmp_path / "ext.so")


# --- CLI ---


def test_onnxc_opt_prints_one_line_on_onnxc_errors(tmp_path):
    source = tmp_path / "bad.mlir"
    source.write_text(
        "builtin.module attributes {onnx.opset = 17 : i64} {\n"
        "  func.func @main_graph(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        '    %y = "onnx.RandomUniformLike"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("random0")\n'
        "    func.return %y : tensor<2x3xf32>\n  }\n}\n"
    )
    command = [sys.executable, "-m", "onnxc.opt", str(source), "-p", "convert-onnx-to-krnl"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "onnxc-opt: error: UnsupportedOpError: node 'random0' (RandomUniformLike): "
        "op RandomUniformLike has no lowering (opset 17)"
    ]
    debug = subprocess.run([*command, "--debug"], capture_output=True, text=True)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


# --- absurd sizes and shapes: typed errors before anything is allocated ---


def _one_node_model(node, inputs=(), initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "absurd",
        list(inputs),
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        list(initializers),
    )
    return helper.make_model(graph, **OPSET)


ABSURD_MODELS = {
    "constant-of-shape": (
        _one_node_model(
            helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill"),
            initializers=[numpy_helper.from_array(np.array([10**6, 10**6], np.int64), "shape")],
        ),
        "node 'fill' (ConstantOfShape): output #0 of shape [1000000, 1000000] would take 4e+12 bytes",
    ),
    "graph-input": (
        _one_node_model(
            helper.make_node("Relu", ["x"], ["y"], name="relu"),
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10**5, 10**5, 100])],
        ),
        "graph input 'x' of shape [100000, 100000, 100] would take 4e+12 bytes",
    ),
    "initializer-claims-more-data": (
        _one_node_model(
            helper.make_node("Relu", ["w"], ["y"], name="relu"),
            initializers=[TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], float_data=[1.0])],
        ),
        "tensor 'w': 1 values in float_data, expected 4",
    ),
    "initializer-claims-absurd-size": (
        _one_node_model(
            helper.make_node("Relu", ["w"], ["y"], name="relu"),
            initializers=[TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[10**6, 10**6])],
        ),
        "tensor 'w' of shape [1000000, 1000000] would take 4e+12 bytes",
    ),
    "conv-weights-of-wrong-rank": (
        _one_node_model(
            helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[3, 3]),
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
            [numpy_helper.from_array(np.ones(36, np.float32), "w")],
        ),
        "node 'conv' (Conv): input #1 has rank 1 (shape [36]), input #0 rank 4: they must be equal",
    ),
}
ABSURD_MODELS["reshape-of-huge-input"] = (
    _one_node_model(
        helper.make_node("Reshape", ["x", "shape"], ["y"], name="grow"),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2**20, 2**20])],
        [numpy_helper.from_array(np.array([2**40], np.int64), "shape")],
    ),
    "graph input 'x' of shape [1048576, 1048576] would take 4.4e+12 bytes",
)


@pytest.mark.parametrize("model, message", ABSURD_MODELS.values(), ids=ABSURD_MODELS)
def test_absurd_models_fail_with_typed_errors(tmp_path, model, message):
    with pytest.raises(OnnxcError, match=re.escape(message)):
        onnxc.compile(model, tmp_path / "absurd.so")


def test_outputs_too_big_for_memory_raise_runtime_failure(tmp_path):
    """A legal but huge output (16 GiB) under a 4 GiB address-space limit: RuntimeFailure, not MemoryError."""
    model = _one_node_model(
        helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill"),
        initializers=[numpy_helper.from_array(np.array([2**32], np.int64), "shape")],
    )
    library = onnxc.compile(model, tmp_path / "big_output.so")
    script = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from onnxc.errors import RuntimeFailure
from onnxc.runtime import Session
try:
    Session({str(library)!r}).run(None, {{}})
except RuntimeFailure as error:
    print(error)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "cannot allocate the outputs" in result.stdout


# --- a model over 2 GB (protobuf's limit: its weights must be external) ---

BIG_ROWS, BIG_COLUMNS = 65536, 8200  # a 2.15 GB float32 MatMul weight
BIG_WEIGHT_BYTES = BIG_ROWS * BIG_COLUMNS * 4


def _big_weight_rows(start: int, stop: int) -> np.ndarray:
    """Rows start..stop of the big weight: small integers, so sums are exact in float32."""
    return np.broadcast_to((np.arange(start, stop, dtype=np.float32) % 7 - 3)[:, None], (stop - start, BIG_COLUMNS))


@pytest.fixture(scope="module")
def big_model(tmp_path_factory) -> Iterator[Path]:
    """The model in a folder of its own, deleted afterwards (it holds gigabytes)."""
    folder = tmp_path_factory.mktemp("big")
    free = shutil.disk_usage(folder).free
    if free < 8 << 30:
        pytest.skip(f"needs 8 GB free in {folder} for a 2.15 GB weight, its object and library; {free >> 30} GB free")
    with open(folder / "w.bin", "wb") as data:
        for start in range(0, BIG_ROWS, 4096):
            data.write(np.ascontiguousarray(_big_weight_rows(start, start + 4096), "<f4").tobytes())
    weight = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[BIG_ROWS, BIG_COLUMNS])
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "w.bin"), ("offset", "0"), ("length", str(BIG_WEIGHT_BYTES))):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, BIG_ROWS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, BIG_COLUMNS])],
        [weight],
    )
    onnx.save(helper.make_model(graph, **OPSET), folder / "big.onnx")
    yield folder / "big.onnx"
    shutil.rmtree(folder)


def _peak_rss_of_compile(model: Path, output: Path, emit: str) -> int:
    script = (
        "import resource, sys, onnxc\n"
        f"onnxc.compile({str(model)!r}, {str(output)!r}, emit={emit!r})\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1]
    return int(result.stdout)


@pytest.mark.slow
def test_model_over_two_gigabytes_imports_reading_weights_once(big_model):
    assert _peak_rss_of_compile(big_model, big_model.with_suffix(".mlir"), "krnl") < 1.25 * BIG_WEIGHT_BYTES


@pytest.mark.slow
def test_model_over_two_gigabytes_compiles_and_runs(big_model):
    library = big_model.with_suffix(".so")
    assert _peak_rss_of_compile(big_model, library, "lib") < 1.25 * BIG_WEIGHT_BYTES
    x = np.random.default_rng(0).integers(-2, 3, (1, BIG_ROWS)).astype(np.float32)
    expected = sum(
        x[:, start : start + 4096] @ _big_weight_rows(start, start + 4096) for start in range(0, BIG_ROWS, 4096)
    )
    with Session(library) as session:
        np.testing.assert_array_equal(session.run(None, {"x": x})[0], expected)


def test_names_that_are_not_utf8_are_refused(tmp_path):
    """protobuf returns invalid UTF-8 in a string field as bytes; the importer refuses it by field."""
    from onnxc.examples.mnist import build_mnist_cnn

    data = bytearray(build_mnist_cnn().SerializeToString())
    data[data.find(b"relu1") + 4] = 0xE4
    path = tmp_path / "bad_name.onnx"
    path.write_bytes(data)
    with pytest.raises(InvalidModelError, match=re.escape("node #1: field 'name' is not valid UTF-8: b'relu\\xe4'")):
        onnxc.compile(path, tmp_path / "bad_name.so")
