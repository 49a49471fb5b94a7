// RUN: onnxc-opt %s -p shape-inference,decompose,constprop --print-debuginfo | filecheck %s

// Ops without a kernel are replaced: ReduceL1 by an explicit rule, Softsign and
// LayerNormalization (context-dependent) by their schema's function body. New nodes
// are named after the original node. Relu has a kernel and is left alone. constprop
// then folds the body's shape arithmetic (Shape/Size/Slice/Concat) on the static input.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %l1 = "onnx.ReduceL1"(%x, %axes) <{operandSegmentSizes = array<i32: 1, 1>}> {keepdims = 0 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<*xnone> loc("l1")
    %s = "onnx.Softsign"(%x) : (tensor<2x3xf32>) -> tensor<*xnone> loc("softsign")
    %r = "onnx.Relu"(%x) : (tensor<2x3xf32>) -> tensor<*xnone> loc("relu")
    %g = "onnx.Constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
    %n = "onnx.LayerNormalization"(%x, %g) <{operandSegmentSizes = array<i32: 1, 1, 0>, resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xnone> loc("ln")
    func.return %l1, %s, %r, %n : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[ABS:.*]] = "onnx.Abs"(%x) {{.*}} loc("l1/Abs")
// CHECK:     %[[L1:.*]] = "onnx.ReduceSum"(%[[ABS]], %axes) {{.*}}keepdims = 0 : i64{{.*}} -> tensor<2xf32> loc("l1/ReduceSum")
// CHECK-NOT: "onnx.ReduceL1"
// CHECK:     "onnx.Abs"(%x) {{.*}} loc("softsign/Abs_{{[0-9]+}}")
// CHECK:     %[[SS:.*]] = "onnx.Div"{{.*}} -> tensor<2x3xf32> loc("softsign/Div_{{[0-9]+}}")
// CHECK:     %[[R:.*]] = "onnx.Relu"(%x) {{.*}} loc("relu")
// CHECK-NOT: "onnx.LayerNormalization"
// CHECK-NOT: "onnx.Shape"
// CHECK:     "onnx.ReduceMean"{{.*}} loc("ln/ReduceMean_{{[0-9]+}}")
// CHECK:     func.return %[[L1]], %[[SS]], %[[R]], %{{.*}} : tensor<2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
