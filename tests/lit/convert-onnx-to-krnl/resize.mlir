// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Linear resize runs one pass per resized axis (H into a scratch buffer, then
// W into the output). Each output position reads its two taps through a
// constant table of input positions and weights (half_pixel: row 0 reads
// rows 0 and 0 with weights 1/4 and 3/4, as the edge is repeated).
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
    %scales = "onnx.Constant"() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %y = "onnx.Resize"(%x, %scales) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>}> {mode = "linear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
    func.return %y : tensor<1x1x4x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK:         %[[ROWS:.+]] = memref.alloc() : memref<1x1x4x2xf32>
// CHECK:         %[[IDX:.+]] = krnl.global {value = dense<{{\[}}[0, 0], [0, 1], [0, 1], [1, 1]]> : tensor<4x2xi64>} : memref<4x2xi64>
// CHECK:         %[[W:.+]] = krnl.global {value = dense<{{\[}}[2.500000e-01, 7.500000e-01], [7.500000e-01, 2.500000e-01], {{.*}}]> : tensor<4x2xf32>} : memref<4x2xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 4, 2] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[h:.+]]: index, %[[w:.+]]: index):
// CHECK-NEXT:      %[[I0:.+]] = memref.load %[[IDX]][%[[h]], %[[C0]]] : memref<4x2xi64>
// CHECK-NEXT:      %[[H0:.+]] = arith.index_cast %[[I0]] : i64 to index
// CHECK-NEXT:      %[[X0:.+]] = memref.load %x[%[[n]], %[[c]], %[[H0]], %[[w]]] : memref<1x1x2x2xf32>
// CHECK-NEXT:      %[[W0:.+]] = memref.load %[[W]][%[[h]], %[[C0]]] : memref<4x2xf32>
// CHECK-NEXT:      %[[T0:.+]] = arith.mulf %[[W0]], %[[X0]] : f32
// CHECK-NEXT:      %[[I1:.+]] = memref.load %[[IDX]][%[[h]], %[[C1]]] : memref<4x2xi64>
// CHECK-NEXT:      %[[H1:.+]] = arith.index_cast %[[I1]] : i64 to index
// CHECK-NEXT:      %[[X1:.+]] = memref.load %x[%[[n]], %[[c]], %[[H1]], %[[w]]] : memref<1x1x2x2xf32>
// CHECK-NEXT:      %[[W1:.+]] = memref.load %[[W]][%[[h]], %[[C1]]] : memref<4x2xf32>
// CHECK-NEXT:      %[[T1:.+]] = arith.mulf %[[W1]], %[[X1]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK-NEXT:      memref.store %[[S]], %[[ROWS]][%[[n]], %[[c]], %[[h]], %[[w]]] : memref<1x1x4x2xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 4, 4] {
// CHECK:           memref.load %[[ROWS]]
// CHECK:           memref.store {{.*}}, %y[

// -----

// Nearest resize of an integer tensor: one tap per position, no arithmetic.
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x3xi8>) -> tensor<1x2xi8> {
    %sizes = "onnx.Constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    %y = "onnx.Resize"(%x, %sizes) <{operandSegmentSizes = array<i32: 1, 0, 0, 1>}> {mode = "nearest"} : (tensor<1x3xi8>, tensor<2xi64>) -> tensor<1x2xi8>
    func.return %y : tensor<1x2xi8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[IDX:.+]] = krnl.global {value = dense<{{\[}}[0], [2]]> : tensor<2x1xi64>} : memref<2x1xi64>
// CHECK:         ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[I:.+]] = memref.load %[[IDX]][%[[j]], %{{.+}}] : memref<2x1xi64>
// CHECK-NEXT:      %[[J:.+]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[i]], %[[J]]] : memref<1x3xi8>
// CHECK-NEXT:      memref.store %[[V]], %y[%[[i]], %[[j]]] : memref<1x2xi8>
