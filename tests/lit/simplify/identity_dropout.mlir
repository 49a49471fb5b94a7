// RUN: onnxc-opt %s -p shape-inference,simplify --print-debuginfo | filecheck %s

// Identity and inference-mode Dropout disappear; a Dropout whose mask is used,
// or in training mode, stays. A Cast to the type it already has is removed.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %i = "onnx.Identity"(%x) : (tensor<2x3xf32>) -> tensor<*xnone> loc("identity")
    %d = "onnx.Dropout"(%i) <{operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0>}> : (tensor<*xnone>) -> tensor<*xnone> loc("dropout")
    %c = "onnx.Cast"(%d) {to = 1 : i64} : (tensor<*xnone>) -> tensor<*xnone> loc("cast")
    %e = "onnx.Exp"(%c) : (tensor<*xnone>) -> tensor<*xnone> loc("exp")
    %o, %mask = "onnx.Dropout"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1>}> : (tensor<2x3xf32>) -> (tensor<*xnone>, tensor<*xnone>) loc("masked")
    %t = "onnx.Constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    %r = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %train = "onnx.Dropout"(%x, %r, %t) <{operandSegmentSizes = array<i32: 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0>}> : (tensor<2x3xf32>, tensor<f32>, tensor<i1>) -> tensor<*xnone> loc("training")
    func.return %e, %o, %mask, %train : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK-NOT: loc("identity")
// CHECK-NOT: loc("dropout")
// CHECK-NOT: loc("cast")
// CHECK:     %[[E:.*]] = "onnx.Exp"(%x) {{.*}} loc("exp")
// CHECK:     "onnx.Dropout"(%x) {{.*}} loc("masked")
// CHECK:     "onnx.Dropout"(%x, {{.*}}) {{.*}} loc("training")
