// RUN: onnxc-opt %s | onnxc-opt | filecheck %s
// RUN: onnxc-opt %s --print-op-generic | onnxc-opt | filecheck %s

// krnl.matmul's typed attributes round-trip: layouts and access modes as enum
// attributes, flags as unit attributes, the conv geometry by field name.
func.func @main_graph(%a: memref<1x18x12xf32>, %x: memref<1x2x5x5xf32>, %y: memref<1x4x9xf32>) {
  krnl.matmul %a, %x into %y {sizes = [4 : i64, 9 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access im2col>, ldb = 0 : i64, conv = #krnl.conv<channels = 2, height = 5, width = 5, output = [3, 3], kernel = [3, 3], stride = [2, 2], dilation = [1, 1], padding = [1, 1]>, ldc = 9 : i64, batch = [0 : i64, 0 : i64, 0 : i64], accumulate, clip = [0.0 : f64, 6.0 : f64], pack} : memref<1x18x12xf32>, memref<1x2x5x5xf32>, memref<1x4x9xf32>
  func.return
}

// CHECK:      krnl.matmul %a, %x into %y {sizes = [4 : i64, 9 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64],
// CHECK-SAME:   a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access im2col>, ldb = 0 : i64,
// CHECK-SAME:   conv = #krnl.conv<channels = 2, height = 5, width = 5, output = [3, 3], kernel = [3, 3], stride = [2, 2], dilation = [1, 1], padding = [1, 1]>,
// CHECK-SAME:   ldc = 9 : i64, batch = [0 : i64, 0 : i64, 0 : i64], accumulate, clip = [0.000000e+00 : f64, 6.000000e+00 : f64], pack}

// Run-time rows from a run-time first row (one product of a batched MatMul of run-time rows).
func.func @stacked(%a: memref<?x2xf32>, %w: memref<1x6x16xf32>, %c: memref<?x3xf32>, %rows: index, %first: index) {
  krnl.matmul %a, %w into %c rows %rows first_row %first {sizes = [256 : i64, 3 : i64, 6 : i64], tile = [12 : i64, 6 : i64, 512 : i64], a_layout = #krnl<a_layout strided>, a_strides = [4 : i64, 1 : i64], b_access = #krnl<b_access panels>, ldb = 3 : i64, ldc = 3 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<?x2xf32>, memref<1x6x16xf32>, memref<?x3xf32>
  func.return
}

// CHECK:      krnl.matmul %a, %w into %c rows %rows first_row %first {sizes = [256 : i64, 3 : i64, 6 : i64]

// The epilogue's activation (a 1x1 conv's HardSwish).
func.func @activation(%a: memref<1x8x12xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 16 : i64, 8 : i64], tile = [12 : i64, 8 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access rows>, ldb = 16 : i64, ldc = 16 : i64, batch = [0 : i64, 0 : i64, 0 : i64], activation = #krnl<activation hard_swish>, clip = [0.0 : f64, 6.0 : f64]} : memref<1x8x12xf32>, memref<8x16xf32>, memref<4x16xf32>
  func.return
}

// CHECK:      krnl.matmul %a, %b into %c {sizes = [4 : i64, 16 : i64, 8 : i64]
// CHECK-SAME:   activation = #krnl<activation hard_swish>, clip = [0.000000e+00 : f64, 6.000000e+00 : f64]}
