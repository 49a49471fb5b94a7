// RUN: onnxc-opt %s -p convert-onnx-to-krnl | filecheck %s

// A run-time If whose branches give results of different widths (2x3 and 2x1;
// regions in schema attribute order: else_branch first): the result, a graph
// output, is computed into a scratch buffer of the larger shape, each branch
// copying its output to the same indices there and yielding its width; the
// graph output takes that many columns (krnl.dynamic_output along axis 1).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%c: tensor<i1>, %x: tensor<2x3xf32>) -> tensor<2x?xf32> {
    %y = "onnx.If"(%c) <{resultSegmentSizes = array<i32: 1>}> ({
      %n = "onnx.Neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("wide")
      onnx.yield %n : tensor<2x3xf32>
    }, {
      %a = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
      %s = "onnx.ReduceSum"(%x, %a) <{operandSegmentSizes = array<i32: 1, 1>}> {keepdims = 1 : i64} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32> loc("narrow")
      onnx.yield %s : tensor<2x1xf32>
    }) : (tensor<i1>) -> tensor<2x?xf32> loc("pick")
    func.return %y : tensor<2x?xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%c: memref<i1>, %x: memref<2x3xf32>, %y: memref<2x?xf32, "onnxc_tensor">) {
// CHECK:         %[[THREE:.+]] = arith.constant 3 : index
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK:         %[[SCRATCH:.+]] = memref.alloc() : memref<2x3xf32>
// CHECK:         %[[WIDTH:.+]] = scf.if %{{.+}} -> (index) {
// CHECK:           %[[S:.+]] = memref.alloc() : memref<2x1xf32>
// CHECK:           krnl.iterate({{.+}}) with ({{.+}}) bounds [0, 0] to [2, 1] {
// CHECK:             memref.load %[[S]]
// CHECK:             memref.store %{{.+}}, %[[SCRATCH]][%{{.+}}, %{{.+}}] : memref<2x3xf32>
// CHECK:           scf.yield %[[ONE]] : index
// CHECK:         } else {
// CHECK:           krnl.iterate({{.+}}) with ({{.+}}) bounds [0, 0] to [2, 3] {
// CHECK:             memref.store %{{.+}}, %[[SCRATCH]][%{{.+}}, %{{.+}}] : memref<2x3xf32>
// CHECK:           scf.yield %[[THREE]] : index
// CHECK:         }
// CHECK:         krnl.dynamic_output %[[SCRATCH]][%[[WIDTH]]] into %y {axis = 1 : i64}
