// RUN: onnxc-opt %s -p shape-inference,fuse-qdq --print-debuginfo | filecheck %s

// DequantizeLinear -> Conv (int32 bias of scale x_scale * w_scale) -> Relu -> QuantizeLinear
// becomes QLinearConv and a Clip of its uint8 result at the quantized zero (the y zero point, 3).
// DequantizeLinear -> MatMul (per-column weight scales) -> QuantizeLinear becomes QLinearMatMul.
// Not fused: a MatMul whose weights are not constant.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x4x4xui8>, %a: tensor<3x4xui8>, %b: tensor<4x2xi8>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %xs = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %xz = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.Constant"() {value = dense<1> : tensor<3x2x1x1xi8>} : () -> tensor<3x2x1x1xi8>
    %ws = "onnx.Constant"() {value = dense<[0.25, 0.5, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
    %bias = "onnx.Constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
    %bs = "onnx.Constant"() {value = dense<[0.125, 0.25, 0.5]> : tensor<3xf32>} : () -> tensor<3xf32>
    %ys = "onnx.Constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
    %yz = "onnx.Constant"() {value = dense<3> : tensor<ui8>} : () -> tensor<ui8>
    %dx = "onnx.DequantizeLinear"(%x, %xs, %xz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("dx")
    %dw = "onnx.DequantizeLinear"(%w, %ws) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {axis = 0 : i64} : (tensor<3x2x1x1xi8>, tensor<3xf32>) -> tensor<*xnone> loc("dw")
    %db = "onnx.DequantizeLinear"(%bias, %bs) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {axis = 0 : i64} : (tensor<3xi32>, tensor<3xf32>) -> tensor<*xnone> loc("db")
    %c = "onnx.Conv"(%dx, %dw, %db) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("conv")
    %r = "onnx.Relu"(%c) : (tensor<*xnone>) -> tensor<*xnone> loc("relu")
    %q = "onnx.QuantizeLinear"(%r, %ys, %yz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("q")
    %mw = "onnx.Constant"() {value = dense<2> : tensor<4x2xi8>} : () -> tensor<4x2xi8>
    %mws = "onnx.Constant"() {value = dense<[0.5, 0.25]> : tensor<2xf32>} : () -> tensor<2xf32>
    %da = "onnx.DequantizeLinear"(%a, %xs, %xz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("da")
    %dmw = "onnx.DequantizeLinear"(%mw, %mws) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {axis = 1 : i64} : (tensor<4x2xi8>, tensor<2xf32>) -> tensor<*xnone> loc("dmw")
    %m = "onnx.MatMul"(%da, %dmw) : (tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("mm")
    %qm = "onnx.QuantizeLinear"(%m, %ys, %yz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("qm")
    %db2 = "onnx.DequantizeLinear"(%b, %xs) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x2xi8>, tensor<f32>) -> tensor<*xnone> loc("db2")
    %m2 = "onnx.MatMul"(%da, %db2) : (tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("mm_runtime_b")
    %qm2 = "onnx.QuantizeLinear"(%m2, %ys, %yz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("qm2")
    func.return %q, %qm, %qm2 : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[C:.*]] = "onnx.QLinearConv"(%x, %xs, %xz, %w, %ws, %{{.*}}, %ys, %yz, %bias) {{.*}} -> tensor<1x3x4x4xui8> loc("conv")
// CHECK:     %[[LOW:.*]] = "onnx.Constant"() {value = #onnx.weight<"conv.low", tensor<ui8>>}
// CHECK:     %[[HIGH:.*]] = "onnx.Constant"() {value = #onnx.weight<"conv.high", tensor<ui8>>}
// CHECK:     %[[Q:.*]] = "onnx.Clip"(%[[C]], %[[LOW]], %[[HIGH]]) {{.*}} -> tensor<1x3x4x4xui8> loc("conv/clip")
// CHECK:     %[[M:.*]] = "onnx.QLinearMatMul"(%a, %xs, %xz, %mw, %mws, %{{.*}}, %ys, %yz) {{.*}} -> tensor<3x2xui8> loc("mm")
// CHECK:     "onnx.MatMul"({{.*}}) {{.*}} loc("mm_runtime_b")
// CHECK:     func.return %[[Q]], %[[M]],
