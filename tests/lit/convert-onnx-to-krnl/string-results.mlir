// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// StringConcat: a first pass sums the sizes, one heap byte buffer of that many
// bytes (at least 1), a second pass copies both strings' bytes at a running
// offset and makes each result a string of the buffer. The graph output is
// library-allocated: krnl.string_output copies the strings and their bytes
// out, then the buffer is freed.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<2x!onnx.string>, %y: tensor<1x!onnx.string>) -> tensor<2x!onnx.string> {
    %z = "onnx.StringConcat"(%x, %y) : (tensor<2x!onnx.string>, tensor<1x!onnx.string>) -> tensor<2x!onnx.string> loc("cat0")
    func.return %z : tensor<2x!onnx.string>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME:    %z: memref<2x!onnx.string, "onnxc_tensor">
// CHECK:         %[[STRINGS:.+]] = memref.alloc() : memref<2x!onnx.string>
// CHECK:         %[[TOTAL:.+]] = scf.for {{.*}} -> (index) {
// CHECK:           krnl.string_size
// CHECK:         }
// CHECK-NEXT:    %[[ROWS:.+]] = arith.maxsi %[[TOTAL]], %{{.+}} : index
// CHECK-NEXT:    %[[BYTES:.+]] = krnl.grow %[[ROWS]] : memref<?xi8>
// CHECK-NEXT:    scf.for %[[I:.+]] = {{.*}} iter_args(%[[OFFSET:.+]] = %{{.+}}) -> (index) {
// CHECK:           scf.for
// CHECK:             %[[BYTE:.+]] = krnl.string_byte
// CHECK:             memref.store %[[BYTE]], %[[BYTES]][%{{.+}}] : memref<?xi8>
// CHECK:           scf.for
// CHECK:           %[[S:.+]] = krnl.string_make %[[BYTES]][%[[OFFSET]], %{{.+}}] : memref<?xi8>
// CHECK-NEXT:      memref.store %[[S]], %[[STRINGS]][%[[I]]] : memref<2x!onnx.string>
// CHECK:         krnl.string_output %[[STRINGS]] into %z : memref<2x!onnx.string>, memref<2x!onnx.string, "onnxc_tensor">
// CHECK-NEXT:    krnl.free %[[BYTES]] : memref<?xi8>
// CHECK-NEXT:    func.return
