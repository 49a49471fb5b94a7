# RUN: %python %S/../inputs/make_model.py symbolic %t.onnx
# RUN: onnxc %t.onnx --emit onnx -o - | filecheck %s
# RUN: onnxc %t.onnx --emit onnx --shape x=8,4 -o - | filecheck %s --check-prefix=PINNED
# RUN: not onnxc %t.onnx --emit onnx --shape x=8,5 -o - 2>&1 | filecheck %s --check-prefix=BADPIN

# Symbolic dims keep their names in the tensor encoding through inference.
# CHECK: func.func @main_graph(%{{.*}}: tensor<?x4xf32, ["N", ""]>{{.*}}) -> tensor<?x3xf32, ["N", ""]>
# CHECK: "onnx.Relu"{{.*}} -> tensor<?x4xf32, ["N", ""]>
# CHECK: "onnx.Gemm"{{.*}} -> tensor<?x3xf32, ["N", ""]>

# --shape pins them.
# PINNED: func.func @main_graph(%{{.*}}: tensor<8x4xf32>{{.*}}) -> tensor<8x3xf32>
# PINNED: "onnx.Gemm"{{.*}} -> tensor<8x3xf32>

# BADPIN: onnxc: error: model '{{.*}}.onnx': --shape x=8,5 does not fit the declared shape [N, 4]
