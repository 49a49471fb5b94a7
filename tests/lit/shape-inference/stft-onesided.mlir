// RUN: onnxc-opt %s -p shape-inference | filecheck %s

// STFT without `onesided` is one-sided (the schema default): 16 // 2 + 1 = 9
// bins. ONNX's inference function alone would infer all 16.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x128x1xf32>) -> tensor<*xnone> {
    %step = "onnx.Constant"() {value = dense<8> : tensor<i64>} : () -> tensor<i64>
    %length = "onnx.Constant"() {value = dense<16> : tensor<i64>} : () -> tensor<i64>
    %y = "onnx.STFT"(%x, %step, %length) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<1x128x1xf32>, tensor<i64>, tensor<i64>) -> tensor<*xnone>
    func.return %y : tensor<*xnone>
  }
}
// CHECK: "onnx.STFT"{{.*}} -> tensor<1x15x9x2xf32>
