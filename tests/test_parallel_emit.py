"""A module optimized and emitted in parts, in parallel processes (onnxc/codegen/parallel_emit.py)."""

from __future__ import annotations

import os
import re
import threading
import time

import llvmlite.binding as llvm_binding
import numpy as np
import onnx
import pytest
from helpers import Model, make_model, rand
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from onnxc.codegen import emit_library, parallel_emit, resolve_target
from onnxc.codegen.llvm import translate_module
from onnxc.codegen.parallel_emit import compile_parts, split_module
from onnxc.compiler import get_pass, import_model, make_context, stages
from onnxc.errors import CompileError


def conv_net() -> onnx.ModelProto:
    """Two convolutions (GEMM micro-kernels shared by their kernels), a ReLU and a Gemm: several kernels."""
    rng = np.random.default_rng(3)
    weights = {
        "w1": rng.standard_normal((16, 3, 3, 3)).astype(np.float32),
        "w2": rng.standard_normal((16, 16, 3, 3)).astype(np.float32),
        "wg": rng.standard_normal((16 * 8 * 8, 10)).astype(np.float32),
        "shape": np.array([1, -1], dtype=np.int64),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c2", "shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wg"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(array, name) for name, array in weights.items()],
    )
    return make_model(graph)


def loops_module(model: onnx.ModelProto):
    module = import_model(model)
    ctx = make_context()
    for _, passes in stages(3):
        for name in passes:
            get_pass(name)().apply(ctx, module)
    return module


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of any size: the test model is far below the size that pays for a process."""
    monkeypatch.setattr(parallel_emit, "MIN_PART_LINES", 1)


def test_each_kernel_is_defined_in_one_part_and_declared_where_called(small_parts):
    translation = translate_module(loops_module(conv_net()), resolve_target("x86_64"), "conv_net")
    texts = split_module(translation.module, 3)
    assert len(texts) == 3
    defined = [set(re.findall(r'^define hidden [^@]*@"([^"]+)"', text, re.MULTILINE)) for text in texts]
    assert all(defined[1:]) and not set.intersection(*defined)
    kernels = set().union(*defined)
    noinline = re.findall(r'^define internal [^@]*@"([^"]+)"\(.*noinline', str(translation.module), re.MULTILINE)
    assert kernels <= set(noinline)
    # The GEMM helpers stay internal, copied into the parts that call them.
    assert not any(".tiles" in name or "onnxc.gemm." in name for name in kernels)
    assert 'define i32 @"run_main_graph"' in texts[0]
    for index, text in enumerate(texts):
        module = llvm_binding.parse_assembly(text)
        module.verify()
        for other, names in enumerate(defined):
            for name in names:
                if other != index and f'@"{name}"' in text:
                    assert re.search(rf'^declare hidden [^@]*@"{re.escape(name)}"', text, re.MULTILINE)


def test_split_build_computes_what_the_single_module_build_does(tmp_path, small_parts):
    model = conv_net()
    x = rand(1, 3, 8, 8)
    outputs, stages_seen = [], []
    for processes in (1, 2, 3):
        path = tmp_path / f"net{processes}.so"
        emit_library(
            loops_module(model), path, target="x86_64", processes=processes, on_stage=lambda s, _: stages_seen.append(s)
        )
        outputs.append(Model(path).run(x)[0])
    assert "LLVM optimize + emit (2 parts, 2 processes)" in stages_seen
    assert "LLVM optimize + emit (3 parts, 3 processes)" in stages_seen
    np.testing.assert_array_equal(outputs[0], outputs[1])
    np.testing.assert_array_equal(outputs[0], outputs[2])
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(outputs[0], expected, rtol=1e-4, atol=1e-4)


def test_threads_compiling_at_once_each_fork_safely(tmp_path, small_parts):
    """A fork while another thread is inside LLVM would leave the child waiting forever on
    llvmlite's lock: compile_parts forks holding it."""
    modules = [loops_module(conv_net()) for _ in range(2)]
    errors = []

    def build(index: int) -> None:
        try:
            emit_library(modules[index], tmp_path / f"net{index}.so", target="x86_64", processes=2)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=build, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(thread.is_alive() for thread in threads) and not errors
    x = rand(1, 3, 8, 8)
    np.testing.assert_array_equal(Model(tmp_path / "net0.so").run(x)[0], Model(tmp_path / "net1.so").run(x)[0])


def test_small_modules_stay_whole():
    translation = translate_module(loops_module(conv_net()), resolve_target("x86_64"), "conv_net")
    assert split_module(translation.module, 2) == [str(translation.module)]


def test_parts_come_back_in_order_from_any_process():
    texts = [f"part {index}" for index in range(7)]
    assert compile_parts(texts, str.encode, processes=3) == [text.encode() for text in texts]


def test_a_part_failing_here_is_a_compile_error():
    def fail(text: str) -> bytes:
        raise CompileError(f"{text} is broken")

    with pytest.raises(CompileError, match="part is broken"):
        compile_parts(["part"], fail, processes=2)


def test_a_part_failing_in_a_child_process_is_a_compile_error(tmp_path):
    parent, started = os.getpid(), tmp_path / "child-started"

    def fail_in_child(text: str) -> bytes:
        if os.getpid() == parent:
            deadline = time.monotonic() + 60
            while not started.exists() and time.monotonic() < deadline:  # until the child takes a part
                time.sleep(0.01)
            return text.encode()
        started.touch()
        raise ValueError(f"{text} is broken")

    with pytest.raises(CompileError, match="ValueError: part is broken"):
        compile_parts(["part"] * 4, fail_in_child, processes=2)
