// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// DFT of a real signal along axis 1: per output bin k, one f64 sum for the real
// part and one for the imaginary part over the samples n, with the twiddle
// factors read from cos/sin tables at (k * n) mod N.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<3x4x1xf32>) -> tensor<3x4x2xf32> {
    %y = "onnx.DFT"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>}> {axis = 1 : i64} : (tensor<3x4x1xf32>) -> tensor<3x4x2xf32>
    func.return %y : tensor<3x4x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[N:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[COS:.+]] = krnl.global {value = dense<[1.000000e+00, {{.*}}]> : tensor<4xf64>} : memref<4xf64>
// CHECK-DAG:     %[[SIN:.+]] = krnl.global {value = dense<[0.000000e+00, 1.000000e+00, {{.*}}]> : tensor<4xf64>} : memref<4xf64>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [3, 4] {
// CHECK-NEXT:    ^bb0(%[[b:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[RE:.+]] = scf.for %[[n:[^ ]+]] = {{.*}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f64) {
// CHECK-NEXT:        %[[X:.+]] = memref.load %x[%[[b]], %[[n]], %{{.+}}] : memref<3x4x1xf32>
// CHECK-NEXT:        %[[XD:.+]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:        %[[KN:.+]] = arith.muli %[[k]], %[[n]] : index
// CHECK-NEXT:        %[[J:.+]] = arith.remsi %[[KN]], %[[N]] : index
// CHECK-NEXT:        %[[C:.+]] = memref.load %[[COS]][%[[J]]] : memref<4xf64>
// CHECK:             %[[T:.+]] = arith.mulf %[[XD]], %[[C]] : f64
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addf %[[ACC]], %[[T]] : f64
// CHECK:           %[[IM:.+]] = scf.for
// CHECK:             memref.load %[[SIN]]
// CHECK:           %[[RE32:.+]] = arith.truncf %[[RE]] : f64 to f32
// CHECK-NEXT:      memref.store %[[RE32]], %y[%[[b]], %[[k]], %{{.+}}] : memref<3x4x2xf32>
// CHECK-NEXT:      %[[IM32:.+]] = arith.truncf %[[IM]] : f64 to f32
// CHECK-NEXT:      memref.store %[[IM32]], %y[%[[b]], %[[k]], %{{.+}}] : memref<3x4x2xf32>

// -----

// STFT: frame f starts at sample 3 * f; each sample is weighted by the window.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x10x1xf32>, %window: tensor<4xf32>) -> tensor<1x3x3x2xf32> {
    %step = "onnx.Constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %y = "onnx.STFT"(%x, %step, %window) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x10x1xf32>, tensor<i64>, tensor<4xf32>) -> tensor<1x3x3x2xf32>
    func.return %y : tensor<1x3x3x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [1, 3, 3] {
// CHECK-NEXT:    ^bb0(%[[b:.+]]: index, %[[f:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      scf.for %[[n:[^ ]+]] = {{.*}} -> (f64) {
// CHECK-NEXT:        %[[START:.+]] = arith.muli %[[f]], %{{.+}} : index
// CHECK-NEXT:        %[[POS:.+]] = arith.addi %[[START]], %[[n]] : index
// CHECK-NEXT:        memref.load %x[%[[b]], %[[POS]], %{{.+}}] : memref<1x10x1xf32>
// CHECK:             memref.load %window[%[[n]]] : memref<4xf32>
