"""onnxc.runtime.Session against libraries compiled by onnxc (and a few hand-made ones)."""

from __future__ import annotations

import json
import platform
import re
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxc
import onnxc.runtime
from onnxc import dtypes
from onnxc.errors import InputError, InvalidModelError, RuntimeFailure
from onnxc.runtime import Session
from onnxc.runtime.library import read_elf_identity

SHAPE = (2, 3)


# IR version 8 goes with opset 17 (and is one onnxruntime can read).
OPSET = {"opset_imports": [helper.make_opsetid("", 17)], "ir_version": 8}


def _model(name: str, nodes: list, inputs: list[str], outputs: list[str]) -> onnx.ModelProto:
    """A float32 model whose inputs and outputs all have shape SHAPE."""

    def info(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, SHAPE)

    graph = helper.make_graph(nodes, name, [info(n) for n in inputs], [info(n) for n in outputs])
    return helper.make_model(graph, **OPSET)


ADD_MODEL = _model("add", [helper.make_node("Add", ["a", "b"], ["sum"])], ["a", "b"], ["sum"])
RELU_AND_DOUBLE_MODEL = _model(
    "relu_and_double",
    [helper.make_node("Relu", ["x"], ["relu"]), helper.make_node("Add", ["x", "x"], ["double"])],
    ["x"],
    ["relu", "double"],
)

# int64 with a scalar (rank 0) input, and float16.
MIXED_MODEL = helper.make_model(
    helper.make_graph(
        [helper.make_node("Add", ["i", "s"], ["shifted"]), helper.make_node("Relu", ["h"], ["h_relu"])],
        "mixed",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, [4]),
            helper.make_tensor_value_info("s", TensorProto.INT64, []),
            helper.make_tensor_value_info("h", TensorProto.FLOAT16, [3]),
        ],
        [
            helper.make_tensor_value_info("shifted", TensorProto.INT64, [4]),
            helper.make_tensor_value_info("h_relu", TensorProto.FLOAT16, [3]),
        ],
    ),
    **OPSET,
)


@pytest.fixture(scope="session")
def add_library(tmp_path_factory) -> Path:
    return onnxc.compile(ADD_MODEL, tmp_path_factory.mktemp("add") / "add.so")


@pytest.fixture(scope="session")
def relu_and_double_library(tmp_path_factory) -> Path:
    return onnxc.compile(RELU_AND_DOUBLE_MODEL, tmp_path_factory.mktemp("relu") / "relu_and_double.so")


@pytest.fixture(scope="session")
def mixed_library(tmp_path_factory) -> Path:
    return onnxc.compile(MIXED_MODEL, tmp_path_factory.mktemp("mixed") / "mixed.so")


@pytest.fixture(scope="session")
def add_session(add_library) -> Session:
    return Session(add_library)


def _random(seed: int, shape=SHAPE) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- results ---


def test_add_matches_numpy(add_session):
    a, b = _random(1), _random(2)
    (result,) = add_session.run(None, {"a": a, "b": b})
    assert result.dtype == np.float32 and result.shape == SHAPE
    np.testing.assert_array_equal(result, a + b)


def test_relu_and_double_match_numpy(relu_and_double_library):
    x = _random(3)
    relu, double = Session(relu_and_double_library).run(None, {"x": x})
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_array_equal(double, x + x)


def test_output_names_select_and_order_outputs(relu_and_double_library):
    session, x = Session(relu_and_double_library), _random(4)
    double, relu = session.run(["double", "relu"], {"x": x})
    np.testing.assert_array_equal(double, x + x)
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    (only_relu,) = session.run(["relu"], {"x": x})
    np.testing.assert_array_equal(only_relu, np.maximum(x, 0))


def test_int64_scalar_and_float16(mixed_library):
    i, h = np.arange(4, dtype=np.int64), np.array([1.5, -2.25, 3.0], np.float16)
    shifted, h_relu = Session(mixed_library).run(None, {"i": i, "s": np.int64(7), "h": h})
    np.testing.assert_array_equal(shifted, i + 7)
    np.testing.assert_array_equal(h_relu, np.maximum(h, 0))
    assert (shifted.dtype, h_relu.dtype) == (np.int64, np.float16)


def test_python_scalar_of_the_exact_dtype_is_accepted(mixed_library):
    i, h = np.arange(4, dtype=np.int64), np.zeros(3, np.float16)
    (shifted,) = Session(mixed_library).run(["shifted"], {"i": i, "s": 7, "h": h})  # a Python int is int64
    np.testing.assert_array_equal(shifted, i + 7)


