// RUN: onnxc-opt %s -p shape-inference,fold-affine --print-debuginfo | filecheck %s

// BatchNormalization after a Conv with constant weights is folded into the Conv;
// not when the Conv result has a second use, nor when its weights are a run-time input.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x1x3x3xf32>, %wx: tensor<2x1x1x1xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
    %scale = "onnx.Constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %bias = "onnx.Constant"() {value = dense<[0.5, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %mean = "onnx.Constant"() {value = dense<[1.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %var = "onnx.Constant"() {value = dense<[4.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    %y = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<*xnone> loc("conv")
    %n = "onnx.BatchNormalization"(%y, %scale, %bias, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> {epsilon = 0.0 : f32} : (tensor<*xnone>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("bn")
    %y2 = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<*xnone> loc("conv_shared")
    %n2 = "onnx.BatchNormalization"(%y2, %scale, %bias, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<*xnone>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("bn_kept")
    %y3 = "onnx.Conv"(%x, %wx) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<*xnone> loc("conv_input_weights")
    %n3 = "onnx.BatchNormalization"(%y3, %scale, %bias, %mean, %var) <{resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<*xnone>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("bn_after_input_weights")
    func.return %n, %n2, %y2, %n3 : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:     %[[W:.*]] = "onnx.Constant"() {value = #onnx.weight<"conv.weight_affine", tensor<2x1x1x1xf32>>}
// CHECK:     %[[B:.*]] = "onnx.Constant"() {value = #onnx.weight<"conv.bias_affine", tensor<2xf32>>}
// CHECK:     %[[C:.*]] = "onnx.Conv"(%x, %[[W]], %[[B]]) {{.*}} -> tensor<1x2x3x3xf32> loc("conv")
// CHECK-NOT: loc("bn")
// CHECK:     "onnx.Conv"(%x, %w) {{.*}} loc("conv_shared")
// CHECK:     "onnx.BatchNormalization"{{.*}} loc("bn_kept")
// CHECK:     "onnx.Conv"(%x, %wx) {{.*}} loc("conv_input_weights")
// CHECK:     "onnx.BatchNormalization"{{.*}} loc("bn_after_input_weights")
