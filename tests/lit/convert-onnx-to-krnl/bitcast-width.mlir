// RUN: not onnxc-opt %s -p convert-onnx-to-krnl 2>&1 | filecheck %s

// BitCast between types of different widths (which ONNX shape inference also
// refuses) is refused, not lowered to a conversion.
builtin.module attributes {onnx.opset = 26 : i64} {
  func.func @main_graph(%a: tensor<3xi4>) -> tensor<3xi8> {
    %y = "onnx.BitCast"(%a) {to = 3 : i64} : (tensor<3xi4>) -> tensor<3xi8> loc("bits0")
    func.return %y : tensor<3xi8>
  }
}

// CHECK: UnsupportedOpError: node 'bits0' (BitCast): BitCast from i4 to i8, which differ in width (opset 26)
