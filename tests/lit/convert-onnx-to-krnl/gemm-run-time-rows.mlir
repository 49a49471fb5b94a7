// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Gemm of x[batch, 8] by a constant W[4, 8] (transB): one krnl.matmul over the
// rows known at run time (`rows`), W^T scaled by alpha and packed in panels at
// compile time, the vector C its bias per column (no nest fills Y with C).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x8xf32, ["batch", ""]>) -> tensor<?x4xf32, ["batch", ""]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
    %c = "onnx.Constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
    %y = "onnx.Gemm"(%x, %w, %c) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {transB = 1 : i64, alpha = 2.0 : f32} : (tensor<?x8xf32, ["batch", ""]>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32, ["batch", ""]>
    func.return %y : tensor<?x4xf32, ["batch", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x8xf32>, %y: memref<?x4xf32>) {
// CHECK:         %[[BATCH:.+]] = memref.dim %x, %{{.+}} : memref<?x8xf32>
// CHECK-NOT:     krnl.iterate
// CHECK:         %[[W:.+]] = krnl.global {{.*}}gemm_b_panels{{.*}} : memref<1x8x16xf32>
// CHECK-NEXT:    %[[C:.+]] = krnl.global {{.*}}gemm_bias{{.*}} : memref<4xf32>
// CHECK-NEXT:    krnl.matmul %x, %[[W]] into %y bias %[[C]] rows %[[BATCH]] {sizes = [256 : i64, 4 : i64, 8 : i64],
// CHECK-SAME:      b_access = #krnl<b_access panels>
// CHECK-SAME:      bias_columns

// -----

// C[n, 1] of its own run-time rows (1 or the batch, not unified with Y's by
// shape inference) is read at min(i, n - 1): never past its end.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<?x?xf32, ["m", "k"]>, %b: tensor<?x3xf32, ["k", ""]>, %c: tensor<?x1xf32, ["n", ""]>) -> tensor<?x3xf32, ["m", ""]> {
    %y = "onnx.Gemm"(%a, %b, %c) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<?x?xf32, ["m", "k"]>, tensor<?x3xf32, ["k", ""]>, tensor<?x1xf32, ["n", ""]>) -> tensor<?x3xf32, ["m", ""]>
    func.return %y : tensor<?x3xf32, ["m", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%a: memref<?x?xf32>, %b: memref<?x3xf32>, %c: memref<?x1xf32>, %y: memref<?x3xf32>) {
// CHECK:         %[[N:.+]] = memref.dim %c, %{{.+}} : memref<?x1xf32>
// CHECK:         krnl.iterate
// CHECK:           %[[LAST:.+]] = arith.subi %[[N]], %{{.+}} : index
// CHECK-NEXT:      %[[ROW:.+]] = arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK-NEXT:      %{{.+}} = memref.load %c[%[[ROW]], %{{.+}}] : memref<?x1xf32>

// -----

// Gemm with no C (GPT-2's Conv1D as torch exports it): one krnl.matmul that starts from
// zero; no nest fills Y first and the kernel does not accumulate.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<?x8xf32, ["batch", ""]>) -> tensor<?x4xf32, ["batch", ""]> {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
    %y = "onnx.Gemm"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<?x8xf32, ["batch", ""]>, tensor<8x4xf32>) -> tensor<?x4xf32, ["batch", ""]>
    func.return %y : tensor<?x4xf32, ["batch", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x8xf32>, %y: memref<?x4xf32>) {
// CHECK-NOT:     krnl.iterate
// CHECK:         krnl.matmul %x, %{{.+}} into %y rows %{{.+}} {sizes = [256 : i64, 4 : i64, 8 : i64],
// CHECK-SAME:      b_access = #krnl<b_access panels>
// CHECK-NOT:     accumulate
// CHECK-NOT:     krnl.iterate
