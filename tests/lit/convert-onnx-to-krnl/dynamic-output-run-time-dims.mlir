// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// NonZero over run-time dims: the scratch buffer of the largest shape, [rank,
// n*m], is sized at run time from the input's dims; krnl.dynamic_output reads
// them back from it.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<?x?xf32, ["n", "m"]>) -> tensor<2x?xi64> {
    %y = "onnx.NonZero"(%x) : (tensor<?x?xf32, ["n", "m"]>) -> tensor<2x?xi64> loc("nz")
    func.return %y : tensor<2x?xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?xf32>, %y: memref<2x?xi64, "onnxc_tensor">) {
// CHECK:         %[[N:.+]] = memref.dim %x, %{{.+}} : memref<?x?xf32>
// CHECK-NEXT:    %[[M:.+]] = memref.dim %x, %{{.+}} : memref<?x?xf32>
// CHECK:         %[[NM:.+]] = arith.muli %[[N]], %[[M]] : index
// CHECK-NEXT:    %[[BOUND:.+]] = memref.alloc(%[[NM]]) : memref<2x?xi64>
// CHECK:         %[[COUNT:.+]] = scf.for %{{.+}} = %{{.+}} to %[[N]] step %{{.+}} iter_args
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[M]] step %{{.+}} iter_args
// CHECK:         krnl.dynamic_output %[[BOUND]][%[[COUNT]]] into %y {axis = 1 : i64} : memref<2x?xi64>, memref<2x?xi64, "onnxc_tensor">
// CHECK-NEXT:    func.return

// -----

// Compress along axis 1 of an [n, m] input: the result keeps the run-time dim
// n (a `?` in both the scratch buffer and the output) and has at most m columns.
builtin.module attributes {onnx.opset = 11 : i64} {
  func.func @main_graph(%x: tensor<?x?xf32, ["n", "m"]>, %c: tensor<?xi1, ["k"]>) -> tensor<?x?xf32, ["n", ""]> {
    %y = "onnx.Compress"(%x, %c) {axis = 1 : si64} : (tensor<?x?xf32, ["n", "m"]>, tensor<?xi1, ["k"]>) -> tensor<?x?xf32, ["n", ""]> loc("compress")
    func.return %y : tensor<?x?xf32, ["n", ""]>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<?x?xf32>, %c: memref<?xi1>, %y: memref<?x?xf32, "onnxc_tensor">) {
// CHECK:         %[[N:.+]] = memref.dim %x, %{{.+}} : memref<?x?xf32>
// CHECK-NEXT:    %[[M:.+]] = memref.dim %x, %{{.+}} : memref<?x?xf32>
// CHECK-NEXT:    %[[K:.+]] = memref.dim %c, %{{.+}} : memref<?xi1>
// CHECK:         %[[BOUND:.+]] = memref.alloc(%[[N]], %[[M]]) : memref<?x?xf32>
// CHECK:         %[[CANDIDATES:.+]] = arith.minsi %[[M]], %[[K]] : index
// CHECK:         %[[COUNT:.+]] = scf.for %{{.+}} = %{{.+}} to %[[CANDIDATES]] step %{{.+}} iter_args
// CHECK:         krnl.dynamic_output %[[BOUND]][%[[COUNT]]] into %y {axis = 1 : i64} : memref<?x?xf32>, memref<?x?xf32, "onnxc_tensor">
