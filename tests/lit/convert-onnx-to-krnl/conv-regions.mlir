// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// A 3x3 conv at dilation 6 (padding 6) over an 8x8 image: along each axis, outputs
// 0-1 read kernel offsets 1-2 (offset 0 falls in the padding), outputs 2-5 only offset 1,
// outputs 6-7 offsets 0-1. Each of the 3 x 3 regions is one product over only the taps it
// reads: the first, outputs [0, 2) x [0, 2), multiplies the weight columns of taps
// (1..2, 1..2) of both channels (K = 8, packed at compile time) by the im2col of its 4
// outputs over those taps, a 2x2 kernel at dilation 6 packed from x without padding (every
// read is inside the image), into a buffer whose 2 x 2 outputs a last nest copies into %y.
// The Relu is the kernel's clamp.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {dilations = [6, 6], pads = [6, 6, 6, 6]} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32>
    %y = "onnx.Relu"(%c) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    func.return %y : tensor<1x4x8x8xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x8x8xf32>, %y: memref<1x4x8x8xf32>) {
// CHECK:         %[[BIAS:.+]] = krnl.global {value = #onnx.weight<"conv_bias", tensor<4xf32>>}
// CHECK-NEXT:    %[[A:.+]] = krnl.global {value = #onnx.weight<"conv_region0_panels", tensor<1x8x12xf32>>}
// CHECK-NEXT:    %[[C:.+]] = memref.alloc() : memref<1x4x4xf32>
// CHECK-NEXT:    krnl.matmul %[[A]], %x into %[[C]] bias %[[BIAS]]
// CHECK-SAME:      sizes = [4 : i64, 4 : i64, 8 : i64]
// CHECK-SAME:      b_access = #krnl<b_access im2col>
// CHECK-SAME:      conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [2, 2], kernel = [2, 2], stride = [1, 1], dilation = [6, 6], padding = [0, 0]>, ldc = 4 : i64
// CHECK-SAME:      batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.000000e+00 : f64, 0x7ff0000000000000 : f64], pack} :
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 4, 2, 2] {
// CHECK:           %[[KEPT:.+]] = memref.load %[[C]]
// CHECK-NEXT:      memref.store %[[KEPT]], %y
// The middle region, outputs [2, 6) x [2, 6), reads only the centre tap (K = 2), x from
// row 2, column 2 (offset 18).
// CHECK:         krnl.global {value = #onnx.weight<"conv_region4_panels", tensor<1x2x12xf32>>}
// CHECK:         krnl.matmul
// CHECK-SAME:      sizes = [4 : i64, 16 : i64, 2 : i64]
// CHECK-SAME:      output = [4, 4], kernel = [1, 1]
// CHECK-SAME:      batch = [0 : i64, 18 : i64, 0 : i64]
// CHECK-COUNT-4: krnl.matmul
// CHECK-NOT:     krnl.matmul
// CHECK:         func.return

// -----

// A 3x1 conv dilated 6 along H only: its regions are whole output rows (0-1, 2-5, 6-7),
// whose products write straight into %y (ldc = 8*8, C from row 2 at 16 and row 6 at 48;
// B from x's row 2 at 16, then from row 0 again: rows 6-7 read offsets 0-1, rows 0-1).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<4x2x3x1xf32>} : () -> tensor<4x2x3x1xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {dilations = [6, 1], pads = [6, 0, 6, 0]} : (tensor<1x2x8x8xf32>, tensor<4x2x3x1xf32>) -> tensor<1x4x8x8xf32>
    func.return %y : tensor<1x4x8x8xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.matmul {{.*}}, %x into %y
// CHECK-SAME:      sizes = [4 : i64, 16 : i64, 4 : i64]
// CHECK-SAME:      ldc = 64 : i64, batch = [0 : i64, 0 : i64, 0 : i64]
// CHECK:         krnl.matmul {{.*}}, %x into %y
// CHECK-SAME:      sizes = [4 : i64, 32 : i64, 2 : i64]
// CHECK-SAME:      ldc = 64 : i64, batch = [0 : i64, 16 : i64, 16 : i64]
// CHECK:         krnl.matmul {{.*}}, %x into %y
// CHECK-SAME:      batch = [0 : i64, 0 : i64, 48 : i64]
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return
