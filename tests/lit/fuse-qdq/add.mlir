// RUN: onnxc-opt %s -p shape-inference,fuse-qdq --print-debuginfo | filecheck %s

// DequantizeLinear x2 -> Add -> QuantizeLinear: the operands dequantized in units of y's scale
// (x_scale / y_scale: 0.5 / 0.25 and 0.75 / 0.25), the sum quantized by a scale of 1.
// Not rewritten: an Add whose result is clamped before its QuantizeLinear.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%a: tensor<1x2x3xui8>, %b: tensor<1x2x3xui8>) -> (tensor<*xnone>, tensor<*xnone>) {
    %sa = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %sb = "onnx.Constant"() {value = dense<0.75> : tensor<f32>} : () -> tensor<f32>
    %sy = "onnx.Constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
    %za = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %zb = "onnx.Constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %zy = "onnx.Constant"() {value = dense<7> : tensor<ui8>} : () -> tensor<ui8>
    %da = "onnx.DequantizeLinear"(%a, %sa, %za) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("da")
    %db = "onnx.DequantizeLinear"(%b, %sb, %zb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("db")
    %s = "onnx.Add"(%da, %db) : (tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("add")
    %q = "onnx.QuantizeLinear"(%s, %sy, %zy) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("q")
    %da2 = "onnx.DequantizeLinear"(%a, %sa, %za) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("da2")
    %db2 = "onnx.DequantizeLinear"(%b, %sb, %zb) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("db2")
    %s2 = "onnx.Add"(%da2, %db2) : (tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("add_relu")
    %r2 = "onnx.Relu"(%s2) : (tensor<*xnone>) -> tensor<*xnone> loc("relu")
    %q2 = "onnx.QuantizeLinear"(%r2, %sy, %zy) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("q2")
    func.return %q, %q2 : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[RA:.*]] = "onnx.Constant"() {value = #onnx.weight<"add.ratio0", tensor<f32>>}
// CHECK:     %[[DA:.*]] = "onnx.DequantizeLinear"(%a, %[[RA]], %za) {{.*}} loc("add/dequantize0")
// CHECK:     %[[RB:.*]] = "onnx.Constant"() {value = #onnx.weight<"add.ratio1", tensor<f32>>}
// CHECK:     %[[DB:.*]] = "onnx.DequantizeLinear"(%b, %[[RB]], %zb) {{.*}} loc("add/dequantize1")
// CHECK:     %[[ONE:.*]] = "onnx.Constant"() {value = #onnx.weight<"add.unit_scale", tensor<f32>>}
// CHECK:     %[[SUM:.*]] = "onnx.Add"(%[[DA]], %[[DB]]) {{.*}} loc("add")
// CHECK:     %[[Q:.*]] = "onnx.QuantizeLinear"(%[[SUM]], %[[ONE]], %zy) {{.*}} -> tensor<1x2x3xui8> loc("add/quantize")
// CHECK:     "onnx.Relu"
// CHECK:     %[[Q2:.*]] = "onnx.QuantizeLinear"(%{{.*}}, %sy, %zy) {{.*}} loc("q2")
// CHECK:     func.return %[[Q]], %[[Q2]]
