// RUN: onnxc-opt %s -p shape-inference,fold-shapes | filecheck %s

// fold-shapes (-O0) folds integer results and, whatever their type, the ops that feed
// a shape operand: in a window body's Range(0, Cast(size), 1) the float Cast folds, so
// the Range gets its length. Float math that decides no shape (the Muls) stays.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<f32>) -> tensor<*xnone> {
    %n = "onnx.Constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
    %nf = "onnx.Cast"(%n) {to = 1 : i64} : (tensor<i32>) -> tensor<*xnone>
    %zero = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %one = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %two = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %step = "onnx.Mul"(%one, %two) : (tensor<f32>, tensor<f32>) -> tensor<*xnone>
    %r = "onnx.Range"(%zero, %nf, %one) : (tensor<f32>, tensor<*xnone>, tensor<f32>) -> tensor<*xnone>
    %y = "onnx.Mul"(%r, %step) : (tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone>
    func.return %y : tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph(%{{.*}}: tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:   %[[LIMIT:.*]] = "onnx.Constant"() {value = #onnx.weight<"{{.*}}", tensor<f32>>}
// CHECK-NOT:    "onnx.Cast"
// CHECK:        %[[STEP:.*]] = "onnx.Mul"({{.*}}) : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:   %[[R:.*]] = "onnx.Range"(%{{.*}}, %[[LIMIT]], %{{.*}}) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:   "onnx.Mul"(%[[R]], %[[STEP]]) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
