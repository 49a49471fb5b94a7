# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm --mcpu skylake-avx512 -o - | filecheck %s

# A 1x1 Conv of 96 output channels over an image of run-time height and width: a
# product of 8 row tiles and ceil(h*w / 32) column tiles. Which way the threads'
# tiles are numbered (MatmulPlan.split_rows) is decided at run time from the tile
# counts of that run: row tile first (minor lines of the run-time column tile count)
# when there are at least as many row tiles, else column tile first (lines of 8), one
# emission of the rectangles with selects between the two.
# CHECK: define internal void @{{.*}}.gemm.slice
# CHECK: [[COLUMNS:%.+]] = lshr i64 %{{.+}}, 5
# CHECK: [[ROWS_FIRST:%.+]] = icmp ult i64 %{{.+}}, 288
# CHECK: [[MINOR:%.+]] = select i1 [[ROWS_FIRST]], i64 [[COLUMNS]], i64 8
# CHECK: udiv i64 %{{.+}}, [[MINOR]]

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

weights = numpy_helper.from_array(np.ones((96, 64, 1, 1), np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["y"])],
    "run_time_split",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, "height", "width"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [weights],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
