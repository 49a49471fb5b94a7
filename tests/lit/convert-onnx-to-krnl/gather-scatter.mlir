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

// -----

// OneHot compares each (wrapped) index with the position along the new axis;
// Col2Im adds every column element to its pixel when that is inside the image.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%i: tensor<3xi64>, %v: tensor<2xf32>, %cols: tensor<1x4x4xf32>) -> (tensor<3x5xf32>, tensor<1x1x3x3xf32>) {
    %depth = "onnx.Constant"() {value = dense<5.0> : tensor<f32>} : () -> tensor<f32>
    %y = "onnx.OneHot"(%i, %depth, %v) {axis = -1 : i64} : (tensor<3xi64>, tensor<f32>, tensor<2xf32>) -> tensor<3x5xf32>
    %image = "onnx.Constant"() {value = dense<[3, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
    %block = "onnx.Constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    %im = "onnx.Col2Im"(%cols, %image, %block) : (tensor<1x4x4xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x3x3xf32>
    func.return %y, %im : tensor<3x5xf32>, tensor<1x1x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[OFF:.+]] = memref.load %v[%{{.+}}] : memref<2xf32>
// CHECK-NEXT:    %[[ON:.+]] = memref.load %v[%{{.+}}] : memref<2xf32>
// CHECK:         ^bb0(%[[r:.+]]: index, %[[k:.+]]: index):
// CHECK:           %[[I:.+]] = arith.select {{.*}} : index
// CHECK-NEXT:      %[[HIT:.+]] = arith.cmpi eq, %[[I]], %[[k]] : index
// CHECK-NEXT:      %[[V:.+]] = arith.select %[[HIT]], %[[ON]], %[[OFF]] : f32
// CHECK-NEXT:      memref.store %[[V]], %y[%[[r]], %[[k]]] : memref<3x5xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 1, 3, 3] {
// CHECK:           memref.store {{.*}}, %im[
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [1, 4, 4] {
// CHECK-COUNT-3:   arith.andi {{.*}} : i1
// CHECK-NEXT:      scf.if %{{.+}} {
// CHECK:             %[[OLD:.+]] = memref.load %im[
// CHECK-NEXT:        %[[X:.+]] = memref.load %cols[
// CHECK-NEXT:        %[[S:.+]] = arith.addf %[[OLD]], %[[X]] : f32
// CHECK-NEXT:        memref.store %[[S]], %im[

// -----

// TensorScatter (circular): the cache is copied, then each update row goes to
// (write_indices[b] + s) mod the cache length; a position outside is skipped.
builtin.module attributes {onnx.opset = 24 : i64} {
  func.func @main_graph(%cache: tensor<2x5x3xf32>, %update: tensor<2x2x3xf32>, %w: tensor<2xi64>) -> tensor<2x5x3xf32> {
    %y = "onnx.TensorScatter"(%cache, %update, %w) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {mode = "circular", axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<2x2x3xf32>, tensor<2xi64>) -> tensor<2x5x3xf32>
    func.return %y : tensor<2x5x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[LEN:.+]] = arith.constant 5 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 5, 3] {
// CHECK:           memref.store {{.*}}, %y[
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 2, 3] {
// CHECK-NEXT:    ^bb0(%[[b:.+]]: index, %[[s:.+]]: index, %[[d:.+]]: index):
// CHECK-NEXT:      %[[W:.+]] = memref.load %w[%[[b]]] : memref<2xi64>
// CHECK-NEXT:      %[[START:.+]] = arith.index_cast %[[W]] : i64 to index
// CHECK-NEXT:      %[[POS:.+]] = arith.addi %[[START]], %[[s]] : index
// CHECK-NEXT:      %[[WRAPPED:.+]] = arith.remsi %[[POS]], %[[LEN]] : index
// CHECK-NEXT:      %[[IN:.+]] = arith.cmpi ult, %[[WRAPPED]], %[[LEN]] : index
// CHECK-NEXT:      scf.if %[[IN]] {
// CHECK-NEXT:        %[[V:.+]] = memref.load %update[%[[b]], %[[s]], %[[d]]] : memref<2x2x3xf32>
// CHECK-NEXT:        memref.store %[[V]], %y[%[[b]], %[[WRAPPED]], %[[d]]] : memref<2x5x3xf32>
