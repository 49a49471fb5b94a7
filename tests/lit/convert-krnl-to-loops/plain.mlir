// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s
// RUN: onnxc-opt %s -p convert-krnl-to-loops | filecheck %s --check-prefix=GONE

// GONE-NOT: krnl.{{define_loops|block|permute|iterate|yield}}

// A plain nest: one scf.for per loop in listed order, the body moved into the
// innermost loop with the original induction variables; krnl.global and
// krnl.entry_point stay for codegen.
func.func @main_graph(%in: memref<3x5xf32>, %out: memref<3x5xf32>) {
  %w = krnl.global {value = dense<2.0> : tensor<5xf32>} : memref<5xf32>
  %i, %j = krnl.define_loops 2
  krnl.iterate(%i, %j) with (%i, %j) bounds [0, 1] to [3, 5] {
  ^bb0(%iv: index, %jv: index):
    %x = memref.load %in[%iv, %jv] : memref<3x5xf32>
    %y = memref.load %w[%jv] : memref<5xf32>
    %z = arith.mulf %x, %y : f32
    memref.store %z, %out[%iv, %jv] : memref<3x5xf32>
    krnl.yield
  }
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y"]}

// CHECK-LABEL: func.func @main_graph(
// CHECK-NEXT:    %w = krnl.global {value = dense<2.000000e+00> : tensor<5xf32>} : memref<5xf32>
// CHECK-NEXT:    %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C3:.+]] = arith.constant 3 : index
// CHECK-NEXT:    %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT:    %[[C5:.+]] = arith.constant 5 : index
// CHECK-NEXT:    scf.for %[[I:.+]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:      scf.for %[[J:.+]] = %[[C1]] to %[[C5]] step %[[C1]] {
// CHECK-NEXT:        %x = memref.load %in[%[[I]], %[[J]]] : memref<3x5xf32>
// CHECK-NEXT:        %y = memref.load %w[%[[J]]] : memref<5xf32>
// CHECK-NEXT:        %z = arith.mulf %x, %y : f32
// CHECK-NEXT:        memref.store %z, %out[%[[I]], %[[J]]] : memref<3x5xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y"]}

// A body with its own scf.for (a reduction) and an iterate nested in an
// iterate: both levels are lowered, the inner nest inside the outer loop.
func.func @nested(%m: memref<4x6xf32>, %sums: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %i = krnl.define_loops 1
  krnl.iterate(%i) with (%i) bounds [0] to [4] {
  ^bb0(%iv: index):
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c1 = arith.constant 1 : index
    %sum = scf.for %k = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %m[%iv, %k] : memref<4x6xf32>
      %next = arith.addf %acc, %v : f32
      scf.yield %next : f32
    }
    memref.store %sum, %sums[%iv] : memref<4xf32>
    %j = krnl.define_loops 1
    krnl.iterate(%j) with (%j) bounds [0] to [6] {
    ^bb1(%jv: index):
      memref.store %sum, %m[%iv, %jv] : memref<4x6xf32>
      krnl.yield
    }
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @nested(
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:           %[[SUM:.+]] = scf.for %k = {{.*}} iter_args(%acc = %zero) -> (f32) {
// CHECK:           memref.store %[[SUM]], %sums[%[[I]]] : memref<4xf32>
// CHECK:           scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT:        memref.store %[[SUM]], %m[%[[I]], %[[J]]] : memref<4x6xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// An iterate over no loops (a scalar) runs its body once, in place.
func.func @scalar(%m: memref<f32>) {
  krnl.iterate() with () bounds [] to [] {
    %x = memref.load %m[] : memref<f32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %m[] : memref<f32>
    krnl.yield
  }
  func.return
}

// CHECK-LABEL: func.func @scalar(
// CHECK-NEXT:    %x = memref.load %m[] : memref<f32>
// CHECK-NEXT:    %y = arith.addf %x, %x : f32
// CHECK-NEXT:    memref.store %y, %m[] : memref<f32>
// CHECK-NEXT:    func.return
