# RUN: %python %s %t.onnx
# RUN: onnxc %t.onnx --emit llvm --mcpu skylake-avx512 -o - | filecheck %s

# A Conv of 32 groups of 8 channels over 28x28 is one product per group (a batch triple
# each): 8 rows x 840 columns (28 rows of the 30-wide padded image, read in place), one
# row tile x 27 column tiles of 32. The thread pool takes the 32 products as one job over
# the grid of products x tiles (gemm_batches.py), 864 tiles, where each product had been
# a job of its own (32 joins per conv). A thread's product k starts where the op's
# offsets table (4 per product: A, B, C, bias) says.
# CHECK: call void @onnxc_parallel_for(ptr {{.*}}.batches.slice{{.*}}, ptr {{.*}}, i64 0, i64 864)
# CHECK: define internal void @{{.*}}.batches.slice
# CHECK: udiv i64 %{{.*}}, 27
# CHECK: product.body:
# CHECK: shl i64 %product{{.*}}, 5
# CHECK-COUNT-4: load i64, ptr

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
weights = numpy_helper.from_array(rng.standard_normal((256, 8, 3, 3)).astype(np.float32), "w")
bias = numpy_helper.from_array(rng.standard_normal(256).astype(np.float32), "b")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=32, pads=[1, 1, 1, 1])],
    "batches",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 28, 28])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256, 28, 28])],
    [weights, bias],
)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
