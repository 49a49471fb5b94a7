// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s

// An upper bound known at run time only (a memref.dim) bounds its scf.for
// directly; a blocked loop over it always clamps its tiles (they may be partial).
func.func @run_time_rows(%m: memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %m, %c0 : memref<?x32xf32>
  %i, %j = krnl.define_loops 2
  %io, %ii = krnl.block %i 4
  krnl.iterate(%io, %ii, %j) with (%i, %j) bounds [0, 0] to [%rows, 32] {
  ^bb0(%iv: index, %jv: index):
    %x = memref.load %m[%iv, %jv] : memref<?x32xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @run_time_rows(
// CHECK:         %[[ROWS:.+]] = memref.dim %m, %{{.+}} : memref<?x32xf32>
// CHECK:         scf.for %[[TILE:.+]] = %{{.+}} to %[[ROWS]] step %[[C4:.+]] {
// CHECK-NEXT:      %[[END:.+]] = arith.addi %[[TILE]], %[[C4]] : index
// CHECK-NEXT:      %[[CLAMPED:.+]] = arith.minsi %[[END]], %[[ROWS]] : index
// CHECK-NEXT:      scf.for %iv = %[[TILE]] to %[[CLAMPED]] step %{{.+}} {
// CHECK-NEXT:        scf.for %jv = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:          %x = memref.load %m[%iv, %jv] : memref<?x32xf32>
