// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Loop whose scan output continues a loop-carried value (onnx.appended_to,
// what the importer makes of `rows = Concat(rows, row)`): the heap buffer has
// room for the carried value's two rows plus one row per iteration; those two
// rows are copied in before the loop, iteration `step` writes at row 2 + step
// (its one row: `step_rows` 1), and the graph output takes 2 + iterations rows.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%n: tensor<i64>, %start: tensor<2x3xf32>, %x: tensor<1x3xf32>) -> tensor<?x3xf32> {
    %kept, %grown = "onnx.Loop"(%n, %start) <{operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %rows: tensor<2x3xf32>):
      %row = "onnx.Neg"(%x) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc("step")
      onnx.yield %go, %rows, %row : tensor<i1>, tensor<2x3xf32>, tensor<1x3xf32>
    }) {onnx.appended_to = [0 : i64]} : (tensor<i64>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<?x3xf32>) loc("append")
    func.return %grown : tensor<?x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[TWO:.+]] = arith.constant 2 : index
// CHECK:         %[[TRIPS:.+]] = arith.maxsi
// CHECK:         %[[ROWS:.+]] = arith.addi %[[TWO]], %[[TRIPS]] : index
// CHECK:         %[[FIRST:.+]] = krnl.grow %[[ROWS]] : memref<?x3xf32>
// CHECK:         krnl.iterate
// CHECK:           memref.store %{{.+}}, %[[FIRST]][%{{.+}}, %{{.+}}] : memref<?x3xf32>
// CHECK:         %[[ITERATIONS:.+]], %{{.+}}, %[[LAST:.+]] = scf.while
// CHECK:         ^{{.+}}(%[[STEP:.+]]: index, %[[ROOM:.+]]: index, %[[OLD:.+]]: memref<?x3xf32>):
// CHECK:           scf.if
// CHECK:             %[[TWICE:.+]] = arith.muli %[[ROOM]], %[[TWO]] : index
// CHECK:             %[[MORE:.+]] = arith.addi %[[TWO]], %[[TWICE]] : index
// CHECK:             krnl.grow %[[MORE]] from %[[OLD]] : memref<?x3xf32>
// CHECK:           %[[AT:.+]] = arith.addi %[[TWO]], %[[STEP]] : index
// CHECK:           krnl.iterate
// CHECK:           ^{{.+}}(%[[R:.+]]: index, %[[C:.+]]: index):
// CHECK:             %[[ROW:.+]] = arith.addi %[[AT]], %[[R]] : index
// CHECK:             memref.store %{{.+}}, %{{.+}}[%[[ROW]], %[[C]]] : memref<?x3xf32>
// CHECK:         %[[EXTENT:.+]] = arith.addi %[[TWO]], %[[ITERATIONS]] : index
// CHECK:         krnl.dynamic_output %[[LAST]][%[[EXTENT]]] into %grown {axis = 0 : i64}
// CHECK-NEXT:    krnl.free %[[LAST]] : memref<?x3xf32>
