// RUN: onnxc-opt %s -p shape-inference,simplify --print-debuginfo | filecheck %s

// Transposes that compose to the identity cancel; others compose into one.
// A chain of reshapes becomes one Reshape (or nothing when it changes no shape).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %t1 = "onnx.Transpose"(%x) {perm = [1 : i64, 0 : i64, 2 : i64]} : (tensor<2x3x4xf32>) -> tensor<*xnone> loc("t1")
    %t2 = "onnx.Transpose"(%t1) {perm = [1 : i64, 0 : i64, 2 : i64]} : (tensor<*xnone>) -> tensor<*xnone> loc("t2")
    %e = "onnx.Exp"(%t2) : (tensor<*xnone>) -> tensor<*xnone> loc("exp")
    %t3 = "onnx.Transpose"(%x) {perm = [1 : i64, 2 : i64, 0 : i64]} : (tensor<2x3x4xf32>) -> tensor<*xnone> loc("t3")
    %t4 = "onnx.Transpose"(%t3) {perm = [1 : i64, 2 : i64, 0 : i64]} : (tensor<*xnone>) -> tensor<*xnone> loc("t4")
    %f = "onnx.Flatten"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xnone> loc("flatten")
    %s = "onnx.Constant"() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
    %r = "onnx.Reshape"(%f, %s) : (tensor<*xnone>, tensor<2xi64>) -> tensor<*xnone> loc("reshape")
    %s3 = "onnx.Constant"() {value = dense<[2, 3, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
    %back = "onnx.Reshape"(%r, %s3) : (tensor<*xnone>, tensor<3xi64>) -> tensor<*xnone> loc("back")
    func.return %e, %t4, %r, %back : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     "onnx.Exp"(%x) {{.*}} loc("exp")
// CHECK:     "onnx.Transpose"(%x) {perm = [2 : i64, 0 : i64, 1 : i64]} {{.*}} -> tensor<4x2x3xf32> loc("t4")
// CHECK:     %[[S:.*]] = "onnx.Constant"() {value = #onnx.weight<"reshape.shape", tensor<2xi64>>}
// CHECK:     %[[R:.*]] = "onnx.Reshape"(%x, %[[S]]) {{.*}} -> tensor<6x4xf32> loc("reshape")
// CHECK:     func.return {{.*}}, %[[R]], %x :
