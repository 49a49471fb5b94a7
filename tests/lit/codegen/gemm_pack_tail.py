# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm --mcpu x86-64-v3 -o - | filecheck %s

# A MatMul [40, 16] x [16, 20] for AVX2 (8-float vectors): more rows than a
# register tile, so B is packed into scratch; N = 20 is no whole number of
# vectors, and the tail tile loads the lanes past N. Packing zeroes them, lanes
# 20..23 of each of the 16 packed rows (garbage there, denormals above all,
# slowed every FMA of the tile); LLVM makes each row's zero loop a 16-byte memset.
# CHECK-COUNT-16: call void @llvm.memset.{{.*}}, i8 0, i64 16, i1 false)

import sys

import onnx
from onnx import TensorProto, helper

graph = helper.make_graph(  # B is an input: a constant B would be packed at compile time
    [helper.make_node("MatMul", ["x", "w"], ["y"])],
    "pack_tail",
    [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [40, 16]),
        helper.make_tensor_value_info("w", TensorProto.FLOAT, [16, 20]),
    ],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [40, 20])],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
