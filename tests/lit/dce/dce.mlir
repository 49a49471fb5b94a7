// RUN: onnxc-opt %s -p dce --print-debuginfo | filecheck %s

// Ops whose results are unused go, transitively; used ones stay.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32> loc("dead_const")
    %d = "onnx.Mul"(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("dead_mul")
    %e = "onnx.Exp"(%d) : (tensor<4xf32>) -> tensor<4xf32> loc("dead_exp")
    %y = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("live")
    func.return %y : tensor<4xf32>
  }
}
// CHECK-NOT: dead_
// CHECK:     %[[Y:.*]] = "onnx.Relu"(%x) {{.*}} loc("live")
// CHECK-NOT: dead_
// CHECK:     func.return %[[Y]]
