// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// DeformConv 2x2 without mask or bias: per output element, a sum over (input
// channel, kernel row, kernel column); each tap reads its two offsets (h, w),
// adds them to the regular input position, and samples the input bilinearly
// (4 loads, each zero outside the input) times the weight.
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x2x2xf32>, %off: tensor<1x8x3x3xf32>) -> tensor<1x3x3x3xf32> {
    %y = "onnx.DeformConv"(%x, %w, %off) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (tensor<1x2x4x4xf32>, tensor<3x2x2x2xf32>, tensor<1x8x3x3xf32>) -> tensor<1x3x3x3xf32>
    func.return %y : tensor<1x3x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 3, 3, 3] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[m:.+]]: index, %[[oh:.+]]: index, %[[ow:.+]]: index):
// CHECK:           %[[SUM:.+]] = scf.for %[[c:[^ ]+]] =
// CHECK:             scf.for %[[kh:[^ ]+]] =
// CHECK:               scf.for %[[kw:[^ ]+]] =
// CHECK:                 memref.load %off[%[[n]], %{{.+}}, %[[oh]], %[[ow]]] : memref<1x8x3x3xf32>
// CHECK:                 math.floor
// CHECK:                 memref.load %off[%[[n]], %{{.+}}, %[[oh]], %[[ow]]] : memref<1x8x3x3xf32>
// CHECK:                 math.floor
// CHECK-COUNT-4:         memref.load %x[%[[n]], %[[c]], %{{.+}}, %{{.+}}] : memref<1x2x4x4xf32>
// CHECK:                 memref.load %w[%[[m]], %[[c]], %[[kh]], %[[kw]]] : memref<3x2x2x2xf32>
// CHECK:           memref.store %[[SUM]], %y[%[[n]], %[[m]], %[[oh]], %[[ow]]] : memref<1x3x3x3xf32>
