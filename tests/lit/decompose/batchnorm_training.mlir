// RUN: onnxc-opt %s -p shape-inference,decompose --print-debuginfo | filecheck %s

// BatchNormalization has a kernel, for inference only: in training mode decompose inlines
// the spec's formula instead — batch statistics over every dim but 1, the inference-mode
// op on them, and the running statistics updated with momentum.
builtin.module attributes {onnx.opset = 15 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %y, %rm, %rv = "onnx.BatchNormalization"(%x, %s, %b, %m, %v) <{resultSegmentSizes = array<i32: 1, 1, 1>}> {training_mode = 1 : i64, momentum = 8.000000e-01 : f32} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) loc("bn")
    func.return %y, %rm, %rv : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[MEAN:.*]] = "onnx.ReduceMean"(%x, {{.*}}) {{.*}} -> tensor<1x3x1xf32> loc("bn/ReduceMean_{{[0-9]+}}")
// CHECK:     %[[VAR:.*]] = "onnx.ReduceMean"({{.*}}) {{.*}} -> tensor<3xf32> loc("bn/ReduceMean_{{[0-9]+}}")
// CHECK:     %[[Y:.*]] = "onnx.BatchNormalization"(%x, %s, %b, {{.*}}, %[[VAR]]) {{.*}} -> tensor<2x3x4xf32> loc("bn/BatchNormalization_{{[0-9]+}}")
// CHECK-NOT: training_mode
// CHECK:     %[[RM:.*]] = "onnx.Add"{{.*}} -> tensor<3xf32>
// CHECK:     %[[RV:.*]] = "onnx.Add"{{.*}} -> tensor<3xf32>
// CHECK:     func.return %[[Y]], %[[RM]], %[[RV]] : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
