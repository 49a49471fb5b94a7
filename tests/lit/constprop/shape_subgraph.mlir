// RUN: onnxc-opt %s -p constprop | filecheck %s

// An exporter's shape sub-graph: Shape of a statically shaped (non-constant) value,
// Gather, Unsqueeze, Concat, then Reshape — all folds into one constant shape.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>) -> tensor<*xnone> {
    %s = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
    %i = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %d0 = "onnx.Gather"(%s, %i) {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
    %ax = "onnx.Constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
    %u = "onnx.Unsqueeze"(%d0, %ax) : (tensor<i64>, tensor<1xi64>) -> tensor<*xnone>
    %m = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %c = "onnx.Concat"(%u, %m) <{operandSegmentSizes = array<i32: 2>}> {axis = 0 : i64} : (tensor<*xnone>, tensor<1xi64>) -> tensor<*xnone>
    %r = "onnx.Reshape"(%x, %c) : (tensor<2x3x4xf32>, tensor<*xnone>) -> tensor<*xnone>
    func.return %r : tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph(%{{.*}}: tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT:   %[[SHAPE:.*]] = "onnx.Constant"() {value = #onnx.weight<"{{.*}}", tensor<2xi64>>}
// CHECK-NEXT:   %[[R:.*]] = "onnx.Reshape"(%{{.*}}, %[[SHAPE]]) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
// CHECK-NEXT:   func.return %[[R]]
