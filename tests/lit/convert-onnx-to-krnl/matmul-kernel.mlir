// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Float32 MatMul: one krnl.matmul, A read with strides [K, 1], B rows in place
// (ldb = N). Two rows are a single register tile, so B is not packed (no
// scratch). Batch dims broadcast: one (a, b, c) offset triple per product,
// A [3,1,2,6] x B [2,6,5]: a advances by 12 per b0, b by 30 per b1, c by 10.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<3x1x2x6xf32>, %b: tensor<2x6x5xf32>) -> tensor<3x2x2x5xf32> {
    %y = "onnx.MatMul"(%a, %b) : (tensor<3x1x2x6xf32>, tensor<2x6x5xf32>) -> tensor<3x2x2x5xf32>
    func.return %y : tensor<3x2x2x5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%a: memref<3x1x2x6xf32>, %b: memref<2x6x5xf32>, %y: memref<3x2x2x5xf32>) {
// CHECK-NEXT:    krnl.matmul %a, %b into %y {sizes = [2 : i64, 5 : i64, 6 : i64], tile = [12 : i64, 6 : i64, 512 : i64], a_layout = #krnl<a_layout strided>, a_strides = [6 : i64, 1 : i64], b_access = #krnl<b_access rows>, ldb = 5 : i64, ldc = 5 : i64,
// CHECK-SAME:      batch = [0 : i64, 0 : i64, 0 : i64, 0 : i64, 30 : i64, 10 : i64, 12 : i64, 0 : i64, 20 : i64, 12 : i64, 30 : i64, 30 : i64, 24 : i64, 0 : i64, 40 : i64, 24 : i64, 30 : i64, 50 : i64], clip = [0xfff0000000000000 : f64, 0x7ff0000000000000 : f64]} :
// CHECK-NEXT:    func.return

// -----

// Gemm with transA and a constant B^T scaled by alpha: Y starts as beta * C,
// then the kernel accumulates (`accumulate`); B^T * alpha, [K, N], is packed
// at compile time into column panels [ceil(N/16), K, 16] (a new weight), so
// nothing is packed at run time (no scratch). A^T is read with strides [1, M].
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<3x20xf32>, %c: tensor<4xf32>) -> tensor<20x4xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
    %y = "onnx.Gemm"(%a, %w, %c) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {transA = 1 : si64, transB = 1 : si64, alpha = 2.0 : f32} : (tensor<3x20xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<20x4xf32>
    func.return %y : tensor<20x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate
// CHECK:         %[[B:.+]] = krnl.global {value = #onnx.weight<"{{.*}}_b_panels", tensor<1x3x16xf32>>} : memref<1x3x16xf32>
// CHECK-NEXT:    krnl.matmul %a, %[[B]] into %y {sizes = [20 : i64, 4 : i64, 3 : i64],
// CHECK-SAME:      a_layout = #krnl<a_layout strided>, a_strides = [1 : i64, 20 : i64], b_access = #krnl<b_access panels>
// CHECK-SAME:      batch = [0 : i64, 0 : i64, 0 : i64], accumulate, clip

// -----

// A matrix-vector product with constant weights (one row, K = 300 > kc): B in
// panels ([ceil(40/16), 300, 16]) and the whole reduction in one block (tile
// [12, 300, 512]): B streams through once, the accumulators stay in registers.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<1x300xf32>) -> tensor<1x40xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<300x40xf32>} : () -> tensor<300x40xf32>
    %y = "onnx.MatMul"(%a, %w) : (tensor<1x300xf32>, tensor<300x40xf32>) -> tensor<1x40xf32>
    func.return %y : tensor<1x40xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[B:.+]] = krnl.global {value = #onnx.weight<"{{.*}}_b_panels", tensor<3x300x16xf32>>} : memref<3x300x16xf32>
// CHECK-NEXT:    krnl.matmul %a, %[[B]] into %y {sizes = [1 : i64, 40 : i64, 300 : i64], tile = [12 : i64, 300 : i64, 512 : i64]
// CHECK-SAME:      b_access = #krnl<b_access panels>
