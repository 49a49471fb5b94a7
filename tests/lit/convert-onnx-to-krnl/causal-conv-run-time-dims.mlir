// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// CausalConvWithState over run-time channels, length and kernel: per output
// (n, c, t) the taps j < max(k - 1 - t, 0) read the state at t + j, the others
// the input at t + j - (k - 1): two reductions over clipped ranges, no branch.
// The new state is the old one's positions past the input's length, then the
// input's last ones.
builtin.module attributes {onnx.opset = 27 : i64} {
  func.func @main_graph(%x: tensor<?x?x?xf32, ["n", "c", "l"]>, %w: tensor<?x1x?xf32, ["c", "", "k"]>, %past: tensor<?x?x?xf32, ["n", "c", "k - 1"]>) -> (tensor<?x?x?xf32, ["n", "c", "l"]>, tensor<?x?x?xf32, ["n", "c", "k - 1"]>) {
    %y, %state = "onnx.CausalConvWithState"(%x, %w, %past) <{operandSegmentSizes = array<i32: 1, 1, 0, 1>}> : (tensor<?x?x?xf32, ["n", "c", "l"]>, tensor<?x1x?xf32, ["c", "", "k"]>, tensor<?x?x?xf32, ["n", "c", "k - 1"]>) -> (tensor<?x?x?xf32, ["n", "c", "l"]>, tensor<?x?x?xf32, ["n", "c", "k - 1"]>)
    func.return %y, %state : tensor<?x?x?xf32, ["n", "c", "l"]>, tensor<?x?x?xf32, ["n", "c", "k - 1"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?x?xf32>, %w: memref<?x1x?xf32>, %past: memref<?x?x?xf32>, %y: memref<?x?x?xf32>, %state: memref<?x?x?xf32>) {
// CHECK:         memref.dim %x
// CHECK-NEXT:    memref.dim %x
// CHECK-NEXT:    %[[L:.+]] = memref.dim %x, %{{.+}} : memref<?x?x?xf32>
// CHECK-NEXT:    memref.dim %w
// CHECK-NEXT:    %[[K:.+]] = memref.dim %w, %{{.+}} : memref<?x1x?xf32>
// CHECK:         %[[HISTORY:.+]] = arith.subi %[[K]], %{{.+}} : index
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0] to [{{.*}}] {
// CHECK-NEXT:    ^bb0(%[[N:.+]]: index, %[[C:.+]]: index, %[[T:.+]]: index):
// CHECK-NEXT:      %[[BEFORE:.+]] = arith.subi %[[HISTORY]], %[[T]] : index
// CHECK-NEXT:      %[[FIRST:.+]] = arith.maxsi %[[BEFORE]], %{{.+}} : index
// CHECK-NEXT:      %[[STATE_TAPS:.+]] = arith.minsi %[[FIRST]], %[[K]] : index
// CHECK-NEXT:      %[[OLD:.+]] = scf.for %{{.+}} = %{{.+}} to %[[STATE_TAPS]] step %{{.+}} iter_args
// CHECK:             memref.load %past[%[[N]], %[[C]], %{{.+}}]
// CHECK:           scf.for %{{.+}} = %[[FIRST]] to %[[K]] step %{{.+}} iter_args(%{{.+}} = %[[OLD]]) -> (f32) {
// CHECK:             memref.load %x[%[[N]], %[[C]], %{{.+}}]
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0] to [{{.*}}] {
// CHECK:           %[[SHORT:.+]] = arith.subi %[[HISTORY]], %[[L]] : index
// CHECK-NEXT:      %[[FROM_INPUT:.+]] = arith.maxsi %[[SHORT]], %{{.+}} : index
// CHECK-NEXT:      scf.for %{{.+}} = %{{.+}} to %[[FROM_INPUT]] step
// CHECK:             memref.load %past
// CHECK:           scf.for %{{.+}} = %[[FROM_INPUT]] to %[[HISTORY]] step
// CHECK:             memref.load %x
