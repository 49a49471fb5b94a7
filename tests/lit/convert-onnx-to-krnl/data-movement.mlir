// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Graph outputs have buffers of their own, so these reshapes copy: Flatten
// [2,3,4,5] -> [2,60] walks the input and linearizes (no division); Reshape
// [2,60] -> [2,6,10] walks the output, also without division.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x5xf32>) -> (tensor<2x60xf32>, tensor<2x6x10xf32>) {
    %shape = "onnx.Constant"() {value = dense<[2, 6, 10]> : tensor<3xi64>} : () -> tensor<3xi64>
    %flat = "onnx.Flatten"(%x) : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
    %r = "onnx.Reshape"(%flat, %shape) : (tensor<2x60xf32>, tensor<3xi64>) -> tensor<2x6x10xf32>
    func.return %flat, %r : tensor<2x60xf32>, tensor<2x6x10xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x3x4x5xf32>, %flat: memref<2x60xf32>, %r: memref<2x6x10xf32>) {
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK-DAG:     %[[C10:.+]] = arith.constant 10 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [2, 3, 4, 5] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[c:.+]]: index, %[[h:.+]]: index, %[[w:.+]]: index):
// CHECK-NEXT:      %[[T0:.+]] = arith.muli %[[c]], %[[C4]] : index
// CHECK-NEXT:      %[[T1:.+]] = arith.addi %[[T0]], %[[h]] : index
// CHECK-NEXT:      %[[T2:.+]] = arith.muli %[[T1]], %[[C5]] : index
// CHECK-NEXT:      %[[CHW:.+]] = arith.addi %[[T2]], %[[w]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[n]], %[[c]], %[[h]], %[[w]]] : memref<2x3x4x5xf32>
// CHECK-NEXT:      memref.store %[[V]], %flat[%[[n]], %[[CHW]]] : memref<2x60xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [2, 6, 10] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[T:.+]] = arith.muli %[[i]], %[[C10]] : index
// CHECK-NEXT:      %[[IJ:.+]] = arith.addi %[[T]], %[[j]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %flat[%[[n]], %[[IJ]]] : memref<2x60xf32>
// CHECK-NEXT:      memref.store %[[V]], %r[%[[n]], %[[i]], %[[j]]] : memref<2x6x10xf32>
// CHECK-NOT:     arith.divsi
// CHECK:         func.return

// -----

// A reshape whose result is not a graph output is a view of its input's buffer
// (buffers are never overwritten): no copy, and the Relu reads %x through it.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
    %shape = "onnx.Constant"() {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
    %r = "onnx.Reshape"(%x, %shape) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
    %y = "onnx.Relu"(%r) : (tensor<6x4xf32>) -> tensor<6x4xf32>
    func.return %y : tensor<6x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<2x3x4xf32>, %y: memref<6x4xf32>) {
// CHECK:         %[[R:.+]] = krnl.view %x[0 : i64] : memref<2x3x4xf32> to memref<6x4xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         %[[FLAT:.+]] = krnl.view %[[R]][0 : i64] : memref<6x4xf32> to memref<24xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [24] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index):
// CHECK-NEXT:      memref.load %[[FLAT]][%[[i]]] : memref<24xf32>
// CHECK:         func.return

// -----

// A reshape that regroups dims ([2,3] -> [3,2]) needs a division and a remainder.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3xf32>, %shape: tensor<2xi64>) -> tensor<3x2xf32> {
    %r = "onnx.Reshape"(%x, %shape) : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
    func.return %r : tensor<3x2xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK:         ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[T:.+]] = arith.muli %[[i]], %[[C2]] : index
// CHECK-NEXT:      %[[L:.+]] = arith.addi %[[T]], %[[j]] : index
// CHECK-NEXT:      %[[Q:.+]] = arith.divsi %[[L]], %[[C3]] : index
// CHECK-NEXT:      %[[R:.+]] = arith.remsi %[[L]], %[[C3]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[Q]], %[[R]]] : memref<2x3xf32>
// CHECK-NEXT:      memref.store %[[V]], %r[%[[i]], %[[j]]] : memref<3x2xf32>

// -----

