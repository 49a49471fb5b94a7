// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// RoiAlign with sampling_ratio 0: per output bin, the number of samples along
// each axis is ceil(bin size), computed from the region at run time, so the
// sample loops have dynamic bounds; each sample reads 4 pixels (bilinear) of
// the region's image, and the average divides by the sample count.
builtin.module attributes {onnx.opset = 16 : i64} {
  func.func @main_graph(%x: tensor<2x3x8x9xf32>, %rois: tensor<4x4xf32>, %idx: tensor<4xi64>) -> tensor<4x3x2x2xf32> {
    %y = "onnx.RoiAlign"(%x, %rois, %idx) {output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 0 : i64} : (tensor<2x3x8x9xf32>, tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x3x2x2xf32>
    func.return %y : tensor<4x3x2x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [4, 3, 2, 2] {
// CHECK-NEXT:    ^bb0(%[[r:.+]]: index, %[[c:.+]]: index, %[[by:.+]]: index, %[[bx:.+]]: index):
// CHECK:           math.ceil
// CHECK:           %[[NY:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:           math.ceil
// CHECK:           %[[NX:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:           %[[IMG:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:           %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[NY]] step
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[NX]] step
// CHECK-COUNT-4:       memref.load %x[%[[IMG]], %[[c]], %{{.+}}, %{{.+}}] : memref<2x3x8x9xf32>
// CHECK:           %[[AVG:.+]] = arith.divf %[[SUM]], %{{.+}} : f64
// CHECK-NEXT:      %[[R:.+]] = arith.truncf %[[AVG]] : f64 to f32
// CHECK-NEXT:      memref.store %[[R]], %y[%[[r]], %[[c]], %[[by]], %[[bx]]] : memref<4x3x2x2xf32>
