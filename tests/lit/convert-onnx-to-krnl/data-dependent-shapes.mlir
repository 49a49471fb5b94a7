// RUN: not onnxc-opt %s --split-input-file -p convert-onnx-to-krnl 2>&1 | filecheck %s

// An op whose result shape depends on input values is refused by name, before
// any other value's dynamic shape is reported.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> tensor<?x2xi64> {
    %y = "onnx.NonZero"(%x) : (tensor<4xf32>) -> tensor<?x2xi64> loc("nz")
    %z = "onnx.Identity"(%y) : (tensor<?x2xi64>) -> tensor<?x2xi64>
    func.return %z : tensor<?x2xi64>
  }
}

// CHECK: UnsupportedOpError: node 'nz' (NonZero): the shape of result 0 depends on input values (opset 13)
