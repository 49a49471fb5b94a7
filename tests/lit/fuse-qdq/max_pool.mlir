// RUN: onnxc-opt %s -p shape-inference,fuse-qdq --print-debuginfo | filecheck %s

// DequantizeLinear -> MaxPool -> QuantizeLinear of one scale and zero point is the MaxPool of
// the bytes. Not rewritten: a QuantizeLinear of another scale (the maximum must be requantized).
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x2x6x6xui8>) -> (tensor<*xnone>, tensor<*xnone>) {
    %s = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %s2 = "onnx.Constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
    %z = "onnx.Constant"() {value = dense<128> : tensor<ui8>} : () -> tensor<ui8>
    %dx = "onnx.DequantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x6x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("dx")
    %p = "onnx.MaxPool"(%dx) <{resultSegmentSizes = array<i32: 1, 0>}> {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<*xnone>) -> tensor<*xnone> loc("pool")
    %q = "onnx.QuantizeLinear"(%p, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("q")
    %dx2 = "onnx.DequantizeLinear"(%x, %s, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x2x6x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("dx2")
    %p2 = "onnx.MaxPool"(%dx2) <{resultSegmentSizes = array<i32: 1, 0>}> {kernel_shape = [2, 2]} : (tensor<*xnone>) -> tensor<*xnone> loc("pool_rescaled")
    %q2 = "onnx.QuantizeLinear"(%p2, %s2, %z) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<ui8>) -> tensor<*xnone> loc("q2")
    func.return %q, %q2 : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[P:.*]] = "onnx.MaxPool"(%x) {{.*}} -> tensor<1x2x3x3xui8> loc("pool")
// CHECK:     "onnx.MaxPool"(%{{.*}}) {{.*}} -> tensor<1x2x5x5xf32> loc("pool_rescaled")
// CHECK:     func.return %[[P]], %{{.*}}
