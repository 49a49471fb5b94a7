// RUN: onnxc-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The verifier checks the conv geometry against the access mode and B's shape.

// A window reads an image padded already, at stride 1.
func.func @main_graph(%a: memref<1x18x12xf32>, %b: memref<1x2x64xf32>, %c: memref<1x4x46xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 46 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access window>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [6, 6], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [1, 1]>, ldc = 46 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<1x18x12xf32>, memref<1x2x64xf32>, memref<1x4x46xf32>
  func.return
}
// CHECK: krnl.matmul: window access needs stride 1 and an image padded already

// -----

// K = C*KH*KW (2*3*3 = 18, not 16).
func.func @main_graph(%a: memref<1x16x12xf32>, %b: memref<1x2x64xf32>, %c: memref<1x4x46xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 46 : i64, 16 : i64], tile = [12 : i64, 16 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access window>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [6, 6], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 46 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<1x16x12xf32>, memref<1x2x64xf32>, memref<1x4x46xf32>
  func.return
}
// CHECK: krnl.matmul: K must be the conv's channels * kernel_h * kernel_w

// -----

// im2col needs its image's geometry.
func.func @main_graph(%a: memref<1x18x12xf32>, %b: memref<1x2x25xf32>, %c: memref<1x4x9xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 9 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access im2col>, ldb = 0 : i64, ldc = 9 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64], pack} : memref<1x18x12xf32>, memref<1x2x25xf32>, memref<1x4x9xf32>
  func.return
}
// CHECK: krnl.matmul: im2col and window access, and only they, need a conv geometry

// -----

// Run-time columns: B and C rows are N apart, so ldb and ldc must be left 0.
func.func @main_graph(%a: memref<1x2x12xf32>, %b: memref<?x2x?xf32>, %c: memref<?x4x?xf32>, %n: index) {
  krnl.matmul %a, %b into %c columns %n {sizes = [4 : i64, 1024 : i64, 2 : i64], tile = [12 : i64, 2 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access rows>, ldb = 1024 : i64, ldc = 0 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<1x2x12xf32>, memref<?x2x?xf32>, memref<?x4x?xf32>
  func.return
}
// CHECK: krnl.matmul: run-time columns set ldb and ldc (0 here), one batch triple

// -----

// im2col over a run-time image needs its sizes and padding.
func.func @main_graph(%a: memref<1x18x12xf32>, %b: memref<?x2x?x?xf32>, %c: memref<?x4x?x?xf32>, %n: index) {
  krnl.matmul %a, %b into %c columns %n {sizes = [4 : i64, 1024 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access im2col>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 32, width = 32, output = [32, 32], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [1, 1]>, ldc = 0 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64], pack} : memref<1x18x12xf32>, memref<?x2x?x?xf32>, memref<?x4x?x?xf32>
  func.return
}
// CHECK: krnl.matmul: offsets are (B, C); image (H, W, OH, OW, pads) with im2col

// -----

// The groups of a grouped conv: one bias offset per batch triple (two triples, one offset).
func.func @main_graph(%a: memref<2x18x12xf32>, %b: memref<1x4x64xf32>, %c: memref<1x16x46xf32>, %bias: memref<16xf32>) {
  krnl.matmul %a, %b into %c bias %bias {sizes = [8 : i64, 46 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access window>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [6, 6], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 46 : i64, batch = [0 : i64, 0 : i64, 0 : i64, 216 : i64, 128 : i64, 368 : i64], bias_offsets = [0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<2x18x12xf32>, memref<1x4x64xf32>, memref<1x16x46xf32>, memref<16xf32>
  func.return
}
// CHECK: krnl.matmul: bias_offsets need a bias and one offset per batch triple

// -----

// ... each reading M = 8 values of the bias: from offset 9, past its 16.
func.func @main_graph(%a: memref<2x18x12xf32>, %b: memref<1x4x64xf32>, %c: memref<1x16x46xf32>, %bias: memref<16xf32>) {
  krnl.matmul %a, %b into %c bias %bias {sizes = [8 : i64, 46 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access window>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 8, width = 8, output = [6, 6], kernel = [3, 3], stride = [1, 1], dilation = [1, 1], padding = [0, 0]>, ldc = 46 : i64, batch = [0 : i64, 0 : i64, 0 : i64, 216 : i64, 128 : i64, 368 : i64], bias_offsets = [0 : i64, 9 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<2x18x12xf32>, memref<1x4x64xf32>, memref<1x16x46xf32>, memref<16xf32>
  func.return
}
// CHECK: krnl.matmul: bias must have shape [M], or M values from each bias offset

// -----

// A first row needs run-time rows (static products take their offsets in `batch`).
func.func @main_graph(%a: memref<8x2xf32>, %w: memref<1x6x16xf32>, %c: memref<8x3xf32>, %first: index) {
  krnl.matmul %a, %w into %c first_row %first {sizes = [4 : i64, 3 : i64, 6 : i64], tile = [12 : i64, 6 : i64, 512 : i64], a_layout = #krnl<a_layout strided>, a_strides = [4 : i64, 1 : i64], b_access = #krnl<b_access panels>, ldb = 3 : i64, ldc = 3 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<8x2xf32>, memref<1x6x16xf32>, memref<8x3xf32>
  func.return
}
// CHECK: krnl.matmul: first_row goes with run-time rows

// -----

// A bias per column needs a bias (of N values).
func.func @main_graph(%a: memref<4x8xf32>, %b: memref<1x8x16xf32>, %c: memref<4x16xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 16 : i64, 8 : i64], tile = [12 : i64, 8 : i64, 512 : i64], a_layout = #krnl<a_layout strided>, a_strides = [8 : i64, 1 : i64], b_access = #krnl<b_access panels>, ldb = 16 : i64, ldc = 16 : i64, batch = [0 : i64, 0 : i64, 0 : i64], bias_columns, clip = [0.0 : f64, 6.0 : f64]} : memref<4x8xf32>, memref<1x8x16xf32>, memref<4x16xf32>
  func.return
}
// CHECK: krnl.matmul: bias_columns needs a bias, static columns, no transposed_c or bias_offsets
