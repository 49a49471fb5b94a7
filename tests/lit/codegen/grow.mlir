// RUN: onnxc-opt %s -t 'onnxc-llvm{target=x86_64 cpu=x86-64-v3}' | filecheck %s

// krnl.grow: realloc to rows * 8 bytes (two f32 per row), NULL the old buffer
// for a fresh one; more rows than half the address space holds, or a failed
// realloc, free the old buffer and return ONNXC_ERR_NOMEM (6). krnl.free: free.
func.func @main_graph(%n: memref<i64>, %y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %trips = memref.load %n[] : memref<i64>
  %rows = arith.index_cast %trips : i64 to index
  %first = krnl.grow %rows : memref<?x2xf32>
  %more = arith.muli %rows, %c2 : index
  %second = krnl.grow %more from %first : memref<?x2xf32>
  %v = memref.load %second[%c0, %c0] : memref<?x2xf32>
  memref.store %v, %y[] : memref<f32>
  krnl.free %second : memref<?x2xf32>
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["n"], output_names = ["y"]}

// CHECK:      define internal i32 @"main_graph"(
// CHECK:        %[[TOO_MANY:.+]] = icmp ugt i64 %[[ROWS:.+]], 1152921504606846976
// CHECK:        br i1 %[[TOO_MANY]], label %{{.+}}, label %{{.+}}, !prof
// CHECK:        ret i32 6
// CHECK:        %[[SIZE:.+]] = mul nuw i64 %[[ROWS]], 8
// CHECK-NEXT:   %[[FIRST:.+]] = call ptr @"realloc"(ptr null, i64 %[[SIZE]])
// CHECK-NEXT:   %[[FAILED:.+]] = icmp eq ptr %[[FIRST]], null
// CHECK:        ret i32 6
// CHECK:        %[[OLD:.+]] = extractvalue {ptr, i64} %{{.+}}, 0
// CHECK:        call void @"free"(ptr %[[OLD]])
// CHECK-NEXT:   ret i32 6
// CHECK:        %[[SECOND:.+]] = call ptr @"realloc"(ptr %[[OLD]], i64 %{{.+}})
// CHECK:        call void @"free"(ptr %[[OLD]])
// CHECK-NEXT:   ret i32 6
// CHECK:        store float
// CHECK-NEXT:   %[[LAST:.+]] = extractvalue {ptr, i64} %{{.+}}, 0
// CHECK-NEXT:   call void @"free"(ptr %[[LAST]])
// CHECK:        ret i32 0
