// RUN: onnxc-opt %s -p shape-inference,expand-depthwise-tiles --print-debuginfo | filecheck %s

// A 1x1 Conv to 64 channels of 64x64 (1 MB), Clip, a depthwise 3x3 Conv, Relu: two groups of
// 32 channels (512 KB each; 32 is the fewest a group holds), each its rows of both convs'
// weights and biases (new constants) and its copies of the Clip (the same scalar bounds) and
// the Relu; a Concat of the groups' Relus replaces the Relu.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x16x64x64xf32>) -> (tensor<*xnone>) {
    %we = "onnx.Constant"() {value = dense<1.0> : tensor<64x16x1x1xf32>} : () -> tensor<64x16x1x1xf32>
    %be = "onnx.Constant"() {value = dense<0.5> : tensor<64xf32>} : () -> tensor<64xf32>
    %wd = "onnx.Constant"() {value = dense<1.0> : tensor<64x1x3x3xf32>} : () -> tensor<64x1x3x3xf32>
    %lo = "onnx.Constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %hi = "onnx.Constant"() {value = dense<6.0> : tensor<f32>} : () -> tensor<f32>
    %e = "onnx.Conv"(%x, %we, %be) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<1x16x64x64xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<*xnone> loc("expand")
    %a = "onnx.Clip"(%e, %lo, %hi) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<*xnone>, tensor<f32>, tensor<f32>) -> tensor<*xnone> loc("relu6")
    %d = "onnx.Conv"(%a, %wd) <{operandSegmentSizes = array<i32: 1, 1, 0>}> {group = 64 : i64, pads = [1, 1, 1, 1]} : (tensor<*xnone>, tensor<64x1x3x3xf32>) -> tensor<*xnone> loc("dw")
    %y = "onnx.Relu"(%d) : (tensor<*xnone>) -> tensor<*xnone> loc("relu")
    func.return %y : tensor<*xnone>
  }
}
// CHECK:      %[[W0:.*]] = "onnx.Constant"() {value = #onnx.weight<"dw/group0/expand_weights", tensor<32x16x1x1xf32>>}
// CHECK-NEXT: %[[B0:.*]] = "onnx.Constant"() {value = #onnx.weight<"dw/group0/expand_bias", tensor<32xf32>>}
// CHECK-NEXT: %[[E0:.*]] = "onnx.Conv"(%x, %[[W0]], %[[B0]]) {{.*}} -> tensor<1x32x64x64xf32> loc("dw/group0/expand")
// CHECK-NEXT: %[[A0:.*]] = "onnx.Clip"(%[[E0]], %lo, %hi) {{.*}} loc("dw/group0/relu6")
// CHECK-NEXT: %[[D0W:.*]] = "onnx.Constant"() {value = #onnx.weight<"dw/group0/dw_weights", tensor<32x1x3x3xf32>>}
// CHECK-NEXT: %[[D0:.*]] = "onnx.Conv"(%[[A0]], %[[D0W]]) {{.*}}group = 32 : i64{{.*}} -> tensor<1x32x64x64xf32> loc("dw/group0/dw")
// CHECK-NEXT: %[[Y0:.*]] = "onnx.Relu"(%[[D0]]) {{.*}} loc("dw/group0/relu")
// CHECK:      "onnx.Conv"({{.*}}) {{.*}} loc("dw/group1/expand")
// CHECK:      %[[Y1:.*]] = "onnx.Relu"({{.*}}) {{.*}} loc("dw/group1/relu")
// CHECK-NEXT: %[[Y:.*]] = "onnx.Concat"(%[[Y0]], %[[Y1]]) {{.*}}{axis = 1 : i64} : {{.*}} -> tensor<1x64x64x64xf32> loc("dw/Concat")
// CHECK-NEXT: func.return %[[Y]]
