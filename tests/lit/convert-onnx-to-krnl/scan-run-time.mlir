// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Scan over T steps (T known at run time): the state lives in its result
// buffer (the graph output %h), initialized from %h0; an scf.while runs while
// the step is below T (dim 0 of %xs); each iteration copies its step of the
// scan input (here backwards: row T-1-step) into a buffer the body reads, runs
// the body's nests, stores the scan output's row `step` and updates the state.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%h0: tensor<4xf32>, %xs: tensor<?x4xf32, ["T", ""]>) -> (tensor<4xf32>, tensor<?x4xf32, ["T", ""]>) {
    %h, %rows = "onnx.Scan"(%h0, %xs) <{operandSegmentSizes = array<i32: 2>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%s: tensor<4xf32>, %x: tensor<4xf32>):
      %next = "onnx.Add"(%s, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("add")
      %row = "onnx.Neg"(%next) : (tensor<4xf32>) -> tensor<4xf32> loc("neg")
      onnx.yield %next, %row : tensor<4xf32>, tensor<4xf32>
    }) {num_scan_inputs = 1 : i64, scan_input_directions = [1 : i64]} : (tensor<4xf32>, tensor<?x4xf32, ["T", ""]>) -> (tensor<4xf32>, tensor<?x4xf32, ["T", ""]>) loc("steps")
    func.return %h, %rows : tensor<4xf32>, tensor<?x4xf32, ["T", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%h0: memref<4xf32>, %xs: memref<?x4xf32>, %h: memref<4xf32>, %rows: memref<?x4xf32>) {
// CHECK:         %[[T:.+]] = memref.dim %xs, %{{.+}} : memref<?x4xf32>
// CHECK:         memref.store %{{.+}}, %h[%{{.+}}] : memref<4xf32>
// CHECK:         %[[LAST:.+]] = arith.subi %[[T]], %{{.+}} : index
// CHECK:         %[[STEP_IN:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         scf.while (%[[STEP:.+]] = %{{.+}}) : (index) -> index {
// CHECK:           %[[BELOW:.+]] = arith.cmpi slt, %[[STEP]], %[[T]] : index
// CHECK:           scf.condition(%[[BELOW]]) %[[STEP]] : index
// CHECK:         } do {
// CHECK:         ^{{.+}}(%[[AT:.+]]: index):
// CHECK:           %[[BACK:.+]] = arith.subi %[[LAST]], %[[AT]] : index
// CHECK:           krnl.iterate
// CHECK:             memref.load %xs[%[[BACK]], %{{.+}}] : memref<?x4xf32>
// CHECK:             memref.store %{{.+}}, %[[STEP_IN]][%{{.+}}] : memref<4xf32>
// CHECK:           %[[NEXT:.+]] = memref.alloc() : memref<4xf32>
// CHECK:           krnl.iterate
// CHECK:             memref.load %h[%{{.+}}] : memref<4xf32>
// CHECK:             memref.load %[[STEP_IN]][%{{.+}}] : memref<4xf32>
// CHECK:             arith.addf
// CHECK:           krnl.iterate
// CHECK:             arith.negf
// CHECK:           krnl.iterate
// CHECK:             memref.store %{{.+}}, %rows[%[[AT]], %{{.+}}] : memref<?x4xf32>
// CHECK:           krnl.iterate
// CHECK:             memref.load %[[NEXT]][%{{.+}}] : memref<4xf32>
// CHECK:             memref.store %{{.+}}, %h[%{{.+}}] : memref<4xf32>
// CHECK:           scf.yield
