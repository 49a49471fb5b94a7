"""Loop nests of one shape class share one kernel function (onnxc/codegen/kernel_sharing.py)."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from helpers import compile_model, parse
from onnx import TensorProto, helper, numpy_helper

import onnxc
from onnxc.codegen import emit_llvm_ir

# y1 = x * w1, y2 = x * w2 (one shape class: only the weights differ), y3 = x * 2 and
# y4 = x * 3 (the constants differ: two kernels).
NESTS = """
builtin.module {
  func.func @main_graph(%x: memref<64xf32>, %y1: memref<64xf32>, %y2: memref<64xf32>,
                        %y3: memref<64xf32>, %y4: memref<64xf32>) {
    %w1 = "krnl.global"() <{value = #onnx.weight<"w1", tensor<64xf32>>}> : () -> memref<64xf32>
    %w2 = "krnl.global"() <{value = #onnx.weight<"w2", tensor<64xf32>>}> : () -> memref<64xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 64 : index
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i] : memref<64xf32>
      %b = memref.load %w1[%i] : memref<64xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %y1[%i] : memref<64xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i] : memref<64xf32>
      %b = memref.load %w2[%i] : memref<64xf32>
      %p = arith.mulf %a, %b : f32
      memref.store %p, %y2[%i] : memref<64xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i] : memref<64xf32>
      %p = arith.mulf %a, %two : f32
      memref.store %p, %y3[%i] : memref<64xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %a = memref.load %x[%i] : memref<64xf32>
      %p = arith.mulf %a, %three : f32
      memref.store %p, %y4[%i] : memref<64xf32>
    }
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y1", "y2", "y3", "y4"]}> : () -> ()
}
"""
W1 = np.linspace(-1, 1, 64, dtype=np.float32)
W2 = np.linspace(3, -2, 64, dtype=np.float32)


def kernels(llvm_ir: str) -> list[str]:
    """The defined kernel functions (one per distinct nest)."""
    return re.findall(r"^define internal [^@]*@\"?(main_graph\.nest\d+)\"?\(", llvm_ir, re.MULTILINE)


def test_nests_differing_only_in_weights_share_a_kernel():
    text = emit_llvm_ir(parse(NESTS, w1=W1, w2=W2), "x86_64")
    assert kernels(text) == ["main_graph.nest7", "main_graph.nest9", "main_graph.nest10"]
    assert len(re.findall(r"call void @\"?main_graph\.nest7\"?\(", text)) == 2
    # The shared kernel takes the weights as a pointer with what LLVM knew of the global: alignment, size.
    (header,) = re.findall(r"define internal void @\"?main_graph\.nest7\"?\(.*", text)
    assert header.count("noalias") == 3 and "align 64 dereferenceable(256)" in header


def test_shared_kernel_numbers(tmp_path):
    model = compile_model(parse(NESTS, w1=W1, w2=W2), tmp_path / "nests.so")
    x = np.linspace(-2, 5, 64, dtype=np.float32)
    y1, y2, y3, y4 = model.run(x)
    np.testing.assert_array_equal(y1, x * W1)
    np.testing.assert_array_equal(y2, x * W2)
    np.testing.assert_array_equal(y3, x * 2)
    np.testing.assert_array_equal(y4, x * 3)


# x [2x4] copied into y1 [2x4] and into the first columns of y2 [2x8]: the same ops,
# but rows of y2 are 8 apart, so the kernels differ.
COPIES = """
builtin.module {
  func.func @main_graph(%x: memref<2x4xf32>, %y1: memref<2x4xf32>, %y2: memref<2x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c2 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %v = memref.load %x[%i, %j] : memref<2x4xf32>
        memref.store %v, %y1[%i, %j] : memref<2x4xf32>
      }
    }
    scf.for %i = %c0 to %c2 step %c1 {
      scf.for %j = %c0 to %c4 step %c1 {
        %v = memref.load %x[%i, %j] : memref<2x4xf32>
        memref.store %v, %y2[%i, %j] : memref<2x8xf32>
      }
    }
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y1", "y2"]}> : () -> ()
}
"""


def test_nests_over_buffers_of_other_shapes_do_not_share():
    assert len(kernels(emit_llvm_ir(parse(COPIES), "x86_64"))) == 2


def _conv_chain(layers: int, channels: int = 8, size: int | str = 10, group: int = 1) -> onnx.ModelProto:
    """`layers` 3x3 Conv + Relu of equal shapes and distinct weights: one shape class."""
    rng = np.random.default_rng(0)
    nodes, initializers, x = [], [], "x"
    for layer in range(layers):
        weight = rng.standard_normal((channels, channels // group, 3, 3)).astype(np.float32) / 8
        bias = rng.standard_normal(channels).astype(np.float32)
        initializers += [numpy_helper.from_array(weight, f"w{layer}"), numpy_helper.from_array(bias, f"b{layer}")]
        nodes += [
            helper.make_node("Conv", [x, f"w{layer}", f"b{layer}"], [f"c{layer}"], pads=[1, 1, 1, 1], group=group),
            helper.make_node("Relu", [f"c{layer}"], [f"r{layer}"]),
        ]
        x = f"r{layer}"
    shape = [1, channels, size, size]
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)],
        initializers,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_conv_layers_of_one_shape_share_kernels(tmp_path):
    """Four layers compile to as many kernels as one layer (sixteen before kernels were shared)."""
    ort = pytest.importorskip("onnxruntime")
    model = _conv_chain(4)
    path = tmp_path / "chain.onnx"
    onnx.save(model, path)
    text = onnxc.compile(path, tmp_path / "chain.ll", emit="llvm").read_text()
    one_layer = onnxc.compile(_conv_chain(1), tmp_path / "one.ll", emit="llvm").read_text()
    assert len(kernels(text)) == len(kernels(one_layer)) > 1
    x = np.random.default_rng(1).standard_normal((1, 8, 10, 10)).astype(np.float32)
    (got,) = onnxc.Session(onnxc.compile(path, tmp_path / "chain.so")).run(None, {"x": x})
    (want,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_nests_in_run_time_branches_share_kernels(tmp_path):
    """Depthwise convs over an image of run-time size take one of two kernels, chosen at run
    time (depthwise_lanes.py): the nests in those branches share kernels too (a MobileNetV2 of
    free height and width compiled in 12 s, not 8)."""
    ort = pytest.importorskip("onnxruntime")
    nested = r"^define internal [^@]*@\"?(main_graph(?:\.nest\d+\.\d+)+\.nest\d+)\"?\("
    texts = []
    for layers in (1, 4):
        model = _conv_chain(layers, channels=16, size="H", group=16)
        texts.append(onnxc.compile(model, tmp_path / f"chain{layers}.ll", emit="llvm").read_text())
    one, four = (re.findall(nested, text, re.MULTILINE) for text in texts)
    assert len(one) > 1 and len(four) < 2 * len(one)  # 12 kernels for 4 layers unshared
    model = _conv_chain(4, channels=16, size="H", group=16)
    session = onnxc.Session(onnxc.compile(model, tmp_path / "chain.so"))
    reference = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for size in (6, 40):
        x = np.random.default_rng(size).standard_normal((1, 16, size, size)).astype(np.float32)
        (want,) = reference.run(None, {"x": x})
        np.testing.assert_allclose(session.run(None, {"x": x})[0], want, rtol=1e-4, atol=1e-5)


def test_one_shape_class_on_and_off_the_thread_pool(tmp_path):
    """Nests of one shape class over run-time dims, one estimated big enough for the thread
    pool and one not (their trip counts come from different dims): each gets its own kernel
    (sharing one called both ways crashed the compiler)."""
    from onnxc.tools.conformance import all_cases, with_symbolic_inputs

    case = all_cases()["test_layer_normalization_4d_axis1_expanded"]
    session = onnxc.Session(onnxc.compile(with_symbolic_inputs(case.model), tmp_path / "model.so"))
    ((inputs, expected),) = case.data_sets
    names = [i.name for i in session.get_inputs()]
    feeds = dict(zip(names, inputs)) if isinstance(inputs, list) else inputs
    np.testing.assert_allclose(session.run(None, feeds)[0], np.asarray(expected[0]), rtol=1e-4, atol=1e-5)
