// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Slice with a negative start and step and an end far out of range (clamped):
// x[:, 5::-2] reads column 5 - 2 j.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%x: tensor<2x6xf32>) -> tensor<2x3xf32> {
    %starts = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %ends = "onnx.Constant"() {value = dense<[-1000]> : tensor<1xi64>} : () -> tensor<1xi64>
    %axes = "onnx.Constant"() {value = dense<[-1]> : tensor<1xi64>} : () -> tensor<1xi64>
    %steps = "onnx.Constant"() {value = dense<[-2]> : tensor<1xi64>} : () -> tensor<1xi64>
    %y = "onnx.Slice"(%x, %starts, %ends, %axes, %steps) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>}> : (tensor<2x6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
    func.return %y : tensor<2x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[M2:.+]] = arith.constant -2 : index
// CHECK-DAG:     %[[C5:.+]] = arith.constant 5 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 3] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[T:.+]] = arith.muli %[[j]], %[[M2]] : index
// CHECK-NEXT:      %[[J:.+]] = arith.addi %[[C5]], %[[T]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[i]], %[[J]]] : memref<2x6xf32>
// CHECK-NEXT:      memref.store %[[V]], %y[%[[i]], %[[j]]] : memref<2x3xf32>

// -----

// Constant padding reads a clamped position and selects the fill value outside
// the input; reflect padding mirrors the position twice (both ends).
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%x: tensor<3xf32>, %v: tensor<f32>) -> (tensor<7xf32>, tensor<6xf32>) {
    %pads = "onnx.Constant"() {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
    %p = "onnx.Pad"(%x, %pads, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> {mode = "constant"} : (tensor<3xf32>, tensor<2xi64>, tensor<f32>) -> tensor<7xf32>
    %pads2 = "onnx.Constant"() {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
    %r = "onnx.Pad"(%x, %pads2) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>}> {mode = "reflect"} : (tensor<3xf32>, tensor<2xi64>) -> tensor<6xf32>
    func.return %p, %r : tensor<7xf32>, tensor<6xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK:         %[[FILL:.+]] = memref.load %v[] : memref<f32>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [7] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index):
// CHECK-NEXT:      %[[P:.+]] = arith.subi %[[i]], %[[C2]] : index
// CHECK-NEXT:      %[[GE:.+]] = arith.cmpi sge, %[[P]], %[[C0]] : index
// CHECK-NEXT:      %[[LT:.+]] = arith.cmpi slt, %[[P]], %[[C3]] : index
// CHECK-NEXT:      %[[IN:.+]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK-NEXT:      %[[HI:.+]] = arith.minsi %[[P]], %[[C2]] : index
// CHECK-NEXT:      %[[CL:.+]] = arith.maxsi %[[HI]], %[[C0]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[CL]]] : memref<3xf32>
// CHECK-NEXT:      %[[R:.+]] = arith.select %[[IN]], %[[V]], %[[FILL]] : f32
// CHECK-NEXT:      memref.store %[[R]], %p[%[[i]]] : memref<7xf32>
// CHECK:         krnl.iterate({{.*}}) bounds [0] to [6] {
// CHECK-COUNT-2:   arith.select {{.*}} : index
// CHECK:           memref.load %x
// CHECK-NEXT:      memref.store {{.*}}, %r[
