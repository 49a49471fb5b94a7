// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Float64 here: float32 MatMul and Gemm take the GEMM kernel (see matmul-kernel.mlir),
// other element types these loop nests.
// MatMul: the output is zeroed, then accumulated by a nest over (i, j, k) whose
// j loop is blocked by 64 and ordered (j tile, i, k, j in tile), so the
// innermost loop walks rows of B and of the output with unit stride.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<5x7xf64>, %b: tensor<7x100xf64>) -> tensor<5x100xf64> {
    %y = "onnx.MatMul"(%a, %b) : (tensor<5x7xf64>, tensor<7x100xf64>) -> tensor<5x100xf64>
    func.return %y : tensor<5x100xf64>
  }
}

// CHECK-LABEL: func.func @main_graph(%a: memref<5x7xf64>, %b: memref<7x100xf64>, %y: memref<5x100xf64>) {
// CHECK:         %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [5, 100] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      memref.store %[[ZERO]], %y[%[[i]], %[[j]]] : memref<5x100xf64>
// CHECK:         %[[I:.+]], %[[J:.+]], %[[K:.+]] = krnl.define_loops 3
// CHECK-NEXT:    %[[JO:.+]], %[[JI:.+]] = krnl.block %[[J]] 64
// CHECK-NEXT:    krnl.permute(%[[I]], %[[JO]], %[[JI]], %[[K]]) [1, 0, 3, 2]
// CHECK-NEXT:    krnl.iterate(%[[I]], %[[JO]], %[[JI]], %[[K]]) with (%[[I]], %[[J]], %[[K]]) bounds [0, 0, 0] to [5, 100, 7] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %a[%[[i]], %[[k]]] : memref<5x7xf64>
// CHECK-NEXT:      %[[W:.+]] = memref.load %b[%[[k]], %[[j]]] : memref<7x100xf64>
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[X]], %[[W]] : f64
// CHECK-NEXT:      %[[ACC:.+]] = memref.load %y[%[[i]], %[[j]]] : memref<5x100xf64>
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f64
// CHECK-NEXT:      memref.store %[[S]], %y[%[[i]], %[[j]]] : memref<5x100xf64>
// CHECK-NEXT:      krnl.yield

// -----

// Batched MatMul with a broadcast batch dim and a 1-D rhs (a column that
// leaves no j dim): no blocking, and (batch, i, k) is the order they come in.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<1x4x6xf64>, %b: tensor<6xf64>) -> tensor<1x4xf64> {
    %y = "onnx.MatMul"(%a, %b) : (tensor<1x4x6xf64>, tensor<6xf64>) -> tensor<1x4xf64>
    func.return %y : tensor<1x4xf64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[B0:.+]], %[[I:.+]], %[[K:.+]] = krnl.define_loops 3
// CHECK-NEXT:    krnl.iterate(%[[B0]], %[[I]], %[[K]]) with (%[[B0]], %[[I]], %[[K]]) bounds [0, 0, 0] to [1, 4, 6] {
// CHECK-NEXT:    ^bb0(%[[b:.+]]: index, %[[i:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      memref.load %a[%[[b]], %[[i]], %[[k]]] : memref<1x4x6xf64>
// CHECK-NEXT:      memref.load %b[%[[k]]] : memref<6xf64>

// -----

// Batched MatMul, batch dims broadcast: A [3,1,4,6] x B [2,6,5] -> [3,2,4,5].
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<3x1x4x6xf64>, %b: tensor<2x6x5xf64>) -> tensor<3x2x4x5xf64> {
    %y = "onnx.MatMul"(%a, %b) : (tensor<3x1x4x6xf64>, tensor<2x6x5xf64>) -> tensor<3x2x4x5xf64>
    func.return %y : tensor<3x2x4x5xf64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK:         %[[B0:.+]], %[[B1:.+]], %[[I:.+]], %[[J:.+]], %[[K:.+]] = krnl.define_loops 5
// CHECK-NEXT:    %[[JO:.+]], %[[JI:.+]] = krnl.block %[[J]] 64
// CHECK-NEXT:    krnl.permute(%[[B0]], %[[B1]], %[[I]], %[[JO]], %[[JI]], %[[K]]) [0, 1, 3, 2, 5, 4]
// CHECK-NEXT:    krnl.iterate({{.*}}) bounds [0, 0, 0, 0, 0] to [3, 2, 4, 5, 6] {
// CHECK-NEXT:    ^bb0(%[[b0:.+]]: index, %[[b1:.+]]: index, %[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      memref.load %a[%[[b0]], %[[C0]], %[[i]], %[[k]]] : memref<3x1x4x6xf64>
// CHECK-NEXT:      memref.load %b[%[[b1]], %[[k]], %[[j]]] : memref<2x6x5xf64>

// -----

// Gemm: Y starts as beta * C (C broadcast from [N]); the product is scaled by
// alpha as it is accumulated. transA/transB swap the operands' indices.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<6x4xf64>, %b: tensor<5x6xf64>, %c: tensor<5xf64>) -> tensor<4x5xf64> {
    %y = "onnx.Gemm"(%a, %b, %c) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {alpha = 0.5 : f64, beta = 2.0 : f64, transA = 1 : i64, transB = 1 : i64} : (tensor<6x4xf64>, tensor<5x6xf64>, tensor<5xf64>) -> tensor<4x5xf64>
    func.return %y : tensor<4x5xf64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[BETA:.+]] = arith.constant 2.000000e+00 : f64
// CHECK-DAG:     %[[ALPHA:.+]] = arith.constant 5.000000e-01 : f64
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [4, 5] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[C:.+]] = memref.load %c[%[[j]]] : memref<5xf64>
// CHECK-NEXT:      %[[BC:.+]] = arith.mulf %[[C]], %[[BETA]] : f64
// CHECK-NEXT:      memref.store %[[BC]], %y[%[[i]], %[[j]]] : memref<4x5xf64>
// CHECK:         krnl.block
// CHECK:         ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[X:.+]] = memref.load %a[%[[k]], %[[i]]] : memref<6x4xf64>
// CHECK-NEXT:      %[[AX:.+]] = arith.mulf %[[X]], %[[ALPHA]] : f64
// CHECK-NEXT:      %[[W:.+]] = memref.load %b[%[[j]], %[[k]]] : memref<5x6xf64>
// CHECK-NEXT:      %[[P:.+]] = arith.mulf %[[AX]], %[[W]] : f64
