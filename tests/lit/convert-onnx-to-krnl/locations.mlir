// RUN: onnxc-opt %s -p convert-onnx-to-krnl --print-debuginfo | filecheck %s

// The ops emitted for a node carry the node's name as their location; where
// Relu is computed in Neg's nest (fused), its ops keep Relu's name.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %r = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("relu0")
    %y = "onnx.Neg"(%r) : (tensor<4xf32>) -> tensor<4xf32> loc("neg0")
    %s = "onnx.Sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("sqrt0")
    func.return %y, %s : tensor<4xf32>, tensor<4xf32>
  }
}

// CHECK:      krnl.define_loops 1 loc("neg0")
// CHECK:        memref.load %x[%{{.+}}] : memref<4xf32> loc("relu0")
// CHECK-NEXT:   arith.maximumf {{.*}} loc("relu0")
// CHECK-NEXT:   arith.negf {{.*}} loc("neg0")
// CHECK-NEXT:   memref.store {{.*}} loc("neg0")
// CHECK:      } loc("neg0")
// CHECK:        memref.load %x[%{{.+}}] : memref<4xf32> loc("sqrt0")
// CHECK-NEXT:   math.sqrt {{.*}} loc("sqrt0")
// CHECK:      } loc("sqrt0")
