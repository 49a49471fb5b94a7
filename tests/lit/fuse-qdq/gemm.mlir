// RUN: onnxc-opt %s -p shape-inference,fuse-qdq --print-debuginfo | filecheck %s

// DequantizeLinear -> Gemm (transB, per-row weight scales, an int32 bias whose scale is the
// importer's Mul of x scale and w scale, as QGemm expands) becomes MatMulInteger of the
// bytes by the weights transposed to [K, N], the bias added in int32, then a Cast and a Mul
// by x scale * w scale per column. Not fused: a Gemm with alpha 2.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<2x4xui8>) -> (tensor<*xnone>, tensor<*xnone>) {
    %xs = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %xz = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %w = "onnx.Constant"() {value = dense<[[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]]> : tensor<3x4xi8>} : () -> tensor<3x4xi8>
    %ws = "onnx.Constant"() {value = dense<[0.25, 0.5, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
    %wz = "onnx.Constant"() {value = dense<0> : tensor<3xi8>} : () -> tensor<3xi8>
    %bias = "onnx.Constant"() {value = dense<[1, 2, 3]> : tensor<3xi32>} : () -> tensor<3xi32>
    %dx = "onnx.DequantizeLinear"(%x, %xs, %xz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("dx")
    %dw = "onnx.DequantizeLinear"(%w, %ws, %wz) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {axis = 0 : i64} : (tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<*xnone> loc("dw")
    %bs = "onnx.Mul"(%xs, %ws) : (tensor<f32>, tensor<3xf32>) -> tensor<*xnone> loc("bs")
    %db = "onnx.DequantizeLinear"(%bias, %bs) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {axis = 0 : i64} : (tensor<3xi32>, tensor<*xnone>) -> tensor<*xnone> loc("db")
    %y = "onnx.Gemm"(%dx, %dw, %db) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {transB = 1 : i64} : (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("fc")
    %y2 = "onnx.Gemm"(%dx, %dw, %db) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {transB = 1 : i64, alpha = 2.0 : f32} : (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) -> tensor<*xnone> loc("fc_alpha")
    func.return %y, %y2 : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[W:.*]] = "onnx.Constant"() {value = #onnx.weight<"fc.weights", tensor<4x3xi8>>}
// CHECK:     %[[S:.*]] = "onnx.Constant"() {value = #onnx.weight<"fc.scale", tensor<3xf32>>}
// CHECK:     %[[I:.*]] = "onnx.MatMulInteger"(%x, %[[W]], %xz) {{.*}} -> tensor<2x3xi32> loc("fc/integer")
// CHECK:     %[[B:.*]] = "onnx.Add"(%[[I]], %bias) {{.*}} -> tensor<2x3xi32> loc("fc/bias")
// CHECK:     %[[F:.*]] = "onnx.Cast"(%[[B]]) {{.*}} -> tensor<2x3xf32> loc("fc/float")
// CHECK:     "onnx.Mul"(%[[F]], %[[S]]) {{.*}} -> tensor<2x3xf32> loc("fc/scaled")
// CHECK:     "onnx.Gemm"({{.*}}) {{.*}} loc("fc_alpha")
