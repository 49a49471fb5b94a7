# RUN: %python %S/../inputs/make_model.py mnist %t.onnx
# RUN: onnxc %t.onnx -O0 --emit onnx -o - | filecheck %s

# Every value gets a static type; Reshape's shape comes from its constant operand.
# CHECK: "onnx.Conv"{{.*}} -> tensor<1x8x28x28xf32>
# CHECK: "onnx.MaxPool"{{.*}} -> tensor<1x8x14x14xf32>
# CHECK: "onnx.Conv"{{.*}} -> tensor<1x16x14x14xf32>
# CHECK: "onnx.MaxPool"{{.*}} -> tensor<1x16x4x4xf32>
# CHECK: "onnx.Reshape"{{.*}} -> tensor<1x256xf32>
# CHECK: "onnx.MatMul"{{.*}} -> tensor<1x10xf32>
