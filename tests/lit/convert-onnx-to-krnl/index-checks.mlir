// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Indices read from an input are checked against the dim they index before the
// nest that reads them (krnl.check_indices, dialects/krnl_checks.py): Gather's
// against data's dim at `axis`, a run-time one here.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%data: tensor<?x4xf32, ["V", ""]>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
    %y = "onnx.Gather"(%data, %ids) {axis = 0 : i64} : (tensor<?x4xf32, ["V", ""]>, tensor<2x3xi64>) -> tensor<2x3x4xf32> loc("embed")
    func.return %y : tensor<2x3x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[V:.+]] = memref.dim %data, %{{.+}}
// CHECK:         krnl.check_indices %ids, %[[V]] {node = "embed", op_type = "Gather"} : memref<2x3xi64>
// CHECK:         krnl.iterate

// -----

// GatherND: the last dim of the indices names one index per data dim, each
// checked against its own dim.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%data: tensor<4x6xf32>, %idx: tensor<5x2xi64>) -> tensor<5xf32> {
    %y = "onnx.GatherND"(%data, %idx) : (tensor<4x6xf32>, tensor<5x2xi64>) -> tensor<5xf32> loc("pick")
    func.return %y : tensor<5xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C6:.+]] = arith.constant 6 : index
// CHECK:         krnl.check_indices %idx, %[[C4]], %[[C6]] {node = "pick", op_type = "GatherND"} : memref<5x2xi64>
