// RUN: onnxc-opt %s -t 'onnxc-llvm{target=x86_64 cpu=x86-64-v3}' | filecheck %s

// A nest split over threads by %i whose buffer %t is its iterations' own (only
// loaded and stored there, always at [%i, ...]) keeps one row of it in the
// calling thread's scratch (private_scratch.py): each slice of iterations takes it from
// onnxc_thread_scratch at its kernel's entry (no argument for %t), and the
// entry point reserves its 16 KB for every thread. %u, read by the next nest
// too, stays in the arena.
func.func @main_graph(%x: memref<16x4096xf32>, %y: memref<16x4096xf32>, %z: memref<16x4096xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c4096 = arith.constant 4096 : index
  %t = memref.alloc() : memref<16x4096xf32>
  %u = memref.alloc() : memref<16x4096xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c4096 step %c1 {
      %v = memref.load %x[%i, %j] : memref<16x4096xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %t[%i, %j] : memref<16x4096xf32>
    }
    scf.for %j = %c0 to %c4096 step %c1 {
      %k = arith.subi %c4096, %j : index
      %r = arith.subi %k, %c1 : index
      %v = memref.load %t[%i, %r] : memref<16x4096xf32>
      %m = arith.mulf %v, %v : f32
      memref.store %m, %y[%i, %j] : memref<16x4096xf32>
      memref.store %m, %u[%i, %j] : memref<16x4096xf32>
    }
  }
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c4096 step %c1 {
      %v = memref.load %u[%i, %j] : memref<16x4096xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %z[%i, %j] : memref<16x4096xf32>
    }
  }
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y", "z"]}

// CHECK:      define internal i32 @"main_graph"(
// CHECK:        call ptr @"onnxc_thread_arena"(i64 262144)
// CHECK:        call void @"onnxc_parallel_for"({{.*}} @"main_graph.nest5.slice", ptr %{{.+}}, i64 0, i64 16)
// CHECK:        call void @"onnxc_parallel_for"({{.*}} @"main_graph.nest6.slice", ptr %{{.+}}, i64 0, i64 16)
// CHECK:      define internal void @"main_graph.nest5"(ptr noalias %{{.+}}, ptr noalias %{{.+}}, ptr noalias %{{.+}}, i64 %{{.+}}, i64 %{{.+}})
// CHECK:      entry:
// CHECK-NEXT:   call ptr @"onnxc_thread_scratch"()
// CHECK:      declare noalias ptr @"onnxc_thread_scratch"()
// CHECK:      define internal void @"main_graph.nest6"(
// CHECK-NOT:    onnxc_thread_scratch
// CHECK:      define i32 @"run_main_graph"(
// CHECK:        call i32 @"onnxc_reserve_scratch"(i64 16384)
