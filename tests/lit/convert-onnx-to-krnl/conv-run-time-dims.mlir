// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Conv of constant weights over a height and width known at run time only
// takes the GEMM kernel: N = OH*OW columns at run time (`columns`), B packed by
// im2col from the image's run-time sizes and padding (`image`: H, W, OH, OW
// read at entry, the pads); the geometry attribute holds the sizes scheduled for.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x?x?xf32, ["", "", "H", "W"]>) -> tensor<1x4x?x?xf32, ["", "", "H", "W"]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {pads = [1 : i64, 1 : i64, 1 : i64, 1 : i64]} : (tensor<1x2x?x?xf32, ["", "", "H", "W"]>, tensor<4x2x3x3xf32>) -> tensor<1x4x?x?xf32, ["", "", "H", "W"]>
    func.return %y : tensor<1x4x?x?xf32, ["", "", "H", "W"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x?x?xf32>, %y: memref<1x4x?x?xf32>) {
// CHECK:         %[[H:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[W:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[OH:.+]] = memref.dim %y, %{{.+}} : memref<1x4x?x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x4x?x?xf32>
// CHECK:         %[[N:.+]] = arith.muli %[[OH]], %[[OW]] : index
// CHECK:         krnl.matmul %{{.+}}, %x into %y bias %{{.+}} columns %[[N]] offsets(%{{.+}}, %{{.+}}) image(%[[H]], %[[W]], %[[OH]], %[[OW]], %[[PAD:.+]], %[[PAD]])
// CHECK-SAME:      sizes = [4 : i64, 1024 : i64, 18 : i64]
// CHECK-SAME:      b_access = #krnl<b_access im2col>
// CHECK-SAME:      padding = [0, 0]
