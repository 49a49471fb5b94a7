// RUN: onnxc-opt %s -t 'onnxc-llvm{target=x86_64 cpu=x86-64-v3}' | filecheck %s

// A loop nest in a run-time loop's body is outlined into a kernel, as the
// graph function's own nests are (named after the loop: nest<position of the
// scf.while>.<region>.nest<its position there>), and called once per iteration:
// LLVM's backend slows down with the size of the function holding the loops.
func.func @main_graph(%n: memref<i64>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %trips = memref.load %n[] : memref<i64>
  %limit = arith.index_cast %trips : i64 to index
  %done = scf.while (%i = %c0) : (index) -> index {
    %below = arith.cmpi slt, %i, %limit : index
    scf.condition(%below) %i : index
  } do {
  ^bb0(%at: index):
    scf.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%k] : memref<8xf32>
      %s = arith.addf %v, %v : f32
      memref.store %s, %y[%k] : memref<8xf32>
    }
    %next = arith.addi %at, %c1 : index
    scf.yield %next : index
  }
  func.return
}
krnl.entry_point {func = @main_graph, input_names = ["n", "x"], output_names = ["y"]}

// CHECK:      define internal i32 @"main_graph"(
// CHECK:      while.body:
// CHECK:        call void @"main_graph.nest5.1.nest0"(
// CHECK:        br label %"while.header"
// CHECK:      define internal void @"main_graph.nest5.1.nest0"(
// CHECK:        fadd
