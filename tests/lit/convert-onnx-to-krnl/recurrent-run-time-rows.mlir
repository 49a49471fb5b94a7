// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// An RNN over a sequence and batch known at run time only (one direction,
// constant weights): the input projection is one krnl.matmul over seq*batch
// rows (`rows`), X and the projection viewed as [rows, 2] and [rows, 4]; each
// step's recurrent product is one over the batch's rows, R^T read in place
// (scheduled for a few rows: not packed again at every step).
builtin.module attributes {onnx.opset = 14 : i64} {
  func.func @main_graph(%x: tensor<?x?x2xf32, ["seq", "batch", ""]>) -> tensor<?x1x?x4xf32, ["seq", "", "batch", ""]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<1x4x2xf32>} : () -> tensor<1x4x2xf32>
    %r = "onnx.Constant"() {value = dense<0.25> : tensor<1x4x4xf32>} : () -> tensor<1x4x4xf32>
    %y = "onnx.RNN"(%x, %w, %r) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0>}> {hidden_size = 4 : i64} : (tensor<?x?x2xf32, ["seq", "batch", ""]>, tensor<1x4x2xf32>, tensor<1x4x4xf32>) -> tensor<?x1x?x4xf32, ["seq", "", "batch", ""]>
    func.return %y : tensor<?x1x?x4xf32, ["seq", "", "batch", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?x2xf32>, %y: memref<?x1x?x4xf32>) {
// CHECK:         %[[SEQ:.+]] = memref.dim %x, %{{.+}} : memref<?x?x2xf32>
// CHECK-NEXT:    %[[BATCH:.+]] = memref.dim %x, %{{.+}} : memref<?x?x2xf32>
// CHECK:         %[[ROWS:.+]] = arith.muli %[[SEQ]], %[[BATCH]] : index
// CHECK:         %[[X:.+]] = krnl.view %x[0 : i64] (%[[ROWS]]) : memref<?x?x2xf32> to memref<?x2xf32>
// CHECK-NEXT:    %[[P:.+]] = krnl.view %{{.+}}[0 : i64] (%[[ROWS]]) : memref<1x?x?x4xf32> to memref<?x4xf32>
// CHECK-NEXT:    krnl.matmul %[[X]], %{{.+}} into %[[P]] rows %[[ROWS]] {sizes = [256 : i64, 4 : i64, 2 : i64]
// CHECK:         scf.for %{{.+}} = %{{.+}} to %[[SEQ]] step
// CHECK:           krnl.matmul %{{.+}}, %{{.+}} into %{{.+}} rows %[[BATCH]] {sizes = [12 : i64, 4 : i64, 4 : i64]
// CHECK-SAME:        accumulate
// CHECK-NOT:         pack
