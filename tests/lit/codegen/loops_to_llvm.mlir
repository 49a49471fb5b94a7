// RUN: onnxc-opt %s -t 'onnxc-llvm{target=x86_64 cpu=x86-64-v3}' | filecheck %s

// Code generation from hand-written loop-level IR (docs/design.md, "Level 3"):
// the graph function takes its arena from the runtime (64 bytes: one 16-byte
// buffer, aligned up) and fails with ONNXC_ERR_NOMEM (6) without one; each
// top-level loop is a noinline kernel taking the buffers it uses; a bf16
// element is loaded as its 16 bits and widened to the f32 holding it.
func.func @main_graph(%x: memref<4xbf16>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xbf16>
    %w = arith.extf %v : bf16 to f32
    memref.store %w, %t[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %t[%i] : memref<4xf32>
    %w = arith.mulf %v, %two : f32
    memref.store %w, %y[%i] : memref<4xf32>
  }
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y"]}

// CHECK:      define internal i32 @"main_graph"(ptr noalias %[[X:.+]], ptr noalias %[[Y:.+]]) nounwind
// CHECK:        %[[ARENA:.+]] = call ptr @"onnxc_thread_arena"(i64 64)
// CHECK-NEXT:   %[[FAILED:.+]] = icmp eq ptr %[[ARENA]], null
// CHECK-NEXT:   br i1 %[[FAILED]], label %"[[NOMEM:.+]]", label
// CHECK:      [[NOMEM]]:
// CHECK-NEXT:   ret i32 6
// CHECK:        %[[T:.+]] = getelementptr inbounds i8, ptr %[[ARENA]], i64 0
// CHECK-NEXT:   call void @"main_graph.nest[[WIDEN:[0-9]+]]"(ptr %[[X]], ptr %[[T]])
// CHECK-NEXT:   call void @"main_graph.nest[[DOUBLE:[0-9]+]]"(ptr %[[T]], ptr %[[Y]])
// CHECK-NEXT:   ret i32 0
// CHECK:      declare noalias ptr @"onnxc_thread_arena"(i64 %{{.+}}) nounwind

// CHECK:      define internal void @"main_graph.nest[[WIDEN]]"(ptr noalias %{{.+}}, ptr noalias %{{.+}}) noinline nounwind
// CHECK:      for.body:
// CHECK-NEXT:   %[[P:.+]] = getelementptr inbounds i16, ptr %{{.+}}, i64 %"iv"
// CHECK-NEXT:   %[[BITS:.+]] = load i16, ptr %[[P]], align 2
// CHECK-NEXT:   %[[WIDE:.+]] = zext i16 %[[BITS]] to i32
// CHECK-NEXT:   %[[SHIFTED:.+]] = shl i32 %[[WIDE]], 16
// CHECK-NEXT:   bitcast i32 %[[SHIFTED]] to float

// CHECK:      define internal void @"main_graph.nest[[DOUBLE]]"(
// CHECK:        fmul float %{{.+}}, 0x4000000000000000

// CHECK:      define i32 @"run_main_graph"(ptr %{{.+}}, i64 %{{.+}}, ptr %{{.+}}, i64 %{{.+}}) nounwind
// CHECK:      @"onnxc_signature_json" = private unnamed_addr constant {{.*}}\22inputs\22: [{\22name\22: \22x\22, \22dtype\22: \22bfloat16\22, \22shape\22: [4]}]
