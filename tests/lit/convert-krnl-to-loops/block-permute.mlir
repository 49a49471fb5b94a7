// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s

// The krnl docstring's example: tiles of %j outermost, then %i, then the
// points of the tile. The clamp sits where the tile's loop starts.
func.func @tile_outside(%m: memref<4x30xf32>) {
  %i, %j = krnl.define_loops 2
  %jo, %ji = krnl.block %j 8
  krnl.permute(%i, %jo, %ji) [1, 0, 2]
  krnl.iterate(%i, %jo, %ji) with (%i, %j) bounds [0, 0] to [4, 30] {
  ^bb0(%iv: index, %jv: index):
    %x = memref.load %m[%iv, %jv] : memref<4x30xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @tile_outside(
// CHECK-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C30:.+]] = arith.constant 30 : index
// CHECK-NEXT:    %[[C8:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %[[C4:.+]] = arith.constant 4 : index
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[TILE:.+]] = %[[C0]] to %[[C30]] step %[[C8]] {
// CHECK-NEXT:      scf.for %iv = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:        %[[END:.+]] = arith.addi %[[TILE]], %[[C8]] : index
// CHECK-NEXT:        %[[CLAMPED:.+]] = arith.minsi %[[END]], %[[C30]] : index
// CHECK-NEXT:        scf.for %jv = %[[TILE]] to %[[CLAMPED]] step %[[C1]] {
// CHECK-NEXT:          %x = memref.load %m[%iv, %jv] : memref<4x30xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Both loops tiled, tiles outside points (io, jo, ii, ji): 6 is a multiple
// of 2 (no clamp), 7 is not a multiple of 4 (clamp).
func.func @two_tiled_loops(%m: memref<6x7xf32>) {
  %i, %j = krnl.define_loops 2
  %io, %ii = krnl.block %i 2
  %jo, %ji = krnl.block %j 4
  krnl.permute(%io, %ii, %jo, %ji) [0, 2, 1, 3]
  krnl.iterate(%io, %ii, %jo, %ji) with (%i, %j) bounds [0, 0] to [6, 7] {
  ^bb0(%iv: index, %jv: index):
    %x = memref.load %m[%iv, %jv] : memref<6x7xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @two_tiled_loops(
// CHECK:         scf.for %[[IO:.+]] = %c0{{.*}} to %c6 step %c2 {
// CHECK-NEXT:      scf.for %[[JO:.+]] = %c0{{.*}} to %c7 step %c4 {
// CHECK-NEXT:        %[[IEND:.+]] = arith.addi %[[IO]], %c2 : index
// CHECK-NEXT:        scf.for %iv = %[[IO]] to %[[IEND]] step %c1 {
// CHECK-NEXT:          %[[JEND:.+]] = arith.addi %[[JO]], %c4 : index
// CHECK-NEXT:          %[[JCLAMPED:.+]] = arith.minsi %[[JEND]], %c7 : index
// CHECK-NEXT:          scf.for %jv = %[[JO]] to %[[JCLAMPED]] step %c1 {
// CHECK-NEXT:            %x = memref.load %m[%iv, %jv] : memref<6x7xf32>
