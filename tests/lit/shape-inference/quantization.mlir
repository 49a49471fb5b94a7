// RUN: onnxc-opt %s -p shape-inference | filecheck %s

// Quantization ops take their result types from the ONNX inference functions:
// QuantizeLinear's from the zero point, else `output_dtype`, else uint8;
// DynamicQuantizeLinear's three results; the integer contractions' int32 and
// the QLinear ops' zero-point type.
builtin.module attributes {onnx.opset = 21 : i64} {
  func.func @main_graph(%x: tensor<2x3x4x4xf32>, %s: tensor<f32>, %z: tensor<i8>, %w: tensor<5x3x3x3xi8>, %ws: tensor<5xf32>, %wz: tensor<5xi8>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %q = "onnx.QuantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<*xnone>
    %q16 = "onnx.QuantizeLinear"(%x, %s) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {output_dtype = 5 : i64} : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<*xnone>
    %qu8 = "onnx.QuantizeLinear"(%x, %s) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<*xnone>
    %y, %ys, %yz = "onnx.DynamicQuantizeLinear"(%x) : (tensor<2x3x4x4xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>)
    %c = "onnx.QLinearConv"(%q, %s, %z, %w, %ws, %wz, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0>}> {pads = [1 : i64, 1 : i64, 1 : i64, 1 : i64]} : (tensor<*xnone>, tensor<f32>, tensor<i8>, tensor<5x3x3x3xi8>, tensor<5xf32>, tensor<5xi8>, tensor<f32>, tensor<i8>) -> tensor<*xnone>
    func.return %q, %q16, %qu8, %y, %ys, %yz, %c : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK: "onnx.QuantizeLinear"{{.*}} -> tensor<2x3x4x4xi8>
// CHECK: "onnx.QuantizeLinear"{{.*}} -> tensor<2x3x4x4xi16>
// CHECK: "onnx.QuantizeLinear"{{.*}} -> tensor<2x3x4x4xui8>
// CHECK: "onnx.DynamicQuantizeLinear"{{.*}} -> (tensor<2x3x4x4xui8>, tensor<f32>, tensor<ui8>)
// CHECK: "onnx.QLinearConv"{{.*}} -> tensor<2x5x4x4xi8>
