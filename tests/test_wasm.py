"""WebAssembly end to end: compile for wasm32, run in node, compare with the x86 build.

Models run through `EmulatedSession` (node with runtime/js/harness.mjs over the
JavaScript loader runtime/js/onnxc.mjs) and through the loader's own API, as a
web page would use it. Outputs must match the host build as in test_cross.py.
The tests skip only when node is missing locally; under CI (`CI` set) they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_cross import _host_run, _model, assert_same_outputs

import onnxc
from onnxc.compiler import default_output_path
from onnxc.errors import InputError, InvalidModelError, RuntimeFailure
from onnxc.runtime import library as runtime_library
from onnxc.tools.emulation import EmulatedSession, EmulatorMissingError, emulator_for, needs_emulation

LOADER = os.path.join(os.path.dirname(runtime_library.__file__), "js", "onnxc.mjs")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("wasm"))


@pytest.fixture(autouse=True)
def require_node() -> None:
    if shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install node (apt-get install -y nodejs)")
        pytest.skip("node is not installed")


def _wasm(model: onnx.ModelProto, path: str) -> str:
    library = onnxc.compile(model, path, target="wasm32")
    with open(library, "rb") as file:
        assert file.read(4) == b"\0asm"
    return str(library)


@pytest.mark.parametrize("case", ["mnist", "resnet", "bert", "constant_int64", "constant_float16", "constant_bool"])
def test_wasm_build_matches_host(build_dir, case):
    model, feeds, want = _host_run(case, build_dir)
    library = _wasm(model, os.path.join(build_dir, f"{case}.wasm"))
    assert needs_emulation(library) and emulator_for(library).program == "node"
    session = EmulatedSession(library)
    assert session.signature["target"] == "wasm32-unknown-wasi"
    assert_same_outputs(session.run(None, feeds), want)


def _compare_in_wasm(model: onnx.ModelProto, path: str, feeds_list: list[dict]) -> EmulatedSession:
    host = onnxc.Session(onnxc.compile(model, path + ".so"))
    session = EmulatedSession(_wasm(model, path + ".wasm"), repeat=2)
    for feeds in feeds_list:
        got, want = session.run(None, feeds), host.run(None, feeds)
        assert [g.shape for g in got] == [w.shape for w in want]
        assert_same_outputs(got, want)
    return session


def _symbolic_model() -> onnx.ModelProto:
    """x [N, 4] -> y = Relu(x W) [N, 3] and c = Concat(x, x) [2*N, 4] (a dim expression)."""
    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Relu", ["m"], ["y"]),
        helper.make_node("Concat", ["x", "x"], ["c"], axis=0),
    ]
    x, y, c = (helper.make_tensor_value_info(name, TensorProto.FLOAT, dims) for name, dims in
               (("x", ["N", 4]), ("y", ["N", 3]), ("c", [None, 4])))  # fmt: skip
    return _model(nodes, [x], [y, c], [w], "symbolic")


def test_wasm_symbolic_dims(build_dir):
    """A caller-chosen batch size N and an output of 2*N rows."""
    batches = [{"x": np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)} for n in (5, 1)]
    session = _compare_in_wasm(_symbolic_model(), os.path.join(build_dir, "symbolic"), batches)
    assert [arg.shape for arg in session.get_outputs()] == [("N", 3), ("2*N", 4)]
    with pytest.raises(InputError, match="expected dtype float32, got float64"):
        session.run(None, {"x": np.zeros((1, 4))})


def test_wasm_dynamic_outputs(build_dir):
    """Library-allocated outputs: malloc takes a 32-bit size_t on wasm32."""
    nodes = [helper.make_node("NonZero", ["x"], ["nonzero"]), helper.make_node("Neg", ["x"], ["negated"])]
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [3, 4])
    outputs = [
        helper.make_tensor_value_info("nonzero", TensorProto.INT64, [2, "n"]),
        helper.make_tensor_value_info("negated", TensorProto.INT64, [3, 4]),
    ]
    feeds = [{"x": np.array([[0, 7, 0, -1], [7, 0, 300, 0], [0, 0, 0, 2**40]])}, {"x": np.zeros((3, 4), np.int64)}]
    session = _compare_in_wasm(_model(nodes, [x], outputs, [], "dynamic"), os.path.join(build_dir, "dynamic"), feeds)
    assert [arg.shape for arg in session.get_outputs()] == [(2, None), (3, 4)]


def test_status_from_the_wasm_module_is_reported(build_dir):
    model, _, _ = _host_run("mnist", build_dir)
    session = EmulatedSession(_wasm(model, os.path.join(build_dir, "status.wasm")))
    wrong_shape = [(np.zeros((1, 1, 28, 27), np.float32), 1)]  # bypasses Session's own checks
    with pytest.raises(RuntimeFailure, match=r"returned 5 \(ONNXC_ERR_SHAPE.*under node"):
        session._invoke(wrong_shape, [(np.empty((1, 10), np.float32), 1)])


def test_cli_compiles_and_runs_wasm(build_dir, tmp_path):
    """`onnxc model.onnx --target wasm32` writes model.wasm; `onnxc run` runs it in node."""
    model, feeds, want = _host_run("mnist", build_dir)
    onnx.save(model, tmp_path / "mnist.onnx")
    np.save(tmp_path / "image.npy", feeds["input"])
    assert default_output_path(tmp_path / "mnist.onnx", "lib", "wasm32") == tmp_path / "mnist.wasm"
    cli = [sys.executable, "-m", "onnxc.cli"]
    compiled = subprocess.run(
        [*cli, str(tmp_path / "mnist.onnx"), "--target", "wasm32"], capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run(
        [*cli, "run", str(tmp_path / "mnist.wasm"), "--input", f"input={tmp_path / 'image.npy'}",
         "--output-dir", str(tmp_path / "out"), "--repeat", "3"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "logits: float32[1, 10]" in ran.stdout and "(emulated by node)" in ran.stdout
    assert_same_outputs([np.load(tmp_path / "out" / "logits.npy")], want)


def test_native_runtime_refuses_wasm_and_points_to_onnxc_run(build_dir):
    model, _, _ = _host_run("constant_int8", build_dir)
    library = _wasm(model, os.path.join(build_dir, "refused.wasm"))
    with pytest.raises(InvalidModelError, match=r"is a WebAssembly module: run it with `onnxc run`"):
        onnxc.Session(library)


def test_missing_node_names_the_package(build_dir, monkeypatch, tmp_path):
    model, _, _ = _host_run("constant_int8", build_dir)
    library = _wasm(model, str(tmp_path / "int8.wasm"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no node on it
    with pytest.raises(EmulatorMissingError, match=r"WebAssembly modules needs node: apt-get install -y nodejs"):
        EmulatedSession(library)


def _node(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["node", "--input-type=module", "-e", script, *args], capture_output=True, text=True, timeout=60
    )


def test_javascript_loader_runs_typed_arrays(build_dir):
    """The loader's API, as a page uses it: load, read the signature, run on a Float32Array."""
    model, feeds, want = _host_run("mnist", build_dir)
    library = _wasm(model, os.path.join(build_dir, "loader.wasm"))
    script = f"""
        import {{ loadModel, OnnxcError }} from {json.dumps("file://" + LOADER)};
        const model = await loadModel(process.argv[1]);
        const image = Float32Array.from(JSON.parse(process.argv[2]));
        const {{ logits }} = model.run({{ input: image }});
        let error = null;
        try {{ model.run({{ input: new Float64Array(784) }}); }}
        catch (e) {{ error = e instanceof OnnxcError && e.message; }}
        let shapeError = null;
        try {{ model.run({{ input: {{ data: image.subarray(1), shape: [1, 1, 28, 27] }} }}); }}
        catch (e) {{ shapeError = e.message; }}
        console.log(JSON.stringify({{
            target: model.signature.target, inputs: model.inputs, data: Array.from(logits.data),
            shape: logits.shape, dtype: logits.dtype, error, shapeError }}));
    """
    ran = _node(script, library, json.dumps(feeds["input"].reshape(-1).tolist()))
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["target"] == "wasm32-unknown-wasi"
    assert result["inputs"] == [{"name": "input", "dtype": "float32", "shape": [1, 1, 28, 28]}]
    assert (result["shape"], result["dtype"]) == ([1, 10], "float32")
    assert_same_outputs([np.array(result["data"], np.float32).reshape(1, 10)], want)
    assert result["error"] == "input 'input': expected a Float32Array (float32), got Float64Array"
    assert result["shapeError"] == "input 'input': dim 3 must be 28, got 27"


