# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm --mcpu x86-64-v3 -o - | filecheck %s

# A 3x3 Conv, stride 1, pads 1, 32 -> 16 channels over 7x7, then Relu, with its channels in the
# lanes (a window A, a transposed C): with AVX2 (8-float vectors, one per tile row) a tile is one
# output row of 7 pixels, each broadcast from the padded 9x9 image at the offset of column k
# (one table, as a window B's rows), times one vector of 8 channels of the packed weights.
# CHECK: @{{.*}}.rows = private constant [288 x i32] [i32 0, i32 1, i32 2, i32 9, i32 10, i32 11, i32 18, i32 19, i32 20, i32 81,
# CHECK: define internal fastcc void @onnxc.gemm.r7xcbt.{{[0-9]+}}(
# Lane j of a tile's vector is channel j's pixel: 49 floats apart in the NCHW output.
# CHECK: getelementptr {{.*}}float, ptr %{{.+}}, <8 x i64> <i64 0, i64 49, i64 98, i64 147, i64 196, i64 245, i64 294, i64 343>
# CHECK: k.body:
# The weights stream from memory: each step prefetches its panel's row 24 steps ahead (64-byte rows).
# CHECK: %[[ROW:.+]] = getelementptr inbounds i8, ptr %{{.+}}, i64 %{{.+}}
# CHECK-NEXT: load <8 x float>, ptr %[[ROW]], align 4
# CHECK-NEXT: %[[AHEAD:.+]] = getelementptr i8, ptr %[[ROW]], i64 1536
# CHECK-NEXT: call void @llvm.prefetch.p0(ptr %[[AHEAD]], i32 0, i32 3, i32 1)
# CHECK: %[[OFFSET:.+]] = load i32, ptr
# CHECK-NEXT: %[[COLUMN:.+]] = sext i32 %[[OFFSET]] to i64
# CHECK: %[[PIXEL:.+]] = getelementptr {{.*}}float, ptr %{{.+}}, i64 %[[COLUMN]]
# CHECK-NEXT: load float, ptr %[[PIXEL]], align 4
# The last reduction block stores the clamped tile lane by lane, into each channel's plane.
# CHECK: select <8 x i1>
# CHECK: call void @llvm.masked.scatter.v8f32.v8p0(<8 x float>

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

weights = numpy_helper.from_array(np.ones((16, 32, 3, 3), np.float32), "w")
bias = numpy_helper.from_array(np.ones(16, np.float32), "b")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
    "lanes",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 7, 7])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 7, 7])],
    [weights, bias],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
