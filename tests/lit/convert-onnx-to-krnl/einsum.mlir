// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Batched matmul: a nest over the output (b, i, k) and an scf.for summing the
// product over j, the label missing from the output.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>, %y: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
    %z = "onnx.Einsum"(%x, %y) <{operandSegmentSizes = array<i32: 2>}> {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
    func.return %z : tensor<2x3x5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 3, 5] {
// CHECK-NEXT:    ^bb0(%[[b:.+]]: index, %[[i:.+]]: index, %[[k:.+]]: index):
// CHECK:           %[[SUM:.+]] = scf.for %[[j:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f32) {
// CHECK-NEXT:        %[[A:.+]] = memref.load %x[%[[b]], %[[i]], %[[j]]] : memref<2x3x4xf32>
// CHECK-NEXT:        %[[B:.+]] = memref.load %y[%[[b]], %[[j]], %[[k]]] : memref<2x4x5xf32>
// CHECK-NEXT:        %[[P:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[N:.+]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:        scf.yield %[[N]] : f32
// CHECK:           memref.store %[[SUM]], %z[%[[b]], %[[i]], %[[k]]] : memref<2x3x5xf32>

// -----

// A diagonal: the repeated label indexes both dims with one induction variable.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<3x3xf32>) -> tensor<3xf32> {
    %z = "onnx.Einsum"(%x) <{operandSegmentSizes = array<i32: 1>}> {equation = "ii->i"} : (tensor<3x3xf32>) -> tensor<3xf32>
    func.return %z : tensor<3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         ^bb0(%[[i:.+]]: index):
// CHECK-NEXT:      %[[D:.+]] = memref.load %x[%[[i]], %[[i]]] : memref<3x3xf32>
// CHECK-NEXT:      memref.store %[[D]], %z[%[[i]]] : memref<3xf32>
