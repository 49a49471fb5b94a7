// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Softmax (opset 13) over axis 1 of [2,3,4]: a krnl nest over the other dims
// (0, 2); inside, an scf.for reduction for the max (maxnumf fastmath<nnan>: a NaN
// makes the sum NaN anyway, and a maxnum free of NaN vectorizes), a loop storing exp(x - max) and summing it (its adds
// may be reassociated, fastmath<reassoc>: it vectorizes), then a loop scaling by 1/sum.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    %y = "onnx.Softmax"(%x) {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    func.return %y : tensor<2x3x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x3x4xf32>, %y: memref<2x3x4xf32>) {
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[NEG_INF:.+]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 4] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[MAX:.+]] = scf.for %[[c:.+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[M:.+]] = %[[NEG_INF]]) -> (f32) {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%[[n]], %[[c]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:        %[[M1:.+]] = arith.maxnumf %[[M]], %[[V]] fastmath<nnan> : f32
// CHECK-NEXT:        scf.yield %[[M1]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SUM:.+]] = scf.for %[[c:.+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[S:.+]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT:        %[[V:.+]] = memref.load %x[%[[n]], %[[c]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:        %[[D:.+]] = arith.subf %[[V]], %[[MAX]] : f32
// CHECK-NEXT:        %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT:        memref.store %[[E]], %y[%[[n]], %[[c]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:        %[[S1:.+]] = arith.addf %[[S]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[S1]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[R:.+]] = arith.divf %[[ONE]], %[[SUM]] : f32
// CHECK-NEXT:      scf.for %[[c:.+]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:        %[[E:.+]] = memref.load %y[%[[n]], %[[c]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:        %[[Q:.+]] = arith.mulf %[[E]], %[[R]] : f32
// CHECK-NEXT:        memref.store %[[Q]], %y[%[[n]], %[[c]], %[[k]]] : memref<2x3x4xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      krnl.yield

// -----

// Softmax before opset 13: axis defaults to 1 and covers every dim from it on.
builtin.module attributes {onnx.opset = 11 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    %y = "onnx.Softmax"(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    func.return %y : tensor<2x3x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [2] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index):
// CHECK-NEXT:      scf.for %[[c:.+]] = {{.*}} iter_args
// CHECK-NEXT:        scf.for %[[k:.+]] = {{.*}} iter_args
// CHECK-NEXT:          memref.load %x[%[[n]], %[[c]], %[[k]]]

// -----

// BatchNormalization: scale / sqrt(var + epsilon) once per channel into a
// buffer, then (x - mean) * factor + bias with the statistics indexed by dim 1.
builtin.module attributes {onnx.opset = 15 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x4xf32>, %scale: tensor<3xf32>, %bias: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
    %y = "onnx.BatchNormalization"(%x, %scale, %bias, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> {epsilon = 1.0e-3 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
    func.return %y : tensor<2x3x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[EPS:.+]] = arith.constant 1.000000e-03 : f32
// CHECK:         %[[FACTOR:.+]] = memref.alloc() : memref<3xf32>
// CHECK-NEXT:    krnl.define_loops 1
// CHECK-NEXT:    krnl.iterate({{.*}}) bounds [0] to [3] {
// CHECK-NEXT:    ^bb0(%[[c:.+]]: index):
// CHECK-NEXT:      %[[S:.+]] = memref.load %scale[%[[c]]] : memref<3xf32>
// CHECK-NEXT:      %[[V:.+]] = memref.load %var[%[[c]]] : memref<3xf32>
// CHECK-NEXT:      %[[VE:.+]] = arith.addf %[[V]], %[[EPS]] : f32
// CHECK-NEXT:      %[[SD:.+]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT:      %[[F:.+]] = arith.divf %[[S]], %[[SD]] : f32
// CHECK-NEXT:      memref.store %[[F]], %[[FACTOR]][%[[c]]] : memref<3xf32>
// CHECK:         %[[XV:.+]] = krnl.view %x[0 : i64] : memref<2x3x4x4xf32> to memref<2x3x16xf32>
// CHECK-NEXT:    %[[YV:.+]] = krnl.view %y[0 : i64] : memref<2x3x4x4xf32> to memref<2x3x16xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 3, 16] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[hw:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %[[XV]][%[[n]], %[[c]], %[[hw]]]
// CHECK-NEXT:      %[[M:.+]] = memref.load %mean[%[[c]]]
// CHECK-NEXT:      %[[F:.+]] = memref.load %[[FACTOR]][%[[c]]]
// CHECK-NEXT:      %[[B:.+]] = memref.load %bias[%[[c]]]
// CHECK-NEXT:      %[[XM:.+]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[XF:.+]] = arith.mulf %[[XM]], %[[F]] : f32
// CHECK-NEXT:      %[[Y:.+]] = arith.addf %[[XF]], %[[B]] : f32
// CHECK-NEXT:      memref.store %[[Y]], %[[YV]][%[[n]], %[[c]], %[[hw]]]

// -----

// float16 Softmax: the exponentials are stored (rounded) as float16, their sum accumulates
// in float32 and is rounded once before the division (as numpy sums, hence ONNX's reference).
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<2x5xf16>) -> tensor<2x5xf16> {
    %y = "onnx.Softmax"(%x) {axis = -1 : i64} : (tensor<2x5xf16>) -> tensor<2x5xf16> loc("sm16")
    func.return %y : tensor<2x5xf16>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x5xf16>, %y: memref<2x5xf16>) {
// CHECK:         %[[SUM:.+]] = scf.for {{.*}} iter_args(%[[ACC:.+]] = %{{.*}}) -> (f32) {
// CHECK:           %[[E:.+]] = math.exp %{{.*}} : f16
// CHECK-NEXT:      memref.store %[[E]], %y[{{.*}}] : memref<2x5xf16>
// CHECK-NEXT:      %[[W:.+]] = arith.extf %[[E]] : f16 to f32
// CHECK-NEXT:      %[[NEXT:.+]] = arith.addf %[[ACC]], %[[W]] fastmath<reassoc> : f32
// CHECK-NEXT:      scf.yield %[[NEXT]] : f32
// CHECK:         %[[TOTAL:.+]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK:           arith.divf %{{.*}}, %[[TOTAL]] : f16
