// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Nearest with zeros padding: per spatial dim, the grid value (x for W, read
// from grid[..., 0], y for H from grid[..., 1]) is denormalized, rounded half
// to even, and clamped into the input for the load; a position outside the
// input reads 0 instead.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<1x2x3x4xf32>, %grid: tensor<1x5x6x2xf32>) -> tensor<1x2x5x6xf32> {
    %y = "onnx.GridSample"(%x, %grid) {mode = "nearest", padding_mode = "zeros"} : (tensor<1x2x3x4xf32>, tensor<1x5x6x2xf32>) -> tensor<1x2x5x6xf32>
    func.return %y : tensor<1x2x5x6xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 2, 5, 6] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[h:.+]]: index, %[[w:.+]]: index):
// CHECK-NEXT:      %[[GY:.+]] = memref.load %grid[%[[n]], %[[h]], %[[w]], %{{.+}}] : memref<1x5x6x2xf32>
// CHECK:           %[[RY:.+]] = math.roundeven
// CHECK:           %[[INY:.+]] = arith.andi
// CHECK:           %[[IY:.+]] = arith.index_cast
// CHECK:           %[[GX:.+]] = memref.load %grid[%[[n]], %[[h]], %[[w]], %{{.+}}] : memref<1x5x6x2xf32>
// CHECK:           math.roundeven
// CHECK:           %[[INX:.+]] = arith.andi
// CHECK:           %[[IX:.+]] = arith.index_cast
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[n]], %[[c]], %[[IY]], %[[IX]]] : memref<1x2x3x4xf32>
// CHECK-NEXT:      %[[IN:.+]] = arith.andi %[[INY]], %[[INX]] : i1
// CHECK-NEXT:      %[[S:.+]] = arith.select %[[IN]], %[[V]], %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[S]], %y[%[[n]], %[[c]], %[[h]], %[[w]]] : memref<1x2x5x6xf32>

// -----

// Bilinear: four taps (2 per dim), each weight times the pixel, summed.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<1x1x3x4xf32>, %grid: tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
    %y = "onnx.GridSample"(%x, %grid) {mode = "linear", padding_mode = "border"} : (tensor<1x1x3x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
    func.return %y : tensor<1x1x2x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-COUNT-2: math.floor
// CHECK-COUNT-4: memref.load %x
// CHECK-NOT:     memref.load %x
// CHECK:         memref.store


// -----

// AffineGrid: each grid point is theta[n] times (x, y, 1), with x and y read
// from constant tables of normalized pixel centers (align_corners = 0: (2i+1)/W - 1).
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%theta: tensor<2x2x3xf32>) -> tensor<2x3x4x2xf32> {
    %size = "onnx.Constant"() {value = dense<[2, 1, 3, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
    %y = "onnx.AffineGrid"(%theta, %size) : (tensor<2x2x3xf32>, tensor<4xi64>) -> tensor<2x3x4x2xf32>
    func.return %y : tensor<2x3x4x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[XS:.+]] = krnl.global {value = dense<[-7.500000e-01, -2.500000e-01, 2.500000e-01, 7.500000e-01]> : tensor<4xf64>} : memref<4xf64>
// CHECK-DAG:     %[[YS:.+]] = krnl.global {value = dense<[-0.666{{[0-9]+}}, 0.000000e+00, 0.666{{[0-9]+}}]> : tensor<3xf64>} : memref<3xf64>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 3, 4] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[h:.+]]: index, %[[w:.+]]: index):
// CHECK-NEXT:      memref.load %[[XS]][%[[w]]]
// CHECK-NEXT:      memref.load %[[YS]][%[[h]]]
// CHECK-COUNT-2:   memref.store {{.*}}, %y[%[[n]], %[[h]], %[[w]], %{{.+}}] : memref<2x3x4x2xf32>
