// RUN: onnxc-opt %s | onnxc-opt | filecheck %s
// RUN: onnxc-opt %s --print-op-generic | onnxc-opt | filecheck %s

// The custom syntax of every krnl op round-trips, and so does the generic form.
func.func @main_graph(%in: memref<4x30xf32>, %out: memref<4x30xf32>) {
  %w = krnl.global {value = dense<1.5> : tensor<30xf32>} : memref<30xf32>
  %l:2 = krnl.define_loops 2
  %jo, %ji = krnl.block %l#1 8 {note = "tile"}
  krnl.permute(%l#0, %jo, %ji) [1, 0, 2]
  krnl.iterate(%l#0, %jo, %ji) with (%l#0, %l#1) bounds [0, 0] to [4, 30] {
  ^bb0(%iv: index, %jv: index):
    %x = memref.load %in[%iv, %jv] : memref<4x30xf32>
    %y = memref.load %w[%jv] : memref<30xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %out[%iv, %jv] : memref<4x30xf32>
    krnl.yield
  }
  krnl.iterate() with () bounds [] to [] {
    krnl.yield
  } {note = "scalar"}
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y"]}

// CHECK:      %w = krnl.global {value = dense<1.500000e+00> : tensor<30xf32>} : memref<30xf32>
// CHECK-NEXT: %[[I:.+]], %[[J:.+]] = krnl.define_loops 2
// CHECK-NEXT: %jo, %ji = krnl.block %[[J]] 8 {note = "tile"}
// CHECK-NEXT: krnl.permute(%[[I]], %jo, %ji) [1, 0, 2]
// CHECK-NEXT: krnl.iterate(%[[I]], %jo, %ji) with (%[[I]], %[[J]]) bounds [0, 0] to [4, 30] {
// CHECK-NEXT: ^bb0(%iv: index, %jv: index):
// CHECK-NEXT:   %x = memref.load %in[%iv, %jv] : memref<4x30xf32>
// CHECK:        memref.store %z, %out[%iv, %jv] : memref<4x30xf32>
// CHECK-NEXT:   krnl.yield
// CHECK-NEXT: }
// CHECK-NEXT: krnl.iterate() with () bounds [] to [] {
// CHECK-NEXT:   krnl.yield
// CHECK-NEXT: } {note = "scalar"}
// CHECK-NEXT: func.return
// CHECK:      krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y"]}
