// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// Concat inputs computed in place: %k1 is placed in %y (the graph output, the
// root of the chain) at element 0; the Conv's %c and the Relu's %r write their
// slices of it through krnl.view (the Conv's kernel stores into the view);
// the graph input %x must be copied. So the only copy nest left is %x's, into
// %k1's view; %y's Concat copies nothing.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x3x3xf32>) -> tensor<1x7x3x3xf32> attributes {onnx.input_names = ["x"], onnx.output_names = ["y"]} {
    %w = "onnx.Constant"() {value = dense<0.5> : tensor<3x2x1x1xf32>} : () -> tensor<3x2x1x1xf32>
    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
    %k1 = "onnx.Concat"(%x, %c) <{operandSegmentSizes = array<i32: 2>}> {axis = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x5x3x3xf32>
    %r = "onnx.Relu"(%x) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %y = "onnx.Concat"(%k1, %r) <{operandSegmentSizes = array<i32: 2>}> {axis = 1 : i64} : (tensor<1x5x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x7x3x3xf32>
    func.return %y : tensor<1x7x3x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(%x: memref<1x2x3x3xf32>, %y: memref<1x7x3x3xf32>) {
// CHECK:         %[[K1:.+]] = krnl.view %y[0 : i64] : memref<1x7x3x3xf32> to memref<1x5x3x3xf32>
// CHECK-NEXT:    %[[C:.+]] = krnl.view %[[K1]][18 : i64] : memref<1x5x3x3xf32> to memref<1x3x3x3xf32>
// CHECK-NOT:     memref.alloc() : memref<1x
// CHECK:         krnl.matmul {{.*}}, %x into %[[C]]
// CHECK:         krnl.iterate({{.*}}) bounds [0, 0, 0, 0] to [1, 2, 3, 3] {
// CHECK-NEXT:    ^bb0(%[[n:.+]]: index, %[[ch:.+]]: index, %[[h:.+]]: index, %[[w:.+]]: index):
// CHECK-NEXT:      %[[V:.+]] = memref.load %x[%[[n]], %[[ch]], %[[h]], %[[w]]]
// CHECK-NEXT:      memref.store %[[V]], %[[K1]][%[[n]], %[[ch]], %[[h]], %[[w]]] : memref<1x5x3x3xf32>
// CHECK:         %[[R:.+]] = krnl.view %y[45 : i64] : memref<1x7x3x3xf32> to memref<1x2x3x3xf32>
// CHECK:         %[[RF:.+]] = krnl.view %[[R]][0 : i64] : memref<1x2x3x3xf32> to memref<18xf32>
// CHECK:           arith.maximumf
// CHECK-NEXT:      memref.store {{.*}}, %[[RF]][
// CHECK-NOT:     krnl.iterate
// CHECK:         func.return

// -----

// With a batch of 2, a slice along the channels is not contiguous: both inputs are copied.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x2x3xf32>) -> tensor<2x4x3xf32> {
    %r = "onnx.Relu"(%x) : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %n = "onnx.Neg"(%x) : (tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %y = "onnx.Concat"(%r, %n) <{operandSegmentSizes = array<i32: 2>}> {axis = 1 : i64} : (tensor<2x2x3xf32>, tensor<2x2x3xf32>) -> tensor<2x4x3xf32>
    func.return %y : tensor<2x4x3xf32>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK-NOT:     krnl.view
// CHECK:         %r = memref.alloc() : memref<2x2x3xf32>
// CHECK:         %n = memref.alloc() : memref<2x2x3xf32>
// CHECK:         memref.store {{.*}}, %y[
// CHECK:         memref.store {{.*}}, %y[
