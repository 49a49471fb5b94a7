// RUN: onnxc-opt %s -p shape-inference | filecheck %s

// What nodes need of the inputs' dims beyond the dims themselves is recorded on
// the graph as onnx.dim_checks ([lhs, relation, rhs, node, op type]): a Reshape
// whose -1 divides inexactly keeps its element count, a Conv's computed height
// is not negative. Shape arithmetic on booleans (Equal -> Where over dims) stays
// an expression of 0/1 comparisons.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x?xf32, ["n", "s"]>, %img: tensor<1x1x?x4xf32, ["", "", "h", ""]>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %target = "onnx.Constant"() {value = dense<[0, 3, -1]> : tensor<3xi64>} : () -> tensor<3xi64>
    %r = "onnx.Reshape"(%x, %target) : (tensor<?x?xf32, ["n", "s"]>, tensor<3xi64>) -> tensor<*xnone> loc("r")
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
    %c = "onnx.Conv"(%img, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x?x4xf32, ["", "", "h", ""]>, tensor<1x1x3x3xf32>) -> tensor<*xnone> loc("c")
    %shape = "onnx.Shape"(%x) : (tensor<?x?xf32, ["n", "s"]>) -> tensor<*xnone>
    %four = "onnx.Constant"() {value = dense<[4, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
    %one = "onnx.Constant"() {value = dense<[1, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
    %is_four = "onnx.Equal"(%shape, %four) : (tensor<*xnone>, tensor<2xi64>) -> tensor<*xnone>
    %sizes = "onnx.Where"(%is_four, %shape, %one) : (tensor<*xnone>, tensor<*xnone>, tensor<2xi64>) -> tensor<*xnone>
    %filled = "onnx.ConstantOfShape"(%sizes) : (tensor<*xnone>) -> tensor<*xnone> loc("filled")
    func.return %r, %c, %filled : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      attributes {onnx.dim_checks = {{\[\[}}"3*(s // 3)*n", "==", "n*s", "r", "Reshape"], ["h - 2", ">=", "0", "c", "Conv"]
// CHECK:      "onnx.Reshape"{{.*}} -> tensor<?x3x?xf32, ["n", "", "(s // 3)"]>
// CHECK:      "onnx.Conv"{{.*}} -> tensor<1x1x?x2xf32, ["", "", "h - 2", ""]>
// CHECK:      "onnx.ConstantOfShape"{{.*}} -> tensor<?x?xf32, ["(eq(4, n))*n - (eq(4, n)) + 1", "(eq(4, s))*s - (eq(4, s)) + 1"]>
