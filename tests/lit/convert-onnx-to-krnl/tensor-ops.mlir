// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Split copies a window per output, at the offset of the parts before it;
// data movement works on any element type (here unsigned).
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%x: tensor<5x2xui8>) -> (tensor<2x2xui8>, tensor<3x2xui8>) {
    %s = "onnx.Constant"() {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
    %a, %b = "onnx.Split"(%x, %s) <{operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 2>}> {axis = 0 : i64} : (tensor<5x2xui8>, tensor<2xi64>) -> (tensor<2x2xui8>, tensor<3x2xui8>)
    func.return %a, %b : tensor<2x2xui8>, tensor<3x2xui8>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<5x2xui8>, %a: memref<2x2xui8>, %b: memref<3x2xui8>) {
// CHECK:         %[[C2:.+]] = arith.constant 2 : index
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [2, 2] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[i]], %[[j]]] : memref<5x2xui8>
// CHECK-NEXT:      memref.store %[[V]], %a[%[[i]], %[[j]]] : memref<2x2xui8>
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0] to [3, 2] {
// CHECK-NEXT:    ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[I:.+]] = arith.addi %[[C2]], %[[i]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[I]], %[[j]]] : memref<5x2xui8>
// CHECK-NEXT:      memref.store %[[V]], %b[%[[i]], %[[j]]] : memref<3x2xui8>

// -----

// Trilu keeps column - row <= k (lower), else stores a zero of the element type
// (an unsigned zero is a cast signless constant). Shape is a constant.
builtin.module attributes {onnx.opset = 18 : i64} {
  func.func @main_graph(%x: tensor<3x4xui16>) -> (tensor<3x4xui16>, tensor<2xi64>) {
    %t = "onnx.Trilu"(%x) <{operandSegmentSizes = array<i32: 1, 0>}> {upper = 0 : i64} : (tensor<3x4xui16>) -> tensor<3x4xui16>
    %s = "onnx.Shape"(%x) : (tensor<3x4xui16>) -> tensor<2xi64>
    func.return %t, %s : tensor<3x4xui16>, tensor<2xi64>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-DAG:     %[[Z16:.+]] = arith.constant 0 : i16
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK:         %[[ZERO:.+]] = builtin.unrealized_conversion_cast %[[Z16]] : i16 to ui16
// CHECK:         ^bb0(%[[i:.+]]: index, %[[j:.+]]: index):
// CHECK-NEXT:      %[[D:.+]] = arith.subi %[[j]], %[[i]] : index
// CHECK-NEXT:      %[[KEEP:.+]] = arith.cmpi sle, %[[D]], %[[C0]] : index
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[i]], %[[j]]] : memref<3x4xui16>
// CHECK-NEXT:      %[[R:.+]] = arith.select %[[KEEP]], %[[V]], %[[ZERO]] : ui16
// CHECK-NEXT:      memref.store %[[R]], %t[%[[i]], %[[j]]] : memref<3x4xui16>
// CHECK:         %[[SHAPE:.+]] = krnl.global {value = dense<[3, 4]> : tensor<2xi64>} : memref<2xi64>
// CHECK:           memref.load %[[SHAPE]]