@pytest.mark.parametrize(
    "make_view",
    [
        pytest.param(lambda a: np.ascontiguousarray(a.T).T, id="transposed"),
        pytest.param(lambda a: np.repeat(a, 2, axis=1)[:, ::2], id="step-slice"),
        pytest.param(lambda a: np.asfortranarray(a), id="fortran-order"),
    ],
)
def test_non_contiguous_input_is_read_correctly(add_session, make_view):
    a, b = _random(5), _random(6)
    view = make_view(a)
    assert not view.flags.c_contiguous
    np.testing.assert_array_equal(view, a)
    (result,) = add_session.run(None, {"a": view, "b": b})
    np.testing.assert_array_equal(result, a + b)


def test_other_byte_order_input_is_read_correctly(add_session):
    a, b = _random(7), _random(8)
    swapped = a.astype(a.dtype.newbyteorder("S"))
    assert swapped.dtype.byteorder != a.dtype.byteorder and swapped.dtype.newbyteorder("=") == a.dtype
    (result,) = add_session.run(None, {"a": swapped, "b": b})
    np.testing.assert_array_equal(result, a + b)


def test_misaligned_input_is_read_correctly(add_session):
    a, b = _random(9), _random(10)
    buffer = np.zeros(a.nbytes + 1, np.uint8)
    misaligned = buffer[1:].view(np.float32).reshape(SHAPE)
    misaligned[...] = a
    assert not misaligned.flags.aligned
    (result,) = add_session.run(None, {"a": misaligned, "b": b})
    np.testing.assert_array_equal(result, a + b)


def test_each_run_returns_new_output_arrays(add_session):
    a, b = _random(11), _random(12)
    (first,) = add_session.run(None, {"a": a, "b": b})
    (second,) = add_session.run(None, {"a": b, "b": b})
    np.testing.assert_array_equal(first, a + b)
    assert not np.shares_memory(first, second)


# --- description ---


def test_get_inputs_and_outputs(relu_and_double_library, add_session):
    assert [arg.name for arg in add_session.get_inputs()] == ["a", "b"]
    (x,) = Session(relu_and_double_library).get_inputs()
    relu, double = Session(relu_and_double_library).get_outputs()
    assert (x.name, x.shape, x.type, x.dtype) == ("x", SHAPE, "tensor(float)", np.dtype(np.float32))
    assert [relu.name, double.name] == ["relu", "double"]
    assert relu.type == double.type == "tensor(float)"


def test_node_args_match_onnxruntime(mixed_library):
    ort = pytest.importorskip("onnxruntime")
    theirs = ort.InferenceSession(MIXED_MODEL.SerializeToString(), providers=["CPUExecutionProvider"])
    ours = Session(mixed_library)
    ours_described = [(arg.name, list(arg.shape), arg.type) for arg in ours.get_inputs() + ours.get_outputs()]
    theirs_described = [(arg.name, arg.shape, arg.type) for arg in theirs.get_inputs() + theirs.get_outputs()]
    assert ours_described == theirs_described


def test_signature_and_repr(add_session, add_library):
    signature = add_session.signature
    assert signature["abi_version"] == 3
    assert signature["byte_order"] == sys.byteorder
    assert [entry["name"] for entry in signature["inputs"]] == ["a", "b"]
    assert signature["outputs"] == [{"name": "sum", "dtype": "float32", "shape": list(SHAPE)}]
    signature["inputs"].clear()
    assert add_session.signature["inputs"], "the parsed signature is a fresh copy"
    text = repr(add_session)
    assert str(add_library) in text and "a: float32[2, 3]" in text and "sum: float32[2, 3]" in text


def test_threads_is_stored(add_library):
    assert Session(add_library, threads=4).threads == 4
    assert Session(add_library).threads is None
    with pytest.raises(ValueError, match="threads"):
        Session(add_library, threads=0)


def test_relative_path_is_found_in_the_working_directory(add_library, monkeypatch):
    monkeypatch.chdir(add_library.parent)
    assert Session(add_library.name).path == str(add_library)


# --- input checks ---

A, B = np.zeros(SHAPE, np.float32), np.ones(SHAPE, np.float32)
WIDE = np.ones((2, 4), np.float32)

