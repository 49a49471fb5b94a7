// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Linear resize runs one pass per resized axis. The innermost axis, whose taps
// are gathers along the row, goes first where it grows (W into a 2x4 scratch
// buffer, then H into the output, reading and writing whole rows), so that its
// pass makes the smaller tensor. Each output position reads its two taps through
// a constant table of input positions and weights (half_pixel: position 0 reads
// 0 and 0 with weights 1/4 and 3/4, as the edge is repeated).
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
// CHECK:         %[[COLUMNS:.+]] = memref.alloc() : memref<1x1x2x4xf32>
// CHECK:         %[[IDX:.+]] = krnl.global {value = dense<{{\[}}[0, 0], [0, 1], [0, 1], [1, 1]]> : tensor<4x2xi64>} : memref<4x2xi64>
// CHECK:         %[[W:.+]] = krnl.global {value = dense<{{\[}}[2.500000e-01, 7.500000e-01], [7.500000e-01, 2.500000e-01], {{.*}}]> : tensor<4x2xf32>} : memref<4x2xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 2, 4] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[h:.+]]: index, %[[w:.+]]: index):
// CHECK-NEXT:      %[[I0:.+]] = memref.load %[[IDX]][%[[w]], %[[C0]]] : memref<4x2xi64>
// CHECK-NEXT:      %[[W0:.+]] = arith.index_cast %[[I0]] : i64 to index
// CHECK-NEXT:      %[[X0:.+]] = memref.load %x[%[[n]], %[[c]], %[[h]], %[[W0]]] : memref<1x1x2x2xf32>
// CHECK-NEXT:      %[[F0:.+]] = memref.load %[[W]][%[[w]], %[[C0]]] : memref<4x2xf32>
// CHECK-NEXT:      %[[T0:.+]] = arith.mulf %[[F0]], %[[X0]] : f32
// CHECK-NEXT:      %[[I1:.+]] = memref.load %[[IDX]][%[[w]], %[[C1]]] : memref<4x2xi64>
// CHECK-NEXT:      %[[W1:.+]] = arith.index_cast %[[I1]] : i64 to index
// CHECK-NEXT:      %[[X1:.+]] = memref.load %x[%[[n]], %[[c]], %[[h]], %[[W1]]] : memref<1x1x2x2xf32>
// CHECK-NEXT:      %[[F1:.+]] = memref.load %[[W]][%[[w]], %[[C1]]] : memref<4x2xf32>
// CHECK-NEXT:      %[[T1:.+]] = arith.mulf %[[F1]], %[[X1]] : f32
// CHECK-NEXT:      %[[S:.+]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK-NEXT:      memref.store %[[S]], %[[COLUMNS]][%[[n]], %[[c]], %[[h]], %[[w]]] : memref<1x1x2x4xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 4, 4] {
// CHECK-NEXT:    ^bb0(%[[n2:.+]]: index, %[[c2:.+]]: index, %[[h2:.+]]: index, %[[w2:.+]]: index):
// CHECK:           memref.load %[[COLUMNS]][%[[n2]], %[[c2]], %{{.+}}, %[[w2]]]
// CHECK:           memref.store {{.*}}, %y[

// -----

// Downsampling runs the innermost axis last (its pass then makes the smaller
// tensor): H first into a 2x8 buffer, then W.
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x1x4x8xf32>) -> tensor<1x1x2x4xf32> {
    %scales = "onnx.Constant"() {value = dense<[1.0, 1.0, 0.5, 0.5]> : tensor<4xf32>} : () -> tensor<4xf32>
    %y = "onnx.Resize"(%x, %scales) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>}> {mode = "linear"} : (tensor<1x1x4x8xf32>, tensor<4xf32>) -> tensor<1x1x2x4xf32>
    func.return %y : tensor<1x1x2x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[ROWS:.+]] = memref.alloc() : memref<1x1x2x8xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 2, 8] {
// CHECK:           memref.store {{.*}}, %[[ROWS]][
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 2, 4] {
// CHECK:           memref.load %[[ROWS]][
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

// -----

// Sizes computed at run time (torch's interpolate(x, size=...) exports
// Concat(Shape(x)[:2], [h, w])): the stretched result's dims are the sizes, so the
// tap tables are constant where those dims are, and the symbolic batch, which the
// result keeps, is not resized. The last pass writes the result itself.
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<?x1x2x2xf32, ["n", "", "", ""]>, %sizes: tensor<4xi64>) -> tensor<?x1x4x4xf32, ["n", "", "", ""]> {
    %y = "onnx.Resize"(%x, %sizes) <{operandSegmentSizes = array<i32: 1, 0, 0, 1>}> {mode = "linear"} : (tensor<?x1x2x2xf32, ["n", "", "", ""]>, tensor<4xi64>) -> tensor<?x1x4x4xf32, ["n", "", "", ""]>
    func.return %y : tensor<?x1x4x4xf32, ["n", "", "", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-SAME:    %x: memref<?x1x2x2xf32>, %sizes: memref<4xi64>, %y: memref<?x1x4x4xf32>
// CHECK:         %[[N:.+]] = memref.dim %x, %{{.+}} : memref<?x1x2x2xf32>
// CHECK:         %[[M:.+]] = memref.dim %y, %{{.+}} : memref<?x1x4x4xf32>
// CHECK:         %[[COLUMNS:.+]] = memref.alloc(%[[N]]) : memref<?x1x2x4xf32>
// CHECK:         krnl.global {value = dense<{{\[}}[0, 0], [0, 1], [0, 1], [1, 1]]> : tensor<4x2xi64>}
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [%[[N]], 1, 2, 4] {
// CHECK:           memref.store {{.*}}, %[[COLUMNS]]
// CHECK-NOT:     memref.alloc
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [%[[M]], 1, 4, 4] {
// CHECK:           memref.store {{.*}}, %y[
// CHECK-NOT:     memref.copy
