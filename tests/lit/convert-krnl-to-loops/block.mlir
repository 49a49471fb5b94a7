// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s

// 30 is not a multiple of 8: the inner loop's upper bound is clamped to the
// original bound for the last, partial tile. The inner loop carries the
// original induction variable.
func.func @partial_tiles(%m: memref<30xf32>) {
  %i = krnl.define_loops 1
  %io, %ii = krnl.block %i 8
  krnl.iterate(%io, %ii) with (%i) bounds [0] to [30] {
  ^bb0(%iv: index):
    %x = memref.load %m[%iv] : memref<30xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @partial_tiles(
// CHECK-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C30:.+]] = arith.constant 30 : index
// CHECK-NEXT:    %[[C8:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[TILE:.+]] = %[[C0]] to %[[C30]] step %[[C8]] {
// CHECK-NEXT:      %[[END:.+]] = arith.addi %[[TILE]], %[[C8]] : index
// CHECK-NEXT:      %[[CLAMPED:.+]] = arith.minsi %[[END]], %[[C30]] : index
// CHECK-NEXT:      scf.for %[[I:.+]] = %[[TILE]] to %[[CLAMPED]] step %[[C1]] {
// CHECK-NEXT:        %x = memref.load %m[%[[I]]] : memref<30xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Whole tiles (32 = 4 * 8, also from a non-zero lower bound) need no clamp.
func.func @whole_tiles(%m: memref<40xf32>) {
  %i = krnl.define_loops 1
  %io, %ii = krnl.block %i 8
  krnl.iterate(%io, %ii) with (%i) bounds [8] to [40] {
  ^bb0(%iv: index):
    %x = memref.load %m[%iv] : memref<40xf32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @whole_tiles(
// CHECK-NEXT:    %[[C8:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %[[C40:.+]] = arith.constant 40 : index
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[TILE:.+]] = %[[C8]] to %[[C40]] step %[[C8]] {
// CHECK-NEXT:      %[[END:.+]] = arith.addi %[[TILE]], %[[C8]] : index
// CHECK-NEXT:      scf.for %[[I:.+]] = %[[TILE]] to %[[END]] step %[[C1]] {
// CHECK-NEXT:        %x = memref.load %m[%[[I]]] : memref<40xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
