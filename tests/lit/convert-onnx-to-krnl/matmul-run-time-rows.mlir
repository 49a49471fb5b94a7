// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// x[batch, seq, 8] @ W[8, 4] with W constant: one krnl.matmul over the rows
// batch*seq known at run time (`rows`), x and the result viewed as [rows, 8]
// and [rows, 4], W packed in panels; it round-trips through the printer.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x?x8xf32, ["batch", "seq", ""]>) -> tensor<?x?x4xf32, ["batch", "seq", ""]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
    %y = "onnx.MatMul"(%x, %w) : (tensor<?x?x8xf32, ["batch", "seq", ""]>, tensor<8x4xf32>) -> tensor<?x?x4xf32, ["batch", "seq", ""]>
    func.return %y : tensor<?x?x4xf32, ["batch", "seq", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?x8xf32>, %y: memref<?x?x4xf32>) {
// CHECK:         %[[BATCH:.+]] = memref.dim %x, %{{.+}} : memref<?x?x8xf32>
// CHECK-NEXT:    %[[SEQ:.+]] = memref.dim %x, %{{.+}} : memref<?x?x8xf32>
// CHECK:         %[[ROWS:.+]] = arith.muli %[[BATCH]], %[[SEQ]] : index
// CHECK-NEXT:    %[[A:.+]] = krnl.view %x[0 : i64] (%[[ROWS]]) : memref<?x?x8xf32> to memref<?x8xf32>
// CHECK-NEXT:    %[[C:.+]] = krnl.view %y[0 : i64] (%[[ROWS]]) : memref<?x?x4xf32> to memref<?x4xf32>
// CHECK-NEXT:    %[[W:.+]] = krnl.global {{.*}} : memref<1x8x16xf32>
// CHECK-NEXT:    krnl.matmul %[[A]], %[[W]] into %[[C]] rows %[[ROWS]] {sizes = [256 : i64, 4 : i64, 8 : i64],
// CHECK-SAME:      b_access = #krnl<b_access panels>

// -----

// The same product, then + b[4] and Gelu: the kernel adds the bias per column
// (`bias_columns`, the bias a compile-time weight) and applies the GELU in its
// store (`activation gelu`); the result is Gelu's, in %y; no nest is left.
builtin.module attributes {onnx.opset = 20 : i64} {
  func.func @main_graph(%x: tensor<?x?x8xf32, ["batch", "seq", ""]>) -> tensor<?x?x4xf32, ["batch", "seq", ""]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
    %b = "onnx.Constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
    %m = "onnx.MatMul"(%x, %w) : (tensor<?x?x8xf32, ["batch", "seq", ""]>, tensor<8x4xf32>) -> tensor<?x?x4xf32, ["batch", "seq", ""]>
    %a = "onnx.Add"(%m, %b) : (tensor<?x?x4xf32, ["batch", "seq", ""]>, tensor<4xf32>) -> tensor<?x?x4xf32, ["batch", "seq", ""]>
    %y = "onnx.Gelu"(%a) : (tensor<?x?x4xf32, ["batch", "seq", ""]>) -> tensor<?x?x4xf32, ["batch", "seq", ""]>
    func.return %y : tensor<?x?x4xf32, ["batch", "seq", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?x8xf32>, %y: memref<?x?x4xf32>) {
// CHECK:         %[[C:.+]] = krnl.view %y[0 : i64]
// CHECK:         %[[BIAS:.+]] = krnl.global {value = #onnx.weight<"{{.*}}bias", tensor<4xf32>>} : memref<4xf32>
// CHECK-NEXT:    krnl.matmul %{{.+}}, %{{.+}} into %[[C]] bias %[[BIAS]] rows %{{.+}} {sizes = [256 : i64, 4 : i64, 8 : i64],
// CHECK-SAME:      bias_columns, activation = #krnl<activation gelu>
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return
