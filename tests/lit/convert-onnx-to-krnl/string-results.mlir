// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

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

// -----

// StringSplit: a first pass counts each string's pieces (stored as the
// second result) and keeps the most, M; the pieces [2, M] are a view of a heap
// buffer, filled with empty strings, then each piece is a slice of its input
// string (no bytes copied), written where a delimiter ends it and after the
// string's last byte. The first M entries along axis 1 are the output.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<2x!onnx.string>) -> (tensor<2x?x!onnx.string>, tensor<2xi64>) {
    %y, %n = "onnx.StringSplit"(%x) {delimiter = "-"} : (tensor<2x!onnx.string>) -> (tensor<2x?x!onnx.string>, tensor<2xi64>) loc("split0")
    func.return %y, %n : tensor<2x?x!onnx.string>, tensor<2xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME:    %y: memref<2x?x!onnx.string, "onnxc_tensor">, %n: memref<2xi64>
// CHECK:         %[[MOST:.+]] = scf.for {{.*}} -> (index) {
// CHECK:           memref.store %{{.+}}, %n[%{{.+}}] : memref<2xi64>
// CHECK:         }
// CHECK:         %[[ROWS:.+]] = krnl.grow %{{.+}} : memref<?x!onnx.string>
// CHECK-NEXT:    %[[PIECES:.+]] = krnl.view %[[ROWS]][0 : i64] (%[[MOST]]) : memref<?x!onnx.string> to memref<2x?x!onnx.string>
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK-NEXT:        %[[PIECE:.+]] = krnl.string_slice
// CHECK-NEXT:        memref.store %[[PIECE]], %[[PIECES]]
// CHECK:           %[[LAST:.+]] = krnl.string_slice
// CHECK-NEXT:      memref.store %[[LAST]], %[[PIECES]]
// CHECK:         krnl.string_output %[[PIECES]][%[[MOST]]] into %y {axis = 1 : i64}
// CHECK-NEXT:    krnl.free %[[ROWS]] : memref<?x!onnx.string>
