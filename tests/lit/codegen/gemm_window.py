# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm --mcpu x86-64-v3 -o - | filecheck %s

# A 3x3 Conv, stride 1, pads 1, on a 2x4x4 image: the kernel reads B in place
# from the zero-padded 2x6x6 image, row k = (c, ky, kx) of B starting at
# c*36 + ky*6 + kx, from a table of the 18 row offsets; no packing, no scratch.
# CHECK: @{{.*}}.rows = private constant [18 x i32] [i32 0, i32 1, i32 2, i32 6, i32 7, i32 8, i32 12, i32 13, i32 14, i32 36, i32 37, i32 38, i32 42, i32 43, i32 44, i32 48, i32 49, i32 50]
# CHECK-NOT: onnxc_thread_scratch
# AVX2: N = 3*6 + 4 = 22 columns, two full 8-float tiles and a masked one.
# CHECK: define internal fastcc void @onnxc.gemm.r3wb.{{[0-9]+}}(
# CHECK: k.body:
# CHECK: %[[OFFSET:.+]] = load i32, ptr
# CHECK-NEXT: %[[ROW:.+]] = sext i32 %[[OFFSET]] to i64
# CHECK-NEXT: %[[B:.+]] = getelementptr {{.*}}float, ptr %{{.+}}, i64 %[[ROW]]
# CHECK-NEXT: load <8 x float>, ptr %[[B]], align 4
# The same row of the next column tile (8 floats on) is prefetched while this one computes.
# CHECK-NEXT: %[[NEXT:.+]] = getelementptr i8, ptr %[[B]], i64 32
# CHECK-NEXT: call void @llvm.prefetch.p0(ptr %[[NEXT]], i32 0, i32 3, i32 1)

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

weights = numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
    "window",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])],
    [weights],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
