// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Ops whose result shape depends on input values write a scratch buffer of the
// largest shape and end with krnl.dynamic_output, sized by a count computed
// at run time.

// Compress with a run-time condition: a sequential scan counts the kept slices
// and copies each to its position.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<3x2xf32>, %c: tensor<3xi1>) -> tensor<?x2xf32> {
    %y = "onnx.Compress"(%x, %c) {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<?x2xf32> loc("compress")
    func.return %y : tensor<?x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<3x2xf32>, %c: memref<3xi1>, %y: memref<?x2xf32, "onnxc_tensor">) {
// CHECK:         %[[BOUND:.+]] = memref.alloc() : memref<3x2xf32>
// CHECK:         %[[COUNT:.+]] = scf.for {{.*}} iter_args({{.*}}) -> (index) {
// CHECK:           scf.if
// CHECK:         krnl.dynamic_output %[[BOUND]][%[[COUNT]]] into %y {axis = 0 : i64} : memref<3x2xf32>, memref<?x2xf32, "onnxc_tensor">

// -----

// Unique: three independent nests (first occurrences and counts; ranks and the
// stores at them; the inverse map), then the number of distinct values sizes
// Y, indices and counts; the inverse map has the input's length.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
    %y, %i, %inv, %n = "onnx.Unique"(%x) <{resultSegmentSizes = array<i32: 1, 1, 1, 1>}> {sorted = 1 : i64} : (tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) loc("unique")
    func.return %y, %i, %inv, %n : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<5xi64>, %y: memref<?xi64, "onnxc_tensor">, %i: memref<?xi64, "onnxc_tensor">, %inv: memref<?xi64, "onnxc_tensor">, %n: memref<?xi64, "onnxc_tensor">) {
// CHECK-DAG:     %[[FIVE:.+]] = arith.constant 5 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [5] {
// CHECK:         %[[Y:.+]] = memref.alloc() : memref<5xi64>
// CHECK:         %[[I:.+]] = memref.alloc() : memref<5xi64>
// CHECK:         %[[INV:.+]] = memref.alloc() : memref<5xi64>
// CHECK:         %[[N:.+]] = memref.alloc() : memref<5xi64>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [5] {
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [5] {
// CHECK:         %[[DISTINCT:.+]] = scf.for {{.*}} -> (index) {
// CHECK:         krnl.dynamic_output %[[Y]][%[[DISTINCT]]] into %y {axis = 0 : i64} : memref<5xi64>, memref<?xi64, "onnxc_tensor">
// CHECK-NEXT:    krnl.dynamic_output %[[I]][%[[DISTINCT]]] into %i {axis = 0 : i64}
// CHECK-NEXT:    krnl.dynamic_output %[[INV]][%[[FIVE]]] into %inv {axis = 0 : i64}
// CHECK-NEXT:    krnl.dynamic_output %[[N]][%[[DISTINCT]]] into %n {axis = 0 : i64}

// -----

// NonMaxSuppression: boxes ranked by score, then per (batch, class) a
// sequential selection whose IoU check loops over the boxes selected so far
// (an scf.for up to the running count), then the rows gathered.
builtin.module attributes {onnx.opset = 11 : i64} {
  func.func @main_graph(%boxes: tensor<1x3x4xf32>, %scores: tensor<1x1x3xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>) -> tensor<?x3xi64> {
    %s = "onnx.NonMaxSuppression"(%boxes, %scores, %max, %iou) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (tensor<1x3x4xf32>, tensor<1x1x3xf32>, tensor<1xi64>, tensor<1xf32>) -> tensor<?x3xi64> loc("nms")
    func.return %s : tensor<?x3xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[ROWS:.+]] = memref.alloc() : memref<3x3xi64>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [1, 1, 3] {
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 1] {
// CHECK:           scf.for {{.*}} iter_args(%[[SELECTED:.+]] = {{.*}}) -> (index) {
// CHECK:             scf.for {{.*}} to %[[SELECTED]] {{.*}} -> (i1) {
// CHECK:         scf.for
// CHECK:         krnl.dynamic_output %[[ROWS]][%{{.+}}] into %s {axis = 0 : i64} : memref<3x3xi64>, memref<?x3xi64, "onnxc_tensor">
