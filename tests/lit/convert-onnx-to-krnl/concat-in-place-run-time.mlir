// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// concat-in-place.mlir over a height and width known at run time only (a feature pyramid's
// Concat): %k1 is placed in %y at element 0, the Conv's %c in %k1 at 2 channels times the
// run-time H*W, the Relu's %r in %y at 5 times H*W (krnl.view at a run-time offset, the
// view's own dims its operands); only the graph input %x is copied.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x7x?x?xf32, ["", "", "h", "w"]> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<3x2x1x1xf32>} : () -> tensor<3x2x1x1xf32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x2x?x?xf32, ["", "", "h", "w"]>, tensor<3x2x1x1xf32>) -> tensor<1x3x?x?xf32, ["", "", "h", "w"]>
    %k1 = "onnx.Concat"(%x, %c) <{operandSegmentSizes = array<i32: 2>}> {axis = 1 : i64} : (tensor<1x2x?x?xf32, ["", "", "h", "w"]>, tensor<1x3x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x5x?x?xf32, ["", "", "h", "w"]>
    %r = "onnx.Relu"(%x) : (tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x2x?x?xf32, ["", "", "h", "w"]>
    %y = "onnx.Concat"(%k1, %r) <{operandSegmentSizes = array<i32: 2>}> {axis = 1 : i64} : (tensor<1x5x?x?xf32, ["", "", "h", "w"]>, tensor<1x2x?x?xf32, ["", "", "h", "w"]>) -> tensor<1x7x?x?xf32, ["", "", "h", "w"]>
    func.return %y : tensor<1x7x?x?xf32, ["", "", "h", "w"]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x?x?xf32>, %y: memref<1x7x?x?xf32>) {
// CHECK:         %[[H:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK-NEXT:    %[[W:.+]] = memref.dim %x, %{{.+}} : memref<1x2x?x?xf32>
// CHECK:         %[[K1:.+]] = krnl.view %y[0 : i64] (%[[H]], %[[W]]) : memref<1x7x?x?xf32> to memref<1x5x?x?xf32>
// CHECK:         %[[TWO_ROWS:.+]] = arith.muli %{{.+}}, %[[W]] : index
// CHECK-NEXT:    %[[C:.+]] = krnl.view %[[K1]][0 : i64] + %[[TWO_ROWS]](%[[H]], %[[W]]) : memref<1x5x?x?xf32> to memref<1x3x?x?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         krnl.matmul {{.*}}, %x into %[[C]]
// CHECK:           memref.store %{{.+}}, %[[K1]]
// CHECK:         %[[R:.+]] = krnl.view %y[0 : i64] + %{{.+}}(%[[H]], %[[W]]) : memref<1x7x?x?xf32> to memref<1x2x?x?xf32>
// CHECK:           arith.maximumf
// CHECK-NOT:     memref.load %[[C]]
// CHECK-NOT:     memref.load %[[R]]
// CHECK:         func.return
