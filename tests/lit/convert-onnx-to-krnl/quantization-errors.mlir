// RUN: not onnxc-opt %s --split-input-file -p convert-onnx-to-krnl 2>&1 | filecheck %s

// Quantization ops refuse, by name, what they do not define.

builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
    %y = "onnx.DequantizeLinear"(%x, %s) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("dq")
    func.return %y : tensor<4xf32>
  }
}

// CHECK: UnsupportedOpError: node 'dq' (DequantizeLinear): dequantization of f32 is not supported (opset 21)
