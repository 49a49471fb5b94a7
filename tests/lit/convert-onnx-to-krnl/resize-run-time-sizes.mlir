// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Linear Resize along a width known at run time only: the tap tables (input
// positions, weights) are not constants but filled by a loop over the output
// positions at run time, in f64 as numpy computes the static ones; the
// kernel then reads them as it reads constant tables.
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x1x?xf32, ["", "", "w"]>) -> tensor<1x1x?xf32, ["", "", "2*w"]> {
    %roi = "onnx.Constant"() {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
    %scales = "onnx.Constant"() {value = dense<[1.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
    %y = "onnx.Resize"(%x, %roi, %scales) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> {mode = "linear", coordinate_transformation_mode = "asymmetric"} : (tensor<1x1x?xf32, ["", "", "w"]>, tensor<0xf32>, tensor<3xf32>) -> tensor<1x1x?xf32, ["", "", "2*w"]>
    func.return %y : tensor<1x1x?xf32, ["", "", "2*w"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x1x?xf32>, %y: memref<1x1x?xf32>) {
// CHECK:         %[[W:.+]] = memref.dim %x, %{{.+}} : memref<1x1x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x1x?xf32>
// CHECK:         %[[INDICES:.+]] = memref.alloc(%[[OW]]) : memref<?x2xi64>
// CHECK-NEXT:    %[[WEIGHTS:.+]] = memref.alloc(%[[OW]]) : memref<?x2xf32>
// CHECK:         krnl.iterate(%{{.+}}) with (%{{.+}}) bounds [0] to [%[[OW]]] {
// CHECK-NEXT:    ^bb0(%[[O:.+]]: index):
// CHECK:           %[[X:.+]] = arith.divf %{{.+}}, %{{.+}} : f64
// CHECK-NEXT:      %[[LEFT:.+]] = math.floor %[[X]] : f64
// CHECK:           memref.store %{{.+}}, %[[INDICES]][%[[O]], %{{.+}}] : memref<?x2xi64>
// CHECK:           memref.store %{{.+}}, %[[WEIGHTS]][%[[O]], %{{.+}}] : memref<?x2xf32>
// CHECK:         krnl.iterate(%{{.+}}) with (%{{.+}}) bounds [0, 0, 0] to [1, 1, %[[OW]]] {
// CHECK-NEXT:    ^bb0(%{{.+}}: index, %{{.+}}: index, %[[P:.+]]: index):
// CHECK-NEXT:      %{{.+}} = memref.load %[[INDICES]][%[[P]], %{{.+}}] : memref<?x2xi64>

// -----

// DeepLab's x8 bilinear upsampling of a map of run-time height and width: the constant scale
// says the width grows, so its pass (gathers along the row) runs first, into a buffer of H x OW,
// and the height's (whole rows) second, into the output (H then W took twice as long).
builtin.module attributes {onnx.opset = 19 : i64} {
  func.func @main_graph(%x: tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x2x?x?xf32, ["", "", "h*8", "w*8"]> {
    %s = "onnx.Constant"() {value = dense<[1.0, 1.0, 8.0, 8.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %y = "onnx.Resize"(%x, %s) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>}> {mode = "linear"} : (tensor<1x2x?x?xf32, ["", "", "h", "w"]>, tensor<4xf32>) -> tensor<1x2x?x?xf32, ["", "", "h*8", "w*8"]>
    func.return %y : tensor<1x2x?x?xf32, ["", "", "h*8", "w*8"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x?x?xf32>, %y: memref<1x2x?x?xf32>) {
// CHECK:         %[[H:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK:         %[[OH:.+]] = memref.dim %y, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[OW:.+]] = memref.dim %y, %{{.+}} : memref<1x2x?x?xf32>
// CHECK:         %[[WIDE:.+]] = memref.alloc(%[[H]], %[[OW]]) : memref<1x2x?x?xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 2, %[[H]], %[[OW]]] {
// CHECK:           memref.store %{{.+}}, %[[WIDE]]
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 2, %[[OH]], %[[OW]]] {
// CHECK:           memref.load %[[WIDE]]
// CHECK:           memref.store %{{.+}}, %y
