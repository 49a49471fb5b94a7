// RUN: not onnxc-opt %s --split-input-file -p convert-onnx-to-krnl 2>&1 | filecheck %s

// A result whose shape depends on input values may only be a graph output: an
// op using it is refused by name, before any other value's dynamic shape is
// reported.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> tensor<1x?xi64> {
    %y = "onnx.NonZero"(%x) : (tensor<4xf32>) -> tensor<1x?xi64> loc("nz")
    %z = "onnx.Identity"(%y) : (tensor<1x?xi64>) -> tensor<1x?xi64>
    func.return %z : tensor<1x?xi64>
  }
}

// CHECK: UnsupportedOpError: node 'nz' (NonZero): the shape of result 0 depends on input values; it may only be a graph output, not used by ['onnx.Identity'] (opset 13)
