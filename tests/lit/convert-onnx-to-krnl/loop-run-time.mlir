// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Loop over a run-time trip count: the loop-carried value lives in the Loop's
// result buffer (here the graph output), initialized from the input; an
// scf.while runs while the condition buffer holds and the step is below the
// trip count; each iteration stores its number, runs the body's nests into
// buffers allocated in the loop, then copies the outputs into the state.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%n: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
    %s = "onnx.Loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 1>}> ({
    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<2xf32>):
      %next = "onnx.Add"(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("step")
      onnx.yield %go, %next : tensor<i1>, tensor<2xf32>
    }) : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32> loc("steps")
    func.return %s : tensor<2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%n: memref<i64>, %x: memref<2xf32>, %s: memref<2xf32>) {
// CHECK:         memref.store %{{.+}}, %s[%{{.+}}] : memref<2xf32>
// CHECK:         %[[GOING:.+]] = memref.alloc() : memref<i1>
// CHECK:         %[[TRIPS:.+]] = memref.load %n[] : memref<i64>
// CHECK:         %[[LIMIT:.+]] = arith.index_cast %[[TRIPS]] : i64 to index
// CHECK:         %[[ITER:.+]] = memref.alloc() : memref<i64>
// CHECK:         scf.while (%[[STEP:.+]] = %{{.+}}) : (index) -> index {
// CHECK:           %[[GO:.+]] = memref.load %[[GOING]][] : memref<i1>
// CHECK:           %[[BELOW:.+]] = arith.cmpi slt, %[[STEP]], %[[LIMIT]] : index
// CHECK:           %[[BOTH:.+]] = arith.andi %[[GO]], %[[BELOW]] : i1
// CHECK:           scf.condition(%[[BOTH]]) %[[STEP]] : index
// CHECK:         } do {
// CHECK:         ^{{.+}}(%[[AT:.+]]: index):
// CHECK:           memref.store %{{.+}}, %[[ITER]][] : memref<i64>
// CHECK:           %[[NEXT:.+]] = memref.alloc() : memref<2xf32>
// CHECK:           krnl.iterate
// CHECK:             memref.load %s[%{{.+}}] : memref<2xf32>
// CHECK:             arith.addf
// CHECK:             memref.store %{{.+}}, %[[NEXT]][%{{.+}}] : memref<2xf32>
// CHECK:           krnl.iterate
// CHECK:             memref.load %[[NEXT]][%{{.+}}] : memref<2xf32>
// CHECK:             memref.store %{{.+}}, %s[%{{.+}}] : memref<2xf32>
// CHECK:           %[[AFTER:.+]] = arith.addi %[[AT]], %{{.+}} : index
// CHECK-NEXT:      scf.yield %[[AFTER]] : index
