// RUN: onnxc-opt %s -t 'onnxc-llvm{target=x86_64 cpu=x86-64-v3}' | filecheck %s

// scf.while: the before-region is the loop header (phis for its arguments, its
// scf.condition branching to the body or out), the after-region the body, whose
// scf.yield feeds the header's phis. A loop whose region allocates stays in the
// graph function (it is no kernel of its own).
func.func @main_graph(%n: memref<i64>, %y: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %trips = memref.load %n[] : memref<i64>
  %limit = arith.index_cast %trips : i64 to index
  %done = scf.while (%i = %c0) : (index) -> index {
    %below = arith.cmpi slt, %i, %limit : index
    scf.condition(%below) %i : index
  } do {
  ^bb0(%at: index):
    %t = memref.alloc() : memref<i64>
    %v = arith.index_cast %at : index to i64
    memref.store %v, %t[] : memref<i64>
    %w = memref.load %t[] : memref<i64>
    memref.store %w, %y[] : memref<i64>
    %next = arith.addi %at, %c1 : index
    scf.yield %next : index
  }
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["n"], output_names = ["y"]}

// CHECK:      define internal i32 @"main_graph"(
// CHECK:        br label %"while.header"
// CHECK:      while.header:
// CHECK-NEXT:   %[[I:.+]] = phi i64 [0, %{{.+}}], [%[[NEXT:.+]], %"while.body"]
// CHECK-NEXT:   %[[BELOW:.+]] = icmp slt i64 %[[I]], %{{.+}}
// CHECK-NEXT:   br i1 %[[BELOW]], label %"while.body", label %"while.exit"
// CHECK:      while.body:
// CHECK:        store i64 %[[I]]
// CHECK:        %[[NEXT]] = add i64 %[[I]], 1
// CHECK-NEXT:   br label %"while.header"
// CHECK:      while.exit:
// CHECK-NEXT:   ret i32 0
