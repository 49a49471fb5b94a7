// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// LabelEncoder from strings: the keys' byte trie, its edges (parent, byte) ->
// child in a hash table probed once per byte of the string, a dead end being
// node -1; then the key position of the node reached, and the value at it or
// the default.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<3x!onnx.string>) -> tensor<3xi64> {
    %y = "onnx.LabelEncoder"(%x) {keys_strings = ["a", "ab"], values_int64s = [7, 8], default_int64 = -1 : i64} : (tensor<3x!onnx.string>) -> tensor<3xi64> loc("enc0")
    func.return %y : tensor<3xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[EDGES:.+]] = krnl.global {value = #onnx.weight<"hash_table", tensor<8x3xi64>>} : memref<8x3xi64>
// CHECK-DAG:     %[[POSITIONS:.+]] = krnl.global {value = #onnx.weight<"key_positions", tensor<4xi64>>} : memref<4xi64>
// CHECK-DAG:     %[[VALUES:.+]] = krnl.global {value = #onnx.weight<"values", tensor<2xi64>>} : memref<2xi64>
// CHECK:         krnl.iterate
// CHECK:           %[[S:.+]] = memref.load %x
// CHECK:           %[[NODE:.+]] = scf.for {{.*}} iter_args(%[[PARENT:.+]] = %{{.+}}) -> (i64) {
// CHECK:             krnl.string_byte %[[S]]
// CHECK:             memref.load %[[EDGES]]
// CHECK:           }
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addi %[[NODE]], %{{.+}} : i64
// CHECK-NEXT:      %[[SLOT:.+]] = arith.index_cast %[[NEXT]] : i64 to index
// CHECK-NEXT:      %[[POSITION:.+]] = memref.load %[[POSITIONS]][%[[SLOT]]] : memref<4xi64>
// CHECK:           %[[VALUE:.+]] = memref.load %[[VALUES]]
// CHECK-NEXT:      %[[Y:.+]] = arith.select %{{.+}}, %[[VALUE]], %{{.+}} : i64
// CHECK-NEXT:      memref.store %[[Y]], %y
