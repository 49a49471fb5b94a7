// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// LayerNormalization over the last dim of [2,8]: a krnl nest over the rows; in it
// a sum loop (mean), a loop over squared deviations (variance, two-pass), then
// one loop writing (x - mean) * inv_std * scale + bias. Unused Mean/InvStdDev
// outputs are not computed.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
    %y, %mean, %inv = "onnx.LayerNormalization"(%x, %s, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>, resultSegmentSizes = array<i32: 1, 1, 1>}> {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
    func.return %y : tensor<2x8xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x8xf32>, %s: memref<8xf32>, %b: memref<8xf32>, %y: memref<2x8xf32>) {
// CHECK-DAG:     %[[COUNT:.+]] = arith.constant 8.000000e+00 : f32
// CHECK-DAG:     %[[EPS:.+]] = arith.constant 1.000000e-05 : f32
// CHECK-NOT:     memref.alloc
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [2] {
// CHECK-NEXT:    ^bb0(%[[ROW:.+]]: index):
// CHECK:           %[[SUM:.+]] = scf.for
// CHECK:           %[[MEAN:.+]] = arith.divf %[[SUM]], %[[COUNT]] : f32
// CHECK:           %[[SQ:.+]] = scf.for
// CHECK:             arith.subf %{{.+}}, %[[MEAN]] : f32
// CHECK:           %[[VAR:.+]] = arith.divf %[[SQ]], %[[COUNT]] : f32
// CHECK-NEXT:      %[[VE:.+]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT:      %[[STD:.+]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT:      %[[INV:.+]] = arith.divf %{{.+}}, %[[STD]] : f32
// CHECK-NEXT:      scf.for %[[I:.+]] = {{.*}} {
// CHECK-NEXT:        %[[X:.+]] = memref.load %x[%[[ROW]], %[[I]]] : memref<2x8xf32>
// CHECK-NEXT:        %[[D:.+]] = arith.subf %[[X]], %[[MEAN]] : f32
// CHECK-NEXT:        %[[N:.+]] = arith.mulf %[[D]], %[[INV]] : f32
// CHECK-NEXT:        %[[S:.+]] = memref.load %s[%[[I]]] : memref<8xf32>
// CHECK-NEXT:        %[[NS:.+]] = arith.mulf %[[N]], %[[S]] : f32
// CHECK-NEXT:        %[[B:.+]] = memref.load %b[%[[I]]] : memref<8xf32>
// CHECK-NEXT:        %[[Y:.+]] = arith.addf %[[NS]], %[[B]] : f32
// CHECK-NEXT:        memref.store %[[Y]], %y[%[[ROW]], %[[I]]] : memref<2x8xf32>

// -----

// GroupNormalization with 2 groups of 2 channels on [1,4,3]: a nest over (n, group);
// channel = group * 2 + c within the group; scale and bias per channel (opset 21).
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<1x4x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x3xf32> {
    %y = "onnx.GroupNormalization"(%x, %s, %b) {num_groups = 2 : i64} : (tensor<1x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3xf32>
    func.return %y : tensor<1x4x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x4x3xf32>, %s: memref<4xf32>, %b: memref<4xf32>, %y: memref<1x4x3xf32>) {
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[COUNT:.+]] = arith.constant 6.000000e+00 : f32
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK-NEXT:    ^bb0(%[[N:.+]]: index, %[[G:.+]]: index):
// CHECK:           %[[BASE:.+]] = arith.muli %[[G]], %[[C2]] : index
// CHECK:           memref.load %s[%{{.+}}] : memref<4xf32>
// CHECK:           memref.load %b[%{{.+}}] : memref<4xf32>
// CHECK:           memref.store %{{.+}}, %y[%[[N]], %{{.+}}, %{{.+}}] : memref<1x4x3xf32>

// -----

// LRN: per (n, c), the output plane accumulates the squares of the planes of the
// clipped channel window [c - 1, c + 2) for size 3, then is normalized in place:
// x / (bias + alpha / size * sum) ** beta, the power 0.75 as sqrt(s) * sqrt(sqrt(s)).
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
    %y = "onnx.LRN"(%x) {size = 3 : i64, alpha = 3.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32>
    func.return %y : tensor<1x5x2x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x5x2x2xf32>, %y: memref<1x5x2x2xf32>) {
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 5] {
// CHECK-NEXT:    ^bb0(%[[N:.+]]: index, %[[C:.+]]: index):
// CHECK:           %[[LOW:.+]] = arith.maxsi
// CHECK:           %[[HIGH:.+]] = arith.minsi
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               memref.store %{{.+}}, %y[%[[N]], %[[C]], %{{.+}}, %{{.+}}]
// CHECK:           scf.for %[[K:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 memref.load %x[%[[N]], %[[K]], %{{.+}}, %{{.+}}]
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[ROOT:.+]] = math.sqrt
// CHECK-NEXT:          %[[ROOT4:.+]] = math.sqrt %[[ROOT]]
// CHECK-NEXT:          %[[POWER:.+]] = arith.mulf %[[ROOT]], %[[ROOT4]]
// CHECK-NEXT:          arith.divf %{{.+}}, %[[POWER]]
// CHECK-NOT:       math.powf
