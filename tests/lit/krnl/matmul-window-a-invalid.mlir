// RUN: onnxc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A window A (a conv's output pixels as rows, read from its padded image) is checked against the
// conv geometry: M = OH*OW pixels; and only it may store C transposed.

func.func @main_graph(%a: memref<1x2x81xf32>, %b: memref<1x18x16xf32>, %c: memref<1x16x7x7xf32>) {
  krnl.matmul %a, %b into %c {sizes = [48 : i64, 16 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout window>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access panels>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 9, width = 9, output = [7, 7], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 49 : i64, batch = [0 : i64, 0 : i64, 0 : i64], transposed_c, clip = [0.0 : f64, 6.0 : f64]} : memref<1x2x81xf32>, memref<1x18x16xf32>, memref<1x16x7x7xf32>
  func.return
}
// CHECK: krnl.matmul: a window A needs padding 0, M = output_h * output_w

// -----

func.func @main_graph(%a: memref<4x18xf32>, %b: memref<1x18x16xf32>, %c: memref<16x4xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 16 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout strided>, a_strides = [18 : i64, 1 : i64], b_access = #krnl<b_access panels>, ldb = 0 : i64, ldc = 4 : i64, batch = [0 : i64, 0 : i64, 0 : i64], transposed_c, clip = [0.0 : f64, 6.0 : f64]} : memref<4x18xf32>, memref<1x18x16xf32>, memref<16x4xf32>
  func.return
}
// CHECK: krnl.matmul: transposed_c needs a window A

// -----

// The image must hold every window: 7 + 2 rows and columns of a 3x3 kernel.
func.func @main_graph(%a: memref<1x2x64xf32>, %b: memref<1x18x16xf32>, %c: memref<1x16x7x7xf32>) {
  krnl.matmul %a, %b into %c {sizes = [49 : i64, 16 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout window>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access panels>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [7, 7], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 49 : i64, batch = [0 : i64, 0 : i64, 0 : i64], transposed_c, clip = [0.0 : f64, 6.0 : f64]} : memref<1x2x64xf32>, memref<1x18x16xf32>, memref<1x16x7x7xf32>
  func.return
}
// CHECK: krnl.matmul: a window A's image must hold every window
