// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// ConvInteger over a 7x7 image (49 pixels: 64 columns as krnl.qmatmul's columns, 49 rows as
// its rows) with 16 output channels and a reduction of 64: the product in the lanes. The
// im2col matrix, packed as for the other orientation (80 columns: 64 and the panel's skew), is
// A read in place (a_panels: its 49 pixels the rows); the weights, transposed, are B in blocks
// of 64 columns (b_blocked), the offsets per column; C is stored transposed into the NCHW
// result (transposed_c, ldc = 49).
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<1x64x7x7xui8>) -> tensor<1x16x7x7xi32> {
    %zx = "onnx.Constant"() {value = dense<5> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.Constant"() {value = dense<3> : tensor<16x64x1x1xi8>} : () -> tensor<16x64x1x1xi8>
    %y = "onnx.ConvInteger"(%x, %w, %zx) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x64x7x7xui8>, tensor<16x64x1x1xi8>, tensor<ui8>) -> tensor<1x16x7x7xi32>
    func.return %y : tensor<1x16x7x7xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[OFFSETS:.+]] = krnl.global {value = #onnx.weight<"convinteger_offsets", tensor<64xi32>>}
// CHECK-NEXT:    %[[B:.+]] = krnl.global {value = #onnx.weight<"convinteger_panels", tensor<1x16x64x4xi8>>}
// CHECK-NEXT:    %[[PACKED:.+]] = memref.alloc() : memref<16x80x4xui8>
// CHECK:         krnl.qmatmul %[[PACKED]], %[[B]] into %y offsets %[[OFFSETS]] {sizes = [49 : i64, 16 : i64, 16 : i64], row_tile = 12 : i64, ldc = 49 : i64, {{.*}} per_column, a_panels, b_blocked, transposed_c} : memref<16x80x4xui8>, memref<1x16x64x4xi8>, memref<1x16x7x7xi32>, memref<64xi32>
