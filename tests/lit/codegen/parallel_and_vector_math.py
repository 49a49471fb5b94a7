# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm -o - | filecheck %s
# RUN: onnxc %t.onnx --emit llvm -o - | filecheck %s --check-prefix=NOLIBM

# A Conv + Tanh model. The Tanh nest (one loop over its 16384 elements, its
# dims merged) has independent iterations and enough work: it becomes a kernel
# taking an iteration range, called by the thread pool through a `.slice`
# trampoline that unpacks a context struct.
# Tanh is the inlinable polynomial instead of libm's tanhf.
# CHECK: alloca { ptr, ptr }
# CHECK: call void @onnxc_parallel_for(ptr {{.*}}@main_graph.nest[[NEST:[0-9]+]].slice, ptr {{.*}}, i64 0, i64 16384)
# CHECK-DAG: define internal {{.*}}void @main_graph.nest[[NEST]](ptr noalias {{.*}}, ptr noalias {{.*}}, i64 {{.*}}, i64 {{.*}})
# CHECK-DAG: define internal void @main_graph.nest[[NEST]].slice(ptr noalias {{.*}}, i64 {{.*}}, i64 {{.*}})
# CHECK-DAG: declare void @onnxc_parallel_for(ptr, ptr, i64, i64)
# The inlined polynomial (its fused multiply-adds) instead of libm:
# CHECK-DAG: @llvm.fma.
# NOLIBM-NOT: @tanhf

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

weight = numpy_helper.from_array(np.ones((16, 8, 3, 3), np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Tanh", ["c"], ["y"])],
    "parallel",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])],
    [weight],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
