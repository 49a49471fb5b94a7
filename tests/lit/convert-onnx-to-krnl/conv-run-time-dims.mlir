// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Conv over a height and width known at run time only takes the direct kernel:
// rows bounded by the output dims read at entry, each row's taps clipped at run
// time against the input's dims (no static proof that a window stays inside).
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
// CHECK:         krnl.iterate({{.*}}) with ({{.*}}) bounds [0, 0, 0] to [1, 4, %[[OH]]] {
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[OW]] step
// CHECK:           arith.subi %[[H]], %{{.+}} : index
// CHECK:           arith.addi %{{.+}}, %[[W]] : index
// CHECK:           arith.minsi %{{.+}}, %[[OW]] : index
// CHECK-NOT:     krnl.matmul
