// RUN: not onnxc-opt %s --split-input-file -p convert-onnx-to-krnl 2>&1 | filecheck %s

// What cannot be lowered is refused with a typed error naming the node, the
// op, the reason and the opset; nothing is lowered silently.

builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x3xui8>, %b: tensor<2x3xui8>) -> tensor<2x3xui8> {
    %y = "onnx.Add"(%a, %b) : (tensor<2x3xui8>, tensor<2x3xui8>) -> tensor<2x3xui8> loc("add0")
    func.return %y : tensor<2x3xui8>
  }
}

// CHECK: UnsupportedOpError: node 'add0' (Add): element type ui8 is not supported (opset 17)
