// RUN: onnxc-opt %s -p shape-inference,constprop --print-debuginfo | filecheck %s

// Not folded: an op with a non-constant input, Shape of a dynamically shaped value,
// and a ConstantOfShape whose result would exceed the element limit (2^28).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>, %d: tensor<?x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %e = "onnx.Exp"(%x) : (tensor<2x3xf32>) -> tensor<*xnone> loc("exp")
    %s = "onnx.Shape"(%d) : (tensor<?x3xf32>) -> tensor<*xnone> loc("shape")
    %big = "onnx.Constant"() {value = dense<[65536, 65536]> : tensor<2xi64>} : () -> tensor<2xi64>
    %f = "onnx.ConstantOfShape"(%big) : (tensor<2xi64>) -> tensor<*xnone> loc("huge")
    func.return %e, %s, %f : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK: "onnx.Exp"(%x) {{.*}} loc("exp")
// CHECK: "onnx.Shape"(%d) {{.*}} loc("shape")
// CHECK: "onnx.ConstantOfShape"({{.*}}) : (tensor<2xi64>) -> tensor<65536x65536xf32> loc("huge")
