// RUN: not onnxc-opt %s 2>&1 | filecheck %s

// Only the activations code generation knows parse.
func.func @main_graph(%a: memref<1x8x12xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  krnl.matmul %a, %b into %c {sizes = [4 : i64, 16 : i64, 8 : i64], tile = [12 : i64, 8 : i64, 512 : i64], a_layout = #krnl<a_layout panels>, a_strides = [0 : i64, 0 : i64], b_access = #krnl<b_access rows>, ldb = 16 : i64, ldc = 16 : i64, batch = [0 : i64, 0 : i64, 0 : i64], activation = #krnl<activation tanh>, clip = [0.0 : f64, 6.0 : f64]} : memref<1x8x12xf32>, memref<8x16xf32>, memref<4x16xf32>
  func.return
}
// CHECK: Expected `hard_swish`, `silu`, or `gelu`.
