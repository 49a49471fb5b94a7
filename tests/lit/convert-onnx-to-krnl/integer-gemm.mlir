// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// MatMulInteger of uint8 a with a zero point known at run time (DynamicQuantizeLinear's)
// by constant int8 weights: krnl.qmatmul into the int32 result, no multipliers, the weights
// B in blocks of 64 columns. The offsets (-zero point * column sums of the weights) are made
// by a loop at run time.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%a: tensor<2x5xui8>, %za: tensor<ui8>) -> tensor<2x3xi32> {
    %b = "onnx.Constant"() {value = dense<[[1, 2, 3], [3, 4, 5], [5, 6, 7], [-1, -2, -3], [7, 8, -9]]> : tensor<5x3xi8>} : () -> tensor<5x3xi8>
    %zb = "onnx.Constant"() {value = dense<0> : tensor<i8>} : () -> tensor<i8>
    %y = "onnx.MatMulInteger"(%a, %b, %za, %zb) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> : (tensor<2x5xui8>, tensor<5x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<2x3xi32>
    func.return %y : tensor<2x3xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[SUMS:.+]] = krnl.global {value = #onnx.weight<"{{.*}}weight_sums", tensor<64xi32>>} : memref<64xi32>
// CHECK-NEXT:    %[[OFFSETS:.+]] = memref.alloc() : memref<64xi32>
// CHECK:         krnl.iterate
// CHECK:           %[[Z:.+]] = memref.load %za[] : memref<ui8>
// CHECK:           %[[SUM:.+]] = memref.load %[[SUMS]]
// CHECK-NEXT:      %[[PRODUCT:.+]] = arith.muli %{{.+}}, %[[SUM]] : i32
// CHECK-NEXT:      %[[OFFSET:.+]] = arith.subi %{{.+}}, %[[PRODUCT]] : i32
// CHECK-NEXT:      memref.store %[[OFFSET]], %[[OFFSETS]]
// CHECK:         %[[B:.+]] = krnl.global {value = #onnx.weight<"{{.*}}panels", tensor<1x2x64x4xi8>>} : memref<1x2x64x4xi8>
// CHECK-NEXT:    %[[A:.+]] = memref.alloc() : memref<1x2x12x4xui8>
// CHECK:         krnl.qmatmul %[[A]], %[[B]] into %y offsets %[[OFFSETS]] {sizes = [2 : i64, 3 : i64, 2 : i64], {{.*}} per_column, b_blocked} : memref<1x2x12x4xui8>, memref<1x2x64x4xi8>, memref<2x3xi32>, memref<64xi32>

// -----

// ConvInteger with a run-time zero point, stride 1, output rows as wide as x's: x is copied
// flat into planes of 14 (one slack byte, a zero-point row above it, one slack byte), the
// zero point (loaded) stored around it; the im2col matrix is packed along all 9 columns at
// unit stride, then the column whose windows reach into the left padding is rewritten
// (the zero point where kx reads padding). The weights are the signed rows of krnl.qmatmul,
// the offsets per row.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<1x1x3x3xui8>, %zx: tensor<ui8>) -> tensor<1x2x3x3xi32> {
    %w = "onnx.Constant"() {value = dense<[[[[1, 2], [3, 4]]], [[[-1, 0], [5, -7]]]]> : tensor<2x1x2x2xi8>} : () -> tensor<2x1x2x2xi8>
    %y = "onnx.ConvInteger"(%x, %w, %zx) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> {pads = [1, 1, 0, 0]} : (tensor<1x1x3x3xui8>, tensor<2x1x2x2xi8>, tensor<ui8>) -> tensor<1x2x3x3xi32>
    func.return %y : tensor<1x2x3x3xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[OFFSETS:.+]] = memref.alloc() : memref<2xi32>
