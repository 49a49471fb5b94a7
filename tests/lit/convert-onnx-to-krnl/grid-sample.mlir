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

