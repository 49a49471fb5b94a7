// RUN: onnxc-opt %s --split-input-file -p convert-onnx-to-krnl | filecheck %s

// The float ops between quantized layers (a residual block's DequantizeLinear x2 -> Add
// -> Relu -> QuantizeLinear) are one element-wise nest over the merged dims: the bytes
// of both inputs are read, dequantized, added, clamped and quantized in registers, and
// only the result is stored. The per-tensor parameters are loaded once, before the loop.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%a: tensor<1x2x3x3xui8>, %b: tensor<1x2x3x3xui8>) -> tensor<1x2x3x3xui8> {
    %sa = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %za = "onnx.Constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %sb = "onnx.Constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
    %zb = "onnx.Constant"() {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
    %sy = "onnx.Constant"() {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
    %zy = "onnx.Constant"() {value = dense<0> : tensor<ui8>} : () -> tensor<ui8>
    %fa = "onnx.DequantizeLinear"(%a, %sa, %za) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xf32>
    %fb = "onnx.DequantizeLinear"(%b, %sb, %zb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xf32>
    %sum = "onnx.Add"(%fa, %fb) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %r = "onnx.Relu"(%sum) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
    %y = "onnx.QuantizeLinear"(%r, %sy, %zy) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x3xui8>
    func.return %y : tensor<1x2x3x3xui8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[A:.+]] = krnl.view %a[0 : i64] : memref<1x2x3x3xui8> to memref<18xui8>
// CHECK-NEXT:    %[[B:.+]] = krnl.view %b[0 : i64] : memref<1x2x3x3xui8> to memref<18xui8>
// CHECK-NEXT:    %[[Y:.+]] = krnl.view %y[0 : i64] : memref<1x2x3x3xui8> to memref<18xui8>
// CHECK:         krnl.iterate
// CHECK-NEXT:    ^bb0(%[[I:.+]]: index):
// CHECK-NEXT:      memref.load %[[A]][%[[I]]] : memref<18xui8>
// CHECK-NOT:       memref.store
// CHECK:           arith.subf
// CHECK-NEXT:      %[[FA:.+]] = arith.mulf
// CHECK-NEXT:      memref.load %[[B]][%[[I]]] : memref<18xui8>
// CHECK-NOT:       memref.store
// CHECK:           %[[FB:.+]] = arith.mulf
// CHECK-NEXT:      %[[SUM:.+]] = arith.addf %[[FA]], %[[FB]] : f32
// CHECK-NEXT:      %[[RELU:.+]] = arith.maximumf %[[SUM]], %{{.+}} : f32
// CHECK-NEXT:      %[[Q:.+]] = arith.divf %[[RELU]], %{{.+}} : f32
// CHECK-NEXT:      math.roundeven %[[Q]] : f32
// CHECK:           memref.store %{{.+}}, %[[Y]][%[[I]]] : memref<18xui8>
// CHECK-NEXT:      krnl.yield

// -----

// A QuantizeLinear ends its nest: DequantizeLinear -> Sigmoid -> QuantizeLinear ->
// DequantizeLinear -> Relu -> QuantizeLinear is two nests, the bytes in between stored.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%a: tensor<8xui8>) -> tensor<8xui8> {
    %s = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %z = "onnx.Constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %fa = "onnx.DequantizeLinear"(%a, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<8xui8>, tensor<f32>, tensor<ui8>) -> tensor<8xf32>
    %g = "onnx.Sigmoid"(%fa) : (tensor<8xf32>) -> tensor<8xf32>
    %q = "onnx.QuantizeLinear"(%g, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<8xf32>, tensor<f32>, tensor<ui8>) -> tensor<8xui8>
    %fq = "onnx.DequantizeLinear"(%q, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<8xui8>, tensor<f32>, tensor<ui8>) -> tensor<8xf32>
    %r = "onnx.Relu"(%fq) : (tensor<8xf32>) -> tensor<8xf32>
    %y = "onnx.QuantizeLinear"(%r, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<8xf32>, tensor<f32>, tensor<ui8>) -> tensor<8xui8>
    func.return %y : tensor<8xui8>
  }
}

// CHECK-LABEL: func.func @main_graph(
// CHECK:         %[[Q:.+]] = memref.alloc() : memref<8xui8>
// CHECK:         krnl.iterate
// CHECK:           memref.load %a[%{{.+}}] : memref<8xui8>
// CHECK:           math.roundeven
// CHECK:           memref.store %{{.+}}, %[[Q]][%{{.+}}] : memref<8xui8>
// CHECK:         krnl.iterate
// CHECK:           memref.load %[[Q]][%{{.+}}] : memref<8xui8>
// CHECK:           arith.maximumf
// CHECK:           math.roundeven
// CHECK:           memref.store %{{.+}}, %y[%{{.+}}] : memref<8xui8>
