# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm --mcpu skylake-avx512 -o - | filecheck %s

# A MatMul [72, 64] x [64, 224] on AVX-512: 6 row tiles of 12 rows, 7 column tiles of
# 32 columns. The thread pool splits the grid of all 42 tiles (tile_grid.py), numbered
# column tile first (there are more of them): a thread's range of tiles is cut into at
# most three rectangles of 6-tile lines, so 2 threads take 21 tiles each (splitting the
# column tiles alone gave them 3 and 4).
# CHECK: call void @onnxc_parallel_for(ptr {{.*}}.gemm.slice{{.*}}, ptr {{.*}}, i64 0, i64 42)
# CHECK: define internal void @{{.*}}.gemm.slice
# CHECK-DAG: udiv i64 %{{.*}}, 6
# CHECK-DAG: urem i64 %{{.*}}, 6

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

weights = numpy_helper.from_array(np.ones((64, 224), np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"])],
    "tile_grid",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [72, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [72, 224])],
    [weights],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
