// RUN: not onnxc-opt %s --split-input-file -p convert-onnx-to-krnl 2>&1 | filecheck %s

// What cannot be lowered is refused with a typed error naming the node, the
// op, the reason and the opset; nothing is lowered silently.

builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x3xf32>, %axes: tensor<1xi64>) -> tensor<2x1xf32> {
    %y = "onnx.ReduceSum"(%a, %axes) <{operandSegmentSizes = array<i32: 1, 1>}> : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32> loc("sum0")
    func.return %y : tensor<2x1xf32>
  }
}

// CHECK: UnsupportedOpError: node 'sum0' (ReduceSum): axes computed at run time (opset 17)