def test_javascript_loader_evaluates_symbolic_dims(build_dir):
    """The loader binds N from the input's shape and allocates the 2*N-row output."""
    model = _symbolic_model()
    library = _wasm(model, os.path.join(build_dir, "symbolic-loader.wasm"))
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    script = f"""
        import {{ loadModel }} from {json.dumps("file://" + LOADER)};
        const model = await loadModel(process.argv[1]);
        const x = {{ data: Float32Array.from(JSON.parse(process.argv[2])), shape: [3, 4] }};
        const {{ y, c }} = model.run({{ x }});
        let error = null;
        try {{ model.run({{ x: {{ data: new Float32Array(0), shape: [2147483648, 4] }} }}); }} catch (e) {{ error = e.message; }}
        console.log(JSON.stringify({{ y: [Array.from(y.data), y.shape], c: [Array.from(c.data), c.shape], error }}));
    """
    ran = _node(script, library, json.dumps(x.reshape(-1).tolist()))
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    want = onnxc.Session(onnxc.compile(model, os.path.join(build_dir, "symbolic-loader.so"))).run(None, {"x": x})
    got = [np.array(data, np.float32).reshape(shape) for data, shape in (result["y"], result["c"])]
    assert [g.shape for g in got] == [(3, 3), (6, 4)]
    assert_same_outputs(got, want)
    assert result["error"] == "input 'x': dim 0 (N) is 2147483648, outside [0, 2147483647]"
