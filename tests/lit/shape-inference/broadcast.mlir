// RUN: onnxc-opt %s -p shape-inference | filecheck %s

// Broadcasting follows numpy rules; small constants feed shape-dependent ops.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%a: tensor<2x1x5xf32>, %b: tensor<3x1xf32>) -> tensor<*xnone> {
    %s = "onnx.Constant"() {value = dense<[6, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
    %sum = "onnx.Add"(%a, %b) : (tensor<2x1x5xf32>, tensor<3x1xf32>) -> tensor<*xnone>
    %r = "onnx.Reshape"(%sum, %s) : (tensor<*xnone>, tensor<2xi64>) -> tensor<*xnone>
    %t = "onnx.Transpose"(%r) {perm = [1 : i64, 0 : i64]} : (tensor<*xnone>) -> tensor<*xnone>
    func.return %t : tensor<*xnone>
  }
}
// CHECK: func.func @main_graph(%{{.*}}: tensor<2x1x5xf32>, %{{.*}}: tensor<3x1xf32>) -> tensor<5x6xf32>
// CHECK: "onnx.Add"{{.*}} -> tensor<2x3x5xf32>
// CHECK: "onnx.Reshape"{{.*}} -> tensor<6x5xf32>
// CHECK: "onnx.Transpose"{{.*}} -> tensor<5x6xf32>
