// RUN: onnxc-opt %s -p shape-inference,conv1d-as-2d --print-debuginfo | filecheck %s

// A 1-D Conv over a run-time length becomes Unsqueeze -> a 2-D Conv of height 1 (its
// weights a new constant [M, C/g, 1, k]; kernel, stride, dilation 1 and no padding on the
// new axis) -> Squeeze; a 2-D Conv is left alone.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x4x?xf32>, %x2: tensor<1x4x5x5xf32>) -> (tensor<*xnone>, tensor<*xnone>) {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<8x2x3xf32>} : () -> tensor<8x2x3xf32>
    %b = "onnx.Constant"() {value = dense<0.5> : tensor<8xf32>} : () -> tensor<8xf32>
    %w2 = "onnx.Constant"() {value = dense<1.0> : tensor<6x4x3x3xf32>} : () -> tensor<6x4x3x3xf32>
    %y = "onnx.Conv"(%x, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1>}> {group = 2 : i64, pads = [1, 2], strides = [2], dilations = [1]} : (tensor<1x4x?xf32>, tensor<8x2x3xf32>, tensor<8xf32>) -> tensor<*xnone> loc("front")
    %y2 = "onnx.Conv"(%x2, %w2) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>) -> tensor<*xnone> loc("image")
    func.return %y, %y2 : tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK-NOT:  %w =
// CHECK:      %[[AXIS:.*]] = "onnx.Constant"() {value = #onnx.weight<"front/axis", tensor<1xi64>>} : () -> tensor<1xi64> loc("front/axis")
// CHECK-NEXT: %[[X4:.*]] = "onnx.Unsqueeze"(%x, %[[AXIS]]) : (tensor<1x4x?xf32>, tensor<1xi64>) -> tensor<1x4x1x?xf32> loc("front/Unsqueeze")
// CHECK-NEXT: %[[W4:.*]] = "onnx.Constant"() {value = #onnx.weight<"front/weights", tensor<8x2x1x3xf32>>} : () -> tensor<8x2x1x3xf32> loc("front/weights")
// CHECK-NEXT: %[[Y4:.*]] = "onnx.Conv"(%[[X4]], %[[W4]], %b)
// CHECK-SAME:   {group = 2 : i64, pads = [0 : i64, 1 : i64, 0 : i64, 2 : i64], strides = [1 : i64, 2 : i64], dilations = [1 : i64, 1 : i64]}
// CHECK-SAME:   -> tensor<1x8x1x?xf32> loc("front")
// CHECK-NEXT: %[[Y:.*]] = "onnx.Squeeze"(%[[Y4]], %[[AXIS]]) {{.*}} : (tensor<1x8x1x?xf32>, tensor<1xi64>) -> tensor<1x8x?xf32> loc("front/Squeeze")
// CHECK-NEXT: %[[Y2:.*]] = "onnx.Conv"(%x2, %w2) {{.*}} loc("image")
// CHECK-NEXT: func.return %[[Y]], %[[Y2]]
