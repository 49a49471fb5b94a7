// RUN: onnxc-opt %s -p shape-inference,constprop --print-debuginfo | filecheck %s
// RUN: onnxc-opt %s -p shape-inference,fold-shapes --print-debuginfo | filecheck %s --check-prefix=SHAPES

// ConstantOfShape with a constant shape becomes a constant; so does float math on constants.
// (x + c1) + c2 is reassociated to x + (c1 + c2); x + c alone is not touched.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %shape = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
    %w = "onnx.ConstantOfShape"(%shape) {value = dense<[1.5]> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<*xnone> loc("weight")
    %c1 = "onnx.Constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %c2 = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %a = "onnx.Add"(%x, %c1) : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xnone> loc("add1")
    %b = "onnx.Add"(%a, %c2) : (tensor<*xnone>, tensor<f32>) -> tensor<*xnone> loc("add2")
    %m = "onnx.Mul"(%w, %c2) : (tensor<*xnone>, tensor<f32>) -> tensor<*xnone> loc("scaled")
    %y = "onnx.Add"(%x, %c1) : (tensor<2x3xf32>, tensor<f32>) -> tensor<*xnone> loc("plain")
    func.return %b, %m, %y : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph(%x: tensor<2x3xf32>{{.*}}) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-DAG:  %[[C1:.*]] = "onnx.Constant"() {value = dense<1.000000e+00> : tensor<f32>}
// CHECK-DAG:  %[[SUM:.*]] = "onnx.Constant"() {value = #onnx.weight<"add2.folded", tensor<f32>>}
// CHECK-DAG:  %[[B:.*]] = "onnx.Add"(%x, %[[SUM]]) {{.*}} -> tensor<2x3xf32> loc("add2")
// CHECK-DAG:  %[[M:.*]] = "onnx.Constant"() {value = #onnx.weight<"scaled", tensor<2x3xf32>>}
// CHECK-DAG:  %[[Y:.*]] = "onnx.Add"(%x, %[[C1]]) {{.*}} loc("plain")
// CHECK:      func.return %[[B]], %[[M]], %[[Y]]
// CHECK-NOT:  ConstantOfShape

// fold-shapes folds only integer (shape) arithmetic: the float weight math stays.
// SHAPES:     "onnx.ConstantOfShape"
// SHAPES:     "onnx.Add"({{.*}}) {{.*}} loc("add1")
// SHAPES:     "onnx.Mul"
