// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Reductions: a krnl nest over the kept dims, an scf.for carrying the
// accumulator over the reduced ones. ReduceSum (opset 13+) takes constant axes
// as an input; with keepdims the result is stored at index 0 of the reduced dim.
// ArgMax finds the maximum, then the first index holding it (or a NaN).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x3xi64>) {
    %axes = "onnx.Constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %m = "onnx.ReduceSum"(%x, %axes) <{operandSegmentSizes = array<i32: 1, 1>}> : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
    %a = "onnx.ArgMax"(%x) {axis = 2 : i64, keepdims = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>
    func.return %m, %a : tensor<2x1x4xf32>, tensor<2x3xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     %[[NONE:.+]] = arith.constant -1 : i64
// CHECK:         krnl.iterate({{.*}} bounds [0, 0] to [2, 4] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[S:.+]] = scf.for %[[j:.+]] = %[[C0]] to %[[C3]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%[[i]], %[[j]], %[[k]]]
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addf %[[ACC]], %[[V]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[S]], %m[%[[i]], %[[C0]], %[[k]]]
// CHECK:         krnl.iterate({{.*}} bounds [0, 0] to [2, 3] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[MAX:.+]] = scf.for %{{.+}} = %[[C0]] to %[[C4]] step %{{.+}} iter_args(%{{.+}} = %[[NEGINF]]) -> (f32) {
// CHECK:             arith.maximumf
// CHECK:           %[[IDX:.+]] = scf.for %[[k:.+]] = %[[C0]] to %[[C4]] step %{{.+}} iter_args(%[[FOUND:.+]] = %[[NONE]]) -> (i64) {
// CHECK-NEXT:        %[[K:.+]] = arith.index_cast %[[k]] : index to i64
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%[[i]], %[[j]], %[[k]]]
// CHECK-NEXT:        %[[EQ:.+]] = arith.cmpf oeq, %[[V]], %[[MAX]] : f32
// CHECK:             %[[PICK:.+]] = arith.select %{{.+}}, %[[K]], %[[FOUND]] : i64
// CHECK-NEXT:        scf.yield %[[PICK]] : i64
// CHECK:           memref.store %[[IDX]], %a[%[[i]], %[[j]]]

// -----

// CumSum, reverse and exclusive: the running sum walks the axis from its end and
// each position receives the sum before adding its own element.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<5xf32>) -> tensor<5xf32> {
    %axis = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %c = "onnx.CumSum"(%x, %axis) {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<5xf32>, tensor<i64>) -> tensor<5xf32>
    func.return %c : tensor<5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         scf.for %[[k:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f32) {
// CHECK-NEXT:      %[[POS:.+]] = arith.subi %{{.+}}, %[[k]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[POS]]]
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      memref.store %[[ACC]], %c[%[[POS]]]
// CHECK-NEXT:      scf.yield %[[NEXT]] : f32

// -----

// A mean over H and W (an SE block's squeeze as torch writes it): adjacent reduced dims, and
// adjacent kept ones, merge, so [1, 8, 7, 7] is reduced as [8, 49] in one loop of 49 (nested
// loops of 7 and 7 did not vectorize).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> {
    %y = "onnx.ReduceMean"(%x) <{operandSegmentSizes = array<i32: 1, 0>}> {axes = [2, 3], keepdims = 1 : i64} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
    func.return %y : tensor<1x8x1x1xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x8x7x7xf32>, %y: memref<1x8x1x1xf32>) {
// CHECK-DAG:     %[[C49:.+]] = arith.constant 49 : index
// CHECK-DAG:     %[[F49:.+]] = arith.constant 4.900000e+01 : f32
// CHECK:         %[[ROWS:.+]] = krnl.view %x[0 : i64] : memref<1x8x7x7xf32> to memref<8x49xf32>
// CHECK-NEXT:    %[[OUT:.+]] = krnl.view %y[0 : i64] : memref<1x8x1x1xf32> to memref<8xf32>
// CHECK:         krnl.iterate({{.*}} bounds [0] to [8] {
// CHECK-NEXT:    ^bb0(%[[c:.+]]: index):
// CHECK-NEXT:      %[[S:.+]] = scf.for %[[i:.+]] = %{{.+}} to %[[C49]] step
// CHECK-NEXT:        memref.load %[[ROWS]][%[[c]], %[[i]]]
// CHECK-NEXT:        arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK:           %[[MEAN:.+]] = arith.divf %[[S]], %[[F49]] : f32
// CHECK-NEXT:      memref.store %[[MEAN]], %[[OUT]][%[[c]]]
