// RUN: not onnxc-opt %s -p convert-onnx-to-krnl 2>&1 | filecheck %s

// An op whose lowering does not handle data-dependent shapes is refused as
// before, even when its result is only returned.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> tensor<?xf32> {
    %y = "onnx.Identity"(%x) : (tensor<4xf32>) -> tensor<?xf32> loc("id")
    func.return %y : tensor<?xf32>
  }
}

// CHECK: UnsupportedOpError: node 'id' (Identity): the shape of result 0 depends on input values (opset 13)