# id: (output_names, input_feed, the InputError's message)
BAD_RUN_ARGUMENTS = {
    "unknown-input": (None, {"a": A, "b": B, "c": B}, "unknown input 'c'; the model's inputs are 'a', 'b'"),
    "missing-input": (None, {"a": A}, "missing input 'b' (float32[2, 3])"),
    "dtype": (None, {"a": A, "b": B.astype(np.float64)}, "input 'b': expected dtype float32, got float64"),
    "int-dtype": (None, {"a": A.astype(np.int32), "b": B}, "input 'a': expected dtype float32, got int32"),
    "python-list": (None, {"a": A.tolist(), "b": B}, "input 'a': expected dtype float32, got float64"),
    "rank": (None, {"a": A, "b": B[0]}, "input 'b': expected rank 2 (shape [2, 3]), got rank 1 (shape [3])"),
    "dim": (None, {"a": A, "b": WIDE}, "input 'b': dim 1 is 4, expected 3 (expected shape [2, 3], got [2, 4])"),
    "ragged": (None, {"a": A, "b": [[1.0], [2.0, 3.0]]}, "input 'b': cannot be made into an array"),
    "feed-not-dict": (None, [A, B], "input_feed must be a dict"),
    "unknown-output": (["sum", "total"], {"a": A, "b": B}, "unknown output 'total'; the model's outputs are 'sum'"),
    "output-names-string": ("sum", {"a": A, "b": B}, "output_names must be a list of names"),
}


@pytest.mark.parametrize("output_names, input_feed, message", BAD_RUN_ARGUMENTS.values(), ids=BAD_RUN_ARGUMENTS)
def test_bad_run_arguments_raise_input_error(add_session, output_names, input_feed, message):
    with pytest.raises(InputError, match=re.escape(message)):
        add_session.run(output_names, input_feed)


# --- native status codes ---

FLOAT, INT32 = dtypes.FLOAT, dtypes.INT32
OUT = [(np.empty(SHAPE, np.float32), FLOAT)]

# id: (inputs, outputs, the status run_main_graph returns), each tensor an (array, ONNX type) pair
BAD_NATIVE_CALLS = {
    "arity": ([(A, FLOAT)], OUT, "1 (ONNXC_ERR_ARITY"),
    "no-outputs": ([(A, FLOAT), (B, FLOAT)], [], "1 (ONNXC_ERR_ARITY"),
    "dtype": ([(A, FLOAT), (B.astype(np.int32), INT32)], OUT, "3 (ONNXC_ERR_DTYPE"),
    "rank": ([(A, FLOAT), (B, FLOAT)], [(np.empty(6, np.float32), FLOAT)], "4 (ONNXC_ERR_RANK"),
    "shape": ([(A, FLOAT), (WIDE, FLOAT)], OUT, "5 (ONNXC_ERR_SHAPE"),
}


@pytest.mark.parametrize("inputs, outputs, status", BAD_NATIVE_CALLS.values(), ids=BAD_NATIVE_CALLS)
def test_native_status_raises_runtime_failure(add_session, inputs, outputs, status):
    """The library's own checks, reached by calling it past the Session's checks."""
    with pytest.raises(RuntimeFailure, match=re.escape(f"run_main_graph returned {status}")):
        add_session._invoke(inputs, outputs)


# --- concurrency ---


def test_concurrent_runs_from_eight_threads(add_library):
    session, threads, runs = Session(add_library), 8, 200
    start = threading.Barrier(threads)

    def work(seed: int) -> bool:
        a, b = _random(seed), _random(seed + 100)
        expected = a + b
        start.wait()
        return all(np.array_equal(session.run(None, {"a": a, "b": b})[0], expected) for _ in range(runs))

    with ThreadPoolExecutor(threads) as pool:
        assert all(pool.map(work, range(threads)))


def test_two_sessions_of_one_library(add_library):
    first, second = Session(add_library), Session(add_library)
    a, b = _random(13), _random(14)
    np.testing.assert_array_equal(first.run(None, {"a": a, "b": b})[0], a + b)
    np.testing.assert_array_equal(second.run(None, {"a": b, "b": b})[0], b + b)


# --- refused libraries ---


