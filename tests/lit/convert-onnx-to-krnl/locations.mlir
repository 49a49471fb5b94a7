// RUN: onnxc-opt %s -p convert-onnx-to-krnl --print-debuginfo | filecheck %s

// The ops emitted for a node carry the node's name as their location.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("relu0")
    %y = "onnx.Neg"(%r) : (tensor<4xf32>) -> tensor<4xf32> loc("neg0")
    func.return %y : tensor<4xf32>
  }
}

// CHECK:      %r = memref.alloc() : memref<4xf32> loc("relu0")
// CHECK:        memref.load %x[%{{.+}}] : memref<4xf32> loc("relu0")
// CHECK:        arith.maximumf {{.*}} loc("relu0")
// CHECK:      } loc("relu0")
// CHECK:        arith.negf {{.*}} loc("neg0")
// CHECK:      } loc("neg0")
