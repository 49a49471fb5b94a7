# RUN: %python %S/../inputs/make_model.py symbolic %t.onnx
# RUN: onnxc %t.onnx --emit onnx -o - | filecheck %s
# RUN: onnxc %t.onnx --emit onnx --shape x=8,4 -o - | filecheck %s --check-prefix=PINNED
# RUN: not onnxc %t.onnx --emit onnx --shape x=8,5 -o - 2>&1 | filecheck %s --check-prefix=BADPIN

# A model separable along its one symbolic dim (symbolic.mlir shows the names kept
# through inference) is compiled for one sample; the graph records the batch loop.
# CHECK: func.func @main_graph(%{{.*}}: tensor<1x4xf32>{{.*}}) -> tensor<1x3xf32> attributes {{.*}}onnx.batch_symbol = "N", onnx.batched_inputs = [1 : i64]
# CHECK: "onnx.Relu"{{.*}} -> tensor<1x4xf32>
# CHECK: "onnx.Gemm"{{.*}} -> tensor<1x3xf32>

# --shape pins them.
# PINNED: func.func @main_graph(%{{.*}}: tensor<8x4xf32>{{.*}}) -> tensor<8x3xf32>
# PINNED: "onnx.Gemm"{{.*}} -> tensor<8x3xf32>

# BADPIN: onnxc: error: model '{{.*}}.onnx': --shape x=8,5 does not fit the declared shape [N, 4]
