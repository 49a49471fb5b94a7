// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s

// map [2, 0, 1]: %a goes to depth 2, %b to depth 0, %c to depth 1.
func.func @all_loops(%m: memref<2x3x4xf32>) {
  %a, %b, %c = krnl.define_loops 3
  krnl.permute(%a, %b, %c) [2, 0, 1]
  krnl.iterate(%a, %b, %c) with (%a, %b, %c) bounds [0, 0, 0] to [2, 3, 4] {
  ^bb0(%av: index, %bv: index, %cv: index):
    %x = memref.load %m[%av, %bv, %cv] : memref<2x3x4xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @all_loops(
// CHECK:         scf.for %bv = %{{.+}} to %c3 step %c1 {
// CHECK-NEXT:      scf.for %cv = %{{.+}} to %c4 step %c1 {
// CHECK-NEXT:        scf.for %av = %{{.+}} to %c2 step %c1 {
// CHECK-NEXT:          %x = memref.load %m[%av, %bv, %cv] : memref<2x3x4xf32>

// Permuting some loops swaps them among the depths they occupy; %b stays put.
func.func @some_loops(%m: memref<2x3x4xf32>) {
  %a, %b, %c = krnl.define_loops 3
  krnl.permute(%a, %c) [1, 0]
  krnl.iterate(%a, %b, %c) with (%a, %b, %c) bounds [0, 0, 0] to [2, 3, 4] {
  ^bb0(%av: index, %bv: index, %cv: index):
    %x = memref.load %m[%av, %bv, %cv] : memref<2x3x4xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @some_loops(
// CHECK:         scf.for %cv = %{{.+}} to %c4 step %c1 {
// CHECK-NEXT:      scf.for %bv = %{{.+}} to %c3 step %c1 {
// CHECK-NEXT:        scf.for %av = %{{.+}} to %c2 step %c1 {
// CHECK-NEXT:          %x = memref.load %m[%av, %bv, %cv] : memref<2x3x4xf32>