// Transpose reads the input at permuted indices; Concat writes each input at
// its offset along the axis.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x3x4xf32>, %a: tensor<4x2x1xf32>) -> tensor<4x2x4xf32> {
    %t = "onnx.Transpose"(%x) {perm = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %c = "onnx.Concat"(%t, %a) <{operandSegmentSizes = array<i32: 2>}> {axis = -1 : i64} : (tensor<4x2x3xf32>, tensor<4x2x1xf32>) -> tensor<4x2x4xf32>
    func.return %c : tensor<4x2x4xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK:         %t = memref.alloc() : memref<4x2x3xf32>
// CHECK:         ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[j]], %[[k]], %[[i]]] : memref<2x3x4xf32>
// CHECK-NEXT:      memref.store %[[V]], %t[%[[i]], %[[j]], %[[k]]] : memref<4x2x3xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [4, 2, 3] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[V:.+]] = memref.load %t[%[[i]], %[[j]], %[[k]]] : memref<4x2x3xf32>
// CHECK-NEXT:      memref.store %[[V]], %c[%[[i]], %[[j]], %[[k]]] : memref<4x2x4xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0] to [4, 2, 1] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index, %[[k:.+]]: index):
// CHECK-NEXT:      %[[K3:.+]] = arith.addi %[[k]], %[[C3]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %a[%[[i]], %[[j]], %[[k]]] : memref<4x2x1xf32>
// CHECK-NEXT:      memref.store %[[V]], %c[%[[i]], %[[j]], %[[K3]]] : memref<4x2x4xf32>

// -----

// Pass-through ops share their input's buffer: Relu writes the output %y
// through Identity and Dropout. A graph input and a constant returned as
// outputs are copied into their output buffers at the end; so is a value
// returned twice. Dropout's mask is all true.
builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main_graph(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xi1>) attributes {onnx.input_names = ["x"], onnx.output_names = ["y", "y_again", "x_out", "k", "mask"]} {
    %r = "onnx.Relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %i = "onnx.Identity"(%r) : (tensor<3xf32>) -> tensor<3xf32>
    %d, %mask = "onnx.Dropout"(%i) <{operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1>}> : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi1>)
    %k = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    func.return %d, %d, %x, %k, %mask : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xi1>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<3xf32>, %y: memref<3xf32>, %y_again: memref<3xf32>, %x_out: memref<3xf32>, %k: memref<2xf32>, %mask: memref<3xi1>) {
// CHECK:         %[[TRUE:.+]] = arith.constant true
// CHECK-NOT:     memref.alloc
// CHECK:           %[[V:.+]] = memref.load %x[%[[i:.+]]] : memref<3xf32>
// CHECK-NEXT:      %[[R:.+]] = arith.maximumf %[[V]], %{{.+}} : f32
// CHECK-NEXT:      memref.store %[[R]], %y[%[[i]]] : memref<3xf32>
// CHECK:           memref.store %[[TRUE]], %mask[%{{.+}}] : memref<3xi1>
// CHECK:         %[[K:.+]] = krnl.global {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : memref<2xf32>
// CHECK:           %[[V:.+]] = memref.load %y[%[[i:.+]]] : memref<3xf32>
// CHECK-NEXT:      memref.store %[[V]], %y_again[%[[i]]] : memref<3xf32>
// CHECK:           %[[V:.+]] = memref.load %x[%[[i:.+]]] : memref<3xf32>
// CHECK-NEXT:      memref.store %[[V]], %x_out[%[[i]]] : memref<3xf32>
// CHECK:           %[[V:.+]] = memref.load %[[K]][%[[i:.+]]] : memref<2xf32>
// CHECK-NEXT:      memref.store %[[V]], %k[%[[i]]] : memref<2xf32>
// CHECK:         func.return
// CHECK-NEXT:  }
// CHECK-NEXT:  krnl.entry_point {func = @main_graph, input_names = ["x"], output_names = ["y", "y_again", "x_out", "k", "mask"]}

// -----

// Before opset 10, Dropout's mask has the data's type: it is all ones.
builtin.module attributes {onnx.opset = 7 : i64} {
  func.func @main_graph(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
    %d, %mask = "onnx.Dropout"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 1, 1>}> : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    func.return %d, %mask : tensor<3xf32>, tensor<3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:           memref.store %[[ONE]], %mask[%{{.+}}] : memref<3xf32>

// -----

// ConstantOfShape fills its output; rank 0 needs no loop.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%s: tensor<2xi64>, %e: tensor<0xi64>) -> (tensor<2x3xi64>, tensor<f32>) {
    %c = "onnx.ConstantOfShape"(%s) {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<2x3xi64>
    %z = "onnx.ConstantOfShape"(%e) : (tensor<0xi64>) -> tensor<f32>
    func.return %c, %z : tensor<2x3xi64>, tensor<f32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[SEVEN:.+]] = arith.constant 7 : i64
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 3] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      memref.store %[[SEVEN]], %c[%[[i]], %[[j]]] : memref<2x3xi64>
// CHECK:         memref.store %[[ZERO]], %z[] : memref<f32>
// CHECK-NEXT:    func.return
