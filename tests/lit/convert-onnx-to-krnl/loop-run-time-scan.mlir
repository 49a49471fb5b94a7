// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A Loop over a run-time trip count collecting a scan output: its rows go to a
// heap buffer (krnl.grow) of at most 16 rows first, fewer if the trip count is
// less. The scf.while carries the rows it has room for and the buffer; an
// iteration at a step past the last row doubles both (scf.if, krnl.grow from
// the old buffer), then stores its row at the step. After the loop the graph
// output takes the rows run (krnl.dynamic_output) and the buffer is freed.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%n: tensor<i64>, %x: tensor<2xf32>) -> tensor<?x2xf32> {
    %s, %all = "onnx.Loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, resultSegmentSizes = array<i32: 2>}> ({
    ^bb0(%i: tensor<i64>, %go: tensor<i1>, %acc: tensor<2xf32>):
      %next = "onnx.Neg"(%acc) : (tensor<2xf32>) -> tensor<2xf32> loc("step")
      onnx.yield %go, %next, %next : tensor<i1>, tensor<2xf32>, tensor<2xf32>
    }) : (tensor<i64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>) loc("steps")
    func.return %all : tensor<?x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%n: memref<i64>, %x: memref<2xf32>, %all: memref<?x2xf32, "onnxc_tensor">) {
// CHECK:         %[[LIMIT:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:         %[[FEWER:.+]] = arith.minsi %[[LIMIT]], %{{.+}} : index
// CHECK:         %[[ROWS:.+]] = arith.maxsi %{{.+}}, %[[FEWER]] : index
// CHECK:         %[[FIRST:.+]] = krnl.grow %[[ROWS]] : memref<?x2xf32>
// CHECK:         %[[ITERATIONS:.+]], %{{.+}}, %[[LAST:.+]] = scf.while (%[[STEP:.+]] = %{{.+}}, %[[ROOM:.+]] = %[[ROWS]], %[[BUF:.+]] = %[[FIRST]]) : (index, index, memref<?x2xf32>) -> (index, index, memref<?x2xf32>) {
// CHECK:           scf.condition(%{{.+}}) %[[STEP]], %[[ROOM]], %[[BUF]] : index, index, memref<?x2xf32>
// CHECK:         } do {
// CHECK:         ^{{.+}}(%[[AT:.+]]: index, %[[HAS:.+]]: index, %[[OLD:.+]]: memref<?x2xf32>):
// CHECK:           %[[FULL:.+]] = arith.cmpi sge, %[[AT]], %[[HAS]] : index
// CHECK:           %[[NOW:.+]], %[[NEW:.+]] = scf.if %[[FULL]] -> (index, memref<?x2xf32>) {
// CHECK:             %[[TWICE:.+]] = arith.muli %[[HAS]], %{{.+}} : index
// CHECK:             %[[BIGGER:.+]] = krnl.grow %[[TWICE]] from %[[OLD]] : memref<?x2xf32>
// CHECK:             scf.yield %[[TWICE]], %[[BIGGER]] : index, memref<?x2xf32>
// CHECK:           } else {
// CHECK:             scf.yield %[[HAS]], %[[OLD]] : index, memref<?x2xf32>
// CHECK:           }
// CHECK:           krnl.iterate
// CHECK:             memref.store %{{.+}}, %[[NEW]][%[[AT]], %{{.+}}] : memref<?x2xf32>
// CHECK:           scf.yield %{{.+}}, %[[NOW]], %[[NEW]] : index, index, memref<?x2xf32>
// CHECK:         krnl.dynamic_output %[[LAST]][%[[ITERATIONS]]] into %all {axis = 0 : i64} : memref<?x2xf32>, memref<?x2xf32, "onnxc_tensor">
// CHECK-NEXT:    krnl.free %[[LAST]] : memref<?x2xf32>