def _elf_header(machine: int, byte_order: str, file_type: int = 3, bits: int = 64) -> bytes:
    """The 64-byte ELF header of an otherwise empty file."""
    endian = "<" if byte_order == "little" else ">"
    ident = b"\x7fELF" + bytes([bits // 32, 1 if byte_order == "little" else 2, 1]) + bytes(9)
    return ident + struct.pack(endian + "HHI", file_type, machine, 1) + bytes(40)


def _assert_never_loaded(path: Path) -> None:
    assert str(path) not in Path("/proc/self/maps").read_text()


def test_foreign_architecture_refused_before_dlopen(tmp_path):
    library = tmp_path / "s390x.so"
    library.write_bytes(_elf_header(machine=22, byte_order="big"))
    with pytest.raises(InvalidModelError, match=r"built for s390x \(64-bit, big-endian\), but this machine is"):
        Session(library)
    _assert_never_loaded(library)


def test_library_compiled_for_s390x_refused(tmp_path):
    library = onnxc.compile(ADD_MODEL, tmp_path / "add_s390x.so", target="s390x")
    with pytest.raises(InvalidModelError, match=r"built for s390x \(64-bit, big-endian\)"):
        Session(library)
    _assert_never_loaded(library)


def test_relocatable_object_refused(tmp_path):
    host = read_elf_identity("/proc/self/exe")
    library = tmp_path / "model.o"
    library.write_bytes(_elf_header(host.machine, host.byte_order, file_type=1, bits=host.bits))
    with pytest.raises(InvalidModelError, match="is a relocatable object, not a shared library"):
        Session(library)


@pytest.mark.parametrize("content", [b"", b"not a library\n"], ids=["empty", "text"])
def test_non_elf_file_refused(tmp_path, content):
    library = tmp_path / "model.so"
    library.write_bytes(content)
    with pytest.raises(InvalidModelError, match="not an ELF shared library"):
        Session(library)


def test_missing_file_refused(tmp_path):
    with pytest.raises(InvalidModelError, match="cannot load the library: .*No such file"):
        Session(tmp_path / "missing.so")


def _c_library(directory: Path, source: str) -> Path:
    """A shared library built from C source with the compiler onnxc links with."""
    source_path, library = directory / "library.c", directory / "library.so"
    source_path.write_text(source)
    subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-shared", "-fPIC", str(source_path), "-o", str(library)],
        check=True,
    )
    return library


def _fake_onnxc_library(directory: Path, abi_version: int, signature: dict) -> Path:
    return _c_library(
        directory,
        "#include <stdint.h>\n"
        f"int32_t onnxc_abi_version(void) {{ return {abi_version}; }}\n"
        f"const char *onnxc_signature(void) {{ return {json.dumps(json.dumps(signature))}; }}\n"
        "int32_t run_main_graph(const void *i, int64_t ni, void *o, int64_t no) { return 1; }\n",
    )


def _host_signature(**changes) -> dict:
    signature = {
        "abi_version": 3,
        "model": "fake",
        "target": f"{platform.machine()}-unknown-linux-gnu",
        "byte_order": sys.byteorder,
        "inputs": [],
        "outputs": [],
    }
    return signature | changes


@pytest.mark.parametrize("version", [2, 4])
def test_other_abi_version_refused(tmp_path, version):
    """Version 1 libraries (caller-allocated outputs only) as well as newer ones."""
    library = _fake_onnxc_library(tmp_path, abi_version=version, signature=_host_signature(abi_version=version))
    with pytest.raises(InvalidModelError, match=f"ABI version {version}, this runtime implements version 3"):
        Session(library)


def test_signature_for_other_target_refused(tmp_path):
    library = _fake_onnxc_library(tmp_path, 3, _host_signature(target="s390x-ibm-linux-gnu", byte_order="big"))
    with pytest.raises(InvalidModelError, match=r"built for s390x-ibm-linux-gnu \(big-endian\)"):
        Session(library)


def test_library_without_onnxc_symbols_refused(tmp_path):
    library = _c_library(tmp_path, "int answer(void) { return 42; }\n")
    with pytest.raises(InvalidModelError, match="not an onnxc library: it does not export onnxc_abi_version"):
        Session(library)


# --- deployment ---

COMPILER_PACKAGES = ("xdsl", "llvmlite", "onnx")
LOADED_COMPILER_MODULES = f"sorted(m for m in sys.modules if m.split('.')[0] in {COMPILER_PACKAGES!r})"

# Makes the compiler's packages look uninstalled to the script that follows.
HIDE_COMPILER_PACKAGES = f"""
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {COMPILER_PACKAGES!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}")

sys.meta_path.insert(0, NotInstalled())
"""


def _python(script: str) -> str:
    """The standard output of `script` run by a fresh interpreter."""
    return subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout


def test_import_loads_no_compiler_module():
    assert _python(f"import sys, onnxc.runtime; print({LOADED_COMPILER_MODULES})").strip() == "[]"


def test_runtime_works_without_compiler_packages(add_library):
    _python(
        HIDE_COMPILER_PACKAGES
        + f"""
import numpy as np
import onnxc, onnxc.runtime
session = onnxc.runtime.Session({str(add_library)!r})
(result,) = session.run(None, {{"a": np.ones((2, 3), np.float32), "b": np.ones((2, 3), np.float32)}})
assert (result == 2).all(), result
assert onnxc.Session is onnxc.runtime.Session
assert not {LOADED_COMPILER_MODULES}
"""
    )


def test_c_example_of_abi_doc_runs(add_library, abi_doc_example):
    result = subprocess.run([str(abi_doc_example), str(add_library)], check=True, capture_output=True, text=True)
    signature_line, output_line = result.stdout.splitlines()
    assert json.loads(signature_line.removeprefix("signature: ")) == Session(add_library).signature
    assert output_line == "sum: 0 0 0 0 0 0"
