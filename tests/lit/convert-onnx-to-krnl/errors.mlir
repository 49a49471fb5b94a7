// RUN: not onnxc-opt %s --split-input-file -p convert-onnx-to-krnl 2>&1 | filecheck %s

// What cannot be lowered is refused with a typed error naming the node, the
// op, the reason and the opset; nothing is lowered silently.

builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %y = "onnx.RandomUniformLike"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("random0")
    func.return %y : tensor<2x3xf32>
  }
}

// CHECK: UnsupportedOpError: node 'random0' (RandomUniformLike): op RandomUniformLike has no lowering (opset 17)