// CHECK:         %[[A:.+]] = krnl.global {value = #onnx.weight<"{{.*}}panels", tensor<1x1x12x4xi8>>} : memref<1x1x12x4xi8>
// CHECK-NEXT:    %[[PACKED:.+]] = memref.alloc() : memref<1x80x4xui8>
// CHECK-NEXT:    %[[ZERO:.+]] = memref.load %zx[] : memref<ui8>
// CHECK-NEXT:    %[[PLANES:.+]] = memref.alloc() : memref<1x14xui8>
// CHECK-NEXT:    %[[FLAT:.+]] = krnl.view %x[0 : i64] : memref<1x1x3x3xui8> to memref<1x9xui8>
// CHECK:         memref.store %[[ZERO]], %[[PLANES]]
// CHECK:         memref.store %[[ZERO]], %[[PLANES]]
// CHECK:         %[[VALUE:.+]] = memref.load %[[FLAT]]
// CHECK-NEXT:    memref.store %[[VALUE]], %[[PLANES]]
// CHECK:         krnl.iterate({{.+}}) bounds [0, 0] to [1, 9] {
// CHECK-NEXT:    ^bb0(%[[K4:.+]]: index, %[[COLUMN:.+]]: index):
// CHECK:           memref.load %[[PLANES]]
// CHECK:           memref.store %{{.+}}, %[[PACKED]][%[[K4]], %[[COLUMN]], %{{.+}}] : memref<1x80x4xui8>
// CHECK:         krnl.iterate({{.+}}) bounds [0, 0, 0] to [1, 3, 1] {
// CHECK:           %[[READ:.+]] = memref.load %[[PLANES]]
// CHECK-NEXT:      arith.select %{{.+}}, %[[READ]], %[[ZERO]] : ui8
// CHECK:         krnl.qmatmul %[[A]], %[[PACKED]] into %y offsets %[[OFFSETS]] {sizes = [2 : i64, 9 : i64, 1 : i64], {{.*}} a_signed} : memref<1x1x12x4xi8>, memref<1x80x4xui8>, memref<1x2x3x3xi32>, memref<2xi32>

// -----

// A pointwise (1x1, stride 1, unpadded) conv packs x read as [C, H*W], along whole planes;
// a zero point known at compile time makes the offsets at compile time.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<1x6x2x3xui8>) -> tensor<1x2x2x3xi32> {
    %zx = "onnx.Constant"() {value = dense<5> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.Constant"() {value = dense<[[[[1]], [[2]], [[3]], [[4]], [[5]], [[6]]], [[[-1]], [[0]], [[1]], [[-2]], [[0]], [[2]]]]> : tensor<2x6x1x1xi8>} : () -> tensor<2x6x1x1xi8>
    %y = "onnx.ConvInteger"(%x, %w, %zx) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<1x6x2x3xui8>, tensor<2x6x1x1xi8>, tensor<ui8>) -> tensor<1x2x2x3xi32>
    func.return %y : tensor<1x2x2x3xi32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[OFFSETS:.+]] = krnl.global {value = #onnx.weight<"convinteger_offsets", tensor<2xi32>>}
// CHECK-NEXT:    %[[A:.+]] = krnl.global {value = #onnx.weight<"convinteger_panels", tensor<1x2x12x4xi8>>}
// CHECK-NEXT:    %[[PACKED:.+]] = memref.alloc() : memref<2x80x4xui8>
// CHECK-NEXT:    %[[PLANES:.+]] = krnl.view %x[0 : i64] : memref<1x6x2x3xui8> to memref<6x6xui8>
// CHECK:         krnl.iterate({{.+}}) bounds [0, 0] to [2, 6] {
// CHECK-NEXT:    ^bb0(%[[K4:.+]]: index, %[[COLUMN:.+]]: index):
// CHECK:           memref.load %[[PLANES]][%{{.+}}, %[[COLUMN]]] : memref<6x6xui8>
// CHECK:           memref.store %{{.+}}, %[[PACKED]][%[[K4]], %[[COLUMN]], %{{.+}}] : memref<2x80x4xui8>
// CHECK:         krnl.qmatmul %[[A]], %[[PACKED]] into %y offsets %[[OFFSETS]] {sizes = [2 : i64, 6 : i64, 2 : i64], {{.*}} a_signed}
