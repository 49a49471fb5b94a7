// RUN: not onnxc-opt %s -p convert-onnx-to-krnl 2>&1 | filecheck %s

// The low-precision types reach only Cast, BitCast and data movement: any other
// op is refused by name, opset and dtype rather than computing on their bits.
builtin.module attributes {onnx.opset = 25 : i64} {
  func.func @main_graph(%a: tensor<3xf8E4M3FN>, %pads: tensor<2xi64>) -> tensor<5xf8E4M3FN> {
    %y = "onnx.Pad"(%a, %pads) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<3xf8E4M3FN>, tensor<2xi64>) -> tensor<5xf8E4M3FN> loc("pad0")
    func.return %y : tensor<5xf8E4M3FN>
  }
}

// CHECK: UnsupportedOpError: node 'pad0' (Pad): element type float8_e4m3fn is not supported (opset 25)
