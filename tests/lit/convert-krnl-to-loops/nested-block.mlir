// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s

// Blocking the inner loop again: the sub-tiles of a tile are clamped to the
// tile's (already clamped) end; the innermost loop carries %i.
func.func @block_inner(%m: memref<30xf32>) {
  %i = krnl.define_loops 1
  %io, %ii = krnl.block %i 8
  %iio, %iii = krnl.block %ii 4
  krnl.iterate(%io, %iio, %iii) with (%i) bounds [0] to [30] {
  ^bb0(%iv: index):
    %x = memref.load %m[%iv] : memref<30xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @block_inner(
// CHECK:         scf.for %[[TILE:.+]] = %c0 to %c30 step %c8 {
// CHECK-NEXT:      %[[END:.+]] = arith.addi %[[TILE]], %c8 : index
// CHECK-NEXT:      %[[TILE_END:.+]] = arith.minsi %[[END]], %c30 : index
// CHECK-NEXT:      scf.for %[[SUB:.+]] = %[[TILE]] to %[[TILE_END]] step %c4 {
// CHECK-NEXT:        %[[SUB_END:.+]] = arith.addi %[[SUB]], %c4 : index
// CHECK-NEXT:        %[[SUB_CLAMPED:.+]] = arith.minsi %[[SUB_END]], %[[TILE_END]] : index
// CHECK-NEXT:        scf.for %iv = %[[SUB]] to %[[SUB_CLAMPED]] step %c1 {
// CHECK-NEXT:          %x = memref.load %m[%iv] : memref<30xf32>

// Blocking the outer loop again (two-level tiling): tiles of 3 tiles of 4
// step by 12; the middle loop steps by 4 within them.
func.func @block_outer(%m: memref<30xf32>) {
  %i = krnl.define_loops 1
  %io, %ii = krnl.block %i 4
  %ioo, %ioi = krnl.block %io 3
  krnl.iterate(%ioo, %ioi, %ii) with (%i) bounds [0] to [30] {
  ^bb0(%iv: index):
    %x = memref.load %m[%iv] : memref<30xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @block_outer(
// CHECK:         scf.for %[[BIG:.+]] = %c0{{.*}} to %c30{{.*}} step %c12 {
// CHECK-NEXT:      %[[BIG_END:.+]] = arith.addi %[[BIG]], %c12 : index
// CHECK-NEXT:      %[[BIG_CLAMPED:.+]] = arith.minsi %[[BIG_END]], %c30{{.*}} : index
// CHECK-NEXT:      scf.for %[[TILE:.+]] = %[[BIG]] to %[[BIG_CLAMPED]] step %c4{{.*}} {
// CHECK-NEXT:        %[[END:.+]] = arith.addi %[[TILE]], %c4{{.*}} : index
// CHECK-NEXT:        %[[CLAMPED:.+]] = arith.minsi %[[END]], %c30{{.*}} : index
// CHECK-NEXT:        scf.for %iv = %[[TILE]] to %[[CLAMPED]] step %c1{{.*}} {
// CHECK-NEXT:          %x = memref.load %m[%iv] : memref<30xf32>

// A schedule with whole tiles at both levels (24 = 3 * 8, 8 = 2 * 4) has no clamps.
func.func @whole_tiles(%m: memref<24xf32>) {
  %i = krnl.define_loops 1
  %io, %ii = krnl.block %i 8
  %iio, %iii = krnl.block %ii 4
  krnl.iterate(%io, %iio, %iii) with (%i) bounds [0] to [24] {
  ^bb0(%iv: index):
    %x = memref.load %m[%iv] : memref<24xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @whole_tiles(
// CHECK-NOT:     arith.minsi
// CHECK:         func.return
