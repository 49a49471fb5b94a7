// RUN: not onnxc-opt %s 2>&1 | filecheck %s

// Only the layouts code generation knows parse.
func.func @main_graph(%a: memref<4x18xf32>, %b: memref<18x9xf32>, %c: memref<4x9xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 9 : i64, 18 : i64], tile = [12 : i64, 18 : i64, 512 : i64], a_layout = #krnl<a_layout diagonal>, a_strides = [18 : i64, 1 : i64], b_access = #krnl<b_access rows>, ldb = 9 : i64, ldc = 9 : i64, batch = [0 : i64, 0 : i64, 0 : i64], clip = [0.0 : f64, 6.0 : f64]} : memref<4x18xf32>, memref<18x9xf32>, memref<4x9xf32>
  func.return
}
// CHECK: Expected `panels`, `strided`, or `window`.
