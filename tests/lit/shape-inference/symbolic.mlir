// RUN: onnxc-opt %s -p shape-inference | filecheck %s

// Symbolic dims: a Conv over a symbolic height gets the window formula as its dim;
// the exporters' Shape -> Gather -> Unsqueeze -> Concat -> Reshape arithmetic gives
// the Reshape a symbolic leading dim and a static one (-1 resolved exactly:
// 4*5*H' / 1); a broadcast between two symbols unifies them, so the second
// input's dim becomes the first's.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x1x?x5xf32, ["batch", "", "H", ""]>, %other: tensor<?x1xf32, ["B2", ""]>) -> tensor<*xnone> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x1x3x3xf32>} : () -> tensor<4x1x3x3xf32>
    %conv = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {strides = [2 : i64, 1 : i64], pads = [1 : i64, 1 : i64, 1 : i64, 1 : i64]} : (tensor<?x1x?x5xf32, ["batch", "", "H", ""]>, tensor<4x1x3x3xf32>) -> tensor<*xnone> loc("conv")
    %shape = "onnx.Shape"(%x) : (tensor<?x1x?x5xf32, ["batch", "", "H", ""]>) -> tensor<*xnone>
    %i0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %axes = "onnx.Constant"() {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
    %minus_one = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
    %b = "onnx.Gather"(%shape, %i0) {axis = 0 : i64} : (tensor<*xnone>, tensor<i64>) -> tensor<*xnone>
    %bu = "onnx.Unsqueeze"(%b, %axes) : (tensor<*xnone>, tensor<1xi64>) -> tensor<*xnone>
    %target = "onnx.Concat"(%bu, %minus_one) <{operandSegmentSizes = array<i32: 2>}> {axis = 0 : i64} : (tensor<*xnone>, tensor<1xi64>) -> tensor<*xnone>
    %flat = "onnx.Reshape"(%conv, %target) : (tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("flatten")
    %sum = "onnx.Add"(%flat, %other) : (tensor<*xnone>, tensor<?x1xf32, ["B2", ""]>) -> tensor<*xnone> loc("sum")
    func.return %sum : tensor<*xnone>
  }
}
// CHECK:      func.func @main_graph(%{{.*}}: tensor<?x1x?x5xf32, ["batch", "", "H", ""]>, %{{.*}}: tensor<?x1xf32, ["batch", ""]>)
// CHECK:      "onnx.Conv"{{.*}} -> tensor<?x4x?x5xf32, ["batch", "", "((H - 1) // 2) + 1", ""]>
// CHECK:      "onnx.Reshape"{{.*}} -> tensor<?x?xf32, ["batch", "20*((H - 1) // 2) + 20"]>
// CHECK:      "onnx.Add"{{.*}} -> tensor<?x?xf32, ["batch", "20*((H - 1) // 2) + 20"]>
