// RUN: onnxc-opt %s -p shape-inference,cse --print-debuginfo | filecheck %s

// Identical ops on identical operands merge, and equal small constants merge;
// ops differing in an attribute or operand do not.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %c1 = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32> loc("c1")
    %c2 = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32> loc("c2")
    %a = "onnx.Mul"(%x, %c1) : (tensor<4xf32>, tensor<f32>) -> tensor<*xnone> loc("a")
    %b = "onnx.Mul"(%x, %c2) : (tensor<4xf32>, tensor<f32>) -> tensor<*xnone> loc("b")
    %l1 = "onnx.LeakyRelu"(%x) {alpha = 0.1 : f32} : (tensor<4xf32>) -> tensor<*xnone> loc("l1")
    %l2 = "onnx.LeakyRelu"(%x) {alpha = 0.2 : f32} : (tensor<4xf32>) -> tensor<*xnone> loc("l2")
    func.return %a, %b, %l1, %l2 : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     "onnx.Constant"{{.*}} loc("c1")
// CHECK-NOT: loc("c2")
// CHECK:     %[[A:.*]] = "onnx.Mul"{{.*}} loc("a")
// CHECK-NOT: loc("b")
// CHECK:     %[[L1:.*]] = "onnx.LeakyRelu"{{.*}} loc("l1")
// CHECK:     %[[L2:.*]] = "onnx.LeakyRelu"{{.*}} loc("l2")
// CHECK:     func.return %[[A]], %[[A]], %[[L1]], %[[L2]]
