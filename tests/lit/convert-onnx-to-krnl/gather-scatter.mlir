// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Gather reads the index in the loop, counting a negative one from the end.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%data: tensor<5x4xf32>, %idx: tensor<2xi64>) -> tensor<2x4xf32> {
    %y = "onnx.Gather"(%data, %idx) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    func.return %y : tensor<2x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK:         ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[I64:.+]] = memref.load %idx[%[[i]]] : memref<2xi64>
// CHECK-NEXT:      %[[I:.+]] = arith.index_cast %[[I64]] : i64 to index
// CHECK-NEXT:      %[[NEG:.+]] = arith.cmpi slt, %[[I]], %[[C0]] : index
// CHECK-NEXT:      %[[W:.+]] = arith.addi %[[I]], %[[C5]] : index
// CHECK-NEXT:      %[[K:.+]] = arith.select %[[NEG]], %[[W]], %[[I]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %data[%[[K]], %[[j]]] : memref<5x4xf32>
// CHECK-NEXT:      memref.store %[[V]], %y[%[[i]], %[[j]]] : memref<2x4xf32>

// -----

// ScatterElements copies the data, then combines each update into its target.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%data: tensor<3x3xf32>, %idx: tensor<1x2xi64>, %upd: tensor<1x2xf32>) -> tensor<3x3xf32> {
    %y = "onnx.ScatterElements"(%data, %idx, %upd) {axis = 1 : i64, reduction = "add"} : (tensor<3x3xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<3x3xf32>
    func.return %y : tensor<3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [3, 3] {
// CHECK:           memref.store {{.*}}, %y[
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [1, 2] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK:           %[[K:.+]] = arith.select {{.*}} : index
// CHECK-NEXT:      %[[U:.+]] = memref.load %upd[%[[i]], %[[j]]] : memref<1x2xf32>
// CHECK-NEXT:      %[[OLD:.+]] = memref.load %y[%[[i]], %[[K]]] : memref<3x3xf32>
// CHECK-NEXT:      %[[NEW:.+]] = arith.addf %[[OLD]], %[[U]] : f32
// CHECK-NEXT:      memref.store %[[NEW]], %y[%[[i]], %[[K]]] : memref<3x3xf32>
