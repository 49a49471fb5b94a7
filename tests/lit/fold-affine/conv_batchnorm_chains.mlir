// RUN: onnxc-opt %s -p shape-inference,fold-affine --print-debuginfo | filecheck %s

// Per-channel constant Mul/Add/Sub after a Conv fold into its weights and bias, after a
// BatchNormalization into its scale and bias; a longer chain elsewhere becomes one Mul
// and one Add, or nothing when it is the identity. Not folded: a per-element constant,
// a Conv result with a second use.
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main_graph(%x: tensor<1x1x3x3xf32>, %x2: tensor<1x2x3x3xf32>) -> (tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>) {
    %w = "onnx.Constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
    %m = "onnx.Constant"() {value = dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
    %a = "onnx.Constant"() {value = dense<[[[[0.5]], [[-1.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
    %s = "onnx.Constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
    %half = "onnx.Constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %each = "onnx.Constant"() {value = dense<2.0> : tensor<2x3x3xf32>} : () -> tensor<2x3x3xf32>
    %stat = "onnx.Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>

    %c = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<*xnone> loc("conv")
    %c1 = "onnx.Mul"(%c, %m) : (tensor<*xnone>, tensor<2x1x1xf32>) -> tensor<*xnone> loc("conv_mul")
    %c2 = "onnx.Add"(%a, %c1) : (tensor<1x2x1x1xf32>, tensor<*xnone>) -> tensor<*xnone> loc("conv_add")
    %c3 = "onnx.Sub"(%c2, %s) : (tensor<*xnone>, tensor<f32>) -> tensor<*xnone> loc("conv_sub")
    %r = "onnx.Relu"(%c3) : (tensor<*xnone>) -> tensor<*xnone> loc("relu")

    %n = "onnx.BatchNormalization"(%x2, %stat, %stat, %stat, %stat) <{resultSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<*xnone> loc("bn")
    %n1 = "onnx.Mul"(%n, %m) : (tensor<*xnone>, tensor<2x1x1xf32>) -> tensor<*xnone> loc("bn_mul")
    %n2 = "onnx.Add"(%n1, %a) : (tensor<*xnone>, tensor<1x2x1x1xf32>) -> tensor<*xnone> loc("bn_add")

    %t1 = "onnx.Mul"(%x2, %s) : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<*xnone> loc("t_mul")
    %t2 = "onnx.Add"(%t1, %a) : (tensor<*xnone>, tensor<1x2x1x1xf32>) -> tensor<*xnone> loc("t_add")
    %t3 = "onnx.Mul"(%t2, %m) : (tensor<*xnone>, tensor<2x1x1xf32>) -> tensor<*xnone> loc("t_mul2")

    %i1 = "onnx.Mul"(%x2, %s) : (tensor<1x2x3x3xf32>, tensor<f32>) -> tensor<*xnone> loc("i_mul")
    %i2 = "onnx.Mul"(%half, %i1) : (tensor<f32>, tensor<*xnone>) -> tensor<*xnone> loc("i_mul2")
    %i3 = "onnx.Mul"(%i2, %half) : (tensor<*xnone>, tensor<f32>) -> tensor<*xnone> loc("i_mul3")

    %e = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<*xnone> loc("conv_each")
    %e1 = "onnx.Mul"(%e, %each) : (tensor<*xnone>, tensor<2x3x3xf32>) -> tensor<*xnone> loc("mul_each")

    %u = "onnx.Conv"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<*xnone> loc("conv_shared")
    %u1 = "onnx.Mul"(%u, %m) : (tensor<*xnone>, tensor<2x1x1xf32>) -> tensor<*xnone> loc("mul_shared")
    func.return %r, %n2, %t3, %i3, %e1, %u1, %u : tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>, tensor<*xnone>
  }
}
// CHECK:      %[[W:.*]] = "onnx.Constant"() {value = #onnx.weight<"conv.weight_affine", tensor<2x1x1x1xf32>>}
// CHECK-NEXT: %[[B:.*]] = "onnx.Constant"() {value = #onnx.weight<"conv.bias_affine", tensor<2xf32>>}
// CHECK-NEXT: %[[C:.*]] = "onnx.Conv"(%x, %[[W]], %[[B]]) {{.*}} -> tensor<1x2x3x3xf32> loc("conv")
// CHECK-NEXT: "onnx.Relu"(%[[C]])

// CHECK:      %[[S:.*]] = "onnx.Constant"() {value = #onnx.weight<"bn.scale_affine", tensor<2xf32>>}
// CHECK-NEXT: %[[NB:.*]] = "onnx.Constant"() {value = #onnx.weight<"bn.bias_affine", tensor<2xf32>>}
// CHECK-NEXT: %[[N:.*]] = "onnx.BatchNormalization"(%x2, %[[S]], %[[NB]], %stat, %stat) {{.*}} loc("bn")

// CHECK:      %[[TM:.*]] = "onnx.Constant"() {value = #onnx.weight<"t_mul2.mul_affine", tensor<2x1x1xf32>>}
// CHECK-NEXT: %[[T1:.*]] = "onnx.Mul"(%x2, %[[TM]]) {{.*}} -> tensor<1x2x3x3xf32> loc("t_mul2")
// CHECK-NEXT: %[[TA:.*]] = "onnx.Constant"() {value = #onnx.weight<"t_mul2.add_affine", tensor<2x1x1xf32>>}
// CHECK-NEXT: %[[T2:.*]] = "onnx.Add"(%[[T1]], %[[TA]]) {{.*}} loc("t_mul2")

// CHECK:      "onnx.Mul"(%{{.*}}, %each) {{.*}} loc("mul_each")
// CHECK:      %[[U:.*]] = "onnx.Conv"(%x, %w) {{.*}} loc("conv_shared")
// CHECK-NEXT: %[[U1:.*]] = "onnx.Mul"(%[[U]], %m) {{.*}} loc("mul_shared")
// CHECK-NEXT: func.return %{{.*}}, %[[N]], %[[T2]], %x2, %{{.*}}, %[[U1]], %[[U]]
